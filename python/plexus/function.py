"""plexus.function: trace a Python function into a graph, once per input signature."""

from __future__ import annotations

import functools
import itertools

from . import _plexus
from .graph import _threads_option

_Tensor = _plexus.Tensor
_GraphTensor = _plexus.GraphTensor


def _flatten(value, leaves):
    """The structure of `value` with its tensors replaced by their index in `leaves`."""
    if isinstance(value, (list, tuple)):
        items = [_flatten(v, leaves) for v in value]
        return ("list" if isinstance(value, list) else "tuple", tuple(items))
    if isinstance(value, dict):
        keys = sorted(value)
        return ("dict", tuple(keys), tuple(_flatten(value[k], leaves) for k in keys))
    if isinstance(value, (_Tensor, _GraphTensor, TensorSpec)) or _is_array(value):
        leaves.append(value)
        return ("leaf", len(leaves) - 1)
    # The type too: 2, 2.0 and True are equal in Python but trace differently.
    return ("const", type(value).__name__, value)


def _unflatten(spec, leaves):
    kind = spec[0]
    if kind == "list":
        return [_unflatten(s, leaves) for s in spec[1]]
    if kind == "tuple":
        return tuple(_unflatten(s, leaves) for s in spec[1])
    if kind == "dict":
        return {k: _unflatten(s, leaves) for k, s in zip(spec[1], spec[2])}
    if kind == "leaf":
        return leaves[spec[1]]
    return spec[2]


def _is_array(value):
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and hasattr(value, "shape")


def _hashable(spec):
    try:
        hash(spec)
        return spec
    except TypeError:
        return repr(spec)


class TensorSpec:
    """The dtype and shape (None for unknown dimensions) of a traced function's input.

    ``plexus.function(fn, input_signature=[TensorSpec([None, 784], plexus.float32, "x")])``
    traces `fn` once with those placeholders, whatever the batch size.
    """

    def __init__(self, shape, dtype=None, name: str | None = None):
        self.shape = None if shape is None else tuple(None if d is None or d < 0 else int(d) for d in shape)
        self.dtype = _plexus.as_dtype(dtype if dtype is not None else "float32")
        self.name = name

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype.name}, name={self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))


class ConcreteFunction:
    """One traced graph of a :class:`function` for one input signature.

    ``inputs`` / ``outputs`` are the graph's feed and fetch tensor names;
    ``input_names`` / ``output_names`` the signature's keys (TensorSpec names
    or parameter names; the keys of a returned dict, else output_0, ...).
    """

    def __init__(self, name, graph, session, feed_names, fetch_names, targets, output_spec, arg_spec,
                 input_names=None, output_names=None):
        self.name = name
        self.graph = graph
        self.session = session
        self.inputs = feed_names
        self.outputs = fetch_names
        self._targets = targets
        self._output_spec = output_spec
        self._arg_spec = arg_spec
        self.input_names = input_names or [f"arg{i}" for i in range(len(feed_names))]
        self.output_names = output_names or [f"output_{i}" for i in range(len(fetch_names))]

    def __call__(self, *args, **kwargs):
        leaves = []
        _flatten((args, kwargs), leaves)
        return self._call_flat(leaves)

    def _call_flat(self, leaves):
        results = self.session.run_values(self.inputs, leaves, self.outputs, self._targets)
        return _unflatten(self._output_spec, results)

    def graph_def(self) -> bytes:
        """The traced graph as serialized GraphDef bytes (before optimization)."""
        return self.graph.graph_def()

    def optimized_graph_def(self) -> bytes | None:
        """The graph the executor runs, after the optimizer (the traced graph before the first call)."""
        return self.session.optimized_graph_def()

    def placement(self):
        """Where each node of the last call ran (see :mod:`plexus.placement`)."""
        from .placement import PlacementReport
        return PlacementReport(self.session.placement())

    def __repr__(self):
        return f"<plexus ConcreteFunction {self.name} inputs={self.inputs} outputs={self.outputs}>"


