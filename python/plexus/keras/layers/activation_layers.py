"""Activation layers: ReLU, LeakyReLU, PReLU, ELU, Softmax; and TimeDistributed, ActivityRegularization."""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .. import activations, constraints, initializers, regularizers
from .base import Layer


class ReLU(Layer):
    """max(x, 0) with Keras's options: max_value, negative_slope below threshold, threshold."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"ReLU: max_value must be >= 0, got {max_value}")
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"ReLU: negative_slope must be >= 0, got {negative_slope}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold
        self.supports_masking = True

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope, max_value=self.max_value,
                                threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class LeakyReLU(Layer):
    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:  # Keras 2's name
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = float(negative_slope)
        self.supports_masking = True

    def call(self, inputs):
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class PReLU(Layer):
    """max(x, 0) + alpha * min(x, 0) with a learned alpha (shared along `shared_axes`)."""

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is not None and not isinstance(shared_axes, (list, tuple)):
            shared_axes = [shared_axes]
        self.shared_axes = None if shared_axes is None else list(shared_axes)
        self.supports_masking = True

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        self.alpha = self.add_weight(shape=tuple(shape), name="alpha", initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)

    def call(self, inputs):
        x = B.convert(inputs)
        zero = B.scalar(0.0, x.dtype)
        return px.maximum(x, zero) + self.alpha * px.minimum(x, zero)

    def get_config(self):
        ser = lambda m, o: None if o is None else m.serialize(o)  # noqa: E731
        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": ser(regularizers, self.alpha_regularizer),
                "alpha_constraint": ser(constraints, self.alpha_constraint), "shared_axes": self.shared_axes}


class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)
        self.supports_masking = True

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(Layer):
    """Softmax over `axis`; masked positions (mask False) get probability 0."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs, mask=None):
        x = B.convert(inputs)
        if mask is not None:
            big = B.scalar(-1e9 if B.dtype_name(x.dtype) == "float32" else -3e4, x.dtype)
            x = x + (B.scalar(1.0, x.dtype) - B.cast(mask, x.dtype)) * big
        if isinstance(self.axis, (list, tuple)):
            shifted = x - px.reduce_max(x, axis=list(self.axis), keepdims=True)
            e = px.exp(shifted)
            return e / px.reduce_sum(e, axis=list(self.axis), keepdims=True)
        return px.nn.softmax(x, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class ActivityRegularization(Layer):
    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}


class TimeDistributed(Layer):
    """Applies `layer` to every time step: inputs [batch, time, ...] are folded to [batch * time, ...]."""

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise ValueError(f"TimeDistributed: {layer!r} is not a layer")
        self.layer = layer
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(f"TimeDistributed '{self.name}': inputs need at least 3 dimensions, got {input_shape}")
        if not self.layer.built:
            self.layer.build((None,) + tuple(input_shape[2:]))
            self.layer.built = True

    def call(self, inputs, training=None, mask=None):
        x = B.convert(inputs)
        batch, time = B.dim(x, 0), B.dim(x, 1)
        inner = list(x.shape[2:])
        folded = px.reshape(x, [-1] + inner)
        kwargs = {"training": training} if "training" in self.layer._call_params else {}
        y = B.convert(self.layer(folded, **kwargs))
        if isinstance(batch, int) and isinstance(time, int):
            shape = [batch, time] + list(y.shape[1:])
        else:
            parts = [B.cast(d, "int32") if B.is_tensor(d) else B.scalar(d, "int32") for d in (batch, time)]
            rest = B.ex("StridedSlice", [B.dynamic_shape(y), B.scalar([1], "int32"), B.scalar([0], "int32"),
                                         B.scalar([1], "int32")], {"end_mask": 1})[0]
            shape = px.concat([px.stack(parts), rest], axis=0)
        return px.reshape(y, shape)

    def get_config(self):
        inner = {"module": "keras.layers", "class_name": type(self.layer).__name__,
                 "config": self.layer.get_config(), "registered_name": None}
        return {**super().get_config(), "layer": inner}


__all__ = ["ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax", "ActivityRegularization", "TimeDistributed"]
