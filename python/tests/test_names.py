"""Every op has a public name (or is listed graph-only); the generated
functions have the op's signature and docstrings; list inputs and keyword
attributes work; wrong attributes are TypeErrors naming the op."""

import inspect

import numpy as np
import pytest

import plexus as px
from plexus import _names, _ops, _plexus


OP_DEFS = {d["name"]: d for d in _plexus.op_defs()}


def test_every_op_named_or_graph_only():
    missing = [op for op in OP_DEFS if op not in _names.NAMES and op not in _names.GRAPH_ONLY]
    assert not missing, f"ops with no public name (add them to plexus/_names.py): {missing}"
    both = set(_names.NAMES) & set(_names.GRAPH_ONLY)
    assert not both, f"ops both named and graph-only: {both}"
    for op, reason in _names.GRAPH_ONLY.items():
        assert reason.strip(), op


def test_names_refer_to_registered_ops_and_are_snake_case():
    unknown = [op for op in _names.NAMES if op not in OP_DEFS]
    assert not unknown, f"_names.py names ops the registry lacks: {unknown}"
    for op, names in _names.NAMES.items():
        assert names, op
        for q in names:
            ns, name = _names.split_name(q)
            assert ns in _names.NAMESPACES, q
            assert name.isidentifier() and name == name.lower(), q


def test_every_name_is_reachable():
    import importlib
    for op, names in _names.NAMES.items():
        for q in names:
            ns, name = _names.split_name(q)
            mod = px if not ns else importlib.import_module("plexus." + ns)
            assert callable(getattr(mod, name, None)), f"plexus.{q} ({op})"


def test_no_duplicate_names():
    seen = {}
    for op, names in _names.NAMES.items():
        for q in names:
            assert q not in seen, f"{q} names both {seen[q]} and {op}"
            seen[q] = op


def test_raw_ops_complete():
    for op in OP_DEFS:
        fn = getattr(px.raw_ops, op)
        assert fn.__name__ == op
        assert fn.__doc__ and op in fn.__doc__


def test_snake_case():
    assert _names.snake_case("BatchMatMulV2") == "batch_mat_mul_v2"
    assert _names.snake_case("Conv2D") == "conv2_d" or _names.snake_case("Conv2D") == "conv2d"
    assert _names.snake_case("VarHandleOp") == "var_handle_op"
    assert _names.snake_case("_FusedMatMul") == "fused_mat_mul"


@pytest.mark.parametrize("op", sorted(OP_DEFS))
def test_signature_matches_op_def(op):
    d = OP_DEFS[op]
    info = _ops.OP_INFO[op]
    sig = inspect.signature(getattr(px.raw_ops, op))
    params = list(sig.parameters.values())
    n_in = len(d["inputs"])
    assert [p.name.rstrip("_") for p in params[:n_in]] == [a["name"] for a in d["inputs"]]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params[:n_in])
    assert all(p.default is inspect.Parameter.empty for p in params[:n_in])
    rest = {p.name: p for p in params[n_in:]}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest.values())
    assert rest["name"].default is None
    for a in d["attrs"]:
        if a["name"] in info.hidden:
            assert a["name"] not in rest, (op, a["name"])
            continue
        p = rest[a["name"]]
        if a["has_default"]:
            want = tuple(a["default"]) if isinstance(a["default"], list) else a["default"]
            assert p.default == want, (op, a["name"])
        elif a["name"] in info.inferred:
            assert p.default is None
        else:
            assert p.default is inspect.Parameter.empty, (op, a["name"])
    doc = getattr(px.raw_ops, op).__doc__
    for a in d["inputs"]:
        assert a["name"] in doc
    for a in d["outputs"]:
        assert a["name"] in doc


def test_friendly_functions_have_docstrings():
    for ns, funcs in _ops.NAMESPACE_FUNCTIONS.items():
        for name, fn in funcs.items():
            assert fn.__doc__, f"plexus.{ns + '.' if ns else ''}{name}"


def test_keyword_attrs():
    a = px.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = px.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = px.raw_ops.MatMul(a, b, transpose_b=True)
    np.testing.assert_allclose(y.numpy(), a.numpy() @ b.numpy().T)
    y = px.raw_ops.MatMul(a=a, b=b, transpose_a=True)
    np.testing.assert_allclose(y.numpy(), a.numpy().T @ b.numpy())
    y = px.raw_ops.Sum(a, [1], keep_dims=True)
    np.testing.assert_allclose(y.numpy(), a.numpy().sum(1, keepdims=True))
    y = px.nn.leaky_relu(px.constant([-1.0, 2.0]), alpha=0.5)
    np.testing.assert_allclose(y.numpy(), [-0.5, 2.0])
    y = px.raw_ops.Cast(px.constant([1.5, -2.5]), DstT=px.int32)
    assert y.dtype == px.int32


