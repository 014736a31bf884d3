"""The base ``Layer``: weights, building on first call, sub-layer tracking, configs.

A layer is called on tensors (eager or traced), or on symbolic
``KerasTensor``s to build a functional model. Its first call builds it
(``build(input_shape)`` creates the weights). Weights are
:class:`~plexus.keras.variables.KerasVariable`s, listed own weights first,
then those of the sub-layers in the order they were assigned, as in Keras 3.
"""

from __future__ import annotations

import collections
import inspect
import re

import numpy as np

from .. import _backend as B
from .. import initializers as _init
from .. import mixed_precision as _mp
from ..variables import KerasVariable

_name_counts: collections.Counter = collections.Counter()


def snake_case(name: str) -> str:
    """Keras's to_snake_case: "MaxPooling2D" -> "max_pooling2d"."""
    name = re.sub(r"\W+", "", name)
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def unique_name(base: str) -> str:
    """"dense", then "dense_1", "dense_2", ... (per process, like Keras)."""
    n = _name_counts[base]
    _name_counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def _shape_of(x):
    if isinstance(x, (list, tuple)):
        return [_shape_of(v) for v in x]
    if isinstance(x, dict):
        return {k: _shape_of(v) for k, v in x.items()}
    s = getattr(x, "shape", None)
    return None if s is None else tuple(s)


def _is_keras_tensor(x) -> bool:
    return getattr(x, "_is_keras_tensor", False)


def _any(structure, pred) -> bool:
    if isinstance(structure, (list, tuple)):
        return any(_any(v, pred) for v in structure)
    if isinstance(structure, dict):
        return any(_any(v, pred) for v in structure.values())
    return pred(structure)


def _map(structure, fn):
    if isinstance(structure, list):
        return [_map(v, fn) for v in structure]
    if isinstance(structure, tuple):
        return tuple(_map(v, fn) for v in structure)
    if isinstance(structure, dict):
        return {k: _map(v, fn) for k, v in structure.items()}
    return fn(structure)


def _to_tensor(x):
    if isinstance(x, np.ndarray) or isinstance(x, (float, int)) and not isinstance(x, bool):
        return B.convert(x)
    return x


