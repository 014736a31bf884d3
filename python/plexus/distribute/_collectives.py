"""The functional layer of plexus.distribute: joining the world and collectives.

Each collective is one of TensorFlow's collective ops (CollectiveReduceV2,
CollectiveGatherV2, CollectiveReduceScatterV2, CollectiveBcastSendV2 /
RecvV2, CollectiveAllToAllV2) over the world's group, so it runs eagerly or
becomes a node of a traced function, and graphs exported by TensorFlow with
the same ops run too.
"""

from __future__ import annotations

import itertools

from .. import _plexus
from .. import raw_ops

# The TensorFlow group key of the world: every rank, one replica each.
WORLD_GROUP_KEY = 1

_instance_keys = itertools.count(1)


class ReduceOp:
    """Reductions (strings work too): ``"sum"``, ``"mean"``, ``"prod"``, ``"min"``, ``"max"``."""
    SUM = "sum"
    MEAN = "mean"
    PROD = "prod"
    MIN = "min"
    MAX = "max"


_MERGE = {"sum": ("Add", "Id"), "mean": ("Add", "Div"), "prod": ("Mul", "Id"), "product": ("Mul", "Id"),
          "min": ("Min", "Id"), "max": ("Max", "Id")}


def init(rank: int | None = None, world_size: int | None = None, *, master_addr: str | None = None,
         master_port: int | None = None, timeout: float | None = None, debug: bool | None = None,
         run_id: str | None = None) -> None:
    """Joins the world of ranks; each argument left out comes from the environment.

    The environment is what ``plexus-run`` sets (PLEXUS_RANK, PLEXUS_WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT, PLEXUS_RUN_ID), or torchrun's (RANK, WORLD_SIZE,
    ...), or Open MPI's (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE). Without
    any, the world is this process alone. Waits for every rank until the
    timeout, then raises DeadlineExceededError naming the ranks that never came.
    """
    _plexus.dist_initialize(
        -1 if rank is None else int(rank), -1 if world_size is None else int(world_size),
        master_addr or "", -1 if master_port is None else int(master_port), run_id or "",
        -1.0 if timeout is None else float(timeout), -1 if debug is None else int(bool(debug)))


def shutdown() -> None:
    """Leaves the world (closes connections; rank 0 stops the store it hosts)."""
    _plexus.dist_shutdown()


def is_initialized() -> bool:
    return _plexus.dist_is_initialized()


def _ensure():
    if not _plexus.dist_is_initialized():
        init()


def rank() -> int:
    """This process's rank (0 when not distributed)."""
    if not _plexus.dist_is_initialized() and _plexus.dist_environment_has_world():
        init()
    return _plexus.dist_rank()


def world_size() -> int:
    """How many ranks the world has (1 when not distributed)."""
    if not _plexus.dist_is_initialized() and _plexus.dist_environment_has_world():
        init()
    return _plexus.dist_world_size()


def _keys():
    _ensure()
    return dict(group_size=_plexus.dist_world_size(), group_key=WORLD_GROUP_KEY,
                instance_key=next(_instance_keys))


def _timeout(timeout):
    return {} if not timeout else {"timeout_seconds": float(timeout)}


def _tensor(x):
    # A Variable is read; tensors, NumPy arrays and lists go to the op as they are.
    if hasattr(x, "read_value") and not isinstance(x, _plexus.Tensor):
        return x.read_value()
    return x


def all_reduce(x, op: str = "sum", *, timeout: float | None = None):
    """Reduces ``x`` over every rank; every rank gets the result (a new tensor)."""
    try:
        merge, final = _MERGE[str(op).lower()]
    except KeyError:
        raise ValueError(f"all_reduce: unknown op {op!r} (expected one of sum, mean, prod, min, max)") from None
    return raw_ops.CollectiveReduceV2(_tensor(x), ordering_token=[], merge_op=merge, final_op=final, **_keys(), **_timeout(timeout))


def all_gather(x, *, timeout: float | None = None):
    """Concatenates every rank's ``x`` along dimension 0, in rank order (sizes of dim 0 may differ)."""
    return raw_ops.CollectiveGatherV2(_tensor(x), ordering_token=[], **_keys(), **_timeout(timeout))


def reduce_scatter(x, op: str = "sum", *, timeout: float | None = None):
    """Reduces ``x`` over every rank, then rank r keeps slice r of ``world_size()`` equal slices of dim 0."""
    try:
        merge, final = _MERGE[str(op).lower()]
    except KeyError:
        raise ValueError(f"reduce_scatter: unknown op {op!r} (expected one of sum, mean, prod, min, max)") from None
    return raw_ops.CollectiveReduceScatterV2(_tensor(x), ordering_token=[], merge_op=merge, final_op=final, **_keys(),
                                             **_timeout(timeout))


def broadcast(x, root: int = 0, *, timeout: float | None = None):
    """Rank ``root``'s ``x`` on every rank (others pass a tensor of the same dtype and shape)."""
    x = _tensor(x)
    keys = _keys()
    if not 0 <= root < keys["group_size"]:
        raise ValueError(f"broadcast: root {root} is not a rank of a world of {keys['group_size']}")
    if keys["group_size"] == 1:
        return raw_ops.Identity(x)
    if _plexus.dist_rank() == root:
        return raw_ops.CollectiveBcastSendV2(x, **keys, **_timeout(timeout))
    return raw_ops.CollectiveBcastRecvV2(shape=list(x.shape), T=x.dtype, **keys, **_timeout(timeout))


def all_to_all(x, *, timeout: float | None = None):
    """Slice j of ``world_size()`` equal slices of dim 0 goes to rank j; the result stacks what each rank sent."""
    return raw_ops.CollectiveAllToAllV2(_tensor(x), ordering_token=[], **_keys(), **_timeout(timeout))


def barrier(timeout: float | None = None) -> None:
    """Waits until every rank has reached the barrier (eager only)."""
    _ensure()
    _plexus.dist_barrier(float(timeout or 0.0))


def broadcast_variables(variables, root: int = 0) -> None:
    """Assigns rank ``root``'s values to ``variables`` on every rank (in the order given)."""
    for v in variables:
        v.assign(broadcast(v.read_value(), root))
