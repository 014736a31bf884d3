"""Every op of the registry, run eagerly through plexus.raw_ops, against NumPy.

TABLE maps an op name to a generator: given a dtype name and a seeded random
generator it returns Cases (inputs, attributes, the NumPy reference, the kind
of tolerance; see op_refs.py for the tolerances). The test is parametrized
over every (op, dtype) the cpu plugin has a kernel for, as listed in the "cpu"
column of docs/ops.md, and every case the generator makes for it; ids read
"MatMul-float32-transpose_b". Ops the core runs itself (no cpu column) list
their dtypes in the table. EXCLUDED names the ops with no eager NumPy test
here and why; test_every_op_is_covered keeps TABLE + EXCLUDED equal to the
registry.

half inputs are NumPy float16 tensors; bfloat16 inputs are made as float32
and cast with raw_ops.Cast, and bfloat16 outputs are cast back to float32
before comparing. References compute in float64 from the exact input values.
"""
import math
import os

import numpy as np
import pytest

import plexus
from plexus import raw_ops
from plexus import errors

import op_refs as R
import select_refs
from op_refs import Case, In, ti, rand, rand_nonzero, distinct

_px = plexus._plexus


# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------


def pdtype(name):
    """The plexus DType for a NumPy-style name."""
    attr = "bool_" if name == "bool" else name
    return getattr(_px, attr)


def make_tensor(inp):
    if inp.dtype == "bfloat16":
        f32 = _px.constant(inp.value.astype(np.float32), dtype=pdtype("float32"))
        return raw_ops.Cast(f32, DstT=pdtype("bfloat16"))
    return _px.constant(inp.value, dtype=pdtype(inp.dtype))


def convert_input(v):
    if isinstance(v, In):
        return make_tensor(v)
    if isinstance(v, list) and v and isinstance(v[0], In):
        return [make_tensor(e) for e in v]
    return v


def flatten_outputs(out):
    if out is None:
        return []
    if isinstance(out, (list, tuple)):
        flat = []
        for o in out:
            flat.extend(flatten_outputs(o) if isinstance(o, (list, tuple)) else [o])
        return flat
    return [out]


def to_numpy(t):
    """A tensor's values as NumPy (bfloat16 via a Cast to float32, strings as str)."""
    name = t.dtype.name
    if name == "bfloat16":
        t = raw_ops.Cast(t, DstT=pdtype("float32"))
    a = np.asarray(t.numpy())
    if name == "string":
        a = np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else str(v),
                         otypes=[object])(a) if a.size else a.astype(object)
    return a


def default_out_dtype(expected, case):
    kind = expected.dtype.kind
    if kind == "f":
        return case.dtype if R.is_float(case.dtype) else "float32"
    if kind == "b":
        return "bool"
    if kind in "OSU":
        return "string"
    return expected.dtype.name


def run_op(op, case):
    inputs = [convert_input(v) for v in case.inputs]
    return flatten_outputs(getattr(raw_ops, op)(*inputs, **case.attrs))


def check_case(op, case):
    actual = run_op(op, case)
    expected = case.expected_outputs()
    assert len(actual) == len(expected), f"{op}: {len(actual)} outputs, expected {len(expected)}"
    out_dtypes = case.out_dtypes or [None] * len(expected)
    for k, (a, e, odt) in enumerate(zip(actual, expected, out_dtypes)):
        if odt == "skip":  # an output TF leaves unspecified
            continue
        odt = odt or default_out_dtype(e, case)
        assert a.dtype.name == odt, f"{op} output {k}: dtype {a.dtype.name}, expected {odt}"
        av = to_numpy(a)
        assert tuple(a.shape) == tuple(e.shape), \
            f"{op} output {k}: shape {tuple(a.shape)}, expected {tuple(e.shape)}"
        assert av.shape == e.shape
        if R.is_float(odt):
            rtol, atol = case.tolerance(odt)
            np.testing.assert_allclose(av.astype(np.float64), e.astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{op} output {k} ({odt})")
        elif odt == "string":
            assert av.tolist() == np.asarray(e, dtype=object).tolist(), f"{op} output {k}"
        else:
            np.testing.assert_array_equal(av, e.astype(av.dtype), err_msg=f"{op} output {k}")


# ---------------------------------------------------------------------------
# Input makers shared by families
# ---------------------------------------------------------------------------


def general(rng, shape, dt):
    """Moderate values of any dtype: floats in [-3, 3], signed ints in [-10, 10],
    unsigned in [0, 15], bool coin flips."""
    if R.is_float(dt):
        return rand(rng, shape, dt, -3, 3)
    if dt in R.UNSIGNED:
        return rand(rng, shape, dt, 0, 15)
    return rand(rng, shape, dt, -10, 10)


def halves(rng, shape, dt):
    """Values from {-3, -2.5, ..., 3} (ints: -3..3; unsigned 0..6): exact in
    every dtype and full of ties, for comparisons and rounding."""
    k = rng.integers(-6, 7, size=tuple(shape))
    if R.is_float(dt):
        return k / 2.0
    if dt in R.UNSIGNED:
        return np.abs(k) // 2 + (k > 0)
    return k // 2
    

SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, -2.5])


def with_special(dt, keep):
    """Special float values (a subset of inf, -inf, nan, 0, -0, ...)."""
    vals = np.array(keep, dtype=np.float64)
    return In(vals, dt)


# ---------------------------------------------------------------------------
# Unary math and activations
# ---------------------------------------------------------------------------


def dom_any(rng, shape, dt):
    return general(rng, shape, dt)


def dom_range(lo, hi):
    return lambda rng, shape, dt: rand(rng, shape, dt, lo, hi)


def dom_nonzero(rng, shape, dt):
    if R.is_int(dt):
        return rand_nonzero(rng, shape, dt, 1, 5)
    return rand_nonzero(rng, shape, dt, 0.25, 4)


def dom_round(rng, shape, dt):
    if R.is_float(dt):
        # Half-integers (ties go to even) mixed with random values.
        v = rng.uniform(-4, 4, size=shape)
        ties = rng.integers(-8, 9, size=shape) / 2.0
        return np.where(rng.random(shape) < 0.5, ties, v)
    return general(rng, shape, dt)


def dom_square(rng, shape, dt):
    if dt in R.UNSIGNED:
        return rand(rng, shape, dt, 0, 15)  # 15^2 fits uint8
    if R.is_int(dt):
        return rand(rng, shape, dt, -11, 11)  # 11^2 fits int8
    return rand(rng, shape, dt, -3, 3)


# op: (reference, input domain, tolerance kind, special values for float32/64
# (None: no special case))
UNARY = {
    "Neg": (np.negative, dom_any, "exact", [np.inf, -np.inf, np.nan, 0.0, -0.0]),
    "Abs": (np.abs, dom_any, "exact", [np.inf, -np.inf, np.nan, 0.0, -0.0]),
    "Sign": (np.sign, dom_any, "exact", [np.inf, -np.inf, 0.0, -0.0, 3.0, -0.5]),
    "Floor": (np.floor, dom_round, "exact", [np.inf, -np.inf, np.nan, -0.0, -0.5]),
    "Ceil": (np.ceil, dom_round, "exact", [np.inf, -np.inf, np.nan, -0.0, -0.5]),
    "Round": (np.round, dom_round, "exact", [np.inf, -np.inf, np.nan, -0.5, 2.5, -1.5]),
    "Square": (np.square, dom_square, "elem", [np.inf, -np.inf, np.nan, -0.0]),
    "Reciprocal": (R.reciprocal, dom_nonzero, "elem", [np.inf, -np.inf, np.nan, 0.0]),
    "Inv": (R.reciprocal, dom_nonzero, "elem", [np.inf, -np.inf, np.nan, 0.0]),
    "Exp": (np.exp, dom_range(-3, 3), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0]),
    "Log": (np.log, dom_range(0.1, 5), "transc", [np.inf, np.nan, 0.0, -0.0, -1.0]),
    "Log1p": (np.log1p, dom_range(-0.5, 3), "transc", [np.inf, np.nan, -1.0, -0.0, 1e-10]),
    "Sqrt": (np.sqrt, dom_range(0, 5), "elem", [np.inf, np.nan, 0.0, -1.0]),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), dom_range(0.1, 5), "transc",
              [np.inf, np.nan, 0.0, -1.0]),
    "Tanh": (np.tanh, dom_range(-4, 4), "transc", [np.inf, -np.inf, np.nan, 0.0, 20.0, -20.0]),
    "Sigmoid": (R.sigmoid, dom_range(-6, 6), "transc",
                [np.inf, -np.inf, np.nan, 0.0, 40.0, -40.0]),
    "Erf": (R.erf, dom_range(-2.5, 2.5), "transc", [np.inf, -np.inf, np.nan, 0.0, 6.0, -6.0]),
    "Erfc": (R.erfc, dom_range(-2.5, 2.5), "transc", [np.inf, -np.inf, np.nan, 0.0, 6.0, -6.0]),
    "Sin": (np.sin, dom_range(-6, 6), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0, 100.0]),
    "Cos": (np.cos, dom_range(-6, 6), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0, 100.0]),
    "Tan": (np.tan, dom_range(-1.4, 1.4), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0, 100.0]),
    "Sinh": (np.sinh, dom_range(-5, 5), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0, 10.0]),
    "Cosh": (np.cosh, dom_range(-5, 5), "transc", [np.inf, -np.inf, np.nan, 0.0, -0.0, -10.0]),
    "Asin": (np.arcsin, dom_range(-0.99, 0.99), "transc", [np.nan, 1.0, -1.0, 1.5, -0.0, np.inf]),
    "Acos": (np.arccos, dom_range(-0.99, 0.99), "transc", [np.nan, 1.0, -1.0, 1.5, 0.0, -np.inf]),
    "Atan": (np.arctan, dom_range(-6, 6), "transc", [np.inf, -np.inf, np.nan, -0.0, 6e4]),
    "Asinh": (np.arcsinh, dom_range(-6, 6), "transc", [np.inf, -np.inf, np.nan, -0.0, 6e4]),
    "Acosh": (np.arccosh, dom_range(1, 10), "transc", [np.inf, np.nan, 1.0, 0.5, -1.0, 6e4]),
    "Atanh": (np.arctanh, dom_range(-0.99, 0.99), "transc", [np.nan, 1.0, -1.0, 2.0, -0.0, 0.5]),
    "Expm1": (np.expm1, dom_range(-3, 3), "transc", [np.inf, -np.inf, np.nan, -0.0, 1e-10, 10.0]),
    "Relu": (R.relu, dom_any, "exact", [np.inf, -np.inf, -0.0]),
    "Relu6": (R.relu6, dom_any, "exact", [np.inf, -np.inf, 6.5]),
    "Elu": (R.elu, dom_range(-3, 3), "transc", [np.inf, -np.inf]),
    "Selu": (R.selu, dom_range(-3, 3), "transc", [np.inf, -np.inf]),
    "Softplus": (R.softplus, dom_range(-5, 5), "transc", [np.inf, -np.inf, 100.0, -100.0]),
}


def gen_unary(op):
    ref, dom, tol, special = UNARY[op]

    def ref_fn(x):
        with np.errstate(all="ignore"):
            out = ref(x)
        return out.astype(x.dtype) if x.dtype.kind in "iu" else out

    def gen(dt, rng):
        cases = [Case("random", [In(dom(rng, (3, 5), dt), dt)], ref=ref_fn, tol=tol),
                 Case("scalar", [In(dom(rng, (), dt), dt)], ref=ref_fn, tol=tol),
                 Case("empty", [In(dom(rng, (0, 3), dt), dt)], ref=ref_fn, tol=tol),
                 # Odd sizes past the vector width and the kernels' parallel cutoffs.
                 Case("large", [In(dom(rng, (67, 131), dt), dt)], ref=ref_fn, tol=tol)]
        if special and R.is_float(dt):
            cases.append(Case("special", [with_special(dt, special)], ref=ref_fn, tol=tol))
        return cases
    return gen


def gen_leaky_relu(dt, rng):
    x = In(rand(rng, (4, 5), dt, -3, 3), dt)
    return [Case("default_alpha", [x], ref=lambda v: R.leaky_relu(v, 0.2), tol="elem"),
            Case("alpha0.01", [x], {"alpha": 0.01}, ref=lambda v: R.leaky_relu(v, 0.01),
                 tol="elem"),
            Case("alpha1.5", [x], {"alpha": 1.5}, ref=lambda v: R.leaky_relu(v, 1.5),
                 tol="elem")]


def gen_gelu(dt, rng):
    x = In(rand(rng, (4, 5), dt, -4, 4), dt)
    return [Case("approximate", [x], {"approximate": True}, ref=lambda v: R.gelu(v, True),
                 tol="transc"),
            Case("exact", [x], {"approximate": False}, ref=lambda v: R.gelu(v, False),
                 tol="transc"),
            Case("default", [x], ref=lambda v: R.gelu(v, True), tol="transc")]


def gen_softmax(fn):
    def gen(dt, rng):
        cases = [Case("2d", [In(rand(rng, (4, 7), dt, -3, 3), dt)], ref=fn, tol="accum"),
                 Case("1d", [In(rand(rng, (9,), dt, -3, 3), dt)], ref=fn, tol="accum"),
                 Case("3d", [In(rand(rng, (2, 3, 4), dt, -3, 3), dt)], ref=fn, tol="accum"),
                 Case("large", [In(rand(rng, (9, 1001), dt, -3, 3), dt)], ref=fn, tol="accum")]
        if dt in ("float32", "float64"):
            # Large logits: a stable kernel subtracts the maximum first.
            big = np.array([[1000.0, 1000.5, 999.0], [-1000.0, -1001.0, -999.5],
                            [-np.inf, 0.0, 1.0]])
            cases.append(Case("extreme_logits", [In(big, dt)], ref=fn, tol="accum"))
        return cases
    return gen


# ---------------------------------------------------------------------------
# Binary math, comparisons, logic, select
# ---------------------------------------------------------------------------

BINARY_SHAPES = [
    ("same", (3, 4), (3, 4)),
    ("large", (67, 131), (67, 131)),
    ("large_bcast", (33, 1, 65), (7, 1)),
    ("bcast_both_rank5", (2, 1, 3, 1, 2), (4, 1, 5, 1)),
    ("bcast", (3, 1), (1, 4)),
    ("bcast_rank", (2, 3, 4), (4,)),
    ("scalar_x", (), (3,)),
    ("scalar_y", (2, 3), ()),
    ("empty", (0, 4), (1, 4)),
]


