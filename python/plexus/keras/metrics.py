"""Keras 3's metrics: stateful objects whose state lives in variables.

``update_state`` adds to the state with plexus ops, so inside a traced
train step the update is part of the step's graph; ``result()`` computes
the value from the state; ``reset_state()`` zeroes it (Model.fit does at
each epoch).
"""

from __future__ import annotations

import numpy as np

import plexus as px

from . import _backend as B
from . import losses as L
from .variables import KerasVariable


class Metric:
    """The base of metrics; subclasses create state with add_variable and define update_state and result."""

    def __init__(self, name=None, dtype=None):
        from .layers.base import snake_case
        self.name = name or snake_case(type(self).__name__)
        self._dtype = B.dtype_name(dtype) or "float32"
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, shape=(), initializer="zeros", dtype=None, name=None, aggregation="sum"):
        from . import initializers
        dtype = B.dtype_name(dtype) or self._dtype
        init = initializers.get(initializer)
        var = KerasVariable(init(tuple(shape), dtype=dtype), name=name or "variable",
                            path=f"{self.name}/{name or 'variable'}", trainable=False, dtype=dtype)
        var._initial = np.asarray(init(tuple(shape), dtype=dtype))
        self._variables.append(var)
        return var

    add_weight = add_variable

    @property
    def variables(self):
        return list(self._variables)

    def reset_state(self):
        for v in self._variables:
            v.assign(v._initial)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _weighted(values, sample_weight, dtype):
    values = B.cast(B.convert(values), dtype)
    if sample_weight is None:
        return px.reduce_sum(values), B.cast(px.size(values), dtype)
    sw = B.cast(B.convert(sample_weight), dtype)
    while len(sw.shape) > len(values.shape) and sw.shape[-1] == 1:
        sw = px.squeeze(sw, axis=[-1])
    while len(sw.shape) < len(values.shape):
        sw = px.expand_dims(sw, -1)
    sw = sw * px.ones_like(values)
    return px.reduce_sum(values * sw), px.reduce_sum(sw)


class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values, sample_weight=None):
        total, _ = _weighted(values, sample_weight, self._dtype)
        self.total.assign_add(total)

    def result(self):
        return self.total.read_value()


