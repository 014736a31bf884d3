"""Preprocessing layers: Rescaling, Normalization (with adapt), Resizing and CenterCrop.

Arguments, defaults, weights and configs are Keras 3's. Image resizing
follows TensorFlow's ``tf.image.resize`` (what Keras's TensorFlow backend
calls): bilinear, nearest and bicubic with half-pixel centers, area, and
lanczos3/lanczos5/gaussian/mitchellcubic (and antialiased bilinear and
bicubic) through ScaleAndTranslate.
"""

from __future__ import annotations

import numpy as np

import plexus as px

from .. import _backend as B
from .base import Layer
from .conv import dims, i32, shape_arg, standardize_data_format, to_channels_first, to_channels_last

_EPSILON = 1e-7  # keras.backend.epsilon()
_SCALE_AND_TRANSLATE = {"lanczos3": "lanczos3", "lanczos5": "lanczos5", "gaussian": "gaussian",
                        "mitchellcubic": "mitchellcubic"}
INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _size_tensor(values):
    size = shape_arg(values)
    return B.scalar(size, "int32") if isinstance(size, list) else size


def resize_images(x, height, width, interpolation="bilinear", antialias=False):
    """A channels_last batch of images (N, H, W, C) resized to (height, width) as tf.image.resize does.

    height and width are ints or int32 scalar tensors. The result is float32
    (nearest keeps the input's dtype).
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    size = _size_tensor([height, width])
    if interpolation == "nearest":
        return B.ex("ResizeNearestNeighbor", [x, size], {"align_corners": False, "half_pixel_centers": True})[0]
    if not B.is_float(x.dtype):
        x = B.cast(x, "float32")
    kernel = _SCALE_AND_TRANSLATE.get(interpolation)
    if antialias and interpolation in ("bilinear", "bicubic"):
        kernel = "triangle" if interpolation == "bilinear" else "keyscubic"
    if kernel is not None:
        in_size = B.cast(B.dynamic_shape(x)[1:3], "float32")
        scale = B.cast(size, "float32") / in_size
        translation = B.scalar([0.0, 0.0], "float32")
        return B.ex("ScaleAndTranslate", [x, size, scale, translation],
                    {"kernel_type": kernel, "antialias": bool(antialias)})[0]
    if interpolation == "area":
        return B.ex("ResizeArea", [x, size], {"align_corners": False})[0]
    op = "ResizeBilinear" if interpolation == "bilinear" else "ResizeBicubic"
    return B.ex(op, [x, size], {"align_corners": False, "half_pixel_centers": True})[0]


def _aspect_crop_size(h, w, target_h, target_w):
    """Keras's crop (or pad) sizes toward the target aspect ratio: int(w * th / tw), int(h * tw / th)."""
    if isinstance(h, int) and isinstance(w, int):
        return (int(np.float32(w * target_h) / np.float32(target_w)),
                int(np.float32(h * target_w) / np.float32(target_h)))
    ch = B.cast(B.cast(i32(w) * B.scalar(target_h, "int32"), "float32") / B.scalar(float(target_w), "float32"),
                "int32")
    cw = B.cast(B.cast(i32(h) * B.scalar(target_w, "int32"), "float32") / B.scalar(float(target_h), "float32"),
                "int32")
    return ch, cw


def _clamp(v, lo, hi):
    if all(isinstance(a, int) for a in (v, lo, hi)):
        return max(min(hi, v), lo)
    return px.maximum(px.minimum(i32(hi), i32(v)), i32(lo))


def _half(v):
    if isinstance(v, int):
        return int(float(v) / 2)
    return B.cast(B.cast(v, "float32") / B.scalar(2.0, "float32"), "int32")


def _sub(a, b):
    return a - b if isinstance(a, int) and isinstance(b, int) else i32(a) - i32(b)


def crop_to_aspect_ratio(x, target_h, target_w):
    """The centered crop of channels_last images x with the aspect ratio target_h : target_w."""
    _, h, w, _ = dims(x)
    ch, cw = _aspect_crop_size(h, w, target_h, target_w)
    ch, cw = _clamp(ch, 1, h), _clamp(cw, 1, w)
    hs, ws = _half(_sub(h, ch)), _half(_sub(w, cw))
    return B.ex("Slice", [x, _size_tensor([0, hs, ws, 0]), _size_tensor([-1, ch, cw, -1])], {})[0]


