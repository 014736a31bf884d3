"""Hand-written public functions whose signature differs from the op's.

TensorFlow's Python API often wraps an op with a friendlier signature
(reduce_sum(input_tensor, axis=None, keepdims=False) over Sum(input,
reduction_indices, keep_dims)); these functions follow TensorFlow's and
override the generated functions of the same public name. Each is exported
under its names with @_export("name", "math.name", ...) into EXPORTS, which
_ops.py installs.

All of them work on eager tensors and, during tracing, on GraphTensors: they
only call `_plexus.execute`, which traces when given GraphTensors.
"""

from __future__ import annotations

import builtins

import numpy as _np

from plexus import _plexus
from plexus._ops import raw as _raw

_ex = _plexus.execute
_int32 = _plexus.int32
_int64 = _plexus.int64
_float32 = _plexus.float32
_float64 = _plexus.float64
_TENSOR_TYPES = tuple(t for t in (getattr(_plexus, "Tensor", None),
                                  getattr(_plexus, "GraphTensor", None)) if t)

EXPORTS: dict = {}

# Small integer arguments (axes, shapes, slice bounds) as cached int32 host
# tensors: converting a Python list costs far more than the op itself.
_INT_CACHE: dict = {}
_INT_CACHE_MAX = 4096


def _ints(value):
    """An int or a list/tuple of ints as a (cached) int32 tensor; anything else
    (a tensor, an int64-range value) unchanged."""
    if value.__class__ is int:
        key = value
    elif value.__class__ is list or value.__class__ is tuple:
        key = tuple(value)
        for v in key:
            if v.__class__ is not int:
                return value
    else:
        return value
    t = _INT_CACHE.get(key)
    if t is None:
        if key.__class__ is int:
            if not -2**31 <= key < 2**31:
                return value
        elif not all(-2**31 <= v < 2**31 for v in key):
            return _plexus.constant(list(key), _int64)
        if len(_INT_CACHE) >= _INT_CACHE_MAX:
            _INT_CACHE.clear()
        if key.__class__ is int:
            t = _plexus.constant(key, _int32)
        else:
            t = _plexus.constant(_np.array(key, dtype=_np.int32))
        _INT_CACHE[key] = t
    return t


def _export(*names):
    def deco(fn):
        for q in names:
            EXPORTS[q] = fn
        ns = names[0].rpartition(".")[0]
        fn.__module__ = "plexus" + ("." + ns if ns else "")
        return fn
    return deco


def _as_dtype(dtype):
    if dtype is None or isinstance(dtype, _plexus.DType):
        return dtype
    return _plexus.as_dtype(dtype)


def _tensor(x, dtype=None):
    """x as a tensor (unchanged when it already is one)."""
    if isinstance(x, _TENSOR_TYPES):
        return x
    if hasattr(x, "_as_tensor"):  # plexus.Variable
        return x._as_tensor()
    return _plexus.constant(x, dtype)


def _shape_of(x):
    """Static shape as a tuple (None entries unknown), or None (unknown rank)."""
    return getattr(x, "shape", None)


def _rank(x):
    s = _shape_of(x)
    return None if s is None else len(s)


def _ints_2d(value):
    """paddings-like [[a, b], ...] as a (cached) int32 tensor."""
    if value.__class__ is list or value.__class__ is tuple:
        try:
            key = tuple(tuple(p) for p in value)
        except TypeError:
            return value
        if not all(v.__class__ is int and -2**31 <= v < 2**31 for p in key for v in p):
            return value
        t = _INT_CACHE.get(key)
        if t is None:
            if len(_INT_CACHE) >= _INT_CACHE_MAX:
                _INT_CACHE.clear()
            t = _INT_CACHE[key] = _plexus.constant(_np.array(key, dtype=_np.int32))
        return t
    return value


def _all_axes(x):
    r = _rank(x)
    if r is not None:
        return _ints(tuple(builtins.range(r)))
    return _ex("Range", [0, _ex("Rank", [x], None)[0], 1], None)[0]


_axis_arg = _ints


