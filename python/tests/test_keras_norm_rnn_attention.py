"""plexus.keras normalization, recurrent and attention layers against Keras 3, eagerly and traced.

For each case the layer is built in Keras (TensorFlow backend) and twice in
plexus.keras with the same arguments; Keras's weights (randomized) are
copied into ours with ``set_weights(keras_layer.get_weights())``. One of our
copies runs eagerly, the other inside ``plexus.function`` traced once with
an unknown batch size (and, where the layer allows it, unknown sequence
or spatial sizes). Both must give Keras's outputs and Keras's gradients of
sum(output_i * random_i) with respect to every input and every trainable
weight; layers called with training=True (BatchNormalization) must also
leave the same moving statistics.

Tolerances: outputs rtol/atol 1e-5 and gradients 1e-4 (they sum over
batches and time steps) in float32; for a 40-step LSTM 1e-4 and 1e-3;
under mixed_float16, 5e-3 (float16 has 11 bits of mantissa).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(25)
TOL = dict(rtol=1e-5, atol=1e-5)
GTOL = dict(rtol=1e-4, atol=1e-4)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _flat(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def _weights_like(layer):
    """Random weights for a built Keras layer; variances and scales positive."""
    out = []
    for w in layer.weights:
        if any(k in w.path for k in ("variance", "gamma", "scale")):
            out.append(RNG.uniform(0.5, 1.5, w.shape).astype(np.float32))
        else:
            out.append(RNG.uniform(-0.5, 0.5, w.shape).astype(np.float32))
    return out


def _build(layer, shapes, list_input):
    if list_input:
        layer.build(list(shapes))
    else:
        layer.build(*shapes)


def _run_case(make, inputs, call, masks=(), training=False, list_input=False, free=(), tol=TOL, gtol=GTOL):
    """Compares Keras and plexus.keras (eager and traced) on one layer.

    `make(L)` builds the layer from a layers module; `call(layer, xs, ms,
    training)` calls it on the input tensors xs and mask tensors ms (the
    same code for both libraries); `free` lists the non-batch axes that the
    trace leaves unknown (the same for every input and mask).
    """
    shapes = [x.shape for x in inputs]
    kl, eager, traced = make(keras.layers), make(pk.layers), make(pk.layers)
    _build(kl, shapes, list_input)
    weights = _weights_like(kl)
    kl.set_weights(weights)
    for pl in (eager, traced):
        _build(pl, shapes, list_input)
        pl.set_weights(weights)
        assert len(pl.weights) == len(kl.weights)

    # Keras.
    kx = [tf.constant(x) for x in inputs]
    km = [tf.constant(m) for m in masks]
    with tf.GradientTape() as tape:
        for x in kx:
            tape.watch(x)
        ky = _flat(call(kl, kx, km, training))
        rs = [_rand(*y.shape) for y in ky]
        kloss = tf.add_n([tf.reduce_sum(y * r) for y, r in zip(ky, rs)])
    kg = tape.gradient(kloss, kx + kl.trainable_weights)
    expected = [y.numpy() for y in ky] + [None if g is None else np.asarray(g) for g in kg]

    def step(layer, xs, ms, rs_):
        with px.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            ys = _flat(call(layer, xs, ms, training))
            loss = px.add_n([px.reduce_sum(y * r) for y, r in zip(ys, rs_)])
        return ys + tape.gradient(loss, xs + layer.trainable_weights)

    n_x, n_m = len(inputs), len(masks)
    got_eager = step(eager, [px.constant(x) for x in inputs], [px.constant(m) for m in masks],
                     [px.constant(r) for r in rs])

    def spec(a, dtype, is_output=False):
        shape = [None if i == 0 or (i in free and not is_output) else d for i, d in enumerate(a.shape)]
        return px.TensorSpec(shape, dtype)

    signature = ([spec(x, px.float32) for x in inputs] + [spec(m, px.bool) for m in masks]
                 + [spec(r, px.float32, is_output=True) for r in rs])
    fn = px.function(lambda *a: step(traced, list(a[:n_x]), list(a[n_x:n_x + n_m]), list(a[n_x + n_m:])),
                     input_signature=signature)
    got_traced = fn.get_concrete_function()(*inputs, *masks, *rs)

    n_out = len(ky)
    for got in (got_eager, got_traced):
        assert len(got) == len(expected)
        for i, (a, b) in enumerate(zip(got, expected)):
            if b is None:
                assert a is None, f"result {i}: Keras has no gradient, plexus has one"
                continue
            np.testing.assert_allclose(a.numpy(), b, **(tol if i < n_out else gtol), err_msg=f"result {i}")
    for pl in (eager, traced):  # moving statistics and other non-trainable state
        for a, b in zip(pl.non_trainable_weights, kl.non_trainable_weights):
            np.testing.assert_allclose(a.numpy(), b.numpy(), **TOL, err_msg=a.path)
    return kl, eager


def _single(layer, xs, ms, training):
    kwargs = {"mask": ms[0]} if ms else {}
    if "training" in layer.call.__code__.co_varnames:
        kwargs["training"] = training
    return layer(xs[0], **kwargs)


# ---- normalization ------------------------------------------------------------------------

NORM_CASES = [
    ("bn", lambda L: L.BatchNormalization(), (4, 6), False, ()),
    ("bn-train", lambda L: L.BatchNormalization(), (4, 6), True, ()),
    ("bn-train-4d", lambda L: L.BatchNormalization(center=False, momentum=0.9), (3, 5, 5, 4), True, (1, 2)),
    ("bn-axis1", lambda L: L.BatchNormalization(axis=1, epsilon=0.01), (3, 4, 5, 5), True, (2, 3)),
    ("bn-axis1-infer", lambda L: L.BatchNormalization(axis=1, scale=False), (3, 4, 5, 5), False, (2, 3)),
    ("ln", lambda L: L.LayerNormalization(), (4, 6), False, ()),
    ("ln-axes", lambda L: L.LayerNormalization(axis=[1, 2], center=False), (3, 5, 8), False, ()),
    ("ln-axis1", lambda L: L.LayerNormalization(axis=1, scale=False), (3, 4, 6), False, (2,)),
    ("ln-rms", lambda L: L.LayerNormalization(rms_scaling=True), (3, 5, 8), False, (1,)),
    ("gn", lambda L: L.GroupNormalization(groups=4), (3, 5, 5, 8), False, (1, 2)),
    ("gn-axis1", lambda L: L.GroupNormalization(groups=2, axis=1), (2, 8, 4, 4), False, (2, 3)),
    ("gn-instance", lambda L: L.GroupNormalization(groups=6, center=False), (2, 7, 6), False, (1,)),
    ("unit", lambda L: L.UnitNormalization(), (4, 6), False, ()),
    ("unit-axes", lambda L: L.UnitNormalization(axis=[1, 2]), (3, 4, 5), False, ()),
]


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize("name,make,shape,training,free", NORM_CASES, ids=[c[0] for c in NORM_CASES])
def test_normalization(name, make, shape, training, free):
    x = _rand(*shape) * 2 + 1
    _run_case(make, [x], _single, training=training, free=free)


def test_batch_normalization_masked_statistics():
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [0, 1, 1, 1, 1]], bool)
    _run_case(lambda L: L.BatchNormalization(momentum=0.8), [_rand(3, 5, 4) * 2 + 1], _single, masks=[mask],
              training=True, free=(1,))


def test_batch_normalization_frozen_uses_moving_statistics():
    layer = pk.layers.BatchNormalization()
    layer.build((None, 3))
    layer.set_weights([np.full(3, 2.0, np.float32), np.full(3, 0.5, np.float32), np.full(3, 1.0, np.float32),
                       np.full(3, 4.0, np.float32)])
    layer.trainable = False
    x = _rand(5, 3)
    expected = (x - 1.0) / np.sqrt(4.0 + 1e-3) * 2.0 + 0.5
    np.testing.assert_allclose(layer(x, training=True).numpy(), expected, **TOL)
    np.testing.assert_array_equal(layer.moving_mean.numpy(), np.ones(3, np.float32))


# ---- recurrent layers ---------------------------------------------------------------------

MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [0, 1, 1, 0, 1, 1]], bool)

RNN_CASES = [
    ("simple-seq", lambda L: L.SimpleRNN(4, return_sequences=True, activation="relu"), False),
    ("simple-back-mask", lambda L: L.SimpleRNN(4, go_backwards=True, return_state=True), True),
    ("lstm-state", lambda L: L.LSTM(4, return_state=True), False),
    ("lstm-seq-back-mask", lambda L: L.LSTM(4, return_sequences=True, go_backwards=True), True),
    ("lstm-nobias", lambda L: L.LSTM(4, use_bias=False, unit_forget_bias=False,
                                     recurrent_activation="hard_sigmoid", return_sequences=True), False),
    ("gru-all-mask", lambda L: L.GRU(4, return_sequences=True, return_state=True), True),
    ("gru-v1-back", lambda L: L.GRU(4, reset_after=False, go_backwards=True, return_sequences=True), False),
    ("gru-v1-mask", lambda L: L.GRU(4, reset_after=False, return_state=True), True),
    ("rnn-lstmcell", lambda L: L.RNN(L.LSTMCell(3), return_sequences=True, return_state=True), True),
    ("rnn-grucell", lambda L: L.RNN(L.GRUCell(3, reset_after=False), go_backwards=True), False),
    ("rnn-simplecell", lambda L: L.RNN(L.SimpleRNNCell(3), return_state=True), True),
]


@pytest.mark.parametrize("name,make,masked", RNN_CASES, ids=[c[0] for c in RNN_CASES])
def test_recurrent(name, make, masked):
    _run_case(make, [_rand(3, 6, 5)], _single, masks=[MASK] if masked else [])


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(merge_mode):
    _run_case(lambda L: L.Bidirectional(L.LSTM(3, return_sequences=True), merge_mode=merge_mode),
              [_rand(3, 6, 4)], _single, masks=[MASK])


@pytest.mark.parametrize("make", [
    lambda L: L.Bidirectional(L.GRU(3, return_state=True)),
    lambda L: L.Bidirectional(L.SimpleRNN(3, return_sequences=True),
                              backward_layer=L.LSTM(3, go_backwards=True, return_sequences=True), merge_mode="ave"),
], ids=["gru-states", "backward-layer"])
def test_bidirectional_states_and_backward_layer(make):
    _run_case(make, [_rand(3, 6, 4)], _single, masks=[MASK])


def test_long_lstm():
    tol = dict(rtol=1e-4, atol=1e-4)
    _run_case(lambda L: L.LSTM(8, return_sequences=True), [_rand(2, 40, 6)], _single, tol=tol,
              gtol=dict(rtol=1e-3, atol=1e-3))


def test_unknown_sequence_length_is_refused_when_tracing():
    for layer in (pk.layers.LSTM(3), pk.layers.Bidirectional(pk.layers.GRU(3))):
        fn = px.function(lambda t: layer(t), input_signature=[px.TensorSpec([None, None, 2], px.float32)])
        with pytest.raises(ValueError, match="sequence length must be known"):
            fn.get_concrete_function()


def test_embedding_masks_through_bidirectional_and_attention():
    ids = np.array([[3, 5, 2, 0, 0, 0], [7, 1, 6, 6, 2, 0], [4, 4, 4, 4, 9, 1]], np.int32)

    def build(L, M):
        inp = L.Input((6,), dtype="int32")
        e = L.Embedding(10, 4, mask_zero=True)(inp)
        seq = L.Bidirectional(L.LSTM(3, return_sequences=True))(e)
        att = L.Attention()([seq, seq])
        return M.Model(inp, [seq, L.GRU(2)(att)])

    km, pm = build(keras.layers, keras), build(pk.layers, pk)
    pm.set_weights([w + RNG.uniform(-0.3, 0.3, w.shape).astype(np.float32) for w in km.get_weights()])
    km.set_weights(pm.get_weights())
    for a, b in zip(pm(ids), km(ids)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL)


def test_encoder_decoder_states_in_a_functional_model():
    def build(L, M):
        enc_in, dec_in = L.Input((5, 3)), L.Input((4, 2))
        _, h, c = L.LSTM(6, return_state=True)(enc_in)
        dec = L.LSTM(6, return_sequences=True)(dec_in, initial_state=[h, c])
        return M.Model([enc_in, dec_in], L.Dense(2)(dec))

    km, pm = build(keras.layers, keras), build(pk.layers, pk)
    pm.set_weights(km.get_weights())
    x = [_rand(2, 5, 3), _rand(2, 4, 2)]
    np.testing.assert_allclose(np.asarray(pm(x)), np.asarray(km(x)), **TOL)


def test_masked_recurrent_stack_with_normalization_trains_like_keras():
    def build(L, M):
        return M.Sequential([L.Input((6,)), L.Embedding(20, 8, mask_zero=True),
                             L.Bidirectional(L.GRU(4, return_sequences=True)), L.LayerNormalization(),
                             L.LSTM(4), L.BatchNormalization(), L.Dense(1)])

    km, pm = build(keras.layers, keras), build(pk.layers, pk)
    pm.set_weights(km.get_weights())
    x = RNG.integers(0, 20, (32, 6)).astype(np.int32)
    x[:, 4:] *= RNG.uniform(size=(32, 2)) > 0.5  # some padded tails
    y = _rand(32, 1)
    for m, K in ((km, keras), (pm, pk)):
        m.compile(K.optimizers.SGD(0.05), "mse")
    kh = km.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    ph = pm.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    # Eight SGD steps through two recurrent layers and BatchNormalization
    # amplify float32 rounding (the summation order of a reduction changes
    # with the threads a busy machine leaves free): 1e-3, not 1e-4.
    np.testing.assert_allclose(ph.history["loss"], kh.history["loss"], rtol=1e-3)
    for a, b in zip(pm.get_weights(), km.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


# ---- attention ------------------------------------------------------------------------------


def _mha(**kwargs):
    return lambda L: L.MultiHeadAttention(**kwargs)


def _mha_call(**call_kwargs):
    def call(layer, xs, ms, training):
        kwargs = dict(call_kwargs, training=training)
        if ms:
            kwargs["attention_mask"] = ms[0]
        return layer(*xs, **kwargs)
    return call


AMASK = RNG.uniform(size=(2, 5, 5)) > 0.4
AMASK[:, :, 0] = True  # every query attends to something

MHA_CASES = [
    ("self", _mha(num_heads=2, key_dim=4), [(2, 5, 8)] * 2, _mha_call(), []),
    ("cross-key", _mha(num_heads=3, key_dim=2, value_dim=5, output_shape=6),
     [(2, 5, 8), (2, 7, 8), (2, 7, 6)], _mha_call(), []),
    ("nobias-scores", _mha(num_heads=2, key_dim=3, use_bias=False), [(2, 5, 8), (2, 4, 8)],
     _mha_call(return_attention_scores=True), []),
    ("mask", _mha(num_heads=2, key_dim=4), [(2, 5, 8)] * 2, _mha_call(), [AMASK]),
    ("causal", _mha(num_heads=2, key_dim=4), [(2, 5, 8)] * 2, _mha_call(use_causal_mask=True), []),
    ("causal-mask-scores", _mha(num_heads=2, key_dim=4), [(2, 5, 8)] * 2,
     _mha_call(use_causal_mask=True, return_attention_scores=True), [AMASK]),
    ("axes-1-2", _mha(num_heads=2, key_dim=3, attention_axes=(1, 2)), [(2, 3, 4, 6)] * 2,
     _mha_call(return_attention_scores=True), []),
    ("axis-2-of-4d", _mha(num_heads=2, key_dim=3, attention_axes=2), [(2, 3, 4, 6)] * 2, _mha_call(), []),
]


@pytest.mark.parametrize("name,make,shapes,call,masks", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_multi_head_attention(name, make, shapes, call, masks):
    free = tuple(range(1, len(shapes[0]) - 1))
    kl, pl = _run_case(make, [_rand(*s) for s in shapes], call, masks=masks, free=free)
    assert [w.path.split("/", 1)[1] for w in pl.weights] == [w.path.split("/", 1)[1] for w in kl.weights]


def test_multi_head_attention_weight_order():
    layer = pk.layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=5)
    layer(_rand(2, 5, 8), _rand(2, 7, 6))
    assert [(w.path.split("/", 1)[1], tuple(w.shape)) for w in layer.weights] == [
        ("query/kernel", (8, 3, 4)), ("query/bias", (3, 4)), ("key/kernel", (6, 3, 4)), ("key/bias", (3, 4)),
        ("value/kernel", (6, 3, 5)), ("value/bias", (3, 5)), ("attention_output/kernel", (3, 5, 8)),
        ("attention_output/bias", (8,))]


def _attention_call(scores=False, causal=False):
    def call(layer, xs, ms, training):
        kwargs = {"return_attention_scores": scores, "use_causal_mask": causal, "training": training}
        if ms:
            kwargs["mask"] = list(ms)
        return layer(list(xs), **kwargs)
    return call


QMASK = np.array([[1, 1, 1, 0], [1, 0, 1, 1]], bool)
VMASK = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 0, 1, 1, 1]], bool)

ATTENTION_CASES = [
    ("dot", lambda L: L.Attention(), [(2, 4, 5), (2, 6, 5)], _attention_call(scores=True), []),
    ("dot-scale-key", lambda L: L.Attention(use_scale=True), [(2, 4, 5), (2, 6, 5), (2, 6, 5)],
     _attention_call(), []),
    ("dot-masks", lambda L: L.Attention(), [(2, 4, 5), (2, 6, 5)], _attention_call(), [QMASK, VMASK]),
    ("dot-causal", lambda L: L.Attention(use_scale=True), [(2, 4, 5), (2, 6, 5)],
     _attention_call(scores=True, causal=True), [QMASK, VMASK]),
    ("concat", lambda L: L.Attention(score_mode="concat", use_scale=True), [(2, 4, 5), (2, 6, 5)],
     _attention_call(scores=True), [QMASK, VMASK]),
    ("additive", lambda L: L.AdditiveAttention(), [(2, 4, 5), (2, 6, 5), (2, 6, 5)],
     _attention_call(scores=True), []),
    ("additive-noscale-causal", lambda L: L.AdditiveAttention(use_scale=False), [(2, 4, 5), (2, 6, 5)],
     _attention_call(causal=True), [QMASK, VMASK]),
]


@pytest.mark.parametrize("name,make,shapes,call,masks", ATTENTION_CASES, ids=[c[0] for c in ATTENTION_CASES])
def test_dot_and_additive_attention(name, make, shapes, call, masks):
    _run_case(make, [_rand(*s) for s in shapes], call, masks=masks, list_input=True, free=(1,))


# ---- mixed precision and configs ------------------------------------------------------------------


@pytest.fixture
def mixed_float16():
    keras.mixed_precision.set_global_policy("mixed_float16")
    pk.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy("float32")
    pk.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("make,n_inputs,training", [
    (lambda L: L.BatchNormalization(), 1, True), (lambda L: L.BatchNormalization(), 1, False),
    (lambda L: L.LayerNormalization(), 1, False), (lambda L: L.GroupNormalization(groups=2), 1, False),
    (lambda L: L.LSTM(4, return_sequences=True), 1, False), (lambda L: L.GRU(4), 1, False),
    (lambda L: L.MultiHeadAttention(2, 4), 2, False),
], ids=["bn-train", "bn", "ln", "gn", "lstm", "gru", "mha"])
def test_mixed_float16(mixed_float16, make, n_inputs, training):
    # Large values: BatchNormalization must compute its statistics in float32 as Keras does.
    x = (_rand(8, 5, 8) * 30 + 100).astype(np.float16) if training else _rand(8, 5, 8).astype(np.float16)
    kl, pl = make(keras.layers), make(pk.layers)
    kl.build(*[x.shape] * n_inputs)
    pl.build(*[x.shape] * n_inputs)
    weights = _weights_like(kl)
    kl.set_weights(weights)
    pl.set_weights(weights)
    kwargs = {"training": training} if training else {}
    ky = kl(*[tf.constant(x)] * n_inputs, **kwargs)
    py = pl(*[px.constant(x)] * n_inputs, **kwargs)
    assert py.dtype == px.float16 and ky.dtype == tf.float16
    tol = dict(rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(py.numpy().astype(np.float32), ky.numpy().astype(np.float32), **tol)
    for a, b in zip(pl.weights, kl.weights):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize("make", [
    lambda L: L.BatchNormalization(axis=1, momentum=0.9), lambda L: L.LayerNormalization(rms_scaling=True),
    lambda L: L.GroupNormalization(groups=2), lambda L: L.UnitNormalization(axis=[1, 2]),
    lambda L: L.SimpleRNN(3, go_backwards=True), lambda L: L.LSTM(3, unit_forget_bias=False, dropout=0.1),
    lambda L: L.GRU(3, reset_after=False, return_state=True), lambda L: L.RNN(L.GRUCell(3), return_sequences=True),
    lambda L: L.Bidirectional(L.LSTM(3, return_sequences=True), merge_mode="sum"),
    lambda L: L.MultiHeadAttention(2, 4, value_dim=3, output_shape=5),
    lambda L: L.Attention(use_scale=True, score_mode="concat"), lambda L: L.AdditiveAttention(use_scale=False),
], ids=["bn", "ln", "gn", "unit", "simple", "lstm", "gru", "rnn", "bidirectional", "mha", "attention", "additive"])
def test_configs_cross_load(make):
    kl, pl = make(keras.layers), make(pk.layers)
    kc, pc = kl.get_config(), pl.get_config()
    assert set(kc) - {"use_cudnn"} <= set(pc), set(kc) - set(pc)
    # Our layer from Keras's config, and Keras's layer from ours, give the same configs again.
    again = type(pl).from_config(kc).get_config()
    back = type(kl).from_config(pc).get_config()
    for key in kc:
        if key in ("name", "layer", "backward_layer", "cell", "dtype"):
            continue
        assert _comparable(again[key]) == _comparable(kc[key]), key
        assert _comparable(back[key]) == _comparable(kc[key]), key


def _comparable(value):
    """A config value without the keys one library adds to another's serialized objects (newer
    Keras writes initializers' input_axes and output_axes)."""
    if isinstance(value, dict) and "class_name" in value:
        inner = {k: v for k, v in (value.get("config") or {}).items() if k not in ("input_axes", "output_axes")}
        return value["class_name"], inner
    return value
