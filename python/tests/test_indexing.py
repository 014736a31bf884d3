"""Tensor indexing (StridedSlice with TensorFlow's masks, GatherV2 for an
integer array index) and the Python conveniences, checked against NumPy."""

import numpy as np
import pytest

import plexus as px

A = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
V = np.arange(10, dtype=np.int32)

CASES_4D = [
    0, 1, -1, -2,
    (0, 1), (1, -1, 2), (0, 0, 0, 0), (-1, -1, -1, -1),
    slice(None), slice(1, None), slice(None, 1), slice(None, None, -1),
    (slice(None), 1), (slice(None), slice(1, 3)), (slice(None), slice(None, None, 2)),
    (slice(None), slice(None), slice(None, None, -2)), (Ellipsis, 0), (Ellipsis, -1),
    (0, Ellipsis), (0, Ellipsis, 1), (Ellipsis, slice(1, 4, 2)), (Ellipsis,),
    (None,), (None, 0), (0, None), (Ellipsis, None), (None, Ellipsis, None),
    (slice(None), None, 1, None), (1, None, slice(None, None, -1), Ellipsis, None),
    (slice(-100, 100),), (slice(100, -100, -1),), (slice(2, 1),), (slice(5, 10),),
    (slice(None), slice(-2, None), slice(3, 0, -1), slice(4, None, -3)),
    (slice(None), slice(2, -5, -1)), (slice(None, None, 3),), (1, 2, 3, 4),
    (np.int64(1), np.int32(-1)),
]


