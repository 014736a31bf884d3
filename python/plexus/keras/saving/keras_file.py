"""``.keras`` files (a zip of metadata.json, config.json and model.weights.h5) and ``.weights.h5`` files."""

from __future__ import annotations

import datetime
import io
import json
import os
import tempfile
import zipfile

from .. import __version__ as _keras_version
from .. import losses as L
from .. import metrics as M
from .. import optimizers as O
from . import config as C
from . import weights as W


def _check_path(filepath, suffix, what):
    filepath = os.fspath(filepath)
    if not filepath.endswith(suffix):
        raise ValueError(f"{what}: the file name must end in {suffix}, got {filepath!r}")
    return filepath


def _compile_config(model):
    state = getattr(model, "_compile_state", None)
    if state is None or model.optimizer is None:
        return None
    opt = model.optimizer
    inner = getattr(opt, "inner_optimizer", opt)
    opt_config = inner.get_config()
    if not isinstance(opt_config.get("learning_rate"), (int, float)):
        opt_config["learning_rate"] = _schedule_config(opt_config["learning_rate"])
    optimizer = {"module": "keras.optimizers", "class_name": type(inner).__name__, "config": opt_config,
                 "registered_name": None}
    if inner is not opt:
        optimizer = {"module": "keras.optimizers", "class_name": "LossScaleOptimizer", "registered_name": None,
                     "config": {"name": opt.name, "inner_optimizer": optimizer, "initial_scale": opt.initial_scale,
                                "dynamic_growth_steps": opt.dynamic_growth_steps}}

    def ser_loss(loss):
        if loss is None or isinstance(loss, str):
            return loss
        if isinstance(loss, dict):
            return {k: ser_loss(v) for k, v in loss.items()}
        if isinstance(loss, (list, tuple)):
            return [ser_loss(v) for v in loss]
        if isinstance(loss, L.Loss):
            return L.serialize(loss)
        return getattr(loss, "__name__", None)

    def ser_metric(m):
        if m is None or isinstance(m, str):
            return m
        if isinstance(m, dict):
            return {k: ser_metric(v) for k, v in m.items()}
        if isinstance(m, (list, tuple)):
            return [ser_metric(v) for v in m]
        if isinstance(m, M.Metric):
            return {"module": "keras.metrics", "class_name": type(m).__name__, "config": m.get_config(),
                    "registered_name": None}
        return getattr(m, "__name__", None)
    return {"optimizer": optimizer, "loss": ser_loss(state.loss), "loss_weights": state.loss_weights,
            "metrics": ser_metric(state.metrics_arg), "weighted_metrics": ser_metric(state.weighted_metrics_arg),
            "run_eagerly": False, "steps_per_execution": 1, "jit_compile": False}


def save_model(model, filepath, overwrite=True, **kwargs):
    """Writes `model` as a .keras file that Keras 3 and plexus.keras load."""
    filepath = _check_path(filepath, ".keras", "save")
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"save: {filepath} exists and overwrite=False")
    entry = C.serialize_layer(model)
    compile_config = _compile_config(model)
    if compile_config is not None:
        entry["compile_config"] = compile_config
    metadata = {"keras_version": _keras_version, "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = io.BytesIO()
    h5py = W.h5py_module()
    with h5py.File(weights, "w") as f:
        W.write_layer(f, model)
        W.write_optimizer(f.create_group("optimizer"), model.optimizer, model.trainable_weights)
    directory = os.path.dirname(os.path.abspath(filepath))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".keras", dir=directory)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w") as z:
            z.writestr("metadata.json", json.dumps(metadata))
            z.writestr("config.json", json.dumps(entry, default=_json_default))
            z.writestr("model.weights.h5", weights.getvalue())
        os.replace(tmp, filepath)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return filepath


def _json_default(value):
    import numpy as np
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} into a .keras config")


