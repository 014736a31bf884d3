"""NumPy references and case generators for the selection and indexed-update
ops (TopKV2, Where, the segment reductions, the tensor-scatter family), used
by test_ops_numpy.py's table.

The references follow TensorFlow 2.21's semantics, checked against
tf.raw_ops on the same inputs: TopKV2 orders equal values by lower index;
Where lists the coordinates of nonzero elements (NaN is nonzero) in row-major
order; sorted segment ops give 0 (1 for Prod) for empty segments, unsorted
ones the type's lowest / highest finite value (Max / Min) or 1 (Prod), and
drop negative ids; integer means truncate; Max and Min let an element replace
the running value unless it is strictly smaller / larger (so NaN handling
matches TensorFlow's CPU kernels); TensorScatter* apply rows in order.
"""
import math

import numpy as np

import op_refs as R
from op_refs import Case, In, ti, rand


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


def _py(v):
    """An element as a Python number (exact for every integer type)."""
    return v.item() if hasattr(v, "item") else v


def top_k(x, k, sorted_=True, index_dtype=np.int32):
    k = int(k)
    rows = x.reshape(-1, x.shape[-1]) if x.size or x.shape[-1] else x.reshape(-1, 0)
    values = np.zeros((rows.shape[0], k), dtype=x.dtype)
    indices = np.zeros((rows.shape[0], k), dtype=index_dtype)
    for r, row in enumerate(rows):
        def key(j):
            v = _py(row[j])
            if isinstance(v, float) and math.isnan(v):
                return (0, 0, j)
            return (1, -v, j)
        order = sorted(range(row.shape[0]), key=key)[:k]
        values[r] = row[order]
        indices[r] = order
    shape = x.shape[:-1] + (k,)
    return [values.reshape(shape), indices.reshape(shape)]


def where(x):
    return np.argwhere(x != 0).astype(np.int64)


def _highest(dt):
    return {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
            "float32": float(np.finfo(np.float32).max),
            "float64": float(np.finfo(np.float64).max)}.get(dt)


def _combine(kind, acc, x):
    if kind in ("sum", "mean"):
        return acc + x
    if kind == "prod":
        return acc * x
    if kind == "max":
        return acc if x < acc else x
    return acc if x > acc else x  # min


def _reduce_rows(kind, rows):
    acc = rows[0]
    for x in rows[1:]:
        acc = _combine(kind, acc, x)
    if kind == "mean":
        n = len(rows)
        if isinstance(acc, int):
            return int(acc / n) if acc >= 0 else -int(-acc / n)
        return acc / n
    return acc


def segment(kind, dt):
    """The sorted op `kind` (sum, mean, max, min, prod) over data's rows."""
    def ref(data, ids):
        ids = [int(i) for i in ids]
        num = ids[-1] + 1 if ids else 0
        inner = data.shape[1:]
        flat = data.reshape(len(ids), int(np.prod(inner)))
        out = np.full((num, flat.shape[1]), 1 if kind == "prod" else 0, dtype=np.float64
                      if R.is_float(dt) else object)
        for s in sorted(set(ids)):
            rows = [i for i, v in enumerate(ids) if v == s]
            for j in range(flat.shape[1]):
                out[s, j] = _reduce_rows(kind, [_py(flat[i, j]) for i in rows])
        return out.astype(np.float64 if R.is_float(dt) else dt).reshape((num,) + inner)
    return ref


def unsorted_segment(kind, dt):
    def ref(data, ids, num):
        num = int(num)
        ids_flat = [int(i) for i in np.asarray(ids).reshape(-1)]
        flat = data.reshape(len(ids_flat), int(np.prod(data.shape[np.ndim(ids):])))
        if kind == "prod":
            init = 1
        elif R.is_float(dt):
            init = -_highest(dt) if kind == "max" else _highest(dt)
        else:
            info = np.iinfo(np.dtype(dt))
            init = int(info.min) if kind == "max" else int(info.max)
        out = np.full((num, flat.shape[1]), init, dtype=np.float64 if R.is_float(dt) else object)
        for i, s in enumerate(ids_flat):
            if s < 0:
                continue
            for j in range(flat.shape[1]):
                out[s, j] = _combine(kind, _py(out[s, j]), _py(flat[i, j]))
        return out.astype(np.float64 if R.is_float(dt) else dt).reshape((num,) + data.shape[np.ndim(ids):])
    return ref


