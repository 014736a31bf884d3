"""Attention layers: MultiHeadAttention, Attention (dot-product) and AdditiveAttention, as in Keras 3.

MultiHeadAttention holds four projection sub-layers named query, key, value
and attention_output with Keras 3's EinsumDense weight shapes (query and
key kernels [dim, heads, key_dim], biases [heads, key_dim]; the output
kernel [heads, value_dim, dim]), in Keras's order, so ``set_weights`` with a
Keras layer's ``get_weights()`` gives the same results. The projections and
the attention are reshapes, transposes and (batched) matrix products, so
they differentiate with ``plexus.GradientTape`` and trace in
``plexus.function`` with an unknown batch size.
"""

from __future__ import annotations

import math

import numpy as np

import plexus as px

from .. import _backend as B
from .. import activations, constraints, initializers, regularizers
from ..variables import SeedGenerator, uniform
from .base import Layer


def _ser(module, obj):
    return None if obj is None else module.serialize(obj)


def _dims(x):
    """The shape of x as a list: ints where static, int32 scalar tensors where not."""
    return [B.dim(x, i) for i in range(len(x.shape))]


def _prod(dims):
    out = 1
    for d in dims:
        if isinstance(out, int) and isinstance(d, int):
            out *= d
        else:
            out = (B.scalar(out, "int32") if isinstance(out, int) else out) * \
                  (B.scalar(d, "int32") if isinstance(d, int) else B.cast(d, "int32"))
    return out


def _reshape(x, dims):
    if all(isinstance(d, int) for d in dims):
        return px.reshape(x, list(dims))
    return px.reshape(x, px.stack([B.scalar(d, "int32") if isinstance(d, int) else B.cast(d, "int32")
                                   for d in dims]))


def _read(var):
    """A weight's value with its static shape (a Reshape pins the shape for the gradient graph)."""
    value = B.convert(var)
    return px.reshape(value, list(var.shape))


def _prefix_paths(layer, prefix):
    for w in layer.weights:
        if not w.path.startswith(prefix + "/"):
            w.path = f"{prefix}/{w.path}"


def _dropout(x, rate, seed_generator):
    keep = uniform(B.dynamic_shape(x), seed_generator, dtype=x.dtype) >= B.scalar(rate, x.dtype)
    return x * B.cast(keep, x.dtype) / B.scalar(1.0 - rate, x.dtype)


def _masked_softmax(scores, mask, zero_masked=True):
    """Softmax over the last axis; where mask is False the probability is 0.

    zero_masked: Keras's Softmax layer with a mask also zeroes a row whose
    every entry is masked; Keras's dot_product_attention leaves such a row
    uniform (its masked logits are all the same large negative number)."""
    if mask is None:
        return px.nn.softmax(scores)
    m = B.cast(mask, scores.dtype)
    big = B.scalar(-1e9 if B.dtype_name(scores.dtype) != "float16" else -65504.0, scores.dtype)
    scores = scores * m + (B.scalar(1.0, scores.dtype) - m) * big
    return px.nn.softmax(scores) * m if zero_masked else px.nn.softmax(scores)


def _lower_triangle(tq, tv):
    """The causal mask [1, tq, tv]: row i may attend to columns j <= i (sizes static or int32 scalars)."""
    if isinstance(tq, int) and isinstance(tv, int):
        rows, cols = np.arange(tq)[:, None], np.arange(tv)[None, :]
        return px.constant((rows >= cols)[None])
    rows = px.reshape(px.range(0, tq, 1), [1, -1, 1])
    cols = px.reshape(px.range(0, tv, 1), [1, 1, -1])
    return px.greater_equal(rows, cols)


