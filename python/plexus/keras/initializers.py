"""Weight initializers with Keras 3's names, arguments and distributions.

Values are drawn on the host with NumPy when a weight is created (they
match Keras's distributions, not its random streams). A seeded initializer
gives the same values every time it is called, as in Keras.
"""

from __future__ import annotations

import math

import numpy as np

from . import _backend as B


def _fans(shape):
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _out(self, values, dtype):
        dtype = B.dtype_name(dtype) or B.floatx()
        if dtype == "bfloat16":
            return B.cast(B.convert(np.asarray(values, np.float32)), "bfloat16")
        return np.asarray(values).astype(dtype)


class _Seeded(Initializer):
    def __init__(self, seed=None):
        self.seed = seed

    def _rng(self):
        return np.random.default_rng(self.seed) if self.seed is not None else np.random.default_rng(
            np.random.randint(0, 2**31 - 1))


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return self._out(np.zeros(shape), dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return self._out(np.ones(shape), dtype)


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return self._out(np.full(shape, self.value), dtype)

    def get_config(self):
        return {"value": self.value}


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer: shape {tuple(shape)} is not 2-D")
        return self._out(self.gain * np.eye(*shape), dtype)

    def get_config(self):
        return {"gain": self.gain}


class RandomNormal(_Seeded):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return self._out(self._rng().normal(self.mean, self.stddev, shape), dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(_Seeded):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        dtype = B.dtype_name(dtype) or B.floatx()
        if not B.is_float(dtype):
            return np.asarray(self._rng().integers(self.minval, self.maxval, shape)).astype(dtype)
        return self._out(self._rng().uniform(self.minval, self.maxval, shape), dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def _truncated(rng, shape, stddev):
    """Normal(0, stddev) redrawn outside two standard deviations."""
    out = rng.normal(0.0, 1.0, shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out * stddev


class TruncatedNormal(_Seeded):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return self._out(self.mean + _truncated(self._rng(), shape, self.stddev), dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class VarianceScaling(_Seeded):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, input_axes=None,
                 output_axes=None):
        super().__init__(seed)
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: mode {mode!r} is not fan_in, fan_out or fan_avg")
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform", "normal"):
            raise ValueError(f"VarianceScaling: unknown distribution {distribution!r}")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(tuple(shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        rng = self._rng()
        if self.distribution == "truncated_normal":
            values = _truncated(rng, shape, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution in ("untruncated_normal", "normal"):
            values = rng.normal(0.0, math.sqrt(scale), shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = rng.uniform(-limit, limit, shape)
        return self._out(values, dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


def _preset(name, scale, mode, distribution):
    class Preset(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale, mode, distribution, seed)

        def get_config(self):
            return {"seed": self.seed}
    Preset.__name__ = Preset.__qualname__ = name
    return Preset


GlorotUniform = _preset("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _preset("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _preset("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _preset("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _preset("LecunNormal", 1.0, "fan_in", "truncated_normal")


class Orthogonal(_Seeded):
    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        cols = shape[-1]
        a = self._rng().normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self._out(self.gain * q[:rows, :cols].reshape(shape), dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


_CLASSES = [Zeros, Ones, Constant, Identity, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
            GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal]
_BY_NAME = {}
for _c in _CLASSES:
    from .layers.base import snake_case as _snake  # noqa: E402
    _BY_NAME[_c.__name__] = _c
    _BY_NAME[_snake(_c.__name__)] = _c
_BY_NAME.update({"zero": Zeros, "one": Ones, "identity": Identity, "IdentityInitializer": Identity,
                 "OrthogonalInitializer": Orthogonal, "orthogonal": Orthogonal})
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_uniform, he_normal = GlorotUniform, GlorotNormal, HeUniform, HeNormal
lecun_uniform, lecun_normal, orthogonal = LecunUniform, LecunNormal, Orthogonal
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal


def get(identifier):
    """An initializer from a name ("he_normal"), a config dict, an instance or a callable."""
    if isinstance(identifier, (Initializer,)) or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"unknown initializer {identifier!r}; known: {sorted(k for k in _BY_NAME if k.islower())}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier["class_name"])
        if cls is None:
            raise ValueError(f"unknown initializer class {identifier['class_name']!r}")
        return cls.from_config(identifier.get("config") or {})
    raise ValueError(f"cannot interpret {identifier!r} as an initializer")


def serialize(init):
    return {"module": "keras.initializers", "class_name": type(init).__name__, "config": init.get_config(),
            "registered_name": None}
