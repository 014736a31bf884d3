"""Image decoding and encoding (DecodeJpeg, DecodeAndCropJpeg, DecodePng,
DecodeImage, ExtractJpegShape, EncodePng, EncodeJpeg) and the byte ops
(EncodeBase64, DecodeBase64, DecodeRaw) through plexus.raw_ops, against
TensorFlow's tf.raw_ops on the same bytes in the same test.

Tolerances: PNG decoding is exact. JPEG decoding uses libjpeg-turbo with
TensorFlow's settings; TensorFlow bundles its own build of the same library,
so pixels may differ by a small rounding (at most 2 levels of 255 here).
Encoded bytes are compared by decoding them (the zlib and libjpeg builds may
differ): PNG round trips exactly, JPEG within the codec's own loss."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops
RNG = np.random.default_rng(11)


def smooth_image(h, w, c):
    y, x = np.mgrid[0:h, 0:w]
    planes = [(127 + 120 * np.sin(x / (3 + k) + y / (5 + k))) for k in range(c)]
    return np.stack(planes, -1).astype(np.uint8)


def jpeg_bytes(h=24, w=32, c=3, **kw):
    return tf.io.encode_jpeg(smooth_image(h, w, c), **kw).numpy()


def png_bytes(image):
    return tf.io.encode_png(image).numpy()


def b(x):
    return px.constant(np.array(x, dtype=object).astype(bytes)) if isinstance(x, bytes) else px.constant(x)


@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("ratio", [1, 2, 4])
@pytest.mark.parametrize("dct", ["", "INTEGER_ACCURATE"])
@pytest.mark.parametrize("source_channels", [1, 3])
def test_decode_jpeg(channels, ratio, dct, source_channels):
    data = jpeg_bytes(c=source_channels)
    ours = R.DecodeJpeg(contents=px.constant(data), channels=channels, ratio=ratio, dct_method=dct).numpy()
    theirs = tf.raw_ops.DecodeJpeg(contents=data, channels=channels, ratio=ratio, dct_method=dct).numpy()
    assert ours.shape == theirs.shape and ours.dtype == np.uint8
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 2


def test_decode_and_crop_jpeg_and_shape():
    data = jpeg_bytes(40, 48)
    window = np.array([4, 8, 20, 16], np.int32)
    ours = R.DecodeAndCropJpeg(contents=px.constant(data), crop_window=window).numpy()
    theirs = tf.raw_ops.DecodeAndCropJpeg(contents=data, crop_window=window).numpy()
    assert ours.shape == theirs.shape == (20, 16, 3)
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 2
    np.testing.assert_array_equal(R.ExtractJpegShape(contents=px.constant(data)).numpy(), [40, 48, 3])
    with pytest.raises(errors.InvalidArgumentError, match="crop window"):
        R.DecodeAndCropJpeg(contents=px.constant(data), crop_window=np.array([30, 0, 20, 16], np.int32))


@pytest.mark.parametrize("source", ["gray", "gray_alpha", "rgb", "rgba", "rgb16", "gray16"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("dtype", [px.uint8, px.uint16])
def test_decode_png(source, channels, dtype):
    c = {"gray": 1, "gray_alpha": 2, "rgb": 3, "rgba": 4, "rgb16": 3, "gray16": 1}[source]
    image = RNG.integers(0, 256, (9, 13, c)).astype(np.uint8)
    if source.endswith("16"):
        image = RNG.integers(0, 65536, (9, 13, c)).astype(np.uint16)
    data = png_bytes(image)
    tdtype = tf.uint8 if dtype == px.uint8 else tf.uint16
    theirs = tf.raw_ops.DecodePng(contents=data, channels=channels, dtype=tdtype).numpy()
    ours = R.DecodePng(contents=px.constant(data), channels=channels, dtype=dtype).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [px.uint8, px.uint16, px.float32])
def test_decode_image_png_and_jpeg(dtype):
    tdtype = {px.uint8: tf.uint8, px.uint16: tf.uint16, px.float32: tf.float32}[dtype]
    png = png_bytes(RNG.integers(0, 256, (5, 6, 3)).astype(np.uint8))
    np.testing.assert_array_equal(R.DecodeImage(contents=px.constant(png), dtype=dtype).numpy(),
                                  tf.raw_ops.DecodeImage(contents=png, dtype=tdtype).numpy())
    jpg = jpeg_bytes()
    ours = R.DecodeImage(contents=px.constant(jpg), dtype=dtype).numpy().astype(np.float64)
    theirs = tf.raw_ops.DecodeImage(contents=jpg, dtype=tdtype).numpy().astype(np.float64)
    scale = {px.uint8: 1, px.uint16: 256, px.float32: 1 / 255}[dtype]
    assert np.abs(ours - theirs).max() <= 2 * scale + 1e-6
    # DecodeJpeg takes a PNG too, as TensorFlow's does.
    np.testing.assert_array_equal(R.DecodeJpeg(contents=px.constant(png)).numpy(),
                                  tf.raw_ops.DecodeJpeg(contents=png).numpy())


def test_decode_errors_name_the_problem():
    with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
        R.DecodeImage(contents=px.constant(b"not an image"))
    with pytest.raises(errors.InvalidArgumentError, match="empty"):
        R.DecodeJpeg(contents=px.constant(b""))
    data = jpeg_bytes(96, 128)
    cut = data[: len(data) * 3 // 4]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.DecodeJpeg(contents=cut)
    with pytest.raises(errors.InvalidArgumentError, match="truncated"):
        R.DecodeJpeg(contents=px.constant(cut))
    recovered = R.DecodeJpeg(contents=px.constant(cut), try_recover_truncated=True)
    assert recovered.numpy().shape == (96, 128, 3)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid PNG"):
        R.DecodePng(contents=px.constant(png_bytes(np.zeros((4, 4, 3), np.uint8))[:40]))
    with pytest.raises(errors.PlexusError, match="GIF"):
        R.DecodeImage(contents=px.constant(b"GIF89a" + b"\0" * 20))


@pytest.mark.parametrize("shape,dtype", [((5, 7, 1), np.uint8), ((5, 7, 2), np.uint8), ((4, 3, 3), np.uint8),
                                         ((6, 2, 4), np.uint16)])
def test_encode_png_round_trips(shape, dtype):
    image = RNG.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    data = R.EncodePng(image=px.constant(image), compression=9).numpy()
    np.testing.assert_array_equal(tf.io.decode_png(data, dtype=tf.as_dtype(dtype)).numpy(), image)


@pytest.mark.parametrize("channels,quality", [(3, 95), (1, 75), (3, 30)])
def test_encode_jpeg_close_to_tensorflow(channels, quality):
    image = smooth_image(16, 24, channels)
    ours = tf.io.decode_jpeg(R.EncodeJpeg(image=px.constant(image), quality=quality).numpy()).numpy()
    theirs = tf.io.decode_jpeg(tf.raw_ops.EncodeJpeg(image=image, quality=quality).numpy()).numpy()
    assert ours.shape == theirs.shape
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 2
    variable = R.EncodeJpegVariableQuality(images=px.constant(image), quality=np.int32(quality)).numpy()
    assert tf.io.decode_jpeg(variable).numpy().shape == image.shape


@pytest.mark.parametrize("pad", [False, True])
def test_base64(pad):
    values = [b"", b"a", b"ab", b"abc", bytes(range(256)), b"\xff\xfe?>"]
    ours = R.EncodeBase64(input=px.constant(np.array(values, dtype=object).astype(bytes)), pad=pad)
    theirs = tf.raw_ops.EncodeBase64(input=tf.constant(values), pad=pad)
    assert [bytes(v) for v in ours.numpy()] == list(theirs.numpy())
    back = R.DecodeBase64(input=ours)
    assert [bytes(v) for v in back.numpy()] == values
    with pytest.raises(errors.InvalidArgumentError, match="base64"):
        R.DecodeBase64(input=px.constant([b"ab$d"]))


@pytest.mark.parametrize("out_type", [px.uint8, px.int16, px.int32, px.float32, px.float64, px.int64])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw(out_type, little_endian):
    raw = [bytes(RNG.integers(0, 256, 16).astype(np.uint8)) for _ in range(3)]
    ttype = tf.as_dtype(out_type.name)
    ours = R.DecodeRaw(bytes=px.constant(np.array(raw, dtype=object).astype(bytes)), out_type=out_type,
                       little_endian=little_endian).numpy()
    theirs = tf.raw_ops.DecodeRaw(bytes=tf.constant(raw), out_type=ttype, little_endian=little_endian).numpy()
    np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))
    with pytest.raises(errors.InvalidArgumentError, match="same size"):
        R.DecodeRaw(bytes=px.constant([b"abcd", b"ab"]), out_type=px.uint8)


def test_saved_model_serving_image_bytes(tmp_path):
    """A serving signature that takes web-safe base64 JPEG bytes, as image
    services export them: decode, resize, normalize, a dense layer."""
    weights = RNG.standard_normal((12, 4)).astype(np.float32)

    class Server(tf.Module):
        def __init__(self):
            self.w = tf.Variable(weights)

        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def serve(self, image_b64):
            image = tf.io.decode_jpeg(tf.io.decode_base64(image_b64), channels=3)
            image = tf.image.resize(tf.cast(image, tf.float32)[None] / 255.0, [2, 2])
            return {"scores": tf.matmul(tf.reshape(image, [1, 12]), self.w)}

    server = Server()
    folder = str(tmp_path / "server")
    tf.saved_model.save(server, folder, signatures={"serving_default": server.serve})
    request = tf.io.encode_base64(jpeg_bytes(20, 30)).numpy()
    theirs = server.serve(tf.constant(request))["scores"].numpy()
    loaded = px.saved_model.load(folder)
    ours = loaded.signatures["serving_default"](image_b64=px.constant(request))
    ours = ours["scores"] if isinstance(ours, dict) else ours
    np.testing.assert_allclose(np.asarray(ours.numpy()), theirs, rtol=0, atol=0.05)