def test_type_attr_for_python_values():
    y = px.raw_ops.AddV2(1, 2, T=px.float64)
    assert y.dtype == px.float64 and float(y) == 3.0


def test_list_inputs():
    a = px.constant([[1.0, 2.0]])
    b = px.constant([[3.0, 4.0]])
    np.testing.assert_allclose(px.raw_ops.ConcatV2([a, b], 0).numpy(), [[1, 2], [3, 4]])
    np.testing.assert_allclose(px.raw_ops.ConcatV2((a, b), axis=1).numpy(), [[1, 2, 3, 4]])
    np.testing.assert_allclose(px.concat([a, b], 1).numpy(), [[1, 2, 3, 4]])
    np.testing.assert_allclose(px.concat([a, b], axis=-2).numpy(), [[1, 2], [3, 4]])
    np.testing.assert_allclose(px.raw_ops.Pack([a, b], axis=1).numpy(), [[[1, 2], [3, 4]]])
    np.testing.assert_allclose(px.stack([a, b]).numpy(), [[[1, 2]], [[3, 4]]])
    np.testing.assert_allclose(px.add_n([a, b, a]).numpy(), [[5, 8]])
    np.testing.assert_allclose(px.math.add_n([a]).numpy(), [[1, 2]])
    shapes = px.raw_ops.ShapeN([a, px.constant([1.0, 2.0, 3.0])])
    assert isinstance(shapes, list) and len(shapes) == 2
    assert shapes[1].numpy().tolist() == [3]
    np.testing.assert_allclose(
        px.einsum("ij,kj->ik", a, b).numpy(), a.numpy() @ b.numpy().T)
    with pytest.raises(TypeError, match="ConcatV2.*values"):
        px.raw_ops.ConcatV2(a, 0)


def test_list_outputs_and_named_tuples():
    x = px.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    parts = px.raw_ops.Split(1, x, num_split=2)
    assert isinstance(parts, list) and len(parts) == 2
    np.testing.assert_allclose(parts[1].numpy(), x.numpy()[:, 2:])
    parts = px.split(x, [1, 3], axis=1)
    assert [p.shape for p in parts] == [(3, 1), (3, 3)]
    parts = px.split(x, 3)
    assert [p.shape for p in parts] == [(1, 4)] * 3
    rows = px.unstack(x)
    assert len(rows) == 3 and rows[2].numpy().tolist() == [8, 9, 10, 11]
    out = px.raw_ops.FusedBatchNormV3(
        px.constant(np.ones((1, 2, 2, 3), np.float32)), px.constant(np.ones(3, np.float32)),
        px.constant(np.zeros(3, np.float32)), px.constant(np.zeros(3, np.float32)),
        px.constant(np.ones(3, np.float32)), is_training=False)
    assert type(out).__name__ == "FusedBatchNormV3"
    assert out.y.shape == (1, 2, 2, 3) and out[0] is out.y


def test_wrong_attribute_is_type_error():
    a = px.constant([[1.0]])
    with pytest.raises(TypeError, match=r"MatMul.*transpose_c"):
        px.raw_ops.MatMul(a, a, transpose_c=True)
    with pytest.raises(TypeError, match=r"relu.*alpha"):
        px.nn.relu(a, alpha=0.1)
    with pytest.raises(TypeError, match=r"Conv2D.*strides"):
        px.raw_ops.Conv2D(a, a, padding="SAME")  # strides is required
    with pytest.raises(TypeError):
        px.raw_ops.MatMul(a)  # missing input


