"""Where each node of a run went: the placement report of a session, a traced
function or a SavedModel (``docs/python.md``, "Placement").

    report = session.placement()        # after a run
    print(report)                       # one line per node, copies, summary
    report.nodes_per_device()           # {"CPU:0": 12, "core": 2}
    [n for n in report.nodes if n.reason]   # the nodes not on the run's device
"""
from __future__ import annotations

from typing import NamedTuple


class NodePlacement(NamedTuple):
    node: str
    op: str
    how: str  # "kernel", "host op" or "core"
    device: str  # the kernel's device ("" for the core's own work)
    plugin: str  # the plugin whose kernel ran it ("" unless a kernel)
    reason: str  # why it is not on the run's device, or how a request was honoured
    # A constant computed once, when the executor was built (with its copies
    # to other devices): no work at a run, wherever it was placed.
    once: bool = False


class CopyPlacement(NamedTuple):
    tensor: str  # "node:k"
    source: str  # a device name, or "host memory"
    destination: str
    reader: str  # the node that needed it there


class PlacementReport:
    """The placement of the last run: ``nodes`` in execution order, ``copies``
    between devices, ``device`` (the run's device) and ``summary``. Empty
    before the first run."""

    def __init__(self, raw: dict):
        self.device: str = raw["device"]
        self.nodes = [NodePlacement(*n) for n in raw["nodes"]]
        self.copies = [CopyPlacement(*c) for c in raw["copies"]]
        self.summary: str = raw["summary"]
        self._per_device: dict[str, int] = dict(raw["per_device"])
        self._text: str = raw["text"]

    def nodes_per_device(self) -> dict[str, int]:
        """Node counts by device; host ops and the core's own work count as ``"core"``."""
        return dict(self._per_device)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<plexus PlacementReport on {self.device or 'no run yet'}: {self.summary}>"
