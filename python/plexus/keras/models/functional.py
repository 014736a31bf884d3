"""The functional API: ``Input``, symbolic ``KerasTensor``s and the ``Functional`` model.

Calling a layer on KerasTensors records a node (the layer, its arguments)
and returns new KerasTensors. The output shapes come from running the
layer once on small zero-filled tensors (batch 2; dimensions unknown in the
input are tried at two sizes and stay unknown where the output follows
them), so every layer, user-written ones included, gets the shapes its
own code computes. ``Functional`` walks the recorded nodes in order.
"""

from __future__ import annotations

import numpy as np

from .. import _backend as B
from ..layers.base import Layer, _any, _is_keras_tensor, _map, unique_name


class KerasTensor:
    """A symbolic tensor of a functional model: a shape (None where unknown) and a dtype."""

    _is_keras_tensor = True

    def __init__(self, shape, dtype="float32", name=None, history=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = B.dtype_name(dtype)
        self.name = name
        self._history = history  # (layer, node_index, tensor_index)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __hash__(self):
        return id(self)

    # Arithmetic on symbolic tensors becomes a layer of the model.
    # Arithmetic records the Keras operation it stands for, so that a .keras
    # config names it as Keras does (keras.src.ops.numpy.Add, ...).
    def _op(self, fn, keras_op, *args):
        from ..layers.base import snake_case
        layer = OpLayer(fn, snake_case(keras_op))
        layer._keras_op = (keras_op, {})
        return layer(*args)

    def __add__(self, o): return self._op(lambda a, b: a + b, "Add", self, o)
    def __radd__(self, o): return self._op(lambda a, b: a + b, "Add", o, self)
    def __sub__(self, o): return self._op(lambda a, b: a - b, "Subtract", self, o)
    def __rsub__(self, o): return self._op(lambda a, b: a - b, "Subtract", o, self)
    def __mul__(self, o): return self._op(lambda a, b: a * b, "Multiply", self, o)
    def __rmul__(self, o): return self._op(lambda a, b: a * b, "Multiply", o, self)
    def __truediv__(self, o): return self._op(lambda a, b: a / b, "TrueDivide", self, o)
    def __rtruediv__(self, o): return self._op(lambda a, b: a / b, "TrueDivide", o, self)
    def __matmul__(self, o): return self._op(lambda a, b: a @ b, "Matmul", self, o)
    def __pow__(self, o): return self._op(lambda a, b: a ** b, "Power", self, o)
    def __neg__(self): return self._op(lambda a: -a, "Negative", self)
    def __getitem__(self, key): return self._op(lambda a, k: a[k], "GetItem", self, key)


class OpLayer(Layer):
    """A layer wrapping an operation applied to KerasTensors (``x + y``, ``x[:, 0]``).

    Its arguments reach the function as given (an index stays a Python
    value); numbers and arrays among the operands become tensors unless the
    operation is an indexing.
    """

    _raw_args = True

    def __init__(self, fn, name, **kwargs):
        super().__init__(name=unique_name(name), **kwargs)
        self.fn = fn

    def call(self, *args):
        if getattr(self, "_keras_op", ("",))[0] == "GetItem":
            return self.fn(*args)
        return self.fn(*[B.convert(a) if isinstance(a, (float, int, np.ndarray)) else a for a in args])


class Node:
    """One call of a layer in a functional model."""

    def __init__(self, layer, args, kwargs, outputs):
        self.layer = layer
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        leaves = []
        _map((args, kwargs), lambda x: leaves.append(x) if _is_keras_tensor(x) else None)
        self.inputs = leaves


def _concrete(x, size):
    if not _is_keras_tensor(x):
        return x
    shape = [size if d is None else d for d in x.shape]
    dtype = x.dtype
    if dtype == "string":
        return B.convert(np.full(shape, b"", dtype=object))
    return B.convert(np.zeros(shape, dtype=np.float32 if dtype == "bfloat16" else dtype), dtype)


def _run_on_zeros(layer, args, kwargs, size):
    cargs = _map(args, lambda x: _concrete(x, size))
    ckw = _map(kwargs, lambda x: _concrete(x, size))
    with B.training_scope(False):
        return layer(*cargs, **ckw)


class _Spec:
    """The shape and dtype of one output (a leaf of output_spec's structure)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _spec(value, other):
    """An output's spec; dims that differ from `other` (the second run's output) are None."""
    shape = list(value.shape)
    if other is not None:
        shape = [d if d == o else None for d, o in zip(shape, other.shape)]
    return _Spec(shape, B.dtype_name(value.dtype))


def output_spec(layer, args, kwargs):
    """The shapes and dtypes of layer(*args, **kwargs) for symbolic args (a structure of (shape, dtype))."""
    flexible = []
    _map((args, kwargs), lambda x: flexible.append(x) if _is_keras_tensor(x) else None)
    first = _run_on_zeros(layer, args, kwargs, 2)
    second = None
    if any(None in x.shape[1:] for x in flexible):
        second = _run_on_zeros(layer, args, kwargs, 3)
    batch_unknown = any(x.shape and x.shape[0] is None for x in flexible)

    def spec(value, other):
        out = _spec(value, other)
        if batch_unknown and out.shape and other is None and out.shape[0] == 2:
            out.shape[0] = None
        return out

    if second is None:
        return _map(first, lambda v: spec(v, None))
    flat_first, flat_second = [], []
    _map(first, flat_first.append)
    _map(second, flat_second.append)
    pairs = iter(zip(flat_first, flat_second))
    return _map(first, lambda v: spec(*next(pairs)))


def output_shape_by_running(layer, input_shape):
    """compute_output_shape for any layer: run it on zeros of `input_shape`."""
    if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], (list, tuple)):
        args = ([KerasTensor(s, layer.compute_dtype) for s in input_shape],)
    else:
        args = (KerasTensor(input_shape, layer.compute_dtype),)
    return _map(output_spec(layer, args, {}), lambda s: tuple(s.shape))


def symbolic_call(layer, args, kwargs):
    """layer(*args, **kwargs) on KerasTensors: records a node, returns output KerasTensors."""
    specs = output_spec(layer, args, kwargs)
    node_index = len(_inbound_nodes(layer))
    counter = [0]

    def make(spec):
        kt = KerasTensor(spec.shape, spec.dtype, name=f"{layer.name}/output_{counter[0]}",
                         history=(layer, node_index, counter[0]))
        counter[0] += 1
        return kt

    outputs = _map(specs, make)
    _inbound_nodes(layer).append(Node(layer, args, kwargs, outputs))
    return outputs


def _inbound_nodes(layer):
    nodes = layer.__dict__.get("_inbound_nodes")
    if nodes is None:
        nodes = []
        object.__setattr__(layer, "_inbound_nodes", nodes)
    return nodes


class InputLayer(Layer):
    """The layer behind ``Input``: it holds the model input's shape and dtype."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None,
                 input_tensor=None, optional=False, name=None, **kwargs):
        kwargs.pop("input_shape", None)
        super().__init__(name=name or unique_name("input_layer"), dtype=kwargs.pop("dtype_policy", None),
                         **{k: v for k, v in kwargs.items() if k in ("trainable",)})
        if batch_shape is None:
            if shape is None:
                raise ValueError("Input: give `shape` (without the batch dimension) or `batch_shape`")
            batch_shape = (batch_size,) + tuple(shape)
        self.batch_shape = tuple(batch_shape)
        self._dtype_name = B.dtype_name(dtype) or B.floatx()
        self.sparse = bool(sparse)
        self.optional = optional
        self.built = True
        self.output = KerasTensor(self.batch_shape, self._dtype_name, name=self.name, history=(self, 0, 0))
        _inbound_nodes(self).append(Node(self, (), {}, self.output))

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self._dtype_name, "sparse": self.sparse,
                "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None,
          optional=False):
    """A symbolic model input, like ``keras.Input(shape=(28, 28, 1))`` (shape without the batch)."""
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, batch_shape=batch_shape,
                      name=name, optional=optional).output


