"""plexus.keras convolution, pooling, reshaping and preprocessing layers against Keras 3 (TensorFlow backend).

Each case builds the Keras layer and ours with the same arguments, copies
Keras's weights into ours with set_weights, and compares the outputs on
random float32 inputs (rtol 1e-5, atol 1e-5) and the gradients of
sum(output * random weights) with respect to the input and every trainable
weight (Keras under tf.GradientTape, ours under plexus.GradientTape;
rtol 1e-4, atol 1e-4, as the gradients sum many products). Layers without
a differentiable path in either framework (bicubic and area resizing,
adapt-only statistics) compare outputs only. get_config is compared key by
key for a few layers; one layer of each kind is traced in plexus.function
with an unknown batch dimension and run on two batch sizes.
"""

import zlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import plexus as px  # noqa: E402
from plexus.keras import layers as L  # noqa: E402

FWD = dict(rtol=1e-5, atol=1e-5)
GRAD = dict(rtol=1e-4, atol=1e-4)
CF = {"data_format": "channels_first"}


def case(name, shape, grad=True, **kwargs):
    ident = name + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + f"-{shape}"
    return pytest.param(name, kwargs, shape, grad, id=ident.replace(" ", ""))


CONV = [
    case("Conv1D", (2, 9, 3), filters=4, kernel_size=3),
    case("Conv1D", (2, 9, 3), filters=4, kernel_size=3, padding="same", strides=2),
    case("Conv1D", (2, 9, 3), filters=4, kernel_size=3, padding="causal", dilation_rate=2),
    case("Conv1D", (2, 6, 9), filters=5, kernel_size=2, strides=2, **CF),
    case("Conv1D", (2, 9, 6), filters=4, kernel_size=3, groups=2, activation="relu"),
    case("Conv2D", (2, 7, 8, 3), filters=4, kernel_size=3),
    case("Conv2D", (2, 7, 8, 3), filters=4, kernel_size=3, padding="same", strides=2),
    case("Conv2D", (2, 7, 8, 3), filters=4, kernel_size=(3, 2), strides=(2, 1)),
    case("Conv2D", (2, 9, 8, 3), filters=4, kernel_size=3, padding="same", dilation_rate=2),
    # Output [2, 4, 4, 6]: with equal last two dimensions ([2, 4, 4, 4] from a
    # width of 8) Keras's own channels_first layer adds the bias on the wrong
    # axis, which shows where TensorFlow's CPU kernels take NCHW (oneDNN on a
    # CPU with AVX-512; elsewhere the test falls back to channels last).
    case("Conv2D", (2, 3, 7, 11), filters=4, kernel_size=3, padding="same", strides=2, **CF),
    case("Conv2D", (2, 7, 8, 6), filters=4, kernel_size=3, groups=2, use_bias=False),
    case("Conv3D", (2, 5, 6, 5, 3), filters=4, kernel_size=2),
    case("Conv3D", (2, 5, 6, 5, 3), filters=4, kernel_size=3, padding="same", strides=2),
    case("Conv3D", (2, 6, 6, 5, 3), filters=2, kernel_size=2, dilation_rate=2),
    case("Conv3D", (2, 3, 5, 6, 5), filters=4, kernel_size=2, padding="same", **CF),
    case("Conv3D", (2, 5, 5, 4, 4), filters=4, kernel_size=2, groups=2),
    case("Conv1DTranspose", (2, 6, 3), filters=4, kernel_size=3),
    case("Conv1DTranspose", (2, 6, 3), filters=4, kernel_size=3, strides=2, padding="same"),
    case("Conv1DTranspose", (2, 6, 3), filters=4, kernel_size=3, strides=2, output_padding=1),
    case("Conv1DTranspose", (2, 6, 3), filters=4, kernel_size=3, dilation_rate=2, padding="same"),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=3),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=3, strides=2, padding="same"),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=(3, 2), strides=(2, 3), padding="valid"),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=3, strides=2, padding="same",
         output_padding=1),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=3, strides=2, output_padding=(1, 0)),
    case("Conv2DTranspose", (2, 5, 6, 3), filters=4, kernel_size=3, dilation_rate=2),
    case("Conv2DTranspose", (2, 3, 5, 6), filters=4, kernel_size=3, strides=2, padding="same", **CF),
    case("Conv3DTranspose", (2, 3, 4, 3, 3), filters=2, kernel_size=2, strides=2),
    case("Conv3DTranspose", (2, 3, 4, 3, 3), filters=2, kernel_size=3, strides=2, padding="same"),
    case("Conv3DTranspose", (2, 3, 3, 4, 3), filters=2, kernel_size=2, **CF),
    case("DepthwiseConv1D", (2, 9, 3), kernel_size=3, depth_multiplier=2),
    case("DepthwiseConv1D", (2, 9, 3), kernel_size=3, strides=2, padding="same"),
    case("DepthwiseConv1D", (2, 9, 3), kernel_size=3, dilation_rate=2, padding="same"),
    case("DepthwiseConv1D", (2, 11, 3), kernel_size=3, strides=2, dilation_rate=2, padding="same"),
    case("DepthwiseConv1D", (2, 3, 9), kernel_size=3, depth_multiplier=2, **CF),
    case("DepthwiseConv2D", (2, 7, 8, 3), kernel_size=3, depth_multiplier=2),
    case("DepthwiseConv2D", (2, 7, 8, 3), kernel_size=3, strides=2, padding="same"),
    case("DepthwiseConv2D", (2, 9, 8, 3), kernel_size=3, dilation_rate=2),
    case("DepthwiseConv2D", (2, 11, 10, 3), kernel_size=3, strides=2, dilation_rate=2, padding="same"),
    case("DepthwiseConv2D", (2, 3, 7, 8), kernel_size=3, padding="same", activation="tanh", **CF),
    case("SeparableConv1D", (2, 9, 3), filters=5, kernel_size=3, depth_multiplier=2),
    case("SeparableConv1D", (2, 9, 3), filters=5, kernel_size=3, strides=2, padding="same"),
    case("SeparableConv1D", (2, 3, 11), filters=5, kernel_size=3, dilation_rate=2, **CF),
    case("SeparableConv2D", (2, 7, 8, 3), filters=5, kernel_size=3, depth_multiplier=2),
    case("SeparableConv2D", (2, 7, 8, 3), filters=5, kernel_size=3, strides=2, padding="same"),
    case("SeparableConv2D", (2, 9, 8, 3), filters=5, kernel_size=3, dilation_rate=2, padding="same"),
    case("SeparableConv2D", (2, 3, 7, 8), filters=5, kernel_size=3, **CF),
]

