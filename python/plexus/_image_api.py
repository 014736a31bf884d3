"""Hand-written image and image-layer functions (tf.image and tf.nn signatures).

image.resize (every tf.image.ResizeMethod, antialias included),
image.convert_image_dtype and the colour adjustments adjust_contrast,
adjust_saturation and adjust_hue, which convert images that are neither
float16 nor float32 to float32 and back as TensorFlow's do; nn.depth_to_space,
nn.space_to_depth and nn.local_response_normalization (positional attributes,
as TensorFlow's). Exported into
_api.EXPORTS like the functions of _api.py (imported at its end).
"""

from __future__ import annotations

import numpy as _np

from plexus import _plexus
from plexus._api import (_TENSOR_TYPES, _ex, _export, _float32, _ints, _shape_of, _tensor,
                         cast, expand_dims, squeeze)

_RESIZE_OPS = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor",
               "bicubic": "ResizeBicubic", "area": "ResizeArea"}
# Methods TensorFlow resizes with ScaleAndTranslate, and the kernel of each
# (bilinear and bicubic when antialiased).
_SCALE_KERNELS = {"lanczos3": "lanczos3", "lanczos5": "lanczos5", "gaussian": "gaussian",
                  "mitchellcubic": "mitchellcubic", "bilinear": "triangle", "bicubic": "keyscubic"}
_METHODS = sorted(set(_RESIZE_OPS) | set(_SCALE_KERNELS))


def _resize_scale(images, shape, size):
    """float32(size) / float32([height, width]) of the images, as TensorFlow."""
    if (not isinstance(size, _TENSOR_TYPES) and shape is not None and shape[1] is not None
            and shape[2] is not None):
        wanted = _np.asarray(size, _np.float32).reshape(-1)
        return _plexus.constant(wanted / _np.array(shape[1:3], _np.float32))
    hw = _ex("Slice", [_ex("Shape", [images], None)[0], _ints([1]), _ints([2])], None)[0]
    return _ex("RealDiv", [cast(size, _float32), cast(hw, _float32)], None)[0]


@_export("image.resize")
def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False,
           name=None):
    """Resizes [batch, height, width, channels] (or one [height, width, channels])
    images to `size` = [new_height, new_width] as tf.image.resize: "bilinear"
    (op ResizeBilinear), "nearest" (ResizeNearestNeighbor) and "bicubic"
    (ResizeBicubic) with half-pixel centers, "area" (ResizeArea), and
    "lanczos3", "lanczos5", "gaussian", "mitchellcubic" (ScaleAndTranslate);
    antialias filters bilinear and bicubic through ScaleAndTranslate too (and
    widens the others' kernels when downsampling). Nearest keeps the dtype,
    the others give float32. preserve_aspect_ratio needs the images' static
    height and width."""
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        raise ValueError(f"image.resize: resize method {method!r} is not implemented "
                         f"(supported: {', '.join(_METHODS)})")
    images = _tensor(images)
    shape = _shape_of(images)
    if shape is not None and len(shape) not in (3, 4):
        raise ValueError(f"image.resize: images must be 3-D or 4-D, got shape {shape}")
    single = shape is not None and len(shape) == 3
    if single:
        images = expand_dims(images, 0)
        shape = (1,) + tuple(shape)
    if preserve_aspect_ratio:
        if shape is None or shape[1] is None or shape[2] is None:
            raise ValueError("image.resize: preserve_aspect_ratio needs a static height and width")
        wanted = [int(v) for v in _np.asarray(size).reshape(-1)]
        f = _np.float32
        scale = min(f(wanted[0]) / f(shape[1]), f(wanted[1]) / f(shape[2]))
        size = [int(_np.round(scale * f(shape[1]))), int(_np.round(scale * f(shape[2])))]
    scale_kernel = _SCALE_KERNELS.get(method) if (antialias or method not in _RESIZE_OPS) else None
    size_t = size if isinstance(size, _TENSOR_TYPES) else _ints(
        [int(v) for v in _np.asarray(size).reshape(-1)])
    if scale_kernel is not None:
        scale = _resize_scale(images, shape, size)
        zeros = _plexus.constant(_np.zeros(2, _np.float32))
        out = _ex("ScaleAndTranslate", [images, size_t, scale, zeros],
                  {"kernel_type": scale_kernel, "antialias": bool(antialias)})[0]
    elif method == "area":
        out = _ex("ResizeArea", [images, size_t], None)[0]
    else:
        out = _ex(_RESIZE_OPS[method], [images, size_t], {"half_pixel_centers": True})[0]
    return squeeze(out, [0]) if single else out


def _dtype_limits(dtype):
    info = _np.iinfo(_np.dtype(dtype.as_numpy_dtype))
    return int(info.min), int(info.max)


