"""plexus-cuda: the CUDA device plugin of Plexus as a pip package.

Nothing to call: ``import plexus`` finds this package through the
``plexus.plugins`` entry point and loads the plugin, so ``CUDA:0`` appears
where an NVIDIA GPU and its driver are present (and none where they are not:
the plugin then reports 0 devices and says why at info level,
``PLEXUS_LOG_LEVEL=info``).

The plugin opens NVIDIA's libraries (cuBLASLt, cuDNN, NVRTC, NCCL) on first
use from the ``nvidia`` packages installed beside this one; its run path
names their folders relative to its own.
"""

from __future__ import annotations

import pathlib

__all__ = ["plugin_path", "plugin_paths", "library_dirs"]

_HERE = pathlib.Path(__file__).resolve().parent
_PLUGIN = "libplexus_plugin_cuda.so"
# The folders of NVIDIA's pip packages the plugin's run path names (CUDA 13
# wheels put cuBLAS and NVRTC in nvidia/cu13/lib).
_LIBRARY_DIRS = ("nvidia/cu13/lib", "nvidia/cudnn/lib", "nvidia/nccl/lib")


def plugin_path() -> str:
    """The plugin file of this package."""
    path = _HERE / _PLUGIN
    if not path.is_file():
        raise FileNotFoundError(f"plexus-cuda: {path} is missing; reinstall the package")
    return str(path)


def plugin_paths() -> list:
    """The plugins to load (the ``plexus.plugins`` entry point)."""
    return [plugin_path()]


def library_dirs() -> list:
    """The folders where the plugin looks for NVIDIA's libraries, as installed here."""
    return [str(_HERE.parent / d) for d in _LIBRARY_DIRS]
