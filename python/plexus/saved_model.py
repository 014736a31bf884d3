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
