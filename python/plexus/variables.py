"""Variables: mutable tensors that live in the runtime, as resources on a device.

A :class:`Variable` is a resource handle (``VarHandleOp``) in the eager
context's resource store. Eager code reads and assigns it with the resource
ops; a traced :class:`plexus.function` reads the same variable through a
``VarHandleOp`` node with the same shared name, because traced functions share
the eager context's variables.
"""

from __future__ import annotations

import itertools
import weakref

from . import _plexus

_counter = itertools.count()
_live: "weakref.WeakValueDictionary[str, Variable]" = weakref.WeakValueDictionary()


def _execute(op, inputs, attrs=None):
    return _plexus.execute(op, inputs, attrs)


def lookup(shared_name: str) -> "Variable | None":
    """The live Variable with this shared name (as in a traced graph's VarHandleOp), or None."""
    return _live.get(shared_name)


class Variable:
    """A mutable tensor, like ``tf.Variable``::

        w = plexus.Variable(np.zeros([3, 2], np.float32), name="w")
        w.assign_add(np.ones([3, 2], np.float32))
        y = x @ w            # reads the current value
    """

    def __init__(self, initial_value, trainable: bool = True, name: str | None = None, dtype=None):
        suspended = _plexus._suspend_trace()
        try:
            self._init(initial_value, trainable, name, dtype)
        finally:
            _plexus._resume_trace(suspended)

    def _init(self, initial_value, trainable, name, dtype):
        if callable(initial_value):
            initial_value = initial_value()
        value = initial_value
        if not isinstance(value, _plexus.Tensor):
            value = _plexus.constant(value, dtype)
        elif dtype is not None and value.dtype != _plexus.as_dtype(dtype):
            value = _execute("Cast", [value], {"DstT": _plexus.as_dtype(dtype)})[0]
        # A variable lives on the device it is created under (with
        # plexus.device(...)), else on the device of an initial value in
        # device memory, else on the default device, where eager ops run (as
        # TensorFlow places variables): its value is kept there, and reads
        # and assignments stay there.
        scope = _plexus._scope_device()
        if scope is not None:
            self._device = scope
        elif value.device != "CPU:0":
            self._device = value.device
        else:
            self._device = _plexus.default_device() or value.device
        if value.device != self._device:
            value = value._to(self._device)
        self._dtype = value.dtype
        self._shape = tuple(value.shape)
        self.trainable = trainable
        self._name = name or "Variable"
        self._shared_name = f"{self._name}_{next(_counter)}"
        self._handle = _execute("VarHandleOp", [], {
            "dtype": self._dtype, "shape": list(self._shape), "shared_name": self._shared_name})[0]
        self._trace_handles: dict = {}
        _live[self._shared_name] = self
        self.assign(value)

    # -- identity -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def shared_name(self) -> str:
        """The resource's name in the runtime (the VarHandleOp shared_name)."""
        return self._shared_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self) -> str:
        """The device the variable's value lives on ("CPU:0", "CUDA:0", ...)."""
        return self._device

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def handle(self):
        """The resource handle: an eager tensor, or a graph tensor while tracing."""
        trace = _plexus._trace_id()
        if trace is None:
            return self._handle
        h = self._trace_handles.get(trace)
        if h is None:
            # One VarHandleOp per traced graph, so gradients of every read
            # meet at one node.
            h = _execute("VarHandleOp", [], {"dtype": self._dtype, "shape": list(self._shape),
                                             "shared_name": self._shared_name})[0]
            self._trace_handles = {trace: h}
        return h

    # -- reading ----------------------------------------------------------------
    def _handle_value(self):
        """The current value, read eagerly (also while tracing)."""
        return _execute("ReadVariableOp", [self._handle], {"dtype": self._dtype})[0]

    def read_value(self):
        handle = self.handle
        if self.trainable and _plexus._tapes_active() and isinstance(handle, _plexus.Tensor):
            _plexus._watch_on_tapes(handle)
        return _execute("ReadVariableOp", [handle], {"dtype": self._dtype})[0]

    value = read_value

    def numpy(self):
        return self.read_value().numpy()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __repr__(self):
        return f"<plexus.Variable '{self._name}' shape={self._shape} dtype={self._dtype.name}>"

    # -- writing ----------------------------------------------------------------
    def _value_of(self, value):
        if isinstance(value, Variable):
            value = value.read_value()
        if not isinstance(value, (_plexus.Tensor, _plexus.GraphTensor)):
            value = _plexus.constant(value, self._dtype)
        return value

    def assign(self, value):
        _execute("AssignVariableOp", [self.handle, self._value_of(value)], {"dtype": self._dtype})
        return self

    def assign_add(self, delta):
        _execute("AssignAddVariableOp", [self.handle, self._value_of(delta)], {"dtype": self._dtype})
        return self

    def assign_sub(self, delta):
        _execute("AssignSubVariableOp", [self.handle, self._value_of(delta)], {"dtype": self._dtype})
        return self


# Arithmetic on a Variable reads it first (x @ w, w * 2, -w, ...).
def _binary(name):
    def method(self, other):
        return getattr(self.read_value(), name)(other)
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__", "__lt__", "__le__", "__gt__",
              "__ge__", "__neg__", "__getitem__"):
    if _name == "__neg__":
        setattr(Variable, _name, lambda self: -self.read_value())
    else:
        setattr(Variable, _name, _binary(_name))
del _name


Variable._as_tensor = Variable.read_value
