"""Hand-written public functions over host ops whose TensorFlow signatures
differ from the ops (see _api.py): linspace, searchsorted (LowerBound or
UpperBound on rows), in_top_k (targets first), reduce_euclidean_norm and
cumulative_logsumexp with TensorFlow's argument names, strings.format
(StringFormat with "{}" placeholders) and strings.regex_full_match (a
Python pattern becomes StaticRegexFullMatch, a tensor RegexFullMatch)."""

from __future__ import annotations

import numpy as _np

from plexus import _plexus
from plexus._api import _export, _ex, _tensor, _all_axes, _ints, _TENSOR_TYPES

_FLOATS = ("float16", "bfloat16", "float32", "float64")


@_export("linspace", "lin_space")
def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from start to stop, both included (op
    LinSpace); start and stop are scalars (integers become float64, as
    TensorFlow's division makes them)."""
    start = _tensor(start, _plexus.float32 if type(start) is float else None)
    if start.dtype.name not in _FLOATS:
        start = _ex("Cast", [start], {"DstT": _plexus.float64})[0]
    stop = _tensor(stop, start.dtype)
    if stop.dtype != start.dtype:
        stop = _ex("Cast", [stop], {"DstT": start.dtype})[0]
    for v in (start, stop):
        if v.shape is not None and len(v.shape) != 0:
            raise ValueError("plexus.linspace takes scalar start and stop, got shape "
                             f"{tuple(v.shape)}")
    return _ex("LinSpace", [start, stop, _ints(num) if isinstance(num, int) else _tensor(num)],
               None)[0]


def _last_dim(x):
    """x's innermost dimension: an int when static, else a tensor."""
    shape = x.shape
    if shape is not None and len(shape) and shape[-1] is not None:
        return shape[-1]
    full = _ex("Shape", [x], None)[0]
    return _ex("StridedSlice", [full, _ints([-1]), _ints([0]), _ints([1])], {"end_mask": 1})[0]


def _rows(x):
    """x as a matrix of its innermost dimension's rows."""
    last = _last_dim(x)
    if isinstance(last, int):
        shape = _ints([-1, last])
    else:
        shape = _ex("ConcatV2", [_ints([-1]), last, _ints(0)], {"N": 2})[0]
    return _ex("Reshape", [x, shape], None)[0]


@_export("searchsorted")
def searchsorted(sorted_sequence, values, side="left", out_type=_plexus.int32, name=None):
    """For each value, where it goes in the innermost dimension of
    sorted_sequence to keep it sorted (ops LowerBound for side="left",
    UpperBound for side="right"); the leading dimensions of both match."""
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = {side}.")
    sorted_sequence = _tensor(sorted_sequence)
    values = _tensor(values, sorted_sequence.dtype)
    op = "UpperBound" if side == "right" else "LowerBound"
    out = _ex(op, [_rows(sorted_sequence), _rows(values)],
              {"out_type": _plexus.as_dtype(out_type)})[0]
    return _ex("Reshape", [out, _ex("Shape", [values], None)[0]], None)[0]


@_export("math.in_top_k", "nn.in_top_k")
def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among its k largest predictions
    (op InTopKV2); ties count for the target, a non-finite prediction for it
    gives False."""
    targets = _tensor(targets)
    k = _tensor(k, targets.dtype)
    return _ex("InTopKV2", [_tensor(predictions), targets, k], None)[0]


@_export("math.reduce_euclidean_norm")
def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(|x|^2)) over `axis` (None: all) (op EuclideanNorm)."""
    x = _tensor(input_tensor)
    axes = _all_axes(x) if axis is None else _ints(axis)
    return _ex("EuclideanNorm", [x, axes], {"keep_dims": bool(keepdims)})[0]


@_export("math.cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """The running log(sum(exp(x))) along `axis` (op CumulativeLogsumexp)."""
    return _ex("CumulativeLogsumexp", [_tensor(x), _ints(axis)],
               {"exclusive": bool(exclusive), "reverse": bool(reverse)})[0]


@_export("strings.format")
def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """The template with each placeholder replaced by the next input,
    written as TensorFlow writes tensors (op StringFormat): numpy-like
    brackets, at most `summarize` elements at each end of a dimension
    (negative: all), strings quoted."""
    if isinstance(inputs, (list, tuple)):
        inputs = [_tensor(x) for x in inputs]
    else:
        inputs = [_tensor(inputs)]
    return _ex("StringFormat", inputs, {"template": template, "placeholder": placeholder,
                                          "summarize": int(summarize)})[0]


@_export("strings.regex_full_match")
def regex_full_match(input, pattern, name=None):
    """Whether each string matches the RE2 pattern entirely: a Python string
    pattern runs StaticRegexFullMatch, a tensor RegexFullMatch."""
    input = _tensor(input)
    if isinstance(pattern, (str, bytes)):
        if isinstance(pattern, bytes):
            pattern = pattern.decode()
        return _ex("StaticRegexFullMatch", [input], {"pattern": pattern})[0]
    return _ex("RegexFullMatch", [input, _tensor(pattern)], None)[0]
