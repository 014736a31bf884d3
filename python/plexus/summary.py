"""TensorBoard summaries: scalars and histograms in event files, like tf.summary.

    import numpy as np
    import plexus.summary

    writer = plexus.summary.create_file_writer("logs/train")
    with writer.as_default(step=0):
        for step in range(100):
            plexus.summary.scalar("loss", 1.0 / (step + 1), step=step)
            plexus.summary.histogram("weights", np.random.randn(1000), step=step)
    writer.close()

Then `tensorboard --logdir logs`. The files are TensorFlow's event files
(events.out.tfevents.*): scalars as simple values, histograms as
HistogramProtos with TensorFlow's default exponential buckets. Values reach
the file on flush(), close(), and otherwise within `flush_millis`.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

import numpy as np

from . import _plexus

__all__ = ["SummaryWriter", "create_file_writer", "scalar", "histogram", "flush"]

# The default writer and step of each thread (TensorFlow's are per thread too):
# a stack of (writer, step) pushed by `with writer.as_default(step=...)`.
_state = threading.local()


def _stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def _to_step(step: Any) -> int:
    # A step may be anything with a single integer value: a Python or NumPy
    # integer, a plexus Tensor, a variable (read when the value is written).
    if isinstance(step, (int, np.integer)):
        return int(step)
    if hasattr(step, "numpy"):
        step = step.numpy()
    elif hasattr(step, "value") and callable(step.value):
        step = np.asarray(step.value())
    arr = np.asarray(step)
    if arr.size != 1 or not (np.issubdtype(arr.dtype, np.integer) or
                             np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"a summary step must be a single integer, not {step!r}")
    return int(arr.reshape(()))


def _to_float(value: Any, name: str) -> float:
    if isinstance(value, (int, float, np.number)):
        return float(value)
    arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if arr.size != 1:
        raise ValueError(f"summary scalar {name!r} must have one value, not shape {arr.shape}")
    return float(arr.reshape(()))


def _to_values(values: Any) -> Any:
    # plexus Tensors go to the core as they are (copied from their device
    # there); everything else through NumPy, contiguous, keeping its dtype.
    if isinstance(values, _plexus.Tensor):
        return values
    arr = np.ascontiguousarray(values)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.uint8)
    return arr


class SummaryWriter:
    """Writes one TensorBoard event file in a log directory.

    Use create_file_writer() to make one. A context manager: `with` closes the
    writer at the end; as_default() makes it the target of plexus.summary.scalar
    and histogram instead.
    """

    def __init__(self, impl: Any):
        self._impl = impl

    @property
    def logdir(self) -> str:
        return self._impl.logdir

    @property
    def filename(self) -> str:
        """The event file's path."""
        return self._impl.filename

    @property
    def closed(self) -> bool:
        return self._impl.closed

    def scalar(self, tag: str, value: Any, step: Any) -> None:
        """Writes a scalar (a number, or a one-element Tensor or array) at `step`."""
        self._impl.scalar(tag, _to_float(value, tag), _to_step(step))

    def histogram(self, tag: str, values: Any, step: Any) -> None:
        """Writes the histogram of all the values of a Tensor, NumPy array or list."""
        self._impl.histogram(tag, _to_values(values), _to_step(step))

    def graph(self, graph_def: bytes, step: Any = 0) -> None:
        """Writes a serialized GraphDef as the run's graph (TensorBoard's Graphs tab)."""
        import struct
        import time as _time

        from ._protowire import varint

        graph_def = bytes(graph_def)
        # Event: wall_time (1, double), step (2, varint), graph_def (4, bytes).
        event = (b"\x09" + struct.pack("<d", _time.time()) + b"\x10" + varint(_to_step(step)) +
                 b"\x22" + varint(len(graph_def)) + graph_def)
        self._impl.write_event(event)

    def flush(self) -> None:
        """Writes everything buffered to the file."""
        self._impl.flush()

    def close(self) -> None:
        """Flushes and closes the file; later writes raise FailedPreconditionError."""
        self._impl.close()

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator["SummaryWriter"]:
        """Makes this the default writer (of this thread) inside the block.

        `step` (an int, Tensor or variable, read at each write) is the step of
        plexus.summary.scalar/histogram calls that give none.
        """
        stack = _stack()
        stack.append((self, step))
        try:
            yield self
        finally:
            stack.pop()
            if not self.closed:
                self.flush()

    def set_as_default(self, step: Any = None) -> None:
        """Makes this the default writer of this thread until another is set."""
        stack = _stack()
        stack.clear()
        stack.append((self, step))

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<plexus.summary.SummaryWriter {self.filename!r}{' (closed)' if self.closed else ''}>"


def create_file_writer(logdir: str, max_queue: Optional[int] = None,
                       flush_millis: Optional[int] = None,
                       filename_suffix: Optional[str] = None,
                       name: Optional[str] = None) -> SummaryWriter:
    """A writer of a new event file in `logdir` (created when missing).

    `flush_millis` (default 5000): longest time a value stays buffered.
    `max_queue` is accepted for TensorFlow compatibility; the buffer is
    written when it holds 1 MiB. `name` is ignored.
    """
    del max_queue, name
    interval = 5.0 if flush_millis is None else max(float(flush_millis), 1.0) / 1000.0
    impl = _plexus._create_summary_writer(str(logdir), flush_interval_seconds=interval,
                                          filename_suffix=filename_suffix or "")
    return SummaryWriter(impl)


def _default(step: Any) -> Optional[tuple[SummaryWriter, int]]:
    stack = _stack()
    if not stack:
        return None
    writer, default_step = stack[-1]
    if step is None:
        step = default_step
    if step is None:
        raise ValueError("no step given and the default writer has no step: pass step=... "
                         "or use writer.as_default(step=...)")
    return writer, _to_step(step)


def scalar(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> bool:
    """Writes a scalar to the default writer; False (nothing written) when there is none."""
    target = _default(step)
    if target is None:
        return False
    writer, step = target
    writer.scalar(name, data, step)
    return True


def histogram(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> bool:
    """Writes the histogram of `data` to the default writer; False when there is none."""
    target = _default(step)
    if target is None:
        return False
    writer, step = target
    writer.histogram(name, data, step)
    return True


def flush(writer: Optional[SummaryWriter] = None) -> None:
    """Flushes `writer`, or the default writer when there is one."""
    if writer is None:
        stack = _stack()
        if not stack:
            return
        writer = stack[-1][0]
    writer.flush()
