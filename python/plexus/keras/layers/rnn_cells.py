"""Recurrent cells: SimpleRNNCell, LSTMCell and GRUCell, with Keras 3's weight layouts.

A cell computes one time step: ``output, new_states = cell(x_t, states)``.
The ``RNN`` layer (in ``rnn.py``) loops a cell over the time axis. Weights
are laid out exactly as Keras 3 lays them out, so ``set_weights`` with a
Keras layer's ``get_weights()`` gives the same results:

* SimpleRNNCell: kernel [in, u], recurrent_kernel [u, u], bias [u].
* LSTMCell: kernel [in, 4u], recurrent_kernel [u, 4u], bias [4u]; the gates
  are ordered input, forget, cell candidate, output.
* GRUCell: kernel [in, 3u], recurrent_kernel [u, 3u], gates ordered update
  (z), reset (r), candidate (h); bias [3u], or [2, 3u] (input bias, then
  recurrent bias) with ``reset_after=True`` (the default).
"""

from __future__ import annotations

import numpy as np

import plexus as px

from .. import _backend as B
from .. import activations, constraints, initializers, regularizers
from ..variables import SeedGenerator, uniform
from .base import Layer


def _ser(module, obj):
    return None if obj is None else module.serialize(obj)


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


class DropoutRNNCell:
    """Dropout masks for a cell, drawn once per sequence and reused at every step (as in Keras).

    The RNN layer calls ``_prepare_dropout(step_input, state, training)``
    before the loop and ``_reset_dropout()`` after it.
    """

    def _make_mask(self, like, rate):
        x = B.convert(like)
        shape = B.dynamic_shape(x) if None in x.shape else list(x.shape)
        keep = uniform(shape, self.seed_generator, dtype=x.dtype) >= B.scalar(rate, x.dtype)
        return B.cast(keep, x.dtype) / B.scalar(1.0 - rate, x.dtype)

    def _prepare_dropout(self, step_input, state, training):
        self._dropout_mask = self._recurrent_dropout_mask = None
        if not training:
            return
        if 0.0 < self.dropout < 1.0:
            self.__dict__["_dropout_mask"] = self._make_mask(step_input, self.dropout)
        if 0.0 < self.recurrent_dropout < 1.0:
            self.__dict__["_recurrent_dropout_mask"] = self._make_mask(state, self.recurrent_dropout)

    def _reset_dropout(self):
        self.__dict__["_dropout_mask"] = None
        self.__dict__["_recurrent_dropout_mask"] = None

    def _drop_input(self, x, training):
        mask = self.__dict__.get("_dropout_mask")
        if not training or not 0.0 < self.dropout < 1.0:
            return x
        if mask is None:  # the cell is called on its own, outside an RNN layer
            mask = self._make_mask(x, self.dropout)
        return x * mask

    def _drop_state(self, h, training):
        mask = self.__dict__.get("_recurrent_dropout_mask")
        if not training or not 0.0 < self.recurrent_dropout < 1.0:
            return h
        if mask is None:
            mask = self._make_mask(h, self.recurrent_dropout)
        return h * mask

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        out = []
        for d in sizes:
            if B.is_tensor(batch_size):
                shape = px.stack([B.cast(batch_size, "int32"), B.scalar(d, "int32")])
                out.append(px.fill(shape, B.scalar(0.0, self.compute_dtype)))
            else:
                out.append(px.zeros([batch_size, d], dtype=self.compute_dtype))
        return out


class _CellBase(Layer, DropoutRNNCell):
    """What the three cells share: arguments, weights and their configs."""

    _gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        kwargs.pop("implementation", None)
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f"{type(self).__name__}: units must be a positive integer, got {units}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self.seed_generator = SeedGenerator(seed, name=f"{self.name}_seed")
        self.output_size = self.units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        n = self._gates * self.units
        self.kernel = self.add_weight(shape=(input_shape[-1], n), name="kernel", initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(self.units, n), name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight(shape=self._bias_shape(), name="bias", initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": _ser(regularizers, self.kernel_regularizer),
                "recurrent_regularizer": _ser(regularizers, self.recurrent_regularizer),
                "bias_regularizer": _ser(regularizers, self.bias_regularizer),
                "kernel_constraint": _ser(constraints, self.kernel_constraint),
                "recurrent_constraint": _ser(constraints, self.recurrent_constraint),
                "bias_constraint": _ser(constraints, self.bias_constraint),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout, "seed": self.seed}


def _split(x, n):
    return px.split(x, n, axis=-1)


class SimpleRNNCell(_CellBase):
    """h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)."""

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
                         bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                         recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint, dropout=dropout,
                         recurrent_dropout=recurrent_dropout, seed=seed, **kwargs)
        self.state_size = self.units

    def call(self, inputs, states, training=False):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        x = self._drop_input(B.convert(inputs), training)
        h = px.matmul(x, self.kernel)
        if self.bias is not None:
            h = px.nn.bias_add(h, self.bias)
        out = self.activation(h + px.matmul(self._drop_state(B.convert(prev), training), self.recurrent_kernel))
        return out, ([out] if isinstance(states, (list, tuple)) else out)

    def get_config(self):
        config = super().get_config()
        del config["recurrent_activation"]
        return config