def _reduction(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        if not isinstance(input_tensor, _TENSOR_TYPES):
            input_tensor = _plexus.constant(input_tensor)
        axis = _all_axes(input_tensor) if axis is None else _axis_arg(axis)
        return _ex(op, [input_tensor, axis], {"keep_dims": True} if keepdims else None)[0]
    return reduce


def _make_reduction(op, fname, what):
    fn = _reduction(op)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"The {what} of elements across dimensions (op {op}).\n\n"
                  "Args:\n  input_tensor: the tensor to reduce.\n"
                  "  axis: None (all dimensions), an int, or a list of ints; negative\n"
                  "    values count from the end.\n"
                  "  keepdims: keep the reduced dimensions with length 1.\n"
                  "  name: ignored.\n")
    return fn


reduce_sum = _export("reduce_sum", "math.reduce_sum")(_make_reduction("Sum", "reduce_sum", "sum"))
reduce_mean = _export("reduce_mean", "math.reduce_mean")(
    _make_reduction("Mean", "reduce_mean", "mean"))
reduce_max = _export("reduce_max", "math.reduce_max")(
    _make_reduction("Max", "reduce_max", "maximum"))
reduce_min = _export("reduce_min", "math.reduce_min")(
    _make_reduction("Min", "reduce_min", "minimum"))
reduce_prod = _export("reduce_prod", "math.reduce_prod")(
    _make_reduction("Prod", "reduce_prod", "product"))
reduce_all = _export("reduce_all", "math.reduce_all")(
    _make_reduction("All", "reduce_all", "logical and"))
reduce_any = _export("reduce_any", "math.reduce_any")(
    _make_reduction("Any", "reduce_any", "logical or"))


@_export("argmax", "math.argmax")
def argmax(input, axis=None, output_type=_int64, name=None):
    """Index of the largest value along `axis` (op ArgMax).

    As in TensorFlow, axis=None means axis 0 (not the flattened tensor).
    """
    if axis is None:
        axis = 0
    if output_type is _int64:
        return _ex("ArgMax", [input, _ints(axis)], None)[0]
    return _ex("ArgMax", [input, _ints(axis)], {"output_type": _as_dtype(output_type)})[0]


@_export("argmin", "math.argmin")
def argmin(input, axis=None, output_type=_int64, name=None):
    """Index of the smallest value along `axis` (op ArgMin); axis=None means 0."""
    if axis is None:
        axis = 0
    if output_type is _int64:
        return _ex("ArgMin", [input, _ints(axis)], None)[0]
    return _ex("ArgMin", [input, _ints(axis)], {"output_type": _as_dtype(output_type)})[0]


@_export("concat")
def concat(values, axis, name="concat"):
    """Joins a list of tensors along `axis` (op ConcatV2)."""
    values = list(values)
    if len(values) == 1:
        return _ex("Identity", [values[0]], None)[0] if isinstance(
            values[0], _TENSOR_TYPES) else _tensor(values[0])
    return _ex("ConcatV2", values + [_ints(axis)], {"N": len(values)})[0]


@_export("stack")
def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor (op Pack)."""
    values = list(values)
    if axis == 0:
        return _ex("Pack", values, {"N": len(values)})[0]
    return _ex("Pack", values, {"N": len(values), "axis": axis})[0]


@_export("unstack")
def unstack(value, num=None, axis=0, name="unstack"):
    """Splits a tensor into a list of tensors along `axis` (op Unpack)."""
    if num is None:
        shape = _shape_of(value)
        if shape is None:
            raise ValueError("unstack: cannot infer num from a tensor of unknown rank")
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"unstack: axis {axis} out of range for rank {len(shape)}")
        num = shape[axis]
        if num is None:
            raise ValueError(f"unstack: cannot infer num from shape {shape}")
    return _ex("Unpack", [value], {"num": num, "axis": axis})


@_export("split")
def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into `num_or_size_splits` equal parts (op Split), or into
    parts of the given sizes (op SplitV; one size may be -1)."""
    if isinstance(num_or_size_splits, int):
        return _ex("Split", [_ints(axis), value], {"num_split": num_or_size_splits})
    if num is None:
        s = _shape_of(num_or_size_splits)
        if isinstance(num_or_size_splits, (list, tuple)):
            num = len(num_or_size_splits)
        elif s is not None and len(s) == 1 and s[0] is not None:
            num = s[0]
        else:
            raise ValueError("split: cannot infer the number of parts; pass num")
    sizes = num_or_size_splits
    if isinstance(sizes, (list, tuple)):
        sizes = _plexus.constant(list(sizes), _int64)
    return _ex("SplitV", [value, sizes, _ints(axis)], {"num_split": num})


