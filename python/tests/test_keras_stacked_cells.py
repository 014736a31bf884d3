"""StackedRNNCells (``RNN([cell, cell, ...])``) against Keras 3.

The same stacks are built in Keras and in plexus.keras, Keras's weights
are copied into ours, and the outputs and final states (with and without a
mask, eagerly and traced by predict), a few epochs of SGD, and `.keras`
files both ways are compared. Tolerances: outputs 1e-5; losses over four
epochs 1e-4 relative.
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
TOKENS = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8], [1, 0, 0, 0, 0], [9, 9, 0, 0, 0]])


def _stack(lib, return_state=False, mask=True):
    L = lib.layers
    x = lib.Input((5,), dtype="int32")
    e = L.Embedding(10, 6, mask_zero=mask)(x)
    cells = [L.LSTMCell(7), L.GRUCell(5), L.SimpleRNNCell(4)]
    out = L.RNN(cells, return_sequences=True, return_state=return_state)(e)
    return lib.Model(x, out)


def _pair(**kw):
    ours, theirs = _stack(pk, **kw), _stack(keras, **kw)
    assert [w.shape for w in ours.get_weights()] == [tuple(w.shape) for w in theirs.get_weights()]
    ours.set_weights(theirs.get_weights())
    return ours, theirs


@pytest.mark.parametrize("mask", [True, False], ids=["masked", "unmasked"])
def test_outputs_and_states_match_keras(mask):
    ours, theirs = _pair(return_state=True, mask=mask)
    want = theirs.predict(TOKENS, verbose=0)
    # Keras's structure: the sequence, [the LSTM's h, c], the GRU's h, the SimpleRNN's h.
    assert [len(w) if isinstance(w, list) else 0 for w in want] == [0, 2, 0, 0]
    for got in (ours.predict(TOKENS, verbose=0), ours(TOKENS)):
        assert [len(g) if isinstance(g, list) else 0 for g in got] == [0, 2, 0, 0]
        for g, w in zip(tf.nest.flatten(list(got)), tf.nest.flatten(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), **TOL)


def test_training_matches_keras():
    ours, theirs = _pair()
    y = np.random.default_rng(5).standard_normal((4, 5, 4)).astype(np.float32)
    for m in (ours, theirs):
        m.compile(optimizer="sgd", loss="mse")
    h_ours = ours.fit(TOKENS, y, epochs=4, batch_size=2, shuffle=False, verbose=0).history["loss"]
    h_theirs = theirs.fit(TOKENS, y, epochs=4, batch_size=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(h_ours, h_theirs, rtol=1e-4)


def test_keras_files_both_ways(tmp_path):
    theirs = _stack(keras)
    want = theirs.predict(TOKENS, verbose=0)
    theirs.save(tmp_path / "k.keras")
    ours = pk.models.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(ours.predict(TOKENS, verbose=0), want, **TOL)
    ours.save(tmp_path / "p.keras")
    back = keras.models.load_model(tmp_path / "p.keras")
    np.testing.assert_allclose(back.predict(TOKENS, verbose=0), want, **TOL)


def test_wrong_state_count_is_an_error_naming_the_layer():
    stack = pk.layers.StackedRNNCells([pk.layers.LSTMCell(3), pk.layers.GRUCell(2)])
    stack.build((None, 4))
    with pytest.raises(ValueError, match="got 2 states for cells with state sizes"):
        stack(np.zeros((1, 4), np.float32), [np.zeros((1, 3), np.float32)] * 2)