def collect_nodes(inputs, outputs):
    """The nodes between `inputs` and `outputs`, in an order where each node follows its inputs."""
    flat_inputs, flat_outputs = [], []
    _map(inputs, flat_inputs.append)
    _map(outputs, flat_outputs.append)
    for x in flat_inputs + flat_outputs:
        if not _is_keras_tensor(x):
            raise TypeError(f"Model inputs and outputs must be KerasTensors (from keras.Input and layer calls); "
                            f"got {type(x).__name__}")
    input_ids = {id(x) for x in flat_inputs}
    order, state = [], {}

    def visit(kt, path):
        layer, index, _ = kt._history
        node = _inbound_nodes(layer)[index]
        key = id(node)
        if state.get(key) == 2:
            return
        if state.get(key) == 1:
            raise ValueError(f"the model has a cycle through layer '{layer.name}'")
        state[key] = 1
        if id(kt) not in input_ids:
            if isinstance(layer, InputLayer):
                raise ValueError(f"output {flat_outputs[0].name} depends on input '{layer.name}', which is not "
                                 f"among the model's inputs ({', '.join(x.name for x in flat_inputs)})")
            for parent in node.inputs:
                visit(parent, path + [layer.name])
            order.append(node)
        state[key] = 2

    for kt in flat_outputs:
        visit(kt, [])
    return order


