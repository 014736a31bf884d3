"""Normalization layers: BatchNormalization, LayerNormalization, GroupNormalization, UnitNormalization.

Statistics are computed in float32 when the inputs are float16 or bfloat16
(as Keras does, to avoid overflow); the output comes back in the layer's
compute dtype.
"""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .. import constraints, initializers, regularizers
from ...variables import Variable as _PxVariable
from .base import Layer


def _ser(module, obj):
    return None if obj is None else module.serialize(obj)


def _raw(var, dtype):
    """A weight's value in `dtype`, read without mixed-precision autocasting."""
    return B.cast(_PxVariable.read_value(var), dtype)


def _axes(axis, rank):
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a % rank for a in axes)


def _broadcast_shape(rank, axes, input_shape):
    return [input_shape[i] if i in axes else 1 for i in range(rank)]


def _upcast(x):
    x = B.convert(x)
    return B.cast(x, "float32") if B.dtype_name(x.dtype) in ("float16", "bfloat16") else x


def _init_affine(layer, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                 beta_constraint, gamma_constraint):
    """The beta/gamma arguments every normalization layer takes."""
    layer.beta_initializer = initializers.get(beta_initializer)
    layer.gamma_initializer = initializers.get(gamma_initializer)
    layer.beta_regularizer = regularizers.get(beta_regularizer)
    layer.gamma_regularizer = regularizers.get(gamma_regularizer)
    layer.beta_constraint = constraints.get(beta_constraint)
    layer.gamma_constraint = constraints.get(gamma_constraint)
    layer.supports_masking = True
    layer.gamma = layer.beta = None


def _affine_config(layer):
    return {"beta_initializer": initializers.serialize(layer.beta_initializer),
            "gamma_initializer": initializers.serialize(layer.gamma_initializer),
            "beta_regularizer": _ser(regularizers, layer.beta_regularizer),
            "gamma_regularizer": _ser(regularizers, layer.gamma_regularizer),
            "beta_constraint": _ser(constraints, layer.beta_constraint),
            "gamma_constraint": _ser(constraints, layer.gamma_constraint)}


