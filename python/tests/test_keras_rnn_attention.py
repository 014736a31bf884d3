"""plexus.keras recurrent and attention layers against Keras 3 (TensorFlow backend).

Each layer is built in both libraries with the same arguments, Keras's
weights are copied into ours with set_weights, and outputs and gradients
(of sum(output * random) with respect to the inputs and every weight) are
compared. Sequences are short (at most 7 steps), so rtol/atol 1e-5 holds
for outputs and 1e-4 for gradients (they sum over the time loop).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(11)
TOL = dict(rtol=1e-5, atol=1e-5)
GTOL = dict(rtol=1e-4, atol=1e-4)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _flat(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def _unnumbered(path):
    return re.sub(r"_\d+(?=/|$)", "", path)


def _pair(make, shape, *extra_shapes):
    """The same layer from Keras and from plexus.keras, built, with Keras's (randomized) weights in both."""
    kl, pl = make(keras.layers), make(pk.layers)
    kl.build(shape, *extra_shapes) if extra_shapes else kl.build(shape)
    weights = [RNG.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in kl.weights]
    kl.set_weights(weights)
    pl.build(shape, *extra_shapes) if extra_shapes else pl.build(shape)
    pl.set_weights(weights)
    # Same weight paths up to the per-process name counters ("lstm_3" vs "lstm_1").
    assert [_unnumbered(w.path) for w in pl.weights] == [_unnumbered(w.path) for w in kl.weights]
    return kl, pl


def _compare(kl, pl, inputs, call_kwargs=None, tf_kwargs=None, px_kwargs=None, tol=TOL, gtol=GTOL):
    """Outputs and gradients of sum(sum(out_i * r_i)) w.r.t. every input array and every trainable weight."""
    call_kwargs = call_kwargs or {}
    inputs = inputs if isinstance(inputs, list) else [inputs]
    kx = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for x in kx:
            tape.watch(x)
        ky = _flat(kl(*kx, **call_kwargs, **(tf_kwargs or {})))
        rs = [_rand(*y.shape) for y in ky]
        kloss = tf.add_n([tf.reduce_sum(y * r) for y, r in zip(ky, rs)])
    kg = tape.gradient(kloss, kx + kl.trainable_weights)
    pxs = [px.constant(x) for x in inputs]
    with px.GradientTape() as tape:
        for x in pxs:
            tape.watch(x)
        py = _flat(pl(*pxs, **call_kwargs, **(px_kwargs or {})))
        ploss = px.add_n([px.reduce_sum(y * px.constant(r)) for y, r in zip(py, rs)])
    pg = tape.gradient(ploss, pxs + pl.trainable_weights)
    assert len(py) == len(ky)
    for a, b in zip(py, ky):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert len(pg) == len(kg)
    for a, b in zip(pg, kg):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), **gtol)
    return py, ky


# ---- recurrent layers ------------------------------------------------------------------

RNN_CASES = [
    ("SimpleRNN", {}),
    ("SimpleRNN", {"return_sequences": True, "activation": "relu"}),
    ("LSTM", {}),
    ("LSTM", {"return_sequences": True, "return_state": True}),
    ("LSTM", {"go_backwards": True, "return_sequences": True}),
    ("LSTM", {"use_bias": False, "recurrent_activation": "hard_sigmoid", "return_state": True}),
    ("GRU", {}),
    ("GRU", {"return_sequences": True, "return_state": True, "go_backwards": True}),
    ("GRU", {"reset_after": False, "return_sequences": True}),
    ("GRU", {"reset_after": False, "return_state": True, "use_bias": False}),
]


@pytest.mark.parametrize("name,kwargs", RNN_CASES)
def test_recurrent_layer_matches_keras(name, kwargs):
    kl, pl = _pair(lambda L: getattr(L, name)(5, **kwargs), (3, 6, 4))
    _compare(kl, pl, _rand(3, 6, 4))
    kc, pc = kl.get_config(), pl.get_config()
    assert set(kc) - {"use_cudnn"} <= set(pc) | {"use_cudnn"}, set(kc) ^ set(pc)
    for key in ("units", "return_sequences", "return_state", "go_backwards"):
        assert pc[key] == kc[key]