def tree_flatten(structure):
    """Leaves of a structure in Keras's order (dict entries sorted by key, as keras.tree.flatten)."""
    if isinstance(structure, dict):
        out = []
        for k in sorted(structure):
            out.extend(tree_flatten(structure[k]))
        return out
    if isinstance(structure, (list, tuple)):
        out = []
        for v in structure:
            out.extend(tree_flatten(v))
        return out
    return [structure]


def layer_order(inputs, outputs):
    """The model's layers in Keras's order: by depth from the outputs (deepest, the inputs, first),
    ties by first visit in a depth-first walk from the outputs. Weights follow this order, so
    get_weights() lines up with Keras's."""
    flat_inputs = tree_flatten(inputs)
    input_ids = {id(x) for x in flat_inputs}
    finished, post_order, first_seen = set(), [], {}

    def walk(kt):
        layer, index, _ = kt._history
        node = _inbound_nodes(layer)[index]
        if id(node) in finished:
            return
        if id(kt) in input_ids and not isinstance(layer, InputLayer):
            finished.add(id(node))
            return
        first_seen.setdefault(id(layer), (len(first_seen), layer))
        if not isinstance(layer, InputLayer):
            for parent in node.inputs:
                walk(parent)
        finished.add(id(node))
        post_order.append(node)

    for kt in tree_flatten(outputs):
        walk(kt)
    node_depth, layer_depth = {}, {}
    for node in reversed(post_order):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = depth
        node_depth[id(node)] = depth
        for parent in node.inputs:
            p_layer, p_index, _ = parent._history
            p_node = _inbound_nodes(p_layer)[p_index]
            node_depth[id(p_node)] = max(depth + 1, node_depth.get(id(p_node), 0))
    for kt in flat_inputs:
        layer = kt._history[0]
        if id(layer) not in layer_depth:
            layer_depth[id(layer)] = 0
            first_seen.setdefault(id(layer), (-1, layer))
    layers = [first_seen[k][1] for k in layer_depth]
    return sorted(layers, key=lambda l: (-layer_depth[id(l)], first_seen[id(l)][0]))


