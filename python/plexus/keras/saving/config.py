"""Keras 3's JSON configs: layers and models to dicts and back.

A serialized object is ``{"module", "class_name", "config",
"registered_name"}``; a layer of a functional model also carries its
``name``, ``build_config`` and ``inbound_nodes``, whose arguments name the
tensors they take as ``{"class_name": "__keras_tensor__", "config":
{"keras_history": [layer name, node index, tensor index], ...}}``.
"""

from __future__ import annotations

import re

from .. import layers as L
from ..layers.base import Layer
from ..models import functional as F
from ..models.model import Functional, Model
from ..models.sequential import Sequential

_KT = "__keras_tensor__"


class ConfigError(ValueError):
    pass


# ---- serializing ---------------------------------------------------------------------

def _module_of(obj):
    if isinstance(obj, Sequential):
        return "keras"
    if isinstance(obj, Functional):
        return "keras.src.models.functional"
    if isinstance(obj, Model):
        return None
    return "keras.layers"


def _class_name(obj):
    if isinstance(obj, Functional):
        return "Functional"
    return type(obj).__name__


def serialize_layer(layer, with_build=True):
    """A layer or model as Keras's serialized dict."""
    from .ops import op_entry
    entry = op_entry(layer)
    if entry is not None:
        return entry
    if isinstance(layer, F.OpLayer):
        raise ConfigError(f"layer '{layer.name}' wraps a Python function: it cannot be written into a .keras "
                          "config (use a Keras layer or keras.ops instead)")
    if isinstance(layer, Sequential):
        config = sequential_config(layer)
    elif isinstance(layer, Functional):
        config = functional_config(layer)
    else:
        config = layer.get_config()
    if isinstance(layer, getattr(L, "Lambda", ())):
        from .functions import dump_function
        config = {**config, "function": dump_function(layer.function), "arguments": dict(layer.arguments)}
    registered = None
    module = _module_of(layer)
    class_name = _class_name(layer)
    if module is None or not hasattr(L, type(layer).__name__) and not isinstance(layer, Model):
        from .registry import get_registered_name
        registered = get_registered_name(type(layer))
        if ">" not in registered:
            registered = f"Custom>{registered}"
        module = type(layer).__module__
    if getattr(layer, "_keras_class", None):  # loaded through custom_objects: keep the file's names
        module, class_name, registered = layer._keras_class
    out = {"module": module, "class_name": class_name, "config": config, "registered_name": registered}
    if with_build:
        build = layer.get_build_config()
        if build is not None:
            out["build_config"] = build
    return out


def _tensor_ref(kt, history=None):
    layer, node_index, tensor_index = kt._history
    return {"class_name": _KT, "config": {"shape": list(kt.shape), "dtype": kt.dtype,
                                         "keras_history": history or [layer.name, node_index, tensor_index]}}


def _plain(value, history=None):
    """`value` as JSON, KerasTensors as references; history(kt) gives a reference's
    [layer name, node index, tensor index]."""
    if getattr(value, "_is_keras_tensor", False):
        return _tensor_ref(value, history(value) if history else None)
    if isinstance(value, slice):
        return {"class_name": "__slice__", "config": {"start": value.start, "stop": value.stop, "step": value.step}}
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(value, (list, tuple)):
        return [_plain(v, history) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, history) for k, v in value.items()}
    if hasattr(value, "numpy") and not isinstance(value, type):
        return value.numpy().tolist()
    return value


def functional_config(model):
    node_ids = {id(n) for n in model._nodes}

    def own_index(layer, node_index):
        # Keras numbers a layer's nodes among those of this model (a layer
        # also called elsewhere has nodes that are not saved).
        return sum(1 for n in F._inbound_nodes(layer)[:node_index] if id(n) in node_ids)

    def history(kt):
        layer, node_index, tensor_index = kt._history
        return [layer.name, own_index(layer, node_index), tensor_index]
    layers = []
    for layer in model.layers:
        entry = serialize_layer(layer)
        entry["name"] = layer.name
        nodes = []
        if not isinstance(layer, F.InputLayer):
            for node in F._inbound_nodes(layer):
                if id(node) in node_ids:
                    nodes.append({"args": _plain(list(node.args), history),
                                  "kwargs": _plain(dict(node.kwargs), history)})
        entry["inbound_nodes"] = nodes
        layers.append(entry)

    def refs(structure):
        if getattr(structure, "_is_keras_tensor", False):
            name, node_index, tensor_index = history(structure)
            # In input_layers and output_layers Keras counts a nested functional
            # model's own node (its inputs to its outputs) first.
            return [name, node_index + _functional_offset(structure._history[0]), tensor_index]
        if isinstance(structure, dict):
            return {k: refs(v) for k, v in structure.items()}
        return [refs(v) for v in structure]
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": refs(model._inputs_struct), "output_layers": refs(model._outputs_struct)}


