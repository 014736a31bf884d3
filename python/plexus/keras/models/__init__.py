"""Models: Model (functional and subclassed), Sequential, and the functional API's Input."""

from .functional import Input, InputLayer, KerasTensor  # noqa: F401
from .model import Functional, Model  # noqa: F401
from .sequential import Sequential  # noqa: F401


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a .keras file written by Keras 3 or by plexus.keras."""
    from ..saving import load_model as _load
    return _load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same architecture and freshly initialized weights."""
    from ..saving import clone_model as _clone
    return _clone(model)
