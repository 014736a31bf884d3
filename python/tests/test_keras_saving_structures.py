"""plexus.keras .keras files against Keras 3 for model structures (test_keras_saving.py covers layer families).

Nested functional models with several outputs (Keras counts a nested
functional model's own node in input_layers/output_layers), a Sequential
model Keras built by its first call, subclassed models with layers in
attributes and lists, a mixed-precision Sequential model with a float32
output layer and its loss-scaling optimizer state, and the error for a
subclassed model loaded without its class. Each model goes Keras -> plexus
-> Keras with predictions within 1e-5.
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("keras")
h5py = pytest.importorskip("h5py")

from plexus import keras as pk  # noqa: E402

RNG = np.random.default_rng(11)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _close(a, b, tol=1e-5):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _close(a[k], b[k], tol)
        return
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32), rtol=tol, atol=tol)


def _perturb(model):
    model.set_weights([w + RNG.standard_normal(w.shape).astype(w.dtype) * 0.1 for w in model.get_weights()])


def _h5_paths(path):
    with zipfile.ZipFile(path) as z:
        f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
        names = []
        f.visit(names.append)
        return sorted(n for n in names if n.endswith("/vars/0"))


def _round_trip(km, x, tmp_path, custom=None, keras_custom=None):
    """Keras's file loads in plexus, plexus's file loads in Keras: the same predictions."""
    want = km.predict(x, verbose=0)
    km.save(tmp_path / "keras.keras")
    pm = pk.load_model(tmp_path / "keras.keras", custom_objects=custom)
    _close(pm.predict(x, verbose=0), want)
    pm.save(tmp_path / "ours.keras")
    assert _h5_paths(tmp_path / "ours.keras") == _h5_paths(tmp_path / "keras.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras", custom_objects=keras_custom)
    _close(back.predict(x, verbose=0), want)
    return pm


def test_nested_functional_with_several_outputs(tmp_path):
    L = keras.layers
    a, b = keras.Input((3,)), keras.Input((2,))
    inner = keras.Model([a, b], [L.Dense(2)(a), L.Dense(3)(b)], name="inner")
    x, y = keras.Input((3,), name="x"), keras.Input((2,), name="y")
    o1, o2 = inner([x, y])
    km = keras.Model({"x": x, "y": y}, {"p": L.Concatenate()([o1, o2]), "q": o1})
    _perturb(km)
    _round_trip(km, {"x": _f(4, 3), "y": _f(4, 2)}, tmp_path)


def test_sequential_built_by_its_first_call(tmp_path):
    # Keras records the first call's batch size (2) in the InputLayer; later calls take any batch.
    km = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
    km.predict(_f(2, 3), verbose=0)
    _perturb(km)
    _round_trip(km, _f(5, 3), tmp_path)


class KerasBlocks(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.head = keras.layers.Dense(3)
        self.blocks = [keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(2)]

    def call(self, x):
        return self.blocks[1](self.blocks[0](self.head(x)))


class PlexusBlocks(pk.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.head = pk.layers.Dense(3)
        self.blocks = [pk.layers.Dense(4, activation="tanh"), pk.layers.Dense(2)]

    def call(self, x):
        return self.blocks[1](self.blocks[0](self.head(x)))


def test_subclassed_model_with_layers_in_attributes_and_lists(tmp_path):
    x = _f(4, 3)
    km = KerasBlocks()
    km(x)
    _perturb(km)
    km.save(tmp_path / "sub.keras")
    with pytest.raises(ValueError, match="sub.keras.*unknown layer class 'KerasBlocks'.*subclassed.*custom_objects"):
        pk.load_model(tmp_path / "sub.keras")
    pm = _round_trip(km, x, tmp_path, custom={"KerasBlocks": PlexusBlocks},
                     keras_custom={"KerasBlocks": KerasBlocks})
    assert _h5_paths(tmp_path / "ours.keras") == ["blocks/dense/vars/0", "blocks/dense_1/vars/0", "head/vars/0"]
    assert len(pm.weights) == 6


@pytest.fixture
def mixed_float16():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy("float32")
        pk.mixed_precision.set_global_policy("float32")


def test_mixed_precision_sequential_keeps_its_policy_and_loss_scale(tmp_path, mixed_float16):
    L = keras.layers
    km = keras.Sequential([keras.Input((3,)), L.Dense(4), L.BatchNormalization(), L.Dense(2, dtype="float32")])
    km.compile(keras.optimizers.Adam(0.01), "mse")
    x, y = _f(8, 3), _f(8, 2)
    km.fit(x, y, batch_size=4, verbose=0)
    km.save(tmp_path / "mp.keras")
    want = km.predict(x, verbose=0)
    keras.mixed_precision.set_global_policy("float32")
    pm = pk.load_model(tmp_path / "mp.keras")
    assert [layer.dtype_policy.name for layer in pm.layers] == ["mixed_float16", "mixed_float16", "float32"]
    # A step whose scaled gradients overflow float16 is skipped and not
    # counted, so the count is Keras's own, not always the number of batches.
    assert type(pm.optimizer).__name__ == "LossScaleOptimizer"
    assert pm.optimizer.iterations == int(km.optimizer.iterations)
    # float16 compute: one rounding of float16 (about 1e-3 relative) may
    # differ between the two frameworks' kernels, so 5e-3.
    _close(pm.predict(x, verbose=0), want, 5e-3)
    pm.fit(x, y, batch_size=4, verbose=0)
    pm.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    _close(back.predict(x, verbose=0), pm.predict(x, verbose=0), 5e-3)
    assert int(back.optimizer.iterations) == int(pm.optimizer.iterations) >= int(km.optimizer.iterations)


def test_spatial_dropout_configs_load_in_keras(tmp_path):
    L = keras.layers
    inp = keras.Input((6, 6, 3))
    x = L.SpatialDropout2D(0.3)(L.Conv2D(4, 3)(inp))
    x = L.SpatialDropout1D(0.2)(L.Reshape((16, 4))(x))
    km = keras.Model(inp, L.GlobalAveragePooling1D()(x))
    _round_trip(km, _f(2, 6, 6, 3), tmp_path)
