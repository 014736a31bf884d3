"""Keras 3's losses: classes, functions and names, with its reductions and sample weights.

A loss function maps (y_true, y_pred) to one value per sample (the mean
over the last axis for element-wise losses). A ``Loss`` object multiplies
by the sample weights and reduces: ``"sum_over_batch_size"`` (the default)
divides the weighted sum by the number of values, as Keras does.
"""

from __future__ import annotations

import plexus as px

from . import _backend as B

EPSILON = 1e-7


def _prep(y_true, y_pred):
    y_pred = B.convert(y_pred)
    y_true = B.convert(y_true)
    if B.is_float(y_pred.dtype) and B.dtype_name(y_true.dtype) != B.dtype_name(y_pred.dtype):
        y_true = B.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def _c(v, x):
    return B.scalar(v, x.dtype)


def _mean_last(x):
    return px.reduce_mean(x, axis=-1)


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(px.square(y_pred - y_true))


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(px.abs(y_pred - y_true))


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    diff = px.abs((y_true - y_pred) / px.maximum(px.abs(y_true), _c(EPSILON, y_pred)))
    return _c(100.0, y_pred) * _mean_last(diff)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    one, eps = _c(1.0, y_pred), _c(EPSILON, y_pred)
    a = px.log(px.maximum(y_pred, eps) + one)
    b = px.log(px.maximum(y_true, eps) + one)
    return _mean_last(px.square(a - b))


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _prep(y_true, y_pred)
    err = px.abs(y_pred - y_true)
    d = _c(delta, y_pred)
    return _mean_last(px.where(err <= d, _c(0.5, y_pred) * err * err, d * err - _c(0.5, y_pred) * d * d))


