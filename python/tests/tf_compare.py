"""Helpers of the tests that compare Plexus ops with TensorFlow run in the
test itself (test_bitwise_ops.py, test_math_ops2.py, test_matrix_diag_ops.py,
test_solve_conv3d_grad_ops.py): tensors of any dtype (bfloat16 through a
float32 cast), values as NumPy arrays, and gradients through both tapes.
"""

import numpy as np

import plexus as px
from plexus import raw_ops


def px_tensor(values, dtype):
    """A Plexus tensor of `values` as `dtype` (a NumPy dtype name, or
    "bfloat16")."""
    if dtype == "bfloat16":
        return raw_ops.Cast(px.constant(np.asarray(values, np.float32)), DstT=px.bfloat16)
    return px.constant(np.asarray(values).astype(dtype))


def tf_tensor(tf, values, dtype):
    """The same TensorFlow tensor."""
    if dtype == "bfloat16":
        return tf.cast(tf.constant(np.asarray(values, np.float32)), tf.bfloat16)
    return tf.constant(np.asarray(values).astype(dtype))


def as_numpy(t):
    """A Plexus or TensorFlow tensor as a NumPy array (bfloat16 as float32)."""
    if getattr(t.dtype, "name", "") == "bfloat16":
        if isinstance(t, px.Tensor):
            t = raw_ops.Cast(t, DstT=px.float32)
        else:
            return np.asarray(t.numpy()).astype(np.float32)
    return np.asarray(t.numpy())


def assert_same(got, want, rtol=0.0, atol=0.0):
    """Equal dtype-free values: exact by default, NaN where `want` has NaN,
    infinities exactly, signs of zeros ignored."""
    got, want = as_numpy(got), as_numpy(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if rtol == 0 and atol == 0 and want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


def gradients(tf, px_fn, tf_fn, inputs, dy):
    """(Plexus's, TensorFlow's) gradients of sum(fn(*inputs) * dy) with
    respect to every input (NumPy arrays; None where there is none)."""
    pts = [px.constant(x) for x in inputs]
    with px.GradientTape() as tape:
        tape.watch(pts)
        y = px_fn(*pts)
    got = tape.gradient(y, pts, output_gradients=px.constant(dy))
    tts = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as ttape:
        ttape.watch(tts)
        ty = tf_fn(*tts)
    want = ttape.gradient(ty, tts, output_gradients=tf.constant(dy))
    return ([None if g is None else np.asarray(g.numpy()) for g in got],
            [None if g is None else g.numpy() for g in want])