def xy_add(rng, sx, sy, dt):
    if dt in R.UNSIGNED:
        return rand(rng, sx, dt, 0, 100), rand(rng, sy, dt, 0, 100)
    if R.is_int(dt):
        return rand(rng, sx, dt, -50, 50), rand(rng, sy, dt, -50, 50)
    return rand(rng, sx, dt, -3, 3), rand(rng, sy, dt, -3, 3)


def xy_sub(rng, sx, sy, dt):
    if dt in R.UNSIGNED:  # stays non-negative
        return rand(rng, sx, dt, 50, 100), rand(rng, sy, dt, 0, 50)
    return xy_add(rng, sx, sy, dt)


def xy_mul(rng, sx, sy, dt):
    if R.is_int(dt) or R.is_float(dt):
        return general(rng, sx, dt), general(rng, sy, dt)


def xy_div(rng, sx, sy, dt):
    if dt in R.UNSIGNED:
        return rand(rng, sx, dt, 0, 100), rand_nonzero(rng, sy, dt, 1, 7)
    if R.is_int(dt):
        return rand(rng, sx, dt, -50, 50), rand_nonzero(rng, sy, dt, 1, 7)
    return rand(rng, sx, dt, -3, 3), rand_nonzero(rng, sy, dt, 0.25, 4)


def xy_pow(rng, sx, sy, dt):
    if R.is_int(dt):
        return rand(rng, sx, dt, -3, 3), rand(rng, sy, dt, 0, 4)  # |3^4| fits int8
    return rand(rng, sx, dt, 0.25, 3), rand(rng, sy, dt, -2, 2)


def xy_sqdiff(rng, sx, sy, dt):
    return rand(rng, sx, dt, -3, 3), rand(rng, sy, dt, -3, 3)


def xy_div_no_nan(rng, sx, sy, dt):
    x, y = rand(rng, sx, dt, -3, 3), np.array(rand(rng, sy, dt, -3, 3))
    if y.size:
        y.reshape(-1)[::3] = 0  # zeros, where the result is 0
    return x, y


def div_no_nan(x, y):
    with np.errstate(all="ignore"):
        q = np.asarray(x / np.where(y == 0, np.ones_like(y), y))
    return np.where(y == 0, np.zeros_like(q), q).astype(q.dtype)


def xy_cmp(rng, sx, sy, dt):
    if dt == "bool":
        return rand(rng, sx, dt), rand(rng, sy, dt)
    return halves(rng, sx, dt), halves(rng, sy, dt)


def wrap_int(fn):
    def ref(x, y):
        with np.errstate(all="ignore"):
            out = fn(x, y)
        if x.dtype.kind in "iu":
            return np.asarray(out).astype(x.dtype)
        return out
    return ref


# op: (reference, input maker, tolerance kind)
BINARY = {
    "Add": (np.add, xy_add, "elem"),
    "AddV2": (np.add, xy_add, "elem"),
    "Sub": (np.subtract, xy_sub, "elem"),
    "Mul": (np.multiply, xy_mul, "elem"),
    "Div": (R.trunc_div, xy_div, "elem"),
    "RealDiv": (R.trunc_div, xy_div, "elem"),
    "FloorDiv": (R.floor_div, xy_div, "elem"),
    "FloorMod": (np.mod, xy_div, "elem"),
    "Maximum": (np.maximum, xy_cmp, "exact"),
    "Minimum": (np.minimum, xy_cmp, "exact"),
    "Pow": (R.int_pow, xy_pow, "transc"),
    "SquaredDifference": (lambda x, y: (x - y) ** 2, xy_sqdiff, "elem"),
    "Atan2": (np.arctan2, xy_sqdiff, "transc"),
    "DivNoNan": (div_no_nan, xy_div_no_nan, "elem"),
}

_INF, _NAN = np.inf, np.nan
# Special float operands per op: infinities, NaN, signed zeros, division by zero.
BINARY_SPECIAL = {
    op: (np.array([_INF, -_INF, _NAN, 1.0, 0.0, -0.0, _INF, 2.0]),
         np.array([1.0, _INF, 2.0, _NAN, 3.0, 0.0, -_INF, -0.0]))
    for op in ("Add", "AddV2", "Sub", "Mul", "SquaredDifference")
}
BINARY_SPECIAL.update({
    op: (np.array([1.0, -1.0, 0.0, _INF, _NAN, 3.0, -0.0]),
         np.array([0.0, 0.0, 0.0, 2.0, 1.0, _INF, 5.0]))
    for op in ("Div", "RealDiv", "FloorDiv", "FloorMod")
})
BINARY_SPECIAL.update({
    op: (np.array([_INF, -_INF, 0.0, -0.0, 1.0]), np.array([1.0, 1.0, -0.0, 0.0, -_INF]))
    for op in ("Maximum", "Minimum")
})
# Atan2(y, x): signed zeros pick the half plane, infinities the diagonals.
BINARY_SPECIAL["Atan2"] = (np.array([0.0, -0.0, 0.0, -0.0, 1.0, _INF, _INF, -_INF, _NAN, -1.0]),
                           np.array([0.0, 0.0, -0.0, -0.0, 0.0, _INF, -_INF, -_INF, 1.0, -0.0]))
BINARY_SPECIAL["Pow"] = (np.array([0.0, -2.0, 2.0, _INF, 1.0, _NAN, 4.0]),
                         np.array([-1.0, 0.5, _INF, -1.0, _NAN, 0.0, 0.5]))

COMPARE = {
    "Less": np.less, "LessEqual": np.less_equal, "Greater": np.greater,
    "GreaterEqual": np.greater_equal, "Equal": np.equal, "NotEqual": np.not_equal,
}


def gen_binary(op):
    fn, maker, tol = BINARY[op]
    ref = wrap_int(fn)

    def gen(dt, rng):
        cases = []
        for name, sx, sy in BINARY_SHAPES:
            x, y = maker(rng, sx, sy, dt)
            cases.append(Case(name, [In(x, dt), In(y, dt)], ref=ref, tol=tol))
        if R.is_float(dt) and op in BINARY_SPECIAL:
            x, y = BINARY_SPECIAL[op]
            cases.append(Case("special", [In(x, dt), In(y, dt)], ref=ref, tol=tol))
        return cases
    return gen


def gen_compare(op):
    fn = COMPARE[op]

    def gen(dt, rng):
        cases = []
        for name, sx, sy in BINARY_SHAPES:
            x, y = xy_cmp(rng, sx, sy, dt)
            cases.append(Case(name, [In(x, dt), In(y, dt)], ref=fn, tol="exact"))
        if dt in ("float32", "float64"):
            x = np.array([np.nan, np.nan, 1.0, np.inf, -np.inf, 0.0])
            y = np.array([np.nan, 1.0, np.nan, np.inf, np.inf, -0.0])
            cases.append(Case("nan_inf", [In(x, dt), In(y, dt)], ref=fn, tol="exact"))
        if op in ("Equal", "NotEqual"):
            x, y = xy_cmp(rng, (2, 3), (4,), dt)
            cases.append(Case("incompatible_no_error", [In(x, dt), In(y, dt)],
                              {"incompatible_shape_error": False},
                              ref=lambda a, b: np.asarray(op == "NotEqual"), tol="exact"))
        return cases
    return gen


def gen_logical(op):
    fn = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or}[op]

    def gen(dt, rng):
        return [Case(name, [In(rand(rng, sx, "bool"), "bool"), In(rand(rng, sy, "bool"), "bool")],
                     ref=fn, tol="exact") for name, sx, sy in BINARY_SHAPES]
    return gen


def gen_logical_not(dt, rng):
    return [Case("random", [In(rand(rng, (3, 4), "bool"), "bool")], ref=np.logical_not),
            Case("scalar", [In(np.bool_(True), "bool")], ref=np.logical_not),
            Case("empty", [In(np.zeros((0, 2), bool), "bool")], ref=np.logical_not)]


def gen_select(dt, rng):
    t, e = general(rng, (3, 4), dt), general(rng, (3, 4), dt)
    c = rand(rng, (3, 4), "bool")
    cv = rand(rng, (3,), "bool")
    return [
        Case("same_shape", [In(c, "bool"), In(t, dt), In(e, dt)], ref=np.where, tol="exact"),
        Case("vector_cond", [In(cv, "bool"), In(t, dt), In(e, dt)],
             ref=lambda c_, t_, e_: np.where(c_[:, None], t_, e_), tol="exact"),
        Case("scalar_cond", [In(np.bool_(False), "bool"), In(t, dt), In(e, dt)],
             ref=np.where, tol="exact"),
    ]


def gen_select_v2(dt, rng):
    return [
        Case("same_shape", [In(rand(rng, (3, 4), "bool"), "bool"), In(general(rng, (3, 4), dt), dt),
                            In(general(rng, (3, 4), dt), dt)], ref=np.where, tol="exact"),
        Case("bcast", [In(rand(rng, (3, 1), "bool"), "bool"), In(general(rng, (1, 4), dt), dt),
                       In(general(rng, (3, 4), dt), dt)], ref=np.where, tol="exact"),
        Case("scalar_branches", [In(rand(rng, (2, 3), "bool"), "bool"),
                                 In(general(rng, (), dt), dt), In(general(rng, (), dt), dt)],
             ref=np.where, tol="exact"),
        Case("empty", [In(rand(rng, (0, 3), "bool"), "bool"), In(general(rng, (0, 3), dt), dt),
                       In(general(rng, (1, 3), dt), dt)], ref=np.where, tol="exact"),
    ]


def gen_cast(src, rng):
    """SrcT = src, one case per destination dtype. Values are exact in every
    dtype involved: multiples of 1/4 below 32 (floats), integers below 32,
    non-negative when either side is unsigned."""
    cases = []
    for dst in R.ALL13:
        nonneg = src in R.UNSIGNED or dst in R.UNSIGNED
        lo = 0 if nonneg else -31
        if src == "bool":
            x = rand(rng, (3, 4), "bool")
        elif R.is_float(src):
            x = rng.integers(lo * 4, 31 * 4 + 1, size=(3, 4)) / 4.0
            x[0, 0] = 0.0
        else:
            x = rng.integers(lo, 32, size=(3, 4))
            x[0, 0] = 0

        def ref(v, dst=dst):
            if dst == "bool":
                return v != 0
            if R.is_int(dst):
                return np.trunc(v).astype(dst) if v.dtype.kind == "f" else v.astype(dst)
            return v.astype(np.float64)
        cases.append(Case(f"to_{dst}", [In(x, src)], {"DstT": pdtype(dst)}, ref=ref,
                          tol="exact", out_dtypes=[dst]))
    if src in ("float32", "float64"):
        # Inexact values: round to nearest even, like NumPy (bfloat16: through
        # float32, as Eigen's conversion does).
        x = rng.uniform(-100, 100, size=(5, 7))
        x[0, :3] = [70000.0, -70000.0, 1e-9]  # half overflow and underflow
        xv = R.as_dtype_values(x, src)
        with np.errstate(over="ignore"):
            to_half = xv.astype(np.float16).astype(np.float64)
        cases.append(Case("round_to_float16", [In(xv, src)], {"DstT": pdtype("float16")},
                          expected=[to_half], tol="exact",
                          out_dtypes=["float16"]))
        cases.append(Case("round_to_bfloat16", [In(xv, src)], {"DstT": pdtype("bfloat16")},
                          expected=[R.round_bf16(xv.astype(np.float32)).astype(np.float64)],
                          tol="exact", out_dtypes=["bfloat16"]))
    if src in ("int32", "int64"):
        x = rng.integers(-(2 ** 30), 2 ** 30, size=(4, 5)).astype(src)
        cases.append(Case("large_to_float32", [In(x, src)], {"DstT": pdtype("float32")},
                          expected=[x.astype(np.float32).astype(np.float64)], tol="exact",
                          out_dtypes=["float32"]))
    cases.append(Case("scalar_to_float32", [In(np.asarray(True if src == "bool" else 3), src)],
                      {"DstT": pdtype("float32")},
                      ref=lambda v: v.astype(np.float64), out_dtypes=["float32"], tol="exact"))
    return cases


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def red_values(fn, rng, shape, dt):
    if fn == "prod":
        if R.is_float(dt):
            return rand_nonzero(rng, shape, dt, 0.5, 1.5)
        # Mostly 1s with a few 2s (and -1s for signed types); every |value| >= 1,
        # so the product over all axes is the largest and must fit int8/uint8.
        choices = [1, 1, 1, 1, 2] + ([] if dt in R.UNSIGNED else [-1, -1])
        for _ in range(1000):
            v = rng.choice(choices, size=shape)
            if abs(int(np.prod(v))) <= 100:
                return v.astype(dt)
        raise AssertionError("no small product found")
    if R.is_float(dt):
        return rand(rng, shape, dt, -1, 1)
    if dt in R.UNSIGNED:
        return rand(rng, shape, dt, 0, 5)  # 24 * 5 fits uint8
    return rand(rng, shape, dt, -5, 5)  # 24 * 5 fits int8


def gen_reduction(op):
    fn = op.lower()

    def gen(dt, rng):
        x = In(red_values(fn, rng, (2, 3, 4), dt), dt)
        tol = "exact" if fn in ("max", "min") else "accum"

        def ref(axis, keep=False):
            return lambda v, a: R.reduce(fn, v, axis, keep, dt)
        cases = [
            Case("axis1", [x, ti(1)], ref=ref(1), tol=tol),
            Case("axes02_keepdims", [x, ti([0, 2])], {"keep_dims": True},
                 ref=ref([0, 2], True), tol=tol),
            Case("neg_axis_int64", [x, ti(-1, "int64")], ref=ref(-1), tol=tol),
            Case("all_axes", [x, ti([0, 1, 2])], ref=ref([0, 1, 2]), tol=tol),
            Case("no_axes", [x, ti(np.zeros((0,), np.int64))], ref=ref([]), tol=tol),
            Case("scalar", [In(red_values(fn, rng, (), dt), dt), ti(np.zeros((0,), np.int64))],
                 ref=ref([]), tol=tol),
        ]
        if fn != "prod" and not (R.is_int(dt) and fn in ("sum", "mean")):
            # Long rows and columns, sums of up to 131 terms (not for integer
            # sums, which would overflow int8/uint8).
            big = In(red_values(fn, rng, (37, 131), dt), dt)
            cases += [Case("large_rows", [big, ti(1)], ref=ref(1), tol=tol),
                      Case("large_cols", [big, ti(0)], ref=ref(0), tol=tol)]
        if fn in ("sum", "prod", "mean"):
            cases.append(Case("reduce_empty" if fn != "mean" else "empty_kept",
                              [In(red_values(fn, rng, (0, 3), dt), dt),
                               ti(0 if fn != "mean" else 1)],
                              ref=ref(0 if fn != "mean" else 1), tol=tol))
        return cases
    return gen


