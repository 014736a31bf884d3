"""What Model.fit, evaluate and predict accept as data, turned into batches of tensors.

- NumPy arrays or plexus tensors, or lists / tuples / dicts of them, with
  ``y`` and ``sample_weight`` alongside: sliced into batches on the host
  (shuffled per epoch when asked), the last batch possibly smaller.
- A ``plexus.data.Dataset`` (or any re-iterable object yielding
  ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` batches, such as a
  generator function's result for one epoch): iterated as it is.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _backend as B
from ..layers.base import _map as _map_leaves


def _map(structure, fn):
    """fn over a structure's leaves; None stays None (no targets, no weights)."""
    return _map_leaves(structure, lambda v: None if v is None else fn(v))


def _flat(structure):
    out = []
    _map(structure, out.append)
    return out


def _to_numpy(x):
    if B.is_tensor(x):
        return x.numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        return np.asarray(x.numpy())
    a = np.asarray(x)
    if a.dtype == np.float64:
        a = a.astype(B.floatx())
    return a


def is_dataset(x) -> bool:
    """A dataset-like object: iterable, not an array and not a structure of arrays."""
    if x is None or isinstance(x, (np.ndarray, list, tuple, dict)) or B.is_tensor(x):
        return False
    return hasattr(x, "__iter__")


def unpack(data):
    """(x, y, sample_weight) from a batch element (a tuple of 1 to 3, or x alone)."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"a data element must be (x,), (x, y) or (x, y, sample_weight); got a tuple of {len(data)}")
    return data, None, None


class ArrayBatches:
    """Batches of in-memory arrays (x, y, sample_weight), optionally shuffled per epoch."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None,
                 steps=None):
        self.x = _map(x, _to_numpy)
        self.y = _map(y, _to_numpy)
        self.sample_weight = None if sample_weight is None else _to_numpy(sample_weight).astype("float32")
        sizes = {len(a) for a in _flat(self.x) + _flat(self.y)}
        if self.sample_weight is not None:
            sizes.add(len(self.sample_weight))
        if len(sizes) != 1:
            raise ValueError(f"x, y and sample_weight must have the same number of samples; got sizes {sorted(sizes)}")
        self.num_samples = sizes.pop()
        self.batch_size = int(batch_size or 32)
        self.shuffle = shuffle
        if class_weight is not None:
            self.sample_weight = _apply_class_weight(self.y, class_weight, self.sample_weight)
        self.steps = steps

    @property
    def num_batches(self) -> int:
        n = math.ceil(self.num_samples / self.batch_size)
        return n if self.steps is None else min(n, self.steps)

    def __iter__(self):
        order = np.random.permutation(self.num_samples) if self.shuffle is True else None
        if self.shuffle == "batch":
            order = np.arange(self.num_samples)
            starts = np.random.permutation(math.ceil(self.num_samples / self.batch_size)) * self.batch_size
            order = np.concatenate([order[s:s + self.batch_size] for s in starts])
        for b in range(self.num_batches):
            lo, hi = b * self.batch_size, min((b + 1) * self.batch_size, self.num_samples)
            if order is None:
                take = lambda a, lo=lo, hi=hi: a[lo:hi]  # noqa: E731
            else:
                idx = order[lo:hi]
                take = lambda a, idx=idx: a[idx]  # noqa: E731
            xb = _map(self.x, lambda a: B.convert(take(a)))
            yb = _map(self.y, lambda a: B.convert(take(a)))
            swb = None if self.sample_weight is None else B.convert(take(self.sample_weight))
            yield xb, yb, swb


class DatasetBatches:
    """Batches from a dataset; `steps` limits them per epoch (and a dataset without end needs it)."""

    def __init__(self, dataset, steps=None, class_weight=None):
        self.dataset = dataset
        self.steps = steps
        self.class_weight = class_weight
        self._iterator = None
        card = getattr(dataset, "cardinality", None)
        self.known = None
        if callable(card):
            try:
                c = int(card())
                self.known = c if c >= 0 else None
                if c == -1 and steps is None:
                    raise ValueError("the dataset repeats forever: give steps_per_epoch (or validation_steps)")
            except TypeError:
                pass
        elif hasattr(dataset, "__len__"):
            self.known = len(dataset)

    @property
    def num_batches(self):
        if self.steps is not None:
            return self.steps
        return self.known

    def __iter__(self):
        if self.steps is not None:
            # With a step count the dataset is iterated across epochs (like
            # Keras with steps_per_epoch): continue where the last epoch ended.
            if self._iterator is None:
                self._iterator = iter(self.dataset)
            for _ in range(self.steps):
                try:
                    element = next(self._iterator)
                except StopIteration:
                    self._iterator = iter(self.dataset)
                    try:
                        element = next(self._iterator)
                    except StopIteration:
                        return
                yield self._convert(element)
            return
        for element in self.dataset:
            yield self._convert(element)

    def _convert(self, element):
        x, y, sw = unpack(element)
        x = _map(x, B.convert)
        y = _map(y, B.convert)
        sw = None if sw is None else B.convert(sw)
        if self.class_weight is not None:
            sw = B.convert(_apply_class_weight(_map(y, _to_numpy), self.class_weight,
                                               None if sw is None else sw.numpy()))
        return x, y, sw


def _apply_class_weight(y, class_weight, sample_weight):
    ys = _flat(y)
    if len(ys) != 1:
        raise ValueError("class_weight is supported for models with one output only")
    labels = ys[0]
    if labels.ndim >= 2 and labels.shape[-1] > 1:
        labels = np.argmax(labels, axis=-1)
    labels = labels.reshape(len(labels), -1)[:, 0].astype(np.int64)
    table = np.ones(int(max(max(class_weight), labels.max(initial=0))) + 1, np.float32)
    for k, w in class_weight.items():
        table[int(k)] = w
    weights = table[labels]
    return weights if sample_weight is None else weights * sample_weight


def split_validation(x, y, sample_weight, validation_split):
    """Keras's validation_split: the last fraction of the samples (before any shuffling)."""
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
    n = len(_flat(_map(x, _to_numpy))[0])
    split = int(math.floor(n * (1.0 - validation_split)))
    if split == 0 or split == n:
        raise ValueError(f"validation_split={validation_split} leaves no samples for training or validation "
                         f"({n} samples)")

    def head(a):
        return _to_numpy(a)[:split]

    def tail(a):
        return _to_numpy(a)[split:]
    train = (_map(x, head), _map(y, head), None if sample_weight is None else head(sample_weight))
    val = (_map(x, tail), _map(y, tail), None if sample_weight is None else tail(sample_weight))
    return train, val


def make_batches(x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None, steps=None):
    if is_dataset(x):
        if y is not None:
            raise ValueError("y must be None when x is a dataset (the dataset yields (x, y) pairs)")
        return DatasetBatches(x, steps=steps, class_weight=class_weight)
    if x is None:
        raise ValueError("no data: give x (arrays or a dataset)")
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, class_weight, steps)
