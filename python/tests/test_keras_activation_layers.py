"""plexus.keras activation layers and TimeDistributed against Keras 3 (outputs and gradients, 1e-5)."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(4)


def _check(name, shape, args=(), kwargs=None, mask=None):
    kwargs = kwargs or {}
    kl = getattr(keras.layers, name)(*args, **kwargs)
    pl = getattr(pk.layers, name)(*[getattr(pk.layers, type(a).__name__)(**a.get_config()) if isinstance(
        a, keras.layers.Layer) else a for a in args], **kwargs)
    x = RNG.standard_normal(shape).astype(np.float32) * 2
    kl.build(shape)
    weights = [RNG.standard_normal(w.shape).astype(np.float32) for w in kl.weights]
    kl.set_weights(weights)
    pl.build(shape)
    pl.set_weights(weights)
    r = RNG.standard_normal(kl.compute_output_shape(shape)).astype(np.float32)
    kx, px_x = tf.constant(x), px.constant(x)
    extra_k = {} if mask is None else {"mask": tf.constant(mask)}
    extra_p = {} if mask is None else {"mask": px.constant(mask)}
    with tf.GradientTape() as tape:
        tape.watch(kx)
        ky = kl(kx, **extra_k)
        kg = None
        kloss = tf.reduce_sum(ky * r)
    kg = tape.gradient(kloss, [kx] + kl.trainable_weights)
    with px.GradientTape() as tape:
        tape.watch(px_x)
        py = pl(px_x, **extra_p)
        ploss = px.reduce_sum(py * px.constant(r))
    pg = tape.gradient(ploss, [px_x] + pl.trainable_weights)
    np.testing.assert_allclose(py.numpy(), ky.numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(pg, kg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("ReLU", {}), ("ReLU", {"max_value": 1.5, "negative_slope": 0.1,
                                                                  "threshold": 0.2}),
                                         ("LeakyReLU", {}), ("LeakyReLU", {"negative_slope": 0.05}), ("ELU", {}),
                                         ("ELU", {"alpha": 0.5}), ("Softmax", {}), ("Softmax", {"axis": 1}),
                                         ("PReLU", {}), ("PReLU", {"shared_axes": [1, 2]})])
def test_activation_layer(name, kwargs):
    _check(name, (3, 4, 5, 6), kwargs=kwargs)


def test_softmax_mask():
    mask = np.array([[1, 1, 0, 0, 1, 1]] * 3, bool)
    _check("Softmax", (3, 6), mask=mask)


def test_time_distributed_dense():
    _check("TimeDistributed", (3, 5, 4), args=(keras.layers.Dense(6),))


def test_time_distributed_in_a_traced_model():
    m = pk.Sequential([pk.Input((5, 4)), pk.layers.TimeDistributed(pk.layers.Dense(3)), pk.layers.Flatten()])
    m.compile("sgd", "mse")
    h = m.fit(RNG.standard_normal((10, 5, 4)).astype(np.float32), np.zeros((10, 15), np.float32), batch_size=4,
              verbose=0)
    assert np.isfinite(h.history["loss"][0])
