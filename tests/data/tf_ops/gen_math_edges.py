"""Writes math_edges.json: TensorFlow's outputs (tf.raw_ops, eager, CPU) for
edge cases of IsFinite/IsNan/IsInf, the trigonometric and hyperbolic
functions and their inverses, Expm1, Atan2, Cumsum, Cumprod, ReverseV2 and
MatrixBandPart, in half, bfloat16, float and double where they apply.
python/tests/test_ops_tf_edges.py runs the same cases on Plexus.

Run with a TensorFlow install (made with TensorFlow 2.21):
  python gen_math_edges.py > math_edges.json
Each case: op, inputs as [values, dtype, shape] (values as float64 or ints),
attrs, and the output's shape, dtype and values (bfloat16 outputs as float32;
JSON NaN/Infinity for special values).
"""
import json

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

inf, nan = float("inf"), float("nan")
CASES = []


def add(name, op, inputs, attrs=None):
    attrs = attrs or {}
    tensors = []
    for values, dtype, shape in inputs:
        values = np.asarray(values)
        if dtype == "bfloat16":
            t = tf.cast(tf.constant(values.astype(np.float32).reshape(shape)), tf.bfloat16)
        else:
            t = tf.constant(values.astype(dtype).reshape(shape))
        tensors.append(t)
    names = [a.name for a in op_def_registry.get(op).input_arg]
    out = getattr(tf.raw_ops, op)(**dict(zip(names, tensors)), **attrs)
    out_dtype = out.dtype.name
    if out.dtype == tf.bfloat16:
        out = tf.cast(out, tf.float32)
    o = out.numpy()
    CASES.append(dict(
        name=name, op=op, attrs=attrs,
        inputs=[[np.asarray(v).astype(np.float64 if dt not in ("int32", "int64", "int8") else np.int64)
                 .ravel().tolist(), dt, list(s)] for v, dt, s in inputs],
        shape=list(o.shape), out_dtype=out_dtype, out=o.ravel().tolist()))


SPECIALS = [inf, -inf, nan, 0.0, -0.0, 1.0, 65504.0, 70000.0, 1e-8]
EDGES = [("Asin", [-1.0, 1.0, 1.5, -0.0, 0.5]), ("Acos", [-1.0, 1.0, 1.5, 0.0, 0.5]),
         ("Acosh", [0.5, 1.0, inf, 2.0]), ("Atanh", [1.0, -1.0, 2.0, -0.0, 0.5]),
         ("Asinh", [-inf, inf, -0.0, 3.0]), ("Atan", [-inf, inf, -0.0, 1.0]),
         ("Tan", [0.0, -0.0, 1.0, -1.5]), ("Sinh", [-inf, 10.0, -0.0, 0.5]),
         ("Cosh", [-inf, 10.0, -0.0, 0.5]), ("Expm1", [-inf, inf, -0.0, 1e-3, 5.0])]

for dt in ["float16", "bfloat16", "float32", "float64"]:
    for op in ["IsFinite", "IsNan", "IsInf"]:
        add(f"{op}-{dt}-specials", op, [(SPECIALS, dt, [9])])
    add(f"Atan2-{dt}-zeros-infs", "Atan2",
        [([0.0, -0.0, 0.0, -0.0, 1.0, inf, inf, -inf, nan, -1.0], dt, [10]),
         ([0.0, 0.0, -0.0, -0.0, 0.0, inf, -inf, -inf, 1.0, -0.0], dt, [10])])
    add(f"Cumsum-{dt}-exclusive-reverse", "Cumsum",
        [(np.arange(6), dt, [2, 3]), ([-1], "int32", [])], dict(exclusive=True, reverse=True))
    add(f"Cumprod-{dt}-exclusive-reverse", "Cumprod",
        [(np.arange(1, 7), dt, [2, 3]), ([0], "int64", [])], dict(exclusive=True, reverse=True))
    add(f"Cumsum-{dt}-specials", "Cumsum", [([1.0, inf, -inf, 2.0, nan, 3.0], dt, [6]),
                                             ([0], "int32", [])])
    for op, values in EDGES:
        add(f"{op}-{dt}-edges", op, [(values, dt, [len(values)])])

# A half sum rounds at every step: 1000 x 0.1 ends at 105.1875, not 100.
add("Cumsum-float16-1000-tenths", "Cumsum", [([0.1] * 1000, "float16", [1000]), ([0], "int32", [])])
add("Cumsum-bfloat16-300-tenths", "Cumsum", [([0.1] * 300, "bfloat16", [300]), ([0], "int32", [])])
add("Cumsum-int8-wraps", "Cumsum", [([100, 100, 100, -7], "int8", [4]), ([0], "int32", [])])
add("Cumprod-int32-wraps", "Cumprod", [([50000, 100000, 3, 7], "int32", [4]), ([0], "int32", [])])
add("Cumsum-float32-axis-minus2-reverse", "Cumsum",
    [(np.arange(12), "float32", [3, 4]), ([-2], "int64", [])], dict(reverse=True))
add("ReverseV2-int32-negative-axes", "ReverseV2",
    [(np.arange(24), "int32", [2, 3, 4]), ([-1, 0], "int32", [2])])
add("ReverseV2-float32-no-axes", "ReverseV2", [(np.arange(6), "float32", [2, 3]), ([], "int64", [0])])
add("MatrixBandPart-float32-1-0", "MatrixBandPart",
    [(np.arange(12), "float32", [3, 4]), ([1], "int64", []), ([0], "int64", [])])
add("MatrixBandPart-int32-minus1-2", "MatrixBandPart",
    [(np.arange(1, 25), "int32", [2, 3, 4]), ([-1], "int32", []), ([2], "int32", [])])

print(json.dumps(CASES, indent=None))
