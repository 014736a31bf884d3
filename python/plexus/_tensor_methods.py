"""Indexing and Python conveniences of plexus.Tensor and plexus.GraphTensor.

`install((Tensor, GraphTensor))` sets the methods on the extension's classes
(the arithmetic operators are bound in C++). Indexing follows TensorFlow's
`Tensor.__getitem__`: ints, slices (any step, negative too), Ellipsis and
None (newaxis) become one StridedSlice with begin/end/strides and the
begin/end/ellipsis/new-axis/shrink masks; a 1-D list, NumPy array or
integer tensor as the whole index gathers along the first dimension.
"""

from __future__ import annotations

import builtins
import operator

from plexus import _plexus
from plexus._api import _ints

_ex = _plexus.execute
_Tensor = _plexus.Tensor
_GraphTensor = getattr(_plexus, "GraphTensor", None)
_TENSOR_TYPES = tuple(t for t in (_Tensor, _GraphTensor) if t is not None)
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _is_symbolic(x):
    return _GraphTensor is not None and isinstance(x, _GraphTensor)


def _symbolic_error(what):
    return TypeError(
        f"{what} of a symbolic plexus.GraphTensor is not available while tracing: its "
        "value is only known when the traced function runs (use tensor ops such as "
        "plexus.where, or return the tensor from the function)")


# ---- indexing -------------------------------------------------------------------


def _index_value(v, what):
    """An index as a Python int, or a scalar GraphTensor left symbolic."""
    if isinstance(v, int) and not isinstance(v, builtins.bool):
        return v
    if _is_symbolic(v):
        if v.shape not in ((), None) or not v.dtype.is_integer:
            raise TypeError(f"{what} must be a scalar integer tensor, got shape "
                            f"{v.shape} dtype {v.dtype.name}")
        return v
    if isinstance(v, builtins.bool):
        raise TypeError(f"{what} must be an integer, got a bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, None, a slice, Ellipsis or "
                        f"plexus.newaxis, got {type(v).__name__}") from None


def _gather_index(key):
    """The index tensor when `key` is an integer array index, else None."""
    if isinstance(key, _TENSOR_TYPES):
        shape = key.shape
        if shape == ():
            return None
        if key.dtype.is_bool:
            raise TypeError("boolean mask indexing is not supported; use plexus.where")
        if not key.dtype.is_integer:
            raise TypeError(f"tensor indices must be integers, got {key.dtype.name}")
        return key
    if isinstance(key, list) or (hasattr(key, "__array__") and hasattr(key, "dtype")
                                 and getattr(key, "ndim", 0) > 0):
        t = _plexus.constant(key)
        if t.dtype.is_bool:
            raise TypeError("boolean mask indexing is not supported; use plexus.where")
        if not t.dtype.is_integer:
            raise TypeError(f"array indices must be integers, got {t.dtype.name}")
        return t
    return None


def _pack3(begin, end, strides):
    """begin/end/strides as StridedSlice takes them: cached int32 tensors for
    Python ints (int64 when some value is out of int32 range), or packed
    int32 tensors when some entry is symbolic."""
    everything = begin + end + strides
    if all(isinstance(v, int) for v in everything):
        if all(_INT32_MIN <= v <= _INT32_MAX for v in everything):
            return [_ints(tuple(begin)), _ints(tuple(end)), _ints(tuple(strides))]
        return [_plexus.constant(v, _plexus.int64) for v in (begin, end, strides)]
    return [_pack_symbolic(v) for v in (begin, end, strides)]


def _pack_symbolic(values):
    parts = []
    for v in values:
        if isinstance(v, int):
            parts.append(_plexus.constant(v, _plexus.int32))
        elif v.dtype != _plexus.int32:
            parts.append(_ex("Cast", [v], {"DstT": _plexus.int32})[0])
        else:
            parts.append(v)
    return _ex("Pack", parts, {"N": len(parts)})[0]


_SHRINK = {"shrink_axis_mask": 1}
_SHRINK_END = {"shrink_axis_mask": 1, "end_mask": 1}


def _getitem(self, key):
    if key.__class__ is not tuple:
        if key.__class__ is int:
            # Fast path: x[i].
            if key == -1:
                return _ex("StridedSlice", [self, _ints((-1,)), _ints((0,)), _ints((1,))],
                           _SHRINK_END)[0]
            return _ex("StridedSlice", [self, _ints((key,)), _ints((key + 1,)), _ints((1,))],
                       _SHRINK)[0]
        g = _gather_index(key)
        if g is not None:
            return _ex("GatherV2", [self, g, 0], None)[0]
        key = (key,)
    elif not key:
        return self
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_mask = 0
    seen_ellipsis = False
    for i, s in enumerate(key):
        bit = 1 << i
        if s.__class__ is slice:
            if s.start is None:
                begin.append(0)
                begin_mask |= bit
            else:
                begin.append(_index_value(s.start, "slice start"))
            if s.stop is None:
                end.append(0)
                end_mask |= bit
            else:
                end.append(_index_value(s.stop, "slice stop"))
            if s.step is None:
                strides.append(1)
            else:
                step = _index_value(s.step, "slice step")
                if isinstance(step, int) and step == 0:
                    raise ValueError("slice step cannot be zero")
                strides.append(step)
        elif s is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            if _gather_index(s) is not None:
                raise TypeError("only a single integer array or tensor index is "
                                "supported (as the whole index), not inside a tuple")
            v = _index_value(s, "index")
            begin.append(v)
            if isinstance(v, int):
                if v == -1:
                    end.append(0)
                    end_mask |= bit
                else:
                    end.append(v + 1)
            else:
                end.append(_ex("AddV2", [v, _plexus.constant(1, v.dtype)], None)[0])
            strides.append(1)
            shrink_mask |= bit
    attrs = {}
    if begin_mask:
        attrs["begin_mask"] = begin_mask
    if end_mask:
        attrs["end_mask"] = end_mask
    if ellipsis_mask:
        attrs["ellipsis_mask"] = ellipsis_mask
    if new_axis_mask:
        attrs["new_axis_mask"] = new_axis_mask
    if shrink_mask:
        attrs["shrink_axis_mask"] = shrink_mask
    return _ex("StridedSlice", [self] + _pack3(begin, end, strides), attrs or None)[0]


