"""Bucketize, BroadcastArgs and SparseToDense (ops the core runs on the
host for Keras's preprocessing layers) against tf.raw_ops: exact for every
dtype, with TensorFlow's errors for bad input."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_bucketize_matches_tensorflow(dtype):
    values = (RNG.standard_normal((3, 7)) * 20).astype(dtype)
    values.flat[:4] = [0, 10, -10, 100]  # on the boundaries: upper bound, as TensorFlow
    boundaries = [-10.0, -0.5, 0.0, 10.0, 10.0, 99.5, 100.0]
    want = tf.raw_ops.Bucketize(input=values, boundaries=boundaries).numpy()
    got = np.asarray(px.raw_ops.Bucketize(input=values, boundaries=boundaries))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_bucketize_empty_boundaries_and_unsorted_boundaries():
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(px.raw_ops.Bucketize(input=x, boundaries=[])), [0, 0])
    with pytest.raises(errors.InvalidArgumentError, match="sorted boundaries"):
        px.raw_ops.Bucketize(input=x, boundaries=[2.0, 1.0])


@pytest.mark.parametrize("s0,s1", [([2, 1, 3], [4, 1]), ([], [5]), ([1], [1]), ([0, 3], [1, 3]),
                                   ([7, 1, 1], [1, 6, 1])])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_broadcast_args_matches_tensorflow(s0, s1, dtype):
    a, b = np.array(s0, dtype), np.array(s1, dtype)
    want = tf.raw_ops.BroadcastArgs(s0=a, s1=b).numpy()
    got = np.asarray(px.raw_ops.BroadcastArgs(s0=a, s1=b))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_broadcast_args_incompatible():
    with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs. \[4\]"):
        px.raw_ops.BroadcastArgs(s0=np.array([2, 3], np.int32), s1=np.array([4], np.int32))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_sparse_to_dense_matches_tensorflow(dtype):
    indices = np.array([[0, 1], [1, 0], [2, 3]], np.int64)
    shape = np.array([3, 4], np.int64)
    values = RNG.integers(1, 5, 3).astype(dtype)
    default = np.array(0, dtype)
    want = tf.raw_ops.SparseToDense(sparse_indices=indices, output_shape=shape, sparse_values=values,
                                    default_value=default).numpy()
    got = np.asarray(px.raw_ops.SparseToDense(sparse_indices=indices, output_shape=shape,
                                              sparse_values=values, default_value=default))
    np.testing.assert_array_equal(got, want)


def test_sparse_to_dense_vector_scalar_and_string_forms():
    # A vector of indices into a 1-D output, one value for all of them.
    args = dict(sparse_indices=np.array([1, 4], np.int32), output_shape=np.array([6], np.int32),
                sparse_values=np.float32(2.5), default_value=np.float32(-1))
    np.testing.assert_array_equal(np.asarray(px.raw_ops.SparseToDense(**args)),
                                  tf.raw_ops.SparseToDense(**args).numpy())
    # A scalar index.
    args = dict(sparse_indices=np.int64(2), output_shape=np.array([3], np.int64),
                sparse_values=np.int32(9), default_value=np.int32(0))
    np.testing.assert_array_equal(np.asarray(px.raw_ops.SparseToDense(**args)),
                                  tf.raw_ops.SparseToDense(**args).numpy())
    # Strings.
    args = dict(sparse_indices=np.array([[0, 0], [1, 1]], np.int64), output_shape=np.array([2, 2], np.int64),
                sparse_values=np.array([b"a", b"bc"]), default_value=np.array(b"-"))
    got = px.raw_ops.SparseToDense(**args).numpy()
    assert [list(r) for r in got] == [list(r) for r in tf.raw_ops.SparseToDense(**args).numpy()]


def test_sparse_to_dense_errors_name_the_index():
    base = dict(output_shape=np.array([3, 2], np.int64), sparse_values=np.float32(1),
                default_value=np.float32(0))
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[3,0\] is out of bounds"):
        px.raw_ops.SparseToDense(sparse_indices=np.array([[0, 0], [3, 0]], np.int64), **base)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is repeated"):
        px.raw_ops.SparseToDense(sparse_indices=np.array([[0, 0], [0, 0]], np.int64), **base)
    with pytest.raises(errors.InvalidArgumentError, match="out of order"):
        px.raw_ops.SparseToDense(sparse_indices=np.array([[1, 0], [0, 0]], np.int64), **base)
    # Unordered indices are fine when validation is off.
    got = px.raw_ops.SparseToDense(sparse_indices=np.array([[1, 0], [0, 0]], np.int64),
                                   validate_indices=False, **base)
    np.testing.assert_array_equal(np.asarray(got), [[1, 0], [1, 0], [0, 0]])
    with pytest.raises(errors.InvalidArgumentError, match="sparse_values has incorrect shape"):
        px.raw_ops.SparseToDense(sparse_indices=np.array([[1, 0], [2, 0]], np.int64),
                                 output_shape=np.array([3, 2], np.int64),
                                 sparse_values=np.ones(3, np.float32), default_value=np.float32(0))


@pytest.mark.parametrize("values", [
    np.array([3, 1, 3, 2, 1, 1], np.int32),
    np.array([2.5, -0.0, 0.0, 2.5, 7.0], np.float32),
    np.array([5, 5, 5], np.int64),
    np.array([], np.float64),
    np.array([True, False, True]),
    np.array([b"b", b"a", b"b", b""]),
])
@pytest.mark.parametrize("out_idx", [np.int32, np.int64])
def test_unique_and_counts_match_tensorflow(values, out_idx):
    want = tf.raw_ops.UniqueWithCounts(x=values, out_idx=tf.as_dtype(out_idx))
    got = px.raw_ops.UniqueWithCounts(x=values, out_idx=px.as_dtype(out_idx))
    for g, w in zip(got, want):
        g, w = np.asarray(g.numpy() if hasattr(g, "numpy") else g), w.numpy()
        assert g.tolist() == w.tolist()
        assert g.dtype == w.dtype or w.dtype.kind in "SO"
    y, idx = px.raw_ops.Unique(x=values, out_idx=px.as_dtype(out_idx))
    assert np.asarray(idx).tolist() == want.idx.numpy().tolist()


def test_unique_keeps_every_nan_apart_and_wants_a_vector():
    x = np.array([np.nan, 1.0, np.nan], np.float32)
    y, idx = px.raw_ops.Unique(x=x)
    assert np.asarray(idx).tolist() == tf.raw_ops.Unique(x=x).idx.numpy().tolist() == [0, 1, 2]
    with pytest.raises(errors.InvalidArgumentError, match="1D vector|must be a vector"):
        px.raw_ops.Unique(x=np.zeros((2, 2), np.float32))


def test_ensure_shape_passes_compatible_shapes_and_refuses_others():
    f = px.function(lambda x: px.raw_ops.EnsureShape(input=x, shape=[None, 3]),
                    input_signature=[px.TensorSpec([2, None], px.float32)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(f(x)), x)
    with pytest.raises(Exception, match="not compatible with expected shape"):
        px.function(lambda x: px.raw_ops.EnsureShape(input=x, shape=[4]),
                    input_signature=[px.TensorSpec([2, 3], px.float32)])(x)
