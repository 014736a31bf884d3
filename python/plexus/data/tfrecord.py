"""TFRecord files: TFRecordDataset and TFRecordWriter (TensorFlow's framing, CRCs verified, GZIP/ZLIB).

Reading and writing run in C++ (plexus/tfrecord.h); a corrupt or truncated
record raises plexus.errors.DataLossError naming the file and the record's
byte offset.
"""

from __future__ import annotations

import os

import numpy as np

from .. import _plexus
from ..function import TensorSpec
from .dataset import UNKNOWN_CARDINALITY, Dataset


def _compression(value):
    value = getattr(value, "compression_type", value)  # tf.io.TFRecordOptions
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode()
    return str(value)


def _filenames(filenames):
    if isinstance(filenames, Dataset):
        return [f.item() if isinstance(f, np.ndarray) else f for f in filenames.as_numpy_iterator()]
    if isinstance(filenames, (str, bytes, os.PathLike)):
        return [filenames]
    if hasattr(filenames, "numpy"):
        filenames = filenames.numpy()
    return [f.item() if isinstance(f, np.ndarray) else f for f in np.asarray(filenames, dtype=object).ravel()]


def _path(f):
    return f.decode() if isinstance(f, bytes) else os.fspath(f)


def read_records(path, compression, chunk=256):
    """The records of one file, as bytes."""
    reader = _plexus.TFRecordReader(_path(path), compression)
    while True:
        records = reader.read(chunk)
        if not records:
            return
        yield from records


class TFRecordDataset(Dataset):
    """The records of TFRecord files as scalar string elements, file after file.

    ``num_parallel_reads`` interleaves that many files (one record from each
    in turn), as tf.data does.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        self._files = [_path(f) for f in _filenames(filenames)]
        self._compression = _compression(compression_type)
        _plexus.TFRecordReader  # noqa: B018  (the extension has the reader)
        parallel = num_parallel_reads or 1
        if parallel < 0:
            parallel = min(len(self._files), os.cpu_count() or 1)

        def one(path):
            for record in read_records(path, self._compression):
                yield np.array(record, dtype=object)

        def make():
            if parallel <= 1:
                for path in self._files:
                    yield from one(path)
                return
            iters = [one(p) for p in self._files[:parallel]]
            queue = list(self._files[parallel:])
            while iters:
                for it in list(iters):
                    try:
                        yield next(it)
                    except StopIteration:
                        index = iters.index(it)
                        if queue:
                            iters[index] = one(queue.pop(0))
                        else:
                            iters.pop(index)
        super().__init__(make, TensorSpec([], "string"), UNKNOWN_CARDINALITY)


class TFRecordOptions:
    """tf.io.TFRecordOptions's compression_type ("", "GZIP" or "ZLIB"); its other settings are accepted and unused."""

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = _compression(compression_type)


class TFRecordWriter:
    """Writes records to a TFRecord file, like tf.io.TFRecordWriter (a context manager)."""

    def __init__(self, path, options=None):
        self.path = _path(path)
        self._writer = _plexus.TFRecordWriter(self.path, _compression(options))

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        if hasattr(record, "numpy"):
            record = record.numpy()
        if isinstance(record, np.ndarray):
            record = record.item()
        self._writer.write(bytes(record))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