@pytest.mark.parametrize("key", CASES_4D, ids=repr)
def test_getitem_4d(key):
    t = px.constant(A)
    got = t[key]
    want = A[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


CASES_1D = [
    0, 9, -1, -10, slice(None), slice(None, None, -1), slice(8, 2, -2), slice(-3, None),
    slice(None, -3), slice(1, 100, 4), slice(-100, 3), slice(None, None, 11),
    slice(None, None, -11), slice(3, 3), slice(-1, -11, -1), slice(0, -11, -1), (None, 3),
    (Ellipsis, None), (slice(2, 6), None),
]


@pytest.mark.parametrize("key", CASES_1D, ids=repr)
def test_getitem_1d(key):
    got = px.constant(V)[key]
    want = V[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_getitem_scalar_and_empty():
    s = px.constant(3.0)
    assert s[()].numpy() == 3.0
    assert s[None].shape == (1,)
    assert s[...].shape == ()
    e = px.constant(np.zeros((0, 3), np.float32))
    assert e[:, 1].shape == (0,)
    assert e[::-1].shape == (0, 3)


def test_getitem_tensor_and_index_values():
    t = px.constant(A)
    i = px.constant(1)
    np.testing.assert_array_equal(t[i].numpy(), A[1])
    np.testing.assert_array_equal(t[:, i:].numpy(), A[:, 1:])
    np.testing.assert_array_equal(t[0, px.constant(2, px.int64)].numpy(), A[0, 2])


def test_gather_index():
    t = px.constant(A)
    np.testing.assert_array_equal(t[[1, 0, 1]].numpy(), A[[1, 0, 1]])
    np.testing.assert_array_equal(t[np.array([0])].numpy(), A[np.array([0])])
    np.testing.assert_array_equal(t[px.constant([1, 1])].numpy(), A[[1, 1]])
    v = px.constant(V)
    np.testing.assert_array_equal(v[[3, 9]].numpy(), V[[3, 9]])


def test_index_errors():
    t = px.constant(A)
    with pytest.raises((IndexError, px.errors.InvalidArgumentError)):
        t[2]
    with pytest.raises((IndexError, px.errors.InvalidArgumentError)):
        t[-3]
    with pytest.raises((IndexError, px.errors.InvalidArgumentError)):
        t[0, 3]
    with pytest.raises((IndexError, px.errors.InvalidArgumentError)):
        t[0, 0, 0, 0, 0]
    with pytest.raises((IndexError, px.errors.InvalidArgumentError)):
        px.constant(V)[10]
    with pytest.raises(IndexError, match="ellipsis"):
        t[..., ...]
    with pytest.raises(ValueError, match="step"):
        t[::0]
    with pytest.raises(TypeError):
        t[1.5]
    with pytest.raises(TypeError):
        t["a"]
    with pytest.raises(TypeError, match="boolean"):
        t[px.constant([True, False])]
    with pytest.raises(TypeError):
        t[0, [0, 1]]


def test_len_iter():
    t = px.constant(A)
    assert len(t) == 2
    rows = list(t)
    assert len(rows) == 2
    np.testing.assert_array_equal(rows[1].numpy(), A[1])
    assert list(px.constant(np.zeros((0, 2), np.float32))) == []
    with pytest.raises(TypeError):
        len(px.constant(1.0))
    with pytest.raises(TypeError):
        iter(px.constant(1.0))


def test_scalar_conversions():
    assert float(px.constant(2.5)) == 2.5
    assert int(px.constant(7)) == 7
    assert int(px.constant([7])) == 7
    assert bool(px.constant(True)) is True
    assert bool(px.constant([0.0])) is False
    assert [10, 20, 30][px.constant(1)] == 20
    assert px.constant(3).__index__() == 3
    assert px.constant(2.0).item() == 2.0 and isinstance(px.constant(2).item(), int)
    assert px.constant([[1, 2]]).tolist() == [[1, 2]]
    assert f"{px.constant(1.23456):.2f}" == "1.23"
    with pytest.raises(ValueError, match="ambiguous"):
        bool(px.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        float(px.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        [1, 2][px.constant(1.0)]
    with pytest.raises(TypeError):
        px.constant([1, 2]).__index__()
    with pytest.raises(TypeError):
        px.constant([1.0, 2.0]).item()


def test_repr():
    t = px.constant([[1.0, 2.0]])
    assert repr(t) == "plexus.Tensor([[1., 2.]], shape=(1, 2), dtype=float32, device=CPU:0)"
    assert repr(px.constant(3)) == "plexus.Tensor(3, shape=(), dtype=int32, device=CPU:0)"
    big = repr(px.constant(np.zeros((2, 2), np.float32)))
    assert big == ("plexus.Tensor([[0., 0.],\n               [0., 0.]], shape=(2, 2), "
                   "dtype=float32, device=CPU:0)")
    assert "shape=(2000,)" in repr(px.zeros([2000]))
    assert "..." in repr(px.zeros([2000]))
    assert str(t) == repr(t)


def test_methods():
    t = px.constant(A)
    assert t.astype(px.int32).dtype == px.int32
    assert t.astype("float64").dtype == px.float64
    m = px.constant(A[0, 0])
    np.testing.assert_array_equal(m.T.numpy(), A[0, 0].T)
    np.testing.assert_array_equal(t.T.numpy(), A.T)
    assert t.reshape(6, -1).shape == (6, 20)
    assert t.reshape((4, 30)).shape == (4, 30)
    assert t.reshape([120]).shape == (120,)
    np.testing.assert_allclose(t.sum().numpy(), A.sum())
    np.testing.assert_allclose(t.mean(axis=1).numpy(), A.mean(1), rtol=1e-6)
    np.testing.assert_allclose(t.max(axis=(0, 2), keepdims=True).numpy(),
                               A.max((0, 2), keepdims=True))
    np.testing.assert_allclose(t.min(-1).numpy(), A.min(-1))
    assert t.__array_priority__ > 0
    # NumPy on the left defers to the tensor's reflected operators.
    r = np.float32(2.0) * px.constant([1.0])
    assert isinstance(r, px.Tensor)


def test_traced_indexing():
    if not hasattr(px, "function"):
        pytest.skip("plexus.function not available")

    @px.function
    def f(x):
        return x[1:, ::-1][..., 0], x[0, None], len(x)

    try:
        a, b, n = f(px.constant(A[0]))
    except NotImplementedError:
        pytest.skip("tracing not available")
    np.testing.assert_array_equal(a.numpy(), A[0][1:, ::-1][..., 0])
    np.testing.assert_array_equal(b.numpy(), A[0][0, None])