def gen_all_any(op):
    fn = op.lower()

    def gen(tidx, rng):
        x = In(rand(rng, (3, 4), "bool"), "bool")
        return [
            Case("axis0", [x, ti(0, tidx)], ref=lambda v, a: R.reduce(fn, v, 0, False, "bool")),
            Case("axis-1_keepdims", [x, ti(-1, tidx)], {"keep_dims": True},
                 ref=lambda v, a: R.reduce(fn, v, -1, True, "bool")),
            Case("all_axes", [x, ti([0, 1], tidx)],
                 ref=lambda v, a: R.reduce(fn, v, [0, 1], False, "bool")),
            Case("empty", [In(np.zeros((0, 2), bool), "bool"), ti(0, tidx)],
                 ref=lambda v, a: R.reduce(fn, v, 0, False, "bool")),
        ]
    return gen


def gen_arg(op):
    npfn = np.argmax if op == "ArgMax" else np.argmin

    def gen(dt, rng):
        if dt == "bool":
            # One True (ArgMax) or one False (ArgMin) per row: no ties.
            x2 = np.eye(4, dtype=bool)[rng.permutation(4)][:3]
            x2 = x2 if op == "ArgMax" else ~x2
            x3 = np.stack([x2, x2[::-1]])
        else:
            x2 = distinct(rng, (3, 4), dt, axis=1)
            x3 = distinct(rng, (2, 3, 4), dt, axis=1)
        x2t = distinct(rng, (5, 3), dt, axis=0) if dt != "bool" else x2.T.copy()
        return [
            Case("axis0", [In(x2t, dt), ti(0)], ref=lambda v, a: npfn(v, axis=0).astype(np.int64),
                 out_dtypes=["int64"]),
            Case("axis1_int64", [In(x2, dt), ti(1, "int64")],
                 ref=lambda v, a: npfn(v, axis=1).astype(np.int64), out_dtypes=["int64"]),
            Case("neg_axis_out_int32", [In(x2, dt), ti(-1)], {"output_type": pdtype("int32")},
                 ref=lambda v, a: npfn(v, axis=-1).astype(np.int32), out_dtypes=["int32"]),
        ] + ([] if dt == "bool" else [
            Case("3d_axis1", [In(x3, dt), ti(1)], ref=lambda v, a: npfn(v, axis=1).astype(np.int64),
                 out_dtypes=["int64"])])
    return gen


# ---------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------


def mm_values(rng, shape, dt):
    if R.is_int(dt):
        return rand(rng, shape, dt, 0 if dt in R.UNSIGNED else -3, 3)
    return rand(rng, shape, dt, -1, 1)


def mm_tol(dt):
    return "exact" if R.is_int(dt) else "accum"


def mm_ref(ta=False, tb=False):
    def ref(a, b):
        a = np.swapaxes(a, -1, -2) if ta else a
        b = np.swapaxes(b, -1, -2) if tb else b
        if a.dtype.kind in "iu":
            return np.matmul(a.astype(np.int64), b.astype(np.int64))
        return np.matmul(a, b)
    return ref


def gen_matmul(dt, rng):
    def case(name, sa, sb, ta=False, tb=False):
        attrs = {}
        if ta:
            attrs["transpose_a"] = True
        if tb:
            attrs["transpose_b"] = True
        return Case(name, [In(mm_values(rng, sa, dt), dt), In(mm_values(rng, sb, dt), dt)], attrs,
                    ref=mm_ref(ta, tb), tol=mm_tol(dt), out_dtypes=[dt])
    return [case("plain", (3, 4), (4, 5)), case("transpose_a", (4, 3), (4, 5), ta=True),
            case("transpose_b", (3, 4), (5, 4), tb=True),
            case("transpose_ab", (4, 3), (5, 4), ta=True, tb=True),
            case("larger", (17, 33), (33, 9)), case("large_tb", (65, 129), (67, 129), tb=True),
            case("k0", (3, 0), (0, 5)), case("m0", (0, 4), (4, 5)),
            case("outer", (3, 1), (1, 4)), case("dot", (1, 7), (7, 1))]


def gen_batch_matmul(op):
    def gen(dt, rng):
        out = dt
        attrs0 = {}
        if op == "BatchMatMulV3":
            out = "int32" if dt in ("int8", "uint8") else dt
            attrs0 = {"Tout": pdtype(out)}

        def case(name, sa, sb, ax=False, ay=False):
            attrs = dict(attrs0)
            if ax:
                attrs["adj_x"] = True
            if ay:
                attrs["adj_y"] = True
            return Case(name, [In(mm_values(rng, sa, dt), dt), In(mm_values(rng, sb, dt), dt)],
                        attrs, ref=mm_ref(ax, ay), tol=mm_tol(dt), out_dtypes=[out])
        cases = [case("plain", (2, 3, 4), (2, 4, 5)), case("adj_x", (2, 4, 3), (2, 4, 5), ax=True),
                 case("adj_y", (2, 3, 4), (2, 5, 4), ay=True),
                 case("adj_xy", (3, 4, 3), (3, 5, 4), ax=True, ay=True),
                 case("rank4", (2, 2, 3, 4), (2, 2, 4, 2)), case("empty_batch", (0, 3, 4), (0, 4, 2)),
                 case("large", (17, 9, 33), (17, 33, 5))]
        if op != "BatchMatMul":
            cases += [case("bcast_batch", (2, 1, 3, 4), (3, 4, 5)),
                      case("bcast_rank2", (3, 4), (2, 4, 5))]
        return cases
    return gen


