"""The small host ops (Roll, LinSpace, InTopK/InTopKV2, LowerBound,
UpperBound, CheckNumerics/V2, UniqueV2, UniqueWithCountsV2,
DynamicPartition, DynamicStitch, ParallelDynamicStitch, Diag, DiagPart,
Cross, EuclideanNorm, CumulativeLogsumexp, ApproximateEqual, Xlogy, Xdivy,
Xlog1py, Erfinv, Ndtri, and the host fallbacks AddN, AccumulateNV2 and
ClipByValue) through plexus.raw_ops and their public names, against
TensorFlow's tf.raw_ops (or tf.*) on the same tf.constant inputs in the same
test. Integers, booleans, strings and index outputs compare exactly; floats
to 1e-6 relative (float32) or 1e-12 (float64) unless a test says otherwise;
errors compare TensorFlow's messages. The string ops (StringStrip,
RegexFullMatch, UnsortedSegmentJoin, StringFormat) are in
test_string_host_ops.py."""

import re

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops
RNG = np.random.default_rng(5)


def same(ours, theirs):
    a = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours)
    b = np.asarray(theirs.numpy() if hasattr(theirs, "numpy") else theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype or (a.dtype.kind in "SOU" and b.dtype.kind in "SOU"), (a.dtype, b.dtype)
    if a.dtype.kind in "SOU":
        assert a.tolist() == b.tolist()
    else:
        np.testing.assert_array_equal(a, b)


def close(ours, theirs, rtol=None):
    a = np.asarray(ours.numpy())
    b = np.asarray(theirs.numpy())
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if rtol is None:
        rtol = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6, np.dtype(np.complex64): 1e-6}.get(a.dtype, 1e-12)
    np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=rtol, atol=rtol)


def both(values, dtype=None):
    """The same values as a Plexus and a TensorFlow constant."""
    v = np.asarray(values, dtype)
    return px.constant(v), tf.constant(v)


# ---- Roll --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.bool_, np.int8, np.complex64])
@pytest.mark.parametrize("shift,axis", [(1, 0), (-2, 1), ([1, -1, 2], [0, 1, 1]), ([3, 5], [-1, 0]), (0, 2)])
def test_roll(dtype, shift, axis):
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    for idx in (np.int32, np.int64):
        ours = R.Roll(input=px.constant(x), shift=px.constant(np.array(shift, idx)), axis=px.constant(np.array(axis, idx)))
        theirs = tf.raw_ops.Roll(input=tf.constant(x), shift=tf.constant(np.array(shift, idx)),
                                 axis=tf.constant(np.array(axis, idx)))
        same(ours, theirs)
    same(px.roll(x, shift, axis), tf.roll(x, shift, axis))


def test_roll_strings_and_errors():
    words = np.array([[b"a", b"b", b"c"], [b"d", b"e", b"f"]])
    same(px.roll(px.constant(words), [1, 2], [0, 1]), tf.roll(tf.constant(words), [1, 2], [0, 1]))
    x = px.constant([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(errors.InvalidArgumentError, match="axis 2 is out of range"):
        R.Roll(input=x, shift=np.int32(1), axis=np.int32(2))
    with pytest.raises(errors.PlexusError, match="shift and axis must have the same size"):
        R.Roll(input=x, shift=np.array([1, 2], np.int32), axis=np.int32(1))
    with pytest.raises(errors.PlexusError, match="input must be 1-D or higher|rank at least 1"):
        R.Roll(input=px.constant(5), shift=np.int32(1), axis=np.int32(0))


# ---- LinSpace ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("start,stop,num", [(0.0, 1.0, 7), (3.0, -1.5, 5), (0.1, 0.7, 13), (2.0, 5.0, 1),
                                            (-1e3, 1e3, 100)])
def test_linspace(dtype, start, stop, num):
    ours = R.LinSpace(start=px.constant(dtype(start)), stop=px.constant(dtype(stop)), num=np.int32(num))
    theirs = tf.raw_ops.LinSpace(start=tf.constant(dtype(start)), stop=tf.constant(dtype(stop)),
                                 num=tf.constant(num))
    same(ours, theirs)
    same(R.LinSpace(start=px.constant(dtype(start)), stop=px.constant(dtype(stop)), num=np.int64(num)), theirs)
    close(px.linspace(dtype(start), dtype(stop), num), tf.linspace(dtype(start), dtype(stop), num))


