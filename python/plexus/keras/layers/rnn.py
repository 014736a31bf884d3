"""Recurrent layers: RNN (any cell), SimpleRNN, LSTM, GRU and Bidirectional, as in Keras 3.

The time loop is a Python loop over the time steps, so the sequence length
must be known: it always is eagerly, and inside ``plexus.function`` when
the traced inputs have a static time dimension (the batch may be unknown).
The cells (``rnn_cells.py``) own the weights, with Keras 3's layouts and
paths ("lstm/lstm_cell/kernel"), so weights copy across with
``set_weights(keras_layer.get_weights())``.

Masks (from ``Embedding(mask_zero=True)``, ``Masking`` or ``mask=``): at a
masked step the states keep their previous values and the output repeats
the previous output (zeros before the first unmasked step), as Keras's
loop does; with ``zero_output_for_mask=True`` (which ``Bidirectional``
sets for sequence outputs) masked steps output zeros.
"""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .base import Layer
from .rnn_cells import DropoutRNNCell, GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells


def _flat_states(states):
    if isinstance(states, (list, tuple)):
        return list(states)
    return [states]


def _flat_sizes(sizes):
    for s in sizes:
        if isinstance(s, (list, tuple)):
            yield from _flat_sizes(s)
        else:
            yield s


def _pack_states(sizes, flat):
    """Flat states in the nesting of a cell's state_size, for return_state."""
    if not isinstance(sizes, (list, tuple)):
        return [flat[0]]
    out, at = [], 0
    for s in sizes:
        n = len(list(_flat_sizes(s))) if isinstance(s, (list, tuple)) else 1
        out.append(flat[at:at + n] if isinstance(s, (list, tuple)) else flat[at])
        at += n
    return out


def _prefix_paths(layer, prefix):
    for w in layer.weights:
        if not w.path.startswith(prefix + "/"):
            w.path = f"{prefix}/{w.path}"


def _serialize_layer(layer):
    return {"module": "keras.layers", "class_name": type(layer).__name__, "config": layer.get_config(),
            "registered_name": None}


def _deserialize_layer(config):
    if isinstance(config, Layer):
        return config
    from .. import layers
    cls = getattr(layers, config["class_name"], None)
    if cls is None:
        raise ValueError(f"unknown layer class {config['class_name']!r}")
    return cls.from_config(dict(config.get("config") or {}))


