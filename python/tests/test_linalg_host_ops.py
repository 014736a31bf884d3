"""The linear-algebra host ops (MatrixInverse, MatrixDeterminant,
LogMatrixDeterminant, Cholesky, Qr, Svd, SelfAdjointEigV2,
MatrixTriangularSolve, MatrixSolveLs, Lu) through plexus.raw_ops and the
tf.linalg names, against TensorFlow's tf.raw_ops on the same tf.constant
inputs in the same test, and the gradients of MatrixInverse, the
determinants and Cholesky against tf.GradientTape.

Tolerances, relative to the largest magnitude of TensorFlow's result:
float32 and complex64 1e-4, float64 and complex128 1e-10, half 1e-2 (half
computes in float and rounds). Decompositions whose factors are unique only
up to signs or phases (Qr, Svd, eigenvectors) are compared through
invariants: the reconstruction of the input, orthonormal factors, the
values themselves to the same tolerances, and |R|'s diagonal. Lu's
permutation compares exactly. Errors compare TensorFlow's messages."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops
RNG = np.random.default_rng(11)

REAL = [np.float32, np.float64]
ALL = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dtype):
    return {np.float16: 1e-2, np.float32: 1e-4, np.complex64: 1e-4}.get(dtype, 1e-10)


def close(ours, theirs, dtype, scale=None):
    a = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours)
    b = np.asarray(theirs.numpy() if hasattr(theirs, "numpy") else theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(b.astype(np.complex128))))) if b.size else 1.0
    np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=0, atol=tol(dtype) * scale)


def rand(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(shape, dtype):
    """Random square matrices plus n * I."""
    n = shape[-1]
    return (rand(shape, dtype) + n * np.eye(n)).astype(dtype)


def spd(shape, dtype):
    """Hermitian positive definite matrices."""
    a = rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


# ---- MatrixInverse -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (2, 1, 5, 5)])
@pytest.mark.parametrize("adj", [False, True])
def test_matrix_inverse(shape, dtype, adj):
    a = well_conditioned(shape, dtype)
    close(R.MatrixInverse(input=px.constant(a), adjoint=adj), tf.raw_ops.MatrixInverse(input=tf.constant(a), adjoint=adj),
          dtype)


def test_matrix_inverse_half_and_empty():
    a = well_conditioned((2, 3, 3), np.float16)
    close(R.MatrixInverse(input=px.constant(a)), tf.raw_ops.MatrixInverse(input=tf.constant(a)), np.float16)
    e = np.zeros((2, 0, 0), np.float32)
    assert R.MatrixInverse(input=px.constant(e)).shape == (2, 0, 0)
    np.testing.assert_allclose(px.linalg.inv(a.astype(np.float64)).numpy(), np.linalg.inv(a.astype(np.float64)),
                               rtol=1e-10, atol=1e-12)


def test_matrix_inverse_errors():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible."):
        tf.raw_ops.MatrixInverse(input=tf.constant(singular))
    with pytest.raises(errors.InvalidArgumentError, match=r"MatrixInverse.*Input is not invertible\."):
        R.MatrixInverse(input=px.constant(singular))
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix must be square."):
        R.MatrixInverse(input=px.constant(np.ones((2, 3), np.float32)))
    with pytest.raises(errors.PlexusError, match="rank"):
        R.MatrixInverse(input=px.constant(np.ones(3, np.float32)))


# ---- MatrixDeterminant, LogMatrixDeterminant ---------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 2, 2), (2, 2, 5, 5)])
def test_determinants(shape, dtype):
    a = rand(shape, dtype)
    det = tf.raw_ops.MatrixDeterminant(input=tf.constant(a))
    close(R.MatrixDeterminant(input=px.constant(a)), det, dtype)
    sign, logdet = R.LogMatrixDeterminant(input=px.constant(a))
    tsign, tlogdet = tf.raw_ops.LogMatrixDeterminant(input=tf.constant(a))
    close(sign, tsign, dtype, scale=1.0)
    close(logdet, tlogdet, dtype)
    sign, logdet = px.linalg.slogdet(a)
    close(sign, tsign, dtype, scale=1.0)
    close(px.linalg.det(a), det, dtype)


@pytest.mark.parametrize("dtype", REAL)
def test_determinant_of_singular_and_empty_matrices(dtype):
    # Singular matrices give TensorFlow's signed zeros: the sign is the
    # permutation's (negative when rows were swapped) times 0.
    for m in ([[1, 2], [2, 4]], [[2, 4], [1, 2]], [[0, 0], [0, 0]], [[1, 0], [0, 0]]):
        a = np.array(m, dtype)
        ours = R.MatrixDeterminant(input=px.constant(a)).numpy()
        theirs = tf.raw_ops.MatrixDeterminant(input=tf.constant(a)).numpy()
        assert ours == theirs == 0 and np.signbit(ours) == np.signbit(theirs)
        sign, logdet = R.LogMatrixDeterminant(input=px.constant(a))
        tsign, tlogdet = tf.raw_ops.LogMatrixDeterminant(input=tf.constant(a))
        assert sign.numpy() == tsign.numpy() == 0 and np.signbit(sign.numpy()) == np.signbit(tsign.numpy())
        assert logdet.numpy() == tlogdet.numpy() == -np.inf
    e = np.zeros((3, 0, 0), dtype)
    np.testing.assert_array_equal(R.MatrixDeterminant(input=px.constant(e)).numpy(), [1, 1, 1])
    sign, logdet = R.LogMatrixDeterminant(input=px.constant(e))
    np.testing.assert_array_equal(sign.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(logdet.numpy(), [0, 0, 0])
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix must be square."):
        R.MatrixDeterminant(input=px.constant(np.ones((2, 3), dtype)))


# ---- Cholesky ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 3, 3)])
def test_cholesky(shape, dtype):
    a = spd(shape, dtype)
    ours = R.Cholesky(input=px.constant(a))
    close(ours, tf.raw_ops.Cholesky(input=tf.constant(a)), dtype)
    close(px.linalg.cholesky(a), tf.linalg.cholesky(tf.constant(a)), dtype)


def test_cholesky_reads_the_lower_triangle_and_marks_failures_with_nan():
    a = np.array([[4, 100], [2, 5]], np.float32)
    np.testing.assert_array_equal(R.Cholesky(input=px.constant(a)).numpy(),
                                  tf.raw_ops.Cholesky(input=tf.constant(a)).numpy())
    # One matrix of the batch is not positive definite: its lower triangle is
    # NaN (no error, as TensorFlow), the others are factored. (Above the
    # diagonal of a failed matrix TensorFlow leaves whatever its buffer held;
    # Plexus writes zeros.)
    batch = np.array([np.eye(2) * 4, [[1, 2], [2, 1]], np.eye(2)], np.float64)
    ours = R.Cholesky(input=px.constant(batch)).numpy()
    theirs = tf.raw_ops.Cholesky(input=tf.constant(batch)).numpy()
    np.testing.assert_array_equal(np.tril(ours), np.tril(theirs))
    assert np.isnan(ours[1][np.tril_indices(2)]).all() and ours[1][0, 1] == 0
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix must be square."):
        R.Cholesky(input=px.constant(np.ones((2, 3), np.float32)))


# ---- Qr ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 6, 2), (2, 1, 2, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_qr(shape, dtype, full):
    a = rand(shape, dtype)
    q, r = R.Qr(input=px.constant(a), full_matrices=full)
    tq, tr = tf.raw_ops.Qr(input=tf.constant(a), full_matrices=full)
    assert q.shape == tuple(tq.shape) and r.shape == tuple(tr.shape)
    q, r = q.numpy(), r.numpy()
    close(q @ r, a, dtype)
    k = q.shape[-1]
    close(adjoint(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)).astype(dtype), dtype)
    np.testing.assert_array_equal(r, np.triu(r))
    close(np.abs(np.diagonal(r, axis1=-2, axis2=-1)), np.abs(np.diagonal(tr.numpy(), axis1=-2, axis2=-1)), dtype)
    q2, r2 = px.linalg.qr(a, full_matrices=full)
    close(q2, q, dtype)


def test_qr_empty():
    q, r = R.Qr(input=px.constant(np.zeros((3, 0, 4), np.float32)), full_matrices=True)
    assert q.shape == (3, 0, 0) and r.shape == (3, 0, 4)
    q, r = R.Qr(input=px.constant(np.zeros((2, 3, 0), np.float32)), full_matrices=True)
    tq, _ = tf.raw_ops.Qr(input=tf.constant(np.zeros((2, 3, 0), np.float32)), full_matrices=True)
    np.testing.assert_array_equal(q.numpy(), tq.numpy())


# ---- Svd ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 6, 2), (2, 1, 3, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, dtype, full):
    a = rand(shape, dtype)
    s, u, v = R.Svd(input=px.constant(a), full_matrices=full)
    ts, tu, tv = tf.raw_ops.Svd(input=tf.constant(a), full_matrices=full)
    close(s, ts, dtype)
    assert u.shape == tuple(tu.shape) and v.shape == tuple(tv.shape)
    s, u, v = s.numpy(), u.numpy(), v.numpy()
    p = s.shape[-1]
    # A = U[..., :p] diag(s) V[..., :p]^H, and U, V orthonormal.
    recon = (u[..., :p] * s[..., None, :]) @ adjoint(v[..., :p])
    close(recon, a, dtype)
    for m in (u, v):
        k = m.shape[-1]
        close(adjoint(m) @ m, np.broadcast_to(np.eye(k), m.shape[:-2] + (k, k)).astype(dtype), dtype)
    # Without vectors: the values only, and empty vector outputs.
    s2, u2, v2 = R.Svd(input=px.constant(a), compute_uv=False)
    close(s2, ts, dtype)
    assert u2.shape == (0,) and v2.shape == (0,)
    close(px.linalg.svd(a, compute_uv=False), ts, dtype)
    s3, u3, v3 = px.linalg.svd(a, full_matrices=full)
    close(s3, ts, dtype)


def test_svd_empty_and_half():
    s, u, v = R.Svd(input=px.constant(np.zeros((3, 0, 2), np.float32)), full_matrices=True)
    ts, tu, tv = tf.raw_ops.Svd(input=tf.constant(np.zeros((3, 0, 2), np.float32)), full_matrices=True)
    for o, t in ((s, ts), (u, tu), (v, tv)):
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    a = rand((3, 3), np.float16)
    s, _, _ = R.Svd(input=px.constant(a))
    close(s, tf.raw_ops.Svd(input=tf.constant(a.astype(np.float32)))[0].numpy().astype(np.float16), np.float16)


# ---- SelfAdjointEigV2 --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 3, 3)])
def test_self_adjoint_eig(shape, dtype):
    a = rand(shape, dtype)
    a = (a + adjoint(a)) / 2
    e, v = R.SelfAdjointEigV2(input=px.constant(a))
    te, _ = tf.raw_ops.SelfAdjointEigV2(input=tf.constant(a))
    close(e, te, dtype)
    e, v = e.numpy(), v.numpy()
    close(a @ v, v * e[..., None, :], dtype)
    n = shape[-1]
    close(adjoint(v) @ v, np.broadcast_to(np.eye(n), v.shape).astype(dtype), dtype)
    e2, v2 = R.SelfAdjointEigV2(input=px.constant(a), compute_v=False)
    close(e2, te, dtype)
    assert v2.shape == (0,)
    close(px.linalg.eigvalsh(a), te, dtype)
    e3, v3 = px.linalg.eigh(a)
    close(e3, te, dtype)
    assert v3.shape == shape


def test_self_adjoint_eig_errors_and_empty():
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix must be square."):
        R.SelfAdjointEigV2(input=px.constant(np.ones((3, 4, 3), np.float32)))
    e, v = R.SelfAdjointEigV2(input=px.constant(np.zeros((3, 0, 0), np.float32)))
    assert e.shape == (3, 0) and v.shape == (3, 0, 0)


# ---- MatrixTriangularSolve ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adj", [False, True])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((2, 1, 3, 3), (4, 3, 2)),
                                    ((3, 3), (5, 3, 2)), ((1, 2, 2), (3, 2, 0))])
def test_matrix_triangular_solve(shapes, dtype, lower, adj):
    a = well_conditioned(shapes[0], dtype)
    b = rand(shapes[1], dtype)
    ours = R.MatrixTriangularSolve(matrix=px.constant(a), rhs=px.constant(b), lower=lower, adjoint=adj)
    theirs = tf.raw_ops.MatrixTriangularSolve(matrix=tf.constant(a), rhs=tf.constant(b), lower=lower, adjoint=adj)
    close(ours, theirs, dtype)
    close(px.linalg.triangular_solve(a, b, lower=lower, adjoint=adj), theirs, dtype)


def test_matrix_triangular_solve_errors():
    f = lambda *s: px.constant(np.ones(s, np.float32))  # noqa: E731
    with pytest.raises(errors.InvalidArgumentError, match=r"In\[0\] and In\[1\] must have compatible batch "
                                                          r"dimensions: \[2,3,3\] vs. \[4,3,2\]"):
        R.MatrixTriangularSolve(matrix=f(2, 3, 3), rhs=f(4, 3, 2))
    with pytest.raises(errors.PlexusError, match=r"3|mismatch"):
        R.MatrixTriangularSolve(matrix=f(2, 2), rhs=f(3, 1))
    with pytest.raises(errors.PlexusError, match="square|Dimensions must be equal"):
        R.MatrixTriangularSolve(matrix=f(3, 4), rhs=f(3, 2))
    # A zero on the diagonal gives infinities, as TensorFlow's.
    a = np.array([[0.0, 0], [1, 1]], np.float32)
    b = np.array([[1.0], [2]], np.float32)
    np.testing.assert_array_equal(R.MatrixTriangularSolve(matrix=px.constant(a), rhs=px.constant(b)).numpy(),
                                  tf.raw_ops.MatrixTriangularSolve(matrix=tf.constant(a), rhs=tf.constant(b)).numpy())


# ---- MatrixSolveLs -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 3), (3, 1)), ((2, 6, 4), (2, 6, 3)), ((2, 3, 5), (2, 3, 2))])
@pytest.mark.parametrize("fast,l2", [(True, 0.0), (True, 0.5), (False, 0.0)])
def test_matrix_solve_ls(shapes, dtype, fast, l2):
    a = rand(shapes[0], dtype)
    b = rand(shapes[1], dtype)
    ours = R.MatrixSolveLs(matrix=px.constant(a), rhs=px.constant(b), l2_regularizer=np.float64(l2), fast=fast)
    theirs = tf.raw_ops.MatrixSolveLs(matrix=tf.constant(a), rhs=tf.constant(b),
                                      l2_regularizer=tf.constant(l2, tf.float64), fast=fast)
    # The normal equations square the condition number.
    close(ours, theirs, dtype, scale=100.0 if dtype in (np.float32, np.complex64) else None)
    close(px.linalg.lstsq(a, b, l2_regularizer=l2, fast=fast), theirs, dtype,
          scale=100.0 if dtype in (np.float32, np.complex64) else None)


def test_matrix_solve_ls_rank_deficient_and_errors():
    a = np.array([[1.0, 2], [2, 4], [3, 6]], np.float64)
    b = np.array([[1.0], [2], [3]], np.float64)
    # Minimum-norm solution of the complete orthogonal decomposition.
    ours = R.MatrixSolveLs(matrix=px.constant(a), rhs=px.constant(b), l2_regularizer=np.float64(0), fast=False)
    theirs = tf.raw_ops.MatrixSolveLs(matrix=tf.constant(a), rhs=tf.constant(b),
                                      l2_regularizer=tf.constant(0.0, tf.float64), fast=False)
    close(ours, theirs, np.float64)
    f = lambda *s: px.constant(np.ones(s, np.float32))  # noqa: E731
    l2 = np.float64(0.1)
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix and rhs are incompatible."):
        R.MatrixSolveLs(matrix=f(2, 4, 3), rhs=f(2, 3, 2), l2_regularizer=l2)
    with pytest.raises(errors.PlexusError, match="same outer dimensions|Dimensions must be equal"):
        R.MatrixSolveLs(matrix=f(2, 4, 3), rhs=f(3, 4, 2), l2_regularizer=l2)
    with pytest.raises(errors.InvalidArgumentError, match=r"l2_regularizer must be >= 0\."):
        R.MatrixSolveLs(matrix=f(4, 3), rhs=f(4, 2), l2_regularizer=np.float64(-0.1))
    assert R.MatrixSolveLs(matrix=f(0, 3), rhs=f(0, 2), l2_regularizer=l2).numpy().tolist() == [[0, 0]] * 3


# ---- Lu ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5)])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_lu(shape, dtype, idx):
    a = rand(shape, dtype)
    lu, p = R.Lu(input=px.constant(a), output_idx_type=px.as_dtype(idx))
    tlu, tp = tf.raw_ops.Lu(input=tf.constant(a), output_idx_type=tf.as_dtype(idx))
    np.testing.assert_array_equal(p.numpy(), tp.numpy())
    assert p.numpy().dtype == idx
    close(lu, tlu, dtype)
    # P A = L U with p naming the rows of A.
    lu = lu.numpy()
    n = shape[-1]
    lower = np.tril(lu, -1) + np.eye(n, dtype=dtype)
    upper = np.triu(lu)
    close(lower @ upper, np.take_along_axis(a, p.numpy()[..., None].astype(np.int64), axis=-2), dtype)


def test_lu_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Input is not invertible."):
        R.Lu(input=px.constant(np.array([[1.0, 2], [2, 4]], np.float32)))
    with pytest.raises(errors.InvalidArgumentError, match="Input matrix must be square."):
        R.Lu(input=px.constant(np.ones((2, 3), np.float32)))
    lu, p = R.Lu(input=px.constant(np.zeros((2, 0, 0), np.float32)))
    assert lu.shape == (2, 0, 0) and p.shape == (2, 0)


# ---- gradients ---------------------------------------------------------------------------


def _grad_pair(px_fn, tf_fn, a, w):
    x = px.constant(a)
    with px.GradientTape() as tape:
        tape.watch(x)
        loss = px.reduce_sum(px_fn(x) * px.constant(w))
    ours = tape.gradient(loss, x).numpy()
    tx = tf.constant(a)
    with tf.GradientTape() as ttape:
        ttape.watch(tx)
        tloss = tf.reduce_sum(tf_fn(tx) * tf.constant(w))
    return ours, ttape.gradient(tloss, tx).numpy()


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("adj", [False, True])
def test_matrix_inverse_gradient(shape, adj):
    a = well_conditioned(shape, np.float64)
    w = rand(shape, np.float64)
    ours, theirs = _grad_pair(lambda x: R.MatrixInverse(input=x, adjoint=adj),
                              lambda x: tf.linalg.inv(x, adjoint=adj), a, w)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_determinant_gradients(shape):
    a = well_conditioned(shape, np.float64)
    w = rand(shape[:-2], np.float64)
    ours, theirs = _grad_pair(lambda x: R.MatrixDeterminant(input=x), tf.linalg.det, a, w)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    ours, theirs = _grad_pair(lambda x: R.LogMatrixDeterminant(input=x)[1], lambda x: tf.linalg.slogdet(x)[1], a, w)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_cholesky_gradient(shape):
    a = spd(shape, np.float64)
    w = np.tril(rand(shape, np.float64))
    ours, theirs = _grad_pair(lambda x: R.Cholesky(input=x), tf.linalg.cholesky, a, w)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)
