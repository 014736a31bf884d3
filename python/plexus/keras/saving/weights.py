"""Weights in Keras 3's HDF5 layout (``model.weights.h5``, ``*.weights.h5``).

Each object has a group whose ``vars`` subgroup holds its own variables as
datasets ``0, 1, ...`` (creation order: trainable, then non-trainable).
A model's layers are under ``layers/<layer name>``; a layer's sub-layers
under the name of the attribute that holds them (``cell``,
``forward_layer``, ``query_dense``...). The optimizer is under
``optimizer/vars``: the iteration count, the learning rate, then its slots
for each trainable variable in order.
"""

from __future__ import annotations

import numpy as np

from ...variables import Variable as _PxVariable
from .. import optimizers as O
from ..layers.base import Layer
from ..models.model import Model


def h5py_module():
    try:
        import h5py
    except ImportError as e:  # pragma: no cover
        raise ImportError("reading and writing Keras weight files needs h5py (pip install h5py)") from e
    return h5py


def _own(layer):
    return list(layer._trainable_variables) + list(layer._non_trainable_variables)


def _children(layer):
    """(name in the file, sub-layer) for a layer's sub-layers that are not a model's layers."""
    if isinstance(layer, Model):
        return []
    out, seen = [], set()
    for attr, value in vars(layer).items():
        if isinstance(value, Layer) and id(value) not in seen and value is not layer:
            seen.add(id(value))
            name = attr[1:] if attr.startswith("_") and not attr.startswith("__") else attr
            out.append((name, value))
    return out


def _model_layers(model):
    """(group name, layer) for a model's layers, named as Keras names them in the file: the
    snake_case class name, then _1, _2... for later layers of the same class, in model.layers
    order (not the layers' own names, which are not reproducible)."""
    if not isinstance(model, Model):
        return []
    from ..layers.base import snake_case
    from ..models.functional import OpLayer
    used, out = {}, []
    for layer in model.layers:
        if isinstance(layer, OpLayer):
            continue  # Keras's operations are not saved objects
        base = snake_case("Functional" if type(layer).__name__ == "Functional" else type(layer).__name__)
        if base in used:
            used[base] += 1
            name = f"{base}_{used[base]}"
        else:
            used[base] = 0
            name = base
        out.append((name, layer))
    return out


def _has_weights(layer):
    return bool(layer.weights)


# ---- writing ---------------------------------------------------------------------------

def write_layer(group, layer):
    vars_group = group.create_group("vars")
    for i, v in enumerate(_own(layer)):
        vars_group.create_dataset(str(i), data=v.numpy())
    if isinstance(layer, Model):
        layers_group = group.create_group("layers")
        for name, sub in _model_layers(layer):
            write_layer(layers_group.create_group(name), sub)
    for name, sub in _children(layer):
        if _has_weights(sub) and name not in group:
            write_layer(group.create_group(name), sub)


def write_optimizer(group, optimizer, variables):
    vars_group = group.create_group("vars")
    if optimizer is None or getattr(optimizer, "_step", None) is None:
        return
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    values = [np.asarray(int(round(float(inner._step.numpy()))), np.int64)]
    lr = getattr(inner, "_lr", None)
    if lr is not None and lr.variable is not None:
        values.append(lr.variable.numpy())
    for v in variables:
        for slot in slot_names(inner):
            s = inner._slots.get((v.shared_name, slot))
            values.append(s.numpy() if s is not None else np.zeros(v.shape, v.numpy().dtype))
    for i, value in enumerate(values):
        vars_group.create_dataset(str(i), data=value)


# ---- reading -------------------------------------------------------------------------

class WeightsError(ValueError):
    pass


def _assign(var, data, path):
    value = np.asarray(data[()])
    if tuple(value.shape) != tuple(var.shape):
        raise WeightsError(f"{path}: the file has shape {tuple(value.shape)}, the layer's weight "
                           f"{getattr(var, 'path', var.name)} has shape {tuple(var.shape)}")
    _PxVariable.assign(var, value.astype(str(var.numpy().dtype)))


