"""Helpers the functions and tf1 sets share: argument specs with their
values, and the registration of one tf.function program."""
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import tensorflow as tf

from export import Built, Case


@dataclass
class Arg:
    """One argument: name (the signature key and placeholder name), the
    signature's shape (None for unknown sizes), dtype, and its values: given,
    or drawn from [low, high) with shape `draw` (the signature shape when all
    sizes are known)."""
    name: str
    shape: tuple
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0
    values: Optional[object] = None
    draw: Optional[tuple] = None

    def spec(self) -> tf.TensorSpec:
        return tf.TensorSpec(self.shape, tf.as_dtype(self.dtype), name=self.name)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            kind = np.bytes_ if self.dtype == "string" else self.dtype
            return np.asarray(self.values, dtype=kind)
        shape = self.draw or self.shape
        if self.dtype.startswith("float"):
            return rng.uniform(self.low, self.high, shape).astype(self.dtype)
        if self.dtype == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        return rng.integers(int(self.low), int(self.high), shape).astype(self.dtype)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def program(registry: list, name: str, description: str, args, fn: Callable,
            tolerance: Optional[dict] = None, state: Optional[Callable] = None) -> None:
    """Registers a tf.Module whose `run` attribute is tf.function(fn) with the
    args' input signature. fn returns a dict of named outputs. state(module,
    rng) may add variables first; fn then receives the module first."""

    def build() -> Built:
        rng = rng_for(name)
        module = tf.Module()
        if state is not None:
            state(module, rng)
            body = lambda *a: fn(module, *a)  # noqa: E731
        else:
            body = fn
        module.run = tf.function(body, input_signature=[a.spec() for a in args], autograph=True)
        inputs = {a.name: a.sample(rng) for a in args}
        return Built(obj=module, inputs=inputs, fn=module.run)

    registry.append(Case(name=name, kind="module", build=build, description=description, tolerance=tolerance))
