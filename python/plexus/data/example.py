"""tf.train.Example records written without TensorFlow: ``example({"image": png, "label": 3})``.

The protobuf wire format is encoded here directly:
Example{features=1: Features{feature=1: map<string, Feature>}} and
Feature{bytes_list=1 | float_list=2 | int64_list=3}, numbers packed.
"""

from __future__ import annotations

import struct

import numpy as np

from .._protowire import length_delimited as _field
from .._protowire import varint as _varint


def _values(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (bytes, str, int, float, bool, np.generic)):
        return [value]
    if isinstance(value, np.ndarray):
        return list(value.ravel())
    return list(value)


def feature(value) -> bytes:
    """One serialized tf.train.Feature: bytes/str become a BytesList, floats a FloatList, ints an Int64List.

    An empty list is an empty FloatList (tf.train.Feature's default); an
    empty NumPy array's dtype chooses the list instead.
    """
    items = _values(value)
    if isinstance(value, np.ndarray) and not items:  # an empty array's dtype says which list
        kind = "bytes" if value.dtype.kind in "SUO" else "float" if value.dtype.kind == "f" else "int"
        return _field({"bytes": 1, "float": 2, "int": 3}[kind], b"")
    kinds = {("bytes" if isinstance(v, (bytes, str, np.bytes_, np.str_)) else
              "float" if isinstance(v, (float, np.floating)) else "int") for v in items}
    if kinds == {"float", "int"}:
        kinds = {"float"}  # ints among floats are floats, as in tf.train.FloatList
    if len(kinds) > 1:
        raise TypeError(f"a feature's values must all be bytes, all floats or all ints; got {sorted(kinds)}")
    kind = kinds.pop() if kinds else "float"
    if kind == "bytes":
        body = b"".join(_field(1, v.encode() if isinstance(v, (str, np.str_)) else bytes(v)) for v in items)
        return _field(1, body)
    if kind == "float":
        packed = struct.pack(f"<{len(items)}f", *[float(v) for v in items])
        return _field(2, _field(1, packed) if items else b"")
    packed = b"".join(_varint(int(v)) for v in items)
    return _field(3, _field(1, packed) if items else b"")


def example(features: dict) -> bytes:
    """A serialized tf.train.Example with these features ({name: value or list of values})."""
    entries = b""
    for key in sorted(features):
        entry = _field(1, key.encode()) + _field(2, feature(features[key]))
        entries += _field(1, entry)
    return _field(1, entries)
