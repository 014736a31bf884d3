"""MatrixSolve (tf.linalg.solve) and Conv3D's gradient ops
(Conv3DBackpropInputV2, Conv3DBackpropFilterV2, tf.nn.conv3d_transpose)
against TensorFlow run here, with the gradients of MatrixSolve, Conv3D and
the two backprop ops against tf.GradientTape.

Tolerances: MatrixSolve factors each matrix with partial pivoting on both
sides; on well-conditioned systems float32 agrees to 1e-5 (relative and
absolute) and float64 to 1e-11. The 3-D convolution gradients are sums of
up to a few hundred products: float32 1e-5, float64 1e-12, half and
bfloat16 within their rounding of such sums (1e-2 and 5e-2 relative to the
largest value). Gradients through the tapes: 1e-5 (float32), 1e-11
(float64).
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

from tf_compare import gradients, px_tensor, tf_tensor, as_numpy

tf = pytest.importorskip("tensorflow")

TOL = {"float32": 1e-5, "float64": 1e-11}


def systems(batch, m, k, dtype, seed):
    """Diagonally dominant (well-conditioned) matrices and right-hand sides."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, batch + (m, m))
    a += np.eye(m) * (m + 1) * np.where(np.arange(m) % 2, -1, 1)
    return a.astype(dtype), rng.uniform(-2, 2, batch + (m, k)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("shape", [((), 3, 1), ((), 5, 4), ((2, 3), 4, 2), ((4,), 1, 3)],
                         ids=str)
def test_matrix_solve_values(dtype, adjoint, shape):
    a, b = systems(*shape, dtype, 1)
    want = tf.linalg.solve(a, b, adjoint=adjoint).numpy()
    got = px.linalg.solve(a, b, adjoint=adjoint).numpy()
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(raw_ops.MatrixSolve(a, b, adjoint=adjoint).numpy(), want,
                               rtol=TOL[dtype], atol=TOL[dtype])


def test_matrix_solve_pivoting_and_empty():
    a = np.array([[0, 2, 0], [0, 0, 3], [1, 0, 0]], np.float64)  # needs row exchanges
    b = np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(px.linalg.solve(a, b).numpy(), tf.linalg.solve(a, b).numpy())
    tiny = np.array([[1e-30, 0], [0, 1]], np.float32)  # tiny but nonzero pivots are fine
    np.testing.assert_allclose(px.linalg.solve(tiny, b[:2].astype(np.float32)).numpy(),
                               tf.linalg.solve(tiny, b[:2].astype(np.float32)).numpy(), rtol=1e-6)
    for a, b in [(np.zeros((0, 0)), np.zeros((0, 3))), (np.eye(2), np.zeros((2, 0))),
                 (np.zeros((0, 2, 2)), np.zeros((0, 2, 1)))]:
        got = px.linalg.solve(a, b)
        assert tuple(got.shape) == tf.linalg.solve(a, b).shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("adjoint", [False, True])
def test_matrix_solve_gradient(dtype, adjoint):
    a, b = systems((2,), 3, 2, dtype, 2)
    dy = np.random.default_rng(3).uniform(-1, 1, b.shape).astype(dtype)
    got, want = gradients(tf, lambda x, y: px.linalg.solve(x, y, adjoint=adjoint),
                          lambda x, y: tf.linalg.solve(x, y, adjoint=adjoint), [a, b], dy)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=TOL[dtype], atol=TOL[dtype])


SOLVE_ERRORS = [
    ("not invertible", np.array([[1, 2], [2, 4]], np.float32), np.ones((2, 1), np.float32)),
    ("not invertible", np.array([[np.nan, 1], [1, 1]], np.float32), np.ones((2, 1), np.float32)),
    ("not invertible", np.stack([np.eye(2), np.zeros((2, 2))]).astype(np.float32),
     np.ones((2, 2, 1), np.float32)),
    ("square", np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)),
    ("incompatible", np.eye(2, dtype=np.float32), np.ones((3, 1), np.float32)),
    ("same rank", np.eye(2, dtype=np.float32), np.ones((2,), np.float32)),
    ("outer dimensions", np.stack([np.eye(2)] * 2).astype(np.float32),
     np.ones((3, 2, 1), np.float32)),
]


@pytest.mark.parametrize("message,a,b", SOLVE_ERRORS, ids=[e[0] for e in SOLVE_ERRORS])
def test_matrix_solve_errors(message, a, b):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.linalg.solve(a, b)
    with pytest.raises(errors.InvalidArgumentError, match=f"MatrixSolve.*{message}"):
        px.linalg.solve(a, b).numpy()


