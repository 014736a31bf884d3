"""Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot."""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .base import Layer


class _Merge(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"{type(self).__name__} '{self.name}' takes a list of at least 2 inputs, "
                             f"got {type(inputs).__name__}")
        return [B.convert(x) for x in inputs]

    def call(self, inputs):
        xs = self._check(inputs)
        out = xs[0]
        for x in xs[1:]:
            out = self._merge(out, x)
        return self._finish(out, len(xs))

    def _finish(self, out, n):
        return out

    def compute_mask(self, inputs, previous_mask=None):
        if previous_mask is None or not isinstance(previous_mask, (list, tuple)):
            return previous_mask
        masks = [m for m in previous_mask if m is not None]
        if not masks:
            return None
        out = masks[0]
        for m in masks[1:]:
            out = px.logical_and(out, m)
        return out


class Add(_Merge):
    def _merge(self, a, b):
        return a + b


class Subtract(_Merge):
    def call(self, inputs):
        xs = self._check(inputs)
        if len(xs) != 2:
            raise ValueError(f"Subtract '{self.name}' takes exactly 2 inputs, got {len(xs)}")
        return xs[0] - xs[1]


class Multiply(_Merge):
    def _merge(self, a, b):
        return a * b


class Average(_Merge):
    def _merge(self, a, b):
        return a + b

    def _finish(self, out, n):
        return out / B.scalar(float(n), out.dtype)


class Maximum(_Merge):
    def _merge(self, a, b):
        return px.maximum(a, b)


class Minimum(_Merge):
    def _merge(self, a, b):
        return px.minimum(a, b)


class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return px.concat(self._check(inputs), axis=self.axis)

    def compute_mask(self, inputs, previous_mask=None):
        if previous_mask is None or not isinstance(previous_mask, (list, tuple)):
            return None
        if all(m is None for m in previous_mask):
            return None
        full = []
        for x, m in zip(inputs, previous_mask):
            x = B.convert(x)
            if m is None:
                m = px.ones_like(x[..., 0], dtype=px.bool_) if len(x.shape) > 1 else None
            full.append(px.cast(m, "bool"))
        out = full[0]
        for m in full[1:]:
            out = px.logical_and(out, m)
        return out

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """Dot products of samples from two inputs along `axes` (normalize=True: cosine)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.axes, self.normalize = axes, normalize

    def call(self, inputs):
        a, b = self._check(inputs)
        axes = self.axes if isinstance(self.axes, (list, tuple)) else [self.axes, self.axes]
        axes = [ax % len(x.shape) for ax, x in zip(axes, (a, b))]
        if self.normalize:
            a = a * px.rsqrt(px.maximum(px.reduce_sum(a * a, axis=axes[0], keepdims=True), B.scalar(1e-12, a.dtype)))
            b = b * px.rsqrt(px.maximum(px.reduce_sum(b * b, axis=axes[1], keepdims=True), B.scalar(1e-12, b.dtype)))
        # Batched contraction: move the contracted axis last in a and second in b.
        ra, rb = len(a.shape), len(b.shape)
        if ra == 2 and rb == 2:
            return px.reduce_sum(a * b, axis=1, keepdims=True)
        pa = [0] + [i for i in range(1, ra) if i != axes[0]] + [axes[0]]
        pb = [0, axes[1]] + [i for i in range(1, rb) if i != axes[1]]
        out = px.matmul(px.transpose(a, pa), px.transpose(b, pb))
        return out

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot"]
