"""Writes one zoo model: its exports, its inputs, TensorFlow's outputs for
them and its meta.json.

A case is built by a set module and handed here as a Case. Keras cases give a
model and its inputs; module cases give a tf.Module, a tf.function with an
input signature and its inputs; TF1 cases write their own exports and give the
tensor names. In every kind the reference outputs come from the SavedModel's
serving_default signature reloaded with tf.saved_model.load; the frozen graphs
and the Keras export are run too and any difference is written to "notes".
"""
import inspect
import json
import os
import re
import shutil
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import (
    convert_variables_to_constants_v2,
)

import keras

SEED = 1234
DEFAULT_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
CONTROL_FLOW_OPS = {
    "If", "StatelessIf", "While", "StatelessWhile",
    "PartitionedCall", "StatefulPartitionedCall",
}


@dataclass
class Case:
    """One zoo model. build() returns a Built (keras or module kind) or, for
    the tf1 kind, build(folder) writes the exports and returns a Tf1Built."""
    name: str
    kind: str  # "keras", "module" or "tf1"
    build: Callable
    description: str = ""
    tolerance: Optional[dict] = None


@dataclass
class Built:
    obj: object                       # what tf.saved_model.save saves
    inputs: dict                      # signature key -> numpy array, in order
    fn: Optional[object] = None       # tf.function with an input signature
    keras_model: Optional[object] = None
    notes: list = field(default_factory=list)


@dataclass
class Tf1Built:
    inputs: dict                      # signature key -> numpy array
    input_tensors: dict               # signature key -> "name:0"
    output_tensors: dict              # signature key -> "name:0"
    exports: dict                     # kind -> relative path, those written
    errors: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    text = re.sub(r"\s+", " ", text).strip()
    return text[:1500]


def natural_key(key: str):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


