"""Image resizing and grouped Conv2D against TensorFlow's own outputs.

The fixtures in tests/data/image_ops/ were written by its generate.py with
TensorFlow 2.21 (tf.raw_ops.ResizeBilinear, ResizeNearestNeighbor,
ResizeBicubic, ResizeBilinearGrad, ResizeNearestNeighborGrad and
tf.nn.conv2d on grouped filters): every op, every sampling mode (legacy,
align_corners, half_pixel_centers), up- and downsampling and every input
dtype TensorFlow takes. Tolerances: nearest neighbour and the integer
gradients are exact copies/sums; the bilinear and bicubic blends are float
arithmetic in TensorFlow's order (1e-6 relative, 1e-5 for bicubic), the
grouped convolutions float sums of up to 72 products (1e-5).
"""

import os
import pathlib

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops


def _data_dir() -> pathlib.Path:
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env) / "image_ops"
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data" / "image_ops"


RESIZE = np.load(_data_dir() / "resize.npz")
CONV = np.load(_data_dir() / "grouped_conv.npz")
MODES = {"legacy": (False, False), "align": (True, False), "half": (False, True)}


def tensor(value, dtype):
    """`value` as a plexus tensor of dtype name `dtype` (bfloat16 through a Cast)."""
    if dtype == "bfloat16":
        return raw_ops.Cast(px.constant(np.asarray(value, np.float32)), DstT=px.bfloat16)
    return px.constant(np.asarray(value).astype(dtype))


def values(t):
    if t.dtype.name == "bfloat16":
        t = raw_ops.Cast(t, DstT=px.float32)
    return np.asarray(t.numpy())


def resize_keys():
    for key in RESIZE.files:
        op, *rest = key.split("|")
        if op.startswith("Resize") and not op.endswith("Grad"):
            yield pytest.param(key, id=key)


