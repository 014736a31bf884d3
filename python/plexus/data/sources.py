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


def stack(elements):
    """A batch from elements of one structure: each component stacked along a new first axis."""
    first = elements[0]
    leaves = [S.flatten(e) for e in elements]
    out = []
    for i in range(len(leaves[0])):
        parts = [l[i] for l in leaves]
        shapes = {p.shape for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"batch: component {i} has different shapes in one batch ({sorted(shapes)}); "
                             "use padded_batch, or make the shapes equal in map")
        out.append(np.stack(parts))
    return S.pack_like(first, out)