POOL = []
for _rank, _shape, _shape_cf in [(1, (2, 9, 3), (2, 3, 9)), (2, (2, 7, 8, 3), (2, 3, 7, 8)),
                                 (3, (2, 5, 6, 7, 3), (2, 3, 5, 6, 7))]:
    for _kind in ("MaxPooling", "AveragePooling"):
        _name = f"{_kind}{_rank}D"
        POOL += [case(_name, _shape, pool_size=2),
                 case(_name, _shape, pool_size=3, strides=2, padding="same"),
                 case(_name, _shape, pool_size=2, strides=1, padding="same"),
                 case(_name, _shape, pool_size=3, strides=1),
                 case(_name, _shape_cf, pool_size=2, padding="same", **CF)]
    for _kind in ("GlobalMaxPooling", "GlobalAveragePooling"):
        _name = f"{_kind}{_rank}D"
        POOL += [case(_name, _shape), case(_name, _shape, keepdims=True), case(_name, _shape_cf, **CF)]

RESHAPE = [
    case("Flatten", (2, 3, 4, 5)),
    case("Flatten", (2, 3, 4, 5), **CF),
    case("Flatten", (2, 3)),
    case("Reshape", (2, 3, 4), target_shape=(4, 3)),
    case("Reshape", (2, 3, 4), target_shape=(-1, 2)),
    case("Permute", (2, 3, 4, 5), dims=(3, 1, 2)),
    case("RepeatVector", (2, 5), n=3),
    case("ZeroPadding1D", (2, 5, 3), padding=(1, 2)),
    case("ZeroPadding1D", (2, 3, 5), padding=2, **CF),
    case("ZeroPadding2D", (2, 4, 5, 3), padding=((1, 0), (2, 3))),
    case("ZeroPadding2D", (2, 3, 4, 5), padding=1, **CF),
    case("ZeroPadding3D", (2, 3, 4, 5, 2), padding=((1, 0), (0, 2), (1, 1))),
    case("ZeroPadding3D", (2, 2, 3, 4, 5), padding=1, **CF),
    case("Cropping1D", (2, 7, 3), cropping=(1, 2)),
    case("Cropping1D", (2, 7, 3), cropping=(2, 0)),
    case("Cropping2D", (2, 7, 8, 3), cropping=((1, 2), (0, 3))),
    case("Cropping2D", (2, 3, 7, 8), cropping=1, **CF),
    case("Cropping3D", (2, 5, 6, 7, 2), cropping=((1, 1), (2, 0), (0, 3))),
    case("Cropping3D", (2, 2, 5, 6, 7), **CF),
    case("UpSampling1D", (2, 4, 3), size=3),
    case("UpSampling2D", (2, 4, 5, 3), size=(2, 3)),
    case("UpSampling2D", (2, 3, 4, 5), size=2, **CF),
    case("UpSampling2D", (2, 4, 5, 3), size=(2, 3), interpolation="bilinear"),
    case("UpSampling2D", (2, 3, 4, 5), size=2, interpolation="bilinear", **CF),
    case("UpSampling2D", (2, 4, 5, 3), size=2, interpolation="bicubic", grad=False),
    case("UpSampling3D", (2, 2, 3, 4, 3), size=(2, 1, 3)),
    case("UpSampling3D", (2, 3, 2, 3, 4), size=2, **CF),
]

