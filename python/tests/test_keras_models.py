"""plexus.keras models: the functional API, Sequential, subclassing, freezing, mixed precision.

Outputs are compared with Keras 3 (TensorFlow backend) built the same way
with the same weights (float32: 1e-5).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(1)


def _both(build):
    km, pm = build(keras), build(pk)
    pm.set_weights(km.get_weights())
    return km, pm


def _close(a, b, tol=1e-5):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_multiple_inputs_shared_layer_and_arithmetic():
    def build(K):
        a, b = K.Input((6,), name="a"), K.Input((6,), name="b")
        shared = K.layers.Dense(5, activation="tanh", name="shared")
        ha, hb = shared(a), shared(b)
        merged = K.layers.Concatenate()([ha, hb, ha * hb])
        out = K.layers.Dense(2, name="out")(merged)
        return K.Model([a, b], out)
    km, pm = _both(build)
    xa, xb = RNG.standard_normal((7, 6)).astype(np.float32), RNG.standard_normal((7, 6)).astype(np.float32)
    _close(pm.predict([xa, xb], verbose=0), km.predict([xa, xb], verbose=0))
    _close(pm({"a": xa, "b": xb}).numpy(), km({"a": xa, "b": xb}).numpy())
    assert len(pm.weights) == 4  # the shared layer's weights once


def test_nested_models_and_dict_outputs():
    def build(K):
        inner = K.Sequential([K.Input((4,)), K.layers.Dense(8, activation="relu"), K.layers.Dense(4)], name="inner")
        x = K.Input((4,), name="x")
        h = inner(x)
        return K.Model(x, {"sum": K.layers.Add()([h, x]), "prod": K.layers.Multiply()([h, x])})
    km, pm = _both(build)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    kout, pout = km.predict(x, verbose=0), pm.predict(x, verbose=0)
    assert set(pout) == {"sum", "prod"}
    for k in kout:
        _close(pout[k], kout[k])


def test_embedding_mask_reaches_pooling():
    def build(K):
        x = K.Input((6,), dtype="int32")
        e = K.layers.Embedding(10, 4, mask_zero=True)(x)
        return K.Model(x, K.layers.GlobalAveragePooling1D()(e))
    km, pm = _both(build)
    ids = np.array([[1, 2, 0, 0, 0, 0], [3, 4, 5, 6, 0, 0]], np.int32)
    _close(pm.predict(ids, verbose=0), km.predict(ids, verbose=0))


def test_freezing_a_layer_keeps_its_weights():
    _, pm = _both(lambda K: K.Sequential([K.Input((3,)), K.layers.Dense(4), K.layers.Dense(1)]))
    pm.layers[0].trainable = False
    frozen = pm.layers[0].get_weights()
    pm.compile(pk.optimizers.SGD(0.1), "mse")
    pm.fit(RNG.standard_normal((16, 3)).astype(np.float32), np.ones((16, 1), np.float32), verbose=0, epochs=2)
    _close(pm.layers[0].get_weights(), frozen, 0)
    assert len(pm.trainable_weights) == 2 and len(pm.non_trainable_weights) == 2


def test_run_eagerly_matches_traced():
    x = RNG.standard_normal((32, 5)).astype(np.float32)
    y = RNG.standard_normal((32, 1)).astype(np.float32)
    histories = []
    for eager in (False, True):
        _, pm = _both(lambda K: K.Sequential([K.Input((5,)), K.layers.Dense(8, activation="relu"),
                                              K.layers.Dense(1)]))
        if histories:
            pm.set_weights(first_weights)
        else:
            first_weights = pm.get_weights()
        pm.compile(pk.optimizers.Adam(0.01), "mse", run_eagerly=eager)
        histories.append(pm.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"])
    _close(histories[0], histories[1], 1e-5)


def test_sequential_without_input_builds_at_first_call():
    pm = pk.Sequential([pk.layers.Dense(4, activation="relu"), pk.layers.Dense(2)])
    assert not pm.built
    out = pm(np.ones((3, 7), np.float32))
    assert tuple(out.shape) == (3, 2) and pm.built and pm.layers[0].kernel.shape == (7, 4)
    pm.add(pk.layers.Dense(1))
    assert tuple(pm(np.ones((2, 7), np.float32)).shape) == (2, 1)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_trains(policy):
    pk.mixed_precision.set_global_policy(policy)
    try:
        m = pk.Sequential([pk.Input((12,)), pk.layers.Dense(32, activation="relu"), pk.layers.Dense(3),
                           pk.layers.Activation("linear", dtype="float32")])
    finally:
        pk.mixed_precision.set_global_policy("float32")
    compute = policy.split("_")[1]
    assert m.layers[0].compute_dtype == compute and m.layers[0].kernel.dtype == px.float32
    x = RNG.standard_normal((64, 12)).astype(np.float32)
    y = (x[:, :3].argmax(1)).astype(np.int32)
    m.compile(pk.optimizers.Adam(0.01), pk.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert isinstance(m.optimizer, pk.optimizers.LossScaleOptimizer) == (compute == "float16")
    h = m.fit(x, y, batch_size=16, epochs=8, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    assert m.predict(x[:2], verbose=0).dtype == np.float32


def test_loss_scale_skips_non_finite_steps():
    opt = pk.optimizers.LossScaleOptimizer(pk.optimizers.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    v = px.Variable(np.ones(3, np.float32))
    opt.apply_gradients([(px.constant(np.array([np.inf, 1, 1], np.float32)), v)])
    _close(v.numpy(), np.ones(3), 0)
    assert float(opt.dynamic_scale.numpy()) == 4.0
    for _ in range(2):
        opt.apply_gradients([(px.constant(np.full(3, 4.0, np.float32)), v)])
    assert float(opt.dynamic_scale.numpy()) == 8.0
    _close(v.numpy(), np.full(3, 1 - 2 * 0.1 * 1.0 * 4 / 4), 1e-6)


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("inner", ["Adam", "Nadam", "RMSprop", "SGD"])
def test_a_skipped_loss_scale_step_leaves_the_optimizer_as_keras_does(inner, traced):
    # A step with non-finite gradients must not advance the inner optimizer
    # (its step count, slots, Nadam's momentum product): the steps after it
    # then match Keras's. The first and third gradients are not finite.
    grads = [np.array([np.inf, 1, 1], np.float32), np.full(3, 4.0, np.float32),
             np.array([1, np.nan, 1], np.float32), np.full(3, -2.0, np.float32), np.full(3, 8.0, np.float32)]

    def run(lib, variable, tensor, value, wrap=lambda f: f):
        opt = lib.optimizers.LossScaleOptimizer(getattr(lib.optimizers, inner)(0.1), initial_scale=8.0,
                                                dynamic_growth_steps=2)
        v = variable(np.ones(3, np.float32))
        apply = wrap(lambda g: opt.apply_gradients([(g, v)]))
        out = []
        for g in grads:
            apply(tensor(g))
            out.append((value(v).copy(), int(opt.iterations), float(value(opt.dynamic_scale))))
        return out

    # Traced: the reads of the old state come before the update's writes.
    ours = run(pk, px.Variable, px.constant, lambda t: np.asarray(t.numpy()), px.function if traced else (lambda f: f))
    theirs = run(keras, keras.Variable, keras.ops.convert_to_tensor, lambda t: np.asarray(t))
    for step, ((v, it, scale), (kv, kit, kscale)) in enumerate(zip(ours, theirs)):
        _close(v, kv, 1e-5)
        assert (it, scale) == (kit, kscale), f"step {step + 1}: iterations {it}, scale {scale}; Keras {kit}, {kscale}"


def test_layer_names_follow_keras():
    assert pk.layers.base.snake_case("MaxPooling2D") == "max_pooling2d"
    assert pk.layers.base.snake_case("Conv2DTranspose") == "conv2d_transpose"
    assert pk.layers.base.snake_case("LSTM") == "lstm"
    assert pk.layers.base.snake_case("GRUCell") == "gru_cell"


def test_bad_inputs_are_named():
    inp = pk.Input((3,), name="features")
    m = pk.Model(inp, pk.layers.Dense(2)(inp))
    with pytest.raises(ValueError, match="features.*expects shape"):
        m(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="expects 1 inputs"):
        m([np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)])
    other = pk.Input((3,), name="other")
    with pytest.raises(ValueError, match="not among the model's inputs"):
        pk.Model(inp, pk.layers.Add()([inp, other]))


def test_keras_digits_example(tmp_path, capsys):
    # The README's main job's plexus.keras part (examples/train_keras_digits.py), end to end.
    pytest.importorskip("sklearn")
    import importlib.util
    import re
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "train_keras_digits.py")
    spec = importlib.util.spec_from_file_location("train_keras_digits", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path / "out"), "--epochs", "10", "--min-accuracy", "0.93"]) == 0
    out = capsys.readouterr().out
    assert float(re.search(r"test accuracy (\d\.\d+)", out).group(1)) >= 0.93
    assert "Epoch 10/10" in out and "45/45" in out
    for name in ("digits.keras", "best.keras", "training.csv", "saved_model", "logs"):
        assert (tmp_path / "out" / name).exists(), name
