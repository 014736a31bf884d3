"""DepthToSpace, SpaceToDepth, LRN and LRNGrad against TensorFlow, run in the
test (tf.raw_ops and tf.nn), and their gradients against TensorFlow's tape.

DepthToSpace and SpaceToDepth move elements: every dtype, exact. TensorFlow's
CPU kernels take NHWC only; NCHW is compared with TensorFlow's NHWC result
transposed. LRN sums squares in float like TensorFlow's CPU kernel, whose
band-matrix product may add in another order: 1e-5 relative for float
(depths under and over 384, where TensorFlow slides a running sum), 2e-3 for
half. LRNGrad repeats TensorFlow's loop: 1e-5. Bad arguments fail with
InvalidArgumentError naming the op.
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(5)
DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "uint16", "int32", "int64",
          "bool"]


def data(shape, dtype):
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    return RNG.uniform(-50, 50, shape).astype(dtype) if dtype.startswith("float") else \
        RNG.integers(0, 100, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block", [2, 3])
def test_depth_to_space_and_back(dtype, block):
    for shape in [(2, 3, 4, 2 * block * block), (1, 1, 1, block * block), (0, 2, 2, block * block)]:
        x = data(shape, dtype)
        want = tf.nn.depth_to_space(x, block).numpy()
        got = px.nn.depth_to_space(px.constant(x), block).numpy()
        np.testing.assert_array_equal(got, want)
        back = raw_ops.SpaceToDepth(px.constant(want), block_size=block).numpy()
        np.testing.assert_array_equal(back, tf.raw_ops.SpaceToDepth(input=want,
                                                                   block_size=block).numpy())
        np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
def test_nchw_is_nhwc_transposed(op):
    shape = (2, 4, 6, 8) if op == "DepthToSpace" else (2, 6, 4, 3)
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    want = getattr(tf.raw_ops, op)(input=x, block_size=2).numpy().transpose(0, 3, 1, 2)
    got = getattr(raw_ops, op)(px.constant(x.transpose(0, 3, 1, 2)), block_size=2,
                               data_format="NCHW").numpy()
    np.testing.assert_array_equal(got, want)


def test_depth_space_gradients_match_tensorflow():
    x = RNG.uniform(-1, 1, (2, 4, 6, 8)).astype(np.float32)
    w = RNG.uniform(-1, 1, (2, 8, 12, 2)).astype(np.float32)
    tx = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tx)
        loss = tf.reduce_sum(tf.nn.space_to_depth(tf.nn.depth_to_space(tx, 2) * w, 2) ** 2)
    want = tape.gradient(loss, tx).numpy()
    px_x = px.constant(x)
    with px.GradientTape() as ptape:
        ptape.watch(px_x)
        y = px.nn.space_to_depth(px.nn.depth_to_space(px_x, 2) * px.constant(w), 2)
        ploss = px.reduce_sum(y * y)
    np.testing.assert_allclose(ptape.gradient(ploss, px_x).numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("case,call,match", [
    ("depth 6, block 2", lambda: px.nn.depth_to_space(np.zeros((1, 2, 2, 6), np.float32), 2),
     "divisible"),
    ("width 5, block 2", lambda: px.nn.space_to_depth(np.zeros((1, 4, 5, 1), np.float32), 2),
     "divisible"),
    ("rank 3", lambda: px.nn.depth_to_space(np.zeros((2, 2, 4), np.float32), 2), "4-D"),
    ("block 1", lambda: px.nn.depth_to_space(np.zeros((1, 2, 2, 4), np.float32), 1), "block_size"),
    ("NCHW_VECT_C", lambda: px.nn.space_to_depth(np.zeros((1, 4, 4, 4), np.float32), 2,
                                                 data_format="NCHW_VECT_C"), "data_format"),
])
def test_depth_space_errors(case, call, match):
    with pytest.raises(errors.InvalidArgumentError, match=match) as info:
        call()
    assert "Depth" in str(info.value)


LRN_PARAMS = [
    dict(depth_radius=2, bias=1.0, alpha=0.5, beta=0.75),
    dict(depth_radius=5, bias=2.0, alpha=1e-2, beta=0.5),
    dict(depth_radius=0, bias=1.0, alpha=1.0, beta=1.0),
    dict(depth_radius=9, bias=1.5, alpha=1e-4, beta=0.6),
]


@pytest.mark.parametrize("params", LRN_PARAMS, ids=lambda p: f"r{p['depth_radius']}b{p['beta']}")
@pytest.mark.parametrize("depth", [3, 8, 400])
def test_lrn_matches_tensorflow(params, depth):
    x = RNG.uniform(-2, 2, (2, 3, 2, depth)).astype(np.float32)
    want = tf.nn.local_response_normalization(x, **params).numpy()
    got = px.nn.local_response_normalization(px.constant(x), **params).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    x16 = x.astype(np.float16)
    want16 = tf.raw_ops.LRN(input=x16, **params).numpy().astype(np.float32)
    got16 = raw_ops.LRN(px.constant(x16), **params).numpy().astype(np.float32)
    np.testing.assert_allclose(got16, want16, rtol=4e-3, atol=2e-3)


@pytest.mark.parametrize("params", LRN_PARAMS, ids=lambda p: f"r{p['depth_radius']}b{p['beta']}")
def test_lrn_grad_matches_tensorflow(params):
    x = RNG.uniform(-2, 2, (2, 3, 4, 7)).astype(np.float32)
    y = tf.nn.lrn(x, **params).numpy()
    g = RNG.uniform(-1, 1, x.shape).astype(np.float32)
    g[0, 0, 0, :3] = 0  # TensorFlow skips zero gradients
    want = tf.raw_ops.LRNGrad(input_grads=g, input_image=x, output_image=y, **params).numpy()
    got = raw_ops.LRNGrad(px.constant(g), px.constant(x), px.constant(y), **params).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lrn_gradient_through_the_tape():
    x = RNG.uniform(-2, 2, (1, 3, 3, 6)).astype(np.float32)
    w = RNG.uniform(-1, 1, x.shape).astype(np.float32)
    tx = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tx)
        loss = tf.reduce_sum(tf.nn.lrn(tx, 2, 1.0, 0.3, 0.75) * w)
    want = tape.gradient(loss, tx).numpy()
    px_x = px.constant(x)
    with px.GradientTape() as ptape:
        ptape.watch(px_x)
        ploss = px.reduce_sum(px.nn.lrn(px_x, 2, 1.0, 0.3, 0.75) * px.constant(w))
    np.testing.assert_allclose(ptape.gradient(ploss, px_x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_lrn_errors():
    with pytest.raises(errors.InvalidArgumentError, match="LRN"):
        px.nn.lrn(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="LRNGrad"):
        z = px.constant(np.zeros((1, 2, 2, 3), np.float32))
        raw_ops.LRNGrad(z, z, px.constant(np.zeros((1, 2, 2, 4), np.float32)))