def test_linspace_errors():
    with pytest.raises(errors.PlexusError, match=r"Requires num > 0: 0"):
        R.LinSpace(start=px.constant(3.0), stop=px.constant(1.0), num=np.int32(0))
    with pytest.raises(errors.PlexusError, match=r"start must be a scalar"):
        R.LinSpace(start=px.constant([3.0]), stop=px.constant(1.0), num=np.int32(3))


# ---- InTopK, InTopKV2 --------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_in_top_k(k, idx):
    pred = RNG.integers(0, 4, (6, 5)).astype(np.float32)  # ties
    pred[1, 2] = np.nan
    pred[2, 0] = np.inf
    pred[3, 1] = -np.inf
    targets = np.array([0, 2, 0, 4, 5, -1], idx)  # 5 and -1 are out of range
    ours = R.InTopKV2(predictions=px.constant(pred), targets=px.constant(targets), k=px.constant(idx(k)))
    theirs = tf.raw_ops.InTopKV2(predictions=tf.constant(pred), targets=tf.constant(targets), k=tf.constant(idx(k)))
    same(ours, theirs)
    same(R.InTopK(predictions=px.constant(pred), targets=px.constant(targets), k=k),
         tf.raw_ops.InTopK(predictions=tf.constant(pred), targets=tf.constant(targets), k=k))
    same(px.math.in_top_k(targets, pred, k), tf.math.in_top_k(targets, pred, k))


def test_in_top_k_errors():
    p = px.constant([[0.1, 0.5, 0.5]])
    with pytest.raises(errors.PlexusError, match="First dimension of predictions 1 must match length of targets 2"):
        R.InTopKV2(predictions=p, targets=px.constant([1, 2]), k=px.constant(1))
    with pytest.raises(errors.PlexusError, match="predictions must be 2-dimensional"):
        R.InTopKV2(predictions=px.constant([0.1, 0.5]), targets=px.constant([1, 2]), k=px.constant(1))
    with pytest.raises(errors.PlexusError, match=r"k must be 0-D, got shape \[1\]"):
        R.InTopKV2(predictions=p, targets=px.constant([1]), k=px.constant([1]))


# ---- LowerBound, UpperBound (tf.searchsorted) --------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16])
@pytest.mark.parametrize("op", ["LowerBound", "UpperBound"])
def test_bounds(dtype, op):
    s = np.sort(RNG.integers(0, 10, (3, 8)), axis=1).astype(dtype)
    v = RNG.integers(-1, 12, (3, 5)).astype(dtype)
    for out in (np.int32, np.int64):
        ours = getattr(R, op)(sorted_inputs=px.constant(s), values=px.constant(v), out_type=px.as_dtype(out))
        theirs = getattr(tf.raw_ops, op)(sorted_inputs=tf.constant(s), values=tf.constant(v),
                                         out_type=tf.as_dtype(out)) if dtype != np.float16 else None
        if theirs is None:  # TensorFlow has no half kernel: compare with float32's
            theirs = getattr(tf.raw_ops, op)(sorted_inputs=tf.constant(s.astype(np.float32)),
                                             values=tf.constant(v.astype(np.float32)), out_type=tf.as_dtype(out))
        same(ours, theirs)


def test_bounds_nan_and_searchsorted():
    s, ts = both([[1.0, 2.0, np.nan]], np.float32)
    v, tv = both([[np.nan, 3.0, 1.0]], np.float32)
    same(R.LowerBound(sorted_inputs=s, values=v), tf.raw_ops.LowerBound(sorted_inputs=ts, values=tv))
    same(R.UpperBound(sorted_inputs=s, values=v), tf.raw_ops.UpperBound(sorted_inputs=ts, values=tv))
    seq = np.sort(RNG.standard_normal((2, 3, 6)), axis=-1).astype(np.float32)
    vals = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for side in ("left", "right"):
        same(px.searchsorted(seq, vals, side=side), tf.searchsorted(seq, vals, side=side))
        same(px.searchsorted(seq, vals, side=side, out_type=px.int64),
             tf.searchsorted(seq, vals, side=side, out_type=tf.int64))
    same(px.searchsorted([1, 3, 5], [0, 3, 6]), tf.searchsorted([1, 3, 5], [0, 3, 6]))
    with pytest.raises(errors.PlexusError, match="Leading dim_size of both tensors must match."):
        R.LowerBound(sorted_inputs=px.constant([[1, 2]]), values=px.constant([[1], [2]]))
    with pytest.raises(errors.PlexusError, match=r"Shape must be rank 2 but is rank 1 for `sorted_inputs`"):
        R.LowerBound(sorted_inputs=px.constant([1, 2]), values=px.constant([[1]]))
    with pytest.raises(ValueError, match="side"):
        px.searchsorted([1, 2], [1], side="middle")