def test_weight_layouts_and_paths():
    for name, shapes in [("LSTM", [(4, 20), (5, 20), (20,)]), ("GRU", [(4, 15), (5, 15), (2, 15)]),
                         ("SimpleRNN", [(4, 5), (5, 5), (5,)])]:
        layer = getattr(pk.layers, name)(5)
        layer(np.zeros((2, 3, 4), np.float32))
        assert [tuple(w.shape) for w in layer.weights] == shapes
    lstm = pk.layers.LSTM(3, name="enc")
    lstm.build((None, 4, 2))
    assert [w.path for w in lstm.weights] == ["enc/lstm_cell/kernel", "enc/lstm_cell/recurrent_kernel",
                                              "enc/lstm_cell/bias"]
    # unit_forget_bias: ones for the forget gate, zeros elsewhere; the recurrent kernel is orthogonal.
    bias = lstm.weights[2].numpy()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(3), np.ones(3), np.zeros(6)])
    rk = lstm.weights[1].numpy()
    np.testing.assert_allclose(rk @ rk.T, np.eye(3), atol=1e-5)
    gru = pk.layers.GRU(3, reset_after=False)
    gru.build((None, 4, 2))
    assert tuple(gru.weights[2].shape) == (9,)


def test_initial_state():
    kl, pl = _pair(lambda L: L.LSTM(5, return_state=True), (2, 4, 3))
    x, h, c = _rand(2, 4, 3), _rand(2, 5), _rand(2, 5)
    ky = kl(x, initial_state=[tf.constant(h), tf.constant(c)])
    py = pl(px.constant(x), initial_state=[px.constant(h), px.constant(c)])
    for a, b in zip(py, ky):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **TOL)


MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [0, 1, 1, 0, 1, 1]], bool)


@pytest.mark.parametrize("name,kwargs", [("LSTM", {"return_sequences": True, "return_state": True}),
                                         ("GRU", {"return_sequences": True, "go_backwards": True}),
                                         ("SimpleRNN", {}),
                                         ("GRU", {"reset_after": False, "return_state": True})])
def test_masked_steps_keep_the_state(name, kwargs):
    kl, pl = _pair(lambda L: getattr(L, name)(4, **kwargs), (3, 6, 3))
    _compare(kl, pl, _rand(3, 6, 3), tf_kwargs={"mask": tf.constant(MASK)}, px_kwargs={"mask": px.constant(MASK)})


