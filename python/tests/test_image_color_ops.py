"""Colour ops against TensorFlow, run in the test: RGBToHSV, HSVToRGB,
AdjustContrastv2, AdjustSaturation, AdjustHue (tf.raw_ops) and the tf.image
functions over them (rgb_to_hsv, hsv_to_rgb, adjust_contrast,
adjust_saturation, adjust_hue with their dtype conversions,
convert_image_dtype), as Keras' RandomHue and RandomSaturation use them.

Tolerances: the kernels repeat TensorFlow's arithmetic (plexus/sdk/
image_color.h; half and bfloat16 colour-space conversions round after every
operation as Eigen does), so float, double, half and bfloat16 outputs are
equal to TensorFlow's CPU results. TensorFlow's CPU has no half kernels for
the adjustments: half images are compared with TensorFlow's float result
rounded to half (one half rounding, 1e-3). Bad inputs fail with the error
TensorFlow gives, naming the op.
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(11)


def as_px(value, dtype):
    if dtype == "bfloat16":
        return raw_ops.Cast(px.constant(np.asarray(value, np.float32)), DstT=px.bfloat16)
    return px.constant(np.asarray(value).astype(dtype))


def as_tf(value, dtype):
    if dtype == "bfloat16":
        return tf.cast(tf.constant(np.asarray(value, np.float32)), tf.bfloat16)
    return tf.constant(np.asarray(value).astype(dtype))


def to_numpy(t):
    if t.dtype.name == "bfloat16":
        t = raw_ops.Cast(t, DstT=px.float32) if isinstance(t, px.Tensor) else tf.cast(t, tf.float32)
    return np.asarray(t.numpy())


# Random pixels, greys (zero range), pure and mixed hues, ties between
# channels, zeros and values past [0, 1].
SPECIAL = np.array([[0, 0, 0], [0.5, 0.5, 0.5], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0],
                    [0.25, 0.75, 0.75], [0.9, 0.1, 0.9], [0.3, 0.3, 0.1], [0.2, 0.6, 0.6],
                    [1.5, -0.2, 0.4], [0, 0, 0.001]], np.float64)


def pixels(shape):
    x = RNG.uniform(0, 1, shape)
    flat = x.reshape(-1, 3)
    flat[:len(SPECIAL)] = SPECIAL[:len(flat)]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("op", ["RGBToHSV", "HSVToRGB"])
def test_colorspace_matches_tensorflow(op, dtype):
    for shape in [(2, 5, 7, 3), (3,), (4, 3), (1, 2, 2, 2, 3)]:
        x = pixels(shape)
        if op == "HSVToRGB":
            x[..., 0] = RNG.uniform(-0.2, 1.2, x[..., 0].shape)  # hues past [0, 1) too
        want = getattr(tf.raw_ops, op)(images=as_tf(x, dtype))
        got = getattr(raw_ops, op)(as_px(x, dtype))
        assert got.dtype.name == dtype
        np.testing.assert_array_equal(to_numpy(got), to_numpy(want), err_msg=f"{shape}")


def test_colorspace_public_names_round_trip():
    x = pixels((2, 4, 4, 3)).astype(np.float32)
    hsv = px.image.rgb_to_hsv(x)
    np.testing.assert_array_equal(hsv.numpy(), tf.image.rgb_to_hsv(x).numpy())
    np.testing.assert_allclose(px.image.hsv_to_rgb(hsv).numpy(), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,factor_name,factors", [
    ("AdjustContrastv2", "contrast_factor", [0.5, 1.7, 0.0, -1.2]),
    ("AdjustSaturation", "scale", [0.5, 1.7, 0.0, 4.0]),
    ("AdjustHue", "delta", [0.3, -0.45, 0.9, -1.0, 0.0]),
])
def test_adjustments_match_tensorflow(op, factor_name, factors):
    for shape in [(2, 5, 7, 3), (7, 9, 3), (1, 1, 3), (2, 1, 3, 33, 3)]:
        x = pixels(shape).astype(np.float32)
        for f in factors:
            want = getattr(tf.raw_ops, op)(images=x, **{factor_name: f}).numpy()
            got = getattr(raw_ops, op)(px.constant(x), px.constant(np.float32(f))).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {f}")


@pytest.mark.parametrize("op,factor_name", [("AdjustContrastv2", "contrast_factor"),
                                            ("AdjustSaturation", "scale"),
                                            ("AdjustHue", "delta")])
def test_adjustments_in_half(op, factor_name):
    x = pixels((2, 4, 5, 3)).astype(np.float16)
    want = getattr(tf.raw_ops, op)(images=x.astype(np.float32), **{factor_name: 0.4}).numpy()
    got = getattr(raw_ops, op)(px.constant(x), px.constant(np.float32(0.4)))
    assert got.dtype == px.float16
    np.testing.assert_allclose(got.numpy().astype(np.float32), want.astype(np.float16), rtol=1e-3,
                               atol=1e-3)


def test_contrast_with_other_channel_counts():
    """The mean folds the image in halves (any pixel count, any channels)."""
    for shape in [(1, 1, 4), (3, 5, 1), (2, 17, 13, 2), (1, 64, 64, 5)]:
        x = RNG.uniform(-2, 2, shape).astype(np.float32)
        want = tf.raw_ops.AdjustContrastv2(images=x, contrast_factor=2.5).numpy()
        got = raw_ops.AdjustContrastv2(px.constant(x), px.constant(np.float32(2.5))).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint8", "int32", "float64"])
@pytest.mark.parametrize("fn,factor", [("adjust_contrast", 1.8), ("adjust_saturation", 0.4),
                                       ("adjust_hue", -0.3)])
def test_tf_image_adjustments(fn, factor, dtype):
    """tf.image's wrappers: float16/float32 directly, other dtypes through
    convert_image_dtype to float32 and back (saturating for contrast).
    TensorFlow's CPU has no half kernels: half is compared with its float
    result. int32 comes back without saturation only for contrast: a value of
    1.0 converts to 2^31, out of int32's range, where TensorFlow's Cast wraps
    and Plexus's saturates."""
    if dtype == "int32" and fn != "adjust_contrast":
        pytest.skip("1.0 converts to 2^31: out of range for a non-saturating cast")
    x = pixels((2, 4, 6, 3))
    if dtype in ("uint8", "int32"):
        x = (x.clip(0, 1) * np.iinfo(dtype).max).astype(dtype)
    x = x.astype(dtype)
    if dtype == "float16":
        want = getattr(tf.image, fn)(x.astype(np.float32), factor).numpy().astype(np.float16)
    else:
        want = getattr(tf.image, fn)(x, factor).numpy()
    got = getattr(px.image, fn)(px.constant(x), factor)
    assert got.dtype.name == dtype
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol if dtype != "int32" else 300)