def test_friendly_signatures():
    x = px.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    xn = x.numpy()
    np.testing.assert_allclose(px.reduce_sum(x).numpy(), xn.sum())
    np.testing.assert_allclose(px.reduce_mean(x, axis=0).numpy(), xn.mean(0))
    np.testing.assert_allclose(px.reduce_max(x, [0, 1], keepdims=True).numpy(),
                               xn.max(keepdims=True))
    np.testing.assert_allclose(px.math.reduce_min(x, -1).numpy(), xn.min(-1))
    np.testing.assert_allclose(px.reduce_prod(x + 1.0, 1).numpy(), (xn + 1).prod(1))
    assert px.reduce_all(px.constant([True, False])).numpy() == False  # noqa: E712
    assert px.reduce_any(px.constant([True, False])).numpy() == True  # noqa: E712
    assert px.argmax(x).numpy().tolist() == [1, 1, 1]
    assert px.argmax(x, axis=1).dtype == px.int64
    assert px.argmin(x, 1, output_type=px.int32).dtype == px.int32
    np.testing.assert_allclose(px.transpose(x).numpy(), xn.T)
    np.testing.assert_allclose(px.transpose(x, perm=[1, 0]).numpy(), xn.T)
    assert px.reshape(x, [3, -1]).shape == (3, 2)
    assert px.reshape(px.constant([5.0]), []).shape == ()
    assert px.cast(x, px.int32).dtype == px.int32
    assert px.cast(x, "float64").dtype == px.float64
    assert px.expand_dims(x, 1).shape == (2, 1, 3)
    assert px.squeeze(px.zeros([1, 2, 1])).shape == (2,)
    assert px.squeeze(px.zeros([1, 2, 1]), axis=[0]).shape == (2, 1)
    assert px.zeros([2, 3], px.int32).numpy().tolist() == [[0] * 3] * 2
    assert px.ones(2).numpy().tolist() == [1.0, 1.0]
    assert px.fill([2], 7).numpy().tolist() == [7, 7]
    assert px.zeros_like(x).shape == (2, 3) and px.ones_like(x, dtype=px.int64).dtype == px.int64
    assert px.range(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert px.range(1, 7, 2).numpy().tolist() == [1, 3, 5]
    np.testing.assert_allclose(px.range(0.0, 1.0, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    assert px.range(3, dtype=px.int64).dtype == px.int64
    np.testing.assert_allclose(px.matmul(x, x, transpose_b=True).numpy(), xn @ xn.T)
    b3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(px.matmul(px.constant(b3), px.constant(b3), transpose_a=True)
                               .numpy(), np.swapaxes(b3, 1, 2) @ b3)
    np.testing.assert_allclose(px.linalg.matmul(x, px.constant(b3)).numpy(), xn @ b3)
    s = px.nn.softmax(x)
    np.testing.assert_allclose(s.numpy().sum(-1), [1, 1], rtol=1e-6)
    s0 = px.nn.softmax(x, axis=0)
    np.testing.assert_allclose(s0.numpy().sum(0), [1, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(px.nn.log_softmax(x, axis=0).numpy(),
                               np.log(s0.numpy()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        px.where(px.constant([True, False]), px.constant([1.0, 2.0]), 0.0).numpy(), [1, 0])
    np.testing.assert_allclose(px.pad(x, [[1, 0], [0, 1]]).numpy(), np.pad(xn, [[1, 0], [0, 1]]))
    np.testing.assert_allclose(px.pad(x, [[0, 0], [1, 1]], constant_values=9.0).numpy(),
                               np.pad(xn, [[0, 0], [1, 1]], constant_values=9))
    np.testing.assert_allclose(px.pad(x, [[0, 0], [2, 2]], mode="REFLECT").numpy(),
                               np.pad(xn, [[0, 0], [2, 2]], mode="reflect"))
    np.testing.assert_allclose(px.gather(x, [1, 0]).numpy(), xn[[1, 0]])
    np.testing.assert_allclose(px.gather(x, [2], axis=1).numpy(), xn[:, [2]])
    np.testing.assert_allclose(px.one_hot([0, 2], 3).numpy(), np.eye(3)[[0, 2]])
    np.testing.assert_allclose(px.clip_by_value(x, 1.0, 4.0).numpy(), np.clip(xn, 1, 4))
    np.testing.assert_allclose(px.divide(px.constant([3, 4]), 2).numpy(), [1.5, 2.0])
    assert px.divide(px.constant([3, 4]), 2).dtype == px.float64


def test_nn_wrappers():
    rng = np.random.default_rng(0)
    img = rng.standard_normal((1, 5, 5, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    y = px.nn.conv2d(img, w, strides=1, padding="SAME")
    assert y.shape == (1, 5, 5, 4)
    y2 = px.raw_ops.Conv2D(img, w, strides=[1, 1, 1, 1], padding="SAME")
    np.testing.assert_allclose(y.numpy(), y2.numpy())
    assert px.nn.conv2d(img, w, strides=[2, 2], padding="VALID").shape == (1, 2, 2, 4)
    yp = px.nn.conv2d(img, w, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])
    np.testing.assert_allclose(yp.numpy(), y.numpy(), rtol=1e-5, atol=1e-5)
    assert px.nn.max_pool2d(img, 2, 2, "VALID").shape == (1, 2, 2, 2)
    assert px.nn.avg_pool2d(img, [3, 3], [1, 1], "SAME").shape == (1, 5, 5, 2)
    np.testing.assert_allclose(px.nn.max_pool2d(img, 5, 1, "VALID").numpy().ravel(),
                               img.max(axis=(1, 2)).ravel())
    dw = rng.standard_normal((3, 3, 2, 1)).astype(np.float32)
    assert px.nn.depthwise_conv2d(img, dw, [1, 1, 1, 1], "SAME").shape == (1, 5, 5, 2)
    np.testing.assert_allclose(px.nn.relu(px.constant([-1.0, 2.0])).numpy(), [0, 2])
    np.testing.assert_allclose(px.nn.bias_add(img, px.constant([1.0, 2.0])).numpy(),
                               img + [1.0, 2.0])
    from math import erf, sqrt
    g = px.nn.gelu(px.constant([1.0])).numpy()[0]
    assert abs(g - 0.5 * (1 + erf(1 / sqrt(2)))) < 1e-5
    mean = px.constant([0.5, -0.5])
    var = px.constant([2.0, 3.0])
    y, m, v = px.nn.fused_batch_norm(img, px.ones([2]), px.zeros([2]), mean, var,
                                     epsilon=1e-3, is_training=False)
    np.testing.assert_allclose(y.numpy(), (img - mean.numpy()) / np.sqrt(var.numpy() + 1e-3),
                               rtol=1e-5, atol=1e-5)
    yb = px.nn.batch_normalization(img, mean, var, None, None, 1e-3)
    np.testing.assert_allclose(yb.numpy(), y.numpy(), rtol=1e-5, atol=1e-5)


def test_numpy_aliases_and_math():
    x = px.constant([1.0, 4.0])
    for name in ["exp", "sqrt", "abs", "log", "tanh", "floor", "ceil", "square", "sign"]:
        np.testing.assert_allclose(getattr(px, name)(x).numpy(), getattr(np, name)(x.numpy()),
                                   rtol=1e-6)
        assert getattr(px.math, name) is not None
    np.testing.assert_allclose(px.maximum(x, 2.0).numpy(), [2, 4])
    np.testing.assert_allclose(px.math.minimum(x, 2.0).numpy(), [1, 2])
    np.testing.assert_allclose(px.pow(x, 2.0).numpy(), [1, 16])
    np.testing.assert_allclose(px.math.erf(px.constant([0.0])).numpy(), [0.0])
    np.testing.assert_allclose(px.math.sigmoid(px.constant([0.0])).numpy(), [0.5])


def test_submodules_importable():
    import importlib
    for name in _ops.SUBMODULES:
        mod = importlib.import_module("plexus." + name)
        assert mod.__all__, name
        for f in mod.__all__:
            assert callable(getattr(mod, f))
    from plexus import nn, linalg  # noqa: F401
    import plexus.nn
    assert plexus.nn.relu is nn.relu


def test_friendly_functions_trace():
    if not hasattr(px, "function"):
        import pytest as _pytest
        _pytest.skip("plexus.function not available")

    @px.function
    def f(x):
        return (px.reduce_sum(x, axis=1), px.matmul(x, x, transpose_b=True),
                px.nn.softmax(x, axis=0), px.concat([x, x], 0), px.transpose(x),
                px.stack([x, x]), px.split(x, 3, axis=1)[0], px.unstack(x)[1], x.T, x.sum(),
                x.reshape(-1), px.zeros_like(x), px.cast(x, px.int32), px.argmax(x, 1),
                px.raw_ops.MatMul(x, x, transpose_a=True))

    xn = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = f(px.constant(xn))
    assert [t.shape for t in r] == [(2,), (2, 2), (2, 3), (4, 3), (3, 2), (2, 2, 3), (2, 1),
                                    (3,), (3, 2), (), (6,), (2, 3), (2, 3), (2,), (3, 3)]
    np.testing.assert_allclose(r[1].numpy(), xn @ xn.T)
    np.testing.assert_allclose(r[14].numpy(), xn.T @ xn)
