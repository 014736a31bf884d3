"""Pooling layers: max and average pooling in 1, 2 and 3 dimensions and their global forms.

Arguments, defaults and configs are Keras 3's. Windows run in channels_last
(a channels_first input is transposed there and back). 1-D pooling runs as
2-D pooling over a height of 1. 3-D pooling runs as a 2-D pooling over
height and width followed by one over depth: the maximum (or the average
over the positions inside the input, as TensorFlow's SAME padding counts
them) over a box window is the same taken one axis group at a time, and
MaxPool and AvgPool have gradients where MaxPool3D and AvgPool3D do not.
"""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .base import Layer
from .conv import dims, mul, reshape, standardize_data_format, standardize_tuple, to_channels_first, \
    to_channels_last


def _pool2d(x, op, pool, strides, padding):
    attrs = {"ksize": [1, pool[0], pool[1], 1], "strides": [1, strides[0], strides[1], 1],
             "padding": padding.upper()}
    return B.ex(op, [x], attrs)[0]


def pool(x, mode, pool_size, strides, padding):
    """Max ("max") or average ("average") pooling of a channels_last x over its spatial axes."""
    op = "MaxPool" if mode == "max" else "AvgPool"
    n = len(pool_size)
    if n == 1:
        y = _pool2d(px.expand_dims(x, 1), op, (1,) + tuple(pool_size), (1,) + tuple(strides), padding)
        return px.squeeze(y, [1])
    if n == 2:
        return _pool2d(x, op, pool_size, strides, padding)
    batch, d, h, w, c = dims(x)
    # Height and width first, over batch * depth images.
    y = _pool2d(reshape(x, [mul(batch, d), h, w, c]), op, pool_size[1:], strides[1:], padding)
    _, h2, w2, _ = dims(y)
    # Then depth, with height and width flattened into one axis.
    y = _pool2d(reshape(y, [batch, d, mul(h2, w2), c]), op, (pool_size[0], 1), (strides[0], 1), padding)
    d2 = dims(y)[1]
    return reshape(y, [batch, d2, h2, w2, c])


class BasePooling(Layer):
    rank = 2
    pool_mode = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        n = self.rank
        self.pool_size = standardize_tuple(pool_size, n, "pool_size")
        strides = pool_size if strides is None else strides
        self.strides = standardize_tuple(strides, n, "strides", allow_zero=True)
        self.padding = padding
        if str(padding).lower() not in ("valid", "same"):
            raise ValueError(f"the `padding` argument must be 'valid' or 'same', got {padding!r}")
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        x = B.convert(inputs)
        if len(x.shape) != self.rank + 2:
            raise ValueError(f"{type(self).__name__} '{self.name}': expected an input of rank {self.rank + 2}, "
                             f"got shape {tuple(x.shape)}")
        y = pool(to_channels_last(x, self.data_format), self.pool_mode, self.pool_size, self.strides,
                 str(self.padding).lower())
        return to_channels_first(y, self.data_format)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


class MaxPooling1D(BasePooling):
    rank, pool_mode = 1, "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling2D(BasePooling):
    rank, pool_mode = 2, "max"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling3D(BasePooling):
    rank, pool_mode = 3, "max"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling1D(BasePooling):
    rank, pool_mode = 1, "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling2D(BasePooling):
    rank, pool_mode = 2, "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling3D(BasePooling):
    rank, pool_mode = 3, "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


# ---- global pooling -------------------------------------------------------------------------

class BaseGlobalPooling(Layer):
    rank = 2
    pool_mode = "max"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = keepdims

    def _axes(self):
        start = 1 if self.data_format == "channels_last" else 2
        return list(range(start, start + self.rank))

    def call(self, inputs):
        x = B.convert(inputs)
        if len(x.shape) != self.rank + 2:
            raise ValueError(f"{type(self).__name__} '{self.name}': expected an input of rank {self.rank + 2}, "
                             f"got shape {tuple(x.shape)}")
        reduce = px.reduce_max if self.pool_mode == "max" else px.reduce_mean
        return reduce(x, axis=self._axes(), keepdims=self.keepdims)

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalMaxPooling1D(BaseGlobalPooling):
    rank, pool_mode = 1, "max"


class GlobalMaxPooling2D(BaseGlobalPooling):
    rank, pool_mode = 2, "max"


class GlobalMaxPooling3D(BaseGlobalPooling):
    rank, pool_mode = 3, "max"


class GlobalAveragePooling1D(BaseGlobalPooling):
    """The mean over time steps; with a mask (batch, steps), the mean over the unmasked steps."""

    rank, pool_mode = 1, "average"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        x = B.convert(inputs)
        steps = 1 if self.data_format == "channels_last" else 2
        m = px.expand_dims(B.cast(B.convert(mask), "bool"), 2 if self.data_format == "channels_last" else 1)
        x = px.where(m, x, px.zeros_like(x))
        total = px.reduce_sum(x, axis=steps, keepdims=self.keepdims)
        count = px.reduce_sum(B.cast(m, x.dtype), axis=steps, keepdims=self.keepdims)
        return total / count


class GlobalAveragePooling2D(BaseGlobalPooling):
    rank, pool_mode = 2, "average"


class GlobalAveragePooling3D(BaseGlobalPooling):
    rank, pool_mode = 3, "average"


MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (GlobalAveragePooling1D, GlobalAveragePooling2D,
                                                     GlobalAveragePooling3D)

__all__ = ["MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
           "AveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
           "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D",
           "GlobalAvgPool3D"]