@pytest.mark.parametrize("src,dst,saturate", [
    ("uint8", "float32", False), ("float32", "uint8", False), ("float32", "uint8", True),
    ("int16", "float64", False), ("float64", "int32", True), ("int32", "uint8", False),
    ("uint8", "int32", True), ("float32", "float16", False), ("float32", "int8", True),
])
def test_convert_image_dtype(src, dst, saturate):
    # Out of [0, 1] only where the conversion saturates: TensorFlow's Cast
    # wraps values out of an integer type's range, Plexus's saturates.
    x = RNG.uniform(-0.2, 1.2, (3, 4)) if saturate else RNG.uniform(0, 0.999, (3, 4))
    if np.dtype(src).kind in "iu":
        info = np.iinfo(src)
        x = RNG.integers(info.min, int(info.max) + 1, (3, 4)).astype(src)
    x = x.astype(src)
    want = tf.image.convert_image_dtype(x, dst, saturate=saturate).numpy()
    got = px.image.convert_image_dtype(px.constant(x), dst, saturate=saturate)
    assert got.dtype.name == dst
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("case,call,error", [
    ("4 channels", lambda: raw_ops.RGBToHSV(px.constant(np.zeros((2, 4), np.float32))),
     errors.InvalidArgumentError),
    ("rank 0", lambda: raw_ops.HSVToRGB(px.constant(np.float32(1))), errors.InvalidArgumentError),
    ("saturation of 2 channels", lambda: raw_ops.AdjustSaturation(
        px.constant(np.zeros((1, 2, 2, 2), np.float32)), px.constant(np.float32(1))),
     errors.InvalidArgumentError),
    ("hue of rank 2", lambda: raw_ops.AdjustHue(
        px.constant(np.zeros((2, 3), np.float32)), px.constant(np.float32(1))),
     errors.InvalidArgumentError),
    ("contrast factor not a scalar", lambda: raw_ops.AdjustContrastv2(
        px.constant(np.zeros((1, 2, 2, 3), np.float32)), px.constant(np.ones(2, np.float32))),
     errors.InvalidArgumentError),
])
def test_color_errors(case, call, error):
    with pytest.raises(error) as info:
        call()
    assert any(op in str(info.value) for op in ("RGBToHSV", "HSVToRGB", "AdjustSaturation",
                                                 "AdjustHue", "AdjustContrastv2"))
