"""tf.io's Example parsing: FixedLenFeature, VarLenFeature, parse_example and parse_single_example.

They build ParseExampleV2 ops, so they run eagerly and inside traced
functions (a plexus.data map). A VarLenFeature comes back as a
SparseTensor(indices, values, dense_shape) named tuple.
"""

from __future__ import annotations

import collections

import numpy as np

from . import _plexus

FixedLenFeature = collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"],
                                         defaults=[None])
VarLenFeature = collections.namedtuple("VarLenFeature", ["dtype"])


class SparseTensor(collections.namedtuple("SparseTensor", ["indices", "values", "dense_shape"])):
    """A VarLenFeature's values: indices [n, rank], values [n], dense_shape [rank] (tf.SparseTensor's parts)."""

    __slots__ = ()

    def to_dense(self, default_value=None):
        """The dense tensor, missing entries filled with default_value (0 or b""), like tf.sparse.to_dense."""
        dt = self.values.dtype
        if default_value is None:
            default_value = b"" if dt == _plexus.string else 0
        default = _plexus.constant(np.asarray(default_value, dtype=object if dt == _plexus.string else dt.name), dt)
        return _ex("SparseToDense", [self.indices, self.dense_shape, self.values, default],
                   {"validate_indices": False})[0]

_ex = _plexus.execute


def _dtype(d):
    return _plexus.as_dtype(d)


def _strings(values):
    return _plexus.constant(np.array([v.encode() for v in values], dtype=object).reshape(len(values)),
                            _plexus.string)


def _default(spec):
    dt = _dtype(spec.dtype)
    if spec.default_value is None:
        return _plexus.constant(np.zeros([0], dtype=object if dt == _plexus.string else dt.name), dt)
    value = spec.default_value
    if dt == _plexus.string:
        arr = np.asarray(value, dtype=object)
        arr = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(arr) if arr.ndim \
            else np.array(arr.item().encode() if isinstance(arr.item(), str) else arr.item(), dtype=object)
        return _plexus.constant(arr, dt)
    return _plexus.constant(np.broadcast_to(np.asarray(value, dt.name), tuple(spec.shape)).copy(), dt)


def parse_example(serialized, features=None, *args, **kwargs):
    """Parses a batch of serialized tf.train.Examples: {name: tensor with the batch first}.

    ``features`` maps names to FixedLenFeature / VarLenFeature, as tf.io.parse_example.
    (Called with the raw op's arguments instead, it is the ParseExampleV2 op.)
    """
    if not isinstance(features, dict):
        return _raw_parse_example(serialized, features, *args, **kwargs)
    dense = sorted(k for k, f in features.items() if isinstance(f, FixedLenFeature))
    sparse = sorted(k for k, f in features.items() if isinstance(f, VarLenFeature))
    unknown = [k for k, f in features.items() if not isinstance(f, (FixedLenFeature, VarLenFeature))]
    if unknown:
        raise TypeError(f"parse_example: features {unknown} are neither FixedLenFeature nor VarLenFeature")
    if not isinstance(serialized, (_plexus.Tensor, _plexus.GraphTensor)):
        serialized = _plexus.constant(np.asarray(serialized, dtype=object), _plexus.string)
    inputs = [serialized, _strings([]), _strings(sparse), _strings(dense), _strings([])]
    inputs += [_default(features[k]) for k in dense]
    attrs = {"Tdense": [_dtype(features[k].dtype) for k in dense], "num_sparse": len(sparse),
             "sparse_types": [_dtype(features[k].dtype) for k in sparse], "ragged_value_types": [],
             "ragged_split_types": [], "dense_shapes": [list(features[k].shape) for k in dense]}
    out = _ex("ParseExampleV2", inputs, attrs)
    n = len(sparse)
    result = {}
    for i, k in enumerate(sparse):
        result[k] = SparseTensor(out[i], out[n + i], out[2 * n + i])
    for i, k in enumerate(dense):
        result[k] = out[3 * n + i]
    return result


def parse_single_example(serialized, features):
    """Parses one serialized tf.train.Example: {name: tensor}."""
    if not isinstance(serialized, (_plexus.Tensor, _plexus.GraphTensor)):
        serialized = _plexus.constant(np.asarray(serialized, dtype=object), _plexus.string)
    batch = _ex("Reshape", [serialized, _plexus.constant([1], _plexus.int32)])[0]
    parsed = parse_example(batch, features)
    out = {}
    for k, v in parsed.items():
        if isinstance(v, SparseTensor):
            indices = _ex("StridedSlice", [v.indices, _plexus.constant([0, 1], _plexus.int32),
                                           _plexus.constant([0, 2], _plexus.int32),
                                           _plexus.constant([1, 1], _plexus.int32)],
                          {"begin_mask": 1, "end_mask": 1})[0]
            shape = _ex("StridedSlice", [v.dense_shape, _plexus.constant([1], _plexus.int32),
                                         _plexus.constant([2], _plexus.int32), _plexus.constant([1], _plexus.int32)],
                        {})[0]
            out[k] = SparseTensor(indices, v.values, shape)
        else:
            out[k] = _ex("Squeeze", [v], {"squeeze_dims": [0]})[0]
    return out


_raw_parse_example = None
