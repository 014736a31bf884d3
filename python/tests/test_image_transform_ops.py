"""Projective transforms and filtered resizes against TensorFlow, run in the test.

ImageProjectiveTransformV2/V3 (Keras' RandomRotation, RandomZoom,
RandomTranslation, RandomShear), ResizeArea and ScaleAndTranslate (with its
gradient ScaleAndTranslateGrad; tf.image.resize's antialiased, area and
Lanczos/Gaussian/Mitchell methods) compared with tf.raw_ops on TensorFlow's
CPU kernels over every interpolation, fill mode, sampling kernel and input
dtype the ops take, several shapes, transforms and scales.

Tolerances: the kernels repeat TensorFlow's float arithmetic in its order
(plexus/sdk/image_transform.h, image_scale.h), so the outputs are equal;
the comparisons allow 1e-6 relative (float, double, integers exact) and half
and bfloat16 one rounding of their type. Bad arguments fail with
InvalidArgumentError naming the op.
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)
INTERPOLATIONS = ["NEAREST", "BILINEAR"]
FILL_MODES = ["REFLECT", "WRAP", "CONSTANT", "NEAREST"]
TOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-6, "float64": 1e-6}


def as_px(value, dtype):
    """A numpy array as a plexus tensor of `dtype` (bfloat16 through a Cast)."""
    if dtype == "bfloat16":
        return raw_ops.Cast(px.constant(np.asarray(value, np.float32)), DstT=px.bfloat16)
    return px.constant(np.asarray(value).astype(dtype))


def as_tf(value, dtype):
    return tf.cast(tf.constant(np.asarray(value, np.float32)), dtype) if dtype == "bfloat16" \
        else tf.constant(np.asarray(value).astype(dtype))


def to_numpy(t):
    if t.dtype.name == "bfloat16":
        t = raw_ops.Cast(t, DstT=px.float32) if isinstance(t, px.Tensor) else tf.cast(t, tf.float32)
    return np.asarray(t.numpy())


def assert_same(got, want, dtype):
    got, want = to_numpy(got), to_numpy(want)
    assert got.shape == want.shape
    if dtype in TOL:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=TOL[dtype], atol=TOL[dtype])
    else:
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# ImageProjectiveTransformV2 / V3
# ---------------------------------------------------------------------------

def rotation(angle, h, w):
    """Keras' rotation about the image centre, as a flat transform row."""
    c, s = np.cos(angle), np.sin(angle)
    x_off = ((w - 1) - (c * (w - 1) - s * (h - 1))) / 2
    y_off = ((h - 1) - (s * (w - 1) + c * (h - 1))) / 2
    return [c, -s, x_off, s, c, y_off, 0, 0]


TRANSFORMS = {
    "rotate": [rotation(0.4, 6, 7), rotation(-2.1, 6, 7)],
    "zoom_shift": [[1.3, 0.1, -2.5, -0.2, 0.8, 3.1, 0, 0], [0.6, 0, 1.5, 0, 1.7, -2, 0, 0]],
    "projective": [[1.1, 0.2, -1, 0.1, 0.9, 0.5, 0.02, -0.03],
                   [0.9, -0.1, 0.5, 0.3, 1.2, -1.5, -0.05, 0.04]],
    "far_outside": [[1, 0, 40.5, 0, 1, -33.25, 0, 0], [-1, 0, -17.5, 0, -1, 60, 0, 0]],
}


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_projective_transform_v3_float(interpolation, fill_mode, transform):
    x = RNG.uniform(0, 100, (2, 6, 7, 3)).astype(np.float32)
    t = np.array(TRANSFORMS[transform], np.float32)
    for rows, out in [(t, [6, 7]), (t[:1], [5, 9])]:  # per image; one shared row
        want = tf.raw_ops.ImageProjectiveTransformV3(
            images=x, transforms=rows, output_shape=out, fill_value=7.5,
            interpolation=interpolation, fill_mode=fill_mode)
        got = raw_ops.ImageProjectiveTransformV3(
            px.constant(x), px.constant(rows), px.constant(np.array(out, np.int32)),
            px.constant(np.float32(7.5)), interpolation=interpolation, fill_mode=fill_mode)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_projective_transform_dtypes(dtype, interpolation):
    """Every dtype; integers truncate the float blend, fill values out of the
    type's range convert as TensorFlow's cast does."""
    x = RNG.uniform(0, 200, (2, 5, 4, 2))
    t = np.array(TRANSFORMS["projective"], np.float32)
    for fill_mode in FILL_MODES:
        for fill in (7.5, -3.0, 300.0):
            want = tf.raw_ops.ImageProjectiveTransformV3(
                images=as_tf(x, dtype), transforms=t, output_shape=[6, 5], fill_value=fill,
                interpolation=interpolation, fill_mode=fill_mode)
            got = raw_ops.ImageProjectiveTransformV3(
                as_px(x, dtype), px.constant(t), px.constant(np.array([6, 5], np.int32)),
                px.constant(np.float32(fill)), interpolation=interpolation, fill_mode=fill_mode)
            assert got.dtype.name == dtype
            assert_same(got, want, dtype)


