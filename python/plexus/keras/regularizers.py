"""Weight regularizers: L1, L2, L1L2, OrthogonalRegularizer, by name or object."""

from __future__ import annotations

from .. import _plexus
from . import _backend as B


def _sum(x):
    return B.ex("Sum", [x, _plexus.constant(list(range(len(x.shape))), _plexus.int32)])[0]


class Regularizer:
    def __call__(self, x):
        return B.scalar(0.0, x.dtype)

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        out = B.scalar(0.0, x.dtype)
        if self.l1:
            out = out + B.scalar(self.l1, x.dtype) * _sum(B.ex("Abs", [x])[0])
        if self.l2:
            out = out + B.scalar(self.l2, x.dtype) * _sum(B.ex("Square", [x])[0])
        return out

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """factor * mean |off-diagonal of normalized W^T W| (mode "rows": W W^T)."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor, self.mode = float(factor), mode

    def __call__(self, x):
        import plexus as px
        if self.mode == "columns":
            x = px.transpose(x)
        x = x / px.sqrt(px.reduce_sum(x * x, axis=1, keepdims=True) + 1e-12)
        prod = px.matmul(x, x, transpose_b=True)
        n = x.shape[0]
        off = prod * B.convert(1.0 - __import__("numpy").eye(n, dtype="float32"), x.dtype)
        return B.scalar(self.factor, x.dtype) * px.reduce_sum(px.abs(off)) / B.scalar(n * (n - 1), x.dtype)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2 = L1, L2, L1L2
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}


def get(identifier):
    if identifier is None or isinstance(identifier, Regularizer) or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"unknown regularizer {identifier!r}; known: {sorted(_BY_NAME)}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME[identifier["class_name"].lower().replace("l1l2", "l1_l2")]
        return cls.from_config(identifier.get("config", {}))
    raise ValueError(f"cannot interpret {identifier!r} as a regularizer")


def serialize(reg):
    if reg is None:
        return None
    return {"module": "keras.regularizers", "class_name": type(reg).__name__, "config": reg.get_config(),
            "registered_name": None}