def sequential_config(model):
    layers = []
    if model._input_layer is not None:
        layers.append(serialize_layer(model._input_layer, with_build=False))
    layers.extend(serialize_layer(l) for l in model.layers)
    config = {"name": model.name, "trainable": model.trainable, "dtype": model.dtype_policy.get_config(),
              "layers": layers}
    if model._build_shapes is not None:
        config["build_input_shape"] = list(model._build_shapes)
    return config


# ---- deserializing ---------------------------------------------------------------------

def _find_class(entry, custom_objects, where):
    name = entry.get("class_name")
    registered = entry.get("registered_name")
    for key in (registered, name):
        if key and custom_objects and key in custom_objects:
            return custom_objects[key]
    if registered and custom_objects:
        # register_keras_serializable's "package>Name": match the bare class name too.
        short = registered.split(">", 1)[-1]
        if short in custom_objects:
            return custom_objects[short]
    from .registry import get_registered_object
    for key in (registered, name):
        cls = get_registered_object(key) if key else None
        if cls is not None:
            return cls
    if name in ("Functional", "Model"):
        return Functional
    if name == "Sequential":
        return Sequential
    if name == "InputLayer":
        return F.InputLayer
    cls = getattr(L, name, None)
    if isinstance(cls, type) and issubclass(cls, Layer):
        return cls
    module = entry.get("module") or ""
    # Keras writes no module for the classes of the program that saved the
    # file (subclassed layers and models), and a registered name for them.
    own = not module.startswith("keras") and registered is not None
    raise ConfigError(f"{where}: unknown layer class '{name}'"
                      + (f" (registered as '{registered}')" if registered else "")
                      + (", a class of the program that saved the file (a subclassed layer or model)" if own
                         else "")
                      + ("; plexus.keras has no such Keras layer" if not own else "")
                      + "; pass custom_objects={'" + str(name) + "': TheClass} with a plexus.keras class "
                      "(a Layer or Model subclass with get_config/from_config) to load it")


_IGNORABLE = re.compile(r"unrecognized (keyword )?arguments?: \[(.*)\]")


def _construct(cls, config, where):
    config = dict(config)
    for attempt in range(2):
        try:
            if cls is F.InputLayer:
                config.pop("ragged", None)
                return F.InputLayer(**config)
            return cls.from_config(config)
        except TypeError as e:
            m = _IGNORABLE.search(str(e))
            if attempt == 0 and m:
                names = [n.strip().strip("'\"") for n in m.group(2).split(",")]
                # Options this version of Keras added that are off by default
                # (None or False) change nothing; others are refused.
                if names and all(n in config and config[n] in (None, False) for n in names):
                    for n in names:
                        config.pop(n)
                    continue
            raise ConfigError(f"{where}: cannot rebuild {cls.__name__} from its config: {e}") from e


def deserialize_layer(entry, custom_objects=None, where="model"):
    """A layer or model from Keras's serialized dict."""
    if not isinstance(entry, dict) or "class_name" not in entry:
        raise ConfigError(f"{where}: a layer entry must be a dict with a class_name, got {str(entry)[:80]}")
    module = entry.get("module") or ""
    if module.startswith("keras.src.ops") or module.startswith("keras.ops"):
        from .ops import op_layer
        layer = op_layer(entry["class_name"], entry.get("config"), where)
        if layer is None:
            raise ConfigError(f"{where}: the Keras operation '{entry['class_name']}' ({module}) is not supported "
                              "by plexus.keras")
        return layer
    cls = _find_class(entry, custom_objects, where)
    config = entry.get("config") or {}
    name = config.get("name", entry.get("name", "?")) if isinstance(config, dict) else "?"
    here = f"{where}, layer '{name}' ({entry['class_name']})"
    if cls is Sequential:
        layer = sequential_from_config(config, custom_objects, here)
    elif cls is Functional or (isinstance(cls, type) and issubclass(cls, Functional)):
        layer = functional_from_config(config, custom_objects, here)
    else:
        config = _nested_layers(config, custom_objects, here)
        if cls is getattr(L, "Lambda", None):
            config = _lambda_config(config, custom_objects, here)
        layer = _construct(cls, config, here)
    if not isinstance(layer, (Functional, Sequential)) and (
            entry["class_name"] != type(layer).__name__ or not hasattr(L, cls.__name__)):
        # A custom class: keep the file's names (its weights group, saving it back).
        layer._keras_class = (module or None, entry["class_name"], entry.get("registered_name"))
    build = entry.get("build_config")
    if build and not layer.built and not isinstance(layer, (Functional, Sequential)):  # subclassed models too
        _build(layer, build, here)
    return layer


_SAFE_MODE = [True]


def _lambda_config(config, custom_objects, where):
    from .functions import load_function
    out = dict(config)
    for key in ("function", "output_shape", "mask"):
        if isinstance(out.get(key), dict) and out[key].get("class_name") in ("__lambda__", "function"):
            out[key] = load_function(out[key], custom_objects, _SAFE_MODE[0], where)
    if isinstance(out.get("output_shape"), list):
        out["output_shape"] = tuple(out["output_shape"])
    return out