@pytest.mark.parametrize("fill_mode", FILL_MODES)
def test_projective_transform_v2_fills_with_zero(fill_mode):
    x = RNG.uniform(-5, 5, (3, 4, 6, 1)).astype(np.float32)
    t = np.array([TRANSFORMS["zoom_shift"][0]] * 3, np.float32)
    want = tf.raw_ops.ImageProjectiveTransformV2(images=x, transforms=t, output_shape=[4, 6],
                                                 interpolation="BILINEAR", fill_mode=fill_mode)
    got = raw_ops.ImageProjectiveTransformV2(px.constant(x), px.constant(t),
                                             px.constant(np.array([4, 6], np.int32)),
                                             interpolation="BILINEAR", fill_mode=fill_mode)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_projective_transform_edge_transforms():
    """A zero projection takes the fill value; NaN and infinite coordinates
    sample what TensorFlow's kernel samples; one-pixel images reflect/wrap to 0."""
    x = RNG.uniform(0, 9, (1, 3, 3, 1)).astype(np.float32)
    rows = np.array([[1, 0, 0, 0, 1, 0, -1, 0],  # projection 0 in column 1
                     [np.nan, 0, 0, 0, 1, 0, 0, 0],
                     [1, 0, np.inf, 0, 1, 0, 0, 0],
                     [1, 0, -np.inf, 0, 1, -1e30, 0, 0]], np.float32)
    for row in rows:
        for interpolation in INTERPOLATIONS:
            for fill_mode in FILL_MODES:
                args = dict(output_shape=[3, 3], fill_value=2.0, interpolation=interpolation,
                            fill_mode=fill_mode)
                want = tf.raw_ops.ImageProjectiveTransformV3(images=x, transforms=row[None],
                                                             **args).numpy()
                got = raw_ops.ImageProjectiveTransformV3(
                    px.constant(x), px.constant(row[None]), px.constant(np.array([3, 3], np.int32)),
                    px.constant(np.float32(2.0)), interpolation=interpolation,
                    fill_mode=fill_mode).numpy()
                np.testing.assert_array_equal(got, want, err_msg=f"{row} {interpolation} {fill_mode}")
    one = np.full((1, 1, 1, 1), 4.0, np.float32)
    t = np.array([[1, 0, 2.3, 0, 1, -1.7, 0, 0]], np.float32)
    for fill_mode in FILL_MODES:
        want = tf.raw_ops.ImageProjectiveTransformV3(images=one, transforms=t, output_shape=[2, 2],
                                                     fill_value=1.0, interpolation="BILINEAR",
                                                     fill_mode=fill_mode).numpy()
        got = raw_ops.ImageProjectiveTransformV3(
            px.constant(one), px.constant(t), px.constant(np.array([2, 2], np.int32)),
            px.constant(np.float32(1.0)), interpolation="BILINEAR", fill_mode=fill_mode).numpy()
        np.testing.assert_array_equal(got, want)


def test_projective_transform_public_name():
    x = RNG.uniform(0, 1, (1, 4, 4, 2)).astype(np.float32)
    t = np.array([TRANSFORMS["rotate"][0]], np.float32)
    got = px.image.image_projective_transform_v3(x, t, np.array([4, 4], np.int32), np.float32(0),
                                                 interpolation="NEAREST", fill_mode="WRAP")
    want = tf.raw_ops.ImageProjectiveTransformV3(images=x, transforms=t, output_shape=[4, 4],
                                                 fill_value=0.0, interpolation="NEAREST",
                                                 fill_mode="WRAP")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _transform(x, t, size=(3, 3), fill=0.0, **attrs):
    attrs.setdefault("interpolation", "BILINEAR")
    return raw_ops.ImageProjectiveTransformV3(px.constant(x), px.constant(np.asarray(t, np.float32)),
                                              px.constant(np.array(size, np.int32)),
                                              px.constant(np.float32(fill)), **attrs)