EINSUM_EQUATIONS = [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("transpose", "ij->ji", [(3, 4)]),
    ("reduce", "ij->j", [(3, 4)]),
    ("dot", "i,i->", [(6,), (6,)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("attention", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ellipsis", "...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("transposed_rhs", "ij,kj->ik", [(3, 4), (5, 4)]),
    ("diagonal", "ii->i", [(4, 4)]),
    ("trace", "ii->", [(4, 4)]),
    ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    # Keras MultiHeadAttention's two products, strided views of [B,T,N,H].
    ("mha_scores", "BTNH,BSNH->BNTS", [(2, 5, 3, 4), (2, 6, 3, 4)]),
    ("mha_values", "BNTS,BSNH->BTNH", [(2, 3, 5, 6), (2, 6, 3, 4)]),
    ("transposed_lhs_and_out", "kbi,kj->bji", [(4, 2, 3), (4, 5)]),
    ("unit_dims", "bxk,bky->byx", [(3, 1, 4), (3, 4, 1)]),
]


def gen_einsum(dt, rng):
    cases = []
    for name, eq, shapes in EINSUM_EQUATIONS:
        ins = [In(mm_values(rng, s, dt), dt) for s in shapes]

        def ref(values, eq=eq):
            if values[0].dtype.kind in "iu":
                return np.einsum(eq, *[v.astype(np.int64) for v in values])
            return np.einsum(eq, *values)
        cases.append(Case(name, [ins], {"equation": eq}, ref=ref, tol=mm_tol(dt),
                          out_dtypes=[dt]))
    return cases


# ---------------------------------------------------------------------------
# Convolution, pooling, bias, batch norm and the fused ops
# ---------------------------------------------------------------------------


def conv_values(rng, shape, dt):
    if R.is_int(dt):
        return rand(rng, shape, dt, -3, 3)
    return rand(rng, shape, dt, -1, 1)


# name: (strides hw, padding, dilations hw, explicit ((t, b), (l, r)) or None, NCHW)
CONV_VARIANTS = [
    ("valid", (1, 1), "VALID", (1, 1), None, False),
    ("same", (1, 1), "SAME", (1, 1), None, False),
    ("stride2_same", (2, 2), "SAME", (1, 1), None, False),
    ("stride21_valid", (2, 1), "VALID", (1, 1), None, False),
    ("dilation2_valid", (1, 1), "VALID", (2, 2), None, False),
    ("dilation2_same", (1, 1), "SAME", (2, 2), None, False),
    ("explicit", (1, 1), "EXPLICIT", (1, 1), ((0, 1), (2, 1)), False),
    ("nchw_same", (1, 1), "SAME", (1, 1), None, True),
    ("nchw_stride2_valid", (2, 2), "VALID", (1, 1), None, True),
]


def conv_attrs(strides, padding, dil, explicit, nchw_fmt):
    s = [1, 1, strides[0], strides[1]] if nchw_fmt else [1, strides[0], strides[1], 1]
    d = [1, 1, dil[0], dil[1]] if nchw_fmt else [1, dil[0], dil[1], 1]
    attrs = {"strides": s, "padding": padding}
    if dil != (1, 1):
        attrs["dilations"] = d
    if nchw_fmt:
        attrs["data_format"] = "NCHW"
    if explicit:
        pairs = [(0, 0), (0, 0), explicit[0], explicit[1]] if nchw_fmt else \
            [(0, 0), explicit[0], explicit[1], (0, 0)]
        attrs["explicit_paddings"] = [v for p in pairs for v in p]
    return attrs


def gen_conv(depthwise, variants=CONV_VARIANTS):
    def gen(dt, rng):
        cases = []
        for name, strides, padding, dil, explicit, nchw_fmt in variants:
            x = conv_values(rng, (2, 6, 7, 3), dt)
            w = conv_values(rng, (3, 3, 3, 2 if depthwise else 4), dt)

            def ref(xv, wv, strides=strides, padding=padding, dil=dil, explicit=explicit,
                    nchw_fmt=nchw_fmt):
                xv = R.nhwc(xv) if nchw_fmt else xv
                out = R.conv2d(xv, wv, strides, padding, dil, explicit, depthwise)
                return R.nchw(out) if nchw_fmt else out
            cases.append(Case(name, [In(R.nchw(x) if nchw_fmt else x, dt), In(w, dt)],
                              conv_attrs(strides, padding, dil, explicit, nchw_fmt), ref=ref,
                              tol=mm_tol(dt), out_dtypes=[dt]))
        # More channels and batch: the GEMM-based paths.
        x = conv_values(rng, (3, 9, 10, 17), dt)
        w = conv_values(rng, (3, 3, 17, 2 if depthwise else 19), dt)
        cases.append(Case("large_same", [In(x, dt), In(w, dt)], {"strides": [1, 1, 1, 1],
                                                                 "padding": "SAME"},
                          ref=lambda a, b: R.conv2d(a, b, (1, 1), "SAME", (1, 1), None,
                                                    depthwise),
                          tol=mm_tol(dt), out_dtypes=[dt]))
        # One input channel and many outputs: the cpu plugin's direct kernel
        # for first layers (whole and partial blocks of 16 output channels,
        # more than four blocks, pixel blocks that span rows and images).
        if not depthwise:
            few = [(1, 28, "valid"), (1, 28, "stride21_valid"), (1, 70, "stride2_same"),
                   (1, 8, "explicit"), (1, 64, "dilation2_same"), (1, 16, "nchw_same")]
            table = {v[0]: v for v in variants}
            for c, f, vname in few:
                if vname not in table:
                    continue
                _, strides, padding, dil, explicit, nchw_fmt = table[vname]
                x = conv_values(rng, (2, 9, 8, c), dt)
                w = conv_values(rng, (3, 3, c, f), dt)

                def ref(xv, wv, strides=strides, padding=padding, dil=dil, explicit=explicit,
                        nchw_fmt=nchw_fmt):
                    xv = R.nhwc(xv) if nchw_fmt else xv
                    out = R.conv2d(xv, wv, strides, padding, dil, explicit, False)
                    return R.nchw(out) if nchw_fmt else out
                cases.append(Case(f"few_channels_c{c}_f{f}_{vname}",
                                  [In(R.nchw(x) if nchw_fmt else x, dt), In(w, dt)],
                                  conv_attrs(strides, padding, dil, explicit, nchw_fmt), ref=ref,
                                  tol=mm_tol(dt), out_dtypes=[dt]))
        # Narrow output rows with a partial block of output channels and a
        # large window (kws_cnn_s's second layer): the cpu plugin's im2col
        # path, its row blocks split among the threads.
        if not depthwise:
            x = conv_values(rng, (4, 40, 7, 28), dt)
            w = conv_values(rng, (10, 4, 28, 30), dt)
            cases.append(Case("narrow_rows", [In(x, dt), In(w, dt)],
                              {"strides": [1, 2, 1, 1], "padding": "VALID"},
                              ref=lambda a, b: R.conv2d(a, b, (2, 1), "VALID", (1, 1), None, False),
                              # sums of 1120 products: float32's rounding reaches 1e-5 absolute
                              tol=(1e-4, 1e-4) if dt == "float32" else mm_tol(dt), out_dtypes=[dt]))
        # A 1x1 filter is a matmul over channels.
        x = conv_values(rng, (1, 4, 4, 3), dt)
        w = conv_values(rng, (1, 1, 3, 2 if depthwise else 5), dt)
        cases.append(Case("1x1", [In(x, dt), In(w, dt)], {"strides": [1, 1, 1, 1],
                                                          "padding": "VALID"},
                          ref=lambda a, b: R.conv2d(a, b, (1, 1), "VALID", (1, 1), None,
                                                    depthwise),
                          tol=mm_tol(dt), out_dtypes=[dt]))
        return cases
    return gen


POOL_VARIANTS = [
    ("2x2_s2_valid", (2, 2), (2, 2), "VALID", False),
    ("3x3_s1_same", (3, 3), (1, 1), "SAME", False),
    ("3x3_s2_same", (3, 3), (2, 2), "SAME", False),
    ("2x3_s12_valid", (2, 3), (1, 2), "VALID", False),
    ("nchw_3x3_s2_same", (3, 3), (2, 2), "SAME", True),
]


def gen_pool(kind):
    def gen(dt, rng):
        cases = []
        for name, k, s, padding, nchw_fmt in POOL_VARIANTS:
            x = general(rng, (2, 5, 6, 3), dt)
            attrs = {"ksize": [1, 1, k[0], k[1]] if nchw_fmt else [1, k[0], k[1], 1],
                     "strides": [1, 1, s[0], s[1]] if nchw_fmt else [1, s[0], s[1], 1],
                     "padding": padding}
            if nchw_fmt:
                attrs["data_format"] = "NCHW"

            def ref(xv, k=k, s=s, padding=padding, nchw_fmt=nchw_fmt):
                xv = R.nhwc(xv) if nchw_fmt else xv
                out = R.pool2d(xv, k, s, padding, kind)
                return R.nchw(out) if nchw_fmt else out
            cases.append(Case(name, [In(R.nchw(x) if nchw_fmt else x, dt)], attrs, ref=ref,
                              tol="exact" if kind == "max" else "accum", out_dtypes=[dt]))
        # Enough window reads (9.4M) for the cpu plugin to split the output
        # rows among its threads, and channels past a whole vector.
        x = general(rng, (8, 64, 64, 36), dt)
        cases.append(Case("large_3x3_s1_same", [In(x, dt)],
                          {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1], "padding": "SAME"},
                          ref=lambda xv: R.pool2d(xv, (3, 3), (1, 1), "SAME", kind),
                          tol="exact" if kind == "max" else "accum", out_dtypes=[dt]))
        return cases
    return gen


def gen_bias_add(dt, rng):
    x4 = general(rng, (2, 3, 4, 5), dt)
    return [
        Case("nhwc", [In(x4, dt), In(general(rng, (5,), dt), dt)], ref=R.bias_add),
        Case("nchw", [In(x4, dt), In(general(rng, (3,), dt), dt)], {"data_format": "NCHW"},
             ref=lambda x, b: R.bias_add(x, b, "NCHW")),
        Case("2d", [In(general(rng, (4, 6), dt), dt), In(general(rng, (6,), dt), dt)],
             ref=R.bias_add),
        Case("empty", [In(general(rng, (0, 6), dt), dt), In(general(rng, (6,), dt), dt)],
             ref=R.bias_add),
    ]


def bn_params(rng, c):
    scale = rng.uniform(0.5, 1.5, c).astype(np.float32)
    offset = rng.uniform(-1, 1, c).astype(np.float32)
    mean = rng.uniform(-0.5, 0.5, c).astype(np.float32)
    var = rng.uniform(0.5, 2.0, c).astype(np.float32)
    return scale, offset, mean, var


def gen_batch_norm(op):
    def gen(dt, rng):
        cases = []
        for name, fmt, eps in (("nhwc", "NHWC", 1e-3), ("nchw", "NCHW", 1e-3),
                               ("nhwc_default_eps", "NHWC", None)):
            x = rand(rng, (2, 3, 3, 4), dt, -2, 2)
            params = bn_params(rng, 4)
            attrs = {"is_training": False}
            if fmt == "NCHW":
                attrs["data_format"] = "NCHW"
            if eps is not None:
                attrs["epsilon"] = eps
            e = 1e-4 if eps is None else eps
            axis = 1 if fmt == "NCHW" else -1

            def ref(xv, s, o, m, v, e=e, axis=axis):
                y = R.batch_norm_inference(xv, s, o, m, v, e, axis)
                outs = [y, m, v, m, v]
                return outs + ([np.zeros(())] if op == "FusedBatchNormV3" else [])
            out_dtypes = [dt] + ["float32"] * 4 + (["skip"] if op == "FusedBatchNormV3" else [])
            cases.append(Case(name, [In(R.nchw(x) if fmt == "NCHW" else x, dt)] +
                              [In(p, "float32") for p in params], attrs, ref=ref, tol="accum",
                              out_dtypes=out_dtypes))
        return cases
    return gen


FUSED_VARIANTS = [
    ("bias", ["BiasAdd"]), ("bias_relu", ["BiasAdd", "Relu"]), ("bias_relu6", ["BiasAdd", "Relu6"]),
    ("bias_elu", ["BiasAdd", "Elu"]), ("bias_leakyrelu", ["BiasAdd", "LeakyRelu"]),
    ("bias_tanh", ["BiasAdd", "Tanh"]), ("bias_sigmoid", ["BiasAdd", "Sigmoid"]),
]
FUSED_BN_VARIANTS = [("batchnorm", ["FusedBatchNorm"]), ("batchnorm_relu", ["FusedBatchNorm", "Relu"]),
                     ("batchnorm_relu6", ["FusedBatchNorm", "Relu6"])]


def fused_epilogue(y, fused_ops, args, alpha, eps):
    if fused_ops[0] == "BiasAdd":
        y = y + args[0]
    else:
        y = R.batch_norm_inference(y, *args, eps)
    return R.activation(fused_ops[1] if len(fused_ops) > 1 else None, y, alpha)


def gen_fused_matmul(dt, rng):
    cases = []
    for name, fops in FUSED_VARIANTS + [("bias_relu_transpose_b", ["BiasAdd", "Relu"])]:
        tb = name.endswith("transpose_b")
        a = rand(rng, (3, 6), dt, -1, 1)
        b = rand(rng, (5, 6) if tb else (6, 5), dt, -1, 1)
        bias = rand(rng, (5,), dt, -1, 1)
        attrs = {"fused_ops": fops}
        if tb:
            attrs["transpose_b"] = True
        if "LeakyRelu" in fops:
            attrs["leakyrelu_alpha"] = 0.1

        def ref(av, bv, args, fops=fops, tb=tb):
            return fused_epilogue(av @ (bv.T if tb else bv), fops, args, 0.1, 1e-4)
        cases.append(Case(name, [In(a, dt), In(b, dt), [In(bias, dt)]], attrs, ref=ref,
                          tol="accum", out_dtypes=[dt]))
    return cases


def gen_fused_conv(depthwise):
    def gen(dt, rng):
        cases = []
        mult = 2
        out_c = 3 * mult if depthwise else 4
        for name, fops in FUSED_VARIANTS + FUSED_BN_VARIANTS + [("bias_same_stride2",
                                                                 ["BiasAdd", "Relu"])]:
            x = rand(rng, (1, 5, 6, 3), dt, -1, 1)
            w = rand(rng, (3, 3, 3, mult if depthwise else 4), dt, -1, 1)
            if fops[0] == "BiasAdd":
                args = [rand(rng, (out_c,), dt, -1, 1)]
            else:
                args = [v.astype(np.float64) for v in bn_params(rng, out_c)]
            stride = 2 if "stride2" in name else 1
            padding = "SAME" if "same" in name or fops[0] != "BiasAdd" else "VALID"
            attrs = {"fused_ops": fops, "strides": [1, stride, stride, 1],
                     "padding": padding, "epsilon": 1e-3}
            if "LeakyRelu" in fops:
                attrs["leakyrelu_alpha"] = 0.1

            def ref(xv, wv, argv, fops=fops, stride=stride, padding=padding):
                y = R.conv2d(xv, wv, (stride, stride), padding, (1, 1), None, depthwise)
                return fused_epilogue(y, fops, argv, 0.1, 1e-3)
            cases.append(Case(name, [In(x, dt), In(w, dt), [In(a, dt) for a in args]], attrs,
                              ref=ref, tol="accum", out_dtypes=[dt]))
            if depthwise:
                continue
            # One input channel, 20 outputs: the cpu plugin's direct kernel for
            # few channels, its epilogue on the registers or after.
            x = rand(rng, (2, 7, 6, 1), dt, -1, 1)
            w = rand(rng, (3, 2, 1, 20), dt, -1, 1)
            if fops[0] == "BiasAdd":
                args = [rand(rng, (20,), dt, -1, 1)]
            else:
                args = [v.astype(np.float64) for v in bn_params(rng, 20)]

            def ref(xv, wv, argv, fops=fops, stride=stride, padding=padding):
                y = R.conv2d(xv, wv, (stride, stride), padding, (1, 1), None, False)
                return fused_epilogue(y, fops, argv, 0.1, 1e-3)
            cases.append(Case(name + "_few_channels", [In(x, dt), In(w, dt), [In(a, dt) for a in args]],
                              attrs, ref=ref, tol="accum", out_dtypes=[dt]))
        return cases
    return gen


def gen_fused_conv_add(dt, rng):
    # _PlexusFusedConv2DAdd: _FusedConv2D's epilogue, + the addend, then the activation.
    cases = []
    for name, fops in [("bias", ["BiasAdd"]), ("bias_relu", ["BiasAdd", "Relu"]),
                       ("bias_leakyrelu", ["BiasAdd", "LeakyRelu"]),
                       ("batchnorm_relu6", ["FusedBatchNorm", "Relu6"]),
                       ("bias_relu_same_stride2", ["BiasAdd", "Relu"])]:
        stride = 2 if "stride2" in name else 1
        padding = "SAME" if "same" in name else "VALID"
        x = rand(rng, (2, 5, 6, 3), dt, -1, 1)
        w = rand(rng, (3, 3, 3, 4), dt, -1, 1)
        out_shape = (2, 3, 3, 4) if stride == 2 else (2, 3, 4, 4)
        if fops[0] == "BiasAdd":
            args = [rand(rng, (4,), dt, -1, 1)]
        else:
            args = [v.astype(np.float64) for v in bn_params(rng, 4)]
        addend = rand(rng, out_shape, dt, -2, 2)
        attrs = {"fused_ops": fops, "strides": [1, stride, stride, 1], "padding": padding, "epsilon": 1e-3}
        if "LeakyRelu" in fops:
            attrs["leakyrelu_alpha"] = 0.1

        def ref(xv, wv, argv, av, fops=fops, stride=stride, padding=padding):
            y = R.conv2d(xv, wv, (stride, stride), padding, (1, 1), None, False)
            y = fused_epilogue(y, fops[:1], argv, 0.1, 1e-3) + av
            return R.activation(fops[1] if len(fops) > 1 else None, y, 0.1)
        cases.append(Case(name, [In(x, dt), In(w, dt), [In(a, dt) for a in args], In(addend, dt)], attrs,
                          ref=ref, tol="accum", out_dtypes=[dt]))
    # One input channel, 24 outputs: the cpu plugin's direct kernel for few
    # channels, the addend added after the product.
    x = rand(rng, (2, 5, 6, 1), dt, -1, 1)
    w = rand(rng, (3, 3, 1, 24), dt, -1, 1)
    bias = rand(rng, (24,), dt, -1, 1)
    addend = rand(rng, (2, 5, 6, 24), dt, -2, 2)
    cases.append(Case("bias_relu_few_channels", [In(x, dt), In(w, dt), [In(bias, dt)], In(addend, dt)],
                      {"fused_ops": ["BiasAdd", "Relu"], "strides": [1, 1, 1, 1], "padding": "SAME",
                       "epsilon": 1e-3},
                      ref=lambda xv, wv, argv, av: R.activation(
                          "Relu", R.conv2d(xv, wv, (1, 1), "SAME", (1, 1), None, False) + argv[0] + av, 0.1),
                      tol="accum", out_dtypes=[dt]))
    return cases


def gen_fused_elementwise(dt, rng):
    x, y = rand(rng, (2, 3), dt, -2, 2), rand(rng, (2, 3), dt, -2, 2)
    s = rand(rng, (1,), dt, -1, 1)
    p = rand(rng, (2, 3), dt, 0.5, 2)
    return [
        Case("mul_add_relu", [[In(x, dt), In(y, dt), In(s, dt)]],
             {"shape": [2, 3], "program": ["Mul i0 i1", "AddV2 r0 i2", "Relu r1"]},
             ref=lambda v: R.relu(v[0] * v[1] + v[2]), tol="elem"),
        Case("constants_tanh", [[In(x, dt)]],
             {"shape": [2, 3], "program": ["Sub i0 c0.5", "Tanh r0", "Maximum r1 c-0.25"]},
             ref=lambda v: np.maximum(np.tanh(v[0] - 0.5), -0.25), tol="transc"),
        Case("unary_chain", [[In(p, dt), In(y, dt)]],
             {"shape": [2, 3], "program": ["Sqrt i0", "Reciprocal r0", "SquaredDifference r1 i1",
                                           "Sigmoid r2", "Neg r3", "Relu6 r4", "Exp r3",
                                           "Maximum r6 r5", "Log i0", "RealDiv r8 r7"]},
             ref=lambda v: np.log(v[0]) / np.maximum(
                 np.exp(R.sigmoid((1 / np.sqrt(v[0]) - v[1]) ** 2)),
                 R.relu6(-R.sigmoid((1 / np.sqrt(v[0]) - v[1]) ** 2))),
             tol="transc"),
    ]


def gen_layer_norm(dt, rng):
    def ref(eps):
        def f(x, gamma, beta):
            x = x.astype(np.float64)
            mean = x.mean(axis=-1, keepdims=True)
            var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
            return (x - mean) / np.sqrt(var + eps) * gamma + beta
        return f
    x = rand(rng, (3, 4, 37), dt, -3, 5)
    g, b = rand(rng, (37,), dt, 0.5, 2), rand(rng, (37,), dt, -1, 1)
    row = rand(rng, (5,), dt, -1, 1)
    return [
        # 37 columns: two whole 16-lane blocks and a tail.
        Case("rows", [In(x, dt), In(g, dt), In(b, dt)], {"epsilon": 1e-3}, ref=ref(1e-3), tol="accum"),
        Case("one_row", [In(row, dt), In(row, dt), In(row, dt)], {"epsilon": 1e-6}, ref=ref(1e-6),
             tol="accum"),
    ]


# ---------------------------------------------------------------------------
# IsFinite / IsNan / IsInf and the cumulative ops
# ---------------------------------------------------------------------------


def gen_float_class(fn):
    def gen(dt, rng):
        # Half overflows to inf at 65520, float and bfloat16 near 3.4e38.
        with np.errstate(over="ignore"):
            special = In(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 65504.0, 7e4, 1e-8,
                                   3e38, -1e39]), dt)
        return [Case("random", [In(rand(rng, (3, 5), dt, -1e4, 1e4), dt)], ref=fn, tol="exact"),
                Case("special", [special], ref=fn, tol="exact"),
                Case("scalar", [In(np.array(np.nan), dt)], ref=fn, tol="exact"),
                Case("empty", [In(np.zeros((0, 2)), dt)], ref=fn, tol="exact")]
    return gen