def _tensor_arguments(layer, node):
    """The call's arguments that hold Keras tensors, by parameter name, in call order."""
    params = [(n, p) for n, p in layer._call_params.items() if n not in ("**", "self")]
    named = {}
    positional = [n for n, p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, a in enumerate(node.args):
        named[positional[i] if i < len(positional) else f"*{i}"] = a
    named.update(node.kwargs)
    return {n: v for n, v in named.items() if _any(v, _is_keras_tensor)}


def _populate_masks(layer, node, masks, kwargs):
    """Keras 3's masking rule (Layer.__call__): a call with one tensor argument
    gets that argument's mask(s) as `mask`; a call with several gets each
    argument's mask as `<argument>_mask` where the layer has such a parameter
    (MultiHeadAttention's query_mask, value_mask, key_mask) and no `mask` at
    all, so an RNN called with initial_state ignores its input's mask, as in
    Keras. Returns the previous mask for compute_mask: the `mask` passed, or
    the first argument's."""
    params = layer._call_params
    tensors = _tensor_arguments(layer, node)

    def mask_of(v):
        m = _map(v, lambda x: masks.get(id(x)) if _is_keras_tensor(x) else None)
        return m if _any(m, lambda t: t is not None) else None
    if len(tensors) == 1:
        if "mask" in params and kwargs.get("mask") is None:
            m = mask_of(next(iter(tensors.values())))
            if m is not None:
                kwargs["mask"] = m
    else:
        for name, v in tensors.items():
            if f"{name}_mask" in params and kwargs.get(f"{name}_mask") is None:
                m = mask_of(v)
                if m is not None:
                    kwargs[f"{name}_mask"] = m
    if kwargs.get("mask") is not None:
        return kwargs["mask"]
    first = next((n for n, p in params.items() if n != "**" and n != "self"), None)
    value = node.args[0] if node.args else node.kwargs.get(first)
    return mask_of(value) if value is not None else None


def run_nodes(nodes, inputs, values, training=None, masks=None):
    """Evaluates the nodes: `values` maps id(KerasTensor) to tensors (the inputs on entry)."""
    masks = masks if masks is not None else {}
    for node in nodes:
        layer = node.layer

        def value_of(x):
            if _is_keras_tensor(x):
                return values[id(x)]
            return x
        args = _map(node.args, value_of)
        kwargs = _map(node.kwargs, value_of)
        params = layer._call_params
        if training is not None and ("training" in params or params.get("**")) and "training" not in node.kwargs:
            kwargs["training"] = training
        mask = _populate_masks(layer, node, masks, kwargs)
        # The inputs carry their masks during the call, as Keras's tensors
        # carry _keras_mask (MultiHeadAttention reads its query's).
        carried = [values[id(x)] for x in node.inputs if masks.get(id(x)) is not None]
        for x in node.inputs:
            if masks.get(id(x)) is not None:
                B.set_keras_mask(values[id(x)], masks[id(x)])
        try:
            out = layer(*args, **kwargs)
        finally:
            B.drop_keras_masks(carried)
        flat_kt, flat_out = [], []
        _map(node.outputs, flat_kt.append)
        _map(out, flat_out.append)
        if len(flat_kt) != len(flat_out):
            raise ValueError(f"layer '{layer.name}' returned {len(flat_out)} tensors where the model recorded "
                             f"{len(flat_kt)}")
        out_mask = None
        if layer.supports_masking or type(layer).compute_mask is not Layer.compute_mask:
            out_mask = layer.compute_mask(args[0] if args else None, mask)
        # A layer with several outputs gives one mask per output (Keras's list).
        per_output = isinstance(out_mask, (list, tuple)) and len(flat_kt) > 1 and len(out_mask) == len(flat_kt)
        for i, (kt, v) in enumerate(zip(flat_kt, flat_out)):
            values[id(kt)] = v
            m = out_mask[i] if per_output else out_mask
            attached = B.get_keras_mask(v)  # a nested model's output masks
            if attached is not None:
                m = attached
            if m is not None:
                masks[id(kt)] = m
    return values


def any_keras_tensor(structure) -> bool:
    return _any(structure, _is_keras_tensor)