PREPROCESS = [
    case("Rescaling", (2, 4, 5, 3), scale=1 / 127.5, offset=-1.0),
    case("Normalization", (2, 4, 3), axis=-1, mean=[0.5, -1.0, 2.0], variance=[1.0, 4.0, 0.25]),
    case("Normalization", (2, 4, 3), axis=(1, 2), mean=0.5, variance=2.0),
    case("Normalization", (2, 4, 3), axis=-1, mean=[0.5, -1.0, 2.0], variance=[1.0, 4.0, 0.25], invert=True),
    case("Resizing", (2, 8, 10, 3), height=5, width=4),
    case("Resizing", (2, 5, 6, 3), height=9, width=13, interpolation="nearest"),
    case("Resizing", (2, 5, 6, 3), height=9, width=7, interpolation="bicubic", grad=False),
    case("Resizing", (2, 10, 12, 3), height=4, width=5, interpolation="area", grad=False),
    case("Resizing", (2, 10, 12, 3), height=6, width=5, interpolation="lanczos3", grad=False),
    case("Resizing", (2, 10, 12, 3), height=6, width=5, antialias=True, grad=False),
    case("Resizing", (2, 10, 16, 3), height=6, width=6, crop_to_aspect_ratio=True),
    case("Resizing", (2, 16, 10, 3), height=6, width=6, pad_to_aspect_ratio=True, fill_value=0.5),
    case("Resizing", (2, 3, 10, 16), height=5, width=6, **CF),
    case("CenterCrop", (2, 9, 10, 3), height=5, width=4),
    case("CenterCrop", (2, 3, 9, 10), height=6, width=6, **CF),
    case("CenterCrop", (2, 6, 10, 3), height=8, width=4),
]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


class ChannelsLastReference:
    """Keras's layer run in channels_last between transposes: TensorFlow's CPU kernels refuse some
    channels_first convolutions (NCHW Conv2D, Conv2DBackpropInput, Conv3DBackpropInputV2)."""

    def __init__(self, name, kwargs):
        self.layer = getattr(keras.layers, name)(**{**kwargs, "data_format": "channels_last"})

    def __call__(self, x):
        rank = len(x.shape)
        y = self.layer(tf.transpose(x, [0] + list(range(2, rank)) + [1]))
        return tf.transpose(y, [0, rank - 1] + list(range(1, rank - 1)))

    def __getattr__(self, attr):
        return getattr(self.layer, attr)