def _nested_layers(config, custom_objects, where):
    """Wrapper configs (Bidirectional, TimeDistributed, RNN) hold serialized layers: rebuild them."""
    out = dict(config)
    for key in ("layer", "backward_layer", "cell"):
        value = out.get(key)
        if isinstance(value, dict) and "class_name" in value:
            out[key] = deserialize_layer(value, custom_objects, where)
        elif isinstance(value, list) and value and all(isinstance(v, dict) and "class_name" in v for v in value):
            out[key] = [deserialize_layer(v, custom_objects, where) for v in value]
    return out


def _build(layer, build, where):
    try:
        if "input_shape" in build:
            layer.build_from_config(build)
        elif "shapes_dict" in build:
            layer.build(**{k: None if v is None else tuple(v) for k, v in build["shapes_dict"].items()})
            layer.built = True
    except Exception as e:  # noqa: BLE001  (reported with the layer's name)
        raise ConfigError(f"{where}: cannot build it from {build}: {e}") from e


def sequential_from_config(config, custom_objects=None, where="model"):
    entries = config.get("layers", [])
    layers = [deserialize_layer(e, custom_objects, where) for e in entries]
    dtype = config.get("dtype")
    if isinstance(dtype, dict):
        from .. import mixed_precision
        dtype = mixed_precision.policy_from_config(dtype)
    # The model's own policy matters: compile() scales the loss under mixed_float16.
    model = Sequential(name=config.get("name"), trainable=config.get("trainable", True), dtype=dtype)
    for layer in layers:
        model.add(layer, rebuild=False)
    model._maybe_rebuild()
    if not model.built and config.get("build_input_shape"):
        model.build(tuple(config["build_input_shape"]))
    return model


def _is_ref(value):
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and all(
        isinstance(v, int) for v in value[1:])


def _functional_offset(layer):
    """1 for a functional model used as a layer (Keras counts its own node first), else 0."""
    return 1 if isinstance(layer, Functional) else 0


def functional_from_config(config, custom_objects=None, where="model"):
    created, pending = {}, []
    for entry in config.get("layers", []):
        layer = deserialize_layer(entry, custom_objects, where)
        name = entry.get("name") or layer.name
        created[name] = layer
        pending.append((layer, list(entry.get("inbound_nodes") or [])))

    def tensor(ref, here):
        name, node_index, tensor_index = ref
        layer = created.get(name)
        if layer is None:
            raise ConfigError(f"{here}: refers to layer '{name}', which the model does not have")
        nodes = F._inbound_nodes(layer)
        if not 0 <= node_index < len(nodes):
            return None
        return F.tree_flatten(nodes[node_index].outputs)[tensor_index]

    def resolve(value, here):
        if isinstance(value, dict) and value.get("class_name") == _KT:
            t = tensor(value["config"]["keras_history"], here)
            if t is None:
                raise LookupError
            return t
        if isinstance(value, list):
            return [resolve(v, here) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v, here) for k, v in value.items()}
        return value

    progress = True
    while progress and any(nodes for _, nodes in pending):
        progress = False
        for layer, nodes in pending:
            while nodes:
                here = f"{where}, layer '{layer.name}'"
                try:
                    args = resolve(nodes[0].get("args", []), here)
                    kwargs = resolve(nodes[0].get("kwargs", {}), here)
                except LookupError:
                    break
                layer(*args, **kwargs)
                nodes.pop(0)
                progress = True
    stuck = [layer.name for layer, nodes in pending if nodes]
    if stuck:
        raise ConfigError(f"{where}: the inputs of layers {stuck} are never computed (a disconnected graph)")

    def refs(structure):
        if _is_ref(structure):
            name, node_index, tensor_index = structure
            node_index -= _functional_offset(created.get(name))
            t = tensor([name, node_index, tensor_index], where)
            if t is None:
                raise ConfigError(f"{where}: the model's inputs or outputs name node {structure[1]} of layer "
                                  f"'{name}', which the config never calls")
            return t
        if isinstance(structure, dict):
            return {k: refs(v) for k, v in structure.items()}
        return [refs(v) for v in structure]
    inputs, outputs = refs(config["input_layers"]), refs(config["output_layers"])
    return Functional(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))


def model_from_config(entry, custom_objects=None, where="model", safe_mode=True):
    """A model from its serialized dict; safe_mode=False allows Lambda layers' bytecode to load."""
    previous, _SAFE_MODE[0] = _SAFE_MODE[0], safe_mode
    try:
        model = deserialize_layer(entry, custom_objects, where)
    finally:
        _SAFE_MODE[0] = previous
    if not isinstance(model, Layer):
        raise ConfigError(f"{where}: the config is not a model")
    return model
