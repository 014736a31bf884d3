"""Weight constraints applied after each optimizer update: MaxNorm, NonNeg, UnitNorm, MinMaxNorm."""

from __future__ import annotations

import plexus as px


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norm(w, axis):
    return px.sqrt(px.reduce_sum(w * w, axis=axis, keepdims=True))


class MaxNorm(Constraint):
    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = _norm(w, self.axis)
        desired = px.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (norms + 1e-7))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    def __call__(self, w):
        return w * px.cast(w >= 0.0, w.dtype)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (_norm(w, self.axis) + 1e-7)

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = _norm(w, self.axis)
        desired = self.rate * px.clip_by_value(norms, float(self.min_value), float(self.max_value)) + (
            1 - self.rate) * norms
        return w * (desired / (norms + 1e-7))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_BY_NAME = {"max_norm": MaxNorm, "maxnorm": MaxNorm, "non_neg": NonNeg, "nonneg": NonNeg,
            "unit_norm": UnitNorm, "unitnorm": UnitNorm, "min_max_norm": MinMaxNorm, "minmaxnorm": MinMaxNorm}


def get(identifier):
    if identifier is None or isinstance(identifier, Constraint) or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict):
        return _BY_NAME[identifier["class_name"].lower()].from_config(identifier.get("config", {}))
    raise ValueError(f"cannot interpret {identifier!r} as a constraint")


def serialize(c):
    if c is None:
        return None
    return {"module": "keras.constraints", "class_name": type(c).__name__, "config": c.get_config(),
            "registered_name": None}
