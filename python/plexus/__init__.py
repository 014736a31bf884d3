"""Plexus: a pluggable dataflow runtime for machine learning.

    import plexus as px
    x = px.constant([[1.0, 2.0], [3.0, 4.0]])
    y = px.matmul(x, x) + 1.0
    print(y.numpy())

See docs/python.md for a tour.
"""

from __future__ import annotations

import contextlib as _contextlib
import os as _os
import threading as _threading

from . import errors


def _load_extension():
    # The extension and the core link the system's protobuf. A process that
    # loaded another protobuf first (TensorFlow brings its own, with global
    # symbols) would otherwise resolve some of ours to it and crash:
    # RTLD_DEEPBIND makes the extension's libraries prefer their own.
    import sys
    flags = sys.getdlopenflags()
    deepbind = getattr(_os, "RTLD_DEEPBIND", 0)
    if deepbind and _os.environ.get("PLEXUS_NO_DEEPBIND") != "1":
        sys.setdlopenflags(flags | deepbind)
    try:
        from . import _plexus as extension
    finally:
        sys.setdlopenflags(flags)
    return extension


_plexus = _load_extension()
from ._plexus import (  # noqa: F401  (re-exported)
    DType, Tensor, GraphTensor, as_dtype, constant, from_dlpack, synchronize,
    float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64, bool_, string, complex64, complex128, resource, variant,
)

__version__ = "0.1.0"

_plexus._set_error_classes(dict(errors._BY_CODE))

import atexit as _atexit  # noqa: E402

# Before the interpreter finalizes: waits for queued device work and drops
# this thread's tapes and trace (docs/architecture.md, "Teardown").
_atexit.register(_plexus._at_exit)

bool = bool_  # noqa: A001  (like numpy.bool / tf.bool)
half = float16
double = float64


# ---- plugins and devices ----------------------------------------------------


class PluginInfo(dict):
    """A loaded plugin: name, path, version, abi_version, device_type, num_devices."""

    __getattr__ = dict.__getitem__

    def __repr__(self) -> str:
        return (f"PluginInfo(name={self['name']!r}, abi_version={self['abi_version']!r}, "
                f"num_devices={self['num_devices']}, path={self['path']!r})")


class DeviceInfo(dict):
    """A device: name ("CPU:0"), type, ordinal, description, plugin, host_accessible."""

    __getattr__ = dict.__getitem__

    def __repr__(self) -> str:
        return f"DeviceInfo(name={self['name']!r}, description={self['description']!r}, plugin={self['plugin']!r})"


def plugins() -> list[PluginInfo]:
    """The plugins loaded in this process."""
    return [PluginInfo(p) for p in _plexus.plugins()]


def devices() -> list[DeviceInfo]:
    """The devices of every loaded plugin."""
    return [DeviceInfo(d) for d in _plexus.devices()]


def plugin_load_reports() -> list[dict]:
    """Every plugin file tried, with whether it loaded and why not."""
    return _plexus.load_reports()


def load_plugin(path: str | _os.PathLike) -> PluginInfo:
    """Loads a plugin file; errors (wrong ABI, missing symbols) name the file."""
    return PluginInfo(_plexus.load_plugin(_os.fspath(path)))


def default_device() -> str | None:
    """The best device present (the highest-scoring plugin's first device)."""
    return _plexus.default_device()


def find_device(name: str) -> str:
    """The full name of a device ("cuda" -> "CUDA:0"); NotFoundError lists the devices present."""
    return _plexus.find_device(name)


@_contextlib.contextmanager
def device(name: str | None):
    """Runs the ops of the block on a device: ``with plexus.device("cpu:0"):``.

    Ops whose device has no kernel run on another device (host first), as
    TensorFlow's soft placement does. ``None`` clears the scope.
    """
    previous = _plexus._set_scope_device(name)
    try:
        yield
    finally:
        _plexus._set_scope_device(previous)


# ---- run deadlines -----------------------------------------------------------


def run_timeout(seconds: float):
    """A deadline for every run this thread makes in a ``with`` block.

    Graph runs, SavedModel signatures, imported graphs and traced functions
    (with the loops and functions they call) that are still running when
    ``seconds`` have passed stop between nodes and raise
    :class:`plexus.errors.DeadlineExceededError`; the sessions stay usable.
    Work already queued on a device finishes first; eager ops run one by one
    and are not stopped. Blocks nest: the earlier deadline holds. The
    object's ``expired`` tells whether the deadline passed::

        with plexus.run_timeout(2.0) as deadline:
            result = model(x)
    """
    seconds = float(seconds)
    if not seconds > 0:
        raise ValueError(f"run_timeout: {seconds} seconds; give a positive number")
    return _plexus.RunDeadline(seconds)


