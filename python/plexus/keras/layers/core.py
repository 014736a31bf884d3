"""Core layers: Dense, EinsumDense-free basics, Embedding, Activation, Dropout family, Lambda, Identity."""

from __future__ import annotations

import numpy as np

import plexus as px

from .. import _backend as B
from .. import activations, constraints, initializers, regularizers
from ..variables import SeedGenerator, uniform
from .base import Layer


def _ser(module, obj):
    return None if obj is None else module.serialize(obj)


class Dense(Layer):
    """output = activation(inputs @ kernel + bias), on the last axis of inputs of any rank."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if int(units) <= 0:
            raise ValueError(f"Dense: units must be positive, got {units}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.lora_rank = lora_rank
        self.supports_masking = True

    def build(self, input_shape):
        last = input_shape[-1]
        if last is None:
            raise ValueError(f"Dense '{self.name}': the last dimension of the input must be known, got {input_shape}")
        self.kernel = self.add_weight(shape=(last, self.units), initializer=self.kernel_initializer, name="kernel",
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = self.add_weight(shape=(self.units,), initializer=self.bias_initializer, name="bias",
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        y = B.matmul_last(x, self.kernel)
        if self.bias is not None:
            y = px.nn.bias_add(y, self.bias)
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": _ser(regularizers, self.kernel_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "kernel_constraint": _ser(constraints, self.kernel_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint)}


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Identity(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs


class Lambda(Layer):
    """Wraps a function of tensors as a layer (not saved in .keras files: functions are code)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function, self.arguments = function, dict(arguments or {})
        self._mask = mask

    def call(self, inputs, mask=None, training=None):
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs, previous_mask=None):
        if callable(self._mask):
            return self._mask(inputs, previous_mask)
        return self._mask


class Dropout(Layer):
    """Zeroes a fraction `rate` of the inputs in training and scales the rest by 1 / (1 - rate)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Dropout: rate must be in [0, 1], got {rate}")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self.seed_generator = SeedGenerator(seed, name=f"{self.name}_seed")
        self.supports_masking = True

    def _noise_shape(self, x):
        if self.noise_shape is None:
            return B.dynamic_shape(x) if None in x.shape else list(x.shape)
        dims = [B.dim(x, i) if d is None else d for i, d in enumerate(self.noise_shape)]
        if any(B.is_tensor(d) for d in dims):
            return px.stack([B.cast(d, "int32") for d in dims])
        return dims

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        x = B.convert(inputs)
        if self.rate == 1:
            return px.zeros_like(x)
        keep = uniform(self._noise_shape(x), self.seed_generator, dtype=x.dtype) >= B.scalar(self.rate, x.dtype)
        return x * B.cast(keep, x.dtype) / B.scalar(1.0 - self.rate, x.dtype)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class _SpatialDropout(Dropout):
    _spatial_rank = 1

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = data_format or "channels_last"

    def _noise_shape(self, x):
        n = self._spatial_rank
        batch = B.dim(x, 0)
        channels = B.dim(x, -1 if self.data_format == "channels_last" else 1)
        ones = [1] * n
        dims = [batch] + ones + [channels] if self.data_format == "channels_last" else [batch, channels] + ones
        if any(B.is_tensor(d) for d in dims):
            return px.stack([B.cast(d, "int32") for d in dims])
        return dims

    def get_config(self):
        # Keras's SpatialDropout configs hold only these keys (its constructors
        # take no trainable or noise_shape, and SpatialDropout1D no data_format).
        config = {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self.dtype_policy.get_config()}
        if self._spatial_rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    _spatial_rank = 1


class SpatialDropout2D(_SpatialDropout):
    _spatial_rank = 2


class SpatialDropout3D(_SpatialDropout):
    _spatial_rank = 3


class GaussianNoise(Layer):
    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed
        self.seed_generator = SeedGenerator(seed, name=f"{self.name}_seed")
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training:
            return inputs
        x = B.convert(inputs)
        shape = B.dynamic_shape(x)
        noise = B.ex("StatelessRandomNormal", [shape, self.seed_generator.next()],
                     {"dtype": x.dtype})[0]
        return x + noise * B.scalar(self.stddev, x.dtype)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class Embedding(Layer):
    """Looks up rows of an (input_dim, output_dim) matrix by integer index."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, lora_rank=None, **kwargs):
        kwargs.pop("activity_regularizer", None)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform()
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self._initial_weights = weights
        self.autocast = False

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim), name="embeddings",
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)

    def call(self, inputs):
        ids = B.convert(inputs)
        if B.dtype_name(ids.dtype) not in ("int32", "int64"):
            ids = B.cast(ids, "int32")
        out = px.gather(self.embeddings, ids)
        if self.compute_dtype != B.dtype_name(out.dtype):
            out = B.cast(out, self.compute_dtype)
        return out

    def compute_mask(self, inputs, previous_mask=None):
        if not self.mask_zero:
            return None
        return px.not_equal(B.convert(inputs), B.scalar(0, B.convert(inputs).dtype))

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": _ser(regularizers, self.embeddings_regularizer),
                "embeddings_constraint": _ser(constraints, self.embeddings_constraint),
                "mask_zero": self.mask_zero}


class Masking(Layer):
    """Masks time steps whose features all equal `mask_value`."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        x = B.convert(inputs)
        return px.reduce_any(px.not_equal(x, B.scalar(self.mask_value, x.dtype)), axis=-1)

    def call(self, inputs):
        x = B.convert(inputs)
        keep = px.reduce_any(px.not_equal(x, B.scalar(self.mask_value, x.dtype)), axis=-1, keepdims=True)
        return x * B.cast(keep, x.dtype)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}




__all__ = ["Dense", "Activation", "Identity", "Lambda", "Dropout", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D", "GaussianNoise", "Embedding", "Masking"]
