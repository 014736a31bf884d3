"""Fourier transforms (FFT, IFFT, RFFT, IRFFT in 1, 2 and 3 dimensions)
and the complex-number ops (Real, Imag, Angle, ComplexAbs, Conj, Complex)
through plexus.raw_ops, against TensorFlow's tf.raw_ops on the same inputs
in the same test. Tolerances: float32 transforms agree to 1e-4 relative to
the largest magnitude of the result (different FFT algorithms round
differently; lengths up to 64), float64 to 1e-10; the elementwise complex
ops exactly, except Angle and ComplexAbs (1 ulp-level, rtol 1e-6)."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops
RNG = np.random.default_rng(7)


def close(ours, theirs, single=True):
    a, b = np.asarray(ours.numpy()), np.asarray(theirs.numpy())
    assert a.shape == b.shape and a.dtype == b.dtype
    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=0, atol=(1e-4 if single else 1e-10) * scale)


def real(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def cplx(shape, dtype):
    part = np.float32 if dtype == np.complex64 else np.float64
    return (real(shape, part) + 1j * real(shape, part)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op,shape", [("FFT", (3, 16)), ("IFFT", (2, 15)), ("FFT", (7,)), ("FFT2D", (2, 6, 5)),
                                      ("IFFT2D", (4, 8)), ("FFT3D", (2, 3, 4, 5)), ("IFFT3D", (3, 3, 2))])
def test_complex_fft(op, shape, dtype):
    x = cplx(shape, dtype)
    close(getattr(R, op)(input=px.constant(x)), getattr(tf.raw_ops, op)(input=tf.constant(x)), dtype == np.complex64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op,shape,length", [
    ("RFFT", (3, 16), [16]), ("RFFT", (2, 15), [15]), ("RFFT", (2, 20), [12]),
    ("RFFT", (5,), [1]), ("RFFT2D", (2, 6, 8), [6, 8]), ("RFFT2D", (5, 9), [4, 8]),
    ("RFFT3D", (2, 3, 4, 6), [3, 4, 6])])
def test_rfft(op, shape, length, dtype):
    x = real(shape, dtype)
    single = dtype == np.float32
    ctype = tf.complex64 if single else tf.complex128
    ours = getattr(R, op)(input=px.constant(x), fft_length=np.array(length, np.int32),
                          Tcomplex=px.complex64 if single else px.complex128)
    close(ours, getattr(tf.raw_ops, op)(input=tf.constant(x), fft_length=length, Tcomplex=ctype), single)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op,shape,length", [
    ("IRFFT", (3, 9), [16]), ("IRFFT", (2, 8), [15]), ("IRFFT", (2, 12), [6]),
    ("IRFFT2D", (2, 6, 5), [6, 8]), ("IRFFT2D", (4, 7), [3, 10]), ("IRFFT3D", (2, 3, 4, 4), [3, 4, 6])])
def test_irfft(op, shape, length, dtype):
    x = cplx(shape, dtype)
    single = dtype == np.complex64
    rtype = tf.float32 if single else tf.float64
    ours = getattr(R, op)(input=px.constant(x), fft_length=np.array(length, np.int32),
                          Treal=px.float32 if single else px.float64)
    close(ours, getattr(tf.raw_ops, op)(input=tf.constant(x), fft_length=length, Treal=rtype), single)


def test_stft_magnitude_in_a_function_matches_tensorflow():
    signal = real((2, 64), np.float32)

    theirs = tf.abs(tf.signal.stft(signal, frame_length=16, frame_step=8, fft_length=16))
    frames = tf.signal.frame(signal, 16, 8).numpy() * tf.signal.hann_window(16).numpy()
    ours = R.ComplexAbs(x=R.RFFT(input=px.constant(frames), fft_length=np.array([16], np.int32)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_parts(dtype):
    x = cplx((3, 4), dtype)
    x[0, 0] = 0
    x[0, 1] = -1.5
    tout = px.float32 if dtype == np.complex64 else px.float64
    ttf = tf.float32 if dtype == np.complex64 else tf.float64
    for op in ("Real", "Imag"):
        np.testing.assert_array_equal(getattr(R, op)(input=px.constant(x), Tout=tout).numpy(),
                                      getattr(tf.raw_ops, op)(input=tf.constant(x), Tout=ttf).numpy())
    np.testing.assert_allclose(R.Angle(input=px.constant(x), Tout=tout).numpy(),
                               tf.raw_ops.Angle(input=tf.constant(x), Tout=ttf).numpy(), rtol=1e-6)
    np.testing.assert_allclose(R.ComplexAbs(x=px.constant(x), Tout=tout).numpy(),
                               tf.raw_ops.ComplexAbs(x=tf.constant(x), Tout=ttf).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(R.Conj(input=px.constant(x)).numpy(), tf.raw_ops.Conj(input=tf.constant(x)).numpy())


def test_complex_broadcasts():
    re = real((2, 3), np.float32)
    im = real((3,), np.float32)
    ours = R.Complex(real=px.constant(re), imag=px.constant(im), Tout=px.complex64)
    np.testing.assert_array_equal(ours.numpy(), tf.raw_ops.Complex(real=re, imag=im, Tout=tf.complex64).numpy())
    with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
        R.Complex(real=px.constant(re), imag=px.constant(real((4,), np.float32)), Tout=px.complex64)


def test_fft_errors():
    with pytest.raises(errors.PlexusError, match="rank at least 2"):
        R.FFT2D(input=px.constant(cplx((4,), np.complex64)))
    with pytest.raises(errors.PlexusError, match="fft_length"):
        R.RFFT(input=px.constant(real((4,), np.float32)), fft_length=np.array([4, 4], np.int32))
    with pytest.raises(errors.PlexusError, match="not an allowed type"):
        R.Real(input=px.constant(real((4,), np.float32)))
    # Shorter than the transform: TensorFlow's kernels refuse (tf.signal pads first).
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least 16"):
        tf.raw_ops.RFFT(input=real((2, 10), np.float32), fft_length=[16])
    with pytest.raises(errors.InvalidArgumentError, match="Input dimension 1 must have length of at least 16"):
        R.RFFT(input=px.constant(real((2, 10), np.float32)), fft_length=np.array([16], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="at least 9"):
        R.IRFFT(input=px.constant(cplx((2, 5), np.complex64)), fft_length=np.array([16], np.int32))


@pytest.mark.parametrize("n,length", [(6, None), (6, [8]), (10, [8]), (7, [7])])
def test_signal_rfft_irfft_pad_and_crop_as_tensorflow(n, length):
    x = real((2, n), np.float32)
    np.testing.assert_allclose(px.signal.rfft(x, length).numpy(), tf.signal.rfft(x, length).numpy(),
                               rtol=0, atol=1e-4 * max(1.0, float(np.abs(x).sum())))
    spectrum = cplx((2, n // 2 + 1), np.complex64)
    np.testing.assert_allclose(px.signal.irfft(spectrum, length).numpy(), tf.signal.irfft(spectrum, length).numpy(),
                               rtol=0, atol=1e-4 * max(1.0, float(np.abs(spectrum).sum())))


def test_public_complex_names():
    z = px.complex(np.array([1.0, -2.0]), np.array([0.5, 3.0]))
    assert z.dtype == px.complex128
    np.testing.assert_array_equal(px.math.real(z).numpy(), [1.0, -2.0])
    np.testing.assert_array_equal(px.math.imag(z).numpy(), [0.5, 3.0])
    np.testing.assert_array_equal(px.math.conj(z).numpy(), [1.0 - 0.5j, -2.0 - 3.0j])
    np.testing.assert_array_equal(px.real(np.float32(4.0)).numpy(), 4.0)
    np.testing.assert_array_equal(px.imag(np.array([4.0], np.float32)).numpy(), [0.0])