def pad_to_aspect_ratio(x, target_h, target_w, fill_value):
    """channels_last images x padded with fill_value on both sides toward target_h : target_w (as Keras)."""
    _, h, w, _ = dims(x)
    ph, pw = _aspect_crop_size(h, w, target_h, target_w)
    hs = _half(_sub(_clamp(ph, h, 2**31 - 1), h))
    ws = _half(_sub(_clamp(pw, w, 2**31 - 1), w))
    paddings = px.stack([px.stack([i32(a), i32(a)]) for a in (0, hs, ws, 0)])
    return B.ex("PadV2", [x, paddings, B.scalar(fill_value, x.dtype)], {})[0]


def _saturate_cast(x, dtype):
    info = np.iinfo(np.dtype(dtype))
    x = px.clip_by_value(px.round(x), B.scalar(float(info.min), x.dtype), B.scalar(float(info.max), x.dtype))
    return B.cast(x, dtype)


class Rescaling(Layer):
    """inputs * scale + offset, in the layer's compute dtype."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset
        self.supports_masking = True

    def call(self, inputs):
        dtype = self.compute_dtype
        x = B.cast(B.convert(inputs), dtype)
        scale = B.convert(np.asarray(self.scale, dtype=dtype))
        offset = B.convert(np.asarray(self.offset, dtype=dtype))
        return x * scale + offset

    def get_config(self):
        return {**super().get_config(), "scale": _serialize_value(self.scale),
                "offset": _serialize_value(self.offset)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["scale"] = _deserialize_value(config["scale"])
        config["offset"] = _deserialize_value(config["offset"])
        return super().from_config(config)


def _as_array(x):
    return x.numpy() if B.is_tensor(x) else np.asarray(x)


def _serialize_value(v):
    if isinstance(v, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": v.tolist(), "dtype": v.dtype.name}}
    if isinstance(v, np.generic):
        return v.item()
    return v


def _deserialize_value(v):
    if isinstance(v, dict) and v.get("class_name") == "__numpy__":
        return np.array(v["config"]["value"], dtype=v["config"]["dtype"])
    return v


class Normalization(Layer):
    """(inputs - mean) / sqrt(variance) per index of `axis`, from given values or from `adapt(data)`.

    Without `mean` and `variance`, the layer has Keras's three weights:
    `mean` and `variance` (float32, the shape of the kept axes) and `count`
    (an int64 scalar Keras keeps at 0).
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        self.input_mean, self.input_variance = mean, variance
        self.invert = invert
        self.supports_masking = True
        self._constants = None
        if (mean is not None) != (variance is not None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        if mean is not None and np.shape(mean) != np.shape(variance):
            raise ValueError(f"`mean` and `variance` must have the same shape, got {np.shape(mean)} "
                             f"and {np.shape(variance)}")

    def build(self, input_shape):
        if input_shape is None:
            return
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                             f"ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(d % ndim for d in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received "
                                 f"axis={self.axis}, inputs.shape={tuple(input_shape)}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1 for d in range(ndim)]
        self._mean_and_var_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64", initializer="zeros",
                                         trainable=False)
        else:
            mean, variance = np.asarray(self.input_mean), np.asarray(self.input_variance)
            expanded = [1] * ndim
            for i in range(1, mean.ndim + 1):
                expanded[self._keep_axis[-i]] = mean.shape[-i]
            self._constants = tuple(np.broadcast_to(v.reshape(expanded), self._broadcast_shape)
                                    for v in (mean, variance))
        self.built = True

    @property
    def mean(self):
        return self._stats()[0] if self.built else None

    @property
    def variance(self):
        return self._stats()[1] if self.built else None

    def _stats(self):
        dtype = self.compute_dtype
        if self._constants is not None:
            return tuple(B.convert(np.asarray(v, dtype=dtype)) for v in self._constants)
        return tuple(B.cast(px.reshape(B.convert(v), self._broadcast_shape), dtype)
                     for v in (self.adapt_mean, self.adapt_variance))

    def adapt(self, data):
        """Sets `mean` and `variance` from a NumPy array or tensor, or an iterable of batches."""
        if B.is_tensor(data):
            data = data.numpy()
        if isinstance(data, np.ndarray):
            batches, shape = None, data.shape
        elif hasattr(data, "__iter__"):
            batches = [_as_array(b[0] if isinstance(b, tuple) else b) for b in data]
            if not batches:
                raise ValueError("adapt() received an empty iterable (no batches)")
            shape = batches[0].shape
        else:
            raise TypeError(f"adapt() supports NumPy arrays, tensors and iterables of batches, got {type(data)}")
        if not self.built:
            self._build_shapes = tuple(shape)
            self.build(tuple(shape))
        if self.input_mean is not None:
            raise ValueError("adapt() cannot be used on a Normalization layer given `mean` and `variance`")
        if batches is None:
            total_mean = np.mean(data, axis=self._reduce_axis)
            total_var = np.var(data, axis=self._reduce_axis)
        else:
            total_mean = np.zeros(self._mean_and_var_shape, np.float32)
            total_var = np.zeros(self._mean_and_var_shape, np.float32)
            total_count = 0
            for batch in batches:
                batch = np.asarray(batch, np.float32)
                batch_mean = np.mean(batch, axis=self._reduce_axis)
                batch_var = np.var(batch, axis=self._reduce_axis)
                count = int(np.prod([batch.shape[d] for d in self._reduce_axis])) if self._reduce_axis else 1
                total_count += count
                w_new = np.float32(count / total_count)
                w_old = np.float32(1.0) - w_new
                new_mean = total_mean * w_old + batch_mean * w_new
                total_var = ((total_var + (total_mean - new_mean) ** 2) * w_old
                             + (batch_var + (batch_mean - new_mean) ** 2) * w_new)
                total_mean = new_mean
        self.adapt_mean.assign(np.asarray(total_mean, np.float32).reshape(self._mean_and_var_shape))
        self.adapt_variance.assign(np.asarray(total_var, np.float32).reshape(self._mean_and_var_shape))

    def call(self, inputs):
        x = B.cast(B.convert(inputs), self.compute_dtype)
        mean, variance = self._stats()
        std = px.maximum(px.sqrt(variance), B.scalar(_EPSILON, x.dtype))
        if self.invert:
            return mean + x * std
        return (x - mean) / std

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(), "variance": np.array(self.input_variance).tolist()}