def folder_bytes(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total


def to_numpy(value) -> np.ndarray:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.dtype == object:
        # Strings come back as object arrays of bytes; keep them as bytes.
        array = np.array(array.tolist(), dtype=np.bytes_).reshape(array.shape)
    return np.asarray(array)


def compare(reference: np.ndarray, other: np.ndarray, tolerance: dict) -> str:
    """Returns "" when equal, else a sentence saying how they differ."""
    other = np.asarray(other)
    if reference.shape != other.shape:
        return f"shape {list(other.shape)} against {list(reference.shape)}"
    if reference.dtype.kind in "fc":
        if np.array_equal(reference, other, equal_nan=True):
            return ""
        ref = reference.astype(np.float64)
        got = other.astype(np.float64)
        finite = np.isfinite(ref) & np.isfinite(got)
        if not np.array_equal(np.isfinite(ref), np.isfinite(got)):
            return "non-finite values differ"
        diff = float(np.max(np.abs(ref - got)[finite])) if finite.any() else 0.0
        within = np.allclose(got, ref, rtol=tolerance["rtol"], atol=tolerance["atol"], equal_nan=True)
        return f"max abs difference {diff:.3g} ({'within' if within else 'OUTSIDE'} tolerance)"
    if reference.dtype.kind == "S":
        other = other.astype(np.bytes_)
    return "" if np.array_equal(reference, other) else "values differ"


def graph_def_ops(graph_def) -> set:
    ops = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        ops.update(node.op for node in function.node_def)
    return ops


def run_graph_def(path: str, inputs: dict, input_tensors: dict, output_tensors: dict) -> dict:
    graph_def = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        if any(node.name == "init_all_tables" for node in graph_def.node):
            session.run("init_all_tables")
        feed = {input_tensors[k]: v for k, v in inputs.items()}
        keys = list(output_tensors)
        values = session.run([output_tensors[k] for k in keys], feed_dict=feed)
    return dict(zip(keys, values))


# A model whose own TensorFlow outputs move beyond the tolerance when its
# float inputs change by this much (relative) cannot be compared value by
# value: random weights can make a deep network chaotic. The runner then
# compares such outputs by shape, dtype and finiteness only, and says so.
PERTURBATION = 1e-6
UNSTABLE_NOTE = ("TensorFlow's own outputs change by up to {max_abs_change:.3g} when the inputs change by "
                 "random noise of {perturbation:g} (relative): the outputs are compared by shape, dtype and "
                 "finiteness only")


def instability(signature, inputs: dict, reference: dict, tolerance: dict, trials: int = 4) -> Optional[dict]:
    """{"perturbation", "max_abs_change"} when `signature` (TensorFlow) gives
    outputs outside `tolerance` of `reference` for the float inputs changed
    by random relative noise of PERTURBATION (a few seeded draws: a scaling
    alone can leave a saturated softmax unmoved while its logits jump);
    None when it is stable or has no float inputs."""
    if not any(np.asarray(v).dtype.kind == "f" for v in inputs.values()):
        return None
    rng = np.random.default_rng(0)
    worst = 0.0
    unstable = False
    for _ in range(trials):
        moved = {k: (v * (1 + PERTURBATION * rng.standard_normal(np.shape(v)))).astype(v.dtype)
                 if np.asarray(v).dtype.kind == "f" else v for k, v in inputs.items()}
        result = signature(**{k: tf.constant(v) for k, v in moved.items()})
        for key, ref in reference.items():
            if ref.dtype.kind not in "fc" or key not in result:
                continue
            got = to_numpy(result[key]).astype(np.float64)
            if not np.allclose(got, ref, rtol=tolerance["rtol"], atol=tolerance["atol"], equal_nan=True):
                unstable = True
                worst = max(worst, float(np.nanmax(np.abs(got - ref.astype(np.float64)))))
    return {"perturbation": PERTURBATION, "max_abs_change": worst} if unstable else None


def check(label: str, reference: dict, got: dict, tolerance: dict, notes: list) -> None:
    problems = []
    for key, ref in reference.items():
        if key not in got:
            problems.append(f"{key}: missing")
            continue
        sentence = compare(ref, to_numpy(got[key]), tolerance)
        if sentence:
            problems.append(f"{key}: {sentence}")
    if problems:
        notes.append(f"{label} against the reference: " + "; ".join(problems))


def freeze(concrete, folder: str, exports: dict, errors: dict, notes: list):
    """Writes frozen_lowered.pb and, where control flow stays, frozen_functional.pb.
    Returns (input tensor names, output tensor names) or None."""
    names = None
    try:
        frozen = convert_variables_to_constants_v2(concrete)
        graph_def = frozen.graph.as_graph_def()
        check_no_resource_placeholders(graph_def)
        with open(os.path.join(folder, "frozen_lowered.pb"), "wb") as f:
            f.write(graph_def.SerializeToString())
        exports["frozen_lowered"] = "frozen_lowered.pb"
        keys = sorted(concrete.structured_outputs)
        outputs = {k: t.name for k, t in zip(keys, frozen.outputs)}
        specs = concrete.structured_input_signature
        flat_specs = tf.nest.flatten(specs)
        inputs = {s.name: f"{s.name}:0" for s in flat_specs}
        names = (inputs, outputs)
        lowered_bytes = graph_def.SerializeToString()
    except Exception as exc:  # noqa: BLE001 - recorded in meta.json
        errors["frozen_lowered"] = short_error(exc)
        return None
    if not graph_def_ops(concrete.graph.as_graph_def()) & CONTROL_FLOW_OPS:
        return names  # no control flow: the functional form would be the same graph
    try:
        functional = convert_variables_to_constants_v2(concrete, lower_control_flow=False)
        fdef = functional.graph.as_graph_def()
        if graph_def_ops(fdef) & CONTROL_FLOW_OPS and fdef.SerializeToString() != lowered_bytes:
            with open(os.path.join(folder, "frozen_functional.pb"), "wb") as f:
                f.write(fdef.SerializeToString())
            exports["frozen_functional"] = "frozen_functional.pb"
    except Exception as exc:  # noqa: BLE001
        errors["frozen_functional"] = short_error(exc)
    return names


def check_no_resource_placeholders(graph_def) -> None:
    """Lookup tables (and other resources that are not variables) stay as
    resource placeholders after freezing: such a graph cannot run alone."""
    left = [node.name for node in graph_def.node
            if node.op == "Placeholder" and node.attr["dtype"].type == tf.resource.as_datatype_enum]
    if left:
        raise ValueError("freezing leaves resource placeholders (lookup tables or other non-variable "
                         "resources cannot become constants): " + ", ".join(left[:5]))


def keras_serving_function(model):
    specs = [
        tf.TensorSpec((None,) + tuple(t.shape[1:]), t.dtype, name=t.name.split(":")[0])
        for t in model.inputs
    ]

    @tf.function(input_signature=specs)
    def serve(*args):
        x = list(args) if len(args) > 1 else args[0]
        y = model(x, training=False)
        return {f"output_{i}": t for i, t in enumerate(tf.nest.flatten(y))}

    return serve


def write_meta(folder: str, meta: dict) -> None:
    path = os.path.join(folder, "meta.json")
    for _ in range(3):
        text = json.dumps(meta, indent=1)
        # Lists of numbers (shapes) on one line.
        text = re.sub(r"\[\n\s*([-\d.e, \n]*?)\n\s*\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        with open(path, "w") as f:
            f.write(text + "\n")
        size = folder_bytes(folder)
        if meta.get("bytes") == size:
            break
        meta["bytes"] = size


def save_model(built: Built, concrete, path: str, exports: dict, errors: dict, notes: list) -> None:
    """tf.saved_model.save of the object itself; where that fails because the
    function reads variables the object does not track (Keras seed generator
    states), of a tf.Module holding the model and a list of its variables."""
    try:
        tf.saved_model.save(built.obj, path, signatures={"serving_default": concrete})
        exports["saved_model"] = "saved_model"
        return
    except Exception as exc:  # noqa: BLE001
        first = short_error(exc)
        shutil.rmtree(path, ignore_errors=True)
    if built.keras_model is None:
        errors["saved_model"] = first
        return
    holder = tf.Module()
    holder.model = built.keras_model
    holder.model_variables = list(built.keras_model.variables)
    try:
        tf.saved_model.save(holder, path, signatures={"serving_default": concrete})
        exports["saved_model"] = "saved_model"
        notes.append("saved_model holds a tf.Module with the model and a list of its variables: saving the "
                     "model itself failed (" + first[:200] + ")")
    except Exception as exc:  # noqa: BLE001
        errors["saved_model"] = first + " | through a holder module: " + short_error(exc)


def trains_by_default(model) -> list:
    """Layers whose call() defaults to training=True (random augmentation)."""
    found = []
    for lay in model._flatten_layers(include_self=False):
        try:
            parameter = inspect.signature(lay.call).parameters.get("training")
        except (TypeError, ValueError):
            continue
        if parameter is not None and parameter.default is True:
            found.append(type(lay).__name__)
    return found


def export_case(case: Case, set_name: str, out_root: str, keras_export: bool = True) -> dict:
    folder = os.path.join(out_root, set_name, case.name)
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    tolerance = dict(case.tolerance or DEFAULT_TOLERANCE)
    meta = {
        "name": case.name, "set": set_name,
        "tf_version": tf.__version__, "keras_version": keras.__version__,
        "description": case.description,
        "inputs": [], "outputs": [],
        "signatures": {"saved_model": "serving_default"},
        "exports": {}, "tolerance": tolerance, "bytes": 0,
        "errors": {}, "notes": [],
    }
    errors, notes, exports = meta["errors"], meta["notes"], meta["exports"]
    keras.utils.set_random_seed(SEED)
    try:
        if case.kind == "tf1":
            built = case.build(folder)
            exports.update(built.exports)
            errors.update(built.errors)
            names = (built.input_tensors, built.output_tensors)
            concrete = None
        else:
            built = case.build()
            fn = built.fn or keras_serving_function(built.keras_model)
            concrete = fn.get_concrete_function()
            names = None
        notes.extend(built.notes)
    except Exception as exc:  # noqa: BLE001
        errors["build"] = short_error(exc)
        traceback.print_exc()
        write_meta(folder, meta)
        return meta
    inputs = built.inputs

    if concrete is not None:
        save_model(built, concrete, os.path.join(folder, "saved_model"), exports, errors, notes)
        names = freeze(concrete, folder, exports, errors, notes)
        if built.keras_model is not None and keras_export:
            try:
                built.keras_model.export(os.path.join(folder, "keras_export"), verbose=False)
                exports["keras_export"] = "keras_export"
                meta["signatures"]["keras_export"] = "serve"
            except Exception as exc:  # noqa: BLE001
                errors["keras_export"] = short_error(exc)

    # The reference: the reloaded SavedModel's serving_default signature.
    reference = None
    if "saved_model" in exports:
        try:
            loaded = tf.saved_model.load(os.path.join(folder, "saved_model"))
            result = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
            reference = {k: to_numpy(result[k]) for k in sorted(result, key=natural_key)}
        except Exception as exc:  # noqa: BLE001
            errors["reference"] = short_error(exc)
    if reference is None and concrete is not None:
        try:
            result = concrete(**{k: tf.constant(v) for k, v in inputs.items()})
            reference = {k: to_numpy(result[k]) for k in sorted(result, key=natural_key)}
            notes.append("outputs come from the traced function, not a reloaded SavedModel")
        except Exception as exc:  # noqa: BLE001
            errors.setdefault("reference", short_error(exc))
    if reference is None:
        write_meta(folder, meta)
        return meta

    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "outputs"))
    input_tensors, output_tensors = names if names else ({}, {})
    for i, (key, value) in enumerate(inputs.items()):
        np.save(os.path.join(folder, "inputs", f"{i}.npy"), value)
        meta["inputs"].append({"key": key, "tensor": input_tensors.get(key),
                               "file": f"inputs/{i}.npy", "dtype": value.dtype.str,
                               "shape": list(value.shape)})
    for i, (key, value) in enumerate(reference.items()):
        np.save(os.path.join(folder, "outputs", f"{i}.npy"), value)
        meta["outputs"].append({"key": key, "tensor": output_tensors.get(key),
                                "file": f"outputs/{i}.npy", "dtype": value.dtype.str,
                                "shape": list(value.shape)})
    if not any(v.dtype.kind in "fc" for v in reference.values()):
        meta.pop("tolerance")
    elif "saved_model" in exports:
        try:
            loaded = tf.saved_model.load(os.path.join(folder, "saved_model"))
            unstable = instability(loaded.signatures["serving_default"], inputs, reference, tolerance)
            if unstable:
                meta["unstable"] = unstable
                notes.append(UNSTABLE_NOTE.format(**unstable))
        except Exception as exc:  # noqa: BLE001
            notes.append(f"the stability check did not run: {short_error(exc)}")

    # Cross-checks: the frozen graphs and the Keras export give the same.
    for kind in ("frozen_lowered", "frozen_functional"):
        if kind in exports and names:
            try:
                got = run_graph_def(os.path.join(folder, exports[kind]), inputs, input_tensors, output_tensors)
                check(kind, reference, got, tolerance, notes)
            except Exception as exc:  # noqa: BLE001
                notes.append(f"{kind} did not run in TensorFlow: {short_error(exc)}")
    if "keras_export" in exports:
        try:
            loaded = tf.saved_model.load(os.path.join(folder, "keras_export"))
            signature = loaded.signatures["serve"]
            got = signature(**{k: tf.constant(v) for k, v in inputs.items()})
            before = len(notes)
            check("keras_export serve", reference, got, tolerance, notes)
            training = trains_by_default(built.keras_model)
            if len(notes) > before and training:
                notes.append("model.export's serve endpoint calls the model without training=False, so "
                             + ", ".join(sorted(set(training))) + " runs in training mode there (random)")
        except Exception as exc:  # noqa: BLE001
            notes.append(f"keras_export serve signature did not run: {short_error(exc)}")
    write_meta(folder, meta)
    return meta