class LSTMCell(_CellBase):
    """One LSTM step; gates i, f, c, o in that order along the last axis of every weight."""

    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        u, init = self.units, self.bias_initializer

        def forget_ones(shape, dtype=None):
            parts = [_np(init((u,), dtype=dtype)), np.ones((u,), B.dtype_name(dtype) or "float32"),
                     _np(init((2 * u,), dtype=dtype))]
            return np.concatenate(parts)
        return forget_ones

    def call(self, inputs, states, training=False):
        h_prev, c_prev = B.convert(states[0]), B.convert(states[1])
        x = self._drop_input(B.convert(inputs), training)
        z = px.matmul(x, self.kernel) + px.matmul(self._drop_state(h_prev, training), self.recurrent_kernel)
        if self.bias is not None:
            z = px.nn.bias_add(z, self.bias)
        zi, zf, zc, zo = _split(z, 4)
        i = self.recurrent_activation(zi)
        f = self.recurrent_activation(zf)
        c = f * c_prev + i * self.activation(zc)
        o = self.recurrent_activation(zo)
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_CellBase):
    """One GRU step; gates z (update), r (reset), h (candidate). ``reset_after`` as in Keras (default True)."""

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, **kwargs):
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, **kwargs)
        self.reset_after = reset_after
        self.state_size = self.units

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        h_prev = B.convert(states[0] if nested else states)
        u = self.units
        x = self._drop_input(B.convert(inputs), training)
        h_in = self._drop_state(h_prev, training)
        in_bias = rec_bias = None
        if self.bias is not None:
            if self.reset_after:
                in_bias, rec_bias = px.unstack(B.convert(self.bias), axis=0)
            else:
                in_bias = self.bias
        mx = px.matmul(x, self.kernel)
        if in_bias is not None:
            mx = px.nn.bias_add(mx, in_bias)
        xz, xr, xh = _split(mx, 3)
        rk = B.convert(self.recurrent_kernel)
        if self.reset_after:
            inner = px.matmul(h_in, rk)
            if rec_bias is not None:
                inner = px.nn.bias_add(inner, rec_bias)
            rz, rr, rh = _split(inner, 3)
            z = self.recurrent_activation(xz + rz)
            r = self.recurrent_activation(xr + rr)
            hh = self.activation(xh + r * rh)
        else:
            rk_zr, rk_h = px.split(rk, [2 * u, u], axis=1)
            rz, rr = _split(px.matmul(h_in, rk_zr), 2)
            z = self.recurrent_activation(xz + rz)
            r = self.recurrent_activation(xr + rr)
            hh = self.activation(xh + px.matmul(r * h_in, rk_h))
        h = z * h_prev + (B.scalar(1.0, z.dtype) - z) * hh
        return h, ([h] if nested else h)

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}


def _state_count(cell):
    return len(cell.state_size) if isinstance(cell.state_size, (list, tuple)) else 1


def _output_size(cell):
    if getattr(cell, "output_size", None) is not None:
        return cell.output_size
    return cell.state_size[0] if isinstance(cell.state_size, (list, tuple)) else cell.state_size


class StackedRNNCells(Layer, DropoutRNNCell):
    """Cells run one after another at each step, as Keras 3's StackedRNNCells
    (what ``RNN([cell, cell])`` builds): each cell's output is the next one's
    input. ``state_size`` is Keras's nested list; the RNN layer passes the
    states flat, in cell order, and gets them back flat."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        cells = list(cells)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"StackedRNNCells: every cell needs a `call` method and a `state_size`, got {cell!r}")
        if not cells:
            raise ValueError("StackedRNNCells: no cells")
        self.cells = cells
        self._dropout_training = None

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            input_shape = (tuple(input_shape)[0], _output_size(cell))
        self.built = True

    def get_initial_state(self, batch_size=None):
        out = []
        for cell in self.cells:
            fn = getattr(cell, "get_initial_state", None)
            states = fn(batch_size=batch_size) if fn is not None else DropoutRNNCell.get_initial_state(cell, batch_size)
            out.extend(states if isinstance(states, (list, tuple)) else [states])
        return out

    # Each cell draws its dropout masks at its first step, from its own input.
    def _prepare_dropout(self, step_input, state, training):
        self._dropout_training = training

    def _reset_dropout(self):
        self._dropout_training = None
        for cell in self.cells:
            if isinstance(cell, DropoutRNNCell):
                cell._reset_dropout()

    def call(self, inputs, states, training=False):
        flat = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(flat) != sum(_state_count(c) for c in self.cells):
            raise ValueError(f"StackedRNNCells '{self.name}': got {len(flat)} states for cells with state sizes "
                             f"{self.state_size}")
        x, new_states, at = inputs, [], 0
        first_step = self._dropout_training is not None
        for cell in self.cells:
            n = _state_count(cell)
            own = flat[at:at + n]
            at += n
            if first_step and isinstance(cell, DropoutRNNCell):
                cell._prepare_dropout(x, own[0], self._dropout_training)
            kwargs = {"training": training} if isinstance(cell, Layer) and "training" in cell._call_params else {}
            x, out_states = cell(x, own, **kwargs)
            new_states.extend(out_states if isinstance(out_states, (list, tuple)) else [out_states])
        if first_step:
            self._dropout_training = None  # prepared: later steps reuse the masks
        return x, new_states

    def get_config(self):
        from .rnn import _serialize_layer
        return {**super().get_config(), "cells": [_serialize_layer(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config):
        from .rnn import _deserialize_layer
        config = dict(config)
        cells = [_deserialize_layer(c) for c in config.pop("cells")]
        return cls(cells, **config)


__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"]
