"""plexus.keras: Keras 3's API (layers, models, training, .keras files) on the plexus runtime.

    from plexus import keras
    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(16, 3, activation="relu"),
                              keras.layers.Flatten(), keras.layers.Dense(10)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, y, epochs=5, validation_split=0.1)

Layers compute with plexus ops; Model.fit traces its train step once and
runs it as one graph per batch. Constructor arguments, defaults, weight
layouts and configs follow Keras 3, so ``.keras`` files move between the
two. See docs/keras.md.
"""

from __future__ import annotations

from . import activations, callbacks, constraints, initializers, layers, losses, metrics  # noqa: F401
from . import mixed_precision, optimizers, regularizers, utils  # noqa: F401
from . import models  # noqa: F401
from ._backend import floatx, set_floatx  # noqa: F401
from .models import Input, Model, Sequential, load_model  # noqa: F401
from .variables import KerasVariable as Variable  # noqa: F401

__version__ = "3.15.1"  # the Keras API version this package follows


class backend:  # noqa: N801  (keras.backend's few functions users call)
    clear_session = staticmethod(utils.clear_session)
    floatx = staticmethod(floatx)
    set_floatx = staticmethod(set_floatx)


def __getattr__(name):
    if name == "saving":
        import importlib
        return importlib.import_module(".saving", __name__)
    raise AttributeError(f"module 'plexus.keras' has no attribute {name!r}")