# ---------------------------------------------------------------------------
# Conv3DBackpropInputV2, Conv3DBackpropFilterV2
# ---------------------------------------------------------------------------

GEOMETRIES = {
    "same": ((2, 4, 5, 6, 3), (3, 3, 3, 3, 4), [1, 1, 1, 1, 1], "SAME", [1, 1, 1, 1, 1]),
    "valid_strided": ((1, 5, 6, 4, 2), (2, 3, 2, 2, 3), [1, 2, 1, 2, 1], "VALID", [1, 1, 1, 1, 1]),
    "same_stride2": ((2, 6, 5, 5, 2), (2, 2, 2, 2, 5), [1, 2, 2, 2, 1], "SAME", [1, 1, 1, 1, 1]),
    "dilated": ((1, 6, 6, 7, 2), (2, 2, 3, 2, 2), [1, 1, 1, 1, 1], "SAME", [1, 2, 1, 2, 1]),
    "pointwise": ((3, 2, 3, 4, 5), (1, 1, 1, 5, 2), [1, 1, 1, 1, 1], "VALID", [1, 1, 1, 1, 1]),
}
LOW_TOL = {"float16": 1e-2, "bfloat16": 5e-2}


def conv_size(size, taps, stride, dilation, padding):
    """A spatial output size of Conv3D (TensorFlow's CPU Conv3D refuses
    dilations, its gradient ops accept them)."""
    if padding == "SAME":
        return -(-size // stride)
    return (size - (taps - 1) * dilation - 1) // stride + 1


def conv_operands(name, dtype, seed=0):
    xs, fs, strides, padding, dilations = GEOMETRIES[name]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, xs)
    f = rng.uniform(-1, 1, fs)
    ys = [xs[0]] + [conv_size(xs[i + 1], fs[i], strides[i + 1], dilations[i + 1], padding)
                    for i in range(3)] + [fs[4]]
    dy = rng.uniform(-1, 1, ys)
    attrs = dict(strides=strides, padding=padding, dilations=dilations)
    return x, f, dy, attrs


def check_close(got, want, dtype):
    got, want = as_numpy(got).astype(np.float64), as_numpy(want).astype(np.float64)
    if dtype in LOW_TOL:
        np.testing.assert_allclose(got, want, atol=LOW_TOL[dtype] * np.abs(want).max(), rtol=0)
    else:
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def expanded_filter(f, dilations):
    """The filter with zeros between its taps: a dilated convolution is an undilated one with it."""
    d = dilations[1:4]
    shape = [(k - 1) * r + 1 for k, r in zip(f.shape[:3], d)] + list(f.shape[3:])
    out = np.zeros(shape, f.dtype)
    out[::d[0], ::d[1], ::d[2]] = f
    return out


def tf_backprops(tf, x, f, dy, attrs, dtype):
    """TensorFlow's Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 of these operands.

    Dilations go through the expanded filter with undilated ops: TensorFlow's
    CPU kernels take dilations only through oneDNN, which it enables on some
    CPUs and not others, so the reference would depend on the machine.
    """
    d = attrs["dilations"]
    plain = dict(attrs, dilations=[1, 1, 1, 1, 1])
    fe = expanded_filter(f, d)
    want_x = tf.raw_ops.Conv3DBackpropInputV2(input_sizes=np.array(x.shape, np.int32),
                                              filter=tf_tensor(tf, fe, dtype),
                                              out_backprop=tf_tensor(tf, dy, dtype), **plain)
    want_fe = tf.raw_ops.Conv3DBackpropFilterV2(input=tf_tensor(tf, x, dtype),
                                                filter_sizes=np.array(fe.shape, np.int32),
                                                out_backprop=tf_tensor(tf, dy, dtype), **plain)
    want_f = tf.constant(want_fe.numpy()[::d[1], ::d[2], ::d[3]])
    return want_x, want_f


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(GEOMETRIES))
def test_conv3d_backprops_match_tensorflow(name, dtype):
    x, f, dy, attrs = conv_operands(name, dtype)
    sizes = np.array(x.shape, np.int32)
    want_x, want_f = tf_backprops(tf, x, f, dy, attrs, dtype)
    got = raw_ops.Conv3DBackpropInputV2(sizes, px_tensor(f, dtype), px_tensor(dy, dtype), **attrs)
    check_close(got, want_x, dtype)
    fsizes = np.array(f.shape, np.int32)
    got = raw_ops.Conv3DBackpropFilterV2(px_tensor(x, dtype), fsizes, px_tensor(dy, dtype), **attrs)
    check_close(got, want_f, dtype)