# ---- CheckNumerics, CheckNumericsV2 ------------------------------------------------------


@pytest.mark.parametrize("values,v1,v2", [
    ([1.0, np.nan, np.inf], "Inf and NaN", "+Inf and NaN"),
    ([1.0, -np.inf], "Inf", "-Inf"),
    ([np.inf, 2.0], "Inf", "+Inf"),
    ([1.0, np.nan], "NaN", "NaN"),
    ([-np.inf, np.inf], "Inf", "-Inf and +Inf"),
    ([-np.inf, np.nan], "Inf and NaN", "-Inf and NaN"),
    ([-np.inf, np.inf, np.nan], "Inf and NaN", "-Inf, +Inf, and NaN"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_check_numerics_messages(values, v1, v2, dtype):
    x, tx = both(values, dtype)
    for op, what in (("CheckNumerics", v1), ("CheckNumericsV2", v2)):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            getattr(tf.raw_ops, op)(tensor=tx, message="hello")
        assert f"hello : Tensor had {what} values" in str(e.value)
        message = re.escape(op) + ".*" + re.escape(f"hello : Tensor had {what} values")
        with pytest.raises(errors.InvalidArgumentError, match=message):
            getattr(R, op)(tensor=x, message="hello")


def test_check_numerics_passes_finite_tensors_through():
    x = px.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    same(R.CheckNumerics(tensor=x, message="m"), x)
    same(R.CheckNumericsV2(tensor=x, message="m"), x)


# ---- UniqueV2, UniqueWithCountsV2 --------------------------------------------------------


@pytest.mark.parametrize("x", [
    [[1, 2, 1], [3, 4, 3], [1, 2, 1]],
    [[[1, 2], [1, 2]], [[1, 2], [1, 2]], [[0, 0], [1, 2]]],
    [[0.0, 1.0], [-0.0, 1.0], [np.nan, 1.0], [np.nan, 1.0]],
    [[b"a", b"b"], [b"a", b"b"], [b"a", b"c"]],
])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_v2(x, axis):
    x = np.array(x)
    if axis >= x.ndim:
        return
    for idx in (np.int32, np.int64):
        axis_t = np.array([axis], idx)
        for op in ("UniqueV2", "UniqueWithCountsV2"):
            for out_idx in (px.int32, px.int64):
                ours = getattr(R, op)(x=px.constant(x), axis=px.constant(axis_t), out_idx=out_idx)
                theirs = getattr(tf.raw_ops, op)(x=tf.constant(x), axis=tf.constant(axis_t),
                                                 out_idx=tf.as_dtype(out_idx.name))
                for o, t in zip(ours, theirs):
                    if x.dtype.kind == "f":  # NaNs compare as equal here: the same slots are NaN
                        np.testing.assert_array_equal(o.numpy(), t.numpy())
                    else:
                        same(o, t)


def test_unique_v2_flat_and_errors():
    for op in ("UniqueV2", "UniqueWithCountsV2"):
        ours = getattr(R, op)(x=px.constant([3, 1, 3]), axis=px.constant(np.array([], np.int64)))
        theirs = getattr(tf.raw_ops, op)(x=tf.constant([3, 1, 3]), axis=tf.constant([], tf.int64))
        for o, t in zip(ours, theirs):
            same(o, t)
    x = px.constant([[1, 2], [3, 4]])
    with pytest.raises(errors.InvalidArgumentError, match="unique expects a 1D vector."):
        R.UniqueV2(x=x, axis=px.constant(np.array([], np.int64)))
    with pytest.raises(errors.InvalidArgumentError, match="axis does not support input tensors larger than 1"):
        R.UniqueV2(x=x, axis=px.constant(np.array([0, 1], np.int64)))
    with pytest.raises(errors.InvalidArgumentError, match=r"axis has to be between \[0, 2\)"):
        R.UniqueV2(x=x, axis=px.constant(np.array([2], np.int64)))


# ---- DynamicPartition, DynamicStitch, ParallelDynamicStitch ------------------------------


@pytest.mark.parametrize("data,parts,num", [
    ([10, 20, 30, 40, 50], [0, 0, 2, 1, 0], 3),
    ([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [1, 0, 1], 2),
    ([[1, 2], [3, 4]], [[0, 1], [1, 1]], 2),
    ([b"a", b"b", b"c"], [1, 1, 0], 3),
    (np.zeros((0, 2), np.float32), np.zeros(0, np.int32), 2),
])
def test_dynamic_partition(data, parts, num):
    data = np.array(data)
    parts = np.array(parts, np.int32)
    ours = R.DynamicPartition(data=px.constant(data), partitions=px.constant(parts), num_partitions=num)
    theirs = tf.raw_ops.DynamicPartition(data=tf.constant(data), partitions=tf.constant(parts), num_partitions=num)
    assert len(ours) == len(theirs) == num
    for o, t in zip(ours, theirs):
        same(o, t)
    for o, t in zip(px.dynamic_partition(data, parts, num_partitions=num), tf.dynamic_partition(data, parts, num)):
        same(o, t)


def test_dynamic_partition_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"partitions\[1\] = 3 is not in \[0, 3\)"):
        R.DynamicPartition(data=px.constant([10, 20, 30]), partitions=px.constant([0, 3, 1]), num_partitions=3)
    with pytest.raises(errors.InvalidArgumentError, match=r"partitions\[1,0\] = -1 is not in \[0, 3\)"):
        R.DynamicPartition(data=px.constant([[10, 20], [30, 40]]), partitions=px.constant([[0, 1], [-1, 1]]),
                           num_partitions=3)
    with pytest.raises(errors.PlexusError, match="data.shape must start with partitions.shape"):
        R.DynamicPartition(data=px.constant([10, 20, 30]), partitions=px.constant([0, 1]), num_partitions=3)


@pytest.mark.parametrize("op", ["DynamicStitch", "ParallelDynamicStitch"])
@pytest.mark.parametrize("indices,data", [
    ([[0, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0]]),
    ([[0, 4]], [[[1, 2], [5, 6]]]),
    ([[6, 0], [1, 2, 3]], [[b"x", b"y"], [b"a", b"b", b"c"]]),
    ([[[0, 1], [3, 2]]], [[[1, 2], [3, 4]]]),
])
def test_dynamic_stitch(op, indices, data):
    pi = [px.constant(np.array(i, np.int32)) for i in indices]
    pd = [px.constant(np.array(d)) for d in data]
    ti = [tf.constant(np.array(i, np.int32)) for i in indices]
    td = [tf.constant(np.array(d)) for d in data]
    same(getattr(R, op)(indices=pi, data=pd), getattr(tf.raw_ops, op)(indices=ti, data=td))
    same(px.dynamic_stitch(pi, pd), tf.dynamic_stitch(ti, td))


def test_dynamic_stitch_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] is out of range"):
        R.DynamicStitch(indices=[px.constant([0, -1])], data=[px.constant([1.0, 2.0])])
    with pytest.raises(errors.PlexusError, match=r"data\[0\].shape = \[3\] does not start with indices\[0\].shape = \[2\]"):
        R.DynamicStitch(indices=[px.constant([0, 1])], data=[px.constant([1.0, 2.0, 3.0])])
    with pytest.raises(errors.PlexusError, match=r"data\[1\]"):
        R.DynamicStitch(indices=[px.constant([0, 1]), px.constant([2])],
                        data=[px.constant([[1.0, 2.0], [3, 4]]), px.constant([[1.0, 2.0, 3]])])


# ---- Diag, DiagPart ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64, np.float16])
@pytest.mark.parametrize("shape", [(1,), (4,), (2, 3), (2, 1, 2)])
def test_diag_and_diag_part(dtype, shape):
    d = (RNG.integers(1, 9, shape)).astype(dtype)
    ours = R.Diag(diagonal=px.constant(d))
    same(ours, tf.raw_ops.Diag(diagonal=tf.constant(d)))
    same(R.DiagPart(input=ours), tf.raw_ops.DiagPart(input=tf.raw_ops.Diag(diagonal=tf.constant(d))))
    same(px.linalg.tensor_diag(d), tf.linalg.tensor_diag(d))
    full = RNG.integers(0, 9, shape + shape).astype(dtype)
    same(px.linalg.tensor_diag_part(full), tf.linalg.tensor_diag_part(full))


def test_diag_errors():
    with pytest.raises(errors.PlexusError, match="Input must be at least rank 1, got 0"):
        R.Diag(diagonal=px.constant(1))
    with pytest.raises(errors.PlexusError, match="even and positive, got shape"):
        R.DiagPart(input=px.constant(np.zeros((2, 2, 2), np.int32)))
    with pytest.raises(errors.PlexusError, match=r"Invalid shape \[2,3\]: dimensions 0 and 1 do not match."):
        R.DiagPart(input=px.constant(np.zeros((2, 3), np.int32)))
    same(R.DiagPart(input=px.constant(3)), tf.raw_ops.DiagPart(input=tf.constant(3)))


# ---- Cross -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.float16])
@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 2, 3)])
def test_cross(dtype, shape):
    a = RNG.integers(-9 if np.issubdtype(dtype, np.signedinteger) or dtype in (np.float32, np.float64, np.float16)
                     else 0, 9, shape).astype(dtype)
    b = RNG.integers(0, 9, shape).astype(dtype)
    same(R.Cross(a=px.constant(a), b=px.constant(b)), tf.raw_ops.Cross(a=tf.constant(a), b=tf.constant(b)))
    same(px.linalg.cross(a, b), tf.linalg.cross(a, b))


