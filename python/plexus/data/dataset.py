"""plexus.data.Dataset: tf.data's sources and transformations, over NumPy elements.

A dataset is a recipe: iterating it runs the recipe. Elements move through
the pipeline as NumPy arrays (strings as object arrays of bytes); user
functions given to ``map``, ``filter`` and ``interleave`` see plexus
tensors, and iterating the dataset yields plexus tensors, as tf.data yields
tf.Tensors.
"""

from __future__ import annotations

import glob as _glob
import itertools
import os

import numpy as np

from ..function import TensorSpec
from . import structure as S

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _cpus():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def _parallelism(n):
    if n is None:
        return 1
    if n == AUTOTUNE:
        return _cpus()
    if int(n) < 1:
        raise ValueError(f"num_parallel_calls must be positive or AUTOTUNE, got {n}")
    return int(n)


class Dataset:
    """A sequence of elements, built and transformed like ``tf.data.Dataset``."""

    def __init__(self, make_iterator, element_spec, cardinality=UNKNOWN_CARDINALITY):
        self._make_iterator = make_iterator  # () -> iterator of NumPy elements
        self._element_spec = element_spec
        self._cardinality = cardinality

    # -- iteration ------------------------------------------------------------------
    def _numpy_iter(self):
        return self._make_iterator()

    def __iter__(self):
        for element in self._numpy_iter():
            yield S.map_structure(S.to_tensor, element)

    def as_numpy_iterator(self):
        """The elements as NumPy values (bytes for string scalars)."""
        def plain(a):
            return a.item() if isinstance(a, np.ndarray) and a.dtype == object and a.ndim == 0 else a
        for element in self._numpy_iter():
            yield S.map_structure(plain, element)

    @property
    def element_spec(self):
        return self._element_spec

    def cardinality(self) -> int:
        """The number of elements; INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return self._cardinality

    def __len__(self):
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("the dataset is infinite")
        if self._cardinality == UNKNOWN_CARDINALITY:
            raise TypeError("the length of the dataset is unknown")
        return self._cardinality

    def __bool__(self):  # a dataset is true even when __len__ would raise
        return True

    def __repr__(self):
        return f"<plexus.data.Dataset element_spec={self._element_spec}>"

    # -- sources ----------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per slice of the first dimension of every component."""
        from .sources import Slices
        return Slices(tensors)

    @staticmethod
    def from_tensors(tensors):
        """One element: the whole structure."""
        element = S.input_structure(tensors)
        return Dataset(lambda: iter([element]), S.spec_of(element), 1)

    @staticmethod
    def range(*args, dtype="int64"):
        r = range(*args)
        dt = np.dtype(str(getattr(dtype, "name", dtype)))
        return Dataset(lambda: (np.asarray(i, dt) for i in r), TensorSpec([], str(dt)), len(r))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        """Elements from a Python generator function (called anew for each iteration)."""
        if output_signature is None:
            if output_types is None:
                raise TypeError("from_generator: give output_signature (or output_types)")
            shapes = output_shapes if output_shapes is not None else S.map_structure(lambda _: None, output_types)
            output_signature = S.pack_like(output_types, [TensorSpec(s, t) for t, s in zip(
                S.flatten(output_types), S.flatten(shapes) if output_shapes is not None else
                [None] * len(S.flatten(output_types)))])
        specs = S.flatten(output_signature)

        def make():
            for value in generator(*(args or ())):
                leaves = S.flatten(value) if not isinstance(output_signature, TensorSpec) else [value]
                if len(leaves) != len(specs):
                    raise ValueError(f"from_generator: the generator yielded {len(leaves)} components, the "
                                     f"output_signature has {len(specs)}")
                out = []
                for v, spec in zip(leaves, specs):
                    a = S.to_numpy(v)
                    if spec.dtype.name != "string" and a.dtype != object:
                        a = a.astype(spec.dtype.name if spec.dtype.name != "bool_" else bool, copy=False)
                    if spec.shape is not None and (len(a.shape) != len(spec.shape) or any(
                            d is not None and d != g for d, g in zip(spec.shape, a.shape))):
                        raise ValueError(f"from_generator: a component of shape {a.shape} does not fit {spec}")
                    out.append(a)
                yield S.pack_like(output_signature, out) if not isinstance(output_signature, TensorSpec) else out[0]
        return Dataset(make, output_signature)

    @staticmethod
    def zip(*datasets):
        """Tuples (or the given structure) of the datasets' elements, until the shortest ends."""
        if len(datasets) == 1 and isinstance(datasets[0], (tuple, list, dict)):
            datasets = datasets[0]
        structure = datasets
        flat = S.flatten(structure)

        def make():
            for parts in zip(*[d._numpy_iter() for d in flat]):
                yield S.pack_like(structure, parts) if not isinstance(structure, list) else tuple(parts)
        cards = [d.cardinality() for d in flat]
        known = [c for c in cards if c >= 0]
        card = min(known) if known else (INFINITE_CARDINALITY if all(c == INFINITE_CARDINALITY for c in cards)
                                         else UNKNOWN_CARDINALITY)
        spec = S.pack_like(structure, [d.element_spec for d in flat])
        return Dataset(make, tuple(spec) if isinstance(spec, list) else spec, card)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The files matching a glob pattern (or patterns), shuffled unless shuffle=False (as tf.data)."""
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
        files = sorted({f for p in patterns for f in _glob.glob(os.fspath(p))})
        if not files:
            raise ValueError(f"list_files: no files match {', '.join(map(str, patterns))}")
        names = np.array([f.encode() for f in files], dtype=object)
        ds = Dataset.from_tensor_slices(names)
        return ds.shuffle(len(files), seed=seed) if shuffle is None or shuffle else ds

    # -- transformations ----------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies map_func to every element (traced once; several at a time with num_parallel_calls)."""
        from .mapping import mapped
        return mapped(self, map_func, _parallelism(num_parallel_calls), deterministic)

    def filter(self, predicate, name=None):
        from .mapping import filtered
        return filtered(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        from .batching import batched
        return batched(self, int(batch_size), drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        from .batching import padded
        return padded(self, int(batch_size), padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name=None):
        from .batching import unbatched
        return unbatched(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles within a buffer of buffer_size elements (a full shuffle when it holds them all)."""
        if int(buffer_size) < 1:
            raise ValueError(f"shuffle: buffer_size must be positive, got {buffer_size}")
        size = int(buffer_size)
        base = np.random.SeedSequence(seed).entropy if seed is not None else None
        epochs = itertools.count()

        def make():
            epoch = next(epochs) if reshuffle_each_iteration else 0
            rng = np.random.default_rng(None if base is None else [base, epoch])
            buffer = []
            for element in self._numpy_iter():
                if len(buffer) < size:
                    buffer.append(element)
                    continue
                i = int(rng.integers(len(buffer)))
                out, buffer[i] = buffer[i], element
                yield out
            while buffer:
                yield buffer.pop(int(rng.integers(len(buffer))))
        return Dataset(make, self._element_spec, self._cardinality)

    def repeat(self, count=None, name=None):
        count = None if count is None or count < 0 else int(count)

        def make():
            for i in itertools.count() if count is None else range(count):
                empty = True
                for element in self._numpy_iter():
                    empty = False
                    yield element
                if empty:  # an epoch without elements ends the repetition, as in tf.data
                    return
        c = self._cardinality
        card = (INFINITE_CARDINALITY if count is None and c != 0 else c * count if c >= 0 and count is not None
                else c if c == 0 else UNKNOWN_CARDINALITY if count is not None else INFINITE_CARDINALITY)
        return Dataset(make, self._element_spec, card)

    def take(self, count, name=None):
        count = int(count)
        if count < 0:
            return self
        c = self._cardinality
        card = min(c, count) if c >= 0 else (count if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY)
        return Dataset(lambda: itertools.islice(self._numpy_iter(), count), self._element_spec, card)

    def skip(self, count, name=None):
        count = int(count)
        c = self._cardinality
        if count < 0:  # skip(-1) skips everything, as in tf.data
            return Dataset(lambda: iter(()), self._element_spec, c if c == INFINITE_CARDINALITY else 0)
        card = max(c - count, 0) if c >= 0 else c
        return Dataset(lambda: itertools.islice(self._numpy_iter(), count, None), self._element_spec, card)

    def enumerate(self, start=0, name=None):
        def make():
            for i, element in enumerate(self._numpy_iter(), start):
                yield np.asarray(i, np.int64), element
        return Dataset(make, (TensorSpec([], "int64"), self._element_spec), self._cardinality)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """tf.data's interleave order; with num_parallel_calls the open inner datasets run ahead on threads."""
        from .mapping import interleaved
        return interleaved(self, map_func, _parallelism(cycle_length if cycle_length is not None else AUTOTUNE),
                           int(block_length or 1), _parallelism(num_parallel_calls))

    def flat_map(self, map_func, name=None):
        return self.interleave(map_func, cycle_length=1, block_length=1)

    def cache(self, filename="", name=None):
        """Keeps the elements after the first complete iteration: in memory, or in a file
        (``<filename>.pxcache``, reused while it exists; see plexus/data/cache.py)."""
        if filename:
            from .cache import file_cached
            return file_cached(self, filename)
        store = {"elements": None}

        def make():
            if store["elements"] is not None:
                yield from store["elements"]
                return
            seen = []
            for element in self._numpy_iter():
                seen.append(element)
                yield element
            store["elements"] = seen
        return Dataset(make, self._element_spec, self._cardinality)

    def prefetch(self, buffer_size, name=None):
        """Produces up to buffer_size elements ahead on a background thread."""
        from .prefetch import prefetched
        size = _cpus() * 2 if buffer_size == AUTOTUNE else int(buffer_size)
        return prefetched(self, max(size, 1))

    def apply(self, transformation_func):
        return transformation_func(self)