def _open_keras(filepath):
    try:
        z = zipfile.ZipFile(filepath)
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError(f"{filepath}: not a .keras file (a zip archive): {e}") from e
    names = set(z.namelist())
    for required in ("config.json", "model.weights.h5"):
        if required not in names:
            raise ValueError(f"{filepath}: not a .keras file: it has no {required} (it has {sorted(names)})")
    return z


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """A model from a .keras file written by Keras 3 or by plexus.keras."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"load_model: {filepath!r} is not a .keras file (legacy .h5 files and SavedModel "
                         "directories are not Keras 3 model files; load a SavedModel with plexus.saved_model.load)")
    with _open_keras(filepath) as z:
        try:
            entry = json.loads(z.read("config.json"))
        except (ValueError, zipfile.BadZipFile) as e:
            raise ValueError(f"{filepath}: config.json is not valid JSON: {e}") from e
        model = C.model_from_config(entry, custom_objects, where=filepath, safe_mode=safe_mode)
        _read_weights(z.read("model.weights.h5"), model, filepath, compile, entry.get("compile_config"))
    return model


def _read_weights(data, model, where, compile=False, compile_config=None, skip_mismatch=False):
    h5py = W.h5py_module()
    try:
        f = h5py.File(io.BytesIO(data), "r")
    except OSError as e:
        raise ValueError(f"{where}: model.weights.h5 is not an HDF5 file: {e}") from e
    with f:
        W.read_layer(f, model, f"{where}:model.weights.h5", skip_mismatch)
        if compile and compile_config:
            _compile_from_config(model, compile_config, where)
            if "optimizer" in f:
                W.read_optimizer(f["optimizer"], model.optimizer, model.trainable_weights, where)


# Keras's learning rate schedules that plexus has, with their constructor arguments.
_SCHEDULES = {"ExponentialDecay": ("initial_learning_rate", "decay_steps", "decay_rate", "staircase"),
              "InverseTimeDecay": ("initial_learning_rate", "decay_steps", "decay_rate"),
              "PiecewiseConstantDecay": ("boundaries", "values")}


def _schedule_config(schedule):
    name = type(schedule).__name__
    if name not in _SCHEDULES:
        raise ValueError(f"save: the learning rate schedule {name} cannot be written into a .keras file "
                         f"(known: {', '.join(_SCHEDULES)})")
    attrs = {"initial_learning_rate": "initial"}
    config = {k: getattr(schedule, attrs.get(k, k)) for k in _SCHEDULES[name]}
    if name == "InverseTimeDecay":
        config["staircase"] = False
    return {"module": "keras.optimizers.schedules", "class_name": name, "config": {**config, "name": name},
            "registered_name": None}


def _schedule(entry):
    name, config = entry.get("class_name"), dict(entry.get("config") or {})
    config.pop("name", None)
    if name == "InverseTimeDecay" and config.get("staircase") is False:
        config.pop("staircase")
    if name not in _SCHEDULES or set(config) - set(_SCHEDULES[name]):
        raise ValueError(f"the learning rate schedule {name} with {config} is not supported by plexus.keras "
                         f"(known: {', '.join(_SCHEDULES)}); load with compile=False and compile again")
    return getattr(O.schedules, name)(**config)


def _optimizer(entry):
    if isinstance(entry, dict) and entry.get("class_name") == "LossScaleOptimizer":
        config = dict(entry.get("config") or {})
        return O.LossScaleOptimizer(_optimizer(config["inner_optimizer"]), config.get("initial_scale", 32768.0),
                                    config.get("dynamic_growth_steps", 2000), name=config.get("name"))
    if isinstance(entry, dict) and isinstance((entry.get("config") or {}).get("learning_rate"), dict):
        entry = {**entry, "config": {**entry["config"], "learning_rate": _schedule(entry["config"]["learning_rate"])}}
    return O.get(entry)


def _compile_from_config(model, config, where):
    try:
        optimizer = _optimizer(config["optimizer"]) if config.get("optimizer") else "rmsprop"
        model.compile(optimizer=optimizer, loss=_loss(config.get("loss")), loss_weights=config.get("loss_weights"),
                      metrics=_metric(config.get("metrics")), weighted_metrics=_metric(config.get("weighted_metrics")))
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: cannot restore the compile settings {json.dumps(config)[:300]}: {e}") from e


def _loss(value):
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _loss(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_loss(v) for v in value]
    if isinstance(value, dict):
        return L.get(value)
    return value


def _metric(value):
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _metric(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_metric(v) for v in value]
    if isinstance(value, dict):
        return M.get(value)
    return value


def save_weights(model, filepath, overwrite=True):
    filepath = _check_path(filepath, ".weights.h5", "save_weights")
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"save_weights: {filepath} exists and overwrite=False")
    h5py = W.h5py_module()
    with h5py.File(filepath, "w") as f:
        W.write_layer(f, model)
    return filepath


def load_weights(model, filepath, skip_mismatch=False):
    filepath = os.fspath(filepath)
    if filepath.endswith(".keras"):
        with _open_keras(filepath) as z:
            _read_weights(z.read("model.weights.h5"), model, filepath, skip_mismatch=skip_mismatch)
        return
    if not filepath.endswith(".weights.h5"):
        raise ValueError(f"load_weights: {filepath!r} must end in .weights.h5 or .keras")
    h5py = W.h5py_module()
    try:
        f = h5py.File(filepath, "r")
    except OSError as e:
        raise ValueError(f"{filepath}: not an HDF5 weights file: {e}") from e
    with f:
        W.read_layer(f, model, filepath, skip_mismatch)
