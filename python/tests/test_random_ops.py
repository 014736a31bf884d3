"""The random ops against TensorFlow run in the same test (tf.raw_ops and
tf.random.stateless_*, eager, CPU).

Plexus reproduces TensorFlow's Philox-4x32-10 streams: the seed scrambling
of the stateless ops (and StatelessRandomGetKeyCounter), the layout of a
stream over an output (a 128-bit block per group of 4 or 2 elements, 256
blocks reserved per output of a rejection sampler), and TensorFlow's
conversions and samplers. Tolerances:
  - uniform floats, integers, keys and counters: exact (bit for bit);
  - normal, truncated normal and gamma values use log, sqrt, sin/cos and
    pow of the C library: within 4 ulp of TensorFlow (relative 5e-7 for
    float32, 1e-15 for float64, one half/bfloat16 rounding step 2e-3/1.6e-2);
    with the same C library as TensorFlow (the usual case) they are exact,
    and the tests also count the exact matches;
  - the stateful ops (seed/seed2 attributes) follow TensorFlow's stream per
    kernel: run k of a node gives TensorFlow's run k of its kernel;
  - Keras 3 random layers saved in training mode: exact where the output is
    the draw moved around, within a float rounding step (1e-4 of a 0..255
    image) where the layer also averages or blurs.
Bad inputs fail with InvalidArgumentError naming the op and saying what is
wrong.
"""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops

RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 5e-7, "float64": 1e-15}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
SHAPES = [[0], [1], [3], [5], [7], [1001], [3, 4, 5], [2, 0, 3]]
SEEDS = [(0, 0), (1, 2), (-5, 123456789012), (2**31 - 1, -2**31), (-1, -1), (2**62, 7)]


def _np(t):
    """A Plexus or TensorFlow tensor as a NumPy array (bfloat16 as float32)."""
    if isinstance(t, tf.Tensor):
        if t.dtype == tf.bfloat16:
            t = tf.cast(t, tf.float32)
        return t.numpy()
    if t.dtype.name == "bfloat16":
        t = px.cast(t, px.float32)
    return np.asarray(t)


def _exact(got, want):
    got, want = _np(got), _np(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _close(got, want, dtype):
    got, want = _np(got), _np(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=RTOL[dtype],
                               atol=RTOL[dtype] * 1e-3)


def _seed(seed, dtype):
    return np.array(seed, dtype)


# ---- Seed-input ops ------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["StatelessRandomUniform", "StatelessRandomNormal",
                                "StatelessTruncatedNormal"])
def test_seed_float_ops_match_tensorflow(op, dtype, shape):
    for seed in SEEDS[1:4]:
        for seed_dtype in (np.int32, np.int64):
            if seed_dtype is np.int32 and abs(seed[1]) > 2**31:
                continue
            s = _seed(seed, seed_dtype)
            want = getattr(tf.raw_ops, op)(shape=np.array(shape, np.int32), seed=s, dtype=dtype)
            got = getattr(R, op)(np.array(shape, np.int32), s, dtype=px.as_dtype(dtype))
            assert got.dtype.name == dtype
            if op == "StatelessRandomUniform":
                _exact(got, want)
            else:
                _close(got, want, dtype)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("bounds", [(0, 10), (-7, 3), (-2**31, 2**31 - 1), (5, 6), (-100, 2**20 + 3)])
def test_seed_uniform_int_matches_tensorflow(dtype, bounds):
    lo, hi = (np.array(b, dtype) for b in bounds)
    for seed in SEEDS:
        for shape in ([1001], [3, 5], [0]):
            want = tf.raw_ops.StatelessRandomUniformInt(shape=shape, seed=_seed(seed, np.int64),
                                                        minval=lo, maxval=hi)
            got = R.StatelessRandomUniformInt(np.array(shape, np.int64), _seed(seed, np.int64), lo, hi)
            _exact(got, want)


