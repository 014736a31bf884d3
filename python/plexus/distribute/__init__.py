"""Data-parallel training on several processes: collectives, a strategy, a launcher.

One replica per process. Start N processes with the launcher::

    plexus-run --nproc 4 train.py          # or: python -m plexus.distribute.run --nproc 4 train.py
                                           # or: mpirun -n 4 python train.py; or torchrun

and in the script::

    import plexus as px
    import plexus.distribute as dist

    dist.init()                            # rank, world size and store from the environment
    y = dist.all_reduce(x, op="mean")      # eager: runs now; in @px.function: a CollectiveReduceV2 node
    dist.broadcast(v, root=0); dist.all_gather(x); dist.reduce_scatter(x); dist.barrier()

Collectives run on host tensors over Gloo's TCP transport (tensors on a
device are copied to the host and back). Every rank must issue the same
collectives in the same order. Failures are errors, never hangs: each
collective has a deadline (``init(timeout=...)``, ``PLEXUS_DIST_TIMEOUT``,
default 300 s); a dead peer raises :class:`plexus.errors.UnavailableError`
and a silent one :class:`plexus.errors.DeadlineExceededError`, naming the
rank, on every surviving rank. After such an error the communicator is
poisoned: restart the run (from a checkpoint) to recover.
``PLEXUS_DIST_DEBUG=1`` checks that every rank issues the same collective
with the same dtype and shape, and names the rank that differs.
"""

from __future__ import annotations

from ._collectives import (  # noqa: F401
    init, shutdown, is_initialized, rank, world_size, all_reduce, all_gather, reduce_scatter,
    broadcast, all_to_all, barrier, broadcast_variables, ReduceOp,
)
from .optimizer import DistributedOptimizer, all_reduce_gradients  # noqa: F401
from .strategy import MultiWorkerMirroredStrategy, save_checkpoint, restore_checkpoint  # noqa: F401