def gen_scan(product):
    """Cumsum / Cumprod over axes, exclusive x reverse, empty and long inputs."""
    def gen(dt, rng):
        if R.is_float(dt):
            lo, hi = (0.5, 1.5) if product else (-3, 3)
        elif dt in R.UNSIGNED:
            lo, hi = (0, 3) if product else (0, 15)
        else:
            lo, hi = (-3, 3) if product else (-10, 10)

        def ref(axis, exclusive=False, reverse=False):
            return lambda v, a: R.cumulative(v, axis, exclusive, reverse, product, dt)

        x = In(rand(rng, (3, 4, 5), dt, lo, hi), dt)
        cases = []
        for exclusive in (False, True):
            for reverse in (False, True):
                attrs = {"exclusive": exclusive, "reverse": reverse}
                name = f"{'excl' if exclusive else 'incl'}_{'rev' if reverse else 'fwd'}"
                cases.append(Case(f"axis1_{name}", [x, ti(1)], attrs, ref(1, exclusive, reverse),
                                  tol="accum"))
                cases.append(Case(f"axis-1_{name}", [x, ti(-1, "int64")], attrs,
                                  ref(-1, exclusive, reverse), tol="accum"))
        cases += [
            Case("axis0", [x, ti(0)], ref=ref(0), tol="accum"),
            Case("axis-3_rev", [x, ti(-3)], {"reverse": True}, ref(-3, False, True), tol="accum"),
            Case("vector", [In(rand(rng, (7,), dt, lo, hi), dt), ti(0)], ref=ref(0), tol="accum"),
            Case("empty", [In(rand(rng, (0, 3), dt, lo, hi), dt), ti(0)], ref=ref(0),
                 tol="accum"),
            Case("empty_across", [In(rand(rng, (2, 0), dt, lo, hi), dt), ti(0)], ref=ref(0),
                 tol="accum"),
            # Long lines, contiguous and strided: a 16-bit running value rounds
            # at every step (the reference does too).
            Case("long", [In(rand(rng, (2, 301), dt, lo, hi), dt), ti(1)], ref=ref(1),
                 tol="accum"),
            Case("long_strided", [In(rand(rng, (301, 3), dt, lo, hi), dt), ti(0)],
                 {"exclusive": True}, ref(0, True, False), tol="accum"),
        ]
        if R.is_float(dt):
            v = np.array([1.0, np.inf, -2.0, np.nan, 0.5, -np.inf, 0.0, -0.0])
            cases.append(Case("special", [In(v, dt), ti(0)], ref=ref(0), tol="accum"))
        return cases
    return gen


def gen_reverse(dt, rng):
    x = In(arr(rng, (2, 3, 4), dt), dt)

    def ref(*axes):
        return lambda v, a: np.flip(v, axis=axes) if axes else v.copy()
    cases = [
        Case("axis1", [x, ti([1])], ref=ref(1), tol="exact"),
        Case("axes0_2", [x, ti([0, 2])], ref=ref(0, 2), tol="exact"),
        Case("negative_int64", [x, ti([-1, -3], "int64")], ref=ref(2, 0), tol="exact"),
        Case("all", [x, ti([2, 1, 0])], ref=ref(0, 1, 2), tol="exact"),
        Case("none", [x, ti(np.zeros((0,), np.int64))], ref=ref(), tol="exact"),
        Case("large", [In(arr(rng, (67, 131), dt), dt), ti([1])], ref=ref(1), tol="exact"),
        Case("empty", [In(arr(rng, (0, 3), dt), dt), ti([1])], ref=ref(1), tol="exact"),
        Case("scalar", [In(arr(rng, (), dt), dt), ti(np.zeros((0,), np.int64))], ref=ref(),
             tol="exact"),
    ]
    if R.is_float(dt):
        v = np.array([[np.inf, -np.inf, np.nan], [-0.0, 1.5, 0.0]])
        cases.append(Case("special", [In(v, dt), ti([0, 1])], ref=ref(0, 1), tol="exact"))
    return cases


def gen_band_part(dt, rng):
    x = In(arr(rng, (3, 4), dt), dt)

    def ref(lower, upper):
        return lambda v, lo, up: R.band_part(v, lower, upper)
    return [
        Case("lower", [x, ti(-1, "int64"), ti(0, "int64")], ref=ref(-1, 0), tol="exact"),
        Case("upper", [x, ti(0, "int64"), ti(-1, "int64")], ref=ref(0, -1), tol="exact"),
        Case("diag_int32", [x, ti(0), ti(0)], ref=ref(0, 0), tol="exact"),
        Case("band", [In(arr(rng, (2, 5, 4), dt), dt), ti(1, "int64"), ti(2, "int64")],
             ref=ref(1, 2), tol="exact"),
        Case("limits", [x, ti(3, "int64"), ti(4, "int64")], ref=ref(3, 4), tol="exact"),
        Case("all", [x, ti(-1, "int64"), ti(-1, "int64")], ref=ref(-1, -1), tol="exact"),
        Case("empty", [In(arr(rng, (2, 0, 3), dt), dt), ti(0, "int64"), ti(1, "int64")],
             ref=ref(0, 1), tol="exact"),
    ]


# ---------------------------------------------------------------------------
# Array and shape ops
# ---------------------------------------------------------------------------


def arr(rng, shape, dt):
    return general(rng, shape, dt)


def gen_reshape(dt, rng):
    x = In(arr(rng, (2, 3, 4), dt), dt)
    return [
        Case("2d", [x, ti([4, 6])], ref=lambda v, s: v.reshape(4, 6), tol="exact"),
        Case("infer", [x, ti([-1])], ref=lambda v, s: v.reshape(-1), tol="exact"),
        Case("infer_mid_int64", [x, ti([2, -1, 2], "int64")], ref=lambda v, s: v.reshape(2, -1, 2),
             tol="exact"),
        Case("to_scalar", [In(arr(rng, (1, 1), dt), dt), ti(np.zeros((0,), np.int64))],
             ref=lambda v, s: v.reshape(()), tol="exact"),
        Case("from_scalar", [In(arr(rng, (), dt), dt), ti([1, 1])],
             ref=lambda v, s: v.reshape(1, 1), tol="exact"),
        Case("empty", [In(arr(rng, (0, 3), dt), dt), ti([3, 0])],
             ref=lambda v, s: v.reshape(3, 0), tol="exact"),
    ]


def gen_transpose(dt, rng):
    x = In(arr(rng, (2, 3, 4), dt), dt)
    return [
        Case("perm201", [x, ti([2, 0, 1])], ref=lambda v, p: v.transpose(2, 0, 1), tol="exact"),
        Case("2d_int64", [In(arr(rng, (5, 7), dt), dt), ti([1, 0], "int64")],
             ref=lambda v, p: v.T, tol="exact"),
        Case("identity", [x, ti([0, 1, 2])], ref=lambda v, p: v, tol="exact"),
        Case("large_2d", [In(arr(rng, (67, 131), dt), dt), ti([1, 0])], ref=lambda v, p: v.T,
             tol="exact"),
        Case("large_3d", [In(arr(rng, (9, 33, 17), dt), dt), ti([2, 0, 1])],
             ref=lambda v, p: v.transpose(2, 0, 1), tol="exact"),
        Case("rank4", [In(arr(rng, (2, 3, 4, 5), dt), dt), ti([0, 3, 1, 2])],
             ref=lambda v, p: v.transpose(0, 3, 1, 2), tol="exact"),
        Case("empty", [In(arr(rng, (0, 2, 3), dt), dt), ti([1, 2, 0])],
             ref=lambda v, p: v.transpose(1, 2, 0), tol="exact"),
        Case("scalar", [In(arr(rng, (), dt), dt), ti(np.zeros((0,), np.int64))],
             ref=lambda v, p: v, tol="exact"),
    ]


def gen_concat_v2(dt, rng):
    a, b, c = arr(rng, (2, 3), dt), arr(rng, (4, 3), dt), arr(rng, (2, 5), dt)
    return [
        Case("axis0", [[In(a, dt), In(b, dt)], ti(0)],
             ref=lambda vs, ax: np.concatenate(vs, 0), tol="exact"),
        Case("axis-1_three_int64", [[In(a, dt), In(c, dt), In(a, dt)], ti(-1, "int64")],
             ref=lambda vs, ax: np.concatenate(vs, -1), tol="exact"),
        Case("empty_piece", [[In(arr(rng, (0, 3), dt), dt), In(a, dt)], ti(0)],
             ref=lambda vs, ax: np.concatenate(vs, 0), tol="exact"),
        Case("1d", [[In(arr(rng, (3,), dt), dt), In(arr(rng, (1,), dt), dt)], ti(0)],
             ref=lambda vs, ax: np.concatenate(vs, 0), tol="exact"),
    ]


def gen_concat(dt, rng):
    a, b = arr(rng, (2, 3), dt), arr(rng, (2, 4), dt)
    return [
        Case("axis1", [ti(1), [In(a, dt), In(b, dt)]],
             ref=lambda ax, vs: np.concatenate(vs, 1), tol="exact"),
        Case("axis0_three", [ti(0), [In(a, dt), In(a, dt), In(a, dt)]],
             ref=lambda ax, vs: np.concatenate(vs, 0), tol="exact"),
    ]


def gen_split(dt, rng):
    x = arr(rng, (6, 4), dt)
    return [
        Case("axis0_3", [ti(0), In(x, dt)], {"num_split": 3},
             ref=lambda ax, v: np.split(v, 3, 0), tol="exact"),
        Case("axis-1_2", [ti(-1), In(x, dt)], {"num_split": 2},
             ref=lambda ax, v: np.split(v, 2, -1), tol="exact"),
        Case("one", [ti(1), In(x, dt)], {"num_split": 1},
             ref=lambda ax, v: [v], tol="exact"),
    ]


def gen_split_v(dt, rng):
    x = arr(rng, (7, 3), dt)
    return [
        Case("infer_axis0", [In(x, dt), ti([2, -1, 3]), ti(0)], {"num_split": 3},
             ref=lambda v, s, a: np.split(v, [2, 4], 0), tol="exact"),
        Case("axis1_int64", [In(x, dt), ti([1, 2], "int64"), ti(1)], {"num_split": 2},
             ref=lambda v, s, a: np.split(v, [1], 1), tol="exact"),
        Case("zero_piece", [In(x, dt), ti([0, 7]), ti(0)], {"num_split": 2},
             ref=lambda v, s, a: np.split(v, [0], 0), tol="exact"),
    ]


def gen_slice(dt, rng):
    x = In(arr(rng, (4, 5, 6), dt), dt)
    return [
        Case("basic", [x, ti([1, 0, 2]), ti([2, 3, 3])],
             ref=lambda v, b, s: v[1:3, 0:3, 2:5], tol="exact"),
        Case("size_minus1_int64", [x, ti([1, 2, 0], "int64"), ti([-1, 2, -1], "int64")],
             ref=lambda v, b, s: v[1:, 2:4, :], tol="exact"),
        Case("empty", [x, ti([0, 0, 0]), ti([0, 5, 6])],
             ref=lambda v, b, s: v[0:0], tol="exact"),
    ]


STRIDED_VARIANTS = [
    # name, begin, end, strides, masks
    ("basic", [1, 0, 2], [4, 6, 7], [1, 2, 1], {}),
    ("negative_stride", [-1, 5, 0], [-6, 0, 7], [-1, -2, 1], {}),
    ("begin_end_mask", [2, 1, 3], [0, 4, 5], [1, 1, 2], {"begin_mask": 1, "end_mask": 5}),
    ("shrink", [2, 0, -1], [3, 6, 0], [1, 1, 1], {"shrink_axis_mask": 5}),
    ("new_axis", [0, 1, 0, 0], [0, 3, 0, 0], [1, 1, 1, 1],
     {"new_axis_mask": 1, "begin_mask": 12, "end_mask": 12}),
    ("ellipsis", [0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}),
    ("ellipsis_shrink", [1, 0, 2], [2, 0, 3], [1, 1, 1],
     {"shrink_axis_mask": 1, "ellipsis_mask": 2, "end_mask": 0}),
    ("clamped", [-10, 2, 0], [10, 100, 7], [1, 3, 3], {}),
    ("empty_range", [3, 0, 0], [1, 6, 7], [1, 1, 1], {}),
]


def gen_strided_slice(dt, rng):
    x = arr(rng, (5, 6, 7), dt)
    cases = []
    for i, (name, b, e, s, masks) in enumerate(STRIDED_VARIANTS):
        idx = "int64" if i % 3 == 1 else "int32"
        cases.append(Case(name if idx == "int32" else name + "_int64",
                          [In(x, dt), ti(b, idx), ti(e, idx), ti(s, idx)], dict(masks),
                          ref=lambda v, bb, ee, ss, masks=masks: R.strided_slice(
                              v, bb, ee, ss, **masks), tol="exact"))
    return cases


def gen_pack(dt, rng):
    vs = [arr(rng, (2, 3), dt) for _ in range(3)]
    ins = [In(v, dt) for v in vs]
    return [
        Case("axis0", [ins], ref=lambda v: np.stack(v, 0), tol="exact"),
        Case("axis1", [ins], {"axis": 1}, ref=lambda v: np.stack(v, 1), tol="exact"),
        Case("axis-1", [ins], {"axis": -1}, ref=lambda v: np.stack(v, -1), tol="exact"),
        Case("scalars", [[In(arr(rng, (), dt), dt), In(arr(rng, (), dt), dt)]],
             ref=lambda v: np.stack(v), tol="exact"),
        Case("single", [[In(vs[0], dt)]], ref=lambda v: np.stack(v), tol="exact"),
    ]


def gen_unpack(dt, rng):
    x = arr(rng, (3, 4), dt)
    unstack = lambda v, axis: [np.take(v, i, axis=axis) for i in range(v.shape[axis])]  # noqa
    return [
        Case("axis0", [In(x, dt)], {"num": 3}, ref=lambda v: unstack(v, 0), tol="exact"),
        Case("axis1", [In(x, dt)], {"num": 4, "axis": 1}, ref=lambda v: unstack(v, 1),
             tol="exact"),
        Case("axis-1_3d", [In(arr(rng, (2, 3, 2), dt), dt)], {"num": 2, "axis": -1},
             ref=lambda v: unstack(v, -1), tol="exact"),
    ]