class RNN(Layer):
    """Runs `cell` over the time axis of [batch, time, features] inputs.

    The cell is a layer with ``state_size`` and ``call(inputs, states,
    training=...)`` returning ``(output, new_states)``, like Keras's cells.
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells([_deserialize_layer(c) if isinstance(c, dict) else c for c in cell])
        cell = _deserialize_layer(cell) if isinstance(cell, dict) else cell
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(f"RNN: the cell needs a `call` method and a `state_size` attribute, got {cell!r}")
        super().__init__(**kwargs)
        self.zero_output_for_mask = zero_output_for_mask
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = stateful
        self.unroll = unroll
        self.supports_masking = True
        object.__setattr__(self, "states", None)
        if isinstance(cell.state_size, int):
            self.state_size, self.single_state = [cell.state_size], True
        else:  # flat: a StackedRNNCells' sizes are nested per cell
            self.state_size, self.single_state = list(_flat_sizes(cell.state_size)), False

    # -- building ------------------------------------------------------------------
    def build(self, sequences_shape, initial_state_shape=None):
        if isinstance(sequences_shape, list) and sequences_shape and isinstance(sequences_shape[0], (list, tuple)):
            sequences_shape = sequences_shape[0]
        if len(sequences_shape) < 3:
            raise ValueError(f"{type(self).__name__} '{self.name}': inputs must be [batch, time, features], "
                             f"got shape {tuple(sequences_shape)}")
        step_shape = (sequences_shape[0],) + tuple(sequences_shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
        _prefix_paths(self.cell, self.name)
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError(f"{type(self).__name__} '{self.name}': stateful=True needs a static batch size, "
                                 f"got input shape {tuple(sequences_shape)}")
            self._create_state_variables(sequences_shape[0])

    def _create_state_variables(self, batch_size):
        from ..variables import KerasVariable
        states = [KerasVariable(s.numpy(), name="rnn_state", path=f"{self.name}/rnn_state", trainable=False)
                  for s in self.get_initial_state(batch_size)]
        object.__setattr__(self, "states", states)  # not a weight, as in Keras

    def get_initial_state(self, batch_size):
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None:
            return _flat_states(fn(batch_size=batch_size))
        return DropoutRNNCell.get_initial_state(_SizesOnly(self.state_size, self.cell), batch_size)

    def reset_state(self):
        if self.states is not None:
            for v in self.states:
                v.assign(px.zeros_like(v.read_value()))

    reset_states = reset_state

    # -- masks and shapes ----------------------------------------------------------------
    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        output_mask = mask if self.return_sequences else None
        if self.return_state:  # one mask per output tensor (the states flat)
            return [output_mask] + [None] * len(self.state_size)
        return output_mask

    # -- the loop --------------------------------------------------------------------------
    def call(self, sequences, initial_state=None, mask=None, training=False):
        x = B.convert(sequences)
        steps = x.shape[1]
        if steps is None:
            raise ValueError(f"{type(self).__name__} '{self.name}': the sequence length must be known when tracing "
                             f"(got input shape {tuple(x.shape)}); give the traced function inputs with a static "
                             "time dimension")
        if initial_state is None:
            if self.stateful and self.states is not None:
                states = [v.read_value() for v in self.states]
            else:
                states = self.get_initial_state(B.dim(x, 0))
        else:
            states = _flat_states(initial_state)
        states = [B.convert(s, self.cell.compute_dtype) for s in states]
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        inputs = px.unstack(x, axis=1)
        masks = None
        if mask is not None:
            m = B.cast(B.cast(B.convert(mask), "bool"), x.dtype)
            masks = [px.expand_dims(t, -1) for t in px.unstack(m, axis=1)]
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        cell_kwargs = {}
        if isinstance(self.cell, Layer) and "training" in self.cell._call_params:
            cell_kwargs["training"] = training
        if isinstance(self.cell, DropoutRNNCell):
            self.cell._prepare_dropout(inputs[0], states[0], training)
        outputs, prev = [], None
        one = B.scalar(1.0, x.dtype)
        try:
            for t in order:
                out, new_states = self.cell(inputs[t], list(states), **cell_kwargs)
                out, new_states = B.convert(out), [B.convert(s) for s in _flat_states(new_states)]
                if masks is not None:
                    m = masks[t]
                    keep = one - m
                    new_states = [n * m + s * keep for n, s in zip(new_states, states)]
                    if self.zero_output_for_mask or prev is None:
                        out = out * m
                    else:
                        out = out * m + prev * keep
                states, prev = new_states, out
                if self.return_sequences:
                    outputs.append(out)
        finally:
            if isinstance(self.cell, DropoutRNNCell):
                self.cell._reset_dropout()
        if self.stateful and self.states is not None:
            for v, s in zip(self.states, states):
                v.assign(s)
        dtype = self.compute_dtype
        output = px.stack(outputs, axis=1) if self.return_sequences else prev
        output = B.cast(output, dtype)
        if self.return_state:  # the states in the cell's structure (a stack's: one entry per cell)
            return (output,) + tuple(_pack_states(self.cell.state_size, [B.cast(s, dtype) for s in states]))
        return output

    def get_config(self):
        config = {"return_sequences": self.return_sequences, "return_state": self.return_state,
                  "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                  "zero_output_for_mask": self.zero_output_for_mask, "cell": _serialize_layer(self.cell)}
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "cell" in config:
            config["cell"] = _deserialize_layer(config["cell"])
        return super().from_config(config)


class _SizesOnly:
    """Stands in for a cell without get_initial_state: zeros of each state size."""

    def __init__(self, sizes, cell):
        self.state_size = sizes
        self.compute_dtype = getattr(cell, "compute_dtype", B.floatx())


_CELL_ARGS = ("kernel_initializer", "recurrent_initializer", "bias_initializer", "kernel_regularizer",
              "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
              "bias_constraint", "dropout", "recurrent_dropout", "seed")


class _CellRNN(RNN):
    """SimpleRNN, LSTM and GRU: an RNN that builds its own cell from the layer's arguments."""

    _cell_class = None
    _cell_name = None
    _extra = ()

    def __init__(self, units, *, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, activity_regularizer=None, use_cudnn="auto", cell_kwargs=None, **kwargs):
        kwargs.pop("implementation", None)
        cell = self._cell_class(units, dtype=kwargs.get("dtype"), trainable=kwargs.get("trainable", True),
                                name=self._cell_name, **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.use_cudnn = use_cudnn

    def call(self, sequences, initial_state=None, mask=None, training=False):
        return super().call(sequences, initial_state=initial_state, mask=mask, training=training)

    def __getattr__(self, name):
        if name in ("units", "activation", "recurrent_activation", "use_bias", "dropout", "recurrent_dropout",
                    "unit_forget_bias", "reset_after") + _CELL_ARGS[:-3]:
            cell = self.__dict__.get("cell")
            if cell is not None and hasattr(cell, name):
                return getattr(cell, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_config(self):
        from .. import regularizers
        config = super().get_config()
        del config["cell"]
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        reg = self.activity_regularizer
        return {**config, **cell, "activity_regularizer": None if reg is None else regularizers.serialize(reg)}


class SimpleRNN(_CellRNN):
    """A fully connected RNN whose output is fed back as the next step's state."""

    _cell_class, _cell_name = SimpleRNNCell, "simple_rnn_cell"

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, **kwargs):
        loc = locals()
        cell_kwargs = {k: loc[k] for k in ("activation", "use_bias") + _CELL_ARGS}
        super().__init__(units, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         activity_regularizer=activity_regularizer, cell_kwargs=cell_kwargs, **kwargs)


class LSTM(_CellRNN):
    """Long short-term memory; states [h, c]. Keras 3's weights: kernel [in, 4u] (gates i, f, c, o)."""

    _cell_class, _cell_name = LSTMCell, "lstm_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, use_cudnn="auto", **kwargs):
        loc = locals()
        cell_kwargs = {k: loc[k] for k in ("activation", "recurrent_activation", "use_bias", "unit_forget_bias")
                       + _CELL_ARGS}
        super().__init__(units, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll, use_cudnn=use_cudnn,
                         activity_regularizer=activity_regularizer, cell_kwargs=cell_kwargs, **kwargs)


class GRU(_CellRNN):
    """Gated recurrent unit; Keras 3's weights (bias [2, 3u] with reset_after=True, the default)."""

    _cell_class, _cell_name = GRUCell, "gru_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True, use_cudnn="auto", **kwargs):
        loc = locals()
        cell_kwargs = {k: loc[k] for k in ("activation", "recurrent_activation", "use_bias", "reset_after")
                       + _CELL_ARGS}
        super().__init__(units, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll, use_cudnn=use_cudnn,
                         activity_regularizer=activity_regularizer, cell_kwargs=cell_kwargs, **kwargs)


def _merge(mode, y, y_rev):
    if mode == "concat":
        return px.concat([y, y_rev], axis=-1)
    if mode == "sum":
        return y + y_rev
    if mode == "ave":
        return (y + y_rev) / B.scalar(2.0, y.dtype)
    if mode == "mul":
        return y * y_rev
    return (y, y_rev)


class Bidirectional(Layer):
    """Runs a recurrent layer forwards and a copy of it backwards, and merges their outputs.

    ``merge_mode`` is "concat" (default), "sum", "mul", "ave" or None (a
    pair of outputs). The forward copy is named "forward_<name>", the
    backward one "backward_<name>" unless `backward_layer` is given.
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if isinstance(layer, dict):
            layer = _deserialize_layer(layer)
        if isinstance(backward_layer, dict):
            backward_layer = _deserialize_layer(backward_layer)
        if not isinstance(layer, Layer):
            raise ValueError(f"Bidirectional: `layer` must be a layer, got {layer!r}")
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Bidirectional: merge_mode must be one of sum, mul, ave, concat or None, "
                             f"got {merge_mode!r}")
        super().__init__(**kwargs)
        base = layer.name[len("forward_"):] if layer.name.startswith("forward_") else layer.name
        self.forward_layer = type(layer).from_config({**layer.get_config(), "name": f"forward_{base}"})
        if backward_layer is None:
            base = layer.name[len("backward_"):] if layer.name.startswith("backward_") else layer.name
            backward_layer = type(layer).from_config({**layer.get_config(), "go_backwards": True,
                                                      "name": f"backward_{base}"})
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError("Bidirectional: the forward and backward layers need different go_backwards values")
        for attr in ("stateful", "return_sequences", "return_state"):
            if getattr(self.forward_layer, attr) != getattr(self.backward_layer, attr):
                raise ValueError(f"Bidirectional: the forward and backward layers need the same {attr}")
        for sub in (self.forward_layer, self.backward_layer):
            if hasattr(sub, "zero_output_for_mask"):
                sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        self._initial_weights = weights
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True

    def build(self, sequences_shape, initial_state_shape=None):
        for sub in (self.forward_layer, self.backward_layer):
            if not sub.built:
                sub.build(sequences_shape)
                sub.built = True
            _prefix_paths(sub, self.name)
        if self._initial_weights:
            self.set_weights(self._initial_weights)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {}
        if "training" in self.forward_layer._call_params:
            kwargs["training"] = training
        if "mask" in self.forward_layer._call_params and mask is not None:
            kwargs["mask"] = mask
        fwd_state = bwd_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fwd_state, bwd_state = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer(sequences, initial_state=fwd_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=bwd_state, **kwargs)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        y, y_rev = B.cast(y, self.compute_dtype), B.cast(y_rev, self.compute_dtype)
        if self.return_sequences:
            y_rev = px.reverse(y_rev, [1])
        output = _merge(self.merge_mode, y, y_rev)
        if self.return_state:
            return (output + states) if self.merge_mode is None else (output,) + states
        return output

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        output_mask = mask if self.return_sequences else None
        output_mask = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state:
            n = len(self.forward_layer.state_size) * 2
            return output_mask + [None] * n
        return output_mask if self.merge_mode is None else output_mask[0]

    def reset_state(self):
        for sub in (self.forward_layer, self.backward_layer):
            sub.reset_state()

    reset_states = reset_state

    def get_config(self):
        # Keras 3 always writes the backward layer too.
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": _serialize_layer(self.forward_layer),
                "backward_layer": _serialize_layer(self.backward_layer)}


__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU", "Bidirectional", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"]