def tensor_scatter(kind):
    def ref(tensor, indices, updates):
        out = np.array(tensor, copy=True)
        indices = np.asarray(indices)
        k = indices.shape[-1]
        rows = indices.reshape(-1, k)
        ups = updates.reshape((rows.shape[0],) + tensor.shape[k:])
        for r, idx in enumerate(rows):
            pos = tuple(int(v) for v in idx)
            cur, u = out[pos], ups[r]
            if kind == "update":
                out[pos] = u
            elif kind == "add":
                out[pos] = cur + u
            elif kind == "sub":
                with np.errstate(over="ignore"):  # unsigned integers wrap, as in the kernels
                    out[pos] = cur - u
            elif kind == "max":
                out[pos] = np.where(cur < u, u, cur)
            else:
                out[pos] = np.where(u < cur, u, cur)
        return out
    return ref


# ---------------------------------------------------------------------------
# Case generators: gen(dtype, rng) -> [Case]
# ---------------------------------------------------------------------------


def _ties(rng, shape, dt):
    """Small integers (many ties) in any dtype."""
    return R.as_dtype_values(rng.integers(0, 5, size=shape).astype(np.float64), dt)


def gen_top_k(dt, rng):
    import plexus  # the attribute takes a plexus dtype; imported here so TF checks can load this file
    idx_np = {"int16": np.int16, "int32": np.int32, "int64": np.int64}
    cases = []
    for variant, shape, k, itype, vals in [
            ("rows_k3", (4, 9), 3, "int32", rand(rng, (4, 9), dt, -3, 3)),
            ("ties_int64", (2, 3, 8), 5, "int64", _ties(rng, (2, 3, 8), dt)),
            ("full_sort_int16", (17,), 17, "int16", _ties(rng, (17,), dt)),
            ("k0", (3, 4), 0, "int32", rand(rng, (3, 4), dt, -3, 3))]:
        cases.append(Case(variant, [In(vals, dt), ti(k)], {"index_type": getattr(plexus._plexus, itype)},
                          ref=lambda x, kk, it=idx_np[itype]: top_k(x, kk, index_dtype=it), tol="exact",
                          out_dtypes=[dt, itype]))
    if R.is_float(dt):
        special = np.array([[1.5, np.nan, -np.inf, 0.0, -0.0, np.inf, -2.0, 1.5]] * 2)
        cases.append(Case("nan_inf", [In(special, dt), ti(6)], ref=lambda x, kk: top_k(x, kk), tol="exact",
                          out_dtypes=[dt, "int32"]))
    return cases


def gen_where(dt, rng):
    def sparse(shape):
        return R.as_dtype_values(rng.integers(0, 2, size=shape).astype(np.float64), dt) if dt != "bool" \
            else rng.random(shape) < 0.5
    cases = [Case("vector", [In(sparse((9,)), dt)], ref=where, tol="exact", out_dtypes=["int64"]),
             Case("rank3", [In(sparse((3, 4, 5)), dt)], ref=where, tol="exact", out_dtypes=["int64"]),
             Case("none_true", [In(np.zeros((2, 3)), dt)], ref=where, tol="exact", out_dtypes=["int64"]),
             Case("empty", [In(np.zeros((2, 0, 3)), dt)], ref=where, tol="exact", out_dtypes=["int64"])]
    if R.is_float(dt):
        cases.append(Case("nan_zeros", [In(np.array([np.nan, 0.0, -0.0, 1.0, -np.inf]), dt)], ref=where,
                          tol="exact", out_dtypes=["int64"]))
    return cases


def _segment_data(rng, shape, dt, kind):
    if kind == "prod":
        return rand(rng, shape, dt, 1, 2) if not R.is_float(dt) else rand(rng, shape, dt, 0.5, 1.5)
    return rand(rng, shape, dt, -3, 3)