class DilatedTransposeReference:
    """A dilated transposed convolution (TensorFlow's CPU Conv2DBackpropInput refuses dilations) as the
    gradient of the dilated forward convolution, through Keras's layer's own weights."""

    def __init__(self, name, kwargs):
        self.layer = getattr(keras.layers, name)(**kwargs)

    def __call__(self, x):
        layer = self.layer
        if not layer.built:
            layer.build(tuple(x.shape))
        out_shape = layer.compute_output_shape(tuple(x.shape))
        with tf.GradientTape() as inner:
            z = tf.zeros(out_shape)
            inner.watch(z)
            c = tf.nn.convolution(z, layer.kernel, strides=1, padding=layer.padding.upper(),
                                  dilations=list(layer.dilation_rate))
        y = inner.gradient(c, z, output_gradients=tf.convert_to_tensor(x))
        return y + layer.bias if layer.use_bias else y

    def __getattr__(self, attr):
        return getattr(self.layer, attr)


def keras_reference(name, kwargs, x):
    """Keras's layer (or an equivalent where TensorFlow's CPU kernels refuse the configuration) and its output."""
    if "Transpose" in name and max(np.atleast_1d(kwargs.get("dilation_rate", 1))) > 1:
        theirs = DilatedTransposeReference(name, kwargs)
        return theirs, theirs(x)
    theirs = getattr(keras.layers, name)(**kwargs)
    try:
        return theirs, theirs(x)
    except (tf.errors.UnimplementedError, tf.errors.InvalidArgumentError):
        if kwargs.get("data_format") != "channels_first":
            raise
    theirs = ChannelsLastReference(name, kwargs)
    return theirs, theirs(x)


def check_against_keras(name, kwargs, shape, grad):
    rng = _rng(zlib.crc32(f"{name}{kwargs}{shape}".encode()))
    x = rng.standard_normal(shape).astype(np.float32)
    # Keras's own layer where TensorFlow runs it (channels_first 1-D separable convolutions put the bias on
    # the wrong axis when the output's last two dimensions are equal: the shapes here avoid that).
    theirs, expected = keras_reference(name, kwargs, x)
    ours = getattr(L, name)(**kwargs)
    if theirs.weights:  # random biases too: zeros would hide a bias on the wrong axis
        theirs.set_weights([rng.standard_normal(tuple(w.shape)).astype(np.float32) for w in theirs.weights])
        expected = theirs(x)
    ours(x)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights]
    ours.set_weights(theirs.get_weights())
    got = ours(x)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(_np(got), _np(expected), **FWD)
    if not grad:
        return
    r = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(theirs(xt) * r)
    want = tape.gradient(loss, [xt] + list(theirs.trainable_weights))
    xp = px.constant(x)
    with px.GradientTape() as tape:
        tape.watch(xp)
        loss = px.reduce_sum(ours(xp) * px.constant(r))
    have = tape.gradient(loss, [xp] + list(ours.trainable_weights))
    for label, a, b in zip(["input"] + [w.name for w in ours.trainable_weights], have, want):
        assert a is not None, f"no gradient for {label}"
        np.testing.assert_allclose(_np(a), _np(b), err_msg=f"gradient of {label}", **GRAD)


@pytest.mark.parametrize("name,kwargs,shape,grad", CONV)
def test_conv_layers_match_keras(name, kwargs, shape, grad):
    check_against_keras(name, kwargs, shape, grad)


@pytest.mark.parametrize("name,kwargs,shape,grad", POOL)
def test_pooling_layers_match_keras(name, kwargs, shape, grad):
    check_against_keras(name, kwargs, shape, grad)


@pytest.mark.parametrize("name,kwargs,shape,grad", RESHAPE)
def test_reshaping_layers_match_keras(name, kwargs, shape, grad):
    check_against_keras(name, kwargs, shape, grad)


