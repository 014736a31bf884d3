"""Keras 3's layers (``plexus.keras.layers``), over plexus ops.

Each module defines ``__all__``; this package re-exports them all.
"""

from __future__ import annotations

import importlib as _importlib

from .base import Layer  # noqa: F401

_MODULES = ("core", "activation_layers", "merge", "conv", "pooling", "reshaping", "preprocessing",
            "normalization", "rnn", "attention")
__all__ = ["Layer"]
for _name in _MODULES:
    try:
        _module = _importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as _e:  # a module not written yet
        if _e.name != f"{__name__}.{_name}":
            raise
        continue
    for _attr in getattr(_module, "__all__", [n for n in dir(_module) if n[:1].isupper()]):
        globals()[_attr] = getattr(_module, _attr)
        __all__.append(_attr)
del _name, _module, _attr, _importlib

from ..models.functional import Input, InputLayer  # noqa: E402,F401

__all__ += ["Input", "InputLayer"]