@_export("transpose")
def transpose(a, perm=None, conjugate=False, name="transpose"):
    """Permutes the dimensions (op Transpose); perm=None reverses them."""
    if perm is None:
        r = _rank(a)
        if r is None:
            rank = _ex("Rank", [a], None)[0]
            perm = _ex("Range", [_ex("Sub", [rank, 1], None)[0], -1, -1], None)[0]
        else:
            perm = tuple(builtins.range(r - 1, -1, -1))
    return _ex("Transpose", [a, _ints(perm)], None)[0]


@_export("reshape")
def reshape(tensor, shape, name=None):
    """Gives the tensor a new shape with the same elements (op Reshape); one
    dimension may be -1."""
    return _ex("Reshape", [tensor, _ints(shape)], None)[0]


@_export("cast")
def cast(x, dtype, name=None):
    """x converted to `dtype` (op Cast); x itself when it has that dtype."""
    dtype = _as_dtype(dtype)
    if not isinstance(x, _TENSOR_TYPES):
        return _plexus.constant(x, dtype)
    if x.dtype == dtype:
        return x
    return _ex("Cast", [x], {"DstT": dtype})[0]


@_export("squeeze")
def squeeze(input, axis=None, name=None):
    """Removes dimensions of size 1: all of them, or those in `axis` (op Squeeze)."""
    if axis is None:
        return _ex("Squeeze", [input], None)[0]
    if isinstance(axis, int):
        axis = [axis]
    return _ex("Squeeze", [input], {"squeeze_dims": list(axis)})[0]


@_export("expand_dims")
def expand_dims(input, axis, name=None):
    """Inserts a dimension of size 1 at `axis` (op ExpandDims)."""
    return _ex("ExpandDims", [input, _ints(axis)], None)[0]


def _scan(op, what):
    def scan(x, axis=0, exclusive=False, reverse=False, name=None):
        attrs = {}
        if exclusive:
            attrs["exclusive"] = True
        if reverse:
            attrs["reverse"] = True
        return _ex(op, [_tensor(x), _ints(axis)], attrs or None)[0]
    scan.__doc__ = (f"The cumulative {what} of `x` along `axis` (op {op}).\n\n"
                    "exclusive: each output leaves out its own element (the first is the\n"
                    "identity); reverse: accumulate from the end of the axis.\n")
    return scan


cumsum = _export("cumsum", "math.cumsum")(_scan("Cumsum", "sum"))
cumsum.__name__ = cumsum.__qualname__ = "cumsum"
cumprod = _export("math.cumprod")(_scan("Cumprod", "product"))
cumprod.__name__ = cumprod.__qualname__ = "cumprod"


@_export("reverse")
def reverse(tensor, axis, name=None):
    """Reverses `tensor` along the dimensions in `axis`, a list of ints (op ReverseV2)."""
    if isinstance(axis, int):
        axis = [axis]
    return _ex("ReverseV2", [_tensor(tensor), _ints(axis)], None)[0]


_SCALARS = {}


def _scalar(value, dtype):
    key = (value, dtype)
    t = _SCALARS.get(key)
    if t is None:
        t = _SCALARS[key] = _plexus.constant(value, dtype)
    return t


def _dims(shape):
    if isinstance(shape, int):
        return _ints((shape,))
    return _ints(shape)


@_export("zeros")
def zeros(shape, dtype=_float32, name=None):
    """A tensor of `shape` filled with zeros (op Fill)."""
    dtype = _as_dtype(dtype)
    return _ex("Fill", [_dims(shape), _scalar(False if dtype.is_bool else 0, dtype)], None)[0]


@_export("ones")
def ones(shape, dtype=_float32, name=None):
    """A tensor of `shape` filled with ones (op Fill)."""
    dtype = _as_dtype(dtype)
    return _ex("Fill", [_dims(shape), _scalar(True if dtype.is_bool else 1, dtype)], None)[0]


