"""Edge cases of the math and array ops added with Cumsum, ReverseV2 and
MatrixBandPart (IsFinite/IsNan/IsInf, trigonometric and hyperbolic functions
and their inverses, Expm1, Atan2, Cumsum, Cumprod, ReverseV2,
MatrixBandPart) against TensorFlow's own outputs.

The expected values come from tests/data/tf_ops/math_edges.json, written by
gen_math_edges.py beside it with TensorFlow 2.21 (tf.raw_ops, eager, CPU):
signed zeros and infinities through Atan2, domain edges (asin(1.5) is NaN,
atanh(1) is inf), half and bfloat16 specials and overflow, half sums that
round at every step, integer wrap-around, negative axes, exclusive+reverse.
Tolerances: bool and integer outputs exact; floats within a few ulp of the
output dtype (half 1e-3, bfloat16 8e-3, float 2e-6, double 1e-12 relative),
NaN where TensorFlow has NaN and infinities exactly.

Gradients: math_grads.json (gen_math_grads.py, tf.GradientTape in float64)
holds TensorFlow's gradients of the differentiable ones; Plexus's eager tape
must agree to 1e-10 (Cumprod's gradient is 0 where x is 0, as TensorFlow's
div_no_nan makes it).

The module also checks that bad arguments fail with InvalidArgumentError (or
UnimplementedError) naming the op.
"""
import json
import os
import pathlib

import numpy as np
import pytest

import plexus
from plexus import errors
from plexus import raw_ops

_px = plexus._plexus


def _data_dir():
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"


CASES = json.loads((_data_dir() / "tf_ops" / "math_edges.json").read_text())
GRAD_CASES = json.loads((_data_dir() / "tf_ops" / "math_grads.json").read_text())
RTOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 2e-6, "float64": 1e-12}


def _tensor(values, dtype, shape):
    if dtype == "bfloat16":
        f32 = _px.constant(np.asarray(values, np.float32).reshape(shape))
        return raw_ops.Cast(f32, DstT=_px.bfloat16)
    with np.errstate(over="ignore"):  # 70000 is inf in half, on purpose
        return _px.constant(np.asarray(values).astype(dtype).reshape(shape))


def _numpy(t):
    if t.dtype.name == "bfloat16":
        t = raw_ops.Cast(t, DstT=_px.float32)
    return np.asarray(t.numpy())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_tensorflow(case):
    inputs = [_tensor(v, dt, s) for v, dt, s in case["inputs"]]
    out = getattr(raw_ops, case["op"])(*inputs, **case["attrs"])
    assert out.dtype.name == case["out_dtype"]
    got = _numpy(out)
    assert list(got.shape) == case["shape"]
    want = np.asarray(case["out"]).reshape(case["shape"])
    if case["out_dtype"] in RTOL:
        rtol = RTOL[case["out_dtype"]]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=rtol * 1e-3, equal_nan=True)
        # Signed zeros matter (Atan2 of -0.0, Expm1(-0.0)): compare signs too.
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["name"] for c in GRAD_CASES])
def test_gradient_matches_tensorflow(case):
    xs = [_px.constant(np.asarray(v, np.float64).reshape(s)) for v, s in case["floats"]]
    ints = [_px.constant(np.asarray(v).astype(dt).reshape(s)) for v, dt, s in case["ints"]]
    w = _px.constant(np.asarray(case["w"][0], np.float64).reshape(case["w"][1]))
    with plexus.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = getattr(raw_ops, case["op"])(*xs, *ints, **case["attrs"])
        loss = plexus.reduce_sum(y * w)
    grads = tape.gradient(loss, xs)
    for g, want, x in zip(grads, case["grads"], xs):
        np.testing.assert_allclose(g.numpy(), np.asarray(want).reshape(x.shape), rtol=1e-10,
                                   atol=1e-12)


