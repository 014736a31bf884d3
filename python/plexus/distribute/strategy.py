"""A MultiWorkerMirroredStrategy-like facade: one replica per process.

::

    strategy = dist.MultiWorkerMirroredStrategy()
    with strategy.scope():                 # variables made here start equal on every rank
        model = build()
    for batch in strategy.experimental_distribute_dataset(batches):   # this rank's share
        loss = strategy.run(train_step, args=(batch,))
        mean_loss = strategy.reduce("mean", loss)

Variables created inside ``scope()`` get rank 0's values when the scope ends.
Gradients are averaged by :class:`DistributedOptimizer` or
:func:`all_reduce_gradients`. Checkpoints: rank 0 writes
(:func:`save_checkpoint`), every rank restores (:func:`restore_checkpoint`).
"""

from __future__ import annotations

import contextlib
import re

import numpy as np

from .. import raw_ops
from .. import variables as _variables
from . import _collectives


def _op_name(op) -> str:
    name = getattr(op, "name", None) or getattr(op, "value", None) or str(op)
    return str(name).split(".")[-1].lower()


def _creation_order(shared_name: str) -> int:
    m = re.search(r"_(\d+)$", shared_name)
    return int(m.group(1)) if m else 0


class MultiWorkerMirroredStrategy:
    """Data parallelism over the world of ranks (``plexus-run``, mpirun or torchrun set it up)."""

    def __init__(self, cluster_resolver=None, communication_options=None, *, timeout: float | None = None):
        if cluster_resolver is not None:
            raise NotImplementedError("MultiWorkerMirroredStrategy: ranks come from the launcher's environment; "
                                      "cluster_resolver is not supported")
        t = timeout if timeout is not None else getattr(communication_options, "timeout_seconds", None)
        if not _collectives.is_initialized():
            _collectives.init(timeout=t)

    @property
    def num_replicas_in_sync(self) -> int:
        return _collectives.world_size()

    @property
    def worker_index(self) -> int:
        return _collectives.rank()

    @contextlib.contextmanager
    def scope(self):
        before = set(_variables._live.keys())
        yield self
        created = sorted((k for k in list(_variables._live.keys()) if k not in before), key=_creation_order)
        _collectives.broadcast_variables([_variables._live[k] for k in created if k in _variables._live])

    def run(self, fn, args=(), kwargs=None):
        """Runs ``fn`` as this process's replica (one per process)."""
        return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis=None):
        """Reduces ``value`` across replicas ("sum" or "mean"); with ``axis``, also along that axis."""
        op = _op_name(reduce_op)
        if op not in ("sum", "mean"):
            raise ValueError(f"reduce: reduce_op must be SUM or MEAN, not {reduce_op!r}")
        if axis is None:
            return _collectives.all_reduce(value, op)
        total = _collectives.all_reduce(raw_ops.Sum(value, axis, keep_dims=False), "sum")
        if op == "sum":
            return total
        count = np.array(value.shape[axis], dtype=np.float64)
        count = _collectives.all_reduce(count, "sum")
        return raw_ops.RealDiv(total, raw_ops.Cast(count, DstT=total.dtype))

    def experimental_distribute_dataset(self, dataset):
        """Yields this rank's contiguous share of every global batch (dim 0 split into world_size pieces)."""
        n, r = _collectives.world_size(), _collectives.rank()

        def share(x):
            size = x.shape[0]
            if size % n:
                raise ValueError(f"a global batch of {size} does not split evenly over {n} replicas")
            k = size // n
            return x[r * k:(r + 1) * k]

        for batch in dataset:
            if isinstance(batch, (tuple, list)):
                yield type(batch)(share(np.asarray(b) if not hasattr(b, "shape") else b) for b in batch)
            elif isinstance(batch, dict):
                yield {k: share(v) for k, v in batch.items()}
            else:
                yield share(batch)

    def gather(self, value, axis=0):
        """Concatenates every replica's ``value`` along ``axis`` (0 only)."""
        if axis != 0:
            raise NotImplementedError("gather: only axis 0")
        return _collectives.all_gather(value)


def save_checkpoint(checkpoint, file_prefix: str) -> str:
    """Rank 0 writes ``checkpoint`` to ``file_prefix``; every rank waits for it; returns the prefix."""
    path = file_prefix
    if _collectives.rank() == 0:
        path = checkpoint.write(file_prefix)
    if _collectives.world_size() > 1:
        _collectives.barrier()
    return path


def restore_checkpoint(checkpoint, save_path: str):
    """Every rank restores rank 0's checkpoint (the path must be readable by every rank)."""
    status = checkpoint.restore(save_path)
    if _collectives.world_size() > 1:
        _collectives.barrier()
    return status