def test_cross_errors():
    with pytest.raises(errors.PlexusError, match=r"Both inputs must be of same shape: \[1,3\] vs. \[2,3\]|"
                                                 r"Incompatible shapes"):
        R.Cross(a=px.constant([[1, 2, 3]]), b=px.constant([[7, 8, 9], [1, 0, 0]]))
    with pytest.raises(errors.PlexusError, match="3-element vectors|must be 3"):
        R.Cross(a=px.constant([[1, 2]]), b=px.constant([[7, 8]]))


# ---- EuclideanNorm -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64, np.complex128])
@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 2], [], [2, 1, 0]])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_euclidean_norm(dtype, axes, keep_dims):
    x = RNG.integers(-5, 6, (2, 3, 4)).astype(dtype)
    axes = np.array(axes, np.int32)
    ours = R.EuclideanNorm(input=px.constant(x), reduction_indices=px.constant(axes), keep_dims=keep_dims)
    theirs = tf.raw_ops.EuclideanNorm(input=tf.constant(x), axis=tf.constant(axes), keep_dims=keep_dims)
    if np.issubdtype(dtype, np.integer):
        same(ours, theirs)
    else:
        close(ours, theirs)


def test_euclidean_norm_public_name_and_errors():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    close(px.math.reduce_euclidean_norm(x), tf.math.reduce_euclidean_norm(x))
    close(px.math.reduce_euclidean_norm(x, axis=1, keepdims=True), tf.math.reduce_euclidean_norm(x, 1, True))
    with pytest.raises(errors.PlexusError, match=r"Invalid reduction dimension \(2 for input with 2 dimension"):
        R.EuclideanNorm(input=px.constant(x), reduction_indices=px.constant([2]))