def gen_segment(kind):
    def gen(dt, rng):
        tol = "accum" if kind in ("sum", "mean", "prod") else "exact"
        ref = segment(kind, dt)
        cases = [
            Case("runs", [In(_segment_data(rng, (6, 3), dt, kind), dt), ti([0, 0, 1, 1, 1, 2])], ref=ref, tol=tol),
            Case("gaps_int64", [In(_segment_data(rng, (5, 2, 2), dt, kind), dt), ti([1, 1, 3, 3, 6], "int64")],
                 ref=ref, tol=tol),
            Case("empty", [In(np.zeros((0, 3)), dt), ti(np.zeros((0,), np.int64))], ref=ref, tol=tol),
        ]
        if R.is_float(dt) and kind in ("max", "min"):
            nan_data = np.array([1.0, np.nan, np.nan, 1.0, -np.inf, -np.inf, 2.0])
            cases.append(Case("nan_order", [In(nan_data, dt), ti([0, 0, 1, 1, 2, 2, 3])], ref=ref, tol=tol))
        return cases
    return gen


def gen_unsorted_segment(kind):
    def gen(dt, rng):
        tol = "accum" if kind == "prod" else "exact"
        ref = unsorted_segment(kind, dt)
        cases = [
            Case("shuffled", [In(_segment_data(rng, (6, 3), dt, kind), dt), ti([2, 0, 2, 3, 0, 2]), ti(5)],
                 ref=ref, tol=tol),
            Case("rank2_ids_negatives", [In(_segment_data(rng, (2, 3, 4), dt, kind), dt),
                                         ti([[1, -1, 0], [1, 1, -3]], "int64"), ti(3, "int64")],
                 ref=ref, tol=tol),
        ]
        if R.is_float(dt) and kind in ("max", "min"):
            nan_data = np.array([1.0, np.nan, np.nan, 1.0, -np.inf, np.inf])
            cases.append(Case("nan_inf", [In(nan_data, dt), ti([0, 0, 1, 1, 2, 3]), ti(4)], ref=ref, tol=tol))
        return cases
    return gen


def gen_tensor_scatter(kind):
    def gen(dt, rng):
        tol = "elem" if kind in ("add", "sub") else "exact"
        ref = tensor_scatter(kind)
        lo, hi = (-3, 3)
        cases = [
            Case("rows", [In(rand(rng, (5, 3), dt, lo, hi), dt), ti([[4], [1]]), In(rand(rng, (2, 3), dt, lo, hi), dt)],
                 ref=ref, tol=tol),
            Case("elements_int64", [In(rand(rng, (4, 3), dt, lo, hi), dt), ti([[0, 2], [3, 0], [1, 1]], "int64"),
                                    In(rand(rng, (3,), dt, lo, hi), dt)], ref=ref, tol=tol),
            Case("batched_distinct", [In(rand(rng, (4, 2), dt, lo, hi), dt), ti([[[3], [0]], [[1], [2]]]),
                                      In(rand(rng, (2, 2, 2), dt, lo, hi), dt)], ref=ref, tol=tol),
            Case("no_updates", [In(rand(rng, (3,), dt, lo, hi), dt), ti(np.zeros((0, 1), np.int64)),
                                In(np.zeros((0,)), dt)], ref=ref, tol=tol),
        ]
        if kind != "update":
            # Repeated rows combine in order (Update's winner is unspecified in TF).
            cases.append(Case("repeated", [In(rand(rng, (3, 2), dt, lo, hi), dt), ti([[1], [1], [0], [1]]),
                                           In(rand(rng, (4, 2), dt, lo, hi), dt)], ref=ref, tol=tol))
        return cases
    return gen


GENERATORS = {
    "TopKV2": gen_top_k,
    "Where": gen_where,
    "SegmentSum": gen_segment("sum"),
    "SegmentMean": gen_segment("mean"),
    "SegmentMax": gen_segment("max"),
    "SegmentMin": gen_segment("min"),
    "SegmentProd": gen_segment("prod"),
    "UnsortedSegmentMax": gen_unsorted_segment("max"),
    "UnsortedSegmentMin": gen_unsorted_segment("min"),
    "UnsortedSegmentProd": gen_unsorted_segment("prod"),
    "TensorScatterUpdate": gen_tensor_scatter("update"),
    "TensorScatterAdd": gen_tensor_scatter("add"),
    "TensorScatterSub": gen_tensor_scatter("sub"),
    "TensorScatterMax": gen_tensor_scatter("max"),
    "TensorScatterMin": gen_tensor_scatter("min"),
}