@pytest.mark.parametrize("name,kwargs,shape,grad", PREPROCESS)
def test_preprocessing_layers_match_keras(name, kwargs, shape, grad):
    check_against_keras(name, kwargs, shape, grad)


def test_global_average_pooling_1d_mask():
    rng = _rng(1)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 0, 0, 1], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    expected = keras.layers.GlobalAveragePooling1D()(x, mask=mask)
    got = L.GlobalAveragePooling1D()(x, mask=px.constant(mask))
    np.testing.assert_allclose(_np(got), _np(expected), **FWD)


@pytest.mark.parametrize("batches", [False, True])
def test_normalization_adapt_matches_keras(batches):
    rng = _rng(2)
    data = (rng.standard_normal((40, 6, 3)) * [1.0, 3.0, 0.5] + [2.0, -1.0, 0.0]).astype(np.float32)
    theirs, ours = keras.layers.Normalization(axis=-1), L.Normalization(axis=-1)
    source = [data[i:i + 16] for i in range(0, 40, 16)] if batches else data
    theirs.adapt(source)
    ours.adapt(source)
    assert [w.name for w in ours.weights] == ["mean", "variance", "count"]
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(ours(data[:4])), _np(theirs(data[:4])), **FWD)
    # A fresh layer loaded with the adapted weights normalizes the same way.
    fresh = L.Normalization(axis=-1)
    fresh.build((None, 6, 3))
    fresh.set_weights(theirs.get_weights())
    np.testing.assert_allclose(_np(fresh(data[:4])), _np(theirs(data[:4])), **FWD)


def _same_config(ours, theirs):
    a, b = ours.get_config(), theirs.get_config()
    assert sorted(a) == sorted(b)
    for key in b:
        if key in ("name", "dtype"):
            continue
        va, vb = a[key], b[key]
        if isinstance(vb, dict) and "class_name" in vb:
            assert va["class_name"] == vb["class_name"], key
        else:
            assert va == vb, (key, va, vb)


@pytest.mark.parametrize("name,kwargs", [
    ("Conv2D", dict(filters=3, kernel_size=2, activation="relu", padding="same")),
    ("Conv1D", dict(filters=3, kernel_size=2, padding="causal", groups=1)),
    ("Conv2DTranspose", dict(filters=3, kernel_size=3, strides=2, output_padding=1)),
    ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=2)),
    ("SeparableConv1D", dict(filters=4, kernel_size=3)),
    ("MaxPooling2D", {}),
    ("AveragePooling1D", dict(pool_size=3, strides=1, padding="same")),
    ("GlobalAveragePooling3D", dict(keepdims=True)),
    ("Flatten", {}),
    ("Reshape", dict(target_shape=(2, -1))),
    ("ZeroPadding2D", dict(padding=((1, 2), (3, 4)))),
    ("Cropping3D", dict(cropping=1)),
    ("UpSampling2D", dict(size=2, interpolation="bilinear")),
    ("Rescaling", dict(scale=0.5, offset=1.0)),
    ("Normalization", dict(axis=(1, 2), mean=[1.0, 2.0], variance=[3.0, 4.0])),
    ("Resizing", dict(height=3, width=4, crop_to_aspect_ratio=True)),
    ("CenterCrop", dict(height=3, width=4)),
])
def test_get_config_matches_keras(name, kwargs):
    _same_config(getattr(L, name)(**kwargs), getattr(keras.layers, name)(**kwargs))


def test_aliases():
    assert L.MaxPool2D is L.MaxPooling2D and L.AvgPool1D is L.AveragePooling1D
    assert L.GlobalAvgPool2D is L.GlobalAveragePooling2D and L.GlobalMaxPool3D is L.GlobalMaxPooling3D
    assert L.Convolution2D is L.Conv2D and L.SeparableConvolution2D is L.SeparableConv2D


