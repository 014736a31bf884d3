"""Reshaping layers: Flatten, Reshape, Permute, RepeatVector, ZeroPadding, UpSampling and Cropping.

Arguments, defaults and configs are Keras 3's. Every layer keeps the batch
dimension as it comes (known or not) and reads other dimensions known only
at run time with Shape ops.
"""

from __future__ import annotations

import math

import plexus as px

from .. import _backend as B
from .base import Layer
from .conv import dims, mul, reshape, standardize_data_format, standardize_tuple, to_channels_first, \
    to_channels_last


def repeat(x, times, axis):
    """Each element of x repeated `times` times along `axis` (like numpy.repeat with an int)."""
    if times == 1:
        return x
    rank = len(x.shape)
    axis %= rank
    sizes = dims(x)
    multiples = [1] * (rank + 1)
    multiples[axis + 1] = times
    y = px.tile(px.expand_dims(x, axis + 1), multiples)
    return reshape(y, sizes[:axis] + [mul(sizes[axis], times)] + sizes[axis + 1:])


def _check_rank(layer, x, rank):
    if len(x.shape) != rank:
        raise ValueError(f"{type(layer).__name__} '{layer.name}': expected an input of rank {rank}, "
                         f"got shape {tuple(x.shape)}")


def _pairs(value, n, name):
    """An int, or n ints or pairs, as n (before, after) pairs (ZeroPadding and Cropping arguments)."""
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"the `{name}` argument must be >= 0, got {value}")
        return ((value, value),) * n
    if not hasattr(value, "__len__") or len(value) != n:
        raise ValueError(f"the `{name}` argument must be an int or a tuple of {n} ints or pairs, got {value!r}")
    return tuple(standardize_tuple(v, 2, f"entry {i} of {name}", allow_zero=True) for i, v in enumerate(value))


class Flatten(Layer):
    """(batch, ...) -> (batch, product of the rest); channels_first inputs are made channels_last first."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        x = B.convert(inputs)
        rank = len(x.shape)
        if self.data_format == "channels_first" and rank > 2:
            x = px.transpose(x, [0] + list(range(2, rank)) + [1])
        rest = list(x.shape[1:])
        if not rest:
            flat = 1
        elif None in rest:
            flat = -1
        else:
            flat = math.prod(rest)
        return reshape(x, [B.dim(x, 0), flat])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """(batch, ...) -> (batch,) + target_shape; one entry of target_shape may be -1."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        target_shape = tuple(int(d) for d in target_shape)
        if sum(1 for d in target_shape if d == -1) > 1 or any(d < -1 for d in target_shape):
            raise ValueError(f"target_shape may hold one -1 and no other negative value, got {target_shape}")
        self.target_shape = target_shape

    def call(self, inputs):
        x = B.convert(inputs)
        return reshape(x, [B.dim(x, 0)] + list(self.target_shape))

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Permute(Layer):
    """Permutes the non-batch axes: dims are 1-based, e.g. (2, 1) swaps the first two."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Permute: dims must be a permutation of 1..{len(self.dims)}, got {dims}")

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, len(self.dims) + 1)
        return px.transpose(x, [0] + list(self.dims))

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features)."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = n

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, 2)
        return px.tile(px.expand_dims(x, 1), [1, self.n, 1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


# ---- zero padding and cropping -----------------------------------------------------------

class _ZeroPadding(Layer):
    rank = 2

    def __init__(self, padding, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        if self.rank == 1:
            self.padding = standardize_tuple(padding, 2, "padding", allow_zero=True)
        else:
            self.padding = _pairs(padding, self.rank, "padding")

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, self.rank + 2)
        pads = [self.padding] if self.rank == 1 else list(self.padding)
        rows = [[0, 0]] + [list(p) for p in pads] + [[0, 0]]
        if self.data_format == "channels_first":
            rows = [[0, 0], [0, 0]] + [list(p) for p in pads]
        return px.pad(x, rows)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class ZeroPadding1D(_ZeroPadding):
    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding2D(_ZeroPadding):
    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


def _crop(x, crops, first_spatial):
    """x with crops [(before, after), ...] removed from the axes from first_spatial on."""
    key = [slice(None)] * len(x.shape)
    for i, (a, b) in enumerate(crops):
        size = x.shape[first_spatial + i]
        if size is not None and a + b >= size:
            raise ValueError(f"cropping {(a, b)} removes all of axis {first_spatial + i} (size {size})")
        key[first_spatial + i] = slice(a, -b if b else None)
    return x[tuple(key)]


class Cropping1D(Layer):
    """Removes cropping[0] steps at the start and cropping[1] at the end of axis 1."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = standardize_tuple(cropping, 2, "cropping", allow_zero=True)

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, 3)
        return _crop(x, [self.cropping], 1)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class _Cropping(Layer):
    rank = 2

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.cropping = _pairs(cropping, self.rank, "cropping")

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, self.rank + 2)
        return _crop(x, self.cropping, 2 if self.data_format == "channels_first" else 1)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": self.data_format}


class Cropping2D(_Cropping):
    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(_Cropping):
    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


# ---- upsampling --------------------------------------------------------------------------

class UpSampling1D(Layer):
    """Repeats every time step `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: size={size}")
        self.size = size

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, 3)
        return repeat(x, self.size, 1)

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Scales rows and columns up by `size`: "nearest" repeats them, other interpolations resize the images
    (bilinear as TensorFlow's half-pixel-centers resize)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.size = standardize_tuple(size, 2, "size")
        self.interpolation = interpolation.lower()

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, 4)
        x = to_channels_last(x, self.data_format)
        if self.interpolation == "nearest":
            x = repeat(repeat(x, self.size[0], 1), self.size[1], 2)
        else:
            from .preprocessing import resize_images
            _, h, w, _ = dims(x)
            x = resize_images(x, mul(h, self.size[0]), mul(w, self.size[1]), self.interpolation)
        return to_channels_first(x, self.data_format)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling3D(Layer):
    """Repeats every depth, row and column `size` times."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.size = standardize_tuple(size, 3, "size")

    def call(self, inputs):
        x = B.convert(inputs)
        _check_rank(self, x, 5)
        first = 2 if self.data_format == "channels_first" else 1
        for i, s in enumerate(self.size):
            x = repeat(x, s, first + i)
        return x

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


__all__ = ["Flatten", "Reshape", "Permute", "RepeatVector", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D",
           "Cropping1D", "Cropping2D", "Cropping3D", "UpSampling1D", "UpSampling2D", "UpSampling3D"]