class Mean(Metric):
    """The (weighted) mean of every value seen."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values, sample_weight=None):
        total, count = _weighted(values, sample_weight, self._dtype)
        self.total.assign_add(total)
        self.count.assign_add(count)

    def result(self):
        return px.math.divide_no_nan(self.total.read_value(), self.count.read_value())


class MeanMetricWrapper(Mean):
    """The mean of fn(y_true, y_pred) per sample."""

    def __init__(self, fn, name=None, dtype=None, **fn_kwargs):
        super().__init__(name or fn.__name__, dtype)
        self._fn, self._fn_kwargs = fn, fn_kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = B.get_keras_mask(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:
            sample_weight = B.apply_mask(sample_weight, mask, self._dtype, "sum")
        super().update_state(values, sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# ---- accuracy functions ------------------------------------------------------------

def _f32(x):
    return B.cast(x, "float32")


def accuracy(y_true, y_pred):
    y_true, y_pred = B.convert(y_true), B.convert(y_pred)
    return _f32(px.equal(B.cast(y_true, y_pred.dtype), y_pred))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = B.convert(y_true), B.convert(y_pred)
    pred = B.cast(y_pred > B.scalar(threshold, y_pred.dtype), "float32")
    return px.reduce_mean(_f32(px.equal(_f32(y_true), pred)), axis=-1)


def categorical_accuracy(y_true, y_pred):
    y_true, y_pred = B.convert(y_true), B.convert(y_pred)
    return _f32(px.equal(px.argmax(y_true, axis=-1), px.argmax(y_pred, axis=-1)))


def sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = B.convert(y_true), B.convert(y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = px.squeeze(y_true, axis=[-1])
    pred = px.argmax(y_pred, axis=-1)
    return _f32(px.equal(B.cast(y_true, "int64"), pred))


def _in_top_k(targets, predictions, k):
    predictions = _f32(predictions)
    target_score = px.reduce_sum(predictions * px.one_hot(B.cast(targets, "int32"), predictions.shape[-1]),
                                 axis=-1, keepdims=True)
    higher = px.reduce_sum(_f32(predictions > target_score), axis=-1)
    return _f32(higher < B.scalar(float(k), "float32"))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true = B.convert(y_true)
    return _in_top_k(px.argmax(y_true, axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = B.convert(y_true), B.convert(y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = px.squeeze(y_true, axis=[-1])
    return _in_top_k(y_true, y_pred, k)


def _wrapper(class_name, fn, default_name, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        params = {**defaults, **kwargs}
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}: unrecognized arguments {sorted(unknown)}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **params)
    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__})


Accuracy = _wrapper("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy", k=5)
SparseTopKCategoricalAccuracy = _wrapper("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                         "sparse_top_k_categorical_accuracy", k=5)
MeanSquaredError = _wrapper("MeanSquaredError", L.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", L.mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", L.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", L.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", L.binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", L.categorical_crossentropy,
                                   "categorical_crossentropy", from_logits=False, label_smoothing=0.0)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", L.sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False)
KLDivergence = _wrapper("KLDivergence", L.kl_divergence, "kl_divergence")
Poisson = _wrapper("Poisson", L.poisson, "poisson")
Hinge = _wrapper("Hinge", L.hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", L.squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", L.categorical_hinge, "categorical_hinge")
LogCoshError = _wrapper("LogCoshError", L.log_cosh, "logcosh")
CosineSimilarity = _wrapper("CosineSimilarity", lambda t, p, axis=-1: -L.cosine_similarity(t, p, axis),
                            "cosine_similarity", axis=-1)


class RootMeanSquaredError(Mean):
    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = L._prep(y_true, y_pred)
        super().update_state(px.square(y_pred - y_true), sample_weight)

    def result(self):
        return px.sqrt(super().result())


class _Confusion(Metric):
    """True/false positives and negatives at a threshold (for Precision and Recall)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name, dtype)
        self.thresholds = 0.5 if thresholds is None else thresholds
        if isinstance(self.thresholds, (list, tuple)):
            if len(self.thresholds) != 1:
                raise ValueError(f"{type(self).__name__}: only one threshold is supported, got {self.thresholds}")
            self.thresholds = self.thresholds[0]
        self.top_k, self.class_id = top_k, class_id
        self.true_positives = self.add_variable(name="true_positives")
        self.false_positives = self.add_variable(name="false_positives")
        self.false_negatives = self.add_variable(name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _f32(B.convert(y_true)), _f32(B.convert(y_pred))
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        pred = _f32(y_pred > B.scalar(float(self.thresholds), "float32"))
        sw = px.ones_like(y_true) if sample_weight is None else _f32(B.convert(sample_weight)) * px.ones_like(y_true)
        self.true_positives.assign_add(px.reduce_sum(sw * y_true * pred))
        self.false_positives.assign_add(px.reduce_sum(sw * (1.0 - y_true) * pred))
        self.false_negatives.assign_add(px.reduce_sum(sw * y_true * (1.0 - pred)))

    def get_config(self):
        return {**super().get_config(), "thresholds": self.thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_Confusion):
    def result(self):
        tp = self.true_positives.read_value()
        return px.math.divide_no_nan(tp, tp + self.false_positives.read_value())


class Recall(_Confusion):
    def result(self):
        tp = self.true_positives.read_value()
        return px.math.divide_no_nan(tp, tp + self.false_negatives.read_value())


_CLASSES = {c.__name__: c for c in (
    Mean, Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy,
    KLDivergence, Poisson, Hinge, SquaredHinge, CategoricalHinge, LogCoshError, CosineSimilarity,
    RootMeanSquaredError, Precision, Recall)}
_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
            "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
            "top_k_categorical_accuracy": TopKCategoricalAccuracy,
            "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
            "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError, "mae": MeanAbsoluteError,
            "mean_absolute_error": MeanAbsoluteError, "mape": MeanAbsolutePercentageError,
            "mean_absolute_percentage_error": MeanAbsolutePercentageError, "msle": MeanSquaredLogarithmicError,
            "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
            "sparse_categorical_crossentropy": SparseCategoricalCrossentropy, "kl_divergence": KLDivergence,
            "poisson": Poisson, "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
            "logcosh": LogCoshError, "cosine_similarity": CosineSimilarity,
            "root_mean_squared_error": RootMeanSquaredError, "precision": Precision, "recall": Recall}


def get(identifier, loss=None, y_true=None, y_pred=None):
    """A metric from a name, a config dict, a Metric or a function.

    "accuracy" (and "crossentropy") resolve as Keras does: binary when the
    loss is binary or the prediction has one column, sparse when the labels
    have fewer dimensions than the prediction (or one column), else
    categorical.
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier in ("accuracy", "acc", "crossentropy", "ce"):
        kind = _accuracy_kind(loss, y_true, y_pred)
        if identifier in ("accuracy", "acc"):
            cls = {"binary": BinaryAccuracy, "sparse": SparseCategoricalAccuracy,
                   "categorical": CategoricalAccuracy}[kind]
            return cls(name=identifier)
        cls = {"binary": BinaryCrossentropy, "sparse": SparseCategoricalCrossentropy,
               "categorical": CategoricalCrossentropy}[kind]
        return cls(name=identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"unknown metric {identifier!r}; known: {', '.join(sorted(_BY_NAME))}")
        return cls(name=identifier) if identifier in _BY_NAME else cls()
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier["class_name"])
        if cls is None:
            raise ValueError(f"unknown metric class {identifier['class_name']!r}")
        return cls.from_config(identifier.get("config") or {})
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", "metric"))
    raise ValueError(f"cannot interpret {identifier!r} as a metric")


def _accuracy_kind(loss, y_true, y_pred):
    name = getattr(loss, "name", None) or getattr(loss, "__name__", "") or ""
    if "binary" in str(name):
        return "binary"
    if "sparse" in str(name):
        return "sparse"
    if y_pred is not None and y_pred.shape and y_pred.shape[-1] == 1:
        return "binary"
    if y_true is not None and y_pred is not None and (
            len(y_true.shape) < len(y_pred.shape) or (y_true.shape and y_true.shape[-1] == 1)):
        return "sparse"
    if "categorical" in str(name):
        return "categorical"
    return "categorical"