@pytest.mark.parametrize("case,call,match", [
    ("rank 3 images", lambda x: _transform(x[0], [[1, 0, 0, 0, 1, 0, 0, 0]]), "4-D"),
    ("3 transforms for 2 images", lambda x: _transform(x, np.ones((3, 8))), "transform"),
    ("7 columns", lambda x: _transform(x, np.ones((1, 7))), "8"),
    ("zero output size", lambda x: _transform(x, np.ones((1, 8)), size=(0, 3)), "positive"),
    ("bad interpolation", lambda x: _transform(x, np.ones((1, 8)), interpolation="CUBIC"),
     "interpolation"),
    ("bad fill mode", lambda x: _transform(x, np.ones((1, 8)), fill_mode="MIRROR"), "fill_mode"),
])
def test_projective_transform_errors(case, call, match):
    x = np.zeros((2, 3, 3, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match=match) as info:
        call(x)
    assert "ImageProjectiveTransformV3" in str(info.value)


# ---------------------------------------------------------------------------
# ResizeArea
# ---------------------------------------------------------------------------

RESIZE_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "float32",
                 "float64", "bfloat16"]


@pytest.mark.parametrize("dtype", RESIZE_DTYPES)
@pytest.mark.parametrize("align", [False, True])
def test_resize_area(dtype, align):
    x = RNG.uniform(0, 100, (2, 7, 5, 3))
    for size in ([3, 2], [4, 5], [9, 11], [1, 1], [7, 5]):
        want = tf.raw_ops.ResizeArea(images=as_tf(x, dtype), size=size, align_corners=align)
        got = raw_ops.ResizeArea(as_px(x, dtype), px.constant(np.array(size, np.int32)),
                                 align_corners=align)
        assert got.dtype == px.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_resize_area_other_channel_counts():
    for c in (1, 2, 4):
        x = RNG.uniform(-1, 1, (1, 6, 9, c)).astype(np.float32)
        want = tf.raw_ops.ResizeArea(images=x, size=[4, 4]).numpy()
        got = px.image.resize_area(x, np.array([4, 4], np.int32)).numpy()
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# ScaleAndTranslate and its gradient
# ---------------------------------------------------------------------------

KERNELS = ["lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle", "keyscubic",
           "mitchellcubic"]
GEOMETRIES = {
    "down": ([3, 4], [0.5, 0.6], [0.0, 0.0]),
    "up": ([11, 13], [11 / 6, 13 / 7], [0.0, 0.0]),
    "translated": ([6, 7], [1.2, 0.9], [-1.5, 2.25]),
    "mostly_outside": ([5, 5], [0.7, 2.0], [9.0, -30.0]),
}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_scale_and_translate(kernel, antialias, geometry):
    size, scale, translation = GEOMETRIES[geometry]
    x = RNG.uniform(-3, 100, (2, 6, 7, 2)).astype(np.float32)
    want = tf.raw_ops.ScaleAndTranslate(images=x, size=size, scale=scale, translation=translation,
                                        kernel_type=kernel, antialias=antialias).numpy()
    got = raw_ops.ScaleAndTranslate(px.constant(x), px.constant(np.array(size, np.int32)),
                                    px.constant(np.array(scale, np.float32)),
                                    px.constant(np.array(translation, np.float32)),
                                    kernel_type=kernel, antialias=antialias).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", RESIZE_DTYPES)
