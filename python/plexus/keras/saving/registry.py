"""Custom classes known to every load: keras.saving.register_keras_serializable and friends."""

from __future__ import annotations

_REGISTRY: dict = {}  # "package>Name" -> class
_NAMES: dict = {}  # class -> "package>Name"


def register_keras_serializable(package="Custom", name=None):
    """Class decorator: files that name the class ("package>Name") load it without custom_objects."""
    def decorate(cls):
        key = f"{package}>{name or cls.__name__}"
        if key in _REGISTRY and _REGISTRY[key] is not cls:
            raise ValueError(f"{key} is already registered to {_REGISTRY[key]}")
        _REGISTRY[key] = cls
        _NAMES[cls] = key
        return cls
    return decorate


def get_custom_objects():
    """The registered classes, keyed by their "package>Name" (a live dict, as in Keras)."""
    return _REGISTRY


def get_registered_name(cls):
    return _NAMES.get(cls, cls.__name__)


def get_registered_object(name, custom_objects=None):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    return _REGISTRY.get(name)
