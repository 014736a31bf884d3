"""Saving and loading: .keras files, .weights.h5 files, SavedModel export, configs."""

from .config import (ConfigError, deserialize_layer, functional_from_config, model_from_config,  # noqa: F401
                     sequential_from_config, serialize_layer)
from .export import clone_model, export_saved_model  # noqa: F401
from .keras_file import load_model, load_weights, save_model, save_weights  # noqa: F401
from .weights import WeightsError  # noqa: F401
from .registry import get_custom_objects, get_registered_name, register_keras_serializable  # noqa: F401
