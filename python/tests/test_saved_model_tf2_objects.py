"""SavedModels that TensorFlow writes at test time, with the TF2 object graph
at its richest: modules nested several levels deep, lists and dicts of
variables, a Keras optimizer with slot variables, several signatures (one
with two inputs and an integer output, one that trains and keeps state), all
loaded by plexus.saved_model.load and checked against TensorFlow's own run
of the same folder."""

import os

import numpy as np
import pytest

import plexus as px

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


def _module():
    tf.random.set_seed(1)

    class Inner(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.random.normal([3, 4]), name="w")
            self.layers = [tf.Variable(float(i)) for i in range(3)]
            self.table = {"a": tf.Variable([1.0, 2.0, 3.0, 4.0])}

    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.deep = tf.Module()
            self.deep.deeper = tf.Module()
            self.deep.deeper.b = tf.Variable(tf.ones([4]) * 0.5)
            self.opt = keras.optimizers.Adam(0.1)
            self.opt.build([self.inner.w])
            self.step = tf.Variable(0, dtype=tf.int64)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def predict(self, x):
            y = tf.matmul(x, self.inner.w) * self.inner.table["a"]
            return {"y": y + self.deep.deeper.b + self.inner.layers[2]}

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.float32, name="scale")])
        def scaled(self, x, scale):
            return {"y": tf.matmul(x, self.inner.w) * scale, "n": tf.shape(x)[0]}

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def train(self, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.matmul(x, self.inner.w) ** 2)
            grads = tape.gradient(loss, [self.inner.w])
            self.opt.apply_gradients(zip(grads, [self.inner.w]))
            self.step.assign_add(1)
            return {"loss": loss, "step": self.step}

    return Model()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    folder = str(tmp_path_factory.mktemp("tf2_objects") / "model")
    module = _module()
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    module.train(tf.constant(x))  # the optimizer's slots and step are saved non-zero
    tf.saved_model.save(module, folder, signatures={
        "serving_default": module.predict, "scaled": module.scaled, "train": module.train})
    return folder, x


def test_every_signature_matches_tensorflow(exported):
    folder, x = exported
    theirs = tf.saved_model.load(folder)
    ours = px.saved_model.load(folder)
    assert set(ours.signatures) == {"serving_default", "scaled", "train"}

    want = theirs.signatures["serving_default"](x=tf.constant(x))["y"].numpy()
    np.testing.assert_allclose(np.asarray(ours(x=x)["y"]), want, rtol=1e-6, atol=1e-6)

    want = theirs.signatures["scaled"](x=tf.constant(x), scale=tf.constant(2.0))
    got = ours.signatures["scaled"](x=x, scale=np.float32(2.0))
    np.testing.assert_allclose(np.asarray(got["y"]), want["y"].numpy(), rtol=1e-6, atol=1e-6)
    assert int(np.asarray(got["n"])) == int(want["n"].numpy()) == 2
    assert np.asarray(got["n"]).dtype == np.int32


def test_training_signature_restores_optimizer_slots_and_keeps_state(exported):
    """Adam's moments, its iteration count and the step restore from the
    checkpoint: two more training steps give TensorFlow's losses exactly
    (wrong slots would change the second step's update)."""
    folder, x = exported
    theirs = tf.saved_model.load(folder)
    ours = px.saved_model.load(folder)
    for expected_step in (2, 3):
        want = theirs.signatures["train"](x=tf.constant(x))
        got = ours.signatures["train"](x=x)
        np.testing.assert_allclose(np.asarray(got["loss"]), want["loss"].numpy(), rtol=1e-5)
        assert int(np.asarray(got["step"])) == int(want["step"].numpy()) == expected_step