@pytest.mark.parametrize("key", list(resize_keys()))
def test_resize_matches_tensorflow(key):
    op, mode, size, dtype = key.split("|")
    align, half = MODES[mode]
    h, w = (int(v) for v in size.split("x"))
    x = tensor(RESIZE[f"x|{dtype}"], dtype)
    y = getattr(raw_ops, op)(x, px.constant(np.array([h, w], np.int32)), align_corners=align,
                             half_pixel_centers=half)
    expected = RESIZE[key]
    if op == "ResizeNearestNeighbor":
        assert y.dtype.name == dtype
        np.testing.assert_array_equal(values(y), expected.astype(values(y).dtype))
    else:
        assert y.dtype == px.float32
        rtol = 1e-5 if op == "ResizeBicubic" else 1e-6
        np.testing.assert_allclose(values(y), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("size", ["9x11", "2x3"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_resize_bilinear_grad_matches_tensorflow(mode, size, dtype):
    align, half = MODES[mode]
    grads = px.constant(RESIZE[f"grads|{mode}|{size}"])
    original = tensor(np.zeros((2, 4, 5, 3)), dtype)
    out = raw_ops.ResizeBilinearGrad(grads, original, align_corners=align,
                                     half_pixel_centers=half)
    assert out.dtype.name == dtype
    tol = 2e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(values(out), RESIZE[f"ResizeBilinearGrad|{mode}|{size}|{dtype}"],
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("size", ["9x11", "2x3"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_resize_nearest_neighbor_grad_matches_tensorflow(mode, size, dtype):
    align, half = MODES[mode]
    g = RESIZE[f"grads|{mode}|{size}"] if dtype == "float32" else RESIZE[f"grads_int|{mode}|{size}"]
    out = raw_ops.ResizeNearestNeighborGrad(px.constant(g), px.constant(np.array([4, 5], np.int32)),
                                            align_corners=align, half_pixel_centers=half)
    expected = RESIZE[f"ResizeNearestNeighborGrad|{mode}|{size}|{dtype}"]
    np.testing.assert_allclose(values(out), expected, rtol=1e-6, atol=1e-6)


def test_image_resize_is_tf_image_resize():
    """plexus.image.resize: half-pixel centers, float32 for bilinear and bicubic,
    the input dtype for nearest, a single [h, w, c] image kept unbatched."""
    x = RESIZE["x|float32"]
    for method, op in [("bilinear", "ResizeBilinear"), ("bicubic", "ResizeBicubic"),
                       ("nearest", "ResizeNearestNeighbor")]:
        y = px.image.resize(px.constant(x), [9, 11], method=method)
        np.testing.assert_allclose(y.numpy(), RESIZE[f"{op}|half|9x11|float32"], rtol=1e-5,
                                   atol=1e-5)
        one = px.image.resize(px.constant(x[0]), [9, 11], method=method)
        assert one.shape == (9, 11, 3)
    u8 = px.image.resize(px.constant(RESIZE["x|uint8"].astype(np.uint8)), [2, 3], method="nearest")
    assert u8.dtype == px.uint8
    # preserve_aspect_ratio: 4x5 into at most 8x20 -> scale 2 -> 8x10.
    assert px.image.resize(px.constant(x), [8, 20], preserve_aspect_ratio=True).shape == (2, 8, 10, 3)
    with pytest.raises(ValueError, match="not implemented"):
        px.image.resize(px.constant(x), [8, 8], method="cubic")


def test_resize_gradients_through_the_tape():
    """d/dx sum(w * resize(x)) is ResizeBilinearGrad / ResizeNearestNeighborGrad of w."""
    x = px.constant(RESIZE["x|float32"])
    w = RESIZE["grads|half|9x11"]
    for resize, grad in [(px.image.resize_bilinear, raw_ops.ResizeBilinearGrad),
                         (px.image.resize_nearest_neighbor, None)]:
        with px.GradientTape() as tape:
            tape.watch(x)
            y = resize(x, px.constant(np.array([9, 11], np.int32)), half_pixel_centers=True)
            loss = px.reduce_sum(y * px.constant(w))
        dx = tape.gradient(loss, x).numpy()
        if grad is not None:
            expected = RESIZE["ResizeBilinearGrad|half|9x11|float32"]
        else:
            expected = RESIZE["ResizeNearestNeighborGrad|half|9x11|float32"]
        np.testing.assert_allclose(dx, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case,call", [
    ("align and half", lambda x, s: raw_ops.ResizeBilinear(x, s, align_corners=True,
                                                           half_pixel_centers=True)),
    ("zero size", lambda x, s: raw_ops.ResizeNearestNeighbor(
        x, px.constant(np.array([0, 3], np.int32)))),
    ("rank 3", lambda x, s: raw_ops.ResizeBicubic(px.constant(np.zeros((4, 5, 3), np.float32)), s)),
    ("size of 3", lambda x, s: raw_ops.ResizeBilinear(x, px.constant(np.array([2, 3, 4], np.int32)))),
    ("empty image", lambda x, s: raw_ops.ResizeBilinear(
        px.constant(np.zeros((1, 0, 5, 3), np.float32)), s)),
])
def test_resize_errors(case, call):
    x = px.constant(RESIZE["x|float32"])
    s = px.constant(np.array([3, 3], np.int32))
    with pytest.raises(errors.InvalidArgumentError) as info:
        call(x, s)
    assert "Resize" in str(info.value)


# ---------------------------------------------------------------------------
# Grouped Conv2D (Keras' Conv2D(groups=g): a filter of input depth C / g)
# ---------------------------------------------------------------------------

CONV_CASES = {
    "g2_same": ((1, 1), "SAME", (1, 1)),
    "g3_valid_stride": ((2, 1), "VALID", (1, 1)),
    "g4_dilated": ((1, 1), "SAME", (2, 2)),
    "depthwise_like": ((2, 2), "SAME", (1, 1)),
}


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_grouped_conv2d_matches_tensorflow(name):
    strides, padding, dilations = CONV_CASES[name]
    x, f = CONV[f"conv|{name}|x"], CONV[f"conv|{name}|f"]
    y = px.nn.conv2d(px.constant(x), px.constant(f), strides, padding, dilations=dilations)
    np.testing.assert_allclose(y.numpy(), CONV[f"conv|{name}|y"], rtol=1e-5, atol=1e-5)
    # float64 and float16 take the per-group im2col path.
    y64 = px.nn.conv2d(px.constant(x.astype(np.float64)), px.constant(f.astype(np.float64)),
                       strides, padding, dilations=dilations)
    np.testing.assert_allclose(y64.numpy(), CONV[f"conv|{name}|y"], rtol=1e-5, atol=1e-5)
    y16 = px.nn.conv2d(px.constant(x.astype(np.float16)), px.constant(f.astype(np.float16)),
                       strides, padding, dilations=dilations)
    np.testing.assert_allclose(y16.numpy().astype(np.float32), CONV[f"conv|{name}|y"], rtol=2e-2,
                               atol=2e-2)


def test_grouped_conv2d_gradients_through_the_tape():
    """The gradients of a grouped convolution are those of its groups run apart."""
    x, f = CONV["conv|g2_same|x"].astype(np.float64), CONV["conv|g2_same|f"].astype(np.float64)
    tx, tf_ = px.constant(x), px.constant(f)
    with px.GradientTape() as tape:
        tape.watch(tx)
        tape.watch(tf_)
        loss = px.reduce_sum(px.nn.conv2d(tx, tf_, 1, "SAME") ** 2)
    dx, df = (g.numpy() for g in tape.gradient(loss, [tx, tf_]))
    parts = []
    for k in range(2):
        xk, fk = px.constant(x[..., 2 * k:2 * k + 2]), px.constant(f[..., 3 * k:3 * k + 3])
        with px.GradientTape() as tape:
            tape.watch(xk)
            tape.watch(fk)
            loss = px.reduce_sum(px.nn.conv2d(xk, fk, 1, "SAME") ** 2)
        parts.append([g.numpy() for g in tape.gradient(loss, [xk, fk])])
    np.testing.assert_allclose(dx, np.concatenate([p[0] for p in parts], axis=-1), rtol=1e-10)
    np.testing.assert_allclose(df, np.concatenate([p[1] for p in parts], axis=-1), rtol=1e-10)


def test_grouped_conv2d_output_depth_must_divide():
    x = px.constant(np.zeros((1, 5, 5, 4), np.float32))
    f = px.constant(np.zeros((3, 3, 2, 3), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="number of groups"):
        px.nn.conv2d(x, f, 1, "SAME")
