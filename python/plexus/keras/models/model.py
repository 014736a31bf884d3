"""``Model``: a layer with training (compile, fit, evaluate, predict), saving and a summary.

``Model(inputs, outputs)`` builds a functional model; subclassing ``Model``
and defining ``call`` builds a subclassed one, as in Keras.
"""

from __future__ import annotations

import numpy as np

from .. import _backend as B
from ..layers.base import Layer, _map
from . import functional as F
from .trainer import Trainer


class Model(Trainer, Layer):
    """A Keras model: ``Model(inputs=..., outputs=...)`` or a subclass with ``call``."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and ("inputs" in kwargs or len(args) >= 2):
            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.run_eagerly = False
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self._compile_state = None

    def __call__(self, *args, **kwargs):
        if not F.any_keras_tensor((args, kwargs)):
            self._clear_losses()
        return super().__call__(*args, **kwargs)

    def get_layer(self, name=None, index=None):
        layers = self.layers
        if index is not None:
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"no layer named '{name}' in model '{self.name}'; layers: {[l.name for l in layers]}")

    @property
    def layers(self):
        return list(self._layers)

    def build(self, input_shape=None):
        """Builds a subclassed model by calling it on zeros of `input_shape` (batch dimension None allowed)."""
        if self.built:
            return
        if input_shape is None:
            raise ValueError(f"model '{self.name}': build() needs an input shape")
        shapes = input_shape
        if isinstance(shapes, (list, tuple)) and shapes and isinstance(shapes[0], (list, tuple)):
            args = ([F.KerasTensor(s) for s in shapes],)
        else:
            args = (F.KerasTensor(shapes),)
        F.output_spec(self, args, {})
        self.built = True

    def _maybe_build(self, inputs):
        # A subclassed model's layers build themselves at their first call;
        # a build() the subclass defines runs first, as in Keras.
        if self.built:
            return
        from ..layers.base import _shape_of, _shape_tuple
        self._build_shapes = _shape_of(inputs)
        self.built = True
        if type(self).build is not Model.build:
            self.build(_shape_tuple(self._build_shapes))

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Prints each layer's name, type, output shape and parameter count, then the totals."""
        print_fn = print_fn or print
        rows = [("Layer (type)", "Output Shape", "Param #")]
        for layer in self.layers:
            shape = getattr(layer, "_summary_shape", None)
            rows.append((f"{layer.name} ({type(layer).__name__})", str(shape) if shape else "?",
                         str(layer.count_params())))
        widths = [max(len(r[i]) for r in rows) + 2 for i in range(3)]
        line = "-" * sum(widths)
        print_fn(f'Model: "{self.name}"')
        print_fn(line)
        for i, r in enumerate(rows):
            print_fn("".join(c.ljust(w) for c, w in zip(r, widths)))
            if i == 0:
                print_fn("=" * sum(widths))
        print_fn(line)
        trainable = int(sum(np.prod(w.shape, dtype=np.int64) for w in self.trainable_weights))
        total = self.count_params()
        print_fn(f"Total params: {total}")
        print_fn(f"Trainable params: {trainable}")
        print_fn(f"Non-trainable params: {total - trainable}")

    # -- saving ------------------------------------------------------------------------
    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the model as a .keras file (the architecture, the weights and the optimizer)."""
        from ..saving import save_model
        return save_model(self, filepath, overwrite=overwrite, **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Saves the weights as a .weights.h5 file in Keras 3's layout."""
        from ..saving import save_weights
        return save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        from ..saving import load_weights
        return load_weights(self, filepath, skip_mismatch=skip_mismatch)

    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None, **kwargs):
        """Writes a SavedModel with a ``serve`` / ``serving_default`` signature (TensorFlow and plexus load it)."""
        from ..saving import export_saved_model
        return export_saved_model(self, filepath, input_signature=input_signature, verbose=verbose)

    def get_config(self):
        return Layer.get_config(self)


