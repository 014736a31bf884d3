"""plexus.keras against Keras 3: activations, losses, metrics, optimizers, and fit's loss curves.

The models train from the same weights on the same batches (shuffle=False)
in Keras (TensorFlow backend) and in plexus.keras; losses and metrics per
epoch must agree within 1e-4 relative (float32, a few dozen steps).
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

RNG = np.random.default_rng(0)


def _acts():
    names = []
    for name in dir(keras.activations):
        fn = getattr(keras.activations, name)
        if callable(fn) and not name.startswith("_") and name not in ("get", "serialize", "deserialize"):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _acts())
def test_activation_matches_keras(name):
    x = RNG.standard_normal((4, 6)).astype(np.float32) * 3
    args = (0.5, -1.0) if name == "threshold" else ()
    if name == "sparsemax":
        # Keras's TensorFlow sparsemax does not sum to 1 on some rows (Keras
        # 3.15); the reference is the formula in NumPy.
        s = -np.sort(-x, axis=-1)
        c = np.cumsum(s, -1)
        support = s - (c - 1) / np.arange(1, x.shape[-1] + 1) > 0
        k = support.sum(-1, keepdims=True)
        tau = (np.take_along_axis(np.where(support, c, 0), k - 1, -1) - 1) / k
        want = np.maximum(x - tau, 0)
    else:
        want = np.asarray(keras.activations.get(name)(x, *args))
    got = pk.activations.get(name)(px.constant(x), *args).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _loss_cases():
    yb = RNG.integers(0, 2, (8, 3)).astype(np.float32)
    pb = RNG.uniform(0.01, 0.99, (8, 3)).astype(np.float32)
    logits = RNG.standard_normal((8, 5)).astype(np.float32)
    onehot = np.eye(5, dtype=np.float32)[RNG.integers(0, 5, 8)]
    sparse = RNG.integers(0, 5, 8).astype(np.int32)
    reg_t = RNG.standard_normal((8, 3)).astype(np.float32)
    reg_p = RNG.standard_normal((8, 3)).astype(np.float32)
    pos_t, pos_p = np.abs(reg_t) + 0.1, np.abs(reg_p) + 0.1
    probs = tf.nn.softmax(logits).numpy()
    return [
        ("MeanSquaredError", {}, reg_t, reg_p), ("MeanAbsoluteError", {}, reg_t, reg_p),
        ("MeanAbsolutePercentageError", {}, reg_t, reg_p), ("MeanSquaredLogarithmicError", {}, pos_t, pos_p),
        ("Huber", {"delta": 0.7}, reg_t, reg_p), ("LogCosh", {}, reg_t, reg_p), ("Hinge", {}, yb, reg_p),
        ("SquaredHinge", {}, yb, reg_p), ("CategoricalHinge", {}, onehot, logits),
        ("KLDivergence", {}, probs, tf.nn.softmax(logits[::-1]).numpy()), ("Poisson", {}, pos_t, pos_p),
        ("CosineSimilarity", {}, reg_t, reg_p),
        ("BinaryCrossentropy", {}, yb, pb), ("BinaryCrossentropy", {"from_logits": True}, yb, reg_p),
        ("BinaryCrossentropy", {"label_smoothing": 0.1}, yb, pb),
        ("BinaryFocalCrossentropy", {"gamma": 2.0}, yb, pb),
        ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "from_logits": True}, yb, reg_p),
        ("CategoricalCrossentropy", {}, onehot, probs),
        ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.2}, onehot, logits),
        ("SparseCategoricalCrossentropy", {}, sparse, probs),
        ("SparseCategoricalCrossentropy", {"from_logits": True}, sparse, logits),
    ]


@pytest.mark.parametrize("case", _loss_cases(), ids=lambda c: f"{c[0]}{c[1]}")
@pytest.mark.parametrize("weighted", [False, True])
def test_loss_matches_keras(case, weighted):
    name, kwargs, y, p = case
    sw = RNG.uniform(0, 2, (len(p),)).astype(np.float32) if weighted else None
    want = float(getattr(keras.losses, name)(**kwargs)(y, p, sample_weight=sw))
    got = float(getattr(pk.losses, name)(**kwargs)(px.constant(y), px.constant(p),
                                                     None if sw is None else px.constant(sw)).numpy())
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_metrics_match_keras():
    y = RNG.integers(0, 4, 16)
    p = tf.nn.softmax(RNG.standard_normal((16, 4)).astype(np.float32)).numpy()
    yb = RNG.integers(0, 2, (16, 1)).astype(np.float32)
    pb = RNG.uniform(0, 1, (16, 1)).astype(np.float32)
    for name, kw, a, b in [("SparseCategoricalAccuracy", {}, y, p), ("CategoricalAccuracy", {}, np.eye(4)[y], p),
                           ("BinaryAccuracy", {}, yb, pb), ("Precision", {}, yb, pb), ("Recall", {}, yb, pb),
                           ("SparseTopKCategoricalAccuracy", {"k": 2}, y, p), ("RootMeanSquaredError", {}, yb, pb),
                           ("MeanAbsoluteError", {}, yb, pb)]:
        km, pm = getattr(keras.metrics, name)(**kw), getattr(pk.metrics, name)(**kw)
        for half in (slice(0, 8), slice(8, 16)):
            km.update_state(a[half], b[half])
            pm.update_state(px.constant(a[half]), px.constant(b[half]))
        np.testing.assert_allclose(float(pm.result().numpy()), float(km.result()), rtol=1e-5, err_msg=name)
        pm.reset_state()
        assert float(pm.result().numpy()) == 0.0


def _twin_models(kind):
    """The same small model in Keras and plexus.keras, with Keras's weights copied into ours."""
    def build(K):
        if kind == "mlp":
            return K.Sequential([K.Input((12,)), K.layers.Dense(16, activation="relu"), K.layers.Dense(3)])
        inp = K.Input((12,), name="x")
        h = K.layers.Dense(16, activation="tanh", name="hidden")(inp)
        a = K.layers.Dense(3, name="cls")(h)
        b = K.layers.Dense(1, name="reg")(K.layers.Concatenate()([h, inp]))
        return K.Model(inp, [a, b])
    km, pm = build(keras), build(pk)
    pm.set_weights(km.get_weights())
    return km, pm


