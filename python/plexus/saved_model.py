"""plexus.saved_model.load: SavedModels (TensorFlow 1 and 2) with callable signatures."""

from __future__ import annotations

import os

from . import _plexus


class SignatureFunction:
    """One signature: call it with its inputs by key; returns a dict of outputs."""

    def __init__(self, model, key, info):
        self._model = model
        self.key = key
        self.inputs = info["inputs"]
        self.outputs = info["outputs"]
        self.method_name = info["method_name"]

    def __call__(self, *args, **kwargs):
        if args:
            if len(args) > 1 or len(self.inputs) != 1 or kwargs:
                raise TypeError(f"signature {self.key!r} takes its inputs by key: {sorted(self.inputs)}")
            kwargs = {next(iter(self.inputs)): args[0]}
        return self._model.run(self.key, kwargs)

    def __repr__(self):
        ins = ", ".join(f"{k}: {v['dtype'].name}{list(v['shape']) if v['shape'] is not None else ''}"
                        for k, v in self.inputs.items())
        return f"<plexus signature {self.key!r} ({ins}) -> {sorted(self.outputs)}>"


class LoadedModel:
    """A SavedModel: ``signatures`` by key; calling the model calls ``serving_default``."""

    def __init__(self, model):
        self._model = model
        self.signatures = {k: SignatureFunction(model, k, v) for k, v in model.signatures().items()}

    def __call__(self, *args, **kwargs):
        if "serving_default" not in self.signatures:
            raise KeyError(f"the model has no 'serving_default' signature; it has {sorted(self.signatures)}")
        return self.signatures["serving_default"](*args, **kwargs)

    @property
    def device(self) -> str:
        return self._model.device

    def placement(self):
        """Where each node of the last signature call ran (see :mod:`plexus.placement`)."""
        from .placement import PlacementReport
        return PlacementReport(self._model.placement())

    @property
    def tensorflow_version(self) -> str:
        return self._model.tensorflow_version

    def __repr__(self):
        return f"<plexus SavedModel {self._model.dir} signatures={sorted(self.signatures)}>"


def load(export_dir, tags=("serve",), device: str | None = None) -> LoadedModel:
    """Loads a SavedModel directory: reads the graph, restores the variables and runs its init op."""
    if isinstance(tags, str):
        tags = [tags]
    return LoadedModel(_plexus.SavedModel(os.fspath(export_dir), list(tags), device))


# ---- Export ----------------------------------------------------------------------------------------

_PREDICT = "tensorflow/serving/predict"


def _concrete(fn, key):
    """A ConcreteFunction from a ConcreteFunction or a plexus.function with an input_signature."""
    if hasattr(fn, "graph_def") and hasattr(fn, "inputs") and hasattr(fn, "outputs") and not callable(
            getattr(fn, "get_concrete_function", None)):
        return fn
    get = getattr(fn, "get_concrete_function", None)
    if callable(get):
        try:
            return get()
        except TypeError as e:
            raise TypeError(f"signature {key!r}: a plexus.function needs an input_signature to be exported "
                            f"(or pass fn.get_concrete_function(...)): {e}") from None
    raise TypeError(f"signature {key!r} must be a ConcreteFunction (plexus.function(...).get_concrete_function()), "
                    f"got {type(fn).__name__}")


def _scope(key: str, index: int) -> str:
    """A node-name scope for a signature's graph when several are merged."""
    clean = "".join(c if c.isalnum() or c in "_.-" else "_" for c in key).lstrip("_.-")
    return f"{clean or 'signature'}_{index}"


def _variable_value(shared_name):
    from . import variables
    var = variables.lookup(shared_name)
    return None if var is None else var.read_value()


def save(export_dir, signatures, tags=("serve",)) -> str:
    """Exports traced functions as a SavedModel that plexus.saved_model.load and TensorFlow load.

    ``signatures`` is a ConcreteFunction (it becomes ``serving_default``) or a dict
    ``{key: ConcreteFunction}``; a plexus.function with an input_signature is accepted too::

        serve = plexus.function(model.__call__,
                                input_signature=[plexus.TensorSpec([None, 8], plexus.float32, name="x")])
        plexus.saved_model.save("/tmp/model/1", serve.get_concrete_function())
        tf.saved_model.load("/tmp/model/1").signatures["serving_default"](x=...)

    Signature input keys are the TensorSpec names (else the Python parameter names); output keys
    the keys of a returned dict, else output_0, output_1, ... Each Variable the functions read
    (a VarHandleOp in the traced graph) is saved with its current value in variables/variables,
    keyed by its shared name; a TensorFlow 1 saver restores it at load time. The export is atomic
    (written beside ``export_dir``, then renamed); ``export_dir`` must not exist or be empty.
    """
    export_dir = os.fspath(export_dir)
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    if not signatures:
        raise ValueError("saved_model.save needs at least one signature")
    graphs, sigs = [], []
    several = len(signatures) > 1
    for index, (key, fn) in enumerate(signatures.items()):
        if not isinstance(key, str) or not key:
            raise TypeError(f"signature keys must be non-empty strings, got {key!r}")
        cf = _concrete(fn, key)
        prefix = f"{_scope(key, index)}/" if several else ""
        graphs.append((cf.graph_def(), prefix))
        in_names = list(getattr(cf, "input_names", None) or [f"arg{i}" for i in range(len(cf.inputs))])
        out_names = list(getattr(cf, "output_names", None) or [f"output_{i}" for i in range(len(cf.outputs))])
        if len(in_names) != len(cf.inputs) or len(out_names) != len(cf.outputs):
            raise ValueError(f"signature {key!r}: {len(in_names)} input names for {len(cf.inputs)} inputs, "
                             f"{len(out_names)} output names for {len(cf.outputs)} outputs")
        sigs.append({
            "key": key,
            "method_name": _PREDICT,
            "inputs": [(n, prefix + t) for n, t in zip(in_names, cf.inputs)],
            "outputs": [(n, prefix + t) for n, t in zip(out_names, cf.outputs)],
        })
    _plexus.export_saved_model(export_dir, graphs, sigs, _variable_value, list(tags))
    return export_dir
