"""plexus.keras files against Keras 3: .keras both ways, .weights.h5, SavedModel export, bad files.

For each layer family a small model is built and trained one epoch in Keras
3, saved as .keras, loaded by plexus.keras (predictions within 1e-5 of
Keras's, training continues from the optimizer state), saved again by us and
loaded by Keras (predictions within 1e-5).
"""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
pytest.importorskip("h5py")

import plexus as px  # noqa: E402
from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(5)


def _mlp(K):
    return K.Sequential([K.Input((6,)), K.layers.Dense(8, activation="relu", kernel_regularizer="l2"),
                         K.layers.Dropout(0.1), K.layers.Dense(3, activation="softmax")])


def _cnn(K):
    L = K.layers
    return K.Sequential([K.Input((8, 8, 2)), L.Conv2D(4, 3, padding="same", activation="relu"),
                         L.BatchNormalization(), L.MaxPooling2D(), L.SeparableConv2D(5, 3, padding="same"),
                         L.DepthwiseConv2D(3), L.GlobalAveragePooling2D(), L.Dense(3)])


def _rnn(K):
    L = K.layers
    inp = K.Input((4,), dtype="int32")
    x = L.Embedding(30, 6, mask_zero=True)(inp)
    x = L.LSTM(5, return_sequences=True)(x)
    x = L.Bidirectional(L.GRU(4))(x)
    return K.Model(inp, L.Dense(3)(x))


def _attention(K):
    L = K.layers
    inp = K.Input((5, 8))
    x = L.MultiHeadAttention(2, 4)(inp, inp)
    x = L.LayerNormalization()(L.Add()([x, inp]))
    x = L.GlobalAveragePooling1D()(x)
    return K.Model(inp, L.Dense(3)(x))


def _branches(K):
    L = K.layers
    a, b = K.Input((4,), name="a"), K.Input((3,), name="b")
    shared = L.Dense(5, activation="tanh")
    h = L.Concatenate()([shared(L.Dense(3)(a)), shared(b)])
    inner = K.Sequential([K.Input((10,)), L.Dense(6), L.LeakyReLU()], name="inner")
    return K.Model([a, b], [L.Dense(3, name="cls")(inner(h)), L.Dense(1, name="reg")(h) * 2.0])


def _conv1d(K):
    L = K.layers
    return K.Sequential([K.Input((12, 3)), L.ZeroPadding1D(1), L.Conv1D(4, 3, activation="relu"), L.Cropping1D(1),
                         L.AveragePooling1D(2), L.Conv1DTranspose(3, 3, strides=2), L.UpSampling1D(),
                         L.SeparableConv1D(4, 3), L.DepthwiseConv1D(3), L.GlobalMaxPooling1D(), L.Dense(3)])


def _reshaping(K):
    L = K.layers
    norm = L.Normalization()
    norm.adapt(np.random.default_rng(1).standard_normal((20, 6, 6, 2)).astype(np.float32))
    return K.Sequential([K.Input((6, 6, 2)), norm, L.Rescaling(0.5, 0.1), L.Conv2DTranspose(3, 3, strides=2),
                         L.UpSampling2D(), L.ZeroPadding2D(1), L.CenterCrop(12, 12), L.Cropping2D(2),
                         L.AveragePooling2D(2), L.Permute((3, 1, 2)), L.Flatten(), L.RepeatVector(2),
                         L.Reshape((-1,)), L.Dense(8), L.GroupNormalization(2), L.PReLU(), L.Reshape((2, 4)),
                         L.RMSNormalization(), L.UnitNormalization(), L.ELU(), L.Flatten(), L.Dense(3)])


def _recurrent(K):
    L = K.layers
    inp = K.Input((3, 3))
    x = L.Masking()(inp)
    x = L.RNN(L.SimpleRNNCell(4), return_sequences=True)(x)
    x = L.TimeDistributed(L.Dense(3))(x)
    x, _, c = L.LSTM(4, return_state=True, return_sequences=True)(x)
    x, state = L.GRU(4, return_state=True)(x)
    return K.Model(inp, L.Dense(3)(L.Concatenate()([x, state, c])))


