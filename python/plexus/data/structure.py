"""Nested elements (tuples, lists, dicts of values) and their specs, for plexus.data.

Inside a pipeline an element's leaves are NumPy arrays (strings as object
arrays of bytes); they become plexus tensors where a user function sees
them and where the dataset is iterated.
"""

from __future__ import annotations

import numpy as np

from .. import _plexus
from ..function import TensorSpec


def map_structure(fn, structure):
    if isinstance(structure, dict):
        return {k: map_structure(fn, v) for k, v in structure.items()}
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*[map_structure(fn, v) for v in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_structure(fn, v) for v in structure)
    return fn(structure)


def flatten(structure):
    out = []
    map_structure(out.append, structure)
    return out


def pack_like(structure, leaves):
    it = iter(leaves)
    return map_structure(lambda _: next(it), structure)


def to_numpy(value):
    """A leaf as a NumPy array (plexus tensors are copied to the host)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, _plexus.Tensor):
        return np.asarray(value.numpy())
    if isinstance(value, (bytes, str)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    a = np.asarray(value)
    if a.dtype == np.int64 and not isinstance(value, np.generic) and a.size and \
            -2**31 <= a.min() and a.max() < 2**31:
        a = a.astype(np.int32)  # Python ints are int32 where they fit, as in tf.constant
    if a.dtype.kind in "US":
        a = a.astype(object)
        a = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(a) if a.size else a
    elif a.dtype == np.float64 and not isinstance(value, np.generic):
        a = a.astype(np.float32)
    return a


def input_structure(value):
    """A source's value as NumPy leaves: tuples, named tuples and dicts are
    structures; a list is one tensor (as tf.data converts lists)."""
    if isinstance(value, dict):
        return {k: input_structure(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[input_structure(v) for v in value])
    if isinstance(value, tuple):
        return tuple(input_structure(v) for v in value)
    return to_numpy(value)


def to_tensor(value):
    if isinstance(value, _plexus.Tensor):
        return value
    a = value if isinstance(value, np.ndarray) else to_numpy(value)
    if a.dtype == object:
        return _plexus.constant(a, _plexus.string)
    return _plexus.constant(a)


def dtype_of(a):
    return _plexus.string if a.dtype == object else _plexus.as_dtype(a.dtype)


def spec_of(element):
    """The TensorSpec structure of a NumPy element."""
    return map_structure(lambda a: TensorSpec(a.shape, dtype_of(a)), element)


def relax(spec, other):
    """The most specific spec that both specs fit (differing dimensions become None)."""
    def merge(a, b):
        if a.dtype != b.dtype:
            raise TypeError(f"elements disagree on dtype: {a.dtype.name} and {b.dtype.name}")
        if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
            return TensorSpec(None, a.dtype)
        return TensorSpec([x if x == y else None for x, y in zip(a.shape, b.shape)], a.dtype)
    return pack_like(spec, [merge(a, b) for a, b in zip(flatten(spec), flatten(other))])


def is_sparse(value) -> bool:
    """A SparseTensor (plexus.io's, as a VarLenFeature parses): batched as tf.data batches tf.SparseTensor."""
    return isinstance(value, tuple) and type(value).__name__ == "SparseTensor" and \
        getattr(value, "_fields", None) == ("indices", "values", "dense_shape")


def batch_spec(spec, batch_size, drop_remainder):
    if spec is None:
        return None  # unknown (a map function that ran eagerly)
    n = batch_size if drop_remainder else None

    def batched(s):
        if is_sparse(s):  # one more index column and dense dimension
            rank = None if s.dense_shape.shape is None or s.dense_shape.shape[0] is None else s.dense_shape.shape[0] + 1
            return type(s)(TensorSpec([None, rank], s.indices.dtype), TensorSpec([None], s.values.dtype),
                           TensorSpec([rank], s.dense_shape.dtype))
        if isinstance(s, dict):
            return {k: batched(v) for k, v in s.items()}
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[batched(v) for v in s])
        if isinstance(s, (list, tuple)):
            return type(s)(batched(v) for v in s)
        return TensorSpec(None if s.shape is None else (n,) + tuple(s.shape), s.dtype)
    return batched(spec)
