"""Helpers the layers set shares: input specs, one-model cases and the
registry of which keras.layers classes each case covers."""
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import keras
import numpy as np

from export import Built, Case

BATCH = 2
CASES = []
COVERED = {}  # case name -> keras.layers class names it uses


@dataclass
class In:
    """One model input: name (the signature key), shape without the batch,
    dtype, and how to draw its values."""
    name: str = "x"
    shape: tuple = (4,)
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0
    values: Optional[object] = None  # fixed values (strings, token lists)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            return np.asarray(self.values, dtype=np.bytes_ if self.dtype == "string" else self.dtype)
        shape = (BATCH,) + tuple(self.shape)
        if self.dtype.startswith("float"):
            return rng.uniform(self.low, self.high, shape).astype(self.dtype)
        if self.dtype == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        return rng.integers(int(self.low), int(self.high), shape).astype(self.dtype)


def layer(class_name: str, *args, **kwargs):
    return getattr(keras.layers, class_name)(*args, **kwargs)


def case(name: str, covers, make: Callable, ins, description: str,
         tolerance: Optional[dict] = None, prepare: Optional[Callable] = None) -> None:
    """Registers a functional model: make(*keras inputs) -> outputs;
    prepare(model, rng) may set weights after building."""
    if isinstance(ins, In):
        ins = [ins]
    covers = [covers] if isinstance(covers, str) else list(covers)

    def build() -> Built:
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inputs = [keras.Input(i.shape, name=i.name, dtype=i.dtype) for i in ins]
        arrays = {i.name: i.sample(rng) for i in ins}
        try:
            model = keras.Model(inputs, make(*inputs), name="zoo_" + name.lower())
        except ValueError as e:
            if "part of a cycle" not in str(e):
                raise
            # Keras cannot trace some layers (Equalization) into a
            # functional model; a subclassed one holding the layer exports.
            return _subclassed(name, make, ins, arrays, prepare, rng)
        if prepare is not None:
            prepare(model, rng)
        return Built(obj=model, inputs=arrays, keras_model=model)

    assert name not in COVERED, name
    CASES.append(Case(name=name, kind="keras", build=build, description=description, tolerance=tolerance))
    COVERED[name] = covers


def _subclassed(name: str, make: Callable, ins, arrays: dict, prepare, rng) -> Built:
    """The case as a subclassed Keras model (built by one call on the sample
    inputs), with a serving function of the inputs' specs."""
    import tensorflow as tf

    class Wrapped(keras.Model):
        def call(self, x):
            return make(*x) if isinstance(x, (list, tuple)) else make(x)

    def pack(values):
        return values[0] if len(values) == 1 else list(values)

    model = Wrapped(name="zoo_" + name.lower())
    model(pack([arrays[i.name] for i in ins]))
    if prepare is not None:
        prepare(model, rng)
    specs = [tf.TensorSpec((None,) + tuple(i.shape), i.dtype if i.dtype != "string" else tf.string, name=i.name)
             for i in ins]

    @tf.function(input_signature=specs)
    def serve(*args):
        y = model(pack(args), training=False)
        return {f"output_{k}": t for k, t in enumerate(tf.nest.flatten(y))}

    return Built(obj=model, inputs=arrays, fn=serve, keras_model=model,
                 notes=["a subclassed model: Keras cannot trace the layer into a functional one"])


def one(name: str, class_name: str, kwargs: dict, ins, tolerance=None, prepare=None, note: str = "") -> None:
    """A model holding one layer, keras.layers.<class_name>(**kwargs)."""
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    shapes = ", ".join(f"{i.name}: {i.dtype}{list((BATCH,) + tuple(i.shape))}" for i in ([ins] if isinstance(ins, In) else ins))
    description = f"keras.layers.{class_name}({args}) on {shapes}" + (f"; {note}" if note else "")
    many = not isinstance(ins, In)
    case(name, class_name,
         lambda *x: layer(class_name, **kwargs)(list(x) if many else x[0]),
         ins, description, tolerance, prepare)


def randomize_batch_norm(model, rng) -> None:
    """Gives BatchNormalization layers non-trivial statistics and scales."""
    for lay in model._flatten_layers():
        if isinstance(lay, keras.layers.BatchNormalization):
            n = lay.moving_mean.shape
            lay.moving_mean.assign(rng.uniform(-0.5, 0.5, n).astype("float32"))
            lay.moving_variance.assign(rng.uniform(0.5, 2.0, n).astype("float32"))
            if lay.gamma is not None:
                lay.gamma.assign(rng.uniform(0.5, 1.5, n).astype("float32"))
            if lay.beta is not None:
                lay.beta.assign(rng.uniform(-0.5, 0.5, n).astype("float32"))
