"""DivNoNan (tf.math.divide_no_nan) and its gradient against TensorFlow:
zeros where the divisor is 0, whatever the dividend (NaN and inf too)."""

import numpy as np
import pytest

import plexus as px

tf = pytest.importorskip("tensorflow")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_match_tensorflow(dtype):
    x = np.array([[1.0, -2.0, np.nan, np.inf], [0.0, 3.0, 5.0, -1.0]], dtype)
    y = np.array([0.0, 2.0, 0.0, 4.0], dtype)  # broadcast over the rows
    want = tf.math.divide_no_nan(x, y).numpy()
    np.testing.assert_array_equal(np.asarray(px.math.divide_no_nan(x, y)), want)

    xs, ys = x.copy(), y.copy()
    xs[~np.isfinite(xs)] = 1.5  # finite values for the gradients
    tx, ty = tf.constant(xs), tf.constant(ys)
    with tf.GradientTape() as tape:
        tape.watch([tx, ty])
        out = tf.reduce_sum(tf.math.divide_no_nan(tx, ty) * tf.constant([[1.0], [2.0]], dtype))
    want_dx, want_dy = tape.gradient(out, [tx, ty])

    px_x, px_y = px.Variable(xs), px.Variable(ys)
    with px.GradientTape() as ptape:
        pout = px.reduce_sum(px.math.divide_no_nan(px_x, px_y) * px.constant([[1.0], [2.0]], dtype=dtype))
    dx, dy = ptape.gradient(pout, [px_x, px_y])
    np.testing.assert_allclose(np.asarray(dx), want_dx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(dy), want_dy.numpy(), rtol=1e-6)