@pytest.mark.parametrize("opt", [("SGD", {"learning_rate": 0.1, "momentum": 0.9}), ("Adam", {"learning_rate": 0.01}),
                                 ("RMSprop", {"learning_rate": 0.01}), ("Adagrad", {"learning_rate": 0.1}),
                                 ("AdamW", {"learning_rate": 0.01}), ("Nadam", {"learning_rate": 0.01}),
                                 ("Adamax", {"learning_rate": 0.01}), ("Lion", {"learning_rate": 0.001})],
                         ids=lambda o: o[0])
def test_fit_loss_curve_matches_keras(opt):
    x = RNG.standard_normal((96, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 96)
    km, pm = _twin_models("mlp")
    name, kw = opt
    for m, K in ((km, keras), (pm, pk)):
        m.compile(getattr(K.optimizers, name)(**kw), K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    kh = km.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
    ph = pm.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(ph.history[key], kh.history[key], rtol=1e-4, atol=1e-5, err_msg=key)
    for a, b in zip(pm.get_weights(), km.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_multi_output_fit_evaluate_predict_match_keras():
    x = RNG.standard_normal((64, 12)).astype(np.float32)
    ya, yb = RNG.integers(0, 3, 64), RNG.standard_normal((64, 1)).astype(np.float32)
    sw = RNG.uniform(0.5, 1.5, 64).astype(np.float32)
    km, pm = _twin_models("functional")
    for m, K in ((km, keras), (pm, pk)):
        m.compile(K.optimizers.SGD(0.05), loss=[K.losses.SparseCategoricalCrossentropy(from_logits=True), "mse"],
                  loss_weights=[1.0, 0.5], metrics=[["accuracy"], ["mae"]])
    kh = km.fit(x, [ya, yb], sample_weight=sw, batch_size=16, epochs=2, shuffle=False, verbose=0)
    ph = pm.fit(x, [ya, yb], sample_weight=sw, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert set(kh.history) == set(ph.history)
    for key in kh.history:
        np.testing.assert_allclose(ph.history[key], kh.history[key], rtol=1e-4, atol=1e-5, err_msg=key)
    ke = km.evaluate(x, [ya, yb], batch_size=32, verbose=0, return_dict=True)
    pe = pm.evaluate(x, [ya, yb], batch_size=32, verbose=0, return_dict=True)
    for key in ke:
        np.testing.assert_allclose(pe[key], ke[key], rtol=1e-4, atol=1e-5, err_msg=key)
    for a, b in zip(pm.predict(x, batch_size=20, verbose=0), km.predict(x, batch_size=20, verbose=0)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_class_weight_matches_keras():
    x = RNG.standard_normal((48, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 48)
    km, pm = _twin_models("mlp")
    for m, K in ((km, keras), (pm, pk)):
        m.compile("sgd", K.losses.SparseCategoricalCrossentropy(from_logits=True))
    cw = {0: 1.0, 1: 3.0, 2: 0.5}
    kh = km.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, class_weight=cw)
    ph = pm.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, class_weight=cw)
    np.testing.assert_allclose(ph.history["loss"], kh.history["loss"], rtol=1e-4)


def test_subclassed_model_and_custom_layer_train():
    class Scale(pk.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, x):
            return x * self.w

    class Net(pk.Model):
        def __init__(self):
            super().__init__()
            self.scale = Scale()
            self.out = pk.layers.Dense(1)

        def call(self, x):
            return self.out(self.scale(x))

    x = RNG.standard_normal((64, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
    net = Net()
    net.compile(pk.optimizers.Adam(0.05), "mse")
    h = net.fit(x, y, batch_size=16, epochs=30, verbose=0)
    assert h.history["loss"][-1] < 0.05 * h.history["loss"][0]
    assert len(net.trainable_weights) == 3
    assert [w.path for w in net.weights][0].endswith("/w")


def test_train_step_traced_once_per_batch_shape():
    x = RNG.standard_normal((40, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 40)
    _, pm = _twin_models("mlp")
    pm.compile("adam", pk.losses.SparseCategoricalCrossentropy(from_logits=True))
    pm.fit(x, y, batch_size=16, epochs=3, verbose=0)
    assert pm._train_fn.num_traces == 2  # batches of 16 and the last one of 8


def test_callbacks(tmp_path):
    x = RNG.standard_normal((64, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 64)
    _, pm = _twin_models("mlp")
    pm.compile(pk.optimizers.SGD(0.5), pk.losses.SparseCategoricalCrossentropy(from_logits=True),
               metrics=["accuracy"])
    seen = []
    cbs = [pk.callbacks.CSVLogger(tmp_path / "log.csv"),
           pk.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10.0),
           pk.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0),
           pk.callbacks.TensorBoard(tmp_path / "tb"),
           pk.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))]
    h = pm.fit(x, y, batch_size=16, epochs=10, verbose=0, callbacks=cbs)
    assert len(h.history["loss"]) == 2 and seen == [0, 1]  # stopped by EarlyStopping
    assert abs(float(np.asarray(pm.optimizer.learning_rate)) - 0.25) < 1e-7  # reduced once, at epoch 2
    rows = (tmp_path / "log.csv").read_text().strip().splitlines()
    assert rows[0].split(",")[:2] == ["epoch", "accuracy"] and len(rows) == 3
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tmp_path / "tb" / "train"))
    acc.Reload()
    assert "epoch_loss" in acc.Tags()["scalars"] or "epoch_loss" in acc.Tags().get("tensors", [])
    assert acc.Tags()["graph"]


def test_progress_bar_prints_epochs(capsys):
    x = RNG.standard_normal((32, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 32)
    _, pm = _twin_models("mlp")
    pm.compile("adam", pk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    pm.fit(x, y, batch_size=8, epochs=2, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "4/4" in out and "loss:" in out and "ms/step" in out


def test_errors_name_the_problem():
    _, pm = _twin_models("mlp")
    with pytest.raises(RuntimeError, match="compile"):
        pm.fit(np.zeros((4, 12), np.float32), np.zeros(4))
    with pytest.raises(ValueError, match="expects shape"):
        pm.predict(np.zeros((4, 7), np.float32))
    pm.compile("adam", "mse")
    with pytest.raises(ValueError, match="same number of samples"):
        pm.fit(np.zeros((4, 12), np.float32), np.zeros((5, 3)), verbose=0)
    with pytest.raises(ValueError, match="unknown optimizer"):
        pm.compile("adamz", "mse")
    with pytest.raises(ValueError, match="unknown loss"):
        pm.compile("adam", "msee")


class _Batches:
    """A re-iterable of (x, y) NumPy batches, like a dataset."""

    def __init__(self, x, y, batch):
        self.x, self.y, self.batch = x, y, batch

    def __iter__(self):
        for i in range(0, len(self.x), self.batch):
            yield self.x[i:i + self.batch], self.y[i:i + self.batch]

    def __len__(self):
        return -(-len(self.x) // self.batch)


def test_fit_on_an_iterable_of_batches_equals_fit_on_arrays():
    x = RNG.standard_normal((48, 12)).astype(np.float32)
    y = RNG.integers(0, 3, 48)
    histories = []
    for data in ("arrays", "batches"):
        _, pm = _twin_models("mlp")
        if histories:
            pm.set_weights(start)
        else:
            start = pm.get_weights()
        pm.compile(pk.optimizers.Adam(0.01), pk.losses.SparseCategoricalCrossentropy(from_logits=True),
                   metrics=["accuracy"])
        if data == "arrays":
            h = pm.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, validation_data=(x, y))
        else:
            h = pm.fit(_Batches(x, y, 16), epochs=2, verbose=0, validation_data=_Batches(x, y, 16))
        histories.append(h.history)
    for key in histories[0]:
        np.testing.assert_allclose(histories[1][key], histories[0][key], rtol=1e-6, err_msg=key)


def test_named_inputs_and_outputs_with_dicts_match_keras():
    def build(K):
        a, b = K.Input((4,), name="a"), K.Input((3,), name="b")
        h = K.layers.Dense(8, activation="relu", name="h")(K.layers.Concatenate()([a, b]))
        return K.Model({"a": a, "b": b}, {"score": K.layers.Dense(1, name="score")(h),
                                          "kind": K.layers.Dense(2, name="kind")(h)})
    km, pm = build(keras), build(pk)
    pm.set_weights(km.get_weights())
    x = {"a": RNG.standard_normal((32, 4)).astype(np.float32), "b": RNG.standard_normal((32, 3)).astype(np.float32)}
    y = {"score": RNG.standard_normal((32, 1)).astype(np.float32), "kind": RNG.integers(0, 2, 32)}
    for m, K in ((km, keras), (pm, pk)):
        m.compile(K.optimizers.SGD(0.05), loss={"score": "mse",
                                                "kind": K.losses.SparseCategoricalCrossentropy(from_logits=True)},
                  metrics={"kind": ["accuracy"]})
    kh = km.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    ph = pm.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert set(kh.history) == set(ph.history)
    for key in kh.history:
        np.testing.assert_allclose(ph.history[key], kh.history[key], rtol=1e-4, atol=1e-5, err_msg=key)