def test_seed_uniform_int64_full_range():
    lo, hi = np.array(-2**63, np.int64), np.array(2**63 - 1, np.int64)
    want = tf.raw_ops.StatelessRandomUniformInt(shape=[99], seed=[3, 4], minval=lo, maxval=hi)
    _exact(R.StatelessRandomUniformInt(np.array([99], np.int32), np.array([3, 4], np.int32), lo, hi), want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_seed_uniform_full_int_matches_tensorflow(dtype):
    for seed in SEEDS:
        for shape in ([1], [7], [2, 9]):
            want = tf.raw_ops.StatelessRandomUniformFullInt(shape=shape, seed=_seed(seed, np.int64),
                                                            dtype=dtype)
            got = R.StatelessRandomUniformFullInt(np.array(shape, np.int32), _seed(seed, np.int64),
                                                  dtype=px.as_dtype(dtype))
            _exact(got, want)


# ---- Key/counter ops ------------------------------------------------------------

@pytest.mark.parametrize("seed_dtype", [np.int32, np.int64])
def test_get_key_counter_matches_tensorflow(seed_dtype):
    for seed in SEEDS:
        if seed_dtype is np.int32 and any(abs(v) > 2**31 for v in seed):
            continue
        s = _seed(seed, seed_dtype)
        key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=s)
        got_key, got_counter = R.StatelessRandomGetKeyCounter(s)
        _exact(got_key, key)
        _exact(got_counter, counter)
        k2, c2, alg = R.StatelessRandomGetKeyCounterAlg(s)
        _exact(k2, key)
        _exact(c2, counter)
        assert int(np.asarray(alg)) == 1
    assert int(np.asarray(R.StatelessRandomGetAlg())) == int(tf.raw_ops.StatelessRandomGetAlg())


# Keys and counters of the V2 ops: from seeds, and raw words whose counter
# carries between its 32-bit halves when a rejection sampler skips ahead.
KEY_COUNTERS = [
    (np.array([0x02461E293EC8F720], np.uint64), np.array([0, 0], np.uint64)),
    (np.array([12345], np.uint64), np.array([2**64 - 3, 2**32 - 1], np.uint64)),
    (np.array([2**64 - 1], np.uint64), np.array([2**32 - 100, 2**64 - 1], np.uint64)),
    (np.array([7], np.uint64), np.array([5, 9, 11], np.uint64)),  # a longer counter: first two words
]


@pytest.mark.parametrize("kc", range(len(KEY_COUNTERS)))
@pytest.mark.parametrize("alg", [1, 3])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["StatelessRandomUniformV2", "StatelessRandomNormalV2",
                                "StatelessTruncatedNormalV2"])
def test_key_counter_float_ops_match_tensorflow(op, dtype, alg, kc):
    key, counter = KEY_COUNTERS[kc]
    for shape in ([0], [1], [6], [1001], [4, 3, 2]):
        want = getattr(tf.raw_ops, op)(shape=shape, key=key, counter=counter, alg=alg, dtype=dtype)
        got = getattr(R, op)(np.array(shape, np.int64), key, counter, np.int32(alg),
                             dtype=px.as_dtype(dtype))
        if op == "StatelessRandomUniformV2":
            _exact(got, want)
        else:
            _close(got, want, dtype)


@pytest.mark.parametrize("kc", range(len(KEY_COUNTERS)))
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_key_counter_int_ops_match_tensorflow(dtype, kc):
    key, counter = KEY_COUNTERS[kc]
    for lo, hi in ((0, 2), (-50, 50), (-2**31, 2**31 - 1), (3, 1000003)):
        lo, hi = np.array(lo, dtype), np.array(hi, dtype)
        want = tf.raw_ops.StatelessRandomUniformIntV2(shape=[77], key=key, counter=counter, alg=3,
                                                      minval=lo, maxval=hi)
        got = R.StatelessRandomUniformIntV2(np.array([77], np.int32), key, counter, np.int32(3), lo, hi)
        _exact(got, want)
    for full in ("int32", "int64", "uint32", "uint64"):
        want = tf.raw_ops.StatelessRandomUniformFullIntV2(shape=[13], key=key, counter=counter, alg=1,
                                                          dtype=full)
        got = R.StatelessRandomUniformFullIntV2(np.array([13], np.int32), key, counter, np.int32(1),
                                                dtype=px.as_dtype(full))
        _exact(got, want)