@_export("fill")
def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value` (op Fill)."""
    return _ex("Fill", [_dims(dims), value], None)[0]


@_export("zeros_like")
def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and, unless `dtype` is given, the dtype) of input."""
    input = _tensor(input)
    dtype = _as_dtype(dtype)
    if dtype is None or dtype == input.dtype:
        return _ex("ZerosLike", [input], None)[0]
    return zeros(_ex("Shape", [input], None)[0], dtype)


@_export("ones_like")
def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and, unless `dtype` is given, the dtype) of input."""
    input = _tensor(input)
    dtype = _as_dtype(dtype)
    if dtype is None or dtype == input.dtype:
        return _ex("OnesLike", [input], None)[0]
    return ones(_ex("Shape", [input], None)[0], dtype)


@_export("range")
def range(start, limit=None, delta=1, dtype=None, name="range"):
    """Numbers from `start` to `limit` (exclusive) by `delta` (op Range).

    range(n) counts from 0. The dtype is `dtype`, else that of a tensor
    argument, else float32 when an argument is a Python float, else int32.
    """
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    dtype = _as_dtype(dtype)
    if dtype is None:
        for a in args:
            if isinstance(a, _TENSOR_TYPES):
                dtype = a.dtype
                break
        else:
            dtype = _float32 if any(isinstance(a, float) for a in args) else _int32
    args = [cast(a, dtype) if isinstance(a, _TENSOR_TYPES) else a for a in args]
    return _ex("Range", args, {"Tidx": dtype})[0]


@_export("matmul", "linalg.matmul")
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """Matrix product of a and b (op MatMul for rank 2, BatchMatMulV2 for
    batches of matrices with broadcasting batch dimensions, BatchMatMulV3 when
    `output_type` or the operands' dtypes differ)."""
    if not isinstance(a, _TENSOR_TYPES):
        a = _tensor(a, b.dtype if isinstance(b, _TENSOR_TYPES) else None)
    if not isinstance(b, _TENSOR_TYPES):
        b = _tensor(b, a.dtype)
    ta = transpose_a or adjoint_a
    tb = transpose_b or adjoint_b
    if output_type is None and not (ta or tb) and a.ndim == 2 and b.ndim == 2:
        return _ex("MatMul", [a, b], None)[0]  # the common case, first
    output_type = _as_dtype(output_type)
    if output_type is None and a.dtype != b.dtype:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(
            f"matmul: a is {a.dtype.name} but b is {b.dtype.name}; cast one, or give output_type= "
            f"for a mixed-type product")
    if output_type is not None:
        attrs = {"Tout": output_type or a.dtype}
        if ta:
            attrs["adj_x"] = True
        if tb:
            attrs["adj_y"] = True
        return _ex("BatchMatMulV3", [a, b], attrs)[0]
    sa, sb = _shape_of(a), _shape_of(b)
    if sa is not None and sb is not None and len(sa) == 2 and len(sb) == 2:
        if ta or tb:
            return _ex("MatMul", [a, b], {"transpose_a": ta, "transpose_b": tb})[0]
        return _ex("MatMul", [a, b], None)[0]
    if ta or tb:
        return _ex("BatchMatMulV2", [a, b], {"adj_x": ta, "adj_y": tb})[0]
    return _ex("BatchMatMulV2", [a, b], None)[0]


@_export("einsum", "linalg.einsum")
def einsum(equation, *inputs, name=None):
    """Einstein summation (op Einsum): einsum("ij,jk->ik", a, b)."""
    inputs = list(inputs)
    return _ex("Einsum", inputs, {"equation": equation, "N": len(inputs)})[0]


def _last_axis_op(op, logits, axis):
    if axis is None or axis == -1:
        return _ex(op, [logits], None)[0]
    r = _rank(logits)
    if r is None:
        raise ValueError(f"{op}: axis {axis} needs a tensor of known rank")
    if axis < 0:
        axis += r
    if axis == r - 1:
        return _ex(op, [logits], None)[0]
    if not 0 <= axis < r:
        raise ValueError(f"{op}: axis {axis} out of range for rank {r}")
    perm = list(builtins.range(r))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    perm = _ints(perm)
    t = _ex("Transpose", [logits, perm], None)[0]
    return _ex("Transpose", [_ex(op, [t], None)[0], perm], None)[0]


@_export("nn.softmax", "math.softmax")
def softmax(logits, axis=None, name=None):
    """exp(logits) / sum(exp(logits)) along `axis` (default the last) (op Softmax)."""
    return _last_axis_op("Softmax", logits, axis)


@_export("nn.log_softmax", "math.log_softmax")
def log_softmax(logits, axis=None, name=None):
    """logits - log(sum(exp(logits))) along `axis` (default the last) (op LogSoftmax)."""
    return _last_axis_op("LogSoftmax", logits, axis)


def _spatial(value, n, data_format, what):
    """TensorFlow's expansion of an int or list of 1, n or n+2 values to the
    full n+2 list (1 on the batch and channel dimensions)."""
    if value is None:
        value = 1
    if isinstance(value, int):
        value = [value] * n
    value = list(value)
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise ValueError(f"{what} must be an int or a list of 1, {n} or {n + 2} ints, "
                         f"got {value}")
    if data_format.startswith("NC"):
        return [1, 1] + value
    return [1] + value + [1]


def _padding(padding):
    """(padding, explicit_paddings) for a string or TensorFlow's explicit form."""
    if isinstance(padding, str):
        return padding.upper(), None
    flat = []
    for pair in padding:
        flat.extend(int(p) for p in pair)
    return "EXPLICIT", flat


@_export("nn.conv2d")
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution (op Conv2D). strides and dilations: an int or a list of 1,
    2 or 4 ints; padding: "SAME", "VALID" or explicit [[0,0],[t,b],[l,r],[0,0]]."""
    attrs = {"strides": _spatial(strides, 2, data_format, "strides")}
    attrs["padding"], explicit = _padding(padding)
    if explicit is not None:
        attrs["explicit_paddings"] = explicit
    if data_format != "NHWC":
        attrs["data_format"] = data_format
    if dilations is not None:
        attrs["dilations"] = _spatial(dilations, 2, data_format, "dilations")
    return _ex("Conv2D", [input, filters], attrs)[0]


@_export("nn.depthwise_conv2d")
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """Depthwise 2-D convolution (op DepthwiseConv2dNative); filter
    [height, width, in_channels, channel_multiplier]."""
    data_format = data_format or "NHWC"
    attrs = {"strides": _spatial(strides, 2, data_format, "strides")}
    attrs["padding"], explicit = _padding(padding)
    if explicit is not None:
        attrs["explicit_paddings"] = explicit
    if data_format != "NHWC":
        attrs["data_format"] = data_format
    if dilations is not None:
        attrs["dilations"] = _spatial(dilations, 2, data_format, "dilations")
    return _ex("DepthwiseConv2dNative", [input, filter], attrs)[0]


def _pool(op, input, ksize, strides, padding, data_format):
    data_format = data_format or "NHWC"
    attrs = {"ksize": _spatial(ksize, 2, data_format, "ksize"),
             "strides": _spatial(strides, 2, data_format, "strides")}
    attrs["padding"], explicit = _padding(padding)
    if explicit is not None:
        if op != "MaxPool":
            raise ValueError("avg_pool2d: explicit padding is not supported")
        attrs["explicit_paddings"] = explicit
    if data_format != "NHWC":
        attrs["data_format"] = data_format
    return _ex(op, [input], attrs)[0]


@_export("nn.max_pool2d", "nn.max_pool")
def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D max pooling (op MaxPool); ksize and strides: an int or 1, 2 or 4 ints."""
    return _pool("MaxPool", input, ksize, strides, padding, data_format)


@_export("nn.avg_pool2d", "nn.avg_pool")
def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D average pooling (op AvgPool); ksize and strides: an int or 1, 2 or 4 ints."""
    return _pool("AvgPool", input, ksize, strides, padding, data_format)


@_export("nn.gelu")
def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit (op Gelu); exact unless `approximate` (tanh form),
    as in tf.nn.gelu."""
    return _ex("Gelu", [features], {"approximate": bool(approximate)})[0]


@_export("nn.leaky_relu")
def leaky_relu(features, alpha=0.2, name=None):
    """max(features, alpha * features) (op LeakyRelu)."""
    if alpha == 0.2:
        return _ex("LeakyRelu", [features], None)[0]
    return _ex("LeakyRelu", [features], {"alpha": float(alpha)})[0]


@_export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset; offset
    and scale may be None."""
    inv = _ex("Rsqrt", [_ex("AddV2", [variance, variance_epsilon], None)[0]], None)[0]
    if scale is not None:
        inv = _ex("Mul", [inv, scale], None)[0]
    y = _ex("Mul", [_ex("Sub", [x, mean], None)[0], inv], None)[0]
    if offset is not None:
        y = _ex("AddV2", [y, offset], None)[0]
    return y


@_export("nn.fused_batch_norm")
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, exponential_avg_factor=1.0,
                     name=None):
    """Batch normalization in one op (FusedBatchNormV3), like
    tf.compat.v1.nn.fused_batch_norm: returns (y, batch_mean, batch_variance)."""
    x = _tensor(x)
    scale = _tensor(scale)
    if mean is None:
        mean = _ex("ZerosLike", [scale], None)[0]
    if variance is None:
        variance = _ex("OnesLike", [scale], None)[0]
    attrs = {"epsilon": float(epsilon), "data_format": data_format,
             "is_training": bool(is_training),
             "exponential_avg_factor": float(exponential_avg_factor)}
    out = _ex("FusedBatchNormV3", [x, scale, offset, mean, variance], attrs)
    return out[0], out[1], out[2]


@_export("where")
def where(condition, x=None, y=None, name=None):
    """Like tf.where: with x and y, elements of x where condition is true, else
    of y, with broadcasting (op SelectV2); with neither, the int64 coordinates
    [num_true, rank] of the true (nonzero) elements of condition (op Where)."""
    if x is None and y is None:
        return _ex("Where", [condition], None)[0]
    if x is None or y is None:
        raise ValueError("where: pass both x and y, or neither")
    return _ex("SelectV2", [condition, x, y], None)[0]


@_export("pad")
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads a tensor (op Pad, PadV2 for a nonzero constant, MirrorPad for
    mode "REFLECT" or "SYMMETRIC"); paddings [[before, after], ...]."""
    mode = mode.upper()
    if mode == "CONSTANT":
        if isinstance(constant_values, (int, float)) and constant_values == 0:
            return _ex("Pad", [tensor, _ints_2d(paddings)], None)[0]
        return _ex("PadV2", [tensor, _ints_2d(paddings), constant_values], None)[0]
    if mode in ("REFLECT", "SYMMETRIC"):
        return _ex("MirrorPad", [tensor, _ints_2d(paddings)], {"mode": mode})[0]
    raise ValueError(f"pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")


@_export("gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Slices of params at indices along axis (default 0) (op GatherV2)."""
    if axis is None:
        axis = batch_dims
    if batch_dims:
        return _ex("GatherV2", [params, indices, _ints(axis)], {"batch_dims": batch_dims})[0]
    return _ex("GatherV2", [params, indices, _ints(axis)], None)[0]


@_export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot tensor (op OneHot): on_value (default 1) where the index matches,
    else off_value (default 0); dtype default float32, or that of on/off_value."""
    dtype = _as_dtype(dtype)
    if dtype is None:
        for v in (on_value, off_value):
            if isinstance(v, _TENSOR_TYPES):
                dtype = v.dtype
                break
        else:
            dtype = _float32
    on = _tensor(1 if on_value is None else on_value, dtype)
    off = _tensor(0 if off_value is None else off_value, dtype)
    if axis is None or axis == -1:
        return _ex("OneHot", [indices, depth, on, off], None)[0]
    return _ex("OneHot", [indices, depth, on, off], {"axis": axis})[0]


@_export("clip_by_value")
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max) elementwise."""
    t = _tensor(t)
    return _ex("Minimum", [_ex("Maximum", [t, clip_value_min], None)[0], clip_value_max],
               None)[0]


@_export("add_n", "math.add_n")
def add_n(inputs, name=None):
    """Sum of a list of tensors of the same shape and dtype (AddV2 chain)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n: inputs must be a non-empty list")
    acc = _tensor(inputs[0])
    if len(inputs) == 1:
        return _ex("Identity", [acc], None)[0]
    for x in inputs[1:]:
        acc = _ex("AddV2", [acc, x], None)[0]
    return acc


_TRUEDIV_TO = {"int8": _float32, "uint8": _float32, "int16": _float32, "uint16": _float32,
               "int32": _float64, "uint32": _float64, "int64": _float64, "uint64": _float64}


@_export("divide", "math.divide", "truediv", "math.truediv", "true_divide")
def divide(x, y, name=None):
    """x / y as TensorFlow's truediv: integers are converted to floating point
    first (8- and 16-bit to float32, 32- and 64-bit to float64) (op RealDiv)."""
    x = _tensor(x, y.dtype if isinstance(y, _TENSOR_TYPES) else None)
    to = _TRUEDIV_TO.get(x.dtype.name)
    if to is not None:
        x = _ex("Cast", [x], {"DstT": to})[0]
        y = cast(y, to) if isinstance(y, _TENSOR_TYPES) else _plexus.constant(y, to)
    return _ex("RealDiv", [x, y], None)[0]


@_export("image.crop_and_resize")
def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear",
                    extrapolation_value=0.0, name=None):
    """Crops boxes ([y1, x1, y2, x2], normalized) out of a batch of images and
    resizes each to crop_size = [height, width] (op CropAndResize), as
    tf.image.crop_and_resize; float32 crops."""
    if not isinstance(crop_size, _TENSOR_TYPES):
        crop_size = _ints([int(v) for v in _np.asarray(crop_size).reshape(-1)])
    attrs = {"method": method, "extrapolation_value": float(extrapolation_value)}
    return _ex("CropAndResize", [image, _tensor(boxes, _float32), _tensor(box_indices, _int32),
                                 crop_size], attrs)[0]


def _nms_scalars(boxes, max_output_size, *floats):
    boxes = _tensor(boxes, _float32)
    return [boxes, _tensor(max_output_size, _int32)] + [
        v if isinstance(v, _TENSOR_TYPES) else _plexus.constant(float(v), boxes.dtype)
        for v in floats]


@_export("image.non_max_suppression")
def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices of the boxes greedy non-max suppression keeps, best score first
    (op NonMaxSuppressionV3), as tf.image.non_max_suppression."""
    b, m, iou, score = _nms_scalars(boxes, max_output_size, iou_threshold, score_threshold)
    return _ex("NonMaxSuppressionV3", [b, _tensor(scores, b.dtype), m, iou, score], None)[0]


@_export("image.non_max_suppression_with_scores")
def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """(selected_indices, selected_scores) of (soft-)NMS (op NonMaxSuppressionV5),
    as tf.image.non_max_suppression_with_scores: soft_nms_sigma > 0 decays the
    scores of overlapping boxes instead of dropping them."""
    b, m, iou, score, sigma = _nms_scalars(boxes, max_output_size, iou_threshold,
                                           score_threshold, soft_nms_sigma)
    out = _ex("NonMaxSuppressionV5", [b, _tensor(scores, b.dtype), m, iou, score, sigma], None)
    return out[0], out[1]


# The hand-written functions of tf.strings, tf.signal and complex numbers
# live in their own file; importing it registers them in EXPORTS.
from plexus import _api_signal  # noqa: E402,F401

# plexus.random.stateless_* (tf.random.stateless_*), in a module of their own.
from plexus import _api_random  # noqa: E402,F401

# image.resize, convert_image_dtype and the colour adjustments (tf.image).
from plexus import _image_api  # noqa: E402,F401  (registers into EXPORTS)

# Hand-written functions of other families, in their own modules (they
# register into EXPORTS with _export like the ones above).
from plexus import _api_linalg, _api_nn3d  # noqa: E402,F401

# tf.linalg functions over the host linear-algebra ops, and the other
# hand-written functions over host ops, in modules of their own.
from plexus import _api_linalg_host  # noqa: E402,F401
from plexus import _api_host_ops  # noqa: E402,F401
