"""Hand-written public functions of the matrix-diagonal ops (see _api.py):
linalg.diag, linalg.diag_part and linalg.set_diag with TensorFlow's
signatures and defaults (k=0, num_rows=num_cols=-1, padding_value=0,
align="RIGHT_LEFT"), over ops MatrixDiagV3, MatrixDiagPartV3 and
MatrixSetDiagV3."""

from __future__ import annotations

from plexus._api import _ex, _export, _ints, _tensor


def _k(k):
    """k (an int, or [lower, upper]) as an int32 tensor."""
    return _ints(list(k) if isinstance(k, tuple) else k)


@_export("linalg.diag")
def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Matrices with `diagonal` on diagonal k (or the band k = [lower, upper]),
    padding_value elsewhere (op MatrixDiagV3); num_rows and num_cols of -1
    are derived from the diagonal's length."""
    d = _tensor(diagonal)
    return _ex("MatrixDiagV3", [d, _k(k), _ints(num_rows), _ints(num_cols),
                                _tensor(padding_value, d.dtype)], {"align": align})[0]


@_export("linalg.diag_part")
def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):
    """Diagonal k (or the band k = [lower, upper]) of the innermost matrices,
    short diagonals padded with padding_value (op MatrixDiagPartV3)."""
    x = _tensor(input)
    return _ex("MatrixDiagPartV3", [x, _k(k), _tensor(padding_value, x.dtype)],
               {"align": align})[0]


@_export("linalg.set_diag")
def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):
    """The innermost matrices of `input` with diagonal k (or the band k =
    [lower, upper]) replaced by `diagonal` (op MatrixSetDiagV3)."""
    x = _tensor(input)
    return _ex("MatrixSetDiagV3", [x, _tensor(diagonal, x.dtype), _k(k)], {"align": align})[0]
