"""Masks in plexus.keras models against Keras 3: which calls receive a mask,
and how a model output's mask weighs losses and metrics.

Keras 3's rules (keras/src/layers/layer.py, losses/loss.py,
metrics/reduction_metrics.py):

- a call with one tensor argument gets that argument's mask as ``mask``; a
  call with several gets each argument's mask as ``<argument>_mask`` where
  the layer has such a parameter, and no ``mask`` at all: a recurrent layer
  called with ``initial_state`` ignores its input's mask;
- a model output that carries a mask weighs the loss by it (the mean runs
  over the valid entries) and weighs the mean metrics by it.

Each case builds the model in Keras and in plexus.keras, copies Keras's
weights, and compares predictions (rtol/atol 1e-5), evaluate's loss and
metrics, and a few epochs of SGD losses (rtol 1e-4: the same arithmetic,
summed in another order).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from plexus import keras as pk  # noqa: E402

TOL = dict(rtol=1e-5, atol=1e-5)
TOKENS_A = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8], [1, 0, 0, 0, 0], [9, 9, 0, 0, 0]])
TOKENS_B = np.array([[1, 2, 0, 0], [3, 0, 0, 0], [1, 2, 3, 4], [5, 6, 7, 0]])


def _pair(build):
    """The same model in Keras and in plexus.keras, with Keras's weights in both."""
    ours, theirs = build(pk), build(keras)
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def _close(got, want, **tol):
    got, want = (got if isinstance(got, list) else [got]), (want if isinstance(want, list) else [want])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **(tol or TOL))


def _encoder_decoder(lib):
    L = lib.layers
    a, b = lib.Input((5,), dtype="int32"), lib.Input((4,), dtype="int32")
    ea = L.Embedding(10, 8, mask_zero=True)(a)
    _, h, c = L.LSTM(6, return_state=True)(ea)
    eb = L.Embedding(10, 8, mask_zero=True)(b)
    outs = [L.LSTM(6, return_sequences=True)(eb, initial_state=[h, c]),
            L.GRU(6)(eb, initial_state=[h]),
            L.SimpleRNN(6, return_sequences=True)(eb, initial_state=h)]
    return lib.Model([a, b], outs)


def test_recurrent_layers_with_initial_state_ignore_the_mask_as_in_keras():
    ours, theirs = _pair(_encoder_decoder)
    _close(ours.predict([TOKENS_A, TOKENS_B], verbose=0), theirs.predict([TOKENS_A, TOKENS_B], verbose=0))


def _masked_sequences(lib):
    return lib.Sequential([lib.Input((4,), dtype="int32"), lib.layers.Embedding(10, 8, mask_zero=True),
                           lib.layers.LSTM(6, return_sequences=True), lib.layers.Dense(3)])


@pytest.mark.parametrize("build", [_masked_sequences], ids=["sequential"])
def test_an_output_mask_weighs_losses_and_metrics_as_in_keras(build):
    ours, theirs = _pair(build)
    y = np.random.default_rng(3).standard_normal((4, 4, 3)).astype(np.float32)
    for m in (ours, theirs):
        m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    got = ours.evaluate(TOKENS_B, y, verbose=0, return_dict=True)
    want = theirs.evaluate(TOKENS_B, y, verbose=0, return_dict=True)
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5)
    # Unmasked, the loss would differ: the padded steps are not counted.
    plain = float(np.mean((ours.predict(TOKENS_B, verbose=0) - y) ** 2))
    assert abs(plain - want["loss"]) > 1e-3
    h_ours = ours.fit(TOKENS_B, y, epochs=4, batch_size=2, shuffle=False, verbose=0).history["loss"]
    h_theirs = theirs.fit(TOKENS_B, y, epochs=4, batch_size=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(h_ours, h_theirs, rtol=1e-4)


def test_a_loss_called_on_a_masked_output_uses_the_mask():
    ours, theirs = _pair(_masked_sequences)
    y = np.ones((4, 4, 3), np.float32)
    want = keras.losses.MeanSquaredError()(y, theirs(TOKENS_B))
    got = pk.losses.MeanSquaredError()(y, ours(TOKENS_B))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


def _attention(lib):
    L = lib.layers
    q, v = lib.Input((4,), dtype="int32"), lib.Input((5,), dtype="int32")
    eq = L.Embedding(10, 8, mask_zero=True)(q)
    ev = L.Embedding(10, 8, mask_zero=True)(v)
    return lib.Model([q, v], L.MultiHeadAttention(2, 4)(eq, ev))


def test_attention_gets_query_and_value_masks_by_name():
    ours, theirs = _pair(_attention)
    _close(ours.predict([TOKENS_B, TOKENS_A], verbose=0), theirs.predict([TOKENS_B, TOKENS_A], verbose=0))


def _nested(lib):
    inner_in = lib.Input((4,), dtype="int32")
    x = lib.layers.Embedding(10, 8, mask_zero=True)(inner_in)
    inner = lib.Model(inner_in, lib.layers.GRU(5, return_sequences=True)(x))
    outer_in = lib.Input((4,), dtype="int32")
    return lib.Model(outer_in, lib.layers.LSTM(3, return_sequences=True)(inner(outer_in)))


def test_a_nested_model_passes_its_output_mask_on():
    ours, theirs = _pair(_nested)
    _close(ours.predict(TOKENS_B, verbose=0), theirs.predict(TOKENS_B, verbose=0))
    y = np.full((4, 4, 3), 0.5, np.float32)
    for m in (ours, theirs):
        m.compile(optimizer="sgd", loss="mse")
    np.testing.assert_allclose(ours.evaluate(TOKENS_B, y, verbose=0), theirs.evaluate(TOKENS_B, y, verbose=0),
                               rtol=1e-5)


@pytest.mark.parametrize("scores", [False, True], ids=["dot_product", "with_scores"])
def test_attention_masks_called_eagerly_match_keras(scores):
    """Keras 3 ignores a query_mask argument (it reads the query tensor's own
    mask), and a query row whose keys are all masked attends uniformly in its
    dot_product_attention path but not at all when scores are returned."""
    rng = np.random.default_rng(4)
    q, v = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 5, 4)).astype(np.float32)
    query_mask = np.array([[1, 1, 0], [1, 0, 0]], bool)
    value_mask = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], bool)
    theirs, ours = keras.layers.MultiHeadAttention(2, 4), pk.layers.MultiHeadAttention(2, 4)
    theirs(q, v)
    ours(q, v)
    ours.set_weights(theirs.get_weights())
    kw = dict(query_mask=query_mask, value_mask=value_mask, return_attention_scores=scores)
    _close(list(ours(q, v, **kw)) if scores else ours(q, v, **kw),
           list(theirs(q, v, **kw)) if scores else theirs(q, v, **kw))
