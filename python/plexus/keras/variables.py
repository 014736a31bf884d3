"""Keras variables (plexus Variables with a path, a regularizer and a constraint) and seed generators."""

from __future__ import annotations

import numpy as np

from .. import _plexus
from ..variables import Variable as _PxVariable
from . import _backend as B


class KerasVariable(_PxVariable):
    """A layer's weight: a :class:`plexus.Variable` with Keras's extras.

    ``path`` is ``"<layer name>/<weight name>"`` (``"dense/kernel"``). Inside
    a mixed-precision layer call (policy ``mixed_float16``) reads return the
    value cast to the layer's compute dtype; the variable itself stays in
    its own dtype (float32), as in Keras.
    """

    def __init__(self, initial_value, *, name, path, trainable=True, dtype=None, regularizer=None,
                 constraint=None, aggregation="none"):
        super().__init__(initial_value, trainable=trainable, name=path, dtype=dtype)
        self._short_name = name
        self.path = path
        self.regularizer = regularizer
        self.constraint = constraint
        self.aggregation = aggregation

    @property
    def name(self) -> str:
        return self._short_name

    def read_value(self):
        value = super().read_value()
        compute = B.autocast_dtype()
        if compute is not None and B.is_float(self.dtype) and B.dtype_name(self.dtype) != compute:
            value = B.cast(value, compute)
        return value

    value = property(read_value)
    _as_tensor = read_value

    def __repr__(self):
        return f"<KerasVariable path={self.path} shape={self.shape} dtype={B.dtype_name(self.dtype)}>"


class SeedGenerator:
    """A source of seeds for stateless random ops, like ``keras.random.SeedGenerator``.

    Its state is a variable; each ``next()`` returns the state and advances
    it, so a traced train step draws new random numbers on every run and a
    given seed reproduces the same sequence.
    """

    def __init__(self, seed=None, name="seed_generator"):
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self.seed = int(seed)
        self.state = KerasVariable(np.array([self.seed, 0], np.int64), name="seed_generator_state",
                                   path=f"{name}/seed_generator_state", trainable=False)

    def next(self):
        value = self.state.read_value()
        self.state.assign(B.ex("AddV2", [value, _plexus.constant(np.array([0, 1], np.int64))])[0])
        return value


def uniform(shape, seed_generator, minval=0.0, maxval=1.0, dtype="float32"):
    """Uniform random numbers in [minval, maxval) of a static or dynamic shape."""
    shape = shape if B.is_tensor(shape) else _plexus.constant(np.asarray(shape, np.int32))
    x = B.ex("StatelessRandomUniform", [shape, seed_generator.next()],
             {"dtype": _plexus.as_dtype(B.dtype_name(dtype))})[0]
    if minval != 0.0 or maxval != 1.0:
        x = x * B.scalar(maxval - minval, dtype) + B.scalar(minval, dtype)
    return x
