"""TopKV2, Where, the segment reductions and the tensor-scatter family
through their public names, inside traced functions, under the gradient
tape, and with bad input. Expected values were computed with TensorFlow 2.21
(tf.math.top_k, tf.where, tf.math.segment_*, tf.tensor_scatter_nd_*) on the
same inputs; the per-dtype NumPy checks are in test_ops_numpy.py
(select_refs.py)."""
import numpy as np
import pytest

import plexus as px
from plexus import errors


def f64(values):
    return px.constant(np.asarray(values, dtype=np.float64))


def i32(values):
    return px.constant(np.asarray(values, dtype=np.int32))


# ---- Public names ----------------------------------------------------------------


def test_top_k_names():
    x = f64([[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.4, 0.9]])
    for fn in (px.math.top_k, px.nn.top_k):
        values, indices = fn(x, 2)
        np.testing.assert_array_equal(values.numpy(), [[2.5, 0.7], [1.1, 0.9]])
        np.testing.assert_array_equal(indices.numpy(), [[2, 3], [0, 3]])
        assert indices.dtype.name == "int32"


def test_top_k_ties_take_the_lower_index_first():
    values, indices = px.math.top_k(i32([1, 5, 5, 2, 5, 2]), 4)
    np.testing.assert_array_equal(values.numpy(), [5, 5, 5, 2])
    np.testing.assert_array_equal(indices.numpy(), [1, 2, 4, 3])


def test_where_with_and_without_x_y():
    cond = px.constant(np.array([[True, False, True], [False, False, True]]))
    coords = px.where(cond)
    assert coords.dtype.name == "int64"
    np.testing.assert_array_equal(coords.numpy(), [[0, 0], [0, 2], [1, 2]])
    picked = px.where(cond, f64(np.ones((2, 3))), f64(np.zeros((2, 3))))
    np.testing.assert_array_equal(picked.numpy(), [[1, 0, 1], [0, 0, 1]])
    with pytest.raises(ValueError):
        px.where(cond, f64(np.ones((2, 3))))


def test_where_data_dependent_shape_in_a_traced_function():
    @px.function
    def count_positive(x):
        return px.where(x > 0)

    out = count_positive(f64([[-1.0, 2.0], [3.0, 0.0]]))
    np.testing.assert_array_equal(out.numpy(), [[0, 1], [1, 0]])
    out = count_positive(f64([[-1.0, -2.0], [-3.0, 0.0]]))
    assert out.numpy().shape == (0, 2)


def test_segment_names():
    d = f64([[1, 2], [3, 4], [5, 6], [7, 8]])
    ids = i32([0, 0, 2, 2])
    np.testing.assert_array_equal(px.math.segment_sum(d, ids).numpy(), [[4, 6], [0, 0], [12, 14]])
    np.testing.assert_array_equal(px.math.segment_mean(d, ids).numpy(), [[2, 3], [0, 0], [6, 7]])
    np.testing.assert_array_equal(px.math.segment_max(d, ids).numpy(), [[3, 4], [0, 0], [7, 8]])
    np.testing.assert_array_equal(px.math.segment_min(d, ids).numpy(), [[1, 2], [0, 0], [5, 6]])
    np.testing.assert_array_equal(px.math.segment_prod(d, ids).numpy(), [[3, 8], [1, 1], [35, 48]])
    lowest = np.finfo(np.float64).min
    np.testing.assert_array_equal(px.math.unsorted_segment_max(d, i32([1, -1, 1, 0]), 3).numpy(),
                                  [[7, 8], [5, 6], [lowest, lowest]])
    np.testing.assert_array_equal(px.math.unsorted_segment_prod(d, i32([1, -1, 1, 0]), 2).numpy(),
                                  [[7, 8], [5, 12]])


def test_tensor_scatter_names():
    t = f64([[1, 2], [3, 4], [5, 6]])
    idx = i32([[1], [1], [0]])
    up = f64([[10, 20], [-1, 50], [0, 0]])
    np.testing.assert_array_equal(px.tensor_scatter_nd_add(t, idx, up).numpy(), [[1, 2], [12, 74], [5, 6]])
    np.testing.assert_array_equal(px.tensor_scatter_nd_sub(t, idx, up).numpy(), [[1, 2], [-6, -66], [5, 6]])
    np.testing.assert_array_equal(px.tensor_scatter_nd_max(t, idx, up).numpy(), [[1, 2], [10, 50], [5, 6]])
    np.testing.assert_array_equal(px.tensor_scatter_nd_min(t, idx, up).numpy(), [[0, 0], [-1, 4], [5, 6]])
    np.testing.assert_array_equal(px.tensor_scatter_nd_update(t, i32([[2]]), f64([[7, 8]])).numpy(),
                                  [[1, 2], [3, 4], [7, 8]])


