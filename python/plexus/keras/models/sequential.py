"""``Sequential``: a stack of layers, each called on the previous one's output."""

from __future__ import annotations

from ..layers.base import Layer
from . import functional as F
from .model import Functional, Model


class Sequential(Model):
    """``Sequential([Input((28, 28, 1)), Conv2D(...), ...])``; without an Input it is built at its first call."""

    def __init__(self, layers=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        object.__setattr__(self, "_functional", None)
        object.__setattr__(self, "_input_layer", None)
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    def add(self, layer, rebuild=True):
        if getattr(layer, "_is_keras_tensor", False):
            layer = layer._history[0]
        if isinstance(layer, F.InputLayer):
            if self._input_layer is not None or self._layers:
                raise ValueError(f"Sequential '{self.name}': an Input can only be the first layer")
            object.__setattr__(self, "_input_layer", layer)
        elif not isinstance(layer, Layer):
            raise TypeError(f"Sequential '{self.name}': {layer!r} is not a layer")
        else:
            self._track(layer)
        object.__setattr__(self, "_functional", None)
        self.built = False
        if rebuild:
            self._maybe_rebuild()

    def pop(self, rebuild=True):
        if not self._layers:
            raise ValueError(f"Sequential '{self.name}' has no layers to pop")
        layer = self._layers.pop()
        object.__setattr__(self, "_functional", None)
        self.built = False
        if rebuild:
            self._maybe_rebuild()
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def _input_batch_shape(self):
        if self._input_layer is not None:
            return self._input_layer.batch_shape, self._input_layer._dtype_name
        first = self._layers[0] if self._layers else None
        shape = getattr(first, "_batch_input_shape", None)
        if shape is not None:
            return shape, None
        return None, None

    def _maybe_rebuild(self):
        shape, dtype = self._input_batch_shape()
        if shape is not None and self._layers:
            self._build_graph(shape, dtype)

    def _build_graph(self, batch_shape, dtype=None):
        if self._input_layer is None:
            inp = F.InputLayer(batch_shape=batch_shape, dtype=dtype)
            object.__setattr__(self, "_input_layer", inp)
        x = self._input_layer.output
        for layer in self._layers:
            x = layer(x)
        object.__setattr__(self, "_functional", Functional(self._input_layer.output, x, name=self.name))
        self._build_shapes = tuple(batch_shape)
        self.built = True

    def build(self, input_shape=None):
        if self._functional is not None:
            return
        if input_shape is None:
            shape, dtype = self._input_batch_shape()
            if shape is None:
                raise ValueError(f"Sequential '{self.name}': build() needs an input shape (or start with an Input)")
            input_shape = shape
        self._build_graph(tuple(input_shape))

    def _maybe_build(self, inputs):
        if self._functional is None:
            shape = [None] + list(getattr(inputs, "shape", ())[1:])
            dtype = getattr(inputs, "dtype", None)
            self._build_graph(tuple(shape), None if dtype is None else str(getattr(dtype, "name", dtype)))

    def call(self, inputs, training=None, mask=None):
        return self._functional.call(inputs, training=training)

    @property
    def inputs(self):
        return None if self._functional is None else self._functional.inputs

    @property
    def outputs(self):
        return None if self._functional is None else self._functional.outputs

    @property
    def input(self):
        return None if self._functional is None else self._functional.input

    @property
    def output(self):
        return None if self._functional is None else self._functional.output

    @property
    def output_names(self):
        return [self._layers[-1].name] if self._layers else []

    @output_names.setter
    def output_names(self, value):
        pass
