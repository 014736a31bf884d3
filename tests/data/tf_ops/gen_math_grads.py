"""Writes math_grads.json: TensorFlow's gradients (tf.GradientTape, eager,
CPU, float64) of the differentiable ops added with Cumsum, ReverseV2 and
MatrixBandPart: the trigonometric and hyperbolic functions and their
inverses, Expm1, Atan2 (with broadcasting), Cumsum and Cumprod (every
exclusive/reverse pair; Cumprod also with a zero in x, where TensorFlow's
gradient divides with div_no_nan), ReverseV2 and MatrixBandPart.
python/tests/test_ops_tf_edges.py checks Plexus's tape against them.

Run with a TensorFlow install (made with TensorFlow 2.21):
  python gen_math_grads.py > math_grads.json
Each case: op, float64 inputs (values and shape; differentiated), integer
inputs (axis, widths), attrs, the loss weights w (loss = sum(op(...) * w)) and
the gradient of every float input.
"""
import json

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

rng = np.random.default_rng(7)
CASES = []


def add(name, op, floats, ints=(), attrs=None):
    """floats: [(values array)], differentiated; ints: [(values, dtype)] after them."""
    attrs = attrs or {}
    xs = [tf.constant(np.asarray(v, np.float64)) for v in floats]
    extra = [tf.constant(np.asarray(v, dt)) for v, dt in ints]
    names = [a.name for a in op_def_registry.get(op).input_arg]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = getattr(tf.raw_ops, op)(**dict(zip(names, xs + extra)), **attrs)
        w = rng.uniform(-1, 1, y.shape)
        loss = tf.reduce_sum(y * w)
    grads = tape.gradient(loss, xs)
    CASES.append(dict(
        name=name, op=op, attrs=attrs,
        floats=[[x.numpy().ravel().tolist(), list(x.shape)] for x in xs],
        ints=[[np.asarray(v).ravel().tolist(), dt, list(np.asarray(v).shape)] for v, dt in ints],
        w=[w.ravel().tolist(), list(w.shape)],
        grads=[g.numpy().ravel().tolist() for g in grads]))


for op, lo, hi in [("Tan", -1.2, 1.2), ("Sinh", -2, 2), ("Cosh", -2, 2), ("Asin", -0.9, 0.9),
                   ("Acos", -0.9, 0.9), ("Atan", -3, 3), ("Asinh", -3, 3), ("Acosh", 1.2, 4),
                   ("Atanh", -0.9, 0.9), ("Expm1", -2, 2)]:
    add(op, op, [rng.uniform(lo, hi, (2, 3))])
add("Atan2", "Atan2", [rng.uniform(-2, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3))])
add("Atan2-broadcast", "Atan2", [rng.uniform(-2, 2, (2, 3)), rng.uniform(0.5, 2, (3,))])
for op in ("Cumsum", "Cumprod"):
    for exclusive in (False, True):
        for reverse in (False, True):
            add(f"{op}-{'exclusive' if exclusive else 'inclusive'}-{'reverse' if reverse else 'forward'}",
                op, [rng.uniform(0.5, 1.5, (3, 4))], [(1, "int32")],
                dict(exclusive=exclusive, reverse=reverse))
add("Cumsum-axis-minus3", "Cumsum", [rng.uniform(-1, 1, (2, 3, 2))], [(-3, "int64")])
add("Cumprod-with-zero", "Cumprod", [np.array([[1.5, 0.0, 2.0, -1.0], [0.5, 2.0, 0.0, 3.0]])],
    [(1, "int32")])
add("ReverseV2", "ReverseV2", [rng.uniform(-1, 1, (2, 3, 4))], [([0, -1], "int32")])
add("MatrixBandPart", "MatrixBandPart", [rng.uniform(-1, 1, (2, 3, 4))],
    [(1, "int64"), (2, "int64")])

print(json.dumps(CASES))
