"""Small helpers the Keras layers share: op execution, dtypes, autocasting and seeds.

Layers compute with plexus ops (``plexus.execute`` and the ``plexus``
functions), so the same code runs eagerly and inside traced functions
(``plexus.function``), and differentiates with ``plexus.GradientTape``.
"""

from __future__ import annotations

import threading

import numpy as np


from .. import _plexus

ex = _plexus.execute
Tensor = _plexus.Tensor
GraphTensor = _plexus.GraphTensor
TENSOR_TYPES = (Tensor, GraphTensor)

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_state = threading.local()
_floatx = "float32"


def floatx() -> str:
    """The default float dtype of weights and inputs ("float32")."""
    return _floatx


def set_floatx(value: str) -> None:
    global _floatx
    if value not in _FLOATS:
        raise ValueError(f"set_floatx: {value!r} is not one of {_FLOATS}")
    _floatx = value


def dtype_name(dtype) -> str:
    """A dtype (plexus DType, NumPy dtype or name) as its name: "float32"."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return "bool" if dtype == "bool_" else dtype
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return "bool" if name == "bool_" else name
    return np.dtype(dtype).name


def is_float(dtype) -> bool:
    return dtype_name(dtype) in _FLOATS


def is_tensor(x) -> bool:
    return isinstance(x, TENSOR_TYPES)


def convert(x, dtype=None):
    """x as a tensor (a Variable is read; arrays and Python values become constants)."""
    if isinstance(x, TENSOR_TYPES):
        if dtype is not None and dtype_name(x.dtype) != dtype_name(dtype):
            return cast(x, dtype)
        return x
    if hasattr(x, "_as_tensor"):
        return convert(x._as_tensor(), dtype)
    if dtype is None and isinstance(x, float):
        dtype = floatx()
    if dtype is None and isinstance(x, np.ndarray) and x.dtype == np.float64:
        dtype = floatx()
    return _plexus.constant(x, None if dtype is None else _plexus.as_dtype(dtype_name(dtype)))


def cast(x, dtype):
    x = convert(x)
    if dtype_name(x.dtype) == dtype_name(dtype):
        return x
    return ex("Cast", [x], {"DstT": _plexus.as_dtype(dtype_name(dtype))})[0]


def scalar(value, dtype):
    return _plexus.constant(value, _plexus.as_dtype(dtype_name(dtype)))


def shape_list(x):
    """The static shape as a list (None where unknown)."""
    s = getattr(x, "shape", None)
    return None if s is None else list(s)


def dynamic_shape(x):
    """The shape as an int32 tensor (for shapes known only at run time)."""
    return ex("Shape", [convert(x)], {"out_type": _plexus.int32})[0]


def dim(x, axis):
    """Dimension `axis` of x: a Python int when static, else an int32 scalar tensor."""
    s = shape_list(x)
    if s is not None and s[axis] is not None:
        return s[axis]
    return ex("StridedSlice", [dynamic_shape(x), scalar([axis % len(s) if s else axis], "int32"),
                               scalar([axis % len(s) + 1 if s else axis + 1], "int32"),
                               scalar([1], "int32")], {"shrink_axis_mask": 1})[0]


# ---- autocasting (mixed precision) ---------------------------------------------

def autocast_dtype():
    """The compute dtype variables are read in, inside a mixed-precision layer call (or None)."""
    return getattr(_state, "autocast", None)


class autocast_scope:  # noqa: N801
    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        self.previous = getattr(_state, "autocast", None)
        _state.autocast = self.dtype

    def __exit__(self, *exc):
        _state.autocast = self.previous
        return False


# ---- the training flag ------------------------------------------------------------

# Keras attaches a mask to a tensor (`_keras_mask`); plexus tensors take no
# attributes, so a model's output masks live here, keyed by the tensor's id
# with the tensor itself held (its id cannot be reused while the entry
# lives). A model drops its previous outputs' entries on each call, so the
# table holds at most one call's outputs per model.
_MASKS: dict = {}


def set_keras_mask(tensor, mask):
    _MASKS[id(tensor)] = (tensor, mask)


def get_keras_mask(tensor):
    """The mask a model attached to one of its outputs, or None."""
    entry = _MASKS.get(id(tensor))
    return entry[1] if entry is not None and entry[0] is tensor else None


def drop_keras_masks(tensors):
    for t in tensors:
        entry = _MASKS.get(id(t))
        if entry is not None and entry[0] is t:
            del _MASKS[id(t)]


def apply_mask(sample_weight, mask, dtype, reduction):
    """Keras's losses.loss.apply_mask: masked entries weigh 0; for a mean the
    valid ones weigh total/valid, so the mean is over the valid entries."""
    if mask is None:
        return sample_weight
    import plexus as px
    m = cast(mask, "bool")
    if reduction in ("mean", "sum_over_batch_size", "auto"):
        total = cast(px.size(m), dtype)
        valid = px.reduce_sum(cast(m, dtype))
        weight = px.math.divide_no_nan(total, valid)
        float_mask = px.where(m, weight * px.ones_like(cast(m, dtype)), px.zeros_like(cast(m, dtype)))
    else:
        float_mask = cast(m, dtype)
    if sample_weight is None:
        return float_mask
    sw = cast(convert(sample_weight), dtype)
    while len(sw.shape) > len(float_mask.shape) and sw.shape[-1] == 1:
        sw = px.squeeze(sw, axis=[-1])
    while len(sw.shape) < len(float_mask.shape):
        sw = px.expand_dims(sw, -1)
    while len(float_mask.shape) < len(sw.shape):
        float_mask = px.expand_dims(float_mask, -1)
    return sw * float_mask


def learning_phase():
    """True inside Model.fit's train step (the default `training` of layer calls)."""
    return getattr(_state, "training", None)


class training_scope:  # noqa: N801
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.previous = getattr(_state, "training", None)
        _state.training = self.value

    def __exit__(self, *exc):
        _state.training = self.previous
        return False


def matmul_last(x, w):
    """x @ w over the last axis of x, for x of any rank (Dense on sequences)."""
    x = convert(x)
    rank = len(x.shape)
    if rank == 2:
        return ex("MatMul", [x, convert(w)])[0]
    flat = ex("Reshape", [x, _plexus.constant([-1, x.shape[-1]], _plexus.int32)])[0]
    y = ex("MatMul", [flat, convert(w)])[0]
    units = w.shape[-1]
    if None not in x.shape[:-1]:
        shape = _plexus.constant(list(x.shape[:-1]) + [units], _plexus.int32)
    else:
        lead = ex("StridedSlice", [dynamic_shape(x), _plexus.constant([0], _plexus.int32),
                                   _plexus.constant([rank - 1], _plexus.int32), _plexus.constant([1], _plexus.int32)],
                  {})[0]
        shape = ex("ConcatV2", [lead, _plexus.constant([units], _plexus.int32), _plexus.constant(0, _plexus.int32)],
                   {"N": 2})[0]
    return ex("Reshape", [y, shape])[0]
