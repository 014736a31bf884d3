"""map, filter and interleave: user functions on elements.

A user function is traced once with ``plexus.function`` for the dataset's
element spec (unknown dimensions stay unknown), so every element runs the
same graph in a C++ session, which releases the GIL: with
``num_parallel_calls`` several elements run at once on a thread pool, in
order. A function that cannot be traced (it calls ``.numpy()`` or
branches on tensor values) runs eagerly instead, one element at a time
under the GIL, and gives the same results. As in tf.data, a tuple element
is passed as positional arguments and any other element as one argument.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import itertools

import numpy as np

from .. import _plexus
from ..function import function as _traced_function
from . import structure as S
from .dataset import UNKNOWN_CARDINALITY, Dataset


def _args_of(structure):
    return list(structure) if isinstance(structure, tuple) and not hasattr(structure, "_fields") else [structure]


class UserFunction:
    """A user function for one element spec: traced when possible, else called eagerly.

    The traced function takes the element's leaves flat and returns its
    result's leaves flat (both in the element's own order, dict keys as
    inserted), so nested elements (dicts, tuples of dicts, named tuples
    such as a VarLenFeature's SparseTensor) trace as well as single tensors.
    """

    def __init__(self, fn, element_spec, what):
        self.fn, self.what = fn, what
        self.output_spec = None
        self._concrete = None
        if element_spec is None:
            return  # unknown elements (after an eager map): called eagerly
        specs = S.flatten(element_spec)

        def flat_fn(*leaves):
            out = fn(*_args_of(S.pack_like(element_spec, leaves)))
            if out is None:
                raise TypeError(f"{what}: the function returned None")
            # Python numbers and NumPy values in the result become constants of the graph.
            flat = [v if isinstance(v, (_plexus.Tensor, _plexus.GraphTensor)) else S.to_tensor(v)
                    for v in S.flatten(out)]
            self.output_spec = S.pack_like(out, [S.TensorSpec(v.shape, v.dtype) for v in flat])
            return flat
        flat_fn.__name__ = getattr(fn, "__name__", what).replace("<lambda>", what)
        try:
            traced = _traced_function(flat_fn, input_signature=[
                S.TensorSpec(s.shape, s.dtype, f"arg{i}") for i, s in enumerate(specs)])
            self._concrete = traced.get_concrete_function()
            if self.output_spec is None or len(S.flatten(self.output_spec)) != len(self._concrete.outputs):
                raise TypeError("an output is not a tensor")
        except Exception:  # noqa: BLE001  (the eager fallback runs the same function)
            self._concrete = None
            self.output_spec = None

    @property
    def traced(self) -> bool:
        return self._concrete is not None

    def __call__(self, element):
        """The function's result for a NumPy element, as plexus tensors."""
        if self._concrete is not None:
            return S.pack_like(self.output_spec, self._concrete(*self._leaves(element)))
        return self.fn(*[S.map_structure(S.to_tensor, a) for a in _args_of(element)])

    @property
    def fast(self) -> bool:
        """Traced: elements can run as plain session runs."""
        return self._concrete is not None

    def _leaves(self, element):
        return [S.to_tensor(a) for a in S.flatten(element)]

    def numpy_call_many(self, elements, threads):
        """numpy_call for a chunk of elements, run by the session on C++ threads."""
        c = self._concrete
        results = c.session.run_many(c.inputs, [self._leaves(e) for e in elements], c.outputs, c._targets,
                                     threads)
        return [S.pack_like(self.output_spec, [np.asarray(r.numpy()) for r in out]) for out in results]

    def numpy_call(self, element):
        """The function's result for a NumPy element, as NumPy values (the fast path of map)."""
        c = self._concrete
        if c is None:
            return S.map_structure(S.to_numpy, self(element))
        results = c.session.run_values(c.inputs, self._leaves(element), c.outputs, c._targets)
        return S.pack_like(self.output_spec, [np.asarray(r.numpy()) for r in results])


def mapped(ds, fn, parallelism, deterministic):
    user = UserFunction(fn, ds.element_spec, "map")
    if parallelism <= 1:
        def make():
            for element in ds._numpy_iter():
                yield user.numpy_call(element)
    elif user.fast:
        def make():
            # Chunks of elements go to C++: the session runs them on
            # `parallelism` threads without the GIL, while a Python thread
            # prepares the next chunk.
            source = ds._numpy_iter()

            def chunks():
                while True:
                    chunk = list(itertools.islice(source, _CHUNK * parallelism))
                    if not chunk:
                        return
                    yield chunk
            with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="plexus-data-map") as pool:
                pending = collections.deque()
                for chunk in chunks():
                    pending.append(pool.submit(user.numpy_call_many, chunk, parallelism))
                    if len(pending) >= 2:
                        yield from pending.popleft().result()
                while pending:
                    yield from pending.popleft().result()
    else:
        def make():
            # A function that runs eagerly: elements go to Python threads in
            # chunks (eager ops release the GIL while they compute).
            def run(chunk):
                return [user.numpy_call(element) for element in chunk]
            with cf.ThreadPoolExecutor(max_workers=parallelism, thread_name_prefix="plexus-data-map") as pool:
                pending = collections.deque()
                source = ds._numpy_iter()
                while True:
                    chunk = list(itertools.islice(source, _CHUNK))
                    if chunk:
                        pending.append(pool.submit(run, chunk))
                    if pending and (len(pending) >= 2 * parallelism or not chunk):
                        yield from pending.popleft().result()
                    if not chunk and not pending:
                        return
    spec = user.output_spec if user.output_spec is not None else UNKNOWN_SPEC
    return Dataset(make, spec, ds.cardinality())