def _merges(K):
    L = K.layers
    i = K.Input((3,))
    enc = K.Model(i, L.Dense(4, activation="relu")(i), name="enc")
    q, v = K.Input((4, 3), name="q"), K.Input((5, 3), name="v")
    a, b = L.Attention()([q, v]), L.AdditiveAttention()([q, v])
    x, y = L.Average()([a, b]), L.Subtract()([a, b])
    w = L.Multiply()([x, L.Maximum()([x, y])])
    d = L.Flatten()(L.Dot(axes=(2, 2))([w, q]))
    e = L.Add()([enc(L.GlobalAveragePooling1D()(q)), enc(L.GlobalMaxPooling1D()(v))])
    h = L.Concatenate()([d, e])
    return K.Model({"q": q, "v": v}, {"cls": L.Dense(3, name="cls")(h), "aux": L.Dense(1, name="aux")(h)})


CASES = {"mlp": (_mlp, lambda n: RNG.standard_normal((n, 6)).astype(np.float32)),
         "cnn": (_cnn, lambda n: RNG.standard_normal((n, 8, 8, 2)).astype(np.float32)),
         "rnn": (_rnn, lambda n: np.where(RNG.random((n, 4)) < 0.3, 0, RNG.integers(1, 30, (n, 4))).astype(np.int32)),
         "attention": (_attention, lambda n: RNG.standard_normal((n, 5, 8)).astype(np.float32)),
         "branches": (_branches, lambda n: [RNG.standard_normal((n, 4)).astype(np.float32),
                                            RNG.standard_normal((n, 3)).astype(np.float32)]),
         "conv1d": (_conv1d, lambda n: RNG.standard_normal((n, 12, 3)).astype(np.float32)),
         "reshaping": (_reshaping, lambda n: RNG.standard_normal((n, 6, 6, 2)).astype(np.float32)),
         "recurrent": (_recurrent, lambda n: np.where(RNG.random((n, 3, 1)) < 0.2, 0.0,
                                                      RNG.standard_normal((n, 3, 3))).astype(np.float32)),
         "merges": (_merges, lambda n: {"q": RNG.standard_normal((n, 4, 3)).astype(np.float32),
                                        "v": RNG.standard_normal((n, 5, 3)).astype(np.float32)})}


def _targets(kind, n):
    if kind == "branches":
        return [RNG.integers(0, 3, n), RNG.standard_normal((n, 1)).astype(np.float32)]
    if kind == "merges":
        return {"cls": RNG.integers(0, 3, n), "aux": RNG.standard_normal((n, 1)).astype(np.float32)}
    return RNG.integers(0, 3, n)


def _compile(m, K, kind):
    loss = K.losses.SparseCategoricalCrossentropy(from_logits=kind != "mlp")
    if kind == "branches":
        m.compile(K.optimizers.Adam(0.01), [loss, "mse"], metrics=[["accuracy"], []])
    elif kind == "merges":
        m.compile(K.optimizers.Adam(0.01), {"cls": loss, "aux": "mse"}, metrics={"cls": ["accuracy"]})
    else:
        m.compile(K.optimizers.Adam(0.01), loss, metrics=["accuracy"])


def _close(a, b, tol=1e-5):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _close(a[k], b[k], tol)
        return
    if isinstance(a, (list, tuple)):
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_keras_file_both_ways(kind, tmp_path):
    build, data = CASES[kind]
    x, y = data(16), _targets(kind, 16)
    km = build(keras)
    _compile(km, keras, kind)
    km.fit(x, y, batch_size=8, epochs=1, verbose=0)
    km.save(tmp_path / "keras.keras")

    pm = pk.models.load_model(tmp_path / "keras.keras")
    _close(pm.predict(x, verbose=0), km.predict(x, verbose=0))
    assert pm.optimizer.iterations == 2
    # Training continues from the restored optimizer state as in Keras (the
    # Keras model goes on from the state it saved).
    kh = km.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    ph = pm.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    if kind != "mlp":  # the MLP has dropout: its random masks differ between the frameworks
        np.testing.assert_allclose(ph.history["loss"], kh.history["loss"], rtol=1e-4)

    pm.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    _close(back.predict(x, verbose=0), pm.predict(x, verbose=0))
    assert int(back.optimizer.iterations) == 4


