"""The bitwise ops (BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift,
RightShift, PopulationCount) against TensorFlow run here (tf.bitwise.*,
tf.raw_ops.PopulationCount), on the eight integer types TensorFlow allows
and with broadcasting. Results are exact.

Shifts: TensorFlow clamps the count to [0, bits - 1], so a negative count
leaves x unchanged and a count of bits or more shifts by bits - 1; left
shifts wrap (the bit pattern shifts), right shifts of negative values keep
the sign. The extremes of each type are covered.
"""

import zlib

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

from tf_compare import assert_same

tf = pytest.importorskip("tensorflow")

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
BINARY = {
    "BitwiseAnd": (px.bitwise.bitwise_and, tf.bitwise.bitwise_and),
    "BitwiseOr": (px.bitwise.bitwise_or, tf.bitwise.bitwise_or),
    "BitwiseXor": (px.bitwise.bitwise_xor, tf.bitwise.bitwise_xor),
    "LeftShift": (px.bitwise.left_shift, tf.bitwise.left_shift),
    "RightShift": (px.bitwise.right_shift, tf.bitwise.right_shift),
}
SHAPES = [((2, 3), (2, 3)), ((), (2, 3)), ((4, 1, 3), (5, 1)), ((37, 41), ()), ((0, 3), (3,))]


def extremes(dtype):
    """Each type's limits, zero, small values and bit patterns."""
    info = np.iinfo(dtype)
    v = [info.min, info.max, 0, 1, 5, 0x55, info.max // 3]
    if info.min < 0:
        v += [-1, -6, info.min // 3]
    return np.array(v, dtype=dtype)


def shift_counts(dtype):
    """Counts inside and outside [0, bits - 1]."""
    bits = np.iinfo(dtype).bits
    v = [0, 1, bits - 1, bits, bits + 1, min(100, np.iinfo(dtype).max)]
    if np.iinfo(dtype).min < 0:
        v += [-1, np.iinfo(dtype).min]
    else:
        v += [np.iinfo(dtype).max]
    return np.array(v, dtype=dtype)


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_binary_random_broadcast(op, dtype, shapes):
    rng = np.random.default_rng(zlib.crc32(repr((op, dtype, shapes)).encode()))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shapes[0], dtype=dtype, endpoint=True)
    if op.endswith("Shift"):
        y = rng.integers(0, info.bits, size=shapes[1]).astype(dtype)
    else:
        y = rng.integers(info.min, info.max, size=shapes[1], dtype=dtype, endpoint=True)
    px_fn, tf_fn = BINARY[op]
    got = px_fn(x, y)
    assert got.dtype.name == dtype
    assert_same(got, tf_fn(x, y))
    assert_same(getattr(raw_ops, op)(x, y), tf_fn(x, y))


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_extremes_all_pairs(op, dtype):
    x = extremes(dtype)[:, None]
    y = shift_counts(dtype) if op.endswith("Shift") else extremes(dtype)
    px_fn, tf_fn = BINARY[op]
    assert_same(px_fn(x, y), tf_fn(x, y))


def test_shift_count_clamping_documented_cases():
    # int8: 1 << -1 is 1, -1 << 100 is -1 << 7, -128 >> 100 is -1, 100 >> 8 is 0.
    x = np.array([1, -1, -128, 100, 5], np.int8)
    y = np.array([-1, 100, 100, 8, 7], np.int8)
    np.testing.assert_array_equal(px.bitwise.left_shift(x, y).numpy(), [1, -128, 0, 0, -128])
    np.testing.assert_array_equal(px.bitwise.right_shift(x, y).numpy(), [1, -1, -1, 0, 0])
    u = np.array([1, 200, 255], np.uint64)
    counts = np.array([63, 64, 1000], np.uint64)
    np.testing.assert_array_equal(px.bitwise.left_shift(u, counts).numpy(), [2**63, 0, 2**63])


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_invert_and_population_count(dtype):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    for x in (extremes(dtype), rng.integers(info.min, info.max, size=(3, 50), dtype=dtype),
              np.zeros((0, 2), dtype), np.array(info.max, dtype)):
        assert_same(px.bitwise.invert(x), tf.bitwise.invert(x))
        count = px.bitwise.population_count(x)
        assert count.dtype == px.uint8
        assert_same(count, tf.raw_ops.PopulationCount(x=x))


def test_in_a_traced_function():
    @px.function
    def f(a, b):
        return px.bitwise.bitwise_xor(px.bitwise.left_shift(a, b), px.bitwise.invert(a))

    a = np.array([[3, -7, 1000]], np.int32)
    b = np.array([2, 31, 40], np.int32)
    want = tf.bitwise.bitwise_xor(tf.bitwise.left_shift(a, b), tf.bitwise.invert(a))
    assert_same(f(a, b), want)


def test_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="BitwiseAnd"):
        px.bitwise.bitwise_and(np.ones((2, 3), np.int32), np.ones((4,), np.int32)).numpy()
    with pytest.raises((errors.InvalidArgumentError, TypeError), match="T|float"):
        px.bitwise.left_shift(np.ones(2, np.float32), np.ones(2, np.float32)).numpy()
    with pytest.raises((errors.InvalidArgumentError, TypeError)):
        px.bitwise.invert(np.ones(2, np.bool_)).numpy()


def test_no_gradient():
    x = px.constant(np.array([1, 2], np.int32))
    with px.GradientTape() as tape:
        tape.watch(x)
        y = px.bitwise.bitwise_and(x, x)
    assert tape.gradient(y, x) is None