def gen_gather(dt, rng):
    p = In(arr(rng, (5, 3), dt), dt)
    return [
        Case("2d_indices", [p, ti([[0, 4, 2, 2], [1, 3, 0, 4]])],
             ref=lambda v, i: np.take(v, i, 0), tol="exact"),
        Case("int64_indices", [p, ti([4, 0], "int64")], ref=lambda v, i: np.take(v, i, 0),
             tol="exact"),
        Case("scalar_index", [p, ti(3)], ref=lambda v, i: np.take(v, i, 0), tol="exact"),
        Case("empty_indices", [p, ti(np.zeros((0,), np.int64))],
             ref=lambda v, i: np.take(v, i, 0), tol="exact"),
    ]


def gen_gather_v2(dt, rng):
    p = In(arr(rng, (4, 5, 3), dt), dt)
    return [
        Case("axis0", [p, ti([[3, 0], [1, 1]]), ti(0)],
             ref=lambda v, i, a: R.gather_v2(v, i, 0), tol="exact"),
        Case("axis1", [p, ti([4, 0, 2]), ti(1)],
             ref=lambda v, i, a: R.gather_v2(v, i, 1), tol="exact"),
        Case("axis-1_int64", [p, ti([2, 2, 0], "int64"), ti(-1, "int64")],
             ref=lambda v, i, a: R.gather_v2(v, i, -1), tol="exact"),
        Case("batch_dims1", [p, ti([[0, 4], [1, 1], [3, 2], [0, 0]]), ti(1)], {"batch_dims": 1},
             ref=lambda v, i, a: R.gather_v2(v, i, 1, 1), tol="exact"),
        Case("scalar_index", [p, ti(2), ti(1)], ref=lambda v, i, a: R.gather_v2(v, i, 1),
             tol="exact"),
    ]


def gen_gather_nd(dt, rng):
    p = In(arr(rng, (4, 5, 3), dt), dt)
    return [
        Case("slices", [p, ti([[0, 1], [3, 4]])], ref=R.gather_nd, tol="exact"),
        Case("rows_int64", [p, ti([[2], [0], [3]], "int64")], ref=R.gather_nd, tol="exact"),
        Case("elements", [p, ti([[[0, 0, 0], [3, 4, 2]], [[1, 2, 1], [2, 3, 0]]])],
             ref=R.gather_nd, tol="exact"),
        Case("empty_indices", [p, ti(np.zeros((0, 2), np.int64))], ref=R.gather_nd,
             tol="exact"),
    ]


def gen_pad(op):
    def ref(v, p, *rest):
        if v.ndim == 0:
            return v.copy()
        kw = {"constant_values": rest[0]} if rest else {}
        return np.pad(v, [tuple(int(x) for x in r) for r in p], **kw)

    def gen(dt, rng):
        extra = [In(general(rng, (), dt), dt)] if op == "PadV2" else []
        return [
            Case("2d", [In(arr(rng, (2, 3), dt), dt), ti([[1, 2], [0, 1]])] + extra,
                 ref=ref, tol="exact"),
            Case("3d_int64", [In(arr(rng, (2, 2, 3), dt), dt),
                              ti([[0, 0], [2, 1], [1, 0]], "int64")] + extra, ref=ref, tol="exact"),
            Case("empty_input", [In(arr(rng, (0, 2), dt), dt), ti([[1, 1], [0, 2]])] + extra,
                 ref=ref, tol="exact"),
            Case("scalar", [In(arr(rng, (), dt), dt), ti(np.zeros((0, 2), np.int64))] + extra,
                 ref=ref, tol="exact"),
        ]
    return gen


def gen_mirror_pad(dt, rng):
    x = arr(rng, (3, 4), dt)
    mk = lambda mode: lambda v, p: np.pad(  # noqa: E731
        v, [tuple(int(a) for a in r) for r in p], mode=mode.lower())
    return [
        Case("reflect", [In(x, dt), ti([[1, 2], [3, 0]])], {"mode": "REFLECT"}, ref=mk("REFLECT"),
             tol="exact"),
        Case("symmetric", [In(x, dt), ti([[3, 1], [2, 4]])], {"mode": "SYMMETRIC"},
             ref=mk("SYMMETRIC"), tol="exact"),
        Case("reflect_3d_int64", [In(arr(rng, (2, 3, 3), dt), dt),
                                  ti([[1, 0], [2, 2], [0, 1]], "int64")], {"mode": "REFLECT"},
             ref=mk("REFLECT"), tol="exact"),
    ]


def gen_tile(dt, rng):
    x = In(arr(rng, (2, 3), dt), dt)
    return [
        Case("rows", [x, ti([3, 1])], ref=lambda v, m: np.tile(v, (3, 1)), tol="exact"),
        Case("both_int64", [x, ti([2, 2], "int64")], ref=lambda v, m: np.tile(v, (2, 2)),
             tol="exact"),
        Case("3d", [In(arr(rng, (1, 2, 2), dt), dt), ti([2, 1, 3])],
             ref=lambda v, m: np.tile(v, (2, 1, 3)), tol="exact"),
        Case("zero", [x, ti([0, 2])], ref=lambda v, m: np.tile(v, (0, 2)), tol="exact"),
    ]


def gen_reverse_v2(dt, rng):
    x = In(arr(rng, (2, 3, 4), dt), dt)
    return [
        Case("middle", [x, ti([1])], ref=lambda v, a: v[:, ::-1, :], tol="exact"),
        Case("first_and_last_int64", [x, ti([0, -1], "int64")], ref=lambda v, a: v[::-1, :, ::-1],
             tol="exact"),
        Case("none", [x, ti(np.zeros(0, np.int32))], ref=lambda v, a: v, tol="exact"),
    ]


def gen_expand_dims(dt, rng):
    x = In(arr(rng, (2, 3), dt), dt)
    return [
        Case("dim0", [x, ti(0)], ref=lambda v, d: v[None], tol="exact"),
        Case("dim-1", [x, ti(-1)], ref=lambda v, d: v[..., None], tol="exact"),
        Case("dim1_int64", [x, ti(1, "int64")], ref=lambda v, d: v[:, None], tol="exact"),
        Case("scalar", [In(arr(rng, (), dt), dt), ti(0)], ref=lambda v, d: v[None],
             tol="exact"),
    ]


def gen_squeeze(dt, rng):
    x = In(arr(rng, (1, 3, 1, 2), dt), dt)
    return [
        Case("all", [x], ref=lambda v: np.squeeze(v), tol="exact"),
        Case("dim0", [x], {"squeeze_dims": [0]}, ref=lambda v: np.squeeze(v, 0), tol="exact"),
        Case("dim-2", [x], {"squeeze_dims": [-2]}, ref=lambda v: np.squeeze(v, -2), tol="exact"),
        Case("to_scalar", [In(arr(rng, (1, 1), dt), dt)], ref=lambda v: np.squeeze(v),
             tol="exact"),
    ]


def gen_shape(dt, rng):
    return [
        Case("int32", [In(arr(rng, (2, 3, 4), dt), dt)],
             ref=lambda v: np.array(v.shape, np.int32)),
        Case("int64", [In(arr(rng, (2, 3), dt), dt)], {"out_type": pdtype("int64")},
             ref=lambda v: np.array(v.shape, np.int64)),
        Case("scalar", [In(arr(rng, (), dt), dt)], ref=lambda v: np.zeros((0,), np.int32)),
        Case("empty", [In(arr(rng, (0, 3), dt), dt)], ref=lambda v: np.array([0, 3], np.int32)),
    ]


def gen_shape_n(dt, rng):
    a, b = arr(rng, (2, 3), dt), arr(rng, (4,), dt)
    return [
        Case("two", [[In(a, dt), In(b, dt)]],
             ref=lambda vs: [np.array(v.shape, np.int32) for v in vs]),
        Case("int64", [[In(b, dt), In(arr(rng, (), dt), dt), In(a, dt)]],
             {"out_type": pdtype("int64")},
             ref=lambda vs: [np.array(v.shape, np.int64) for v in vs]),
    ]


def gen_size(dt, rng):
    return [
        Case("int32", [In(arr(rng, (2, 3, 4), dt), dt)], ref=lambda v: np.int32(v.size)),
        Case("int64", [In(arr(rng, (5,), dt), dt)], {"out_type": pdtype("int64")},
             ref=lambda v: np.int64(v.size)),
        Case("scalar", [In(arr(rng, (), dt), dt)], ref=lambda v: np.int32(1)),
        Case("empty", [In(arr(rng, (0, 3), dt), dt)], ref=lambda v: np.int32(0)),
    ]


def gen_rank(dt, rng):
    return [
        Case("3d", [In(arr(rng, (2, 3, 4), dt), dt)], ref=lambda v: np.int32(3)),
        Case("scalar", [In(arr(rng, (), dt), dt)], ref=lambda v: np.int32(0)),
    ]


def gen_fill(dt, rng):
    v = arr(rng, (), dt)
    return [
        Case("2d", [ti([2, 3]), In(v, dt)], ref=lambda d, x: np.full((2, 3), x), tol="exact",
             out_dtypes=[dt]),
        Case("int64_dims", [ti([4], "int64"), In(v, dt)], ref=lambda d, x: np.full((4,), x),
             tol="exact", out_dtypes=[dt]),
        Case("scalar", [ti(np.zeros((0,), np.int64)), In(v, dt)], ref=lambda d, x: np.asarray(x),
             tol="exact", out_dtypes=[dt]),
        Case("empty", [ti([0, 3]), In(v, dt)], ref=lambda d, x: np.full((0, 3), x), tol="exact",
             out_dtypes=[dt]),
    ]


def gen_like(op):
    fill = 0 if op == "ZerosLike" else 1

    def ref(v):
        return np.full(v.shape, fill).astype(v.dtype)

    def gen(dt, rng):
        return [Case("2d", [In(arr(rng, (2, 3), dt), dt)], ref=ref, tol="exact", out_dtypes=[dt]),
                Case("scalar", [In(arr(rng, (), dt), dt)], ref=ref, tol="exact",
                     out_dtypes=[dt]),
                Case("empty", [In(arr(rng, (0, 2), dt), dt)], ref=ref, tol="exact",
                     out_dtypes=[dt])]
    return gen


def gen_range(dt, rng):
    def case(name, start, limit, delta):
        def ref(s, l, d):
            n = max(int(math.ceil((float(l) - float(s)) / float(d))), 0)
            return (float(s) + np.arange(n) * float(d)).astype(
                np.float64 if R.is_float(dt) else dt)
        return Case(name, [In(np.asarray(start), dt), In(np.asarray(limit), dt),
                           In(np.asarray(delta), dt)], ref=ref, tol="elem", out_dtypes=[dt])
    cases = [case("unit", 0, 10, 1), case("step4", 3, 20, 4), case("empty", 5, 5, 1)]
    if dt not in R.UNSIGNED:
        cases.append(case("negative_delta", 10, -2, -3))
    if R.is_float(dt):
        cases.append(case("fractional", 0.5, 3.0, 0.25))
    return cases


def gen_one_hot(dt, rng):
    if dt == "bool":
        on, off = True, False
    elif dt in R.UNSIGNED:
        on, off = 5, 0
    else:
        on, off = 5, -1
    if R.is_float(dt):
        on, off = 1.5, -0.5

    def case(name, indices, ti_dtype, depth, axis=None):
        attrs = {} if axis is None else {"axis": axis}
        return Case(name, [ti(indices, ti_dtype), np.int32(depth), In(np.asarray(on), dt),
                           In(np.asarray(off), dt)], attrs,
                    ref=lambda i, d, o1, o0: R.one_hot(i, depth, o1, o0,
                                                       -1 if axis is None else axis),
                    tol="exact", out_dtypes=[dt])
    return [case("int32_with_negative", [0, 2, -1, 1], "int32", 3),
            case("axis0_2d", [[0, 1], [2, 3]], "int64", 4, axis=0),
            case("axis1_uint8", [[0, 3, 1]], "uint8", 4, axis=1),
            case("out_of_range", [5, 1], "int8", 3),
            case("scalar", 2, "int32", 4)]


def gen_broadcast_to(dt, rng):
    return [
        Case("column", [In(arr(rng, (3, 1), dt), dt), ti([2, 3, 4])],
             ref=lambda v, s: np.broadcast_to(v, (2, 3, 4)), tol="exact"),
        Case("scalar_int64", [In(arr(rng, (), dt), dt), ti([2, 2], "int64")],
             ref=lambda v, s: np.broadcast_to(v, (2, 2)), tol="exact"),
        Case("same", [In(arr(rng, (2, 3), dt), dt), ti([2, 3])],
             ref=lambda v, s: v, tol="exact"),
        Case("empty", [In(arr(rng, (1, 3), dt), dt), ti([0, 3])],
             ref=lambda v, s: np.broadcast_to(v, (0, 3)), tol="exact"),
    ]


def gen_space_to_batch(dt, rng):
    return [
        Case("2x2", [In(arr(rng, (1, 4, 4, 2), dt), dt), ti([2, 2]), ti([[0, 0], [0, 0]])],
             ref=R.space_to_batch_nd, tol="exact"),
        Case("padded_int64", [In(arr(rng, (2, 2, 3, 1), dt), dt), ti([2, 2], "int64"),
                              ti([[1, 1], [0, 1]], "int64")],
             ref=R.space_to_batch_nd, tol="exact"),
        Case("1d", [In(arr(rng, (2, 6, 3), dt), dt), ti([3]), ti([[1, 2]])],
             ref=R.space_to_batch_nd, tol="exact"),
    ]


def gen_batch_to_space(dt, rng):
    return [
        Case("2x2", [In(arr(rng, (4, 2, 2, 2), dt), dt), ti([2, 2]), ti([[0, 0], [0, 0]])],
             ref=R.batch_to_space_nd, tol="exact"),
        Case("cropped_int64", [In(arr(rng, (8, 2, 2, 1), dt), dt), ti([2, 2], "int64"),
                               ti([[1, 1], [0, 1]], "int64")],
             ref=R.batch_to_space_nd, tol="exact"),
        Case("1d", [In(arr(rng, (6, 3, 2), dt), dt), ti([3]), ti([[1, 2]])],
             ref=R.batch_to_space_nd, tol="exact"),
    ]