# ---- Python protocol --------------------------------------------------------------


def _format_values(t, prefix):
    import numpy as np
    try:
        a = t.numpy()
    except Exception:  # a dtype NumPy lacks
        return None
    return np.array2string(a, separator=", ", prefix=prefix)


def _repr(self):
    prefix = "plexus.Tensor("
    values = _format_values(self, prefix)
    shape = tuple(self.shape)
    head = prefix if values is None else prefix + values + ", "
    return f"{head}shape={shape}, dtype={self.dtype.name}, device={self.device})"


def _graph_repr(self):
    return (f"<plexus.GraphTensor {self.name!r} shape={self.shape} "
            f"dtype={self.dtype.name}>")


def _len(self):
    shape = self.shape
    if shape is None:
        raise TypeError("len() of a tensor of unknown rank")
    if len(shape) == 0:
        raise TypeError("len() of a scalar (rank-0) tensor")
    if shape[0] is None:
        raise TypeError("len() of a tensor whose first dimension is unknown")
    return shape[0]


def _iter(self):
    shape = self.shape
    if shape is None or len(shape) == 0:
        raise TypeError("iteration over a scalar (rank-0) tensor" if shape is not None
                        else "iteration over a tensor of unknown rank")
    n = shape[0]
    if n is None:
        raise TypeError("iteration over a tensor whose first dimension is unknown")
    if n == 0:
        return iter(())
    return iter(_ex("Unpack", [self], {"num": n}))


def _scalar_value(self, what):
    if _is_symbolic(self):
        raise _symbolic_error(what)
    if self.size != 1:
        raise TypeError(f"only tensors with one element can be converted to a Python "
                        f"{what}; this one has shape {tuple(self.shape)}")
    return self.numpy().reshape(()).item()


def _bool(self):
    if _is_symbolic(self):
        raise _symbolic_error("the truth value")
    if self.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.size} elements is "
                         "ambiguous; use plexus.reduce_any or plexus.reduce_all")
    return builtins.bool(self.numpy().reshape(()).item())


def _float(self):
    return float(_scalar_value(self, "float"))


def _int(self):
    return int(_scalar_value(self, "int"))


def _index(self):
    if _is_symbolic(self):
        raise _symbolic_error("__index__")
    if not (self.dtype.is_integer or self.dtype.is_bool) or len(self.shape) != 0:
        raise TypeError("only scalar integer tensors can be used as an index; this one "
                        f"has shape {tuple(self.shape)} dtype {self.dtype.name}")
    return int(self.numpy().item())


def _item(self):
    return _scalar_value(self, "scalar (item())")


def _tolist(self):
    if _is_symbolic(self):
        raise _symbolic_error("tolist()")
    return self.numpy().tolist()


def _format(self, spec):
    if spec and not _is_symbolic(self) and self.size == 1 and len(self.shape) == 0:
        return format(self.numpy().item(), spec)
    return format(str(self), spec)


def _astype(self, dtype):
    from plexus import _api
    return _api.cast(self, dtype)


def _T(self):
    from plexus import _api
    return _api.transpose(self)


def _reshape(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    from plexus import _api
    return _api.reshape(self, list(shape) if isinstance(shape, tuple) else shape)


def _reducer(name):
    def method(self, axis=None, keepdims=False, out=None, **kwargs):
        # (out= and the rest: NumPy's np.sum(t) calls t.sum(axis=None, out=None).)
        if out is not None:
            raise TypeError(f"{method.__name__}(): plexus tensors are immutable; out= is not supported")
        from plexus import _api
        return getattr(_api, name)(self, axis=axis, keepdims=keepdims)
    method.__name__ = {"reduce_sum": "sum", "reduce_mean": "mean", "reduce_max": "max",
                       "reduce_min": "min"}[name]
    method.__doc__ = f"plexus.{name}(self, axis, keepdims)."
    return method


def install(tensor_classes):
    """Sets indexing, repr and conversion methods on the tensor classes."""
    for cls in tensor_classes:
        symbolic = _GraphTensor is not None and cls is _GraphTensor
        cls.__getitem__ = _getitem
        cls.__len__ = _len
        cls.__iter__ = _iter
        cls.__bool__ = _bool
        cls.__float__ = _float
        cls.__int__ = _int
        cls.__index__ = _index
        cls.__format__ = _format
        cls.item = _item
        cls.tolist = _tolist
        cls.astype = _astype
        cls.T = property(_T, doc="The tensor with its dimensions reversed (transpose of a matrix).")
        cls.reshape = _reshape
        cls.sum = _reducer("reduce_sum")
        cls.mean = _reducer("reduce_mean")
        cls.max = _reducer("reduce_max")
        cls.min = _reducer("reduce_min")
        cls.__array_priority__ = 100
        if symbolic:
            if "__repr__" not in cls.__dict__:
                cls.__repr__ = _graph_repr
        else:
            cls.__repr__ = _repr
            cls.__str__ = _repr  # like TensorFlow: print(t) shows shape and dtype too
