"""Convolution layers: Conv1D/2D/3D, their transposes, depthwise and separable convolutions.

Arguments, defaults, weight names and shapes and configs are Keras 3's.
Every layer computes in channels_last: a channels_first input is transposed
to channels_last and the result back. 1-D convolutions run as 2-D ones over
a height of 1. Transposed convolutions of every rank run as
Conv3DBackpropInputV2 (the gradient op of Conv3D, which has gradients of
its own), with TensorFlow's output shapes, so they train with
plexus.GradientTape. Shapes known only at run time (an unknown batch, or
unknown spatial sizes) are read with Shape ops.

The module also holds small shape helpers the pooling, reshaping and
preprocessing layers share.
"""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .. import activations, constraints, initializers, regularizers
from .base import Layer


# ---- argument checks and shared helpers ----------------------------------------------

def _ser(module, obj):
    return None if obj is None else module.serialize(obj)


def standardize_tuple(value, n, name, allow_zero=False):
    """An int or n ints as a tuple of n ints, each positive (or >= 0 with allow_zero)."""
    if isinstance(value, int):
        out = (value,) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except TypeError:
            raise ValueError(f"the `{name}` argument must be a tuple of {n} integers, got {value!r}") from None
        if len(out) != n:
            raise ValueError(f"the `{name}` argument must be a tuple of {n} integers, got {value!r}")
    if any(v < 0 or v == 0 and not allow_zero for v in out):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"the `{name}` argument must have values {bound}, got {value!r}")
    return out


def standardize_padding(value, allow_causal=False):
    padding = str(value).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"the `padding` argument must be one of {allowed}, got {value!r}")
    return padding


def standardize_data_format(value):
    if value is None:
        return "channels_last"
    fmt = str(value).lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"the `data_format` argument must be 'channels_last' or 'channels_first', got {value!r}")
    return fmt


def to_channels_last(x, data_format):
    """x (rank r) with its channels moved from axis 1 to the end when data_format is channels_first."""
    rank = len(x.shape)
    if data_format != "channels_first" or rank < 3:
        return x
    return px.transpose(x, [0] + list(range(2, rank)) + [1])


def to_channels_first(x, data_format):
    """The inverse of to_channels_last."""
    rank = len(x.shape)
    if data_format != "channels_first" or rank < 3:
        return x
    return px.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def dims(x):
    """The dimensions of x: Python ints where static, int32 scalar tensors where not."""
    shape = B.shape_list(x)
    if None not in shape:
        return list(shape)
    dynamic = B.dynamic_shape(x)
    return [d if d is not None else dynamic[i] for i, d in enumerate(shape)]


def i32(d):
    """An int or an integer scalar tensor as an int32 scalar tensor."""
    return B.cast(d, "int32") if B.is_tensor(d) else B.scalar(int(d), "int32")


def shape_arg(values):
    """A shape of ints and scalar tensors: a list of ints when all are ints, else an int32 tensor."""
    if all(isinstance(v, int) for v in values):
        return [int(v) for v in values]
    return px.stack([i32(v) for v in values])


def mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return i32(a) * i32(b)


def linear(a, scale, offset):
    """a * scale + offset for an int or an int32 scalar tensor a."""
    if isinstance(a, int):
        return a * scale + offset
    return i32(a) * B.scalar(scale, "int32") + B.scalar(offset, "int32")


def reshape(x, values):
    return px.reshape(x, shape_arg(values))


