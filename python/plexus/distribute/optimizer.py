"""Gradient averaging for data-parallel training, in buckets (Horovod's tensor fusion).

Gradients of one dtype are flattened and concatenated into buckets of at
most ``bucket_bytes``, each bucket is all-reduced as one tensor, and the
results are split back: a few large collectives instead of one per variable.
Works eagerly and inside ``plexus.function`` (each bucket becomes a
CollectiveReduceV2 node).
"""

from __future__ import annotations

import math

from .. import raw_ops
from . import _collectives

DEFAULT_BUCKET_BYTES = 25 << 20


def _static_size(g):
    shape = getattr(g, "shape", None)
    if shape is None or any(d is None or (isinstance(d, int) and d < 0) for d in shape):
        return None
    return int(math.prod(shape))


def all_reduce_gradients(grads, op: str = "mean", *, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                         timeout: float | None = None):
    """All-reduces each gradient (None stays None), bucketed by dtype; returns a list in the same order."""
    grads = list(grads)
    out = list(grads)
    if _collectives.world_size() == 1:
        return out
    buckets = []   # (dtype, [indices], bytes)
    open_bucket = {}
    for i, g in enumerate(grads):
        if g is None:
            continue
        n = _static_size(g)
        if n is None:  # shape known only at run time: reduce it alone
            out[i] = _collectives.all_reduce(g, op, timeout=timeout)
            continue
        nbytes = n * g.dtype.itemsize
        b = open_bucket.get(g.dtype)
        if b is None or (b[2] + nbytes > bucket_bytes and b[1]):
            b = [g.dtype, [], 0]
            buckets.append(b)
            open_bucket[g.dtype] = b
        b[1].append(i)
        b[2] += nbytes
    for _, indices, _ in buckets:
        if len(indices) == 1:
            i = indices[0]
            out[i] = _collectives.all_reduce(grads[i], op, timeout=timeout)
            continue
        flat = [raw_ops.Reshape(grads[i], [-1]) for i in indices]
        sizes = [_static_size(grads[i]) for i in indices]
        reduced = _collectives.all_reduce(raw_ops.ConcatV2(flat, 0), op, timeout=timeout)
        pieces = raw_ops.SplitV(reduced, sizes, 0, num_split=len(sizes))
        for i, piece in zip(indices, pieces):
            out[i] = raw_ops.Reshape(piece, list(grads[i].shape))
    return out


class DistributedOptimizer:
    """Wraps an optimizer so that every rank applies the gradients averaged over all ranks::

        opt = dist.DistributedOptimizer(px.optimizers.SGD(0.1))
        opt.apply_gradients(zip(grads, variables))     # grads are this rank's
    """

    def __init__(self, optimizer, op: str = "mean", *, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                 timeout: float | None = None):
        self._optimizer = optimizer
        self._op = op
        self._bucket_bytes = bucket_bytes
        self._timeout = timeout

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        grads = all_reduce_gradients([g for g, _ in pairs], self._op, bucket_bytes=self._bucket_bytes,
                                     timeout=self._timeout)
        return self._optimizer.apply_gradients(zip(grads, [v for _, v in pairs]))

    def minimize(self, loss_fn, var_list):
        from ..autodiff import GradientTape
        var_list = list(var_list)
        with GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, var_list)
        self.apply_gradients(zip(grads, var_list))
        return loss

    def __getattr__(self, name):
        return getattr(self._optimizer, name)
