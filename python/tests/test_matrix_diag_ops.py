"""The matrix-diagonal ops (MatrixDiag, MatrixDiagPart, MatrixSetDiag and
their V2 and V3) against TensorFlow run here (tf.raw_ops.*, tf.linalg.diag,
diag_part, set_diag), and their gradients against tf.GradientTape.

Covered: one diagonal and bands k = [lower, upper] above, below and across
the main diagonal; wide, tall and batched matrices; the four alignments of
V3 (V2 aligns left); num_rows and num_cols given, derived or one of each;
padding values; float, integer and bool dtypes; zero-size matrices. The ops
move elements, so every comparison is exact, gradients included (float64).
Bad arguments fail with InvalidArgumentError naming the op, where
TensorFlow fails too.
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

from tf_compare import assert_same, gradients

tf = pytest.importorskip("tensorflow")

ALIGNS = ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]
DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "int8", "uint16", "bool"]
BANDS = [0, 2, -1, (-1, 1), (1, 3), (-3, -1), (0, 2), (-2, 0)]


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.uniform(size=shape) < 0.5
    return rng.integers(0 if dtype[0] == "u" else -50, 50, size=shape).astype(dtype)


def pad_value(dtype):
    return np.array(True if dtype == "bool" else 7, dtype=dtype)


def k32(k):
    return np.array(k, np.int32)


def part_shape(shape, k):
    lo, hi = (k, k) if np.ndim(k) == 0 else k
    rows, cols = shape[-2:]
    n = min(rows + min(hi, 0), cols - max(lo, 0))
    return tuple(shape[:-2]) + ((hi - lo + 1,) if hi > lo else ()) + (n,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", BANDS, ids=str)
def test_diag_part_v2_v3(dtype, k):
    for shape in [(4, 5), (2, 5, 4), (3, 6, 6)]:
        x = data(shape, dtype, 1)
        for align in ALIGNS:
            want = tf.raw_ops.MatrixDiagPartV3(input=x, k=k32(k), padding_value=pad_value(dtype),
                                               align=align)
            assert_same(raw_ops.MatrixDiagPartV3(x, k32(k), pad_value(dtype), align=align), want)
        want = tf.raw_ops.MatrixDiagPartV2(input=x, k=k32(k), padding_value=pad_value(dtype))
        assert_same(raw_ops.MatrixDiagPartV2(x, k32(k), pad_value(dtype)), want)
    x = data((3, 4, 5), dtype)
    assert_same(px.linalg.diag_part(x, k=k, padding_value=pad_value(dtype)),
                tf.linalg.diag_part(x, k=k, padding_value=pad_value(dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", BANDS, ids=str)
def test_set_diag_v2_v3(dtype, k):
    for shape in [(4, 5), (2, 5, 4)]:
        x = data(shape, dtype, 2)
        d = data(part_shape(shape, k), dtype, 3)
        for align in ALIGNS:
            want = tf.raw_ops.MatrixSetDiagV3(input=x, diagonal=d, k=k32(k), align=align)
            assert_same(raw_ops.MatrixSetDiagV3(x, d, k32(k), align=align), want)
        assert_same(raw_ops.MatrixSetDiagV2(x, d, k32(k)),
                    tf.raw_ops.MatrixSetDiagV2(input=x, diagonal=d, k=k32(k)))
        assert_same(px.linalg.set_diag(x, d, k=k), tf.linalg.set_diag(x, d, k=k))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", BANDS, ids=str)
@pytest.mark.parametrize("size", ["derived", "rows", "cols"])
def test_diag_v2_v3(dtype, k, size):
    lo, hi = (k, k) if np.ndim(k) == 0 else k
    length = 3
    d = data((2,) + ((hi - lo + 1,) if hi > lo else ()) + (length,), dtype, 4)
    min_rows, min_cols = length - min(hi, 0), length + max(lo, 0)
    rows, cols = {"derived": (-1, -1), "rows": (min_rows + 2, -1), "cols": (-1, min_cols + 1)}[size]
    for align in ALIGNS:
        want = tf.raw_ops.MatrixDiagV3(diagonal=d, k=k32(k), num_rows=rows, num_cols=cols,
                                       padding_value=pad_value(dtype), align=align)
        got = raw_ops.MatrixDiagV3(d, k32(k), np.int32(rows), np.int32(cols), pad_value(dtype),
                                   align=align)
        assert_same(got, want)
    want = tf.raw_ops.MatrixDiagV2(diagonal=d, k=k32(k), num_rows=rows, num_cols=cols,
                                   padding_value=pad_value(dtype))
    assert_same(raw_ops.MatrixDiagV2(d, k32(k), np.int32(rows), np.int32(cols), pad_value(dtype)),
                want)
    assert_same(px.linalg.diag(d, k=k, num_rows=rows, num_cols=cols, padding_value=pad_value(dtype)),
                tf.linalg.diag(d, k=k, num_rows=rows, num_cols=cols, padding_value=pad_value(dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_v1_ops(dtype):
    for shape in [(4, 4), (2, 3, 5), (2, 5, 3), (0, 2, 2), (3, 0)]:
        x = data(shape, dtype, 5)
        assert_same(raw_ops.MatrixDiagPart(x), tf.raw_ops.MatrixDiagPart(input=x))
        d = data(tuple(shape[:-2]) + (min(shape[-2:]),), dtype, 6)
        assert_same(raw_ops.MatrixSetDiag(x, d), tf.raw_ops.MatrixSetDiag(input=x, diagonal=d))
        assert_same(raw_ops.MatrixDiag(d), tf.raw_ops.MatrixDiag(diagonal=d))


def test_zero_size_and_empty_diagonals():
    cases = [((2, 0, 3), (0, 1)), ((0, 3), 1), ((3, 0), 0)]
    for shape, k in cases:
        x = np.zeros(shape, np.float32)
        assert_same(px.linalg.diag_part(x, k=k), tf.linalg.diag_part(x, k=k))
    d = np.zeros((2, 0), np.float32)  # empty diagonals: padding-filled 2x2 matrices
    assert_same(px.linalg.diag(d, k=2, padding_value=1.0), tf.linalg.diag(d, k=2, padding_value=1.0))
    assert_same(px.linalg.diag(np.zeros((0,), np.float32)), tf.linalg.diag(np.zeros((0,), np.float32)))


def test_in_a_traced_function():
    @px.function
    def f(x):
        band = px.linalg.diag_part(x, k=(-1, 1), align="LEFT_RIGHT")
        return px.linalg.set_diag(x, band * 2.0, k=(-1, 1), align="LEFT_RIGHT"), px.linalg.diag(band)

    x = data((2, 4, 4), "float32")
    band = tf.linalg.diag_part(x, k=(-1, 1), align="LEFT_RIGHT")
    a, b = f(x)
    assert_same(a, tf.linalg.set_diag(x, band * 2.0, k=(-1, 1), align="LEFT_RIGHT"))
    assert tuple(b.shape) == (2, 3, 4, 4)
    assert_same(b, tf.linalg.diag(band))


# ---------------------------------------------------------------------------
# Gradients (TensorFlow's array_grad.py; exact in float64)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, (-1, 1), (-2, 0)], ids=str)
@pytest.mark.parametrize("align", ["RIGHT_LEFT", "LEFT_RIGHT"])
def test_gradients_v3(k, align):
    x = data((2, 4, 5), "float64", 7)
    part = tf.linalg.diag_part(x, k=k, align=align).numpy()
    dy = data(part.shape, "float64", 8)
    got, want = gradients(tf, lambda t: px.linalg.diag_part(t, k=k, align=align),
                          lambda t: tf.linalg.diag_part(t, k=k, align=align), [x], dy)
    np.testing.assert_array_equal(got[0], want[0])

    dset = data(part.shape, "float64", 9)
    dy = data(x.shape, "float64", 10)
    got, want = gradients(tf, lambda t, d: px.linalg.set_diag(t, d, k=k, align=align),
                          lambda t, d: tf.linalg.set_diag(t, d, k=k, align=align), [x, dset], dy)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)

    square = tf.linalg.diag(part, k=k, align=align).numpy()
    dy = data(square.shape, "float64", 11)
    got, want = gradients(tf, lambda d: px.linalg.diag(d, k=k, align=align),
                          lambda d: tf.linalg.diag(d, k=k, align=align), [part], dy)
    np.testing.assert_array_equal(got[0], want[0])


def test_gradients_v1():
    x = data((2, 3, 4), "float64", 12)
    d = data((2, 3), "float64", 13)
    got, want = gradients(tf, raw_ops.MatrixDiagPart, lambda t: tf.raw_ops.MatrixDiagPart(input=t),
                          [x], data((2, 3), "float64", 14))
    np.testing.assert_array_equal(got[0], want[0])
    got, want = gradients(tf, raw_ops.MatrixSetDiag,
                          lambda t, s: tf.raw_ops.MatrixSetDiag(input=t, diagonal=s), [x, d],
                          data((2, 3, 4), "float64", 15))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    got, want = gradients(tf, raw_ops.MatrixDiag, lambda s: tf.raw_ops.MatrixDiag(diagonal=s), [d],
                          data((2, 3, 3), "float64", 16))
    np.testing.assert_array_equal(got[0], want[0])


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

BAD = [
    ("MatrixDiagPartV3", "out of bound", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((3, 4), np.float32), k=k32(4), padding_value=np.float32(0))),
    ("MatrixDiagPartV3", "out of bound", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((3, 4), np.float32), k=k32([-3, 0]), padding_value=np.float32(0))),
    ("MatrixDiagPartV3", "lower_diag_index must not be larger", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((3, 4), np.float32), k=k32([1, 0]), padding_value=np.float32(0))),
    ("MatrixDiagPartV3", "one or two elements", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((3, 4), np.float32), k=k32([0, 1, 2]), padding_value=np.float32(0))),
    ("MatrixDiagPartV3", "at least 2-dim", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((4,), np.float32), k=k32(0), padding_value=np.float32(0))),
    ("MatrixDiagPartV3", "[Pp]adding", lambda m: m.raw_ops.MatrixDiagPartV3(
        input=np.ones((3, 4), np.float32), k=k32(0), padding_value=np.zeros(2, np.float32))),
    ("MatrixDiagV3", "rows is too small", lambda m: m.raw_ops.MatrixDiagV3(
        diagonal=np.ones((3,), np.float32), k=k32(0), num_rows=np.int32(2), num_cols=np.int32(-1),
        padding_value=np.float32(0))),
    ("MatrixDiagV3", "not consistent", lambda m: m.raw_ops.MatrixDiagV3(
        diagonal=np.ones((3,), np.float32), k=k32(0), num_rows=np.int32(4), num_cols=np.int32(4),
        padding_value=np.float32(0))),
    ("MatrixDiagV3", "number of diagonals", lambda m: m.raw_ops.MatrixDiagV3(
        diagonal=np.ones((2, 3), np.float32), k=k32([-1, 1]), num_rows=np.int32(-1),
        num_cols=np.int32(-1), padding_value=np.float32(0))),
    ("MatrixDiagV3", "at least 1-dim", lambda m: m.raw_ops.MatrixDiagV3(
        diagonal=np.float32(1), k=k32(0), num_rows=np.int32(-1), num_cols=np.int32(-1),
        padding_value=np.float32(0))),
    ("MatrixSetDiagV3", "diagonal", lambda m: m.raw_ops.MatrixSetDiagV3(
        input=np.ones((3, 4), np.float32), diagonal=np.ones((2,), np.float32), k=k32(1))),
    ("MatrixSetDiag", "diagonal", lambda m: m.raw_ops.MatrixSetDiag(
        input=np.ones((3, 4), np.float32), diagonal=np.ones((4,), np.float32))),
]


@pytest.mark.parametrize("op,message,call", BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD])
def test_bad_arguments(op, message, call):
    with pytest.raises(tf.errors.InvalidArgumentError):
        call(tf)
    with pytest.raises(errors.InvalidArgumentError, match=f"(?s){op}.*{message}"):
        np.asarray(call(px))


def test_band_with_a_vector_of_diagonals_is_refused():
    # TensorFlow 2.21 aborts the process here; Plexus refuses it.
    with pytest.raises(errors.InvalidArgumentError, match="MatrixDiagV3.*2-dim"):
        px.linalg.diag(np.ones((3,), np.float32), k=(-1, 1)).numpy()


def test_bad_align():
    with pytest.raises(errors.InvalidArgumentError, match="align"):
        px.linalg.diag_part(np.ones((3, 3), np.float32), align="UP_DOWN").numpy()