UNKNOWN_SPEC = None
_CHUNK = 16  # elements per thread-pool task in a parallel map


def filtered(ds, predicate):
    user = UserFunction(predicate, ds.element_spec, "filter")

    def make():
        for element in ds._numpy_iter():
            keep = user(element)
            value = S.to_numpy(keep)
            if value.shape != () or value.dtype != bool:
                raise ValueError(f"filter: the predicate must return a scalar bool, got {value.dtype} {value.shape}")
            if bool(value):
                yield element
    return Dataset(make, ds.element_spec, UNKNOWN_CARDINALITY)  # tf.data: unknown, even of an infinite one


class _Interleaved(Dataset):
    """interleave's result. Its element_spec is the inner datasets' spec: the
    function is called (eagerly, as it always is) on the source's first
    element the first time the spec is asked for, since a function that
    builds a Dataset cannot be traced."""

    def __init__(self, make, inner):
        self._inner = inner
        self._spec = None
        self._spec_known = False
        super().__init__(make, None, UNKNOWN_CARDINALITY)

    @property
    def _element_spec(self):  # Dataset's methods read _element_spec
        if not self._spec_known:
            self._spec_known = True
            source = self._inner.source._numpy_iter()
            try:
                first = next(source, None)
                if first is not None:
                    self._spec = self._inner(first).element_spec
            finally:
                getattr(source, "close", lambda: None)()
        return self._spec

    @_element_spec.setter
    def _element_spec(self, value):
        self._spec = value


class _InnerDatasets:
    def __init__(self, source, fn):
        self.source, self.fn = source, fn

    def __call__(self, element):
        args = [S.map_structure(S.to_tensor, a) for a in _args_of(element)]
        out = self.fn(*args)
        if not isinstance(out, Dataset):
            raise TypeError(f"interleave: the function must return a Dataset, got {type(out).__name__}")
        return out


def interleaved(ds, fn, cycle_length, block_length, parallelism=1):
    """tf.data's deterministic interleave: cycle over cycle_length inner datasets, block_length elements each.

    With parallelism > 1 every open inner dataset runs ahead on its own
    thread (a prefetch of a few blocks), so files are read and inner
    pipelines run at the same time; the order stays tf.data's.
    """
    from .prefetch import prefetched
    inner = _InnerDatasets(ds, fn)

    def open_slot(element):
        d = inner(element)
        return prefetched(d, 2 * block_length)._numpy_iter() if parallelism > 1 else d._numpy_iter()

    def make():
        source = ds._numpy_iter()
        slots = [None] * cycle_length
        exhausted = False
        i = 0
        try:
            while True:
                if slots[i] is None and not exhausted:
                    try:
                        element = next(source)
                    except StopIteration:
                        exhausted = True
                    else:
                        slots[i] = open_slot(element)
                if slots[i] is not None:
                    for _ in range(block_length):
                        try:
                            yield next(slots[i])
                        except StopIteration:
                            slots[i] = None
                            break
                if exhausted and all(s is None for s in slots):
                    return
                i = (i + 1) % cycle_length
        finally:
            for s in slots:  # stops the threads of inner datasets left open
                if s is not None:
                    s.close()
    return _Interleaved(make, inner)
