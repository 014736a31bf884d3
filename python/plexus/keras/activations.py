"""Every Keras 3 activation, by function or by name (``get("gelu")``), with Keras's formulas."""

from __future__ import annotations

import plexus as px

from . import _backend as B


def _c(value, x):
    return B.scalar(value, x.dtype)


def linear(x):
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    x = B.convert(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return px.nn.relu(x)
    if threshold != 0.0:
        pos = px.where(x > _c(threshold, x), x, px.zeros_like(x))
    else:
        pos = px.nn.relu(x)
    if max_value is not None:
        pos = px.minimum(pos, _c(max_value, x))
    if negative_slope != 0.0:
        neg = _c(negative_slope, x) * px.where(x < _c(threshold, x), x - _c(threshold, x), px.zeros_like(x))
        return pos + neg
    return pos


def leaky_relu(x, negative_slope=0.2):
    return px.nn.leaky_relu(B.convert(x), alpha=negative_slope)


def relu6(x):
    return px.nn.relu6(B.convert(x))


def elu(x, alpha=1.0):
    x = B.convert(x)
    e = px.nn.elu(x)
    return e if alpha == 1.0 else px.where(x > _c(0, x), e, _c(alpha, x) * e)


def selu(x):
    return px.nn.selu(B.convert(x))


def softplus(x):
    return px.nn.softplus(B.convert(x))


def softsign(x):
    return px.nn.softsign(B.convert(x))


def sigmoid(x):
    return px.nn.sigmoid(B.convert(x))


def tanh(x):
    return px.nn.tanh(B.convert(x))


def exponential(x):
    return px.exp(B.convert(x))


def silu(x):
    x = B.convert(x)
    return x * px.nn.sigmoid(x)


swish = silu


def gelu(x, approximate=False):
    return px.nn.gelu(B.convert(x), approximate=approximate)


def hard_sigmoid(x):
    x = B.convert(x)
    return px.nn.relu6(x + _c(3.0, x)) / _c(6.0, x)


def hard_silu(x):
    x = B.convert(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    x = B.convert(x)
    return px.clip_by_value(x, _c(-1.0, x), _c(1.0, x))


def hard_shrink(x, threshold=0.5):
    x = B.convert(x)
    return px.where(px.abs(x) > _c(threshold, x), x, px.zeros_like(x))


def soft_shrink(x, threshold=0.5):
    x = B.convert(x)
    t = _c(threshold, x)
    return px.where(x > t, x - t, px.where(x < -t, x + t, px.zeros_like(x)))


def tanh_shrink(x):
    x = B.convert(x)
    return x - px.nn.tanh(x)


def threshold(x, threshold, default_value):
    x = B.convert(x)
    return px.where(x > _c(threshold, x), x, px.fill(px.shape(x), _c(default_value, x)))


def celu(x, alpha=1.0):
    x = B.convert(x)
    a = _c(alpha, x)
    return px.maximum(x, _c(0.0, x)) + px.minimum(_c(0.0, x), a * (px.exp(x / a) - _c(1.0, x)))


def glu(x, axis=-1):
    x = B.convert(x)
    a, b = px.split(x, 2, axis=axis)
    return a * px.nn.sigmoid(b)


def log_sigmoid(x):
    x = B.convert(x)
    return -px.nn.softplus(-x)


def sparse_plus(x):
    x = B.convert(x)
    one = _c(1.0, x)
    mid = (x + one) * (x + one) / _c(4.0, x)
    return px.where(x <= -one, px.zeros_like(x), px.where(x >= one, x, mid))


def sparse_sigmoid(x):
    x = B.convert(x)
    one = _c(1.0, x)
    return px.where(x <= -one, px.zeros_like(x), px.where(x >= one, px.ones_like(x), (x + one) / _c(2.0, x)))


def squareplus(x, b=4):
    x = B.convert(x)
    return (x + px.sqrt(x * x + _c(b, x))) / _c(2.0, x)


def mish(x):
    x = B.convert(x)
    return x * px.nn.tanh(px.nn.softplus(x))


def softmax(x, axis=-1):
    return px.nn.softmax(B.convert(x), axis=axis)


def log_softmax(x, axis=-1):
    return px.nn.log_softmax(B.convert(x), axis=axis)


def sparsemax(x, axis=-1):
    """Projection onto the probability simplex (Martins and Astudillo, 2016)."""
    x = B.convert(x)
    rank = len(x.shape)
    axis = axis % rank
    if axis != rank - 1:
        perm = [i for i in range(rank) if i != axis] + [axis]
        x = px.transpose(x, perm)
    z, _ = px.nn.top_k(x, k=x.shape[-1])  # sorted descending
    k = px.range(1, x.shape[-1] + 1, dtype=x.dtype)
    cssv = px.cumsum(z, axis=-1)
    support = px.cast(_c(1.0, x) + k * z > cssv, x.dtype)
    k_z = px.reduce_sum(support, axis=-1, keepdims=True)
    tau = (px.reduce_sum(z * support, axis=-1, keepdims=True) - _c(1.0, x)) / k_z
    out = px.maximum(x - tau, _c(0.0, x))
    if axis != rank - 1:
        inverse = [0] * rank
        for i, p in enumerate(perm):
            inverse[p] = i
        out = px.transpose(out, inverse)
    return out


_ALL = {f.__name__: f for f in (
    linear, relu, leaky_relu, relu6, elu, selu, softplus, softsign, sigmoid, tanh, exponential, silu, gelu,
    hard_sigmoid, hard_silu, hard_tanh, hard_shrink, soft_shrink, tanh_shrink, threshold, celu, glu,
    log_sigmoid, sparse_plus, sparse_sigmoid, squareplus, mish, softmax, log_softmax, sparsemax)}
_ALL.update({"swish": silu, "hard_swish": hard_silu})


def get(identifier):
    """An activation function from a name, a serialized config, a callable or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, dict):
        identifier = identifier.get("config", identifier.get("class_name"))
        if isinstance(identifier, dict):
            identifier = identifier.get("name")
    if isinstance(identifier, str):
        fn = _ALL.get(identifier)
        if fn is None:
            raise ValueError(f"unknown activation {identifier!r}; known: {', '.join(sorted(_ALL))}")
        return fn
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as an activation function")


def serialize(fn) -> str:
    """The activation's Keras name (a function defined elsewhere keeps its __name__)."""
    for name, f in _ALL.items():
        if f is fn:
            return "silu" if name == "swish" else name
    return getattr(fn, "__name__", str(fn))