class Resizing(Layer):
    """Resizes images to (height, width), optionally cropping or padding to that aspect ratio first."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                 fill_mode="constant", fill_value=0.0, antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = height, width
        self.interpolation = interpolation
        self.data_format = standardize_data_format(data_format)
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = bool(antialias)
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
        if fill_mode != "constant":
            raise ValueError(f"Only fill_mode='constant' is supported, got {fill_mode!r}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")

    def call(self, inputs):
        x = B.convert(inputs)
        single = len(x.shape) == 3
        if len(x.shape) not in (3, 4):
            raise ValueError(f"Resizing '{self.name}': expected images of rank 3 or 4, got shape {tuple(x.shape)}")
        if single:
            x = px.expand_dims(x, 0)
        dtype = x.dtype
        x = to_channels_last(x, self.data_format)
        if self.crop_to_aspect_ratio:
            x = crop_to_aspect_ratio(x, self.height, self.width)
        elif self.pad_to_aspect_ratio:
            x = pad_to_aspect_ratio(x, self.height, self.width, self.fill_value)
        y = resize_images(x, self.height, self.width, self.interpolation, self.antialias)
        if B.dtype_name(y.dtype) != B.dtype_name(dtype):
            y = B.cast(y, dtype) if B.is_float(dtype) else _saturate_cast(y, B.dtype_name(dtype))
        y = to_channels_first(y, self.data_format)
        return px.squeeze(y, [0]) if single else y

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias}


class CenterCrop(Layer):
    """The central (height, width) window of images; smaller images are cropped to the aspect ratio and
    resized (bilinear) instead, as Keras does."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = height, width
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        x = B.cast(B.convert(inputs), self.compute_dtype)
        single = len(x.shape) == 3
        if len(x.shape) not in (3, 4):
            raise ValueError(f"CenterCrop '{self.name}': expected images of rank 3 or 4, got shape {tuple(x.shape)}")
        if single:
            x = px.expand_dims(x, 0)
        x = to_channels_last(x, self.data_format)
        _, h, w, _ = dims(x)
        h_diff, w_diff = _sub(h, self.height), _sub(w, self.width)
        if (not isinstance(h_diff, int) or h_diff >= 0) and (not isinstance(w_diff, int) or w_diff >= 0):
            hs = h_diff // 2 if isinstance(h_diff, int) else px.floordiv(h_diff, B.scalar(2, "int32"))
            ws = w_diff // 2 if isinstance(w_diff, int) else px.floordiv(w_diff, B.scalar(2, "int32"))
            y = B.ex("Slice", [x, _size_tensor([0, hs, ws, 0]), _size_tensor([-1, self.height, self.width, -1])],
                     {})[0]
        else:
            y = resize_images(crop_to_aspect_ratio(x, self.height, self.width), self.height, self.width)
            y = B.cast(y, self.compute_dtype)
        y = to_channels_first(y, self.data_format)
        return px.squeeze(y, [0]) if single else y

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "height": self.height, "width": self.width}


__all__ = ["Rescaling", "Normalization", "Resizing", "CenterCrop"]
