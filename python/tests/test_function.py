"""plexus.function: tracing once per input signature, results against eager
execution and NumPy, the traced and optimized GraphDefs, captures, options,
methods and errors raised while tracing."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

RNG = np.random.default_rng(1234)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def graph_nodes(graph_def_bytes):
    """(name, op) of every node, by importing the GraphDef bytes again."""
    return [(n["name"], n["op"]) for n in px.import_graph_def(graph_def_bytes).nodes()]


def graph_ops(graph_def_bytes):
    return [op for _, op in graph_nodes(graph_def_bytes)]


def np_softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---- tracing and the signature cache -------------------------------------------------------------


def test_traces_once_per_signature():
    calls = []

    @px.function
    def scale(x, y):
        calls.append(1)  # Python side effects happen while tracing only
        return x * 2.0 + y

    assert scale.num_traces == 0
    a, b = randn(3, 4), randn(3, 4)
    np.testing.assert_allclose(scale(a, b).numpy(), a * 2 + b, rtol=1e-6)
    assert scale.num_traces == 1 and len(calls) == 1
    # Same dtypes and shapes, new values: the graph is reused.
    c, d = randn(3, 4), randn(3, 4)
    np.testing.assert_allclose(scale(c, d).numpy(), c * 2 + d, rtol=1e-6)
    # A plexus tensor with that dtype and shape has the same signature.
    np.testing.assert_allclose(scale(px.constant(c), px.constant(d)).numpy(), c * 2 + d, rtol=1e-6)
    assert scale.num_traces == 1 and len(calls) == 1
    # A new shape traces again.
    e = randn(5)
    np.testing.assert_allclose(scale(e, e).numpy(), e * 3, rtol=1e-6)
    assert scale.num_traces == 2 and len(calls) == 2
    # A new dtype traces again.
    f = randn(3, 4, dtype=np.float64)
    out = scale(f, f)
    assert out.dtype == px.float64
    np.testing.assert_allclose(out.numpy(), f * 3, rtol=1e-12)
    assert scale.num_traces == 3
    # Back to the first signature: cached.
    scale(a, b)
    scale(e, e)
    assert scale.num_traces == 3 and len(calls) == 3


def test_python_scalars_are_part_of_the_signature():
    @px.function
    def power(x, n, mode="double"):
        for _ in range(n):  # unrolled at trace time
            x = x * 2.0 if mode == "double" else x + 1.0
        return x

    x = np.array([1.0, 3.0], np.float32)
    np.testing.assert_array_equal(power(x, 3).numpy(), x * 8)
    assert power.num_traces == 1
    np.testing.assert_array_equal(power(x, 3).numpy(), x * 8)
    assert power.num_traces == 1
    np.testing.assert_array_equal(power(x, 2).numpy(), x * 4)
    assert power.num_traces == 2
    np.testing.assert_array_equal(power(x, 2, mode="add").numpy(), x + 2)
    np.testing.assert_array_equal(power(x, 2, "add").numpy(), x + 2)
    np.testing.assert_array_equal(power(x, 0).numpy(), x)
    np.testing.assert_array_equal(power(x, 3).numpy(), x * 8)
    assert power.num_traces >= 4


def test_python_scalar_type_is_part_of_the_signature():
    @px.function
    def filled(x, n):
        return x, px.fill([2], n), n

    x = px.constant(1.0)
    _, ints, n = filled(x, 2)
    assert ints.dtype == px.int32 and n == 2
    _, floats, n = filled(x, 2.0)
    assert floats.dtype == px.float32
    assert isinstance(n, float)
    _, _, flag = filled(x, True)
    _, _, one = filled(x, 1)
    assert flag is True and one == 1 and type(one) is int


# ---- results against eager execution and NumPy -----------------------------------------------------


def test_mlp_matches_eager_and_numpy():
    def mlp(x, w1, b1, w2, b2):
        h = px.nn.relu(x @ w1 + b1)
        return px.nn.softmax(h @ w2 + b2)

    traced = px.function(mlp)
    x, w1, b1, w2, b2 = randn(8, 16), randn(16, 32), randn(32), randn(32, 10), randn(10)
    got = traced(x, w1, b1, w2, b2)
    assert isinstance(got, px.Tensor)
    assert got.shape == (8, 10) and got.dtype == px.float32
    eager = mlp(*(px.constant(v) for v in (x, w1, b1, w2, b2)))
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-5, atol=1e-6)
    want = np_softmax(np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got.numpy().sum(axis=1), 1, rtol=1e-5)
    # The undecorated function stays reachable, and runs eagerly.
    np.testing.assert_allclose(traced.__wrapped__(*(px.constant(v) for v in (x, w1, b1, w2, b2))).numpy(),
                               eager.numpy(), rtol=1e-6)
    assert traced.__name__ == "mlp"


def _conv_reference(x, w, stride, padding):
    """NHWC input, HWIO filter; float64 loops over output positions."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv_net_matches_eager_and_numpy():
    def net(x, w1, b1, w2, dense):
        h = px.nn.relu(px.nn.bias_add(px.nn.conv2d(x, w1, strides=1, padding="SAME"), b1))
        h = px.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        h = px.nn.relu(px.nn.conv2d(h, w2, strides=[1, 2, 2, 1], padding="VALID"))
        flat = px.reshape(h, [x.shape[0], -1])
        return flat @ dense, h

    x, w1, b1, w2 = randn(2, 12, 12, 3), randn(3, 3, 3, 8), randn(8), randn(3, 3, 8, 4)
    dense = randn(2 * 2 * 4, 5)
    traced = px.function(net)
    logits, feat = traced(x, w1, b1, w2, dense)
    assert logits.shape == (2, 5) and feat.shape == (2, 2, 2, 4)
    eager_logits, eager_feat = net(*(px.constant(v) for v in (x, w1, b1, w2, dense)))
    np.testing.assert_allclose(logits.numpy(), eager_logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(feat.numpy(), eager_feat.numpy(), rtol=1e-4, atol=1e-4)

    h = np.maximum(_conv_reference(x, w1, 1, "SAME") + b1, 0)
    h = h.reshape(2, 6, 2, 6, 2, 8).max(axis=(2, 4))
    h = np.maximum(_conv_reference(h, w2, 2, "VALID"), 0)
    np.testing.assert_allclose(feat.numpy(), h, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(logits.numpy(), h.reshape(2, -1) @ dense, rtol=1e-4, atol=1e-4)

    # PyTorch (NCHW, OIHW) agrees too, when it is installed.
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    t = tf.relu(tf.conv2d(torch.from_numpy(x).permute(0, 3, 1, 2),
                          torch.from_numpy(w1).permute(3, 2, 0, 1), torch.from_numpy(b1), padding=1))
    t = tf.max_pool2d(t, 2)
    t = tf.relu(tf.conv2d(t, torch.from_numpy(w2).permute(3, 2, 0, 1), stride=2))
    np.testing.assert_allclose(feat.numpy(), t.permute(0, 2, 3, 1).numpy(), rtol=1e-4, atol=1e-4)


def test_python_control_flow_is_unrolled():
    @px.function
    def residual(x, weights, use_tanh):
        for i, w in enumerate(weights):  # a Python list of tensors: one graph input each
            update = x @ w
            x = x + (px.tanh(update) if use_tanh else px.nn.relu(update)) * (0.5 ** i)
        return x

    x = randn(4, 6)
    ws = [randn(6, 6) * 0.3 for _ in range(3)]

    def reference(use_tanh):
        y = x.astype(np.float64)
        for i, w in enumerate(ws):
            u = y @ w
            y = y + (np.tanh(u) if use_tanh else np.maximum(u, 0)) * 0.5 ** i
        return y

    for use_tanh in (True, False):
        np.testing.assert_allclose(residual(x, ws, use_tanh).numpy(), reference(use_tanh),
                                   rtol=1e-5, atol=1e-5)
    assert residual.num_traces == 2
    ops = graph_ops(residual.graph_def(x, ws, True))
    assert ops.count("MatMul") == 3 and ops.count("Tanh") == 3 and "Relu" not in ops
    assert ops.count("Placeholder") == 4
    # A list of a different length is a new signature.
    np.testing.assert_allclose(residual(x, ws[:1], False).numpy(),
                               x + np.maximum(x.astype(np.float64) @ ws[0], 0), rtol=1e-5, atol=1e-5)
    assert residual.num_traces == 3


def test_nested_arguments_and_results():
    @px.function
    def nested(inputs, params, scale=1.0):
        a, b = inputs["pair"]
        total = (a + b) * scale
        return {"sum": total, "stats": [px.reduce_sum(total), (px.reduce_mean(params["w"]), "tag")],
                "shape": params["n"]}

    a, b, w = randn(2, 3), randn(2, 3), randn(4)
    out = nested({"pair": (a, b)}, {"w": w, "n": 7}, scale=2.0)
    assert set(out) == {"sum", "stats", "shape"}
    np.testing.assert_allclose(out["sum"].numpy(), (a + b) * 2, rtol=1e-6)
    assert isinstance(out["stats"], list) and isinstance(out["stats"][1], tuple)
    np.testing.assert_allclose(out["stats"][0].numpy(), ((a + b) * 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(out["stats"][1][0].numpy(), w.mean(), rtol=1e-5, atol=1e-7)
    assert out["stats"][1][1] == "tag"
    assert out["shape"] == 7  # Python values pass through
    assert nested.num_traces == 1
    # New values in the same structure: cached. Another structure: traced.
    nested({"pair": (b, a)}, {"w": w * 2, "n": 7}, scale=2.0)
    assert nested.num_traces == 1
    nested({"pair": [b, a]}, {"w": w, "n": 7}, scale=2.0)  # a list, not a tuple
    nested({"pair": (a, b)}, {"w": w, "n": 8}, scale=2.0)
    assert nested.num_traces == 3


# ---- GraphDefs ---------------------------------------------------------------------------------------


def test_graph_def_reimports_and_runs():
    @px.function
    def dense(x, w, b):
        return px.nn.softmax(px.nn.relu(x @ w + b))

    x, w, b = randn(5, 7), randn(7, 3), randn(3)
    want = dense(x, w, b).numpy()
    data = dense.graph_def(x, w, b)
    assert isinstance(data, bytes)
    concrete = dense.get_concrete_function(x, w, b)
    assert graph_nodes(concrete.graph_def()) == graph_nodes(data)
    assert concrete.inputs == ["arg0:0", "arg1:0", "arg2:0"]
    ops = graph_ops(data)
    assert ops.count("Placeholder") == 3
    for op in ("MatMul", "Relu", "Softmax"):
        assert op in ops
    # Placeholders carry the traced dtype and shape.
    imported = px.import_graph_def(data)
    shapes = {n["name"]: n["output_shapes"][0] for n in imported.nodes() if n["op"] == "Placeholder"}
    assert shapes == {"arg0": (5, 7), "arg1": (7, 3), "arg2": (3,)}
    assert imported.inputs == concrete.inputs
    assert imported.outputs == concrete.outputs
    np.testing.assert_allclose(imported(x, w, b).numpy(), want, rtol=1e-6)
    # And through a Session, TensorFlow 1 style, by tensor name.
    sess = px.Session(data)
    got = sess.run(concrete.outputs[0], {"arg0": x, "arg1": w, "arg2": b})
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_optimized_graph_def_shows_fusion():
    @px.function
    def layer(x, w, b):
        return px.nn.relu(px.nn.bias_add(px.matmul(x, w), b))

    x, w, b = randn(4, 8), randn(8, 3), randn(3)
    out = layer(x, w, b)
    np.testing.assert_allclose(out.numpy(), np.maximum(x.astype(np.float64) @ w + b, 0),
                               rtol=1e-5, atol=1e-5)
    concrete = layer.get_concrete_function(x, w, b)
    traced = graph_ops(concrete.graph_def())
    assert "MatMul" in traced and "BiasAdd" in traced and "Relu" in traced
    optimized = concrete.optimized_graph_def()
    assert optimized is not None
    ops = graph_ops(optimized)
    assert "_FusedMatMul" in ops
    assert "MatMul" not in ops and "BiasAdd" not in ops and "Relu" not in ops
    # The fused node keeps the name of the last node it replaces: fetches still work.
    assert ("Relu", "_FusedMatMul") in graph_nodes(optimized)
    # The optimized graph itself imports and runs.
    np.testing.assert_allclose(px.import_graph_def(optimized, outputs=["Relu"])(x, w, b).numpy(),
                               out.numpy(), rtol=1e-6)


def test_optimize_false_option():
    @px.function(optimize=False)
    def layer(x, w, b):
        return px.nn.relu(px.nn.bias_add(px.matmul(x, w), b))

    assert isinstance(layer, px.function)
    x, w, b = randn(4, 8), randn(8, 3), randn(3)
    out = layer(x, w, b)
    np.testing.assert_allclose(out.numpy(), np.maximum(x.astype(np.float64) @ w + b, 0),
                               rtol=1e-5, atol=1e-5)
    ops = graph_ops(layer.get_concrete_function(x, w, b).optimized_graph_def())
    assert "_FusedMatMul" not in ops
    assert "MatMul" in ops and "BiasAdd" in ops and "Relu" in ops
    assert layer.num_traces == 1


def test_captured_eager_tensors_become_constants():
    w = px.constant(randn(6, 2))
    b = px.constant(randn(2))
    w_value, b_value = w.numpy().copy(), b.numpy().copy()

    @px.function
    def affine(x):
        return x @ w + b

    x = randn(3, 6)
    np.testing.assert_allclose(affine(x).numpy(), x @ w_value + b_value, rtol=1e-5, atol=1e-6)
    nodes = graph_nodes(affine.graph_def(x))
    ops = [op for _, op in nodes]
    assert ops.count("Placeholder") == 1  # only the argument is an input
    assert ops.count("Const") >= 2
    # The constants hold the captured values.
    sess = px.Session(affine.graph_def(x))
    consts = [sess.run(name).numpy() for name, op in nodes if op == "Const"]
    assert any(c.shape == (6, 2) and np.array_equal(c, w_value) for c in consts)
    assert any(c.shape == (2,) and np.array_equal(c, b_value) for c in consts)
    # Captured by value: rebinding the Python names does not change the traced graph.
    w = px.constant(np.zeros((6, 2), np.float32))  # noqa: F841
    b = px.constant(np.zeros(2, np.float32))  # noqa: F841
    np.testing.assert_allclose(affine(x).numpy(), x @ w_value + b_value, rtol=1e-5, atol=1e-6)
    assert affine.num_traces == 1


def test_methods():
    class Dense:
        def __init__(self, w, b):
            self.w = px.constant(w)
            self.b = px.constant(b)

        @px.function
        def __call__(self, x):
            return px.nn.relu(x @ self.w + self.b)

        @px.function
        def scaled(self, x, factor):
            return px.nn.relu(x @ self.w + self.b) * factor

    w1, b1, w2, b2 = randn(4, 3), randn(3), randn(4, 3), randn(3)
    first, second = Dense(w1, b1), Dense(w2, b2)
    x = randn(5, 4)
    np.testing.assert_allclose(first(x).numpy(), np.maximum(x @ w1 + b1, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second(x).numpy(), np.maximum(x @ w2 + b2, 0), rtol=1e-5, atol=1e-6)
    # One trace per instance (self is part of the signature), reused afterwards.
    assert Dense.__call__.num_traces == 2
    np.testing.assert_allclose(first(randn(5, 4) * 0 + x).numpy(), np.maximum(x @ w1 + b1, 0),
                               rtol=1e-5, atol=1e-6)
    assert Dense.__call__.num_traces == 2
    np.testing.assert_allclose(first.scaled(x, 3.0).numpy(), 3 * np.maximum(x @ w1 + b1, 0),
                               rtol=1e-5, atol=1e-5)


# ---- errors while tracing -----------------------------------------------------------------------------


def test_shape_error_is_raised_while_tracing_and_names_the_op():
    reached = []

    @px.function
    def bad(x, y):
        z = x * 2.0
        reached.append("before")
        out = z @ y  # [2,3] @ [4,5]
        reached.append("after")
        return out

    with pytest.raises(errors.InvalidArgumentError) as e:
        bad(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))
    message = str(e.value)
    assert "MatMul" in message
    assert "[2,3]" in message and "[4,5]" in message
    assert isinstance(e.value, ValueError)
    # Raised from inside the Python function while tracing (not when running).
    assert reached == ["before"]
    assert bad.num_traces == 0
    # Compatible shapes still work afterwards.
    np.testing.assert_allclose(bad(np.ones((2, 3), np.float32), np.ones((3, 5), np.float32)).numpy(),
                               np.full((2, 5), 6.0))
    assert bad.num_traces == 1


def test_dtype_error_is_raised_while_tracing():
    @px.function
    def mixed(x, y):
        return px.add(x, y)

    with pytest.raises((errors.InvalidArgumentError, TypeError)) as e:
        mixed(np.ones((2, 2), np.float32), np.ones((2, 2), np.int32))
    assert "AddV2" in str(e.value)
    assert "int32" in str(e.value)
    assert mixed.num_traces == 0


def test_bool_of_symbolic_tensor_is_a_clear_error():
    @px.function
    def branchy(x):
        if px.reduce_sum(x) > 0:
            return x
        return -x

    with pytest.raises(TypeError) as e:
        branchy(np.ones(3, np.float32))
    message = str(e.value)
    assert "symbolic" in message
    assert "tracing" in message
    assert branchy.num_traces == 0

    @px.function
    def as_float(x):
        return float(x)

    with pytest.raises(TypeError, match="symbolic"):
        as_float(np.float32(1))

    # Eager tensors still convert.
    assert bool(px.constant(1.0) > 0) is True
    seen = []

    @px.function
    def inspect(x):
        seen.append((type(x).__name__, x.shape, x.dtype))
        return x + 1

    inspect(np.zeros((2, 3), np.float32))
    assert seen == [("GraphTensor", (2, 3), px.float32)]


def test_input_signature_gives_one_graph_for_every_call():
    import numpy as np
    calls = []

    def double(x):
        calls.append(1)
        return x * 2.0
    fn = px.function(double, input_signature=[px.TensorSpec([None, 3], px.float32)])
    for n in (1, 4, 7):
        np.testing.assert_array_equal(fn(np.ones((n, 3), np.float32)).numpy(), np.full((n, 3), 2.0, np.float32))
    assert fn.num_traces == 1 and len(calls) == 1
    with pytest.raises(ValueError, match="does not fit the input_signature"):
        fn(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="int32"):
        fn(px.constant(np.ones((2, 3), np.int32)))
    with pytest.raises(TypeError, match="structure"):
        fn(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