# ---- Gamma ------------------------------------------------------------------------

ALPHAS = [[0.1, 0.5, 0.999, 1.0, 1.5, 7.0, 100.0], [[1.0, 0.3], [2.5, 1e-3]], 4.0]


@pytest.mark.parametrize("alpha", range(len(ALPHAS)))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_gamma_matches_tensorflow(dtype, alpha):
    a = np.array(ALPHAS[alpha], dtype)
    key, counter = KEY_COUNTERS[1]
    for samples in ([], [1], [40], [3, 5]):
        shape = np.array(samples + list(a.shape), np.int32)
        want = tf.raw_ops.StatelessRandomGammaV3(shape=shape, key=key, counter=counter, alg=3, alpha=a)
        got = R.StatelessRandomGammaV3(shape, key, counter, np.int32(3), a)
        _close(got, want, dtype)
        want = tf.raw_ops.StatelessRandomGammaV2(shape=shape, seed=[9, -4], alpha=a)
        got = R.StatelessRandomGammaV2(shape, np.array([9, -4], np.int64), a)
        _close(got, want, dtype)


def test_normal_and_gamma_are_exact_with_the_same_c_library():
    """Not only close: with the C library TensorFlow uses, the bits agree."""
    key, counter = KEY_COUNTERS[2]
    for dtype in ("float32", "float64"):
        for op in ("StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
            want = getattr(tf.raw_ops, op)(shape=[20000], key=key, counter=counter, alg=1, dtype=dtype)
            got = getattr(R, op)(np.array([20000], np.int32), key, counter, np.int32(1),
                                 dtype=px.as_dtype(dtype))
            exact = np.mean(_np(got) == _np(want))
            assert exact > 0.99, (op, dtype, exact)
        a = np.array([0.2, 1.0, 3.3], dtype)
        want = tf.raw_ops.StatelessRandomGammaV3(shape=[2000, 3], key=key, counter=counter, alg=1,
                                                 alpha=a)
        got = R.StatelessRandomGammaV3(np.array([2000, 3], np.int32), key, counter, np.int32(1), a)
        assert np.mean(_np(got) == _np(want)) > 0.99


# ---- Public names (tf.random.stateless_*) -------------------------------------------

@pytest.mark.parametrize("alg", ["auto_select", "philox", 1, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_stateless_uniform_normal_match_tensorflow(dtype, alg):
    for seed in ([1, 2], np.array([-3, 2**40], np.int64)):
        kw = dict(seed=seed, dtype=dtype, alg=alg)
        _exact(px.random.stateless_uniform([4, 9], **kw), tf.random.stateless_uniform([4, 9], **kw))
        _exact(px.random.stateless_uniform([5], minval=-2.5, maxval=4, **kw),
               tf.random.stateless_uniform([5], minval=-2.5, maxval=4, **kw))
        _close(px.random.stateless_normal([33], mean=1.5, stddev=3, **kw),
               tf.random.stateless_normal([33], mean=1.5, stddev=3, **kw), dtype)
        _close(px.random.stateless_truncated_normal([2, 17], mean=-1, stddev=0.5, **kw),
               tf.random.stateless_truncated_normal([2, 17], mean=-1, stddev=0.5, **kw), dtype)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_stateless_uniform_integers_match_tensorflow(dtype):
    _exact(px.random.stateless_uniform([50], seed=[7, 8], minval=None, dtype=dtype),
           tf.random.stateless_uniform([50], seed=[7, 8], minval=None, dtype=dtype))
    if dtype.startswith("int"):
        _exact(px.random.stateless_uniform([50], seed=[7, 8], minval=-4, maxval=9, dtype=dtype),
               tf.random.stateless_uniform([50], seed=[7, 8], minval=-4, maxval=9, dtype=dtype))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_stateless_gamma_matches_tensorflow(dtype):
    alpha, beta = [0.5, 1.0, 3.0], [[2.0], [0.25]]
    want = tf.random.stateless_gamma([10, 2, 3], seed=[1, 2], alpha=alpha, beta=beta, dtype=dtype)
    got = px.random.stateless_gamma([10, 2, 3], seed=[1, 2], alpha=alpha, beta=beta, dtype=dtype)
    _close(got, want, dtype)
    want = tf.random.stateless_gamma([7, 3], seed=[5, 6], alpha=alpha, dtype=dtype)
    _close(px.random.stateless_gamma([7, 3], seed=[5, 6], alpha=alpha, dtype=dtype), want, dtype)


def test_stateless_uniform_traces():
    @px.function
    def draw(seed):
        return px.random.stateless_uniform([3, 4], seed=seed, minval=1, maxval=2)

    seed = np.array([11, 12], np.int64)
    _exact(draw(seed), tf.random.stateless_uniform([3, 4], seed=seed, minval=1, maxval=2))


def test_stateless_uniform_argument_errors():
    with pytest.raises(ValueError, match="must be both None or not None"):
        px.random.stateless_uniform([2], seed=[1, 2], minval=1, maxval=None, dtype="int32")
    with pytest.raises(ValueError, match="unsigned"):
        px.random.stateless_uniform([2], seed=[1, 2], minval=1, maxval=5, dtype="uint32")
    with pytest.raises(ValueError, match="dtype"):
        px.random.stateless_uniform([2], seed=[1, 2], dtype="int8")
    with pytest.raises(ValueError, match="alg"):
        px.random.stateless_uniform([2], seed=[1, 2], alg="mersenne")


def test_gradients_flow_around_the_draws():
    """The random ops are not differentiable (as in TensorFlow): gradients
    reach the variables through the arithmetic around the draws."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v, tv = px.Variable(x), tf.Variable(x)
    m, tm = px.Variable(np.float32(0.5)), tf.Variable(0.5)
    with px.GradientTape() as tape:
        y = px.reduce_sum(v * px.random.stateless_normal([2, 3], seed=[1, 2], mean=m, stddev=m)
                          + px.random.stateless_uniform([2, 3], seed=[3, 4]))
    got = tape.gradient(y, [v, m])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tv * tf.random.stateless_normal([2, 3], seed=[1, 2], mean=tm, stddev=tm)
                          + tf.random.stateless_uniform([2, 3], seed=[3, 4]))
    want = tape.gradient(y, [tv, tm])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6)


# ---- Stateful ops (seed and seed2 attributes) ------------------------------------------

@pytest.mark.parametrize("op", ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"])
def test_stateful_runs_follow_tensorflow(op):
    """Two eager calls of one op and attributes continue one stream in both
    (TensorFlow's eager kernel cache); other seeds start their own."""
    for seeds in ((1, 2), (987654321, 5)):
        for dtype in ("float32", "float64"):
            kw = dict(dtype=dtype, seed=seeds[0], seed2=seeds[1])
            want = [getattr(tf.raw_ops, op)(shape=[7], **kw) for _ in range(3)]
            got = [getattr(R, op)(np.array([7], np.int32), dtype=px.as_dtype(dtype), seed=seeds[0],
                                  seed2=seeds[1]) for _ in range(3)]
            for g, w in zip(got, want):
                _close(g, w, dtype)


def test_stateful_uniform_int_and_graph_runs():
    want = [tf.raw_ops.RandomUniformInt(shape=[9], minval=-3, maxval=40, seed=4, seed2=8)
            for _ in range(2)]
    got = [R.RandomUniformInt(np.array([9], np.int32), np.int32(-3), np.int32(40), seed=4, seed2=8)
           for _ in range(2)]
    for g, w in zip(got, want):
        _exact(g, w)

    @tf.function
    def tf_draw():
        return tf.raw_ops.RandomUniform(shape=[5], dtype=tf.float32, seed=21, seed2=22)

    @px.function
    def px_draw(x):
        return R.RandomUniform(px.shape(x), dtype=px.float32, seed=21, seed2=22)

    x = np.zeros([5], np.float32)
    for _ in range(3):
        _exact(px_draw(x), tf_draw())


def test_unseeded_stateful_op_differs_between_streams():
    a = np.asarray(R.RandomUniform(np.array([64], np.int32), dtype=px.float32))
    b = np.asarray(R.RandomUniform(np.array([64], np.int32), dtype=px.float32))
    assert a.shape == (64,) and ((a >= 0) & (a < 1)).all()
    assert not np.array_equal(a, b)


# ---- Keras random layers in training mode -----------------------------------------------

# Layers whose output is their random draw moved around (exact), and layers
# that also average or blur in float (a rounding step of a 0..255 image).
KERAS_EXACT = {
    "RandomFlip": lambda k: k.layers.RandomFlip(seed=1),
    "RandomBrightness": lambda k: k.layers.RandomBrightness(0.3, seed=2),
    "RandomCrop": lambda k: k.layers.RandomCrop(5, 6, seed=4),
    "RandomErasing": lambda k: k.layers.RandomErasing(seed=6),
    "MixUp": lambda k: k.layers.MixUp(seed=5),  # Beta draws: StatelessRandomGammaV3
    "CutMix": lambda k: k.layers.CutMix(seed=7),
    "Solarization": lambda k: k.layers.Solarization(addition_factor=0.5, threshold_factor=0.5, seed=8),
    "RandomGrayscale": lambda k: k.layers.RandomGrayscale(0.5, seed=9),
    "GaussianNoise": lambda k: k.layers.GaussianNoise(0.5, seed=15),
    "Dropout": lambda k: k.layers.Dropout(0.5, seed=16),
}
KERAS_CLOSE = {
    "RandomContrast": lambda k: k.layers.RandomContrast(0.4, seed=3),
    "RandomGaussianBlur": lambda k: k.layers.RandomGaussianBlur(0.5, value_range=(0, 255), seed=13),
}


@pytest.mark.parametrize("name", sorted(KERAS_EXACT) + sorted(KERAS_CLOSE))
def test_keras_random_layers_in_training_mode_match_tensorflow(name, tmp_path):
    """The zoo runs these layers in inference mode (where they pass their
    input through); here they draw: a SavedModel of layer(x, training=True),
    run twice (the seed generator's state advances between runs) by
    TensorFlow and by Plexus."""
    keras = pytest.importorskip("keras")
    x = np.random.RandomState(0).uniform(0, 255, (2, 8, 8, 3)).astype(np.float32)
    layer = {**KERAS_EXACT, **KERAS_CLOSE}[name](keras)
    layer(tf.constant(x), training=True)  # builds it and its seed generator
    holder = tf.Module()
    holder.layer = layer
    holder.variables_list = list(layer.variables)  # the seed generator's state
    holder.f = tf.function(lambda images: layer(images, training=True),
                           input_signature=[tf.TensorSpec(x.shape, tf.float32)])
    tf.saved_model.save(holder, str(tmp_path), signatures={"serving_default": holder.f})
    theirs = tf.saved_model.load(str(tmp_path)).signatures["serving_default"]
    ours = px.saved_model.load(str(tmp_path))
    for _ in range(2):
        want = list(theirs(images=tf.constant(x)).values())[0].numpy()
        got = np.asarray(list(ours(images=x).values())[0])
        if name in KERAS_EXACT:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-4)


# ---- Errors ----------------------------------------------------------------------------

KEY, COUNTER = KEY_COUNTERS[1]
SHAPE = np.array([3], np.int32)


@pytest.mark.parametrize("call,message", [
    (lambda: R.StatelessRandomUniform(SHAPE, np.array([1, 2, 3], np.int64)),
     r"StatelessRandomUniform.*seed must have shape \[2\], not \[3\]"),
    (lambda: R.StatelessRandomNormal(SHAPE, np.array([[1, 2]], np.int32)),
     r"StatelessRandomNormal.*seed must have shape \[2\], not \[1,2\]"),
    (lambda: R.StatelessRandomUniform(np.array([2, -1], np.int32), np.array([1, 2], np.int64)),
     r"StatelessRandomUniform.*Dimension -1 must be >= 0"),
    (lambda: R.StatelessRandomUniform(np.int32(3), np.array([1, 2], np.int64)),
     r"StatelessRandomUniform.*shape must be a vector of \{int32,int64\}, got shape \[\]"),
    (lambda: R.StatelessRandomUniformInt(SHAPE, np.array([1, 2], np.int64), np.int32(5), np.int32(5)),
     r"StatelessRandomUniformInt.*Need minval < maxval, got 5 >= 5"),
    (lambda: R.StatelessRandomUniformIntV2(SHAPE, KEY, COUNTER, np.int32(1), np.array([1], np.int64),
                                           np.int64(5)),
     r"StatelessRandomUniformIntV2.*minval must be 0-D, got shape \[1\]"),
    (lambda: R.StatelessRandomUniformFullInt(SHAPE, np.array([1, 2], np.uint32), dtype=px.uint32),
     r"StatelessRandomUniformFullInt.*Invalid seed type: uint32"),
    (lambda: R.StatelessRandomGetKeyCounter(np.array([1, 2, 3], np.int64)),
     r"StatelessRandomGetKeyCounter.*seed must have shape \[2\], not \[3\]"),
    (lambda: R.StatelessRandomUniformV2(SHAPE, np.array([1, 2], np.uint64), COUNTER, np.int32(1)),
     r"StatelessRandomUniformV2.*key must have shape \[1\], not \[2\]"),
    (lambda: R.StatelessRandomNormalV2(SHAPE, KEY, np.array([1], np.uint64), np.int32(1)),
     r"StatelessRandomNormalV2.*counter must be a vector with length at least 2; got shape: \[1\]"),
    (lambda: R.StatelessRandomUniformV2(SHAPE, KEY, COUNTER, np.int32(2)),
     r"StatelessRandomUniformV2.*Unsupported algorithm id: 2 \(ThreeFry"),
    (lambda: R.StatelessTruncatedNormalV2(SHAPE, KEY, COUNTER, np.int32(0)),
     r"StatelessTruncatedNormalV2.*Unsupported algorithm id: 0"),
    (lambda: R.StatelessRandomUniformV2(SHAPE, KEY, COUNTER, np.array([1], np.int32)),
     r"StatelessRandomUniformV2.*input 3 \(0-based\) must have shape \[\], not \[1\]"),
    (lambda: R.StatelessRandomGammaV3(np.array([3, 2], np.int32), KEY, COUNTER, np.int32(1),
                                      np.array([1.0, 2.0, 3.0], np.float32)),
     r"StatelessRandomGammaV3.*Shape passed in must end with broadcasted shape"),
    (lambda: R.StatelessRandomGammaV2(np.array([3], np.int32), np.array([1, 2], np.int64),
                                      np.zeros([0], np.float32)),
     r"StatelessRandomGammaV2.*Shape passed in must end with broadcasted shape"),
    (lambda: R.RandomUniformInt(SHAPE, np.int32(3), np.int32(3), seed=1, seed2=2),
     r"RandomUniformInt.*Need minval < maxval, got 3 >= 3"),
    (lambda: R.RandomUniform(np.array([-3], np.int32), dtype=px.float32, seed=1),
     r"RandomUniform.*Dimension -3 must be >= 0"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_input_names_the_op(call, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        call()


def test_empty_outputs_skip_the_distribution_checks():
    """As in TensorFlow: an empty output is made before minval/maxval, alpha
    and the algorithm are looked at."""
    empty = np.array([0], np.int32)
    assert _np(R.StatelessRandomUniformV2(empty, KEY, COUNTER, np.int32(2))).shape == (0,)
    assert _np(R.StatelessRandomUniformInt(empty, np.array([1, 2], np.int64), np.int32(5),
                                           np.int32(5))).shape == (0,)
    assert _np(R.StatelessRandomGammaV3(np.array([3, 0], np.int32), KEY, COUNTER, np.int32(1),
                                        np.zeros([0], np.float32))).shape == (3, 0)
    assert _np(R.RandomUniformInt(empty, np.int32(3), np.int32(3), seed=1, seed2=2)).shape == (0,)
