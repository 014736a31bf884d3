"""tf.function programs that use the host ops (tf.linalg's inverse,
determinants, Cholesky, QR, SVD, eigh, triangular and least-squares
solves; tf.roll, tf.searchsorted, tf.math.in_top_k, cumulative_logsumexp,
xlogy, erfinv, tf.dynamic_partition and dynamic_stitch, tf.strings.format,
strip and regex_full_match, tf.debugging.check_numerics, tf.add_n),
saved by TensorFlow with tf.saved_model.save at test time, loaded by
plexus.saved_model.load and run against TensorFlow's own run of the same
folder. Tolerances: 1e-4 relative to each result's scale for float32 linear
algebra (different factorization orders round differently), 1e-5 for
erfinv(tanh(x)) (steep near 1, where tanh rounds differently), 1e-6 for the
rest; integers, booleans and strings exactly."""

import os

import numpy as np
import pytest

import plexus as px

tf = pytest.importorskip("tensorflow")


class Programs(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4, 4], tf.float32, name="a"),
                                  tf.TensorSpec([None, 4, 2], tf.float32, name="b")])
    def linalg(self, a, b):
        # (tf.eye and the fast tf.linalg.lstsq, composed in Python from
        # Cholesky and tf.eye, need MatrixDiagV3, which another change adds.)
        spd = tf.matmul(a, a, transpose_b=True) + tf.constant(4.0 * np.eye(4, dtype=np.float32))
        chol = tf.linalg.cholesky(spd)
        sign, logdet = tf.linalg.slogdet(spd)
        q, r = tf.linalg.qr(a)
        s = tf.linalg.svd(a, compute_uv=False)
        e, v = tf.linalg.eigh(spd)
        return {
            "inv": tf.linalg.inv(spd),
            "det": tf.linalg.det(spd),
            "sign": sign,
            "logdet": logdet,
            "chol": chol,
            "solve": tf.linalg.triangular_solve(chol, b, lower=True),
            "lstsq": tf.linalg.lstsq(a, b, fast=False),
            "qr": tf.matmul(q, r),
            "r_abs": tf.abs(r),
            "s": s,
            "e": e,
            "recon": tf.matmul(v * e[:, None, :], v, transpose_b=True),
        }

    @tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.int32, name="labels")])
    def misc(self, x, labels):
        sorted_x = tf.sort(x, axis=-1)
        parts = tf.dynamic_partition(x, labels % 2, 2)
        rows = tf.range(tf.shape(x)[0])
        row_parts = tf.dynamic_partition(rows, labels % 2, 2)
        checked = tf.debugging.check_numerics(x, "x is bad")
        return {
            "roll": tf.roll(x, shift=[1, -2], axis=[0, 1]),
            "search": tf.searchsorted(sorted_x, x, side="right"),
            "topk": tf.math.in_top_k(labels % 5, x, 2),
            "cumlse": tf.math.cumulative_logsumexp(x, axis=1, reverse=True),
            "xlogy": tf.math.xlogy(tf.abs(x), tf.abs(x) + 1.0),
            "erfinv": tf.math.erfinv(tf.tanh(x)),
            "stitch": tf.dynamic_stitch(row_parts, parts),
            "addn": tf.add_n([x, checked, x * 2.0]),
            "text": tf.strings.format("x={} n={}", [x, tf.reduce_sum(labels)], summarize=2),
            "strip": tf.strings.strip(tf.strings.as_string(labels, width=4)),
            "match": tf.strings.regex_full_match(tf.strings.as_string(labels), "[0-4]"),
        }


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    folder = str(tmp_path_factory.mktemp("host_ops") / "model")
    module = Programs()
    tf.saved_model.save(module, folder, signatures={"linalg": module.linalg, "misc": module.misc})
    return folder


SCALES = {"inv": 1e-4, "det": 1e-4, "logdet": 1e-4, "chol": 1e-4, "solve": 1e-4, "lstsq": 1e-4, "qr": 1e-4,
          "r_abs": 1e-4, "s": 1e-4, "e": 1e-4, "recon": 1e-4,
          "erfinv": 1e-5}  # erfinv is steep near 1, where tanh rounds differently


def check(ours, theirs):
    assert set(ours) == set(theirs)
    for k, t in theirs.items():
        t = np.asarray(t.numpy())
        o = np.asarray(ours[k])
        assert o.shape == t.shape, k
        if t.dtype.kind in "fc":
            scale = max(1.0, float(np.max(np.abs(t)))) if t.size else 1.0
            np.testing.assert_allclose(o, t, rtol=0, atol=SCALES.get(k, 1e-6) * scale, err_msg=k)
        elif t.dtype.kind in "SOU":
            assert o.tolist() == t.tolist(), k
        else:
            np.testing.assert_array_equal(o, t, err_msg=k)


def test_linear_algebra_program_matches_tensorflow(exported):
    rng = np.random.RandomState(3)
    a = rng.randn(3, 4, 4).astype(np.float32)
    b = rng.randn(3, 4, 2).astype(np.float32)
    theirs = tf.saved_model.load(exported).signatures["linalg"](a=tf.constant(a), b=tf.constant(b))
    ours = px.saved_model.load(exported).signatures["linalg"](a=a, b=b)
    check(ours, theirs)


def test_misc_program_matches_tensorflow(exported):
    rng = np.random.RandomState(4)
    x = rng.randn(6, 5).astype(np.float32)
    labels = np.array([3, 0, 7, 2, 5, 4], np.int32)
    theirs = tf.saved_model.load(exported).signatures["misc"](x=tf.constant(x), labels=tf.constant(labels))
    ours = px.saved_model.load(exported).signatures["misc"](x=x, labels=labels)
    check(ours, theirs)


def test_check_numerics_fails_the_loaded_program(exported):
    x = np.ones((2, 5), np.float32)
    x[1, 3] = np.nan
    model = px.saved_model.load(exported)
    with pytest.raises(px.errors.InvalidArgumentError, match="x is bad : Tensor had NaN values"):
        np.asarray(model.signatures["misc"](x=x, labels=np.array([0, 1], np.int32))["addn"])
