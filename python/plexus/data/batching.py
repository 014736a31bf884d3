"""batch, padded_batch and unbatch."""

from __future__ import annotations

import numpy as np

from . import structure as S
from .dataset import INFINITE_CARDINALITY, Dataset
from .sources import Slices, stack


def _card(c, n, drop):
    if c < 0:
        return c
    return c // n if drop else -(-c // n)


def batched(ds, batch_size, drop_remainder):
    if batch_size < 1:
        raise ValueError(f"batch: batch_size must be positive, got {batch_size}")
    spec = S.batch_spec(ds.element_spec, batch_size, drop_remainder)
    if isinstance(ds, Slices):
        return Dataset(lambda: ds.batches(batch_size, drop_remainder), spec,
                       _card(ds.cardinality(), batch_size, drop_remainder))

    def make():
        buf = []
        for element in ds._numpy_iter():
            buf.append(element)
            if len(buf) == batch_size:
                yield stack(buf)
                buf = []
        if buf and not drop_remainder:
            yield stack(buf)
    return Dataset(make, spec, _card(ds.cardinality(), batch_size, drop_remainder))


def _pad_value(value, a):
    if value is None:
        return b"" if a.dtype == object else 0
    return S.to_numpy(value).item() if not isinstance(value, (bytes, int, float)) else value


def padded(ds, batch_size, padded_shapes, padding_values, drop_remainder):
    spec = ds.element_spec
    shapes = S.flatten(padded_shapes) if padded_shapes is not None else None
    if padded_shapes is not None and isinstance(padded_shapes, (list, tuple)) and all(
            isinstance(d, (int, type(None))) for d in padded_shapes) and not isinstance(spec, (tuple, dict, list)):
        shapes = [list(padded_shapes)]
    values = S.flatten(padding_values) if padding_values is not None and isinstance(
        padding_values, (tuple, list, dict)) else None

    def pad_batch(elements):
        leaves = [S.flatten(e) for e in elements]
        out = []
        for i in range(len(leaves[0])):
            parts = [l[i] for l in leaves]
            rank = parts[0].ndim
            target = [max(p.shape[d] for p in parts) for d in range(rank)]
            if shapes is not None and shapes[i] is not None:
                wanted = list(shapes[i]) if not isinstance(shapes[i], int) else [shapes[i]]
                for d, w in enumerate(wanted):
                    if w is not None and w >= 0:
                        if target[d] > w:
                            raise ValueError(f"padded_batch: component {i} has size {target[d]} in dimension {d}, "
                                             f"more than its padded shape {wanted}")
                        target[d] = w
            fill = _pad_value(values[i] if values else padding_values, parts[0])
            batch = np.full([len(parts)] + target, fill, dtype=parts[0].dtype)
            for j, p in enumerate(parts):
                batch[(j,) + tuple(slice(0, s) for s in p.shape)] = p
            out.append(batch)
        return S.pack_like(elements[0], out)

    def make():
        buf = []
        for element in ds._numpy_iter():
            buf.append(element)
            if len(buf) == batch_size:
                yield pad_batch(buf)
                buf = []
        if buf and not drop_remainder:
            yield pad_batch(buf)
    out_spec = None if spec is None else S.map_structure(
        lambda s: S.TensorSpec(None if s.shape is None else (None,) + tuple(None for _ in s.shape), s.dtype), spec)
    return Dataset(make, out_spec, _card(ds.cardinality(), batch_size, drop_remainder))


def unbatched(ds):
    def make():
        for element in ds._numpy_iter():
            leaves = S.flatten(element)
            n = leaves[0].shape[0]
            for i in range(n):
                yield S.pack_like(element, [a[i] for a in leaves])
    spec = None if ds.element_spec is None else S.map_structure(
        lambda s: S.TensorSpec(None if s.shape is None else s.shape[1:], s.dtype), ds.element_spec)
    card = INFINITE_CARDINALITY if ds.cardinality() == INFINITE_CARDINALITY else -2
    return Dataset(make, spec, card)