class BatchNormalization(Layer):
    """Normalizes with the batch's statistics in training (updating moving ones) and the moving ones otherwise."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, synchronized=False, renorm=False,
                 renorm_clipping=None, renorm_momentum=0.99, **kwargs):
        super().__init__(**kwargs)
        if renorm:
            raise NotImplementedError(f"BatchNormalization '{self.name}': renorm=True (batch renormalization) is "
                                      "not supported by plexus.keras")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale, self.synchronized = center, scale, synchronized
        _init_affine(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                     beta_constraint, gamma_constraint)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = _axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._axes)
        if any(d is None for d in shape):
            raise ValueError(f"BatchNormalization '{self.name}': axis {self.axis} of input shape {input_shape} "
                             "must be known")
        if self.scale:
            self.gamma = self.add_weight(shape=shape, name="gamma", initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=shape, name="beta", initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.moving_mean = self.add_weight(shape=shape, name="moving_mean", initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight(shape=shape, name="moving_variance",
                                               initializer=self.moving_variance_initializer, trainable=False)

    def _reshape(self, v, x):
        rank = len(x.shape)
        if self._axes == [rank - 1]:
            return v
        shape = [-1 if i in self._axes else 1 for i in range(rank)] if len(self._axes) == 1 else \
            [x.shape[i] if i in self._axes else 1 for i in range(rank)]
        return px.reshape(v, shape)

    def _moments(self, x, mask):
        rank = len(x.shape)
        reduce_axes = [i for i in range(rank) if i not in self._axes]
        if mask is None:
            mean = px.reduce_mean(x, axis=reduce_axes, keepdims=True)
            variance = px.reduce_mean(px.square(x - mean), axis=reduce_axes, keepdims=True)
        else:
            w = px.expand_dims(B.cast(mask, x.dtype), -1)
            total = px.reduce_sum(w * px.ones_like(x), axis=reduce_axes, keepdims=True)
            mean = px.math.divide_no_nan(px.reduce_sum(x * w, axis=reduce_axes, keepdims=True), total)
            variance = px.math.divide_no_nan(px.reduce_sum(px.square(x - mean) * w, axis=reduce_axes, keepdims=True),
                                             total)
        keep = [x.shape[i] if i in self._axes else None for i in range(rank)]
        flat = [d for d in keep if d is not None]
        return px.reshape(mean, flat), px.reshape(variance, flat)

    def call(self, inputs, training=False, mask=None):
        if mask is not None and len(mask.shape) != len(inputs.shape) - 1:
            raise ValueError(f"BatchNormalization '{self.name}': the mask must have one dimension less than the "
                             f"inputs; got mask {tuple(mask.shape)} and inputs {tuple(inputs.shape)}")
        x = _upcast(inputs)
        dt = B.dtype_name(x.dtype)
        moving_mean, moving_variance = _raw(self.moving_mean, dt), _raw(self.moving_variance, dt)
        if training and self.trainable:
            mean, variance = self._moments(x, mask)
            m = B.scalar(self.momentum, dt)
            one = B.scalar(1.0, dt)
            self.moving_mean.assign(B.cast(moving_mean * m + mean * (one - m), self.moving_mean.dtype))
            self.moving_variance.assign(B.cast(moving_variance * m + variance * (one - m),
                                               self.moving_variance.dtype))
        else:
            mean, variance = moving_mean, moving_variance
        inv = px.rsqrt(variance + B.scalar(self.epsilon, dt))
        if self.gamma is not None:
            inv = inv * _raw(self.gamma, dt)
        out = x * self._reshape(inv, x)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + _raw(self.beta, dt)
        out = out + self._reshape(shift, x)
        return B.cast(out, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, **_affine_config(self),
                "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
                "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
                "synchronized": self.synchronized,
                "renorm": False, "renorm_clipping": None, "renorm_momentum": 0.99}


class LayerNormalization(Layer):
    """Normalizes each sample over `axis` (default the last); rms_scaling divides by the root mean square only."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale, self.rms_scaling = center, scale, rms_scaling
        _init_affine(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                     beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = _axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._axes)
        if self.scale or self.rms_scaling:
            self.gamma = self.add_weight(shape=shape, name="gamma", initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight(shape=shape, name="beta", initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)

    def _param(self, v, x, dt):
        rank = len(x.shape)
        v = _raw(v, dt)
        if self._axes == [rank - 1]:
            return v
        return px.reshape(v, [x.shape[i] if i in self._axes else 1 for i in range(rank)])

    def call(self, inputs):
        x = _upcast(inputs)
        dt = B.dtype_name(x.dtype)
        eps = B.scalar(self.epsilon, dt)
        if self.rms_scaling:
            # Keras 3's rms_scaling divides by the standard deviation (the
            # variance about the mean) without subtracting the mean; Keras
            # documents it as deprecated and kept for compatibility, so
            # files written with it give the same outputs here.
            mean = px.reduce_mean(x, axis=self._axes, keepdims=True)
            variance = px.reduce_mean(px.square(x - mean), axis=self._axes, keepdims=True)
            out = x * px.rsqrt(variance + eps)
            if self.gamma is not None:
                out = out * self._param(self.gamma, x, dt)
            return B.cast(out, self.compute_dtype)
        mean = px.reduce_mean(x, axis=self._axes, keepdims=True)
        variance = px.reduce_mean(px.square(x - mean), axis=self._axes, keepdims=True)
        out = (x - mean) * px.rsqrt(variance + eps)
        if self.gamma is not None:
            out = out * self._param(self.gamma, x, dt)
        if self.beta is not None:
            out = out + self._param(self.beta, x, dt)
        return B.cast(out, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "rms_scaling": self.rms_scaling, **_affine_config(self)}


class GroupNormalization(Layer):
    """Normalizes each sample over groups of channels (groups=1: layer norm; groups=channels: instance norm)."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), axis, float(epsilon)
        self.center, self.scale = center, scale
        _init_affine(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                     beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        self._axis = self.axis % rank
        channels = input_shape[self._axis]
        if channels is None:
            raise ValueError(f"GroupNormalization '{self.name}': axis {self.axis} of {input_shape} must be known")
        if channels % self.groups:
            raise ValueError(f"GroupNormalization '{self.name}': {channels} channels are not divisible into "
                             f"{self.groups} groups")
        if self.scale:
            self.gamma = self.add_weight(shape=(channels,), name="gamma", initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=(channels,), name="beta", initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)

    def call(self, inputs):
        x = _upcast(inputs)
        dt = B.dtype_name(x.dtype)
        rank = len(x.shape)
        axis = self._axis
        channels = x.shape[axis]
        # Split the channel axis into (groups, channels per group).
        dims = [B.dim(x, i) for i in range(rank)]
        grouped = dims[:axis] + [self.groups, channels // self.groups] + dims[axis + 1:]
        if any(B.is_tensor(d) for d in grouped):
            shape = px.stack([B.cast(d, "int32") for d in grouped])
        else:
            shape = grouped
        g = px.reshape(x, shape)
        reduce_axes = [i for i in range(1, rank + 1) if i != axis]
        mean = px.reduce_mean(g, axis=reduce_axes, keepdims=True)
        variance = px.reduce_mean(px.square(g - mean), axis=reduce_axes, keepdims=True)
        g = (g - mean) * px.rsqrt(variance + B.scalar(self.epsilon, dt))
        out = px.reshape(g, B.dynamic_shape(x) if None in x.shape else list(x.shape))
        bshape = [channels if i == axis else 1 for i in range(rank)]
        if self.gamma is not None:
            out = out * px.reshape(_raw(self.gamma, dt), bshape)
        if self.beta is not None:
            out = out + px.reshape(_raw(self.beta, dt), bshape)
        return B.cast(out, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, **_affine_config(self)}


class RMSNormalization(Layer):
    """x / sqrt(mean(x^2 over axis) + epsilon) * scale (Keras 3's RMSNormalization)."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, float(epsilon)
        self.supports_masking = True

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = _axes(self.axis, rank)
        self.scale = self.add_weight(shape=tuple(input_shape[a] for a in self._axes), name="scale",
                                     initializer="ones")

    def call(self, x):
        x = _upcast(x)
        dt = B.dtype_name(x.dtype)
        rank = len(x.shape)
        out = x * px.rsqrt(px.reduce_mean(px.square(x), axis=self._axes, keepdims=True) + B.scalar(self.epsilon, dt))
        scale = _raw(self.scale, dt)
        if self._axes != [rank - 1]:
            scale = px.reshape(scale, [x.shape[i] if i in self._axes else 1 for i in range(rank)])
        return B.cast(out * scale, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over `axis`."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs):
        x = _upcast(inputs)
        ss = px.reduce_sum(px.square(x), axis=self.axis, keepdims=True)
        out = x * px.rsqrt(px.maximum(ss, B.scalar(1e-12, x.dtype)))
        return B.cast(out, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


__all__ = ["BatchNormalization", "LayerNormalization", "GroupNormalization", "RMSNormalization",
           "UnitNormalization"]