def f32(shape):
    return _px.constant(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


def i32(values):
    return _px.constant(np.asarray(values, dtype=np.int32))


def i64(values):
    return _px.constant(np.asarray(values, dtype=np.int64))


ERRORS = [
    ("Cumsum", "axis_out_of_range", errors.InvalidArgumentError,
     lambda: raw_ops.Cumsum(f32((2, 3)), i32(2))),
    ("Cumsum", "negative_axis_out_of_range", errors.InvalidArgumentError,
     lambda: raw_ops.Cumsum(f32((2, 3)), i32(-3))),
    ("Cumprod", "axis_not_scalar", errors.InvalidArgumentError,
     lambda: raw_ops.Cumprod(f32((2, 3)), i32([0]))),
    ("Cumsum", "scalar_input", errors.InvalidArgumentError,
     lambda: raw_ops.Cumsum(f32(()), i32(0))),
    ("ReverseV2", "axis_out_of_range", errors.InvalidArgumentError,
     lambda: raw_ops.ReverseV2(f32((2, 3)), i32([2]))),
    ("ReverseV2", "duplicate_axis", errors.InvalidArgumentError,
     lambda: raw_ops.ReverseV2(f32((2, 3)), i32([0, -2]))),
    ("ReverseV2", "axis_not_vector", errors.InvalidArgumentError,
     lambda: raw_ops.ReverseV2(f32((2, 3)), i32(0))),
    ("ReverseV2", "rank_9", errors.UnimplementedError,
     lambda: raw_ops.ReverseV2(f32((1, 2, 1, 1, 1, 1, 1, 1, 2)), i32([0]))),
    ("MatrixBandPart", "rank_1", errors.InvalidArgumentError,
     lambda: raw_ops.MatrixBandPart(f32((4,)), i64(0), i64(0))),
    ("MatrixBandPart", "num_lower_too_large", errors.InvalidArgumentError,
     lambda: raw_ops.MatrixBandPart(f32((3, 4)), i64(4), i64(0))),
    ("MatrixBandPart", "num_upper_too_large", errors.InvalidArgumentError,
     lambda: raw_ops.MatrixBandPart(f32((3, 4)), i64(0), i64(5))),
    ("MatrixBandPart", "num_lower_not_scalar", errors.InvalidArgumentError,
     lambda: raw_ops.MatrixBandPart(f32((3, 4)), i64([0]), i64(0))),
    ("Atan2", "no_broadcast", errors.InvalidArgumentError,
     lambda: raw_ops.Atan2(f32((2, 3)), f32((4,)))),
    ("IsNan", "int_dtype", errors.InvalidArgumentError, lambda: raw_ops.IsNan(i32([1]))),
]


@pytest.mark.parametrize("op,error,fn", [pytest.param(op, e, fn, id=f"{op}-{name}")
                                         for op, name, e, fn in ERRORS])
def test_bad_arguments(op, error, fn):
    with pytest.raises(error) as info:
        fn()
    assert op in str(info.value), f"message does not name {op}: {info.value}"


def test_reverse_and_band_of_scalars_and_empty_tensors():
    # TensorFlow's kernel returns a scalar or an empty input as it is,
    # whatever the axes say.
    s = raw_ops.ReverseV2(_px.constant(np.float32(3.0)), i32([0]))
    assert float(s.numpy()) == 3.0
    e = raw_ops.ReverseV2(_px.constant(np.zeros((0, 3), np.float32)), i32([5]))
    assert tuple(e.shape) == (0, 3)
    b = raw_ops.MatrixBandPart(_px.constant(np.zeros((2, 0), np.float32)), i64(1), i64(0))
    assert tuple(b.shape) == (2, 0)


def test_public_names():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    np.testing.assert_allclose(plexus.math.cumsum(x, axis=1, exclusive=True).numpy(),
                               [[0, 1, 3], [0, 4, 9]])
    np.testing.assert_allclose(plexus.cumsum(x).numpy(), np.cumsum(x, axis=0))
    np.testing.assert_allclose(plexus.math.cumprod(x, axis=-1, reverse=True).numpy(),
                               [[6, 6, 3], [120, 30, 6]])
    np.testing.assert_array_equal(plexus.reverse(x, [0, 1]).numpy(), x[::-1, ::-1])
    np.testing.assert_array_equal(plexus.linalg.band_part(x, 0, -1).numpy(), np.triu(x))
    np.testing.assert_array_equal(plexus.math.is_nan(np.array([np.nan, 1.0])).numpy(),
                                  [True, False])
    np.testing.assert_allclose(plexus.atan2(np.float32(1.0), np.float32(-1.0)).numpy(),
                               np.arctan2(1.0, -1.0), rtol=1e-6)
    np.testing.assert_allclose(plexus.math.expm1(np.float32(1e-6)).numpy(), np.expm1(1e-6),
                               rtol=1e-6)
