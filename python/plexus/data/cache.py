"""cache(filename): the elements kept in a file after the first complete iteration.

The file is a TFRecord file of Plexus's own layout (TensorFlow's cache
files are not read or written): the first record is a header
(``plexus-cache 1``, then the element's structure as JSON), and every other
record is one element, its leaves one after another. A numeric leaf is its
NumPy dtype string, rank, shape and raw bytes; a string leaf is its rank,
shape, the byte length of every string and the strings. Reading goes
through the C++ TFRecord reader, so both CRCs of every record are checked
and a damaged cache file raises DataLossError.

As in tf.data, an existing cache file is used as it is, even one written by
an earlier run of the program (delete it when the data changes). The first
iteration writes ``<filename>.pxcache`` under a temporary name and renames
it when the iteration completes; an iteration stopped early leaves no
cache, and the next one starts again from the source.
"""

from __future__ import annotations

import json
import os
import struct
import uuid

import numpy as np

from .. import _plexus
from . import structure as S
from .dataset import Dataset

_MAGIC = b"plexus-cache 1\n"
SUFFIX = ".pxcache"


def _describe(structure):
    """The element's structure as JSON-able data (None at a leaf)."""
    if isinstance(structure, dict):
        return {"dict": [[k, _describe(v)] for k, v in structure.items()]}
    if isinstance(structure, tuple):
        return {"tuple": [_describe(v) for v in structure]}
    if isinstance(structure, list):
        return {"list": [_describe(v) for v in structure]}
    return None


def _rebuild(description):
    """A template with the described structure (leaves are None)."""
    if description is None:
        return None
    if "dict" in description:
        return {k: _rebuild(v) for k, v in description["dict"]}
    if "tuple" in description:
        return tuple(_rebuild(v) for v in description["tuple"])
    return [_rebuild(v) for v in description["list"]]


def encode_leaf(a: np.ndarray) -> bytes:
    shape = struct.pack(f"<B{a.ndim}q", a.ndim, *a.shape)
    if a.dtype == object:
        items = [bytes(x) for x in a.ravel()]
        lengths = np.fromiter((len(x) for x in items), dtype="<i8", count=len(items)).tobytes()
        return b"\x00" + shape + lengths + b"".join(items)
    dt = a.dtype.str.encode()
    return struct.pack("<B", len(dt)) + dt + shape + np.ascontiguousarray(a).tobytes()


def decode_leaf(buf: memoryview, pos: int):
    """(array, the position after it)."""
    n = buf[pos]
    pos += 1
    dt = bytes(buf[pos:pos + n]).decode() if n else None
    pos += n
    rank = buf[pos]
    shape = struct.unpack_from(f"<{rank}q", buf, pos + 1)
    pos += 1 + 8 * rank
    count = int(np.prod(shape, dtype=np.int64))
    if dt is None:
        lengths = np.frombuffer(buf, dtype="<i8", count=count, offset=pos)
        pos += 8 * count
        items = np.empty(count, dtype=object)
        for i, length in enumerate(lengths.tolist()):
            items[i] = bytes(buf[pos:pos + length])
            pos += length
        return items.reshape(shape), pos
    dtype = np.dtype(dt)
    a = np.frombuffer(buf, dtype=dtype, count=count, offset=pos).reshape(shape).copy()
    return a, pos + count * dtype.itemsize


def encode_element(element) -> bytes:
    return b"".join(encode_leaf(np.asarray(a)) for a in S.flatten(element))


def decode_element(record: bytes, template, n_leaves: int):
    buf = memoryview(record)
    pos = 0
    leaves = []
    for _ in range(n_leaves):
        a, pos = decode_leaf(buf, pos)
        leaves.append(a)
    if pos != len(buf):
        raise ValueError("cache: a record is longer than its element")
    return S.pack_like(template, leaves) if template is not None else leaves[0]


def _read(path, spec):
    """The elements of a complete cache file."""
    reader = _plexus.TFRecordReader(path, "")
    header = reader.read(1)
    if not header or not header[0].startswith(_MAGIC):
        raise ValueError(f"cache: {path} is not a plexus.data cache file (delete it to rebuild the cache)")
    template = _rebuild(json.loads(header[0][len(_MAGIC):].decode()))
    if spec is not None and len(S.flatten(spec)) == len(S.flatten(template) if template is not None else [None]):
        template = spec  # keeps named tuples, which the header stores as tuples
    n_leaves = len(S.flatten(template)) if template is not None else 1
    while True:
        records = reader.read(256)
        if not records:
            return
        for record in records:
            yield decode_element(record, template, n_leaves)


def _write_through(ds, path):
    """The source's elements, written to path as they pass; the file appears only when all have passed."""
    tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    writer = _plexus.TFRecordWriter(tmp, "")
    done = False
    try:
        first = True
        for element in ds._numpy_iter():
            if first:
                structure = None if isinstance(element, np.ndarray) else _describe(element)
                writer.write(_MAGIC + json.dumps(structure).encode())
                first = False
            writer.write(encode_element(element))
            yield element
        if first:  # an empty dataset still gets its (empty) cache
            writer.write(_MAGIC + json.dumps(_describe(ds.element_spec)).encode())
        writer.close()
        os.replace(tmp, path)
        done = True
    finally:
        if not done:
            try:
                writer.close()
            except Exception:  # noqa: BLE001  (the original error matters)
                pass
            if os.path.exists(tmp):
                os.remove(tmp)


def file_cached(ds, filename):
    path = os.fspath(filename) + SUFFIX

    def make():
        if os.path.exists(path):
            yield from _read(path, ds.element_spec)
        else:
            yield from _write_through(ds, path)
    return Dataset(make, ds.element_spec, ds.cardinality())