def test_mask_from_embedding_in_a_functional_model():
    ids = np.array([[3, 5, 2, 0, 0], [7, 1, 0, 0, 0], [4, 4, 4, 4, 9]], np.int32)

    def build(L, M):
        inp = L.Input((5,), dtype="int32")
        e = L.Embedding(10, 4, mask_zero=True)(inp)
        seq = L.LSTM(3, return_sequences=True)(e)
        last = L.GRU(2)(seq)
        return M.Model(inp, [seq, last])

    km, pm = build(keras.layers, keras), build(pk.layers, pk)
    pm.set_weights(km.get_weights())
    for a, b in zip(pm(ids), km(ids)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(merge_mode):
    kl, pl = _pair(lambda L: L.Bidirectional(L.LSTM(3, return_sequences=True), merge_mode=merge_mode), (2, 5, 4))
    _compare(kl, pl, _rand(2, 5, 4))


def test_bidirectional_states_masks_and_backward_layer():
    kl, pl = _pair(lambda L: L.Bidirectional(L.GRU(3, return_state=True)), (3, 6, 2))
    _compare(kl, pl, _rand(3, 6, 2))
    kl, pl = _pair(lambda L: L.Bidirectional(L.LSTM(3, return_sequences=True)), (3, 6, 2))
    assert _unnumbered(pl.weights[0].path) == "bidirectional/forward_lstm/lstm_cell/kernel"
    _compare(kl, pl, _rand(3, 6, 2), tf_kwargs={"mask": tf.constant(MASK)}, px_kwargs={"mask": px.constant(MASK)})
    kl, pl = _pair(lambda L: L.Bidirectional(L.SimpleRNN(3), backward_layer=L.GRU(3, go_backwards=True),
                                             merge_mode="sum"), (3, 6, 2))
    _compare(kl, pl, _rand(3, 6, 2))


def test_dropout_in_training_only():
    layer = pk.layers.LSTM(6, dropout=0.5, recurrent_dropout=0.5, return_sequences=True, seed=1)
    x = px.constant(_rand(4, 5, 3))
    a, b = layer(x).numpy(), layer(x).numpy()
    np.testing.assert_array_equal(a, b)
    c = layer(x, training=True).numpy()
    assert not np.allclose(a, c)
    for name in ("GRU", "SimpleRNN"):
        layer = getattr(pk.layers, name)(6, dropout=0.3, recurrent_dropout=0.3)
        assert not np.allclose(layer(x).numpy(), layer(x, training=True).numpy())


def test_generic_rnn_with_a_keras_cell_layout():
    kl, pl = _pair(lambda L: L.RNN(L.GRUCell(4), return_sequences=True, go_backwards=True), (2, 5, 3))
    _compare(kl, pl, _rand(2, 5, 3))
    kl, pl = _pair(lambda L: L.RNN(L.LSTMCell(4), return_state=True), (2, 5, 3))
    _compare(kl, pl, _rand(2, 5, 3))


def test_traced_with_an_unknown_batch():
    layer = pk.layers.GRU(4, return_sequences=True)
    x = _rand(3, 5, 2)
    eager = layer(x).numpy()
    fn = px.function(lambda t: layer(t), input_signature=[px.TensorSpec([None, 5, 2], px.float32)])
    concrete = fn.get_concrete_function()  # traced once, for any batch size
    np.testing.assert_allclose(concrete(x).numpy(), eager, **TOL)
    np.testing.assert_allclose(concrete(x[:2]).numpy(), eager[:2], **TOL)
    unknown = px.function(lambda t: layer(t), input_signature=[px.TensorSpec([None, None, 2], px.float32)])
    with pytest.raises(ValueError, match="sequence length must be known when tracing"):
        unknown.get_concrete_function()


def test_stateful_keeps_states_between_calls():
    layer = pk.layers.SimpleRNN(3, stateful=True)
    x = _rand(2, 4, 2)
    layer.build((2, 4, 2))
    first, second = layer(x).numpy(), layer(x).numpy()
    assert not np.allclose(first, second)
    layer.reset_state()
    np.testing.assert_allclose(layer(x).numpy(), first, **TOL)


def test_lstm_trains_in_a_sequential_model():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 3)).astype(np.float32)
    y = (x[:, :, 0].sum(axis=1, keepdims=True) > 0).astype(np.float32)
    model = pk.Sequential([pk.layers.Input((6, 3)), pk.layers.LSTM(8), pk.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=pk.optimizers.Adam(0.02), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] * 0.7, losses
    assert model.predict(x, verbose=0).shape == (64, 1)


# ---- attention --------------------------------------------------------------------------


def _mha_pair(q_shape, v_shape, k_shape=None, **kwargs):
    shapes = (v_shape,) if k_shape is None else (v_shape, k_shape)
    return _pair(lambda L: L.MultiHeadAttention(**kwargs), q_shape, *shapes)


def test_multi_head_attention_weights_match_keras():
    kl, pl = _mha_pair((2, 5, 8), (2, 7, 6), num_heads=3, key_dim=4, value_dim=5)
    assert [tuple(w.shape) for w in pl.weights] == [(8, 3, 4), (3, 4), (6, 3, 4), (3, 4), (6, 3, 5), (3, 5),
                                                    (3, 5, 8), (8,)]
    assert [_unnumbered(w.path) for w in pl.weights][:2] == ["multi_head_attention/query/kernel",
                                                             "multi_head_attention/query/bias"]
    kc, pc = kl.get_config(), pl.get_config()
    assert set(kc) <= set(pc), set(kc) - set(pc)


@pytest.mark.parametrize("kwargs", [{"num_heads": 2, "key_dim": 4},
                                    {"num_heads": 3, "key_dim": 2, "value_dim": 5, "use_bias": False},
                                    {"num_heads": 2, "key_dim": 3, "output_shape": 6}])
def test_multi_head_attention_self_and_cross(kwargs):
    q, v = _rand(2, 5, 8), _rand(2, 7, 8)
    kl, pl = _mha_pair((2, 5, 8), (2, 5, 8), **kwargs)
    _compare(kl, pl, [q, q])
    kl, pl = _mha_pair((2, 5, 8), (2, 7, 8), (2, 7, 6), **kwargs)
    _compare(kl, pl, [q, v, _rand(2, 7, 6)])


def test_multi_head_attention_masks_and_scores():
    q, v = _rand(2, 5, 8), _rand(2, 6, 8)
    kl, pl = _mha_pair((2, 5, 8), (2, 6, 8), num_heads=2, key_dim=4)
    amask = RNG.uniform(size=(2, 5, 6)) > 0.4
    amask[:, :, 0] = True  # no query attends to nothing
    _compare(kl, pl, [q, v], tf_kwargs={"attention_mask": tf.constant(amask)},
             px_kwargs={"attention_mask": px.constant(amask)})
    vmask = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
    _compare(kl, pl, [q, v], tf_kwargs={"value_mask": tf.constant(vmask)},
             px_kwargs={"value_mask": px.constant(vmask)})
    # Scores come back in Keras's layout [batch, heads, Tq, Tv].
    _compare(kl, pl, [q, v], call_kwargs={"return_attention_scores": True})


def test_multi_head_attention_causal_mask():
    x = _rand(2, 6, 8)
    kl, pl = _mha_pair((2, 6, 8), (2, 6, 8), num_heads=2, key_dim=4)
    _compare(kl, pl, [x, x], call_kwargs={"use_causal_mask": True})
    amask = np.ones((2, 6, 6), bool)
    amask[1, :, 2] = False
    _compare(kl, pl, [x, x], call_kwargs={"use_causal_mask": True, "return_attention_scores": True},
             tf_kwargs={"attention_mask": tf.constant(amask)}, px_kwargs={"attention_mask": px.constant(amask)})


def test_multi_head_attention_over_two_axes():
    x = _rand(2, 3, 4, 6)
    kl, pl = _mha_pair((2, 3, 4, 6), (2, 3, 4, 6), num_heads=2, key_dim=3, attention_axes=(1, 2))
    _compare(kl, pl, [x, x], call_kwargs={"return_attention_scores": True})


def test_multi_head_attention_dropout_and_trace():
    layer = pk.layers.MultiHeadAttention(2, 4, dropout=0.5, seed=3)
    x = _rand(3, 5, 8)
    eager = layer(x, x).numpy()
    np.testing.assert_array_equal(eager, layer(x, x).numpy())
    assert not np.allclose(eager, layer(x, x, training=True).numpy())
    fn = px.function(lambda t: layer(t, t, use_causal_mask=True),
                     input_signature=[px.TensorSpec([None, 5, 8], px.float32)])
    concrete = fn.get_concrete_function()
    full = layer(x, x, use_causal_mask=True).numpy()
    np.testing.assert_allclose(concrete(x).numpy(), full, **TOL)
    np.testing.assert_allclose(concrete(x[:1]).numpy(), full[:1], **TOL)


@pytest.mark.parametrize("name,kwargs", [("Attention", {}), ("Attention", {"use_scale": True}),
                                         ("Attention", {"score_mode": "concat", "use_scale": True}),
                                         ("AdditiveAttention", {}), ("AdditiveAttention", {"use_scale": False})])
def test_dot_and_additive_attention(name, kwargs):
    q, v, k = _rand(2, 4, 5), _rand(2, 6, 5), _rand(2, 6, 5)
    kl, pl = _pair(lambda L: getattr(L, name)(**kwargs), [(2, 4, 5), (2, 6, 5)])
    for inputs in ([q, v], [q, v, k]):
        ky = kl([tf.constant(a) for a in inputs], return_attention_scores=True)
        py = pl([px.constant(a) for a in inputs], return_attention_scores=True)
        for a, b in zip(py, ky):
            np.testing.assert_allclose(a.numpy(), b.numpy(), **TOL)
    qm = np.array([[1, 1, 1, 0], [1, 0, 1, 1]], bool)
    vm = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 0, 1, 1, 1]], bool)
    ky = kl([tf.constant(q), tf.constant(v)], mask=[tf.constant(qm), tf.constant(vm)], use_causal_mask=True)
    py = pl([px.constant(q), px.constant(v)], mask=[px.constant(qm), px.constant(vm)], use_causal_mask=True)
    np.testing.assert_allclose(py.numpy(), ky.numpy(), **TOL)
    # Gradients with respect to the inputs and the weights.
    r = _rand(2, 4, 5)
    kx = [tf.constant(q), tf.constant(v)]
    with tf.GradientTape() as tape:
        tape.watch(kx)
        kloss = tf.reduce_sum(kl(kx) * r)
    kg = tape.gradient(kloss, kx + kl.trainable_weights)
    pxs = [px.constant(q), px.constant(v)]
    with px.GradientTape() as tape:
        for t in pxs:
            tape.watch(t)
        ploss = px.reduce_sum(pl(pxs) * px.constant(r))
    pg = tape.gradient(ploss, pxs + pl.trainable_weights)
    for a, b in zip(pg, kg):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), **GTOL)
    assert set(kl.get_config()) <= set(pl.get_config())


def test_multi_head_attention_gate_and_embedding_masks_in_a_model():
    kl, pl = _mha_pair((2, 5, 8), (2, 5, 8), num_heads=2, key_dim=4, use_gate=True)
    x = _rand(2, 5, 8)
    _compare(kl, pl, [x, x])
    ids = np.array([[3, 5, 2, 0, 0], [7, 1, 4, 4, 9]], np.int32)

    def build(L, M):
        inp = L.Input((5,), dtype="int32")
        e = L.Embedding(10, 8, mask_zero=True)(inp)
        out = L.MultiHeadAttention(2, 4)(e, e)
        return M.Model(inp, L.GlobalAveragePooling1D()(out))

    km, pm = build(keras.layers, keras), build(pk.layers, pk)
    pm.set_weights(km.get_weights())
    np.testing.assert_allclose(np.asarray(pm(ids)), np.asarray(km(ids)), **TOL)
