"""Model.export (a TensorFlow SavedModel of the forward pass) and clone_model."""

from __future__ import annotations

import plexus as px

from . import config as C


def _input_specs(model, input_signature):
    if input_signature is not None:
        return list(input_signature)
    inputs = getattr(model, "inputs", None)
    if not inputs:
        raise ValueError(f"export: model '{model.name}' has no known inputs; give input_signature="
                         "[plexus.TensorSpec([None, ...], plexus.float32)]")
    names = getattr(model, "input_names", None) or [kt._history[0].name for kt in inputs]
    return [px.TensorSpec(list(kt.shape), kt.dtype, name=name) for kt, name in zip(inputs, names)]


def export_saved_model(model, filepath, input_signature=None, verbose=True):
    """Writes a SavedModel whose ``serving_default`` signature runs the model (training=False)."""
    specs = _input_specs(model, input_signature)
    structure = getattr(model, "_inputs_struct", None)

    def serve(*args):
        if isinstance(structure, dict):
            x = dict(zip(sorted(structure), args))
        elif len(args) == 1:
            x = args[0]
        else:
            x = list(args)
        out = model(x, training=False)
        if isinstance(out, (list, tuple)):
            return {f"output_{i}": o for i, o in enumerate(out)}
        return out
    fn = px.function(serve, input_signature=specs)
    concrete = fn.get_concrete_function()
    # Keras's export has both endpoints: "serve" and the default signature.
    path = px.saved_model.save(filepath, {"serving_default": concrete, "serve": concrete})
    if verbose:
        print(f"Saved the model's forward pass as a SavedModel at {path} (endpoints 'serve' and 'serving_default': "
              f"inputs {[s.name for s in specs]})")
    return path


def clone_model(model, input_tensors=None, clone_function=None):
    """The same architecture with newly initialized weights (Keras's default clone)."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("clone_model: input_tensors and clone_function are not supported; "
                                  "clone_model(model) rebuilds the model from its config")
    return C.deserialize_layer(C.serialize_layer(model))