# ---- threads ----------------------------------------------------------------


def set_num_threads(threads: int) -> None:
    """Sets how many threads each kernel may use, process-wide.

    It applies to eager ops and to every session, traced function and
    imported graph that sets no ``threads`` of its own, from their next run
    on. ``0`` restores the automatic value: ``PLEXUS_INTRA_OP_THREADS`` when
    set, else the CPUs this process may use (its CPU affinity, capped by its
    cgroup CPU quota). Runs use fewer while other processes keep some of
    those CPUs busy, unless ``PLEXUS_ADAPTIVE_THREADS=0``.
    """
    threads = int(threads)
    if threads < 0:
        raise ValueError(f"set_num_threads: {threads} threads; use 0 (automatic) or more")
    _plexus._set_num_threads(threads)


def get_num_threads() -> int:
    """How many threads each kernel may use: the count set, or the automatic value."""
    return _plexus._num_threads()


def _load_entry_point_plugins() -> None:
    # A vendor package declares [project.entry-points."plexus.plugins"]
    # name = "module:attr", where attr is a plugin path or a function
    # returning one (or a list of them).
    try:
        from importlib.metadata import entry_points
    except ImportError:  # pragma: no cover
        return
    try:
        eps = entry_points(group="plexus.plugins")
    except TypeError:  # Python < 3.10
        eps = entry_points().get("plexus.plugins", [])
    for ep in eps:
        try:
            target = ep.load()
            paths = target() if callable(target) else target
            if isinstance(paths, (str, _os.PathLike)):
                paths = [paths]
            for p in paths:
                load_plugin(p)
        except Exception as e:  # a broken vendor package must not break import
            import warnings
            warnings.warn(f"plexus: plugin entry point {ep.name!r} failed: {e}", RuntimeWarning, stacklevel=2)


if _os.environ.get("PLEXUS_NO_ENTRY_POINTS") != "1":
    _load_entry_point_plugins()


# ---- ops ---------------------------------------------------------------------

from . import _ops  # noqa: E402
from ._ops import *  # noqa: E402,F401,F403  (every op under its public names)
from . import raw_ops, nn, math, linalg, audio, image, io, signal, strings, state, tensor_array, train, v1, random  # noqa: E402,F401,E501
from . import bitwise  # noqa: E402,F401
from . import _tensor_methods  # noqa: E402

_tensor_methods.install((Tensor, GraphTensor))


def _tensor_to(self, device: str) -> Tensor:
    """A copy of the tensor on another device (itself when it is already there)."""
    return self._to(device)


def _tensor_cpu(self) -> Tensor:
    """A copy of the tensor in host memory (itself when it is already there)."""
    return self._to("CPU:0")


Tensor.to = _tensor_to
Tensor.cpu = _tensor_cpu

from .function import function, TensorSpec  # noqa: E402,F401
from .variables import Variable  # noqa: E402,F401
from . import variables  # noqa: E402,F401
from .autodiff import GradientTape, gradients  # noqa: E402,F401
from . import summary  # noqa: E402,F401
from . import optimizers  # noqa: E402,F401
from . import progress  # noqa: E402,F401
from .graph import import_graph_def, GraphFunction, Session  # noqa: E402,F401
from . import saved_model  # noqa: E402,F401
from . import data  # noqa: E402,F401


def __getattr__(name):
    # plexus.keras loads on first use (it is large and most programs do not need it).
    if name == "keras":
        import importlib
        return importlib.import_module(".keras", __name__)
    raise AttributeError(f"module 'plexus' has no attribute {name!r}")


def tensor(value, dtype=None, device=None) -> Tensor:
    """Alias of :func:`constant` (the NumPy/PyTorch spelling)."""
    return constant(value, dtype=dtype, device=device)


def convert_to_tensor(value, dtype=None) -> Tensor:
    """``value`` itself when it is a tensor of ``dtype``, else a new tensor."""
    if isinstance(value, (Tensor, GraphTensor)) and (dtype is None or value.dtype == dtype):
        return value
    return constant(value, dtype=dtype)