def read_layer(group, layer, where, skip_mismatch=False):
    """Assigns the weights of `layer` (and its sub-layers) from `group`; returns how many were set."""
    count = 0
    own = _own(layer)
    stored = group["vars"] if "vars" in group else {}
    if len(stored) != len(own):
        if not skip_mismatch:
            raise WeightsError(f"{where}/vars: layer '{layer.name}' ({type(layer).__name__}) has {len(own)} "
                               f"weights of its own ({', '.join(getattr(v, 'path', v.name) for v in own) or 'none'})"
                               f", the file has {len(stored)}")
    else:
        for i, var in enumerate(own):
            try:
                _assign(var, stored[str(i)], f"{where}/vars/{i}")
                count += 1
            except WeightsError:
                if not skip_mismatch:
                    raise
    if isinstance(layer, Model):
        layers_group = group.get("layers")
        for name, sub in _model_layers(layer):
            if not sub.weights:
                continue
            if layers_group is None or name not in layers_group:
                if skip_mismatch:
                    continue
                raise WeightsError(f"{where}/layers: no entry '{name}' for layer '{sub.name}' "
                                   f"(the file has {sorted(layers_group) if layers_group is not None else []})")
            count += read_layer(layers_group[name], sub, f"{where}/layers/{name}", skip_mismatch)
        return count
    for name, sub in _children(layer):
        if not sub.weights:
            continue
        if name not in group:
            if skip_mismatch:
                continue
            raise WeightsError(f"{where}: no entry '{name}' for the sub-layer '{sub.name}' of '{layer.name}' "
                               f"(the file has {sorted(k for k in group if k != 'vars')})")
        count += read_layer(group[name], sub, f"{where}/{name}", skip_mismatch)
    return count


def slot_names(optimizer):
    """Our slot names in Keras's order of optimizer variables per model variable."""
    if isinstance(optimizer, O.Adam):
        return ["m", "v"] + (["vhat"] if optimizer.amsgrad else [])
    if isinstance(optimizer, O.SGD):
        return ["momentum"] if optimizer.momentum else []
    if isinstance(optimizer, O.RMSprop):
        return ["rms"] + (["momentum"] if optimizer.momentum else []) + (["mg"] if optimizer.centered else [])
    if isinstance(optimizer, O.Adagrad):
        return ["accumulator"]
    if isinstance(optimizer, O.Adadelta):
        return ["accumulated_grad", "accumulated_delta_var"]
    if isinstance(optimizer, O.Adamax):
        return ["m", "u"]
    if isinstance(optimizer, O.Lion):
        return ["momentum"]
    return None


def read_optimizer(group, optimizer, variables, where):
    """Restores the optimizer's step, learning rate and slots; False when the layout is not known."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    names = slot_names(inner)
    stored = group.get("vars") if group is not None else None
    if names is None or stored is None or len(stored) == 0:
        return False
    expected = 2 + len(names) * len(variables)
    if len(stored) != expected:
        return False
    import plexus as px
    if inner._step is None:
        inner._step = px.Variable(0.0, trainable=False, name="iterations", dtype="float32")
    inner._step.assign(np.float32(np.asarray(stored["0"][()])))
    if inner._lr.variable is not None:
        inner._lr.variable.assign(np.float32(np.asarray(stored["1"][()])))
    i = 2
    for v in variables:
        for slot in names:
            value = np.asarray(stored[str(i)][()])
            key = (v.shared_name, slot)
            if key not in inner._slots:
                inner._slots[key] = px.Variable(np.zeros(v.shape, value.dtype), trainable=False,
                                                name=f"{v.name}/{slot}")
            if tuple(value.shape) != tuple(v.shape):
                raise WeightsError(f"{where}/vars/{i}: slot '{slot}' of {v.path} has shape {tuple(value.shape)} "
                                   f"in the file, the variable {tuple(v.shape)}")
            inner._slots[key].assign(value)
            i += 1
    return True
