"""plexus.keras normalization layers against Keras 3: outputs, gradients, moving statistics, masks."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(3)
TOL = 1e-5


def _pair(name, shape, **kwargs):
    kl, pl = getattr(keras.layers, name)(**kwargs), getattr(pk.layers, name)(**kwargs)
    kl.build(shape)
    # Random weights (so gamma and beta matter), positive variances.
    weights = [RNG.uniform(0.5, 1.5, w.shape).astype(np.float32) if "variance" in w.path or "gamma" in w.path
               else RNG.standard_normal(w.shape).astype(np.float32) for w in kl.weights]
    kl.set_weights(weights)
    pl.build(shape)
    pl.set_weights(weights)
    return kl, pl


def _grads(kl, pl, x, training, mask=None):
    r = RNG.standard_normal(x.shape).astype(np.float32)
    kx = tf.constant(x)
    kwargs = {"training": training} if "training" in kl.call.__code__.co_varnames else {}
    with tf.GradientTape() as tape:
        tape.watch(kx)
        ky = kl(kx, **kwargs) if mask is None else kl(kx, mask=tf.constant(mask), **kwargs)
        kloss = tf.reduce_sum(ky * r)
    kg = tape.gradient(kloss, [kx] + kl.trainable_weights)
    px_x = px.constant(x)
    with px.GradientTape() as tape:
        tape.watch(px_x)
        py = pl(px_x, **kwargs) if mask is None else pl(px_x, mask=px.constant(mask), **kwargs)
        ploss = px.reduce_sum(py * px.constant(r))
    pg = tape.gradient(ploss, [px_x] + pl.trainable_weights)
    np.testing.assert_allclose(py.numpy(), ky.numpy(), rtol=TOL, atol=TOL)
    for a, b in zip(pg, kg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("shape,kwargs", [((4, 6), {}), ((3, 5, 5, 4), {}), ((3, 4, 5, 5), {"axis": 1}),
                                          ((3, 5, 5, 4), {"center": False, "momentum": 0.9}),
                                          ((3, 7, 4), {"scale": False, "epsilon": 0.01})])
def test_batch_normalization(shape, kwargs, training):
    kl, pl = _pair("BatchNormalization", shape, **kwargs)
    x = RNG.standard_normal(shape).astype(np.float32) * 2 + 1
    _grads(kl, pl, x, training)
    # The moving statistics after the same update.
    for kw, pw in zip(kl.non_trainable_weights, pl.non_trainable_weights):
        np.testing.assert_allclose(pw.numpy(), kw.numpy(), rtol=TOL, atol=TOL)


def test_batch_normalization_mask():
    kl, pl = _pair("BatchNormalization", (2, 5, 3))
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], bool)
    _grads(kl, pl, x, True, mask)
    for kw, pw in zip(kl.non_trainable_weights, pl.non_trainable_weights):
        np.testing.assert_allclose(pw.numpy(), kw.numpy(), rtol=TOL, atol=TOL)


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize("shape,kwargs", [((4, 6), {}), ((3, 5, 8), {"axis": [1, 2]}), ((3, 4, 6), {"axis": 1}),
                                          ((3, 5, 8), {"rms_scaling": True}), ((2, 8), {"center": False})])
def test_layer_normalization(shape, kwargs):
    kl, pl = _pair("LayerNormalization", shape, **kwargs)
    _grads(kl, pl, RNG.standard_normal(shape).astype(np.float32) * 3, False)


@pytest.mark.parametrize("shape,kwargs", [((3, 5, 5, 8), {"groups": 4}), ((3, 6, 8), {"groups": 8}),
                                          ((2, 8, 4, 4), {"groups": 2, "axis": 1}), ((2, 4, 6), {"groups": 1})])
def test_group_normalization(shape, kwargs):
    kl, pl = _pair("GroupNormalization", shape, **kwargs)
    _grads(kl, pl, RNG.standard_normal(shape).astype(np.float32), False)


@pytest.mark.parametrize("shape,kwargs", [((4, 6), {}), ((3, 5, 8), {"axis": [1, 2], "epsilon": 0.1})])
def test_rms_normalization(shape, kwargs):
    kl, pl = _pair("RMSNormalization", shape, **kwargs)
    _grads(kl, pl, RNG.standard_normal(shape).astype(np.float32), False)


def test_unit_normalization():
    kl, pl = _pair("UnitNormalization", (4, 6), axis=-1)
    _grads(kl, pl, RNG.standard_normal((4, 6)).astype(np.float32), False)


def test_batch_norm_in_fit_matches_keras():
    def build(K):
        return K.Sequential([K.Input((6,)), K.layers.Dense(8), K.layers.BatchNormalization(),
                             K.layers.Activation("relu"), K.layers.Dense(2)])
    km, pm = build(keras), build(pk)
    pm.set_weights(km.get_weights())
    x = RNG.standard_normal((64, 6)).astype(np.float32)
    y = RNG.standard_normal((64, 2)).astype(np.float32)
    for m, K in ((km, keras), (pm, pk)):
        m.compile(K.optimizers.SGD(0.05), "mse")
    kh = km.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    ph = pm.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(ph.history["loss"], kh.history["loss"], rtol=1e-4)
    for a, b in zip(pm.get_weights(), km.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_traced_with_unknown_batch():
    _, pl = _pair("GroupNormalization", (2, 4, 4, 8), groups=4)
    fn = px.function(lambda x: pl(x), input_signature=[px.TensorSpec([None, 4, 4, 8], px.float32)])
    x = RNG.standard_normal((5, 4, 4, 8)).astype(np.float32)
    np.testing.assert_allclose(fn.get_concrete_function()(px.constant(x)).numpy(), pl(px.constant(x)).numpy(),
                               rtol=TOL, atol=TOL)
