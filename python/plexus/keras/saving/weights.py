"""Weights in Keras 3's HDF5 layout (``model.weights.h5``, ``*.weights.h5``).

Each object has a group whose ``vars`` subgroup holds its own variables as
datasets ``0, 1, ...`` (creation order: trainable, then non-trainable).
A model's layers are under ``layers/<layer name>``; a layer's sub-layers
under the name of the attribute that holds them (``cell``,
``forward_layer``, ``query_dense``...). The optimizer is under
``optimizer/vars``: the iteration count, the learning rate (absent with a
schedule), then its slots in Keras's order (see ``_layout``).
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


def _graph_model(obj):
    """Functional and Sequential models save their layers as ``layers/<snake_case class>``."""
    from ..models.model import Functional
    from ..models.sequential import Sequential
    return isinstance(obj, (Functional, Sequential))


_BASE_ATTRS = None


def _base_attrs():
    """Attribute names of the base Layer and Model, which are never saved objects (Keras skips
    the attributes of its own base Layer likewise)."""
    global _BASE_ATTRS
    if _BASE_ATTRS is None:
        _BASE_ATTRS = set(dir(Model)) | set(vars(Model(name="attributes_probe")))
    return _BASE_ATTRS


def _name_key(name):
    # Keras visits public attributes first, then private ones.
    return "~" + name if name.startswith("_") else name


def _children(layer):
    """(name in the file, sub-layer or list of them) for the sub-objects Keras saves under a
    layer or subclassed model: its attributes holding layers, in Keras's order (public names
    first, sorted), each object once. Lists, tuples and dicts of layers are containers whose
    entries are named by snake_case class name (``blocks/dense``, ``blocks/dense_1``). Our
    built-in layers keep sub-layers in private attributes where Keras has public properties
    (``_query_dense`` for ``query_dense``), so their leading underscore is dropped."""
    if _graph_model(layer):
        return []
    skip = _base_attrs()
    names = set(vars(layer))
    for klass in type(layer).__mro__:
        if klass in (Layer, Model) or klass.__module__.startswith("plexus.keras.models"):
            continue
        names.update(n for n, v in vars(klass).items() if isinstance(v, property))
    builtin = type(layer).__module__.startswith("plexus.keras.")
    out, seen = [], {id(layer)}
    for attr in sorted((n for n in names if not n.startswith("__") and n not in skip), key=_name_key):
        try:
            value = getattr(layer, attr)
        except Exception:  # noqa: BLE001  (a property that cannot be read now holds no layer)
            continue
        name = attr[1:] if builtin and attr.startswith("_") else attr
        if isinstance(value, Layer):
            if id(value) not in seen:
                seen.add(id(value))
                out.append((name, value))
        elif isinstance(value, (list, tuple, dict)):
            items = _container(value, seen)
            if items:
                out.append((name, items))
    return out


def _container(value, seen):
    """[(name, layer or nested container)] for a list, tuple or dict attribute, named as Keras
    names a container's entries."""
    from ..layers.base import snake_case
    values = list(value.values()) if isinstance(value, dict) else list(value)
    used, out = {}, []

    def unique(base):
        if base in used:
            used[base] += 1
            return f"{base}_{used[base]}"
        used[base] = 0
        return base
    for v in values:
        if isinstance(v, Layer):
            keras_class = getattr(v, "_keras_class", None)
            name = unique(snake_case(keras_class[1] if keras_class else type(v).__name__))
            if id(v) not in seen:
                seen.add(id(v))
                out.append((name, v))
        elif isinstance(v, (list, tuple, dict)):
            name = unique("container")
            items = _container(v, seen)
            if items:
                out.append((name, items))
    return out


def _model_layers(model):
    """(group name, layer) for a model's layers, named as Keras names them in the file: the
    snake_case class name, then _1, _2... for later layers of the same class, in model.layers
    order (not the layers' own names, which are not reproducible)."""
    if not _graph_model(model):
        return []
    from ..layers.base import snake_case
    from ..models.functional import OpLayer
    used, out = {}, []
    for layer in model.layers:
        if isinstance(layer, OpLayer):
            continue  # Keras's operations are not saved objects
        keras_class = getattr(layer, "_keras_class", None)
        base = snake_case(keras_class[1] if keras_class else type(layer).__name__)
        if base in used:
            used[base] += 1
            name = f"{base}_{used[base]}"
        else:
            used[base] = 0
            name = base
        out.append((name, layer))
    return out


