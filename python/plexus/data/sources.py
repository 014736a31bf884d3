"""from_tensor_slices, with a fast path for batching (whole batches sliced out of the arrays)."""

from __future__ import annotations

import numpy as np

from . import structure as S
from .dataset import Dataset


class Slices(Dataset):
    """The slices of arrays along their first dimension."""

    def __init__(self, tensors):
        self._arrays = S.input_structure(tensors)
        leaves = S.flatten(self._arrays)
        if not leaves:
            raise ValueError("from_tensor_slices: no components")
        sizes = {a.shape[0] if a.ndim else None for a in leaves}
        if None in sizes:
            raise ValueError("from_tensor_slices: every component needs a first dimension to slice")
        if len(sizes) != 1:
            raise ValueError(f"from_tensor_slices: the components' first dimensions differ: {sorted(sizes)}")
        self._n = sizes.pop()
        spec = S.map_structure(lambda a: S.TensorSpec(a.shape[1:], S.dtype_of(a)), self._arrays)
        super().__init__(self._slices, spec, self._n)

    def _slices(self):
        arrays = self._arrays
        for i in range(self._n):
            yield S.map_structure(lambda a: a[i], arrays)

    def batches(self, batch_size, drop_remainder):
        """The batches, sliced directly (no per-element work)."""
        n = self._n - self._n % batch_size if drop_remainder else self._n
        for lo in range(0, n, batch_size):
            yield S.map_structure(lambda a: a[lo:lo + batch_size], self._arrays)


def _stack_sparse(parts):
    """SparseTensors batched as tf.data batches them: each element's indices
    get its position in the batch as a first column, the values follow one
    another, and the dense shape is the largest of each dimension."""
    ranks = {len(p.dense_shape) for p in parts}
    if len(ranks) != 1:
        raise ValueError(f"batch: SparseTensors of ranks {sorted(ranks)} in one batch")
    rank = ranks.pop()
    indices = [np.concatenate([np.full((len(p.indices), 1), i, np.int64), np.asarray(p.indices, np.int64)
                               .reshape(-1, rank)], axis=1) for i, p in enumerate(parts)]
    dense = np.max(np.stack([np.asarray(p.dense_shape, np.int64) for p in parts]), axis=0) if rank else \
        np.zeros([0], np.int64)
    return type(parts[0])(np.concatenate(indices).reshape(-1, rank + 1),
                          np.concatenate([np.asarray(p.values) for p in parts]),
                          np.concatenate([[len(parts)], dense]).astype(np.int64))


def stack(elements):
    """A batch from elements of one structure: each component stacked along a new first axis."""
    counter = [0]

    def batch(parts):
        first = parts[0]
        if S.is_sparse(first):
            return _stack_sparse(parts)
        if isinstance(first, dict):
            return {k: batch([p[k] for p in parts]) for k in first}
        if isinstance(first, tuple) and hasattr(first, "_fields"):
            return type(first)(*[batch([p[j] for p in parts]) for j in range(len(first))])
        if isinstance(first, (list, tuple)):
            return type(first)(batch([p[j] for p in parts]) for j in range(len(first)))
        i = counter[0]
        counter[0] += 1
        shapes = {np.shape(p) for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"batch: component {i} has different shapes in one batch ({sorted(shapes)}); "
                             "use padded_batch, or make the shapes equal in map")
        return np.stack(parts)
    return batch(elements)