OPTIMIZERS = {
    "sgd_nesterov": lambda K: K.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
    "rmsprop_centered": lambda K: K.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    "adam_amsgrad": lambda K: K.optimizers.Adam(0.01, amsgrad=True),
    "nadam": lambda K: K.optimizers.Nadam(0.01),
    "adam_schedule": lambda K: K.optimizers.Adam(K.optimizers.schedules.ExponentialDecay(0.01, 3, 0.5)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_state_both_ways(name, tmp_path):
    def build(K):
        return K.Sequential([K.Input((4,)), K.layers.Dense(5, activation="tanh"), K.layers.Dense(2)])
    x, y = RNG.standard_normal((16, 4)).astype(np.float32), RNG.standard_normal((16, 2)).astype(np.float32)
    km = build(keras)
    km.compile(OPTIMIZERS[name](keras), "mse")
    km.fit(x, y, batch_size=4, verbose=0)
    km.save(tmp_path / "k.keras")
    pm = pk.models.load_model(tmp_path / "k.keras")
    # The next epoch is the same in both: the slots, step and learning rate were restored.
    kh = keras.saving.load_model(tmp_path / "k.keras").fit(x, y, batch_size=4, shuffle=False, verbose=0)
    ph = pm.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(ph.history["loss"], kh.history["loss"], rtol=1e-5)
    pm.save(tmp_path / "p.keras")
    back = keras.saving.load_model(tmp_path / "p.keras")
    assert int(back.optimizer.iterations) == 8
    kh2 = back.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    ph2 = pm.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(ph2.history["loss"], kh2.history["loss"], rtol=1e-5)


def test_mixed_precision_loss_scale_state(tmp_path):
    def build(K):
        L = K.layers
        return K.Sequential([K.Input((4,)), L.Dense(6, activation="relu", dtype="mixed_float16"),
                             L.Dense(2, dtype="mixed_float16"), L.Activation("linear", dtype="float32")])
    x, y = RNG.standard_normal((16, 4)).astype(np.float32), RNG.standard_normal((16, 2)).astype(np.float32)
    km = build(keras)
    km.compile(keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=1024.0), "mse")
    km.fit(x, y, batch_size=4, verbose=0)
    km.save(tmp_path / "k.keras")
    pm = pk.models.load_model(tmp_path / "k.keras")
    assert isinstance(pm.optimizer, pk.optimizers.LossScaleOptimizer)
    assert float(pm.optimizer.dynamic_scale.numpy()) == 1024.0 and int(pm.optimizer.iterations) == 4
    _close(pm.predict(x, verbose=0), km.predict(x, verbose=0), 1e-2)
    pm.fit(x, y, batch_size=4, verbose=0)
    pm.save(tmp_path / "p.keras")
    back = keras.saving.load_model(tmp_path / "p.keras")
    assert int(back.optimizer.iterations) == 8
    _close(back.predict(x, verbose=0), pm.predict(x, verbose=0), 1e-2)


def test_lambda_and_custom_layers(tmp_path):
    @keras.saving.register_keras_serializable(package="test_saving")
    class Scale(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1],), initializer="ones")

        def call(self, x):
            return x * self.w

    class OurScale(pk.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1],), initializer="ones")

        def call(self, x):
            return x * self.w

    km = keras.Sequential([keras.Input((3,)), Scale(), keras.layers.Lambda(lambda t: t * 2.0), keras.layers.Dense(2)])
    km.layers[0].w.assign([1.0, 2.0, 3.0])
    km.save(tmp_path / "k.keras")
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(ValueError, match="unknown layer class 'Scale'.*custom_objects"):
        pk.models.load_model(tmp_path / "k.keras")
    with pytest.raises(ValueError, match="Lambda.*safe_mode=False"):
        pk.models.load_model(tmp_path / "k.keras", custom_objects={"Scale": OurScale})
    pm = pk.models.load_model(tmp_path / "k.keras", custom_objects={"Scale": OurScale}, safe_mode=False)
    _close(pm.predict(x, verbose=0), km.predict(x, verbose=0))
    pm.save(tmp_path / "p.keras")
    back = keras.saving.load_model(tmp_path / "p.keras", safe_mode=False)
    _close(back.predict(x, verbose=0), km.predict(x, verbose=0))
    # A registered class loads without custom_objects, and saves under its registered name.
    pk.saving.register_keras_serializable(package="test_saving", name="Scale")(OurScale)
    pm = pk.models.load_model(tmp_path / "k.keras", safe_mode=False)
    _close(pm.predict(x, verbose=0), km.predict(x, verbose=0))
    pm.save(tmp_path / "r.keras")
    _close(keras.saving.load_model(tmp_path / "r.keras", safe_mode=False).predict(x, verbose=0),
           km.predict(x, verbose=0))