# ---- CumulativeLogsumexp -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_logsumexp(dtype, axis, exclusive, reverse):
    x = (RNG.standard_normal((3, 5)) * 10).astype(dtype)
    x[1, 2] = -np.inf
    attrs = dict(exclusive=exclusive, reverse=reverse)
    ours = R.CumulativeLogsumexp(x=px.constant(x), axis=px.constant(axis), **attrs)
    theirs = tf.raw_ops.CumulativeLogsumexp(x=tf.constant(x), axis=tf.constant(axis), **attrs)
    close(ours, theirs, rtol=1e-5 if dtype == np.float32 else 1e-12)
    close(px.math.cumulative_logsumexp(x, axis, **attrs), tf.math.cumulative_logsumexp(x, axis, **attrs),
          rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_cumulative_logsumexp_edges_and_errors():
    x, tx = both([np.inf, 1.0, np.nan, 2.0, -np.inf], np.float32)
    same(R.CumulativeLogsumexp(x=x, axis=px.constant(0)), tf.raw_ops.CumulativeLogsumexp(x=tx, axis=tf.constant(0)))
    x, tx = both([-np.inf, -np.inf, 3.0], np.float32)
    same(R.CumulativeLogsumexp(x=x, axis=px.constant(0), exclusive=True),
         tf.raw_ops.CumulativeLogsumexp(x=tx, axis=tf.constant(0), exclusive=True))
    with pytest.raises(errors.PlexusError, match=r"ScanOp: Expected scan axis in the range \[-1, 1\), but got 1"):
        R.CumulativeLogsumexp(x=px.constant([1.0, 2.0]), axis=px.constant(1))
    with pytest.raises(errors.PlexusError, match=r"ScanOp: axis must be a scalar, not \[1\]"):
        R.CumulativeLogsumexp(x=px.constant([1.0, 2.0]), axis=px.constant([0]))


# ---- ApproximateEqual --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("tolerance", [1e-5, 0.1, 2.0])
def test_approximate_equal(dtype, tolerance):
    x = RNG.standard_normal(20).astype(dtype)
    y = (x + RNG.standard_normal(20) * np.logspace(-7, 1, 20)).astype(dtype)
    y[3] = np.nan
    ours = R.ApproximateEqual(x=px.constant(x), y=px.constant(y), tolerance=tolerance)
    if dtype == np.complex64:  # TensorFlow's CPU has no complex kernel: NumPy's |x - y| < tolerance
        np.testing.assert_array_equal(ours.numpy(), np.abs(x - y) < np.float32(tolerance))
        return
    same(ours, tf.raw_ops.ApproximateEqual(x=tf.constant(x), y=tf.constant(y), tolerance=tolerance))


def test_approximate_equal_shape_error():
    with pytest.raises(errors.PlexusError, match=r"x and y must be of the same shape. x shape: \[2\]. y shape: \[1\]"):
        R.ApproximateEqual(x=px.constant([1.0, 2.0]), y=px.constant([1.0]))


# ---- Xlogy, Xdivy, Xlog1py, Erfinv, Ndtri ------------------------------------------------


@pytest.mark.parametrize("op", ["Xlogy", "Xdivy", "Xlog1py"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.float16])
def test_x_functions(op, dtype):
    x = np.array([[0.0, 0.0, 1.0, 2.0, -3.0, 0.0]], dtype)
    y = np.array([[0.0, np.nan, 0.0, 3.0, 0.5, -1.0], [2.0, 1.0, -1.0, 0.25, 7.0, np.inf]], dtype)
    ours = getattr(R, op)(x=px.constant(x), y=px.constant(y))
    theirs = getattr(tf.raw_ops, op)(x=tf.constant(x), y=tf.constant(y))
    np.testing.assert_allclose(ours.numpy().astype(np.complex128), theirs.numpy().astype(np.complex128),
                               rtol=1e-3 if dtype == np.float16 else 1e-6, equal_nan=True)
    assert ours.numpy().dtype == theirs.numpy().dtype
    pub = getattr(px.math, op.lower())(x, y)
    np.testing.assert_array_equal(pub.numpy(), ours.numpy())


@pytest.mark.parametrize("op,values", [
    ("Erfinv", [-1.0, -0.999, -0.5, 0.0, 1e-8, 0.3, 0.9, 0.999999, 1.0, 1.5, np.nan]),
    ("Ndtri", [0.0, 1e-30, 1e-8, 0.01, 0.3, 0.5, 0.975, 0.99999, 1.0, -0.5, np.nan]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_cdfs(op, values, dtype):
    x = np.array(values, dtype)
    ours = getattr(R, op)(x=px.constant(x))
    theirs = getattr(tf.raw_ops, op)(x=tf.constant(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6 if dtype == np.float32 else 1e-14,
                               equal_nan=True)
    np.testing.assert_array_equal(getattr(px.math, op.lower())(x).numpy(), ours.numpy())


# ---- AddN, AccumulateNV2, ClipByValue (host fallbacks) -----------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.int8,
                                   np.int16, np.uint16, np.complex64, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 3, 9, 17])
def test_add_n(dtype, n):
    xs = [(RNG.integers(0, 100, (2, 3)) * (1 if np.issubdtype(dtype, np.integer) else 0.37)).astype(dtype)
          for _ in range(n)]
    # TensorFlow's order of additions, so floats agree exactly too.
    same(R.AddN(inputs=[px.constant(x) for x in xs]), tf.raw_ops.AddN(inputs=[tf.constant(x) for x in xs]))


def test_add_n_errors_and_accumulate():
    with pytest.raises(errors.PlexusError, match=r"must have the same (size and )?shape"):
        R.AddN(inputs=[px.constant([1, 2]), px.constant([3])])
    xs = [px.constant([1.0, 2.0]), px.constant([3.0, 4.0]), px.constant([0.5, 0.25])]
    np.testing.assert_array_equal(R.AccumulateNV2(inputs=xs, shape=[2]).numpy(), [4.5, 6.25])
    with pytest.raises(errors.PlexusError, match="shape"):
        R.AccumulateNV2(inputs=xs, shape=[3])


def test_add_n_of_tensor_lists():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.ones((3, 2), np.float32)
    shape = np.array([2], np.int32)
    la = R.TensorListFromTensor(tensor=px.constant(a), element_shape=shape)
    lb = R.TensorListFromTensor(tensor=px.constant(b), element_shape=shape)
    total = R.AddN(inputs=[la, lb, la])
    out = R.TensorListStack(input_handle=total, element_shape=shape, element_dtype=px.float32)
    np.testing.assert_array_equal(out.numpy(), 2 * a + b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16])
def test_clip_by_value(dtype):
    t = RNG.integers(0, 20, (3, 4)).astype(dtype)
    if dtype in (np.float32, np.float64, np.float16):
        t[0, 0] = np.nan
    for lo, hi in [(3, 12), (np.full((3, 4), 5, dtype), 9), (2, np.arange(12, dtype=dtype).reshape(3, 4)), (9, 4)]:
        lo, hi = np.asarray(lo, dtype), np.asarray(hi, dtype)
        same(R.ClipByValue(t=px.constant(t), clip_value_min=px.constant(lo), clip_value_max=px.constant(hi)),
             tf.raw_ops.ClipByValue(t=tf.constant(t), clip_value_min=tf.constant(lo), clip_value_max=tf.constant(hi)))


def test_clip_by_value_errors():
    with pytest.raises(errors.PlexusError, match="clip_value_min and clip_value_max must be either of the same shape"):
        R.ClipByValue(t=px.constant([1.0, 5.0, 2.0]), clip_value_min=px.constant([0.0, 1.0]),
                      clip_value_max=px.constant(4.0))


# ---- gradients ---------------------------------------------------------------------------


def test_gradients_of_add_n_clip_and_roll():
    x = np.array([[1.0, 5.0, 2.0], [-3.0, 0.5, 9.0]])
    w = RNG.standard_normal(x.shape)

    def grads(px_fn, tf_fn, *args):
        pxs = [px.constant(a) for a in args]
        with px.GradientTape() as tape:
            for p in pxs:
                tape.watch(p)
            loss = px.reduce_sum(px_fn(*pxs) * px.constant(w))
        tfs = [tf.constant(a) for a in args]
        with tf.GradientTape() as ttape:
            for t in tfs:
                ttape.watch(t)
            tloss = tf.reduce_sum(tf_fn(*tfs) * tf.constant(w))
        for o, t in zip(tape.gradient(loss, pxs), ttape.gradient(tloss, tfs)):
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)

    grads(lambda a, b: R.AddN(inputs=[a, b, a]), lambda a, b: tf.raw_ops.AddN(inputs=[a, b, a]), x, x * 2)
    grads(lambda a, lo: R.ClipByValue(t=a, clip_value_min=lo, clip_value_max=px.constant(4.0, px.float64)),
          lambda a, lo: tf.raw_ops.ClipByValue(t=a, clip_value_min=lo, clip_value_max=tf.constant(4.0, tf.float64)),
          x, np.float64(0.75))
    grads(lambda a: R.Roll(input=a, shift=px.constant([1, -2]), axis=px.constant([0, 1])),
          lambda a: tf.roll(a, [1, -2], [0, 1]), x)
