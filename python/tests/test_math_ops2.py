"""TruncateDiv, TruncateMod, MulNoNan, Softsign (and SoftsignGrad), Lgamma,
Digamma and Rint against TensorFlow run here (tf.truncatediv,
tf.truncatemod, tf.math.*, tf.nn.softsign, tf.raw_ops.*), with their
gradients against tf.GradientTape.

Tolerances: integers, TruncateDiv/TruncateMod of floats (their operands are
chosen so that quotients are exact), MulNoNan and Rint are exact; Softsign
and SoftsignGrad within 2 ulp of the dtype; Lgamma and Digamma (Eigen's
algorithms on both sides) 1e-6 relative in float (absolute near their
roots), 1e-12 in double, 2e-3 in half and 1e-2 in bfloat16 (TensorFlow
computes bfloat16 only through float here); gradients 1e-6 in float and
1e-12 in double.

Integer division by zero is an InvalidArgumentError naming the op
("Integer division by zero"); TensorFlow 2.21 fails too (with an
InternalError).
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

from tf_compare import assert_same, gradients, px_tensor, tf_tensor

tf = pytest.importorskip("tensorflow")

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_TYPES = ["float16", "bfloat16", "float32", "float64"]
SHAPES = [((2, 3), (2, 3)), ((), (2, 3)), ((4, 1, 3), (5, 1)), ((37, 41), ()), ((0, 3), (3,))]
ULP = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2.4e-7, "float64": 4.5e-16}
INF, NAN = np.inf, np.nan


# ---------------------------------------------------------------------------
# TruncateDiv and TruncateMod
# ---------------------------------------------------------------------------

def int_operands(dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    x = rng.integers(lo, hi, size=shapes[0], endpoint=True).astype(dtype)
    y = rng.integers(max(lo, -30), 30, size=shapes[1], endpoint=True).astype(dtype)
    y[y == 0] = 7
    return x, y


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_truncatediv_integers(dtype, shapes):
    x, y = int_operands(dtype, shapes, 11)
    assert_same(px.truncatediv(x, y), tf.truncatediv(x, y))
    if dtype in ("int32", "int64"):
        assert_same(px.truncatemod(x, y), tf.truncatemod(x, y))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_truncate_signs_and_overflow(dtype):
    info = np.iinfo(dtype)
    x = np.array([7, -7, 7, -7, info.min, info.max, info.min, 0], dtype)
    y = np.array([2, 2, -2, -2, -1, -1, 3, -5], dtype)
    assert_same(px.truncatediv(x, y), tf.truncatediv(x, y))  # min / -1 wraps to min
    if dtype in ("int32", "int64"):
        assert_same(px.truncatemod(x, y), tf.truncatemod(x, y))


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_truncate_floats(dtype, shapes):
    # Quarter-integers divided by powers of two: exact quotients in every
    # float type, so trunc and fmod are exact too.
    rng = np.random.default_rng(5)
    x = rng.integers(-60, 60, size=shapes[0]) + 0.25
    y = rng.choice([-8.0, -2.0, -0.5, 0.5, 1.0, 4.0], size=shapes[1])
    want = tf.truncatediv(tf_tensor(tf, x, dtype), tf_tensor(tf, y, dtype))
    assert_same(px.truncatediv(px_tensor(x, dtype), px_tensor(y, dtype)), want)
    got = px.truncatemod(px_tensor(x, dtype), px_tensor(y, dtype))
    if dtype in ("float32", "float64"):
        assert_same(got, tf.truncatemod(x.astype(dtype), y.astype(dtype)))
    else:  # no TensorFlow CPU kernel: C's fmod
        assert_same(got, tf.constant(np.fmod(x, y).astype(np.float32)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_truncate_float_specials(dtype):
    v = np.array([NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 7.5, -7.5, 1e30], dtype)
    x, y = v[:, None], v[None, :]
    assert_same(px.truncatediv(x, y), tf.truncatediv(x, y))  # x / 0: inf or NaN
    assert_same(px.truncatemod(x, y), tf.truncatemod(x, y))  # fmod(x, 0): NaN


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_division_by_zero(dtype):
    x = np.array([[1, 2], [3, 4]], dtype)
    for y in (np.array([1, 0], dtype), np.array(0, dtype)):
        with pytest.raises(errors.InvalidArgumentError, match="TruncateDiv.*division by zero"):
            px.truncatediv(x, y).numpy()
        with pytest.raises(tf.errors.OpError):  # TensorFlow 2.21: InternalError
            tf.truncatediv(x, y)
    if dtype in ("int32", "int64"):
        with pytest.raises(errors.InvalidArgumentError, match="TruncateMod.*Integer division"):
            px.truncatemod(x, np.array([0, 1], dtype)).numpy()


def test_truncate_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="TruncateDiv"):
        px.truncatediv(np.ones((2, 3), np.int32), np.ones((4,), np.int32)).numpy()
    with pytest.raises((errors.InvalidArgumentError, TypeError)):
        px.truncatemod(np.ones(2, np.uint8), np.ones(2, np.uint8)).numpy()  # not a TruncateMod type
    x = px.constant(np.array([7.0, -3.0], np.float32))
    with px.GradientTape() as tape:
        tape.watch(x)
        y = px.truncatediv(x, px.constant(np.float32(2)))
    assert tape.gradient(y, x) is None  # TensorFlow: no gradient either


# ---------------------------------------------------------------------------
# MulNoNan
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_mul_no_nan_values(dtype, shapes):
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, size=shapes[0])
    y = rng.uniform(-4, 4, size=shapes[1])
    y[rng.uniform(size=shapes[1]) < 0.3] = 0.0
    want = tf.math.multiply_no_nan(tf_tensor(tf, x, dtype), tf_tensor(tf, y, dtype))
    assert_same(px.math.multiply_no_nan(px_tensor(x, dtype), px_tensor(y, dtype)), want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_mul_no_nan_specials(dtype):
    v = np.array([NAN, INF, -INF, -0.0, 0.0, 1.0, -2.5, 1e4], dtype)
    x, y = v[:, None], v[None, :]  # NaN * 0 and inf * 0 are 0; 1 * NaN is NaN
    assert_same(px.math.multiply_no_nan(x, y), tf.math.multiply_no_nan(x, y))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2, 3))])
def test_mul_no_nan_gradient(dtype, shapes):
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, size=shapes[0]).astype(dtype)
    y = rng.uniform(-3, 3, size=shapes[1]).astype(dtype)
    y.reshape(-1)[:1] = 0
    dy = rng.uniform(-1, 1, size=np.broadcast_shapes(x.shape, y.shape)).astype(dtype)
    got, want = gradients(tf, px.math.multiply_no_nan, tf.math.multiply_no_nan, [x, y], dy)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == "float32" else 1e-12)


# ---------------------------------------------------------------------------
# Softsign and SoftsignGrad
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_softsign_values(dtype):
    x = np.concatenate([np.random.default_rng(2).uniform(-20, 20, 200),
                        [0.0, -0.0, 1.0, -1.0, 1e4, -1e4, INF, -INF, NAN]])
    want = tf.nn.softsign(tf_tensor(tf, x, dtype))
    assert_same(px.nn.softsign(px_tensor(x, dtype)), want, rtol=2 * ULP[dtype])
    assert_same(px.math.softsign(px_tensor(x, dtype)), want, rtol=2 * ULP[dtype])
    g = np.random.default_rng(9).uniform(-2, 2, x.shape)
    want = tf.raw_ops.SoftsignGrad(gradients=tf_tensor(tf, g, dtype), features=tf_tensor(tf, x, dtype))
    assert_same(raw_ops.SoftsignGrad(px_tensor(g, dtype), px_tensor(x, dtype)), want,
                rtol=4 * ULP[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softsign_gradient(dtype):
    rng = np.random.default_rng(6)
    x = rng.uniform(-5, 5, (3, 4)).astype(dtype)
    dy = rng.uniform(-1, 1, (3, 4)).astype(dtype)
    got, want = gradients(tf, px.nn.softsign, tf.nn.softsign, [x], dy)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6 if dtype == "float32" else 1e-12)


def test_softsign_grad_shapes_must_match():
    with pytest.raises(errors.InvalidArgumentError, match="SoftsignGrad"):
        raw_ops.SoftsignGrad(np.ones((2, 3), np.float32), np.ones((3,), np.float32)).numpy()
    with pytest.raises((errors.InvalidArgumentError, TypeError)):
        px.nn.softsign(np.ones(3, np.int32)).numpy()


# ---------------------------------------------------------------------------
# Lgamma, Digamma, Rint
# ---------------------------------------------------------------------------

GAMMA_TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-6, 1e-6),
             "float64": (1e-12, 1e-12)}
GAMMA_X = np.concatenate([np.random.default_rng(8).uniform(-8, 12, 300),
                          [0.0, -0.0, -1.0, -2.0, -30.0, 1.0, 2.0, 0.5, -0.5, -1.5, 1e-6, 1e-30,
                           30.0, 1e4, INF, -INF, NAN]])


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("op", ["lgamma", "digamma"])
def test_lgamma_digamma_values(op, dtype):
    rtol, atol = GAMMA_TOL[dtype]
    x = GAMMA_X
    if dtype == "float16":
        x = x[np.abs(np.nan_to_num(x)) < 6e4]
    got = getattr(px.math, op)(px_tensor(x, dtype))
    if dtype == "bfloat16":  # no TensorFlow CPU kernel: float32, rounded
        want = tf.cast(getattr(tf.math, op)(tf.cast(tf_tensor(tf, x, dtype), tf.float32)),
                       tf.bfloat16)
    else:
        want = getattr(tf.math, op)(tf_tensor(tf, x, dtype))
    assert_same(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lgamma_gradient_is_digamma(dtype):
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.uniform(0.1, 10, 8), rng.uniform(-4.9, -4.1, 4)]).astype(dtype)
    dy = rng.uniform(-1, 1, x.shape).astype(dtype)
    got, want = gradients(tf, px.math.lgamma, tf.math.lgamma, [x], dy)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6 if dtype == "float32" else 1e-12)


def test_digamma_has_no_gradient_yet():
    # TensorFlow differentiates Digamma with Polygamma, which Plexus lacks.
    x = px.constant(np.array([1.5, 2.5]))
    with px.GradientTape() as tape:
        tape.watch(x)
        y = px.math.digamma(x)
    with pytest.raises(Exception, match="Digamma"):
        tape.gradient(y, x)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_rint_ties_to_even(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.25, 3.75, -0.0, 1e4 + 0.5, INF, -INF, NAN])
    got = px.math.rint(px_tensor(x, dtype))
    if dtype in ("float32", "float64"):
        assert_same(got, tf.math.rint(x.astype(dtype)))
    else:  # no TensorFlow CPU kernel: NumPy's rint of the rounded values
        rounded = px_tensor(x, dtype)
        assert_same(got, tf.constant(np.rint(np.asarray(
            raw_ops.Cast(rounded, DstT=px.float32).numpy()))))
    sign = np.signbit(np.asarray(raw_ops.Cast(got, DstT=px.float32).numpy()))
    assert sign[3] and sign[8]  # -0.5 and -0.0 round to -0.0


def test_rint_gradient_is_zero():
    x = px.constant(np.array([0.3, 2.7], np.float32))
    with px.GradientTape() as tape:
        tape.watch(x)
        y = px.math.rint(x) * 3.0
    g = tape.gradient(y, x)
    assert g is None or not np.any(g.numpy())  # TensorFlow: None


def test_unary_bad_dtypes():
    for fn in (px.math.lgamma, px.math.digamma, px.math.rint):
        with pytest.raises((errors.InvalidArgumentError, TypeError)):
            fn(np.ones(3, np.int32)).numpy()
