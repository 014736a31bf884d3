"""batch, padded_batch and unbatch."""

from __future__ import annotations

import numpy as np

from .. import errors
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


def _flatten_up_to(structure, value):
    """value's parts at structure's leaves (a shape like [2, None] stays whole at its leaf)."""
    if isinstance(structure, dict):
        return [x for k in structure for x in _flatten_up_to(structure[k], value[k])]
    if isinstance(structure, (tuple, list)):
        if len(value) != len(structure):
            raise ValueError(f"padded_batch: {value!r} does not match the element's structure")
        return [x for s, v in zip(structure, value) for x in _flatten_up_to(s, v)]
    return [value]


def _shape_list(shape):
    if shape is None:
        return None
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [None if d is None else int(d) for d in np.asarray(shape, dtype=object).ravel()] if len(shape) else []


def padded(ds, batch_size, padded_shapes, padding_values, drop_remainder):
    spec = ds.element_spec
    by_structure = {}

    def parts_of(structure):
        # padded_shapes and padding_values per component, for the element's structure.
        key = id(structure.__class__), tuple(structure) if isinstance(structure, dict) else len(
            structure) if isinstance(structure, (tuple, list)) else None
        if key not in by_structure:
            shapes = None if padded_shapes is None else [
                _shape_list(s) for s in _flatten_up_to(structure, padded_shapes)]
            values = _flatten_up_to(structure, padding_values) if isinstance(
                padding_values, (tuple, list, dict)) else None
            by_structure[key] = shapes, values
        return by_structure[key]

    def pad_batch(elements):
        leaves = [S.flatten(e) for e in elements]
        shapes, values = parts_of(elements[0])
        out = []
        for i in range(len(leaves[0])):
            parts = [l[i] for l in leaves]
            rank = parts[0].ndim
            target = [max(p.shape[d] for p in parts) for d in range(rank)]
            if shapes is not None and shapes[i] is not None:
                wanted = shapes[i]
                if len(wanted) != rank:
                    raise ValueError(f"padded_batch: padded shape {wanted} of component {i} does not have rank {rank}")
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
    shapes = None if spec is None else parts_of(spec)[0]

    def padded_spec(i, s):
        # A dimension is known where padded_shapes fixes it or the elements all have it.
        if s.shape is None:
            return S.TensorSpec(None, s.dtype)
        wanted = shapes[i] if shapes is not None and shapes[i] is not None else [None] * len(s.shape)
        dims = [w if w is not None and w >= 0 else d for w, d in zip(wanted, s.shape)]
        return S.TensorSpec([batch_size if drop_remainder else None] + dims, s.dtype)
    out_spec = None if spec is None else S.pack_like(spec, [padded_spec(i, s) for i, s in enumerate(S.flatten(spec))])
    return Dataset(make, out_spec, _card(ds.cardinality(), batch_size, drop_remainder))


def unbatched(ds):
    def make():
        for element in ds._numpy_iter():
            leaves = S.flatten(element)
            if any(np.ndim(a) == 0 for a in leaves):
                raise errors.InvalidArgumentError("unbatch: an element has a scalar component; every component "
                                                  "needs a batch dimension")
            n = leaves[0].shape[0]
            for j, a in enumerate(leaves[1:], 1):
                if a.shape[0] != n:
                    raise errors.InvalidArgumentError(
                        f"unbatch: input element must have the same batch size in each component; component 0 "
                        f"had size {n} but component {j} had size {a.shape[0]}")
            for i in range(n):
                yield S.pack_like(element, [a[i] for a in leaves])
    spec = None if ds.element_spec is None else S.map_structure(
        lambda s: S.TensorSpec(None if s.shape is None else s.shape[1:], s.dtype), ds.element_spec)
    card = INFINITE_CARDINALITY if ds.cardinality() == INFINITE_CARDINALITY else -2
    return Dataset(make, spec, card)