def test_weights_files_both_ways(tmp_path):
    km, pm = _cnn(keras), _cnn(pk)
    x = CASES["cnn"][1](4)
    km.save_weights(tmp_path / "k.weights.h5")
    pm.load_weights(tmp_path / "k.weights.h5")
    _close(pm.predict(x, verbose=0), km.predict(x, verbose=0))
    pm2 = _cnn(pk)
    pm2.set_weights([w * 0 for w in pm2.get_weights()])
    pm.save_weights(tmp_path / "p.weights.h5")
    pm2.load_weights(tmp_path / "p.weights.h5")
    km2 = _cnn(keras)
    km2.load_weights(tmp_path / "p.weights.h5")
    _close(km2.predict(x, verbose=0), pm2.predict(x, verbose=0))


def test_export_saved_model_loads_in_tensorflow_and_plexus(tmp_path):
    pm = _branches(pk)
    x = CASES["branches"][1](5)
    want = pm.predict(x, verbose=0)
    pm.export(tmp_path / "sm", verbose=False)
    assert sorted(tf.saved_model.load(str(tmp_path / "sm")).signatures) == ["serve", "serving_default"]
    served = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    got = served(a=tf.constant(x[0]), b=tf.constant(x[1]))
    _close([got["output_0"].numpy(), got["output_1"].numpy()], want)
    loaded = px.saved_model.load(tmp_path / "sm")
    out = loaded.signatures["serving_default"](a=px.constant(x[0]), b=px.constant(x[1]))
    _close([out["output_0"].numpy(), out["output_1"].numpy()], want)


def test_model_checkpoint_and_clone(tmp_path):
    pm = _mlp(pk)
    _compile(pm, pk, "mlp")
    x, y = CASES["mlp"][1](32), _targets("mlp", 32)
    pm.fit(x, y, epochs=2, verbose=0, validation_data=(x, y),
           callbacks=[pk.callbacks.ModelCheckpoint(str(tmp_path / "ck-{epoch}.keras"))])
    assert sorted(os.listdir(tmp_path)) == ["ck-1.keras", "ck-2.keras"]
    _close(pk.models.load_model(tmp_path / "ck-2.keras").predict(x, verbose=0), pm.predict(x, verbose=0))
    clone = pk.models.clone_model(pm)
    assert [w.shape for w in clone.weights] == [w.shape for w in pm.weights]
    assert not np.allclose(clone.get_weights()[0], pm.get_weights()[0])


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.keras"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="bad.keras.*not a .keras file"):
        pk.models.load_model(bad)
    km = _mlp(keras)
    km.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        config = z.read("config.json").decode().replace('"Dense"', '"FancyDense"')
        weights = z.read("model.weights.h5")
    with zipfile.ZipFile(tmp_path / "custom.keras", "w") as z:
        z.writestr("config.json", config)
        z.writestr("model.weights.h5", weights)
    with pytest.raises(ValueError, match="custom.keras.*unknown layer class 'FancyDense'.*custom_objects"):
        pk.models.load_model(tmp_path / "custom.keras")
    with zipfile.ZipFile(tmp_path / "truncated.keras", "w") as z:
        z.writestr("config.json", config.replace("FancyDense", "Dense"))
        z.writestr("model.weights.h5", weights[: len(weights) // 2])
    with pytest.raises(ValueError, match="truncated.keras.*HDF5"):
        pk.models.load_model(tmp_path / "truncated.keras")
    pm = _cnn(pk)
    with pytest.raises(ValueError, match="m.keras.*no entry 'conv2d' for layer"):
        pm.load_weights(tmp_path / "m.keras")
    wrong = pk.Sequential([pk.Input((6,)), pk.layers.Dense(9), pk.layers.Dropout(0.1), pk.layers.Dense(3)])
    with pytest.raises(ValueError, match=r"m.keras.*layers/dense/vars/0.*shape \(6, 8\).*dense\w*/kernel.*\(6, 9\)"):
        wrong.load_weights(tmp_path / "m.keras")
    before = wrong.layers[0].kernel.numpy()
    wrong.load_weights(tmp_path / "m.keras", skip_mismatch=True)
    np.testing.assert_array_equal(wrong.layers[0].kernel.numpy(), before)
    np.testing.assert_array_equal(wrong.layers[-1].bias.numpy(), km.layers[-1].bias.numpy())
