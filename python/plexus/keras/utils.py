"""A few of keras.utils: to_categorical, normalize, set_random_seed, and clear_session in keras.backend."""

from __future__ import annotations

import random

import numpy as np


def to_categorical(x, num_classes=None):
    """Class indices as one-hot float32 rows (the last axis of size 1 is dropped first, as in Keras)."""
    x = np.asarray(x, dtype="int64")
    if x.ndim > 1 and x.shape[-1] == 1:
        x = x[..., 0]
    if num_classes is None:
        num_classes = int(x.max()) + 1
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must be in [0, {num_classes}), got [{x.min()}, {x.max()}]")
    return np.eye(num_classes, dtype="float32")[x]


def normalize(x, axis=-1, order=2):
    x = np.asarray(x, dtype="float32")
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.where(norm == 0, 1, norm)


def set_random_seed(seed):
    """Seeds Python's and NumPy's generators, which draw initial weights and shuffle fit's data."""
    random.seed(seed)
    np.random.seed(seed)


def clear_session():
    """Restarts layer naming ("dense", "dense_1", ...) as Keras's clear_session does."""
    from .layers.base import _name_counts
    _name_counts.clear()