def _same_pads(n, k_eff, s):
    """TensorFlow's SAME padding (before, after) of a size-n axis, n an int or a tensor."""
    if isinstance(n, int):
        total = max((-(-n // s) - 1) * s + k_eff - n, 0)
        return total // 2, total - total // 2
    n = i32(n)
    out = px.floordiv(n + B.scalar(s - 1, "int32"), B.scalar(s, "int32"))
    total = px.maximum((out - B.scalar(1, "int32")) * B.scalar(s, "int32") + B.scalar(k_eff, "int32") - n,
                       B.scalar(0, "int32"))
    before = px.floordiv(total, B.scalar(2, "int32"))
    return before, total - before


def pad_spatial(x, pads):
    """Pads the spatial axes 1..n of a channels_last x by pads [(before, after), ...] (ints or tensors)."""
    rows = [(0, 0)] + list(pads) + [(0, 0)]
    if all(isinstance(v, int) for row in rows for v in row):
        if not any(v for row in rows for v in row):
            return x
        return px.pad(x, [list(row) for row in rows])
    table = px.stack([px.stack([i32(a), i32(b)]) for a, b in rows])
    return B.ex("Pad", [x, table], {})[0]


# ---- the convolution ops in channels_last ------------------------------------------------

def _raw_conv2d(x, kernel, strides, padding, dilation):
    attrs = {"strides": [1, strides[0], strides[1], 1], "padding": padding.upper(),
             "dilations": [1, dilation[0], dilation[1], 1]}
    return B.ex("Conv2D", [x, kernel], attrs)[0]


def conv(x, kernel, strides, padding, dilation, groups=1):
    """An N-D convolution of channels_last x with kernel k + (in / groups, filters)."""
    n = len(strides)
    if padding == "causal":
        x = pad_spatial(x, [((kernel.shape[0] - 1) * dilation[0], 0)])
        padding = "valid"
    if n == 1:
        y = _raw_conv2d(px.expand_dims(x, 1), px.expand_dims(kernel, 0), (1,) + tuple(strides), padding,
                        (1,) + tuple(dilation))
        return px.squeeze(y, [1])
    if n == 2:
        return _raw_conv2d(x, kernel, strides, padding, dilation)
    attrs = {"strides": [1, *strides, 1], "padding": padding.upper(), "dilations": [1, *dilation, 1]}
    if groups == 1:
        return B.ex("Conv3D", [x, kernel], attrs)[0]
    # Conv3D has no grouped form: one convolution per group, concatenated.
    xs = px.split(x, groups, axis=-1)
    ks = px.split(kernel, groups, axis=-1)
    return px.concat([B.ex("Conv3D", [a, b], attrs)[0] for a, b in zip(xs, ks)], axis=-1)


def transpose_length(size, kernel, stride, padding, output_padding, dilation):
    """Keras's output length of a transposed convolution (an int, or a tensor for a tensor size)."""
    k_eff = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = max(k_eff, stride) - k_eff if output_padding is None else output_padding
        return linear(size, stride, k_eff - stride + extra)
    if output_padding is None:
        return linear(size, stride, 0)
    return linear(size, stride, k_eff % 2 - stride + output_padding)


def conv_transpose(x, kernel, strides, padding, output_padding, dilation):
    """The transposed N-D convolution of channels_last x with kernel k + (filters, in), TensorFlow's way."""
    n = len(strides)
    sizes = dims(x)
    k = list(kernel.shape[:n])
    out = [transpose_length(sizes[1 + i], k[i], strides[i], padding,
                            None if output_padding is None else output_padding[i], dilation[i]) for i in range(n)]
    lead = 3 - n
    for _ in range(lead):
        x = px.expand_dims(x, 1)
        kernel = px.expand_dims(kernel, 0)
    input_sizes = shape_arg([sizes[0]] + [1] * lead + out + [int(kernel.shape[-2])])
    if isinstance(input_sizes, list):
        input_sizes = B.scalar(input_sizes, "int32")
    attrs = {"strides": [1] + [1] * lead + list(strides) + [1], "padding": padding.upper(),
             "dilations": [1] + [1] * lead + list(dilation) + [1]}
    y = B.ex("Conv3DBackpropInputV2", [input_sizes, kernel, x], attrs)[0]
    return px.squeeze(y, list(range(1, 1 + lead))) if lead else y


def depthwise_conv(x, kernel, strides, padding, dilation):
    """A 1-D or 2-D depthwise convolution of channels_last x with kernel k + (in, multiplier).

    Strides and dilations both above 1 run as Keras's TensorFlow backend
    does: explicit SAME padding, a stride-1 convolution, then every
    stride-th output.
    """
    n = len(strides)
    if n == 1:
        x, kernel = px.expand_dims(x, 1), px.expand_dims(kernel, 0)
        strides, dilation = (1,) + tuple(strides), (1,) + tuple(dilation)
    decompose = max(strides) > 1 and max(dilation) > 1
    if decompose:
        if padding == "same":
            sizes = dims(x)
            x = pad_spatial(x, [_same_pads(sizes[1 + i], (kernel.shape[i] - 1) * dilation[i] + 1, strides[i])
                                for i in range(2)])
        padding = "valid"
    run_strides = (1, 1) if decompose else strides
    attrs = {"strides": [1, run_strides[0], run_strides[1], 1], "padding": padding.upper(),
             "dilations": [1, dilation[0], dilation[1], 1]}
    y = B.ex("DepthwiseConv2dNative", [x, kernel], attrs)[0]
    if decompose:
        y = y[:, ::strides[0], ::strides[1], :]
    return px.squeeze(y, [1]) if n == 1 else y


def _add_bias_and_activate(layer, y, bias):
    if bias is not None:
        y = px.nn.bias_add(y, bias)
    y = to_channels_first(y, layer.data_format)
    return y if layer.activation is None else layer.activation(y)


def _channels(layer, input_shape):
    c = input_shape[-1] if layer.data_format == "channels_last" else input_shape[1]
    if c is None:
        raise ValueError(f"{type(layer).__name__} '{layer.name}': the channel dimension of the input must be "
                         f"known, got input shape {tuple(input_shape)}")
    return int(c)


def _check_rank(layer, x):
    if len(x.shape) != layer.rank + 2:
        raise ValueError(f"{type(layer).__name__} '{layer.name}': expected an input of rank {layer.rank + 2}, "
                         f"got shape {tuple(x.shape)}")


# ---- convolutions ------------------------------------------------------------------------

class BaseConv(Layer):
    """The N-D convolution layer behind Conv1D, Conv2D and Conv3D."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank:
            raise NotImplementedError(f"{type(self).__name__}: LoRA (lora_rank) is not supported")
        n = self.rank
        self.filters = None if filters is None else int(filters)
        self.groups = int(groups)
        self.kernel_size = standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = standardize_tuple(strides, n, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, n, "dilation_rate")
        self.padding = standardize_padding(padding, allow_causal=n == 1)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.lora_rank, self.lora_alpha = None, None
        if self.filters is not None and self.filters <= 0:
            raise ValueError(f"filters must be positive, got {filters}")
        if self.groups <= 0:
            raise ValueError(f"groups must be a positive integer, got {groups}")
        if self.filters is not None and self.filters % self.groups:
            raise ValueError(f"filters ({filters}) must be divisible by groups ({groups})")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        if channels % self.groups:
            raise ValueError(f"{type(self).__name__} '{self.name}': the input channels ({channels}) must be "
                             f"divisible by groups ({self.groups})")
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels // self.groups, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x)
        x = to_channels_last(x, self.data_format)
        y = conv(x, B.convert(self.kernel), self.strides, self.padding, self.dilation_rate, self.groups)
        return _add_bias_and_activate(self, y, self.bias)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": _ser(regularizers, self.kernel_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "activity_regularizer": _ser(regularizers, self.activity_regularizer),
                "kernel_constraint": _ser(constraints, self.kernel_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint)}


class Conv1D(BaseConv):
    """1-D convolution; padding "valid", "same" or "causal" (left padding only)."""
    rank = 1


class Conv2D(BaseConv):
    """2-D convolution (grouped when groups > 1)."""
    rank = 2


class Conv3D(BaseConv):
    """3-D convolution (grouped as one convolution per group)."""
    rank = 3


# ---- transposed convolutions ------------------------------------------------------------

class BaseConvTranspose(Layer):
    """The transposed N-D convolution behind Conv1DTranspose, Conv2DTranspose and Conv3DTranspose."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        self.filters = int(filters)
        self.kernel_size = standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = standardize_tuple(strides, n, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, n, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.output_padding = None if output_padding is None else standardize_tuple(
            output_padding, n, "output_padding", allow_zero=True)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        if self.filters <= 0:
            raise ValueError(f"filters must be positive, got {filters}")
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. Received: "
                             f"output_padding={self.output_padding}, strides={self.strides}")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (self.filters, channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x)
        x = to_channels_last(x, self.data_format)
        y = conv_transpose(x, B.convert(self.kernel), self.strides, self.padding, self.output_padding,
                           self.dilation_rate)
        return _add_bias_and_activate(self, y, self.bias)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": _ser(regularizers, self.kernel_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "activity_regularizer": _ser(regularizers, self.activity_regularizer),
                "kernel_constraint": _ser(constraints, self.kernel_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint)}


class Conv1DTranspose(BaseConvTranspose):
    rank = 1


class Conv2DTranspose(BaseConvTranspose):
    rank = 2


class Conv3DTranspose(BaseConvTranspose):
    rank = 3


# ---- depthwise and separable convolutions -----------------------------------------------

class BaseDepthwiseConv(Layer):
    """The depthwise convolution behind DepthwiseConv1D and DepthwiseConv2D."""

    rank = 2

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        self.depth_multiplier = int(depth_multiplier)
        self.kernel_size = standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = standardize_tuple(strides, n, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, n, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        if self.depth_multiplier <= 0:
            raise ValueError(f"depth_multiplier must be positive, got {depth_multiplier}")

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
                                      initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
                                      constraint=self.depthwise_constraint)
        self.bias = self.add_weight(name="bias", shape=(channels * self.depth_multiplier,),
                                    initializer=self.bias_initializer, regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x)
        x = to_channels_last(x, self.data_format)
        y = depthwise_conv(x, B.convert(self.kernel), self.strides, self.padding, self.dilation_rate)
        return _add_bias_and_activate(self, y, self.bias)

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "depthwise_regularizer": _ser(regularizers, self.depthwise_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "activity_regularizer": _ser(regularizers, self.activity_regularizer),
                "depthwise_constraint": _ser(constraints, self.depthwise_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint)}


class DepthwiseConv1D(BaseDepthwiseConv):
    rank = 1


class DepthwiseConv2D(BaseDepthwiseConv):
    rank = 2


class BaseSeparableConv(Layer):
    """A depthwise convolution followed by a pointwise (1x1) one: SeparableConv1D and SeparableConv2D."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        self.depth_multiplier = int(depth_multiplier)
        self.filters = int(filters)
        self.kernel_size = standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = standardize_tuple(strides, n, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, n, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        if self.depth_multiplier <= 0 or self.filters <= 0:
            raise ValueError(f"depth_multiplier and filters must be positive, got {depth_multiplier}, {filters}")

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        n = self.rank
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel", shape=(1,) * n + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x)
        x = to_channels_last(x, self.data_format)
        y = depthwise_conv(x, B.convert(self.depthwise_kernel), self.strides, self.padding, self.dilation_rate)
        ones = (1,) * self.rank
        y = conv(y, B.convert(self.pointwise_kernel), ones, "valid", ones)
        return _add_bias_and_activate(self, y, self.bias)

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier, "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "depthwise_regularizer": _ser(regularizers, self.depthwise_regularizer),
                "pointwise_regularizer": _ser(regularizers, self.pointwise_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "activity_regularizer": _ser(regularizers, self.activity_regularizer),
                "depthwise_constraint": _ser(constraints, self.depthwise_constraint),
                "pointwise_constraint": _ser(constraints, self.pointwise_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint)}


class SeparableConv1D(BaseSeparableConv):
    rank = 1


class SeparableConv2D(BaseSeparableConv):
    rank = 2


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose, Convolution3DTranspose = (Conv1DTranspose, Conv2DTranspose,
                                                                          Conv3DTranspose)
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
           "Convolution1D", "Convolution2D", "Convolution3D", "Convolution1DTranspose", "Convolution2DTranspose",
           "Convolution3DTranspose",
           "SeparableConvolution1D", "SeparableConvolution2D"]