@pytest.mark.parametrize("name,kwargs,shape", [
    ("Conv2D", dict(filters=4, kernel_size=3, padding="same", strides=2), (7, 8, 3)),
    ("Conv2DTranspose", dict(filters=4, kernel_size=3, strides=2, padding="same"), (5, 6, 3)),
    ("Conv1DTranspose", dict(filters=2, kernel_size=3, strides=2, output_padding=1), (5, 3)),
    ("DepthwiseConv1D", dict(kernel_size=3, strides=2, dilation_rate=2, padding="same"), (11, 3)),
    ("SeparableConv2D", dict(filters=3, kernel_size=3, padding="same"), (6, 6, 2)),
    ("MaxPooling3D", dict(pool_size=2, padding="same"), (5, 4, 3, 2)),
    ("AveragePooling3D", dict(pool_size=3, strides=2), (5, 6, 7, 2)),
    ("Flatten", {}, (3, 4, 2)),
    ("Reshape", dict(target_shape=(-1, 4)), (3, 4, 2)),
    ("UpSampling1D", dict(size=2), (4, 3)),
    ("UpSampling2D", dict(size=2, interpolation="bilinear"), (3, 4, 2)),
    ("Resizing", dict(height=4, width=3, pad_to_aspect_ratio=True), (6, 8, 2)),
    ("CenterCrop", dict(height=3, width=3), (5, 6, 2)),
])
@pytest.mark.parametrize("unknown", ["batch", "spatial"])
def test_traced_with_unknown_batch(name, kwargs, shape, unknown):
    """The layer inside plexus.function with batch None (and the spatial sizes None too), run on batches
    of 2 and 5, outputs and input gradients as Keras's."""
    theirs, ours = getattr(keras.layers, name)(**kwargs), getattr(L, name)(**kwargs)
    rng = _rng(3)
    x2 = rng.standard_normal((2,) + shape).astype(np.float32)
    theirs(x2)
    ours(x2)
    ours.set_weights(theirs.get_weights())
    differentiable = name != "Resizing"

    def fn(x):
        with px.GradientTape() as tape:
            y = ours(x)
            loss = px.reduce_sum(y * y)
        return (y, tape.gradient(loss, x)) if differentiable else (y, y)

    spec = [None] + (list(shape) if unknown == "batch" else [None] * (len(shape) - 1) + [shape[-1]])
    traced = px.function(fn, input_signature=[px.TensorSpec(spec, px.float32)])
    for batch in (2, 5):
        x = rng.standard_normal((batch,) + shape).astype(np.float32)
        y, dx = traced(px.constant(x))
        xt = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            want = theirs(xt)
            loss = tf.reduce_sum(want * want)
        np.testing.assert_allclose(_np(y), want.numpy(), **FWD)
        if differentiable:
            np.testing.assert_allclose(_np(dx), tape.gradient(loss, xt).numpy(), **GRAD)


@pytest.mark.parametrize("kwargs", [dict(height=4, width=5), dict(height=11, width=5, interpolation="bicubic"),
                                    dict(height=4, width=4, crop_to_aspect_ratio=True)])
def test_resizing_integer_images_round_like_keras(kwargs):
    img = _rng(4).integers(0, 256, (2, 7, 9, 3)).astype(np.uint8)
    expected = keras.layers.Resizing(**kwargs)(img)
    got = L.Resizing(**kwargs)(img)
    assert got.numpy().dtype == np.uint8
    np.testing.assert_array_equal(got.numpy(), np.asarray(expected))
    single = L.Resizing(**kwargs)(img[0])
    np.testing.assert_array_equal(single.numpy(), np.asarray(expected)[0])


@pytest.mark.parametrize("name,kwargs", [
    ("Conv3DTranspose", dict(filters=2, kernel_size=2, strides=2, padding="same", output_padding=1)),
    ("SeparableConv2D", dict(filters=2, kernel_size=3, depth_multiplier=2)),
    ("AveragePooling3D", dict(pool_size=(1, 2, 3))),
    ("Rescaling", dict(scale=np.array([1.0, 2.0], np.float32))),
    ("Normalization", dict(axis=None)),
])
def test_from_config_round_trip(name, kwargs):
    layer = getattr(L, name)(**kwargs)
    again = getattr(L, name).from_config(layer.get_config())
    assert type(again) is type(layer)
    config, config_again = layer.get_config(), again.get_config()
    config.pop("name"), config_again.pop("name")
    assert str(config) == str(config_again)