def test_scale_and_translate_dtypes(dtype):
    x = RNG.uniform(0, 120, (1, 9, 8, 3))
    for kernel in ("lanczos3", "triangle"):
        want = tf.raw_ops.ScaleAndTranslate(images=as_tf(x, dtype), size=[4, 5], scale=[4 / 9, 5 / 8],
                                            translation=[0.0, 0.0], kernel_type=kernel)
        got = raw_ops.ScaleAndTranslate(as_px(x, dtype), px.constant(np.array([4, 5], np.int32)),
                                        px.constant(np.array([4 / 9, 5 / 8], np.float32)),
                                        px.constant(np.zeros(2, np.float32)), kernel_type=kernel)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kernel", ["lanczos3", "triangle", "keyscubic", "box", "gaussian"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_grad(kernel, antialias):
    grads = RNG.uniform(-1, 1, (2, 3, 4, 2)).astype(np.float32)
    original = np.zeros((2, 6, 7, 2), np.float32)
    scale, translation = [0.5, 0.6], [0.25, -0.5]
    want = tf.raw_ops.ScaleAndTranslateGrad(grads=grads, original_image=original, scale=scale,
                                            translation=translation, kernel_type=kernel,
                                            antialias=antialias).numpy()
    got = raw_ops.ScaleAndTranslateGrad(px.constant(grads), px.constant(original),
                                        px.constant(np.array(scale, np.float32)),
                                        px.constant(np.array(translation, np.float32)),
                                        kernel_type=kernel, antialias=antialias).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_scale_and_translate_gradient_through_the_tape():
    """d/dx sum(w * tf.image.resize(x, antialias=True)) as TensorFlow's tape gives it."""
    x = RNG.uniform(0, 1, (2, 8, 9, 3)).astype(np.float32)
    w = RNG.uniform(-1, 1, (2, 5, 4, 3)).astype(np.float32)
    tx = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tx)
        loss = tf.reduce_sum(tf.image.resize(tx, [5, 4], antialias=True) * w)
    want = tape.gradient(loss, tx).numpy()
    px_x = px.constant(x)
    with px.GradientTape() as ptape:
        ptape.watch(px_x)
        ploss = px.reduce_sum(px.image.resize(px_x, [5, 4], antialias=True) * px.constant(w))
    np.testing.assert_allclose(ptape.gradient(ploss, px_x).numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "area", "lanczos3", "lanczos5",
                                    "gaussian", "mitchellcubic", "nearest"])
@pytest.mark.parametrize("antialias", [False, True])
def test_image_resize_methods_match_tf_image_resize(method, antialias):
    x = RNG.uniform(0, 1, (2, 9, 11, 3)).astype(np.float32)
    for size in ([4, 5], [13, 17]):
        want = tf.image.resize(x, size, method=method, antialias=antialias).numpy()
        got = px.image.resize(px.constant(x), size, method=method, antialias=antialias).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    one = px.image.resize(px.constant(x[0]), [4, 5], method=method, antialias=antialias)
    assert one.shape == (4, 5, 3)


def test_image_resize_antialias_in_a_function():
    """Traced with an unknown height and width: the scale comes from Shape."""
    x = RNG.uniform(0, 1, (1, 10, 12, 2)).astype(np.float32)

    @px.function(input_signature=[px.TensorSpec([None, None, None, 2], px.float32)])
    def f(images):
        return px.image.resize(images, [4, 5], method="lanczos3", antialias=True)

    want = tf.image.resize(x, [4, 5], method="lanczos3", antialias=True).numpy()
    np.testing.assert_allclose(f(px.constant(x)).numpy(), want, rtol=1e-6, atol=1e-6)


def _scale(x, size=(2, 2), scale=(0.5, 0.5), translation=(0.0, 0.0), **attrs):
    return raw_ops.ScaleAndTranslate(px.constant(x), px.constant(np.array(size, np.int32)),
                                     px.constant(np.array(scale, np.float32)),
                                     px.constant(np.array(translation, np.float32)), **attrs)


@pytest.mark.parametrize("case,call,match", [
    ("zero scale", lambda x: _scale(x, scale=(0.0, 1.0)), "Scale must be greater than zero"),
    ("negative scale", lambda x: _scale(x, scale=(1.0, -2.0)), "Scale must be greater than zero"),
    ("scale of 3", lambda x: _scale(x, scale=(1.0, 1.0, 1.0)), "scale"),
    ("bad kernel", lambda x: _scale(x, kernel_type="cubic"), "kernel"),
    ("zero size", lambda x: _scale(x, size=(0, 2)), "positive"),
    ("rank 3", lambda x: _scale(x[0]), "4"),
])
def test_scale_and_translate_errors(case, call, match):
    x = np.zeros((1, 4, 4, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match=match) as info:
        call(x)
    assert "ScaleAndTranslate" in str(info.value)


def test_resize_area_errors():
    x = px.constant(np.zeros((1, 4, 4, 1), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="ResizeArea"):
        raw_ops.ResizeArea(x, px.constant(np.array([2, 0], np.int32)))
    with pytest.raises(errors.InvalidArgumentError, match="ResizeArea"):
        raw_ops.ResizeArea(px.constant(np.zeros((1, 0, 4, 1), np.float32)),
                           px.constant(np.array([2, 2], np.int32)))