# ---- Gradients (TensorFlow's values) --------------------------------------------


def test_gradients_match_tensorflow():
    x = f64([[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.4, 0.9]])
    d = f64([[1, 2], [3, 4], [5, 6], [7, 8]])
    ten = f64([[1, 2], [3, 4], [5, 6]])
    up = f64([[10, 20]])
    with px.GradientTape(persistent=True) as tape:
        for t in (x, d, ten, up):
            tape.watch(t)
        values, _ = px.math.top_k(x, 2)
        l_topk = px.reduce_sum(values * f64([[1, 2], [3, 4]]))
        mean = px.math.segment_mean(d, i32([0, 0, 2, 2]))
        l_mean = px.reduce_sum(mean * f64([[1, -1], [2, 2], [0.5, 3]]))
        mx = px.math.segment_max(d * f64([[1], [-1], [1], [-1]]), i32([0, 0, 1, 1]))
        l_max = px.reduce_sum(mx * f64([[1, 2], [3, 4]]))
        sc = px.tensor_scatter_nd_update(ten, i32([[1]]), up)
        l_scatter = px.reduce_sum(sc * f64([[1, 2], [3, 4], [5, 6]]))
    np.testing.assert_allclose(tape.gradient(l_topk, x).numpy(), [[0, 0, 1, 2], [3, 0, 0, 4]])
    np.testing.assert_allclose(tape.gradient(l_mean, d).numpy(),
                               [[0.5, -0.5], [0.5, -0.5], [0.25, 1.5], [0.25, 1.5]])
    np.testing.assert_allclose(tape.gradient(l_max, d).numpy(), [[1, 2], [0, 0], [3, 4], [0, 0]])
    np.testing.assert_allclose(tape.gradient(l_scatter, ten).numpy(), [[1, 2], [0, 0], [5, 6]])
    np.testing.assert_allclose(tape.gradient(l_scatter, up).numpy(), [[3, 4]])


# ---- Bad input: errors name the op and the bad index ----------------------------


@pytest.mark.parametrize("op,fn,words", [
    ("TopKV2", lambda: px.math.top_k(f64([1, 2, 3]), 4), "at least k columns"),
    ("TopKV2", lambda: px.math.top_k(f64([1, 2, 3]), -1), "k >= 0"),
    ("Where", lambda: px.where(px.constant(True)), "at least 1-D"),
    ("SegmentSum", lambda: px.math.segment_sum(f64([1, 2, 3, 4]), i32([0, 2, 1, 3])),
     "segment_ids[2] = 1 follows segment_ids[1] = 2"),
    ("SegmentMean", lambda: px.math.segment_mean(f64([1, 2]), i32([-1, 0])), "segment_ids[0] = -1"),
    ("SegmentMax", lambda: px.math.segment_max(f64([1, 2, 3]), i32([0, 1])), "same size as dimension 0"),
    ("UnsortedSegmentMax", lambda: px.math.unsorted_segment_max(f64([1, 2, 3]), i32([0, 7, 1]), 3),
     "segment_ids[1] = 7 is out of range [0, 3)"),
    ("TensorScatterAdd", lambda: px.tensor_scatter_nd_add(f64([[1, 2], [3, 4], [5, 6]]), i32([[0], [3]]),
                                                          f64(np.ones((2, 2)))),
     "indices[1] = [3] does not index into shape [3,2]"),
    ("TensorScatterUpdate", lambda: px.tensor_scatter_nd_update(f64([1, 2]), i32([[0], [1]]), f64([1])),
     "updates must have shape [2]"),
])
def test_bad_input_names_the_op_and_index(op, fn, words):
    with pytest.raises(errors.InvalidArgumentError) as info:
        fn()
    message = str(info.value)
    assert op in message, message
    assert words in message, message