def _has_weights(sub):
    if isinstance(sub, list):  # a container: [(name, layer or container)]
        return any(_has_weights(v) for _, v in sub)
    return bool(sub.weights)


# ---- writing ---------------------------------------------------------------------------

def write_layer(group, layer):
    vars_group = group.create_group("vars")
    for i, v in enumerate(_own(layer)):
        vars_group.create_dataset(str(i), data=v.numpy())
    if _graph_model(layer):
        layers_group = group.create_group("layers")
        for name, sub in _model_layers(layer):
            write_layer(layers_group.create_group(name), sub)
    _write_children(group, _children(layer))


def _write_children(group, children):
    for name, sub in children:
        if name in group or not _has_weights(sub):
            continue
        if isinstance(sub, list):
            _write_children(group.create_group(name), sub)
        else:
            write_layer(group.create_group(name), sub)


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
    if _graph_model(layer):
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
    return count + _read_children(group, _children(layer), layer, where, skip_mismatch)


def _read_children(group, children, layer, where, skip_mismatch):
    count = 0
    for name, sub in children:
        if not _has_weights(sub):
            continue
        if name not in group:
            if skip_mismatch:
                continue
            what = f"the sub-layer '{sub.name}'" if isinstance(sub, Layer) else "the layers in attribute"
            raise WeightsError(f"{where}: no entry '{name}' for {what} of '{layer.name}' "
                               f"(the file has {sorted(k for k in group if k != 'vars')})")
        if isinstance(sub, list):
            count += _read_children(group[name], sub, layer, f"{where}/{name}", skip_mismatch)
        else:
            count += read_layer(group[name], sub, f"{where}/{name}", skip_mismatch)
    return count


# ---- the optimizer -------------------------------------------------------------------

def _layout(optimizer):
    """Keras's optimizer variables after the iteration count and learning rate: groups of our
    slot names (Keras creates each group for all model variables, interleaving the names within
    a group), then scalar attributes; None for an optimizer whose layout is not known."""
    if isinstance(optimizer, O.Adam):  # AdamW too
        return [["m", "v"]] + ([["vhat"]] if optimizer.amsgrad else []), []
    if isinstance(optimizer, O.SGD):
        return ([["momentum"]] if optimizer.momentum else []), []
    if isinstance(optimizer, O.RMSprop):
        return [["rms"]] + ([["momentum"]] if optimizer.momentum else []) + ([["mg"]] if optimizer.centered
                                                                             else []), []
    if isinstance(optimizer, O.Nadam):
        return [["m", "v"]], ["_u_product"]
    if isinstance(optimizer, O.Adagrad):
        return [["accumulator"]], []
    if isinstance(optimizer, O.Adadelta):
        return [["accumulated_grad", "accumulated_delta_var"]], []
    if isinstance(optimizer, O.Adamax):
        return [["m", "u"]], []
    if isinstance(optimizer, O.Lion):
        return [["momentum"]], []
    return None


def slot_names(optimizer):
    """Our slot names in Keras's order (flattened groups), or None for an unknown optimizer."""
    layout = _layout(optimizer)
    return None if layout is None else [n for group in layout[0] for n in group]


def _lr_now(inner):
    if inner._lr.variable is not None:
        return float(inner._lr.variable.numpy())
    import plexus as px
    step = inner._step.read_value() if inner._step is not None else px.constant(0.0)
    return float(np.asarray(inner._lr(step).numpy()))


def _to_keras(inner, slot, value):
    # Keras's SGD keeps m = momentum * m - lr * g and adds it; plexus keeps TensorFlow's
    # accumulator a = momentum * a + g and subtracts lr * a, so m = -lr * a.
    if isinstance(inner, O.SGD) and slot == "momentum":
        return -_lr_now(inner) * value
    return value


def _from_keras(inner, slot, value):
    if isinstance(inner, O.SGD) and slot == "momentum":
        lr = _lr_now(inner)
        return -value / lr if lr else np.zeros_like(value)
    return value