class Functional(Model):
    """A model defined by its inputs and outputs (KerasTensors from ``Input`` and layer calls)."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        self.run_eagerly = False
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self._compile_state = None
        self._inputs_struct = inputs
        self._outputs_struct = outputs
        self.inputs = F.tree_flatten(inputs)
        self.outputs = F.tree_flatten(outputs)
        self._nodes = F.collect_nodes(inputs, outputs)
        self._layers = []
        for layer in F.layer_order(inputs, outputs):
            self._track(layer)
        for node in self._nodes:
            flat = D_flat(node.outputs)
            if flat:
                node.layer._summary_shape = flat[0].shape if len(flat) == 1 else [o.shape for o in flat]
        for x in self.inputs:
            x._history[0]._summary_shape = x.shape
        self.output_names = [o._history[0].name for o in self.outputs]
        self.input_names = [x._history[0].name for x in self.inputs]
        self.built = True

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    def _bind_inputs(self, inputs):
        """{id(input KerasTensor): tensor} for the call's inputs (matched by structure or name)."""
        if isinstance(inputs, dict) and not isinstance(self._inputs_struct, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(f"model '{self.name}': inputs {missing} are missing from the dict "
                                 f"(it has {sorted(inputs)})")
            return {id(x): B.convert(inputs[n]) for x, n in zip(self.inputs, self.input_names)}
        if isinstance(self._inputs_struct, dict) and isinstance(inputs, dict):
            return {id(self._inputs_struct[k]): B.convert(inputs[k]) for k in self._inputs_struct}
        flat = D_flat(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(flat) != len(self.inputs):
            raise ValueError(f"model '{self.name}' expects {len(self.inputs)} inputs "
                             f"({', '.join(self.input_names)}), got {len(flat)}")
        out = {}
        for kt, value in zip(self.inputs, flat):
            t = B.convert(value)
            if B.is_float(kt.dtype) and B.is_float(t.dtype) and B.dtype_name(t.dtype) != kt.dtype:
                t = B.cast(t, kt.dtype)
            elif B.dtype_name(t.dtype) != kt.dtype and not B.is_float(kt.dtype) and B.is_float(t.dtype):
                t = B.cast(t, kt.dtype)
            shape = list(t.shape)
            # As in Keras, the batch size of an Input is not enforced (a Sequential
            # model built by its first call records that call's batch size).
            if len(shape) != len(kt.shape) or any(e is not None and g is not None and e != g
                                                  for e, g in zip(kt.shape[1:], shape[1:])):
                raise ValueError(f"model '{self.name}': input '{kt._history[0].name}' expects shape {kt.shape}, "
                                 f"got {tuple(shape)}")
            out[id(kt)] = t
        return out

    def call(self, inputs, training=None, mask=None):
        values = self._bind_inputs(inputs)
        masks = {}
        if mask is not None:  # masks of the inputs, as Keras's Functional.call takes them
            for kt, m in zip(self.inputs, D_flat(mask) if isinstance(mask, (list, tuple, dict)) else [mask]):
                if m is not None:
                    masks[id(kt)] = m
        F.run_nodes(self._nodes, self.inputs, values, training=training, masks=masks)
        outputs = _map(self._outputs_struct, lambda kt: values[id(kt)])
        # The outputs' masks go with them (Keras's _keras_mask): losses and
        # metrics weigh by them, and an enclosing model passes them on.
        B.drop_keras_masks(getattr(self, "_masked_outputs", ()))
        self._masked_outputs = []
        for kt in D_flat(self._outputs_struct):
            m = masks.get(id(kt))
            if m is not None:
                B.set_keras_mask(values[id(kt)], m)
                self._masked_outputs.append(values[id(kt)])
        return outputs

    def _maybe_build(self, inputs):
        self.built = True


def D_flat(structure):
    out = []
    _map(structure, out.append)
    return out


def model_from_inputs(inputs, outputs, name=None):
    return Functional(inputs, outputs, name=name)