def gen_identity_like(op):
    def gen(dt, rng):
        cases = [Case("2d", [In(arr(rng, (2, 3), dt), dt)], ref=lambda v: v, tol="exact"),
                 Case("scalar", [In(arr(rng, (), dt), dt)], ref=lambda v: v, tol="exact")]
        if op == "PreventGradient":
            cases.append(Case("message", [In(arr(rng, (3,), dt), dt)], {"message": "no grad"},
                              ref=lambda v: v, tol="exact"))
        return cases
    return gen


def gen_identity_n(dt, rng):
    a = arr(rng, (2, 3), dt)
    b = rand(rng, (4,), "int32", -5, 5)
    return [Case("mixed", [[In(a, dt), In(b, "int32")]], ref=lambda vs: vs, tol="exact",
                 out_dtypes=[dt, "int32"]),
            Case("single", [[In(a, dt)]], ref=lambda vs: vs, tol="exact")]


def gen_const(dt, rng):
    v = arr(rng, (2, 3), dt)
    value = make_tensor(In(v, dt)) if dt == "bfloat16" else R.as_dtype_values(v, dt)
    s = arr(rng, (), dt)
    svalue = make_tensor(In(s, dt)) if dt == "bfloat16" else R.as_dtype_values(s, dt)
    return [Case("2d", [], {"value": value, "dtype": pdtype(dt)},
                 expected=[In(v, dt).ref_value()], tol="exact", dtype=dt),
            Case("scalar", [], {"value": svalue, "dtype": pdtype(dt)},
                 expected=[In(s, dt).ref_value()], tol="exact", dtype=dt)]


# ---------------------------------------------------------------------------
# Strings, audio, host ops
# ---------------------------------------------------------------------------


def gen_string_join(dt, rng):
    return [
        Case("vector_and_scalar", [[["a", "bc", ""], "x"]], {"separator": "-"},
             expected=[np.array(["a-x", "bc-x", "-x"], dtype=object)], out_dtypes=["string"]),
        Case("two_vectors", [[["p", "q"], ["1", "2"]]],
             expected=[np.array(["p1", "q2"], dtype=object)], out_dtypes=["string"]),
        Case("scalars", [["ab", "cd", "ef"]], {"separator": ", "},
             expected=[np.asarray("ab, cd, ef", dtype=object)], out_dtypes=["string"]),
    ]


def gen_regex_full_match(dt, rng):
    return [
        Case("vector", [["abc", "abd", "xbc", "ab"]], {"pattern": "ab."},
             expected=[np.array([True, True, False, False])]),
        Case("scalar", ["hello123"], {"pattern": "[a-z]+\\d+"}, expected=[np.asarray(True)]),
    ]


def gen_sharded_filename(dt, rng):
    return [Case("basic", ["foo/bar", np.int32(2), np.int32(5)],
                 expected=[np.asarray("foo/bar-00002-of-00005", dtype=object)],
                 out_dtypes=["string"])]


def gen_sharded_filespec(dt, rng):
    return [Case("basic", ["foo/bar", np.int32(12)],
                 expected=[np.asarray("foo/bar-?????-of-00012", dtype=object)],
                 out_dtypes=["string"])]


def gen_decode_wav(dt, rng):
    mono = rng.integers(-32768, 32767, size=(50, 1)).astype(np.int16)
    stereo = rng.integers(-32768, 32767, size=(40, 2)).astype(np.int16)
    f = lambda s: s.astype(np.float64) / 32768.0  # noqa: E731
    padded = np.concatenate([f(mono), np.zeros((14, 1))])
    return [
        Case("mono", [R.wav_bytes(mono, 16000)],
             expected=[f(mono), np.int32(16000)], tol="exact", out_dtypes=["float32", "int32"]),
        Case("stereo", [R.wav_bytes(stereo, 44100)],
             expected=[f(stereo), np.int32(44100)], tol="exact", out_dtypes=["float32", "int32"]),
        Case("desired_samples_pad", [R.wav_bytes(mono, 8000)], {"desired_samples": 64},
             expected=[padded, np.int32(8000)], tol="exact", out_dtypes=["float32", "int32"]),
        Case("desired_samples_truncate", [R.wav_bytes(stereo, 8000)], {"desired_samples": 10},
             expected=[f(stereo)[:10], np.int32(8000)], tol="exact",
             out_dtypes=["float32", "int32"]),
    ]


def gen_spectrogram(dt, rng):
    x = rng.uniform(-1, 1, size=(300, 2)).astype(np.float32)
    x1 = rng.uniform(-1, 1, size=(200, 1)).astype(np.float32)
    # float32 FFTs of 64-128 points: errors of ~1e-5 relative to the largest bin.
    tol = (1e-4, 1e-4)
    return [
        Case("magnitude", [In(x, "float32")], {"window_size": 64, "stride": 32},
             ref=lambda v: R.audio_spectrogram(v, 64, 32, False), tol=tol),
        Case("squared_non_pow2_window", [In(x1, "float32")],
             {"window_size": 50, "stride": 20, "magnitude_squared": True},
             ref=lambda v: R.audio_spectrogram(v, 50, 20, True), tol=tol),
    ]


def gen_broadcast_gradient_args(dt, rng):
    def case(name, s0, s1):
        r0, r1 = R.broadcast_gradient_args(s0, s1)
        return Case(name, [ti(s0, dt), ti(s1, dt)],
                    expected=[r0.astype(dt), r1.astype(dt)], out_dtypes=[dt, dt])
    return [case("rank_diff", [2, 3, 4], [4]), case("both_sides", [2, 1, 4], [3, 1]),
            case("scalar", [], [2, 3])]


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


class Entry:
    def __init__(self, gen, dtypes=None):
        self.gen = gen
        self.dtypes = dtypes  # None: the cpu column of docs/ops.md


TABLE = {}
for _op in UNARY:
    TABLE[_op] = Entry(gen_unary(_op))
for _op in BINARY:
    TABLE[_op] = Entry(gen_binary(_op))
for _op in COMPARE:
    TABLE[_op] = Entry(gen_compare(_op))
for _op in ("LogicalAnd", "LogicalOr"):
    TABLE[_op] = Entry(gen_logical(_op))
for _op in ("Sum", "Mean", "Prod", "Max", "Min"):
    TABLE[_op] = Entry(gen_reduction(_op))
for _op in ("All", "Any"):
    TABLE[_op] = Entry(gen_all_any(_op))
for _op in ("ArgMax", "ArgMin"):
    TABLE[_op] = Entry(gen_arg(_op))
for _op in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"):
    TABLE[_op] = Entry(gen_batch_matmul(_op))
for _op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    TABLE[_op] = Entry(gen_batch_norm(_op))
for _op in ("Pad", "PadV2"):
    TABLE[_op] = Entry(gen_pad(_op))
for _op in ("ZerosLike", "OnesLike"):
    TABLE[_op] = Entry(gen_like(_op))
# Forwarding ops run by the core: a sample of dtypes.
_SAMPLE = ["float32", "float16", "bfloat16", "int32", "int64", "uint8", "bool"]
for _op in ("Identity", "Snapshot", "StopGradient", "PreventGradient"):
    TABLE[_op] = Entry(gen_identity_like(_op), dtypes=_SAMPLE)

TABLE.update({
    "IsFinite": Entry(gen_float_class(np.isfinite)),
    "IsNan": Entry(gen_float_class(np.isnan)),
    "IsInf": Entry(gen_float_class(np.isinf)),
    "Cumsum": Entry(gen_scan(False)),
    "Cumprod": Entry(gen_scan(True)),
    "ReverseV2": Entry(gen_reverse),
    "MatrixBandPart": Entry(gen_band_part),
    "LogicalNot": Entry(gen_logical_not),
    "LeakyRelu": Entry(gen_leaky_relu),
    "Gelu": Entry(gen_gelu),
    "Softmax": Entry(gen_softmax(R.softmax)),
    "LogSoftmax": Entry(gen_softmax(R.log_softmax)),
    "Select": Entry(gen_select),
    "SelectV2": Entry(gen_select_v2),
    "Cast": Entry(gen_cast),
    "MatMul": Entry(gen_matmul),
    "Einsum": Entry(gen_einsum),
    "Conv2D": Entry(gen_conv(False)),
    "DepthwiseConv2dNative": Entry(gen_conv(True)),
    "MaxPool": Entry(gen_pool("max")),
    "AvgPool": Entry(gen_pool("avg")),
    "BiasAdd": Entry(gen_bias_add),
    "_FusedMatMul": Entry(gen_fused_matmul),
    "_FusedConv2D": Entry(gen_fused_conv(False)),
    "_FusedDepthwiseConv2dNative": Entry(gen_fused_conv(True)),
    "_PlexusFusedElementwise": Entry(gen_fused_elementwise),
    "_PlexusLayerNorm": Entry(gen_layer_norm),
    "_PlexusFusedConv2DAdd": Entry(gen_fused_conv_add),
    "Reshape": Entry(gen_reshape),
    "Transpose": Entry(gen_transpose),
    "ConcatV2": Entry(gen_concat_v2),
    "Concat": Entry(gen_concat),
    "Split": Entry(gen_split),
    "SplitV": Entry(gen_split_v),
    "Slice": Entry(gen_slice),
    "StridedSlice": Entry(gen_strided_slice),
    "Pack": Entry(gen_pack),
    "Unpack": Entry(gen_unpack),
    "Gather": Entry(gen_gather),
    "GatherV2": Entry(gen_gather_v2),
    "GatherNd": Entry(gen_gather_nd),
    "MirrorPad": Entry(gen_mirror_pad),
    "Tile": Entry(gen_tile),
    "ReverseV2": Entry(gen_reverse_v2),
    "ExpandDims": Entry(gen_expand_dims),
    "Squeeze": Entry(gen_squeeze),
    "Shape": Entry(gen_shape),
    "ShapeN": Entry(gen_shape_n),
    "Size": Entry(gen_size),
    "Rank": Entry(gen_rank),
    "Fill": Entry(gen_fill),
    "Range": Entry(gen_range),
    "OneHot": Entry(gen_one_hot),
    "BroadcastTo": Entry(gen_broadcast_to),
    "SpaceToBatchND": Entry(gen_space_to_batch),
    "BatchToSpaceND": Entry(gen_batch_to_space),
    "IdentityN": Entry(gen_identity_n, dtypes=["float32", "bfloat16", "int64", "bool"]),
    "Const": Entry(gen_const),
    "StringJoin": Entry(gen_string_join, dtypes=["none"]),
    "StaticRegexFullMatch": Entry(gen_regex_full_match, dtypes=["none"]),
    "ShardedFilename": Entry(gen_sharded_filename, dtypes=["none"]),
    "ShardedFilespec": Entry(gen_sharded_filespec, dtypes=["none"]),
    "DecodeWav": Entry(gen_decode_wav),
    "AudioSpectrogram": Entry(gen_spectrogram),
    "BroadcastGradientArgs": Entry(gen_broadcast_gradient_args, dtypes=["int32", "int64"]),
})
# TopKV2, Where, the segment reductions and the tensor-scatter family.
TABLE.update({op: Entry(gen) for op, gen in select_refs.GENERATORS.items()})

# Ops with no eager NumPy test in this file, and why.
_CONTROL = "control flow or function call: graph-only, tested by the graph/function tests"
_STATE = "stateful (variables, TensorArrays): has its own state tests"
_TRAINING = ("gradient and training ops (issue 8): cpu against reference kernels in tests/ops/*_grad_test.cc and tests/ops/optimizer_test.cc, gradients against finite differences in gradients_test and test_training.py")

_RANDOM = "random host op; test_random_ops.py compares it with TensorFlow's own stream"

