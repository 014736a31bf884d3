"""Imported TensorFlow graphs and the low-level Session."""

from __future__ import annotations

import os

from . import _plexus
from .placement import PlacementReport

_NOT_OUTPUTS = {"NoOp", "Assign", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
                "SaveV2", "RestoreV2", "MergeV2Checkpoints", "VarHandleOp", "VariableV2",
                "Placeholder", "Const"}


def _load_graph(path_or_bytes) -> _plexus.Graph:
    if isinstance(path_or_bytes, _plexus.Graph):
        return path_or_bytes
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return _plexus.Graph.from_bytes(bytes(path_or_bytes), "<bytes>")
    return _plexus.Graph.from_file(os.fspath(path_or_bytes))


def _threads_option(threads) -> int:
    """SessionOptions::intra_op_threads: None (or 0) means the process-wide setting."""
    if threads is None:
        return 0
    threads = int(threads)
    if threads < 0:
        raise ValueError(f"threads is {threads}; use None (the process-wide setting) or 1 or more")
    return threads


def _tensor_name(name: str) -> str:
    return name if ":" in name else f"{name}:0"


class GraphFunction:
    """A graph made callable: feeds in ``inputs`` order, fetches ``outputs``."""

    def __init__(self, graph, inputs=None, outputs=None, device=None, optimize=True, threads=None):
        self.graph = graph
        nodes = graph.nodes()
        if inputs is None:
            inputs = [n["name"] for n in nodes if n["op"] == "Placeholder"]
        if outputs is None:
            outputs = [n["name"] for n in nodes
                       if n["num_consumers"] == 0 and n["output_dtypes"] and n["op"] not in _NOT_OUTPUTS]
        self.inputs = [_tensor_name(n) for n in inputs]
        self.outputs = [_tensor_name(n) for n in outputs]
        self.session = _plexus.Session(graph, device=device, optimize=optimize,
                                       threads=_threads_option(threads))

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.inputs):
            raise TypeError(f"the graph takes {len(self.inputs)} input(s) ({', '.join(self.inputs)}), "
                            f"got {len(args)}")
        feeds = dict(zip(self.inputs, args))
        for key, value in kwargs.items():
            name = _tensor_name(key)
            if name in feeds:
                raise TypeError(f"input {key!r} given twice")
            feeds[name] = value
        results = self.session.run(feeds, self.outputs)
        return results[0] if len(results) == 1 else tuple(results)

    def graph_def(self) -> bytes:
        return self.graph.graph_def()

    def nodes(self) -> list[dict]:
        return self.graph.nodes()

    @property
    def device(self) -> str:
        return self.session.device

    def __repr__(self):
        return f"<plexus GraphFunction inputs={self.inputs} outputs={self.outputs} device={self.device}>"


def import_graph_def(path_or_bytes, inputs=None, outputs=None, device: str | None = None,
                     optimize: bool = True, threads: int | None = None) -> GraphFunction:
    """Imports a TensorFlow GraphDef (a ``.pb``/``.pbtxt`` path or serialized bytes).

    Returns a callable :class:`GraphFunction`. ``inputs`` defaults to the
    graph's placeholders, ``outputs`` to the nodes nothing reads. Errors
    (a malformed file, an unknown op) name the file and the node.
    ``threads`` caps the threads each kernel uses (None: the process-wide
    :func:`plexus.set_num_threads` setting).
    """
    return GraphFunction(_load_graph(path_or_bytes), inputs, outputs, device, optimize, threads)


class Session:
    """TensorFlow 1 style: ``Session(graph).run(fetches, feed_dict)``."""

    def __init__(self, graph, device: str | None = None, optimize: bool = True,
                 threads: int | None = None):
        self.graph = _load_graph(graph.graph if isinstance(graph, GraphFunction) else graph)
        self._session = _plexus.Session(self.graph, device=device, optimize=optimize,
                                        threads=_threads_option(threads))

    def run(self, fetches, feed_dict=None, targets=(), timeout: float | None = None):
        """Runs the graph. ``timeout`` (seconds): a run still going then stops
        between nodes and raises :class:`plexus.errors.DeadlineExceededError`;
        the session stays usable."""
        single = isinstance(fetches, str)
        names = [fetches] if single else list(fetches)
        feeds = {_tensor_name(k): v for k, v in (feed_dict or {}).items()}
        results = self._session.run(feeds, [_tensor_name(n) for n in names], list(targets),
                                    timeout=0.0 if timeout is None else float(timeout))
        return results[0] if single else results

    @property
    def device(self) -> str:
        return self._session.device

    def placement_notes(self) -> list[str]:
        return self._session.placement_notes()

    def placement(self) -> PlacementReport:
        """Where each node of the last run went (see :mod:`plexus.placement`)."""
        return PlacementReport(self._session.placement())

    def optimizer_log(self) -> list[str]:
        return self._session.optimizer_log()