class function:  # noqa: N801  (used as a decorator, like tf.function)
    """Traces a Python function into a Plexus graph, once per input signature.

    The first call with new argument dtypes and shapes (or new Python
    values) runs the Python function with symbolic tensors, building a
    graph; that graph is optimized and run by the executor, and later calls
    with the same signature run it directly::

        @plexus.function
        def dense(x, w, b):
            return plexus.nn.relu(x @ w + b)

        y = dense(x, w, b)           # traces, then runs the graph
        dense.graph_def(x, w, b)     # the traced GraphDef (bytes)

    Tensors and NumPy arrays among the arguments (nested in lists, tuples
    and dicts too) become graph inputs; other Python values are baked into
    the graph and are part of the signature. Tensors the function reads
    from its enclosing scope are captured by value when tracing.
    ``threads`` caps the threads each kernel of the graph uses (None: the
    process-wide :func:`plexus.set_num_threads` setting).
    """

    def __init__(self, fn=None, *, device: str | None = None, optimize: bool = True,
                 device_graphs: bool = False, input_signature=None, threads: int | None = None):
        self._fn = fn
        self._input_signature = None if input_signature is None else list(input_signature)
        self._device = device
        self._optimize = optimize
        self._device_graphs = device_graphs
        self._threads = threads
        _threads_option(threads)  # refuse a bad count at once
        self._cache: dict = {}
        self._counter = itertools.count()
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if self._fn is None:  # @function(...) with options
            return function(args[0], device=self._device, optimize=self._optimize,
                            device_graphs=self._device_graphs, input_signature=self._input_signature,
                            threads=self._threads)
        concrete, leaves = self._concrete(args, kwargs)
        return concrete._call_flat(leaves)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def _concrete(self, args, kwargs):
        if self._input_signature is not None and not args and not kwargs:
            return self._signature_concrete(), []
        if self._input_signature is not None and not kwargs:
            # Like tf.function: a function with an input signature has one
            # graph, for the signature; arguments must fit it.
            return self._signature_concrete(), self._fit_signature(args)
        leaves = []
        spec = _flatten((args, kwargs), leaves)
        key_leaves = []
        for v in leaves:
            if isinstance(v, _GraphTensor):
                raise TypeError("a plexus.function was called with a symbolic tensor; nesting traced "
                                "functions is not supported yet")
            if not isinstance(v, _Tensor):
                v = _plexus.constant(v)
            key_leaves.append(v)
        key = (_hashable(spec), tuple((v.dtype.enum, v.shape) for v in key_leaves),
               _plexus._scope_device())
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._trace(spec, key_leaves)
            self._cache[key] = concrete
        return concrete, key_leaves

    def _fit_signature(self, args):
        name = getattr(self._fn, "__name__", "function")
        leaves, specs = [], []
        spec = _flatten((tuple(args), {}), leaves)
        if spec != _flatten((tuple(self._input_signature), {}), specs):
            raise TypeError(f"plexus.function '{name}': the arguments do not have the structure of its "
                            f"input_signature {self._input_signature}")
        out = []
        for i, (v, s) in enumerate(zip(leaves, specs)):
            if isinstance(v, _GraphTensor):
                raise TypeError("a plexus.function was called with a symbolic tensor; nesting traced "
                                "functions is not supported yet")
            t = v if isinstance(v, _Tensor) else _plexus.constant(v, s.dtype)
            shape = tuple(t.shape)
            if t.dtype != s.dtype or s.shape is not None and (
                    len(shape) != len(s.shape) or any(d is not None and d != g for d, g in zip(s.shape, shape))):
                raise ValueError(f"plexus.function '{name}': argument {i} is {t.dtype.name} {list(shape)}, which "
                                 f"does not fit the input_signature's {s}")
            out.append(t)
        return out

    def _signature_concrete(self):
        key = ("input_signature",)
        concrete = self._cache.get(key)
        if concrete is None:
            leaves = []
            spec = _flatten((tuple(self._input_signature), {}), leaves)
            concrete = self._trace(spec, leaves, specs=self._input_signature)
            self._cache[key] = concrete
        return concrete

    def _trace(self, spec, leaves, specs=None):
        name = getattr(self._fn, "__name__", "function")
        trace = _plexus.Trace(name)
        symbols = [trace.placeholder(v.dtype, v.shape, f"arg{i}") for i, v in enumerate(leaves)]
        args, kwargs = _unflatten(spec, symbols)
        with trace:
            result = self._fn(*args, **kwargs)
        out_leaves = []
        output_spec = _flatten(result, out_leaves)
        fetches = [trace.output(v) for v in out_leaves]
        targets = trace.stateful_nodes()
        graph = _plexus.Graph.from_bytes(trace.graph_def(), f"function '{name}'")
        session = _plexus.Session(graph, device=self._device, optimize=self._optimize,
                                  device_graphs=self._device_graphs, eager_variables=True,
                                  fetch_to_host=False, threads=_threads_option(self._threads))
        feeds = [f"arg{i}:0" for i in range(len(leaves))]
        input_names = None
        if specs is not None:
            params = []
            try:
                import inspect
                params = list(inspect.signature(self._fn).parameters)
            except (TypeError, ValueError):
                pass
            input_names = [s.name or (params[i] if i < len(params) else f"arg{i}") for i, s in enumerate(specs)]
        output_names = None
        if isinstance(result, dict):
            output_names = sorted(result)
        return ConcreteFunction(name, graph, session, feeds, fetches, targets, output_spec, spec,
                                input_names, output_names)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The traced graph for these arguments (tracing it if needed)."""
        return self._concrete(args, kwargs)[0]

    def graph_def(self, *args, **kwargs) -> bytes:
        """The GraphDef (bytes) traced for these arguments."""
        return self.get_concrete_function(*args, **kwargs).graph_def()

    def placement(self, *args, **kwargs):
        """The placement report of the concrete function for these arguments
        (traced if needed), after its last call."""
        return self.get_concrete_function(*args, **kwargs).placement()

    @property
    def num_traces(self) -> int:
        """How many signatures have been traced."""
        return len(self._cache)