def _ordered_slots(inner, variables):
    """(model variable, slot name) in Keras's order."""
    groups, _ = _layout(inner)
    return [(v, slot) for group in groups for v in variables for slot in group]


def write_optimizer(group, optimizer, variables):
    """The optimizer's variables as Keras lists them (``optimizer/vars/0...``)."""
    vars_group = group.create_group("vars")
    if optimizer is None:
        return
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    step = 0 if inner._step is None else int(round(float(inner._step.numpy())))
    head = [np.asarray(step, np.int64)]
    if inner._lr.variable is not None:
        head.append(np.asarray(inner._lr.variable.numpy(), np.float32))
    values = []
    if inner is not optimizer:  # Keras's LossScaleOptimizer: its own counters, then the inner optimizer's
        values += head + [np.asarray(int(round(float(optimizer.step_counter.numpy()))), np.int64),
                          np.asarray(optimizer.dynamic_scale.numpy(), np.float32)]
    values += head
    layout = _layout(inner)
    # Zero slots before the first step, as Keras's optimizer has once compile() built it.
    if layout is not None:
        for v, slot in _ordered_slots(inner, variables):
            s = inner._slots.get((v.shared_name, slot))
            value = s.numpy() if s is not None else np.zeros(v.shape, v.numpy().dtype)
            values.append(_to_keras(inner, slot, value))
        for attr in layout[1]:
            var = getattr(inner, attr, None)
            values.append(np.asarray(1.0 if var is None else var.numpy(), np.float32))
    for i, value in enumerate(values):
        vars_group.create_dataset(str(i), data=value)
    if inner is not optimizer:  # Keras also saves the inner optimizer as an object of its own
        write_optimizer(group.create_group("inner_optimizer"), inner, variables)


def read_optimizer(group, optimizer, variables, where):
    """Restores the optimizer's step, learning rate and slots; False (with a warning) when the file's
    optimizer variables do not fit this optimizer, which then starts afresh."""
    import warnings

    import plexus as px
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    stored = group.get("vars") if group is not None else None
    if stored is None or len(stored) == 0:
        return False
    values = [np.asarray(stored[str(i)][()]) for i in range(len(stored))]
    layout = _layout(inner)
    n_head = 1 + (inner._lr.variable is not None)
    if inner is not optimizer:
        if len(values) < n_head + 2:
            return False
        optimizer.step_counter.assign(np.float32(values[n_head]))
        optimizer.dynamic_scale.assign(np.float32(values[n_head + 1]))
        values = values[n_head + 2:]
    slots = [] if layout is None else _ordered_slots(inner, variables)
    expected = n_head + len(slots) + (0 if layout is None else len(layout[1]))
    if layout is None or len(values) not in (n_head, expected):
        warnings.warn(f"{where}: the file's optimizer has {len(values)} variables, {type(inner).__name__} over "
                      f"{len(variables)} trainable variables expects {expected}: the optimizer starts afresh",
                      stacklevel=3)
        return False
    if inner._step is None:
        inner._step = px.Variable(0.0, trainable=False, name="iterations", dtype="float32")
    inner._step.assign(np.float32(values[0]))
    if inner._lr.variable is not None:
        inner._lr.variable.assign(np.float32(values[1]))
    if len(values) == n_head:  # saved before the first step
        return True
    for i, (v, slot) in enumerate(_ordered_slots(inner, variables), start=n_head):
        value = values[i]
        if tuple(value.shape) != tuple(v.shape):
            raise WeightsError(f"{where}/vars/{i}: slot '{slot}' of {getattr(v, 'path', v.name)} has shape "
                               f"{tuple(value.shape)} in the file, the variable {tuple(v.shape)}")
        key = (v.shared_name, slot)
        if key not in inner._slots:
            inner._slots[key] = px.Variable(np.zeros(v.shape, v.numpy().dtype), trainable=False,
                                            name=f"{v.name}/{slot}")
        inner._slots[key].assign(_from_keras(inner, slot, value).astype(v.numpy().dtype))
    for j, attr in enumerate(layout[1], start=n_head + len(slots)):
        var = getattr(inner, attr, None)
        if var is None:
            var = px.Variable(0.0, trainable=False, name=f"{inner.name}/{attr.strip('_')}", dtype="float32")
            setattr(inner, attr, var)
        var.assign(np.float32(values[j]))
    return True
