"""Keras operations recorded in functional configs (``keras.ops`` calls on symbolic tensors).

Keras 3 saves a call like ``keras.ops.not_equal(x, 0)`` on a KerasTensor as
a layer entry whose module is ``keras.src.ops.*`` and whose config holds the
operation's constructor arguments (an axis, a dtype); the operands are the
node's arguments. Here each is rebuilt as an OpLayer over plexus ops.
"""

from __future__ import annotations

import plexus as px

from .. import _backend as B
from .. import activations
from ..models.functional import OpLayer


def _t(x):
    return B.convert(x) if not B.is_tensor(x) else x


def _pair(fn):
    def call(a, b):
        a, b = _t(a), _t(b)
        if B.dtype_name(a.dtype) != B.dtype_name(b.dtype):
            b = B.cast(b, a.dtype) if B.is_float(a.dtype) or not B.is_float(b.dtype) else b
            a = B.cast(a, b.dtype)
        return fn(a, b)
    return call


_BINARY = {
    "Add": lambda a, b: a + b, "Subtract": lambda a, b: a - b, "Multiply": lambda a, b: a * b,
    "Divide": lambda a, b: a / b, "TrueDivide": lambda a, b: a / b, "Power": lambda a, b: px.pow(a, b),
    "Maximum": px.maximum, "Minimum": px.minimum, "Equal": px.equal, "NotEqual": px.not_equal,
    "Greater": lambda a, b: a > b, "GreaterEqual": lambda a, b: a >= b, "Less": lambda a, b: a < b,
    "LessEqual": lambda a, b: a <= b, "LogicalAnd": px.logical_and, "LogicalOr": px.logical_or,
    "Matmul": px.matmul,
}
_UNARY = {
    "Abs": px.abs, "Absolute": px.abs, "Negative": lambda x: -x, "Sqrt": px.sqrt, "Square": px.square,
    "Exp": px.exp, "Log": px.log, "Tanh": px.nn.tanh, "Sigmoid": px.nn.sigmoid, "Relu": px.nn.relu,
    "LogicalNot": px.logical_not, "Sign": px.sign, "Floor": px.floor, "Ceil": px.ceil,
    "Rsqrt": px.rsqrt, "Silu": activations.silu, "Gelu": activations.gelu,
}
_REDUCE = {"Sum": px.reduce_sum, "Mean": px.reduce_mean, "Max": px.reduce_max, "Min": px.reduce_min,
           "Any": px.reduce_any, "All": px.reduce_all, "Prod": px.reduce_prod}


def _key(value):
    if isinstance(value, dict) and value.get("class_name") == "__slice__":
        c = value["config"]
        return slice(c.get("start"), c.get("stop"), c.get("step"))
    if isinstance(value, dict) and value.get("class_name") == "__ellipsis__":
        return Ellipsis
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    return value


_CORE = {"Cast"}
_NN = {"Softmax", "Relu", "Sigmoid", "Silu", "Gelu"}


def op_entry(layer):
    """Keras's serialized entry for an OpLayer that stands for a Keras operation (None otherwise)."""
    op = getattr(layer, "_keras_op", None)
    if op is None:
        return None
    class_name, config = op
    module = "keras.src.ops." + ("core" if class_name in _CORE else "nn" if class_name in _NN else "numpy")
    return {"module": module, "class_name": class_name, "config": {"name": layer.name, **config},
            "registered_name": class_name}


def op_layer(class_name, config, where):
    """An OpLayer for a Keras operation entry, or None when the operation is not known."""
    config = dict(config or {})
    name = config.pop("name", None) or class_name.lower()
    if class_name in _BINARY:
        fn = _pair(_BINARY[class_name])
    elif class_name in _UNARY:
        fn = lambda x, f=_UNARY[class_name]: f(_t(x))  # noqa: E731
    elif class_name in _REDUCE:
        axis, keepdims = config.get("axis"), config.get("keepdims", False)
        fn = lambda x, f=_REDUCE[class_name]: f(_t(x), axis=axis, keepdims=keepdims)  # noqa: E731
    elif class_name == "Cast":
        fn = lambda x: B.cast(x, config["dtype"])  # noqa: E731
    elif class_name == "ExpandDims":
        fn = lambda x: px.expand_dims(_t(x), config["axis"])  # noqa: E731
    elif class_name == "Squeeze":
        fn = lambda x: px.squeeze(_t(x), axis=config.get("axis"))  # noqa: E731
    elif class_name == "Reshape":
        fn = lambda x: px.reshape(_t(x), [-1 if d is None else d for d in config["newshape"]])  # noqa: E731
    elif class_name == "Transpose":
        fn = lambda x: px.transpose(_t(x), config.get("axes"))  # noqa: E731
    elif class_name in ("Concatenate", "Stack"):
        axis = config.get("axis", 0)
        fn = (lambda xs: px.concat([_t(x) for x in xs], axis)) if class_name == "Concatenate" else (
            lambda xs: px.stack([_t(x) for x in xs], axis))
    elif class_name == "GetItem":
        fn = lambda x, key: _t(x)[_key(key)]  # noqa: E731
    elif class_name == "Softmax":
        fn = lambda x: px.nn.softmax(_t(x), axis=config.get("axis", -1))  # noqa: E731
    elif class_name == "Where":
        fn = lambda c, a, b: px.where(_t(c), _t(a), _t(b))  # noqa: E731
    else:
        return None
    layer = OpLayer(fn, name)
    layer.name = name
    layer._keras_op = (class_name, config)
    return layer