class Layer:
    """The base class of every layer; subclass it like ``keras.layers.Layer``::

        class Scale(plexus.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

            def call(self, x):
                return x * self.w
    """

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None, autocast=True,
                 name=None, **kwargs):
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        batch_size = kwargs.pop("batch_size", None)
        kwargs.pop("input_length", None)  # Keras 2's Embedding argument
        if kwargs.pop("quantization_config", None) is not None:
            raise NotImplementedError(f"{type(self).__name__}: quantized layers (quantization_config) are not "
                                      "supported by plexus.keras")
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unrecognized keyword arguments: {sorted(kwargs)}")
        self._ensure_tracking()
        self.name = name or unique_name(snake_case(type(self).__name__))
        self._trainable = bool(trainable)
        self.dtype_policy = _mp.get_policy(dtype)
        self.autocast = autocast
        from .. import regularizers
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.built = False
        self.supports_masking = getattr(self, "supports_masking", False)
        self.input_spec = None
        self._build_shapes = None
        self._called = False
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (batch_size,) + tuple(input_shape)
        self._call_params = _call_params(type(self).call)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_marks_built", False):
            # As in Keras, a layer built by hand (layer.build(shape)) is built:
            # its first call must not create the weights again.
            def marked(self, *args, **kw):
                result = build(self, *args, **kw)
                self.built = True
                if self.__dict__.get("_build_shapes") is None and args:
                    self._build_shapes = args[0]
                return result
            marked._marks_built = True
            marked.__doc__, marked.__name__, marked.__qualname__ = build.__doc__, "build", build.__qualname__
            cls.build = marked

    # -- attribute tracking ------------------------------------------------------
    def _ensure_tracking(self):
        d = self.__dict__
        if "_layers" not in d:
            d["_layers"] = []
            d["_trainable_variables"] = []
            d["_non_trainable_variables"] = []
            d["_losses"] = []
            d["_seed_generators"] = []

    def __setattr__(self, name, value):
        if not name.startswith("__"):
            self._ensure_tracking()
            self._track(value)
        object.__setattr__(self, name, value)

    def _track(self, value):
        if isinstance(value, Layer):
            if value is not self and all(value is not l for l in self._layers):
                self._layers.append(value)
        elif isinstance(value, KerasVariable):
            if all(value is not v for v in self._trainable_variables + self._non_trainable_variables):
                (self._trainable_variables if value.trainable else self._non_trainable_variables).append(value)
        elif isinstance(value, (list, tuple)) and not isinstance(value, str):
            for v in value:
                if isinstance(v, (Layer, KerasVariable)):
                    self._track(v)

    # -- dtypes -----------------------------------------------------------------
    @property
    def dtype(self) -> str:
        """The variables' dtype (Keras's `layer.dtype`)."""
        return self.dtype_policy.variable_dtype

    @property
    def compute_dtype(self) -> str:
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self.dtype_policy.variable_dtype

    # -- weights ------------------------------------------------------------------
    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", name=None):
        """Creates a weight of this layer (a KerasVariable), like Keras's ``add_weight``."""
        from .. import constraints, regularizers
        self._ensure_tracking()
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = B.dtype_name(dtype) or self.variable_dtype
        if initializer is None:
            initializer = "glorot_uniform" if B.is_float(dtype) else "zeros"
        init = _init.get(initializer)
        name = name or f"variable_{len(self._trainable_variables) + len(self._non_trainable_variables)}"
        value = init(shape, dtype=dtype)
        var = KerasVariable(value, name=name, path=f"{self.name}/{name}", trainable=trainable, dtype=dtype,
                            regularizer=regularizers.get(regularizer), constraint=constraints.get(constraint),
                            aggregation=aggregation)
        (self._trainable_variables if trainable else self._non_trainable_variables).append(var)
        return var

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._layers:
            layer.trainable = value

    @property
    def weights(self) -> list:
        out, seen = [], set()
        for w in self._trainable_variables + self._non_trainable_variables:
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
        for layer in self._layers:
            for w in layer.weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    variables = weights

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        own = [v for v in self._trainable_variables if v.trainable]
        out, seen = list(own), {id(v) for v in own}
        for layer in self._layers:
            for w in layer.trainable_weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        trainable = {id(v) for v in self.trainable_weights}
        return [v for v in self.weights if id(v) not in trainable]

    non_trainable_variables = non_trainable_weights

    def get_weights(self) -> list:
        """The weights' values as NumPy arrays, in `weights` order."""
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights) -> None:
        """Sets every weight from NumPy arrays in `weights` order; shapes must match."""
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"layer '{self.name}': set_weights got {len(weights)} arrays for "
                             f"{len(mine)} weights ({', '.join(w.path for w in mine)})")
        for w, value in zip(mine, weights):
            value = np.asarray(value)
            if tuple(value.shape) != tuple(w.shape):
                raise ValueError(f"layer '{self.name}': weight {w.path} has shape {tuple(w.shape)}, "
                                 f"got an array of shape {tuple(value.shape)}")
            w.assign(value.astype(B.dtype_name(w.dtype)))

    def count_params(self) -> int:
        return int(sum(np.prod(w.shape, dtype=np.int64) for w in self.weights))

    # -- losses -------------------------------------------------------------------
    def add_loss(self, loss) -> None:
        """Adds a loss tensor (a regularization term) that Model.fit adds to the objective."""
        self._losses.append(loss)

    @property
    def losses(self) -> list:
        """The regularization losses of this call: weight regularizers and add_loss terms."""
        out = list(self._losses)
        for w in self._trainable_variables:
            if w.regularizer is not None:
                out.append(w.regularizer(w.read_value()))
        for layer in self._layers:
            out.extend(layer.losses)
        return out

    def _clear_losses(self):
        self._losses.clear()
        for layer in self._layers:
            layer._clear_losses()

    # -- building and calling ----------------------------------------------------
    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask if self.supports_masking else None

    def compute_output_shape(self, input_shape):
        from ..models.functional import output_shape_by_running
        return output_shape_by_running(self, input_shape)

    def _maybe_build(self, inputs):
        if self.built:
            return
        shape = _shape_of(inputs)
        self._build_shapes = shape
        build = type(self).build
        if build is not Layer.build:
            self.build(_shape_tuple(shape))
        self.built = True

    def __call__(self, *args, **kwargs):
        self._ensure_tracking()
        if _any((args, kwargs), _is_keras_tensor):
            from ..models.functional import symbolic_call
            return symbolic_call(self, args, kwargs)
        if not getattr(self, "_raw_args", False):
            args = _map(args, _to_tensor)
        if args and self.autocast:
            args = (_map(args[0], lambda t: _autocast_input(t, self.compute_dtype)),) + tuple(args[1:])
        if "training" in self._call_params and kwargs.get("training") is None:
            phase = B.learning_phase()
            kwargs["training"] = bool(phase) if phase is not None else False
        elif "training" not in self._call_params and not self._call_params.get("**"):
            kwargs.pop("training", None)
        if "mask" not in self._call_params and not self._call_params.get("**"):
            kwargs.pop("mask", None)
        if args:
            self._maybe_build(args[0])
        else:
            self.built = True
        cast_to = self.compute_dtype if self.autocast and self.compute_dtype != self.variable_dtype else None
        if cast_to is None and B.autocast_dtype() is not None:
            # A float32 layer inside a mixed-precision model reads its variables
            # as they are (Keras's output Dense with dtype="float32").
            with B.autocast_scope(None):
                outputs = self.call(*args, **kwargs)
        elif cast_to is not None:
            with B.autocast_scope(cast_to):
                outputs = self.call(*args, **kwargs)
        else:
            outputs = self.call(*args, **kwargs)
        self._called = True
        if self.activity_regularizer is not None:
            for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs]):
                reg = self.activity_regularizer(o)
                batch = B.cast(B.dim(o, 0), reg.dtype)
                self.add_loss(reg / batch)
        return outputs

    # -- configs --------------------------------------------------------------------
    def get_config(self) -> dict:
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype_policy.get_config()}
        if getattr(self, "_batch_input_shape", None) is not None:
            config["batch_input_shape"] = list(self._batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = _mp.policy_from_config(config["dtype"])
        return cls(**config)

    def get_build_config(self):
        if self._build_shapes is not None:
            return {"input_shape": _json_shape(self._build_shapes)}
        return None

    def build_from_config(self, config):
        if config and "input_shape" in config and not self.built:
            shape = _shape_tuple(config["input_shape"])
            if type(self).build is not Layer.build:
                self.build(shape)
            self._build_shapes = shape
            self.built = True

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _shape_tuple(shape):
    if shape is None:
        return None
    if isinstance(shape, dict):
        return {k: _shape_tuple(v) for k, v in shape.items()}
    if isinstance(shape, (list, tuple)) and shape and all(
            isinstance(s, (list, tuple)) or s is None and False for s in shape):
        return [_shape_tuple(s) for s in shape]
    return tuple(shape)


def _json_shape(shape):
    if isinstance(shape, dict):
        return {k: _json_shape(v) for k, v in shape.items()}
    if isinstance(shape, list) and shape and isinstance(shape[0], (list, tuple)):
        return [_json_shape(s) for s in shape]
    return None if shape is None else list(shape)


def _needs_cast(x, compute):
    return B.is_tensor(x) and B.is_float(x.dtype) and B.dtype_name(x.dtype) != compute


def _autocast_input(x, compute):
    return B.cast(x, compute) if _needs_cast(x, compute) else x


def _call_params(fn) -> dict:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {"**": True}
    out = {name: p for name, p in params.items()}
    out["**"] = any(p.kind == p.VAR_KEYWORD for p in params.values())
    return out