def _saturate_cast(x, dtype):
    """x clipped to dtype's range (as x's type can hold it), then cast."""
    lo, hi = _dtype_limits(dtype)
    if x.dtype.is_floating:
        np_in = _np.float32 if x.dtype.name == "bfloat16" else _np.dtype(x.dtype.as_numpy_dtype)
        lo_f, hi_f = np_in.type(lo), np_in.type(hi)
        if int(hi_f) > hi:  # hi rounded up: nudge below it, as TensorFlow does
            hi_f = _np.nextafter(hi_f, np_in.type(0))
        if int(lo_f) < lo:
            lo_f = _np.nextafter(lo_f, np_in.type(0))
        lo_t, hi_t = (cast(_plexus.constant(v), x.dtype) for v in (lo_f, hi_f))
    else:
        in_lo, in_hi = _dtype_limits(x.dtype)
        lo_t = _plexus.constant(max(lo, in_lo), x.dtype)
        hi_t = _plexus.constant(min(hi, in_hi), x.dtype)
    x = _ex("Minimum", [_ex("Maximum", [x, lo_t], None)[0], hi_t], None)[0]
    return cast(x, dtype)


def _scalar(value, dtype):
    if dtype.name == "bfloat16":
        return cast(_plexus.constant(_np.float32(value)), dtype)
    return _plexus.constant(_np.dtype(dtype.as_numpy_dtype).type(value))


@_export("image.convert_image_dtype")
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`image` converted to `dtype` as tf.image.convert_image_dtype: floats in
    [0, 1) and integers over their whole range are the same intensities
    (integers scale by their maximum; float to integer multiplies by max + 0.5
    and truncates, clipping first with `saturate`)."""
    image = _tensor(image)
    dtype = _plexus.as_dtype(dtype) if not isinstance(dtype, _plexus.DType) else dtype
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"image.convert_image_dtype: dtype must be a float or integer "
                             f"type, got {dtype.name}")
    if image.dtype == dtype:
        return image
    if image.dtype.is_integer and dtype.is_integer:
        in_max, out_max = _dtype_limits(image.dtype)[1], _dtype_limits(dtype)[1]
        if in_max > out_max:
            scale = (in_max + 1) // (out_max + 1)
            scaled = _ex("FloorDiv", [image, _plexus.constant(scale, image.dtype)], None)[0]
            return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)
        converted = _saturate_cast(image, dtype) if saturate else cast(image, dtype)
        return _ex("Mul", [converted, _plexus.constant((out_max + 1) // (in_max + 1), dtype)],
                   None)[0]
    if image.dtype.is_floating and dtype.is_floating:
        return cast(image, dtype)
    if image.dtype.is_integer:
        scale = 1.0 / _dtype_limits(image.dtype)[1]
        return _ex("Mul", [cast(image, dtype), _scalar(scale, dtype)], None)[0]
    scaled = _ex("Mul", [image, _scalar(_dtype_limits(dtype)[1] + 0.5, image.dtype)], None)[0]
    return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)


def _adjust(op, image, factor, saturate):
    image = _tensor(image)
    orig = image.dtype
    flt = image if orig.name in ("float16", "float32") else convert_image_dtype(image, _float32)
    factor = factor if isinstance(factor, _TENSOR_TYPES) else _plexus.constant(
        _np.float32(factor))
    out = _ex(op, [flt, cast(factor, _float32)], None)[0]
    return convert_image_dtype(out, orig, saturate=saturate)


@_export("image.adjust_contrast")
def adjust_contrast(images, contrast_factor, name=None):
    """(x - mean) * contrast_factor + mean for each channel of each image
    (op AdjustContrastv2), as tf.image.adjust_contrast."""
    return _adjust("AdjustContrastv2", images, contrast_factor, True)


@_export("image.adjust_saturation")
def adjust_saturation(image, saturation_factor, name=None):
    """RGB images with their HSV saturation multiplied by saturation_factor
    and clipped to [0, 1] (op AdjustSaturation), as tf.image.adjust_saturation."""
    return _adjust("AdjustSaturation", image, saturation_factor, False)


@_export("image.adjust_hue")
def adjust_hue(image, delta, name=None):
    """RGB images with delta (in [-1, 1]) added to their HSV hue, which wraps
    around (op AdjustHue), as tf.image.adjust_hue."""
    return _adjust("AdjustHue", image, delta, False)


@_export("nn.depth_to_space")
def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """Moves depth into block_size x block_size spatial blocks (op DepthToSpace),
    as tf.nn.depth_to_space; data_format "NHWC" or "NCHW"."""
    return _ex("DepthToSpace", [_tensor(input)],
               {"block_size": int(block_size), "data_format": data_format})[0]


@_export("nn.space_to_depth")
def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """Moves block_size x block_size spatial blocks into depth (op SpaceToDepth),
    as tf.nn.space_to_depth; data_format "NHWC" or "NCHW"."""
    return _ex("SpaceToDepth", [_tensor(input)],
               {"block_size": int(block_size), "data_format": data_format})[0]


@_export("nn.local_response_normalization", "nn.lrn")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                                 name=None):
    """input / (bias + alpha * sum of the squares within depth_radius along the
    depth) ** beta (op LRN), as tf.nn.local_response_normalization."""
    return _ex("LRN", [_tensor(input)], {"depth_radius": int(depth_radius), "bias": float(bias),
                                         "alpha": float(alpha), "beta": float(beta)})[0]


@_export("image.extract_patches")
def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Patches of `images` [batch, rows, cols, depth] (op ExtractImagePatches):
    sizes, strides and rates are [1, rows, cols, 1]; padding "SAME" or
    "VALID"; each output position holds its window flattened as
    [rows, cols, depth]."""
    return _ex("ExtractImagePatches", [_tensor(images)],
               {"ksizes": list(sizes), "strides": list(strides), "rates": list(rates), "padding": padding})[0]