EXCLUDED = {
    # Collectives need several processes: test_distributed.py runs them on 2-4 ranks against NumPy.
    **{op: "collective; test_distributed.py on several ranks against NumPy" for op in (
        "CollectiveReduceV2", "CollectiveReduceScatterV2", "CollectiveGatherV2", "CollectiveAllToAllV2",
        "CollectiveBcastSendV2", "CollectiveBcastRecvV2", "CollectiveReduce", "CollectiveGather",
        "CollectiveBcastSend", "CollectiveBcastRecv")},
    # Host ops tested against TensorFlow in their own files.
    **{op: "linear-algebra host op; test_linalg_host_ops.py against tf.raw_ops" for op in (
        "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "Cholesky", "Qr", "Svd",
        "SelfAdjointEigV2", "MatrixTriangularSolve", "MatrixSolveLs", "Lu")},
    **{op: "host op; test_misc_host_ops.py against tf.raw_ops" for op in (
        "Roll", "LinSpace", "InTopK", "InTopKV2", "LowerBound", "UpperBound", "CheckNumerics",
        "CheckNumericsV2", "UniqueV2", "UniqueWithCountsV2", "DynamicPartition", "DynamicStitch",
        "ParallelDynamicStitch", "Diag", "DiagPart", "Cross", "EuclideanNorm", "CumulativeLogsumexp",
        "ApproximateEqual", "Xlogy", "Xdivy", "Xlog1py", "Erfinv", "Ndtri", "AddN", "AccumulateNV2",
        "ClipByValue")},
    **{op: "string host op; test_string_host_ops.py against tf.raw_ops" for op in (
        "StringStrip", "RegexFullMatch", "UnsortedSegmentJoin", "StringFormat")},
    # Host ops with their own tests against tf.raw_ops (test_preprocessing_ops.py).
    "BroadcastArgs": "shape arithmetic on the host; test_preprocessing_ops.py",
    "Bucketize": "host op; test_preprocessing_ops.py",
    "EnsureShape": "forwards its input; test_preprocessing_ops.py",
    "SparseToDense": "host op; test_preprocessing_ops.py",
    "Unique": "host op; test_preprocessing_ops.py",
    "UniqueWithCounts": "host op; test_preprocessing_ops.py",
    # Random ops (host ops): TensorFlow's bits, tested against tf.raw_ops and tf.random.
    "StatelessRandomUniform": _RANDOM,
    "StatelessRandomNormal": _RANDOM,
    "StatelessTruncatedNormal": _RANDOM,
    "StatelessRandomUniformInt": _RANDOM,
    "StatelessRandomUniformFullInt": _RANDOM,
    "StatelessRandomGammaV2": _RANDOM,
    "StatelessRandomGetKeyCounter": _RANDOM,
    "StatelessRandomGetKeyCounterAlg": _RANDOM,
    "StatelessRandomGetAlg": _RANDOM,
    "StatelessRandomUniformV2": _RANDOM,
    "StatelessRandomNormalV2": _RANDOM,
    "StatelessTruncatedNormalV2": _RANDOM,
    "StatelessRandomUniformIntV2": _RANDOM,
    "StatelessRandomUniformFullIntV2": _RANDOM,
    "StatelessRandomGammaV3": _RANDOM,
    "RandomUniform": _RANDOM,
    "RandomStandardNormal": _RANDOM,
    "TruncatedNormal": _RANDOM,
    "RandomUniformInt": _RANDOM,
    "AvgPoolGrad": _TRAINING,
    "BiasAddGrad": _TRAINING,
    "ConcatOffset": _TRAINING,
    "Conv2DBackpropFilter": _TRAINING,
    "Conv2DBackpropInput": _TRAINING,
    "DepthwiseConv2dNativeBackpropFilter": _TRAINING,
    "DepthwiseConv2dNativeBackpropInput": _TRAINING,
    "EluGrad": _TRAINING,
    "FusedBatchNormGrad": _TRAINING,
    "FusedBatchNormGradV2": _TRAINING,
    "FusedBatchNormGradV3": _TRAINING,
    "InvGrad": _TRAINING,
    "InvertPermutation": _TRAINING,
    "L2Loss": _TRAINING,
    "LeakyReluGrad": _TRAINING,
    "MaxPoolGrad": _TRAINING,
    "MaxPoolGradV2": _TRAINING,
    "MirrorPadGrad": _TRAINING,
    "ReciprocalGrad": _TRAINING,
    "Relu6Grad": _TRAINING,
    "ReluGrad": _TRAINING,
    "RsqrtGrad": _TRAINING,
    "ScatterNd": _TRAINING,
    "SeluGrad": _TRAINING,
    "SigmoidGrad": _TRAINING,
    "SoftmaxCrossEntropyWithLogits": _TRAINING,
    "SoftplusGrad": _TRAINING,
    "SparseSoftmaxCrossEntropyWithLogits": _TRAINING,
    "SqrtGrad": _TRAINING,
    "StridedSliceGrad": _TRAINING,
    "TanhGrad": _TRAINING,
    "UnsortedSegmentSum": _TRAINING,
    "_PlexusApplyAdam": _TRAINING,
    "_PlexusApplyAdamW": _TRAINING,
    "_PlexusApplyGradientDescent": _TRAINING,
    "_PlexusApplyMomentum": _TRAINING,
    "_PlexusApplyRMSProp": _TRAINING,
    "_PlexusReducedShape": _TRAINING,
    **{op: _CONTROL for op in (
        "Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "ControlTrigger",
        "If", "StatelessIf", "While", "StatelessWhile", "PartitionedCall",
        "StatefulPartitionedCall", "_Arg", "_Retval")},
    "Placeholder": "graph-only: a value fed to a graph run, nothing to compute eagerly",
    **{op: "graph-only in Plexus: eager execution refuses it (InvalidArgumentError 'exists "
           "only inside graphs')" for op in ("PlaceholderWithDefault", "NoOp")},
    **{op: _STATE for op in (
        "VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
        "ApplyGradientDescent", "VarHandleOp", "ReadVariableOp", "AssignVariableOp",
        "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp",
        "DestroyResourceOp", "DisableCopyOnRead", "ResourceApplyGradientDescent",
        "TensorArrayV3", "TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayGatherV3",
        "TensorArrayScatterV3", "TensorArraySizeV3", "TensorArrayCloseV3")},
    **{op: "TensorList op on variant values: tested against TensorFlow by test_tensor_list.py"
       for op in ("EmptyTensorList", "TensorListReserve", "TensorListFromTensor", "TensorListSplit",
                  "TensorListLength", "TensorListElementShape", "TensorListGetItem",
                  "TensorListSetItem", "TensorListPushBack", "TensorListPopBack",
                  "TensorListResize", "TensorListStack", "TensorListGather",
                  "TensorListScatterIntoExistingList", "TensorListConcatV2")},
    **{op: "checkpoint file I/O: tested by the checkpoint tests" for op in (
        "SaveV2", "RestoreV2", "MergeV2Checkpoints")},
    **{op: "needs serialized tf.Example protos as fixtures" for op in (
        "ParseExample", "ParseExampleV2")},
    **{op: "text preprocessing: strings, lookup tables and ragged rows, checked against "
           "TensorFlow's exact values in test_text_ops.py" for op in (
        "HashTableV2", "MutableHashTableV2", "LookupTableFindV2", "LookupTableImportV2",
        "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2", "LookupTableExportV2",
        "InitializeTableV2", "InitializeTableFromTextFileV2", "StringLower", "StringUpper",
        "StaticRegexReplace", "RegexReplace", "StringSplitV2", "StringNGrams",
        "StringToHashBucketFast", "StringToHashBucketStrong", "AsString", "StringLength",
        "RaggedTensorToTensor", "Bincount", "DenseBincount", "RaggedBincount", "UnicodeDecode",
        "UnicodeEncode")},
    "Mfcc": "TensorFlow's mel filterbank and DCT details need a long reference; the C++ op "
            "tests compare it with the reference plugin",
    **{op: "compared with TensorFlow's own outputs (tests/data/image_ops) in test_image_ops.py"
       for op in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic",
                  "ResizeBilinearGrad", "ResizeNearestNeighborGrad")},
    **{op: "compared with TensorFlow's own outputs (tests/data/image_ops) in "
           "test_boxes_3d_ops.py"
       for op in ("CropAndResize", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
                  "NonMaxSuppressionV5", "Conv3D", "MaxPool3D", "AvgPool3D")},
    **{op: "compared with TensorFlow run in test_image_transform_ops.py"
       for op in ("ImageProjectiveTransformV2", "ImageProjectiveTransformV3", "ResizeArea",
                  "ScaleAndTranslate", "ScaleAndTranslateGrad")},
    **{op: "compared with TensorFlow run in test_image_color_ops.py"
       for op in ("RGBToHSV", "HSVToRGB", "AdjustContrastv2", "AdjustSaturation", "AdjustHue")},
    **{op: "compared with TensorFlow run in test_depth_space_lrn.py"
       for op in ("DepthToSpace", "SpaceToDepth", "LRN", "LRNGrad")},
    **{op: "compared with TensorFlow run in the test: " + where
       for where, ops in (
           ("test_fft_ops.py", ("FFT", "FFT2D", "FFT3D", "IFFT", "IFFT2D", "IFFT3D", "RFFT", "RFFT2D", "RFFT3D",
                                "IRFFT", "IRFFT2D", "IRFFT3D", "Real", "Imag", "Angle", "ComplexAbs", "Conj",
                                "Complex")),
           ("test_string_ops_tf.py", ("Substr", "ReduceJoin", "StringToNumber", "StringSplit", "SparseCross",
                                      "SparseCrossV2", "SparseCrossHashed", "Assert", "Print", "PrintV2",
                                      "UnicodeDecodeWithOffsets")),
           ("test_image_codecs.py", ("DecodeJpeg", "DecodeAndCropJpeg", "DecodePng", "DecodeImage",
                                     "ExtractJpegShape", "EncodePng", "EncodeJpeg", "EncodeJpegVariableQuality",
                                     "EncodeBase64", "DecodeBase64", "DecodeRaw")),
           ("test_image_host_ops.py", ("ExtractImagePatches", "CombinedNonMaxSuppression", "CTCGreedyDecoder")),
           ("test_bitwise_ops.py", ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert",
                                    "LeftShift", "RightShift", "PopulationCount")),
           ("test_math_ops2.py", ("TruncateDiv", "TruncateMod", "MulNoNan", "Softsign",
                                  "SoftsignGrad", "Lgamma", "Digamma", "Rint")),
           ("test_matrix_diag_ops.py", ("MatrixDiag", "MatrixDiagV2", "MatrixDiagV3",
                                        "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3",
                                        "MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3")),
           ("test_solve_conv3d_grad_ops.py", ("MatrixSolve", "Conv3DBackpropInputV2",
                                              "Conv3DBackpropFilterV2")))
       for op in ops},
}


# ---------------------------------------------------------------------------
# Parametrization from docs/ops.md
# ---------------------------------------------------------------------------

DOCS_OPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "ops.md")


def cpu_dtypes_from_docs():
    """op -> dtype names of the cpu column (["none"] for "yes"); for the ops the
    core runs as views or shape values, the reference column."""
    table = {}
    with open(DOCS_OPS) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 5 or cells[0] in ("Op", "---"):
                continue
            cpu = cells[3]
            if not cpu and cells[2] in ("view", "from shapes"):
                # The core runs the metadata ops on every device: test the
                # dtypes of the reference kernels, which keep them.
                cpu = cells[4]
            if cpu == "yes":
                table[cells[0]] = ["none"]
            elif cpu:
                table[cells[0]] = [R.DOC_DTYPE[d.strip()] for d in cpu.split(",")]
    return table


CPU_DTYPES = cpu_dtypes_from_docs()
REGISTERED = {d["name"] for d in _px.op_defs()}

# (op, dtype, variant) -> reason: wrong results or failures that are Plexus
# bugs, reported with a reproduction (see the report of issue 7).
_EINSUM_GAP = ("Einsum kernel refuses equations TensorFlow accepts (UnimplementedError: one or "
               "two operands, one letter per dimension, no ellipsis, no repeated labels)")
KNOWN_BUGS = {f"Einsum-{dt}-{v}": _EINSUM_GAP
              for dt in ("float32", "float64", "float16", "bfloat16", "int32", "int64")
              for v in ("ellipsis", "diagonal", "trace", "three_operands")}


def op_dtypes(op):
    entry = TABLE[op]
    return entry.dtypes if entry.dtypes is not None else CPU_DTYPES.get(op, [])


def collect_cases():
    params = []
    for op in sorted(TABLE):
        if op not in REGISTERED:
            continue
        for dt in op_dtypes(op):
            rng = np.random.default_rng(R.seed_for(op, dt))
            for case in TABLE[op].gen(dt, rng):
                case.dtype = case.dtype or dt
                cid = f"{op}-{dt}-{case.variant}"
                marks = []
                bug = KNOWN_BUGS.get(cid) or KNOWN_BUGS.get(f"{op}-{dt}") or KNOWN_BUGS.get(op)
                if bug:
                    marks.append(pytest.mark.xfail(reason=bug, strict=True))
                params.append(pytest.param(op, case, id=cid, marks=marks))
    return params


CASES = collect_cases()


@pytest.mark.parametrize("op,case", CASES)
def test_op_matches_numpy(op, case):
    check_case(op, case)


def test_every_op_is_covered():
    """Every registered op is in TABLE (with at least one dtype) or EXCLUDED, and
    both lists name only registered ops."""
    missing = sorted(REGISTERED - set(TABLE) - set(EXCLUDED))
    assert not missing, f"ops with neither a NumPy test nor an exclusion reason: {missing}"
    both = sorted(set(TABLE) & set(EXCLUDED))
    assert not both, f"ops both tested and excluded: {both}"
    stale = sorted((set(TABLE) | set(EXCLUDED)) - REGISTERED)
    assert not stale, f"TABLE/EXCLUDED name ops the registry does not have: {stale}"
    no_dtypes = sorted(op for op in TABLE if not op_dtypes(op))
    assert not no_dtypes, f"tested ops with no dtype to test (no cpu column in docs): {no_dtypes}"


def test_every_cpu_dtype_is_covered():
    """Every (op, dtype) of the cpu column of docs/ops.md has at least one case."""
    have = {(c.values[0], c.values[1].dtype) for c in CASES}
    want = {(op, dt) for op, dts in CPU_DTYPES.items() if op in TABLE for dt in dts}
    assert not sorted(want - have)


# ---------------------------------------------------------------------------
# Error cases
# ---------------------------------------------------------------------------


def f32(shape, seed=0):
    return _px.constant(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))


def i32(values):
    return _px.constant(np.asarray(values, dtype=np.int32))


ERROR_CASES = [
    ("MatMul", "inner_dims", lambda: raw_ops.MatMul(f32((2, 3)), f32((4, 5)))),
    ("MatMul", "rank1", lambda: raw_ops.MatMul(f32((3,)), f32((3, 2)))),
    ("AddV2", "no_broadcast", lambda: raw_ops.AddV2(f32((2, 3)), f32((4,)))),
    ("AddV2", "dtype_mismatch", lambda: raw_ops.AddV2(f32((2,)), i32([1, 2]))),
    ("Sqrt", "int_dtype", lambda: raw_ops.Sqrt(i32([1, 4]))),
    ("Reshape", "size", lambda: raw_ops.Reshape(f32((2, 3)), i32([4, 2]))),
    ("ConcatV2", "ranks", lambda: raw_ops.ConcatV2([f32((2, 3)), f32((3,))], i32(0))),
    ("Conv2D", "rank3_input", lambda: raw_ops.Conv2D(f32((5, 5, 3)), f32((3, 3, 3, 4)),
                                                     strides=[1, 1, 1, 1], padding="SAME")),
    ("Conv2D", "channels", lambda: raw_ops.Conv2D(f32((1, 5, 5, 3)), f32((3, 3, 2, 4)),
                                                  strides=[1, 1, 1, 1], padding="SAME")),
    ("Div", "int_division_by_zero", lambda: raw_ops.Div(i32([1, 2]), i32([1, 0]))),
    ("GatherV2", "index_out_of_range", lambda: raw_ops.GatherV2(f32((3, 2)), i32([0, 3]),
                                                                i32(0))),
    ("Transpose", "bad_perm", lambda: raw_ops.Transpose(f32((2, 3)), i32([0, 0]))),
    ("Softmax", "scalar", lambda: raw_ops.Softmax(f32(()))),
]


@pytest.mark.parametrize("op,fn", [pytest.param(op, fn, id=f"{op}-{name}")
                                   for op, name, fn in ERROR_CASES])
def test_invalid_argument(op, fn):
    with pytest.raises(errors.InvalidArgumentError) as info:
        fn()
    assert isinstance(info.value, ValueError)
    assert op in str(info.value), f"message does not name {op}: {info.value}"