def log_cosh(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    x = y_pred - y_true
    return _mean_last(x + px.nn.softplus(_c(-2.0, x) * x) - _c(0.6931471805599453, x))


def hinge(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    y_true = _signed(y_true)
    return _mean_last(px.maximum(_c(1.0, y_pred) - y_true * y_pred, _c(0.0, y_pred)))


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    y_true = _signed(y_true)
    return _mean_last(px.square(px.maximum(_c(1.0, y_pred) - y_true * y_pred, _c(0.0, y_pred))))


def _signed(y_true):
    """Labels in {0, 1} become {-1, 1} (Keras converts binary labels for the hinge losses)."""
    is_binary = px.reduce_all(px.logical_or(px.equal(y_true, _c(0.0, y_true)), px.equal(y_true, _c(1.0, y_true))))
    return px.where(is_binary, _c(2.0, y_true) * y_true - _c(1.0, y_true), y_true)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    pos = px.reduce_sum(y_true * y_pred, axis=-1)
    neg = px.reduce_max((_c(1.0, y_pred) - y_true) * y_pred, axis=-1)
    return px.maximum(neg - pos + _c(1.0, y_pred), _c(0.0, y_pred))


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    t = px.clip_by_value(y_true, _c(EPSILON, y_pred), _c(1.0, y_pred))
    p = px.clip_by_value(y_pred, _c(EPSILON, y_pred), _c(1.0, y_pred))
    return px.reduce_sum(t * px.log(t / p), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(y_pred - y_true * px.log(y_pred + _c(EPSILON, y_pred)))


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _prep(y_true, y_pred)

    def l2n(x):
        return x * px.rsqrt(px.maximum(px.reduce_sum(x * x, axis=axis, keepdims=True), _c(1e-12, x)))
    return -px.reduce_sum(l2n(y_true) * l2n(y_pred), axis=axis)


def _smooth(y_true, label_smoothing, classes):
    if not label_smoothing:
        return y_true
    s = _c(label_smoothing, y_true)
    return y_true * (_c(1.0, y_true) - s) + s / _c(float(classes), y_true)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _prep(y_true, y_pred)
    y_true = _smooth(y_true, label_smoothing, y_pred.shape[axis] if y_pred.shape[axis] else 1)
    if from_logits:
        return -px.reduce_sum(y_true * px.nn.log_softmax(y_pred, axis=axis), axis=axis)
    p = y_pred / px.reduce_sum(y_pred, axis=axis, keepdims=True)
    p = px.clip_by_value(p, _c(EPSILON, p), _c(1.0 - EPSILON, p))
    return -px.reduce_sum(y_true * px.log(p), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    y_pred = B.convert(y_pred)
    y_true = B.convert(y_true)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = px.squeeze(y_true, axis=[-1])
    labels = B.cast(y_true, "int32")
    valid = None
    if ignore_class is not None:
        valid = px.not_equal(labels, B.scalar(ignore_class, "int32"))
        labels = px.where(valid, labels, px.zeros_like(labels))
    if from_logits:
        logp = px.nn.log_softmax(y_pred, axis=axis)
    else:
        p = y_pred / px.reduce_sum(y_pred, axis=axis, keepdims=True)
        logp = px.log(px.clip_by_value(p, _c(EPSILON, p), _c(1.0 - EPSILON, p)))
    onehot = px.one_hot(labels, y_pred.shape[axis], dtype=y_pred.dtype, axis=axis)
    out = -px.reduce_sum(onehot * logp, axis=axis)
    if valid is not None:
        out = out * B.cast(valid, out.dtype)
    return out


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _prep(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * _c(1.0 - label_smoothing, y_true) + _c(0.5 * label_smoothing, y_true)
    return px.reduce_mean(_bce(y_true, y_pred, from_logits), axis=axis)


def _bce(y_true, y_pred, from_logits):
    one = _c(1.0, y_pred)
    if from_logits:
        # max(x, 0) - x * z + log(1 + exp(-|x|))
        return px.nn.relu(y_pred) - y_pred * y_true + px.nn.softplus(-px.abs(y_pred))
    eps = _c(EPSILON, y_pred)
    p = px.clip_by_value(y_pred, eps, one - eps)
    return -(y_true * px.log(p + eps) + (one - y_true) * px.log(one - p + eps))


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _prep(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * _c(1.0 - label_smoothing, y_true) + _c(0.5 * label_smoothing, y_true)
    one = _c(1.0, y_pred)
    probs = px.nn.sigmoid(y_pred) if from_logits else y_pred
    bce = _bce(y_true, y_pred, from_logits)
    p_t = y_true * probs + (one - y_true) * (one - probs)
    focal = px.pow(one - p_t, _c(gamma, y_pred)) * bce
    if apply_class_balancing:
        a = _c(alpha, y_pred)
        focal = (y_true * a + (one - y_true) * (one - a)) * focal
    return px.reduce_mean(focal, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# ---- Loss classes -------------------------------------------------------------------

def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Keras's reduction of per-sample losses (weighted when sample_weight is given)."""
    values = B.convert(values)
    if sample_weight is not None:
        sw = B.cast(B.convert(sample_weight), values.dtype)
        while len(sw.shape) > len(values.shape) and sw.shape[-1] == 1:
            sw = px.squeeze(sw, axis=[-1])
        while len(sw.shape) < len(values.shape):
            sw = px.expand_dims(sw, -1)
        values = values * sw
    if reduction in (None, "none"):
        return values
    total = px.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction in ("sum_over_batch_size", "mean", "auto"):
        count = B.cast(px.size(values), values.dtype)
        return px.math.divide_no_nan(total, count)
    if reduction == "mean_with_sample_weight":
        if sample_weight is None:
            return total / B.cast(px.size(values), values.dtype)
        return px.math.divide_no_nan(total, px.reduce_sum(sw * px.ones_like(values)))
    raise ValueError(f"unknown reduction {reduction!r}")


class Loss:
    """The base of loss objects: ``loss(y_true, y_pred, sample_weight=None)``."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reduction = reduction
        self.dtype = dtype

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def __call__(self, y_true, y_pred, sample_weight=None):
        mask = B.get_keras_mask(y_pred)  # a model output's mask weighs the loss, as in Keras
        values = self.call(y_true, y_pred)
        if mask is not None:
            sample_weight = B.apply_mask(sample_weight, mask, B.dtype_name(values.dtype), self.reduction)
        out = reduce_values(values, sample_weight, self.reduction)
        return B.cast(out, "float32") if B.dtype_name(out.dtype) in ("float16", "bfloat16") else out

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    def __init__(self, fn, name=None, reduction="sum_over_batch_size", dtype=None, **fn_kwargs):
        super().__init__(name or fn.__name__, reduction, dtype)
        self.fn, self.fn_kwargs = fn, fn_kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self.fn_kwargs}


def _snake(name):
    from .layers.base import snake_case
    return snake_case(name)


def _loss_class(class_name, fn, default_name, **defaults):
    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, dtype=None, **kwargs):
        params = dict(defaults)
        for key, value in zip(defaults, args):
            params[key] = value
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}: unrecognized arguments {sorted(unknown)}")
        params.update(kwargs)
        LossFunctionWrapper.__init__(self, fn, name=name, reduction=reduction, dtype=dtype, **params)

    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__,
                                                      "__doc__": f"Keras's {class_name} ({fn.__name__})."})


MeanSquaredError = _loss_class("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _loss_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                          "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _loss_class("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                          "mean_squared_logarithmic_error")
Huber = _loss_class("Huber", huber, "huber_loss", delta=1.0)
LogCosh = _loss_class("LogCosh", log_cosh, "log_cosh")
Hinge = _loss_class("Hinge", hinge, "hinge")
SquaredHinge = _loss_class("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _loss_class("CategoricalHinge", categorical_hinge, "categorical_hinge")
KLDivergence = _loss_class("KLDivergence", kl_divergence, "kl_divergence")
Poisson = _loss_class("Poisson", poisson, "poisson")
CosineSimilarity = _loss_class("CosineSimilarity", cosine_similarity, "cosine_similarity", axis=-1)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", categorical_crossentropy,
                                      "categorical_crossentropy", from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _loss_class("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                            "sparse_categorical_crossentropy", from_logits=False, ignore_class=None,
                                            axis=-1)
BinaryCrossentropy = _loss_class("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                                 from_logits=False, label_smoothing=0.0, axis=-1)
BinaryFocalCrossentropy = _loss_class("BinaryFocalCrossentropy", binary_focal_crossentropy,
                                      "binary_focal_crossentropy", apply_class_balancing=False, alpha=0.25, gamma=2.0,
                                      from_logits=False, label_smoothing=0.0, axis=-1)

_FUNCTIONS = {f.__name__: f for f in (
    mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error,
    huber, log_cosh, hinge, squared_hinge, categorical_hinge, kl_divergence, poisson, cosine_similarity,
    categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, binary_focal_crossentropy)}
_FUNCTIONS.update({"mse": mean_squared_error, "mae": mean_absolute_error, "mape": mean_absolute_percentage_error,
                   "msle": mean_squared_logarithmic_error, "kld": kl_divergence, "logcosh": log_cosh,
                   "kullback_leibler_divergence": kl_divergence, "huber_loss": huber})
_CLASSES = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber, LogCosh,
    Hinge, SquaredHinge, CategoricalHinge, KLDivergence, Poisson, CosineSimilarity, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, BinaryCrossentropy, BinaryFocalCrossentropy)}


def get(identifier):
    """A loss from a name ("sparse_categorical_crossentropy", "mse"), a config, a Loss or a function."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        fn = _FUNCTIONS.get(identifier)
        if fn is None:
            raise ValueError(f"unknown loss {identifier!r}; known: {', '.join(sorted(_FUNCTIONS))}")
        return LossFunctionWrapper(fn, name=identifier)
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier["class_name"])
        if cls is None:
            return get(identifier["class_name"])
        config = dict(identifier.get("config") or {})
        config.pop("fn", None)
        return cls(**config)
    if callable(identifier):
        return LossFunctionWrapper(identifier, name=getattr(identifier, "__name__", "loss"))
    raise ValueError(f"cannot interpret {identifier!r} as a loss")


def serialize(loss):
    if isinstance(loss, LossFunctionWrapper) and type(loss) is LossFunctionWrapper:
        return loss.fn.__name__
    return {"module": "keras.losses", "class_name": type(loss).__name__, "config": loss.get_config(),
            "registered_name": None}
