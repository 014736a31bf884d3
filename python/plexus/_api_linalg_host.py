"""Hand-written public functions of tf.linalg whose signatures or results
differ from their ops (see _api.py): svd returns s alone without
compute_uv, eigh and eigvalsh run SelfAdjointEigV2 with and without
eigenvectors, lstsq takes a Python l2_regularizer (the op wants a float64
tensor)."""

from __future__ import annotations

from plexus import _plexus
from plexus._api import _export, _ex, _tensor


@_export("linalg.svd")
def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values (decreasing), and with compute_uv the singular
    vectors, of the matrices in the two innermost dimensions (op Svd):
    s, or (s, u, v) with tensor = u @ diag(s) @ adjoint(v). u is [..., m, p]
    and v [..., n, p] with p = min(m, n), or square with full_matrices."""
    s, u, v = _ex("Svd", [_tensor(tensor)], {"compute_uv": bool(compute_uv),
                                              "full_matrices": bool(full_matrices)})
    return (s, u, v) if compute_uv else s


@_export("linalg.eigh")
def eigh(tensor, name=None):
    """Eigenvalues (increasing) and eigenvectors (columns) of the
    self-adjoint matrices in the two innermost dimensions, reading their
    lower triangles (op SelfAdjointEigV2): (e, v)."""
    e, v = _ex("SelfAdjointEigV2", [_tensor(tensor)], {"compute_v": True})
    return e, v


@_export("linalg.eigvalsh")
def eigvalsh(tensor, name=None):
    """Eigenvalues (increasing) of the self-adjoint matrices in the two
    innermost dimensions (op SelfAdjointEigV2 without eigenvectors)."""
    return _ex("SelfAdjointEigV2", [_tensor(tensor)], {"compute_v": False})[0]


@_export("linalg.lstsq")
def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions X of matrix @ X = rhs, minimizing
    ||matrix @ X - rhs||^2 + l2_regularizer * ||X||^2 (op MatrixSolveLs):
    by Cholesky of the normal equations when fast, else by a complete
    orthogonal decomposition (minimum-norm for rank-deficient matrices)."""
    matrix = _tensor(matrix)
    rhs = _tensor(rhs, matrix.dtype)
    l2 = _tensor(l2_regularizer, _plexus.float64)
    if l2.dtype != _plexus.float64:
        l2 = _ex("Cast", [l2], {"DstT": _plexus.float64})[0]
    return _ex("MatrixSolveLs", [matrix, rhs, l2], {"fast": bool(fast)})[0]