def test_conv3d_transpose_public_name_and_int64_sizes():
    rng = np.random.default_rng(5)
    y = rng.uniform(-1, 1, (2, 3, 3, 2, 4)).astype(np.float32)
    f = rng.uniform(-1, 1, (3, 2, 3, 5, 4)).astype(np.float32)
    for padding, out in [("SAME", [2, 6, 6, 4, 5]), ("VALID", [2, 7, 6, 5, 5])]:
        want = tf.nn.conv3d_transpose(y, f, out, strides=[1, 2, 2, 2, 1], padding=padding)
        got = px.nn.conv3d_transpose(y, f, out, strides=2, padding=padding)
        check_close(got, want, "float32")
        got = raw_ops.Conv3DBackpropInputV2(np.array(out, np.int64), f, y,
                                            strides=[1, 2, 2, 2, 1], padding=padding)
        check_close(got, want, "float32")


@pytest.mark.parametrize("name", ["same", "valid_strided", "same_stride2"])
def test_conv3d_gradient(name):
    x, f, dy, attrs = conv_operands(name, "float64", 1)
    got, want = gradients(tf, lambda a, b: px.nn.conv3d(a, b, **attrs),
                          lambda a, b: tf.nn.conv3d(a, b, **attrs), [x, f], dy)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-11)


def test_dilated_conv3d_gradient_is_tensorflows_backprop_ops():
    # TensorFlow's CPU Conv3D refuses dilations; the reference is its
    # backprop ops with the expanded filter (tf_backprops).
    x, f, dy, attrs = conv_operands("dilated", "float32", 1)
    x, f, dy = x.astype(np.float32), f.astype(np.float32), dy.astype(np.float32)
    px_x, px_f = px.constant(x), px.constant(f)
    with px.GradientTape() as tape:
        tape.watch([px_x, px_f])
        y = px.nn.conv3d(px_x, px_f, **attrs)
    gx, gf = tape.gradient(y, [px_x, px_f], output_gradients=px.constant(dy))
    want_x, want_f = tf_backprops(tf, x, f, dy, attrs, "float32")
    np.testing.assert_allclose(gx.numpy(), as_numpy(want_x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gf.numpy(), as_numpy(want_f), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["same", "valid_strided"])
def test_backprop_ops_gradients(name):
    x, f, dy, attrs = conv_operands(name, "float64", 2)
    sizes, fsizes = np.array(x.shape, np.int32), np.array(f.shape, np.int32)
    ddx = np.random.default_rng(3).uniform(-1, 1, x.shape)
    got, want = gradients(
        tf, lambda b, d: raw_ops.Conv3DBackpropInputV2(sizes, b, d, **attrs),
        lambda b, d: tf.raw_ops.Conv3DBackpropInputV2(input_sizes=sizes, filter=b,
                                                      out_backprop=d, **attrs), [f, dy], ddx)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-11)
    ddf = np.random.default_rng(4).uniform(-1, 1, f.shape)
    got, want = gradients(
        tf, lambda a, d: raw_ops.Conv3DBackpropFilterV2(a, fsizes, d, **attrs),
        lambda a, d: tf.raw_ops.Conv3DBackpropFilterV2(input=a, filter_sizes=fsizes,
                                                       out_backprop=d, **attrs), [x, dy], ddf)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-11)


def test_conv3d_backprop_errors():
    x, f, dy, attrs = conv_operands("same", "float32")
    f, dy = f.astype(np.float32), dy.astype(np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="Conv3DBackpropInputV2.*out_backprop"):
        raw_ops.Conv3DBackpropInputV2(np.array(x.shape, np.int32), f, dy[:, :3], **attrs).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="Conv3DBackpropInputV2.*same depth"):
        raw_ops.Conv3DBackpropInputV2(np.array([2, 4, 5, 6, 4], np.int32), f, dy, **attrs).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="Conv3DBackpropInputV2.*5"):
        raw_ops.Conv3DBackpropInputV2(np.array([2, 4, 5, 6], np.int32), f, dy, **attrs).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="Conv3DBackpropFilterV2.*out_backprop"):
        raw_ops.Conv3DBackpropFilterV2(x[:1].astype(np.float32), np.array(f.shape, np.int32), dy,
                                       **attrs).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="strides"):
        raw_ops.Conv3DBackpropFilterV2(x.astype(np.float32), np.array(f.shape, np.int32), dy,
                                       strides=[2, 1, 1, 1, 1], padding="SAME").numpy()