class _Projection(Layer):
    """Keras's EinsumDense as MultiHeadAttention uses it: contracts the last `n_in` input axes with the
    kernel's first `n_in` axes; kernel shape (in_dims..., out_dims...), bias shape (out_dims...)."""

    def __init__(self, out_dims, n_in=1, use_bias=True, activation=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.out_dims, self.n_in, self.use_bias = tuple(out_dims), n_in, use_bias
        self.activation = activations.get(activation)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape):
        in_dims = tuple(input_shape[-self.n_in:])
        if None in in_dims:
            raise ValueError(f"MultiHeadAttention projection '{self.name}': the contracted dimensions must be "
                             f"known, got input shape {tuple(input_shape)}")
        self.kernel = self.add_weight(shape=in_dims + self.out_dims, name="kernel",
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(shape=self.out_dims, name="bias", initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        x = B.convert(inputs)
        lead = _dims(x)[:-self.n_in]
        k = B.convert(self.kernel)
        n_in = int(np.prod(k.shape[:self.n_in]))
        n_out = int(np.prod(self.out_dims))
        y = px.matmul(px.reshape(x, [-1, n_in]), px.reshape(k, [n_in, n_out]))
        if self.bias is not None:
            y = px.nn.bias_add(y, px.reshape(B.convert(self.bias), [n_out]))
        return self.activation(_reshape(y, lead + list(self.out_dims)))


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al.), with Keras 3's arguments, weights and masking rules.

    ``call(query, value, key=None, query_mask=None, value_mask=None,
    key_mask=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)``; inputs are [batch, (axes...),
    features]; attention runs over `attention_axes` (default: every axis
    between the batch and the features, the sequence axis for 3D inputs).
    """

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError(f"MultiHeadAttention: num_heads must be a positive integer, got {num_heads}")
        if not isinstance(key_dim, int) or key_dim <= 0:
            raise ValueError(f"MultiHeadAttention: key_dim must be a positive integer, got {key_dim}")
        self.supports_masking = True
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self._use_gate = float(dropout), use_bias, use_gate
        if output_shape:
            output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self._output_shape = output_shape
        self._flash_attention = flash_attention
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._mha_activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        self._attention_axes = None if attention_axes is None else tuple(attention_axes)
        self._sliding_window = sliding_window
        self.seed = seed
        self.seed_generator = SeedGenerator(seed, name=f"{self.name}_seed")
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(key_dim))
        self._query_dense = None

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)
    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    output_dense = property(lambda self: self._output_dense)

    def _sub(self, out_dims, name, n_in=1, activation=None):
        init = lambda i: type(i).from_config(i.get_config()) if hasattr(i, "get_config") else i  # noqa: E731
        return _Projection(out_dims, n_in=n_in, use_bias=self._use_bias, activation=activation,
                           kernel_initializer=init(self._kernel_initializer),
                           bias_initializer=init(self._bias_initializer),
                           kernel_regularizer=self._kernel_regularizer, bias_regularizer=self._bias_regularizer,
                           kernel_constraint=self._kernel_constraint, bias_constraint=self._bias_constraint,
                           name=name, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:
            return  # built on the first call, when the value's shape is known
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError(f"MultiHeadAttention '{self.name}': value and key must agree on every dimension but "
                             f"the last, got value_shape={value_shape} and key_shape={key_shape}")
        heads = self._num_heads
        self._query_dense = self._sub((heads, self._key_dim), "query")
        self._query_dense.build(query_shape)
        self._key_dense = self._sub((heads, self._key_dim), "key")
        self._key_dense.build(key_shape)
        if self._use_gate:
            self._gate_dense = self._sub((heads, self._value_dim), "gate", activation="sigmoid")
            self._gate_dense.build(query_shape)
        self._value_dense = self._sub((heads, self._value_dim), "value")
        self._value_dense.build(value_shape)
        rank = len(query_shape) + 1
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        else:
            self._attention_axes = tuple(a if a >= 0 else (rank - 1) + a for a in self._attention_axes)
        out = self._output_shape or (query_shape[-1],)
        self._output_dense = self._sub(tuple(out), "attention_output", n_in=2)
        self._output_dense.build(tuple(query_shape[:-1]) + (heads, self._value_dim))
        for sub in (self._query_dense, self._key_dense, self._value_dense, self._output_dense):
            _prefix_paths(sub, self.name)
        if self._use_gate:
            _prefix_paths(self._gate_dense, self.name)

    # -- masks ---------------------------------------------------------------------------------
    def _causal_mask(self, query, value):
        return _lower_triangle(B.dim(query, 1), B.dim(value, 1))

    def _sliding_mask(self, query, value):
        tq, tv = B.dim(query, 1), B.dim(value, 1)
        rows = px.reshape(px.range(0, tq, 1), [1, -1, 1])
        cols = px.reshape(px.range(0, tv, 1), [1, 1, -1])
        return px.less(px.abs(rows - cols), B.scalar(self._sliding_window, rows.dtype))

    def _attention_mask(self, query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask):
        parts = []
        if query_mask is not None:
            parts.append(px.expand_dims(B.cast(query_mask, "bool"), -1))
        if value_mask is not None:
            parts.append(px.expand_dims(B.cast(value_mask, "bool"), -2))
        if key_mask is not None:
            parts.append(px.expand_dims(B.cast(key_mask, "bool"), -2))
        if use_causal_mask:
            parts.append(self._causal_mask(query, value))
        if self._sliding_window is not None:
            parts.append(self._sliding_mask(query, value))
        if attention_mask is not None:
            parts.insert(0, B.cast(B.convert(attention_mask), "bool"))
        if not parts:
            return None
        mask = parts[0]
        for p in parts[1:]:
            mask = px.logical_and(mask, p)
        return mask

    def compute_mask(self, inputs, previous_mask=None):
        if isinstance(previous_mask, (list, tuple)):
            return previous_mask[0] if previous_mask else None
        return previous_mask

    # -- attention ---------------------------------------------------------------------------
    def _compute_attention(self, query, key, value, attention_mask=None, training=None, zero_masked_rows=True):
        """query [B, *free, N, K], key [B, *src, N, K], value [B, *src, N, V] -> output, scores (Keras layout)."""
        rank = len(query.shape)
        axes = self._attention_axes
        batch_axes = [i for i in range(rank - 1) if i not in axes]
        perm = batch_axes + list(axes) + [rank - 1]
        nb, na = len(batch_axes), len(axes)
        q = px.transpose(query * B.scalar(self._inverse_sqrt_key_dim, query.dtype), perm)
        k, v = px.transpose(key, perm), px.transpose(value, perm)
        qd, kd = _dims(q), _dims(k)
        batch_dims, tq_dims, tk_dims = qd[:nb], qd[nb:nb + na], kd[nb:nb + na]
        q2 = _reshape(q, [-1, _prod(tq_dims), qd[-1]])
        k2 = _reshape(k, [-1, _prod(tk_dims), kd[-1]])
        v2 = _reshape(v, [-1, _prod(tk_dims), self._value_dim])
        scores = px.matmul(q2, k2, transpose_b=True)  # [batch dims, Tq, Tk]
        keras_shape = batch_dims + tq_dims + tk_dims
        mask = None
        if attention_mask is not None:
            m = B.cast(attention_mask, scores.dtype)
            while len(m.shape) < len(keras_shape):
                m = px.expand_dims(m, -na * 2 - 1)
            m = m * px.ones_like(_reshape(scores, keras_shape))
            mask = _reshape(m, [-1, _prod(tq_dims), _prod(tk_dims)])
        probs = _masked_softmax(scores, mask, zero_masked_rows)
        dropped = probs
        if training and self._dropout > 0.0:
            dropped = _dropout(probs, self._dropout, self.seed_generator)
        out = px.matmul(dropped, v2)  # [batch dims, Tq, V]
        out = _reshape(out, batch_dims + tq_dims + [self._value_dim])
        inverse = list(np.argsort(perm))
        out = px.transpose(out, inverse)
        return out, _reshape(probs, keras_shape)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False, mask=None):
        query, value = B.convert(query), B.convert(value)
        key = value if key is None else B.convert(key)
        # As Keras 3's MultiHeadAttention.call: the query mask is the mask
        # attached to the query tensor (a model output's), and a query_mask
        # argument is ignored. A functional model passes value_mask and
        # key_mask by name (Layer.__call__'s rule); Keras does not attach the
        # query's mask there either, so masked query rows attend normally.
        query_mask = B.get_keras_mask(query)
        if self._query_dense is None:
            self.build(tuple(query.shape), tuple(value.shape), tuple(key.shape))
        attention_mask = self._attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                                              use_causal_mask)
        gate = self._gate_dense(query) if self._use_gate else None
        q, k, v = self._query_dense(query), self._key_dense(key), self._value_dense(value)
        # Keras 3 takes ops.dot_product_attention without dropout, without
        # returned scores and for [batch, time, features] inputs; there a
        # query row whose keys are all masked attends uniformly instead of not at all.
        dot_product = self._dropout == 0.0 and not return_attention_scores and len(q.shape) == 4
        out, scores = self._compute_attention(q, k, v, attention_mask, training, zero_masked_rows=not dot_product)
        if gate is not None:
            out = out * gate
        out = self._output_dense(out)
        if self._mha_activity_regularizer is not None:
            reg = self._mha_activity_regularizer(out)
            self.add_loss(reg / B.cast(B.dim(out, 0), reg.dtype))
        if return_attention_scores:
            return out, scores
        return out

    def get_config(self):
        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout, "use_bias": self._use_bias,
                "use_gate": self._use_gate, "output_shape": self._output_shape,
                "attention_axes": self._attention_axes, "sliding_window": self._sliding_window,
                "kernel_initializer": initializers.serialize(self._kernel_initializer),
                "bias_initializer": initializers.serialize(self._bias_initializer),
                "kernel_regularizer": _ser(regularizers, self._kernel_regularizer),
                "bias_regularizer": _ser(regularizers, self._bias_regularizer),
                "activity_regularizer": _ser(regularizers, self._mha_activity_regularizer),
                "kernel_constraint": _ser(constraints, self._kernel_constraint),
                "bias_constraint": _ser(constraints, self._bias_constraint), "seed": self.seed}


class Attention(Layer):
    """Dot-product attention (Luong style): ``call([query, value(, key)], mask=[query_mask, value_mask])``.

    ``score_mode="concat"`` scores with sum(tanh(query + key)) instead;
    ``use_scale`` adds a learned scalar scale.
    """

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Attention: score_mode must be 'dot' or 'concat', got {score_mode!r}")
        self.use_scale, self.score_mode, self.dropout, self.seed = use_scale, score_mode, float(dropout), seed
        self.seed_generator = SeedGenerator(seed, name=f"{self.name}_seed")
        self.supports_masking = True

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} '{self.name}': inputs must be [query, value] or "
                             f"[query, value, key], got {inputs!r}")

    def build(self, input_shape):
        self._check(input_shape)
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones")

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = px.matmul(query, key, transpose_b=True)
            return scores * _read(self.scale) if self.scale is not None else scores
        q, k = px.expand_dims(query, -2), px.expand_dims(key, -3)
        s = q + k
        if self.scale is not None:
            s = _read(self.scale) * s
        return _read(self.concat_score_weight) * px.reduce_sum(px.tanh(s), axis=-1)

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        self._check(inputs)
        q, v = B.convert(inputs[0]), B.convert(inputs[1])
        k = B.convert(inputs[2]) if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask and len(mask) > 1 else None
        scores = self._scores(q, k)
        smask = None if v_mask is None else px.expand_dims(B.cast(v_mask, "bool"), -2)
        if use_causal_mask:
            causal = _lower_triangle(B.dim(scores, -2), B.dim(scores, -1))
            smask = causal if smask is None else px.logical_and(smask, causal)
        if smask is not None:
            big = B.scalar(65504.0 if B.dtype_name(scores.dtype) == "float16" else 1e9, scores.dtype)
            scores = scores - (B.scalar(1.0, scores.dtype) - B.cast(smask, scores.dtype)) * big
        weights = px.nn.softmax(scores)
        used = weights
        if training and self.dropout > 0:
            used = _dropout(weights, self.dropout, self.seed_generator)
        out = px.matmul(used, v)
        if q_mask is not None:
            out = out * px.expand_dims(B.cast(q_mask, out.dtype), -1)
        if return_attention_scores:
            return out, weights
        return out

    def compute_mask(self, inputs, previous_mask=None):
        if not previous_mask or previous_mask[0] is None:
            return None
        return previous_mask[0]

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """Additive (Bahdanau) attention: scores are sum(scale * tanh(query + key)) with a learned [dim] scale."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        kwargs.pop("score_mode", None)
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._check(input_shape)
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(input_shape[0][-1],), initializer="glorot_uniform")

    def _scores(self, query, key):
        s = px.tanh(px.expand_dims(query, -2) + px.expand_dims(key, -3))
        if self.scale is not None:
            s = _read(self.scale) * s
        return px.reduce_sum(s, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config


__all__ = ["MultiHeadAttention", "Attention", "AdditiveAttention"]
