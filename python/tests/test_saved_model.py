"""Every SavedModel of tests/data/tf_graphs through plexus.saved_model.load:
signatures (keys, dtypes, shapes), outputs against the MANIFEST's expected
values, state across calls, training, and errors."""

import os
import pathlib

import numpy as np
import pytest

import plexus as px
from plexus import errors


def _data_dir() -> pathlib.Path:
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"


DATA = _data_dir() / "tf_graphs"
HALF_TF1 = DATA / "half_plus_two_tf1" / "00000123"
HALF_TF2 = DATA / "half_plus_two_tf2" / "00000123"
COUNTER = DATA / "counter_tf1" / "00000123"
TRAIN = DATA / "regression_tf2_train"

# Serialized tf.Example protos from the MANIFEST (feature x = 0, 1, 2, 3).
EXAMPLES_X0123 = [bytes.fromhex(h) for h in (
    "0a0f0a0d0a0178120812060a0400000000",
    "0a0f0a0d0a0178120812060a040000803f",
    "0a0f0a0d0a0178120812060a0400000040",
    "0a0f0a0d0a0178120812060a0400004040",
)]
# x = 1 and x2 = 4: y = 2.5, y2 = 3.5, y3 = 5.
EXAMPLE_X1_X2_4 = bytes.fromhex("0a1f0a0d0a0178120812060a040000803f0a0e0a027832120812060a0400008040")


def strings(values):
    """A string tensor's value as an object array (bytes kept as they are)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def only(result: dict):
    assert isinstance(result, dict) and len(result) == 1
    return next(iter(result.values()))


def sig_summary(model):
    return {key: ({k: (v["dtype"], v["shape"]) for k, v in s.inputs.items()},
                  {k: (v["dtype"], v["shape"]) for k, v in s.outputs.items()})
            for key, s in model.signatures.items()}


# ---- half_plus_two (TensorFlow 1) --------------------------------------------------------------


@pytest.fixture(scope="module")
def half_tf1():
    return px.saved_model.load(HALF_TF1)


def test_half_plus_two_tf1_signatures(half_tf1):
    assert half_tf1.tensorflow_version == "1.14.0"
    assert half_tf1.device == "CPU:0"
    f32, s = px.float32, px.string
    assert sig_summary(half_tf1) == {
        "serving_default": ({"x": (f32, (None, 1))}, {"y": (f32, (None, 1))}),
        "regress_x_to_y": ({"inputs": (s, None)}, {"outputs": (f32, (None, 1))}),
        "regress_x_to_y2": ({"inputs": (s, None)}, {"outputs": (f32, (None, 1))}),
        "regress_x2_to_y3": ({"inputs": (f32, (None, 1))}, {"outputs": (f32, (None, 1))}),
        "classify_x_to_y": ({"inputs": (s, None)}, {"scores": (f32, (None, 1))}),
    }
    sigs = half_tf1.signatures
    assert sigs["serving_default"].inputs["x"]["name"] == "x:0"
    assert sigs["serving_default"].outputs["y"]["name"] == "y:0"
    assert sigs["regress_x_to_y"].inputs["inputs"]["name"] == "tf_example:0"
    assert sigs["regress_x2_to_y3"].inputs["inputs"]["name"] == "x2:0"
    assert sigs["serving_default"].method_name == "tensorflow/serving/predict"
    assert sigs["regress_x_to_y"].method_name == "tensorflow/serving/regress"
    assert sigs["classify_x_to_y"].method_name == "tensorflow/serving/classify"
    assert "serving_default" in repr(half_tf1)
    assert "x: float32" in repr(sigs["serving_default"])


def test_half_plus_two_tf1_predict(half_tf1):
    x = np.array([[1], [2], [5]], np.float32)
    # x:0 is an Identity, not a Placeholder: the feed overrides it.
    out = half_tf1.signatures["serving_default"](x=x)
    assert list(out) == ["y"]
    assert out["y"].shape == (3, 1)
    np.testing.assert_array_equal(out["y"].numpy(), [[2.5], [3.0], [4.5]])  # exact
    # Calling the model calls serving_default; one input may be positional.
    np.testing.assert_array_equal(half_tf1(x=x)["y"].numpy(), out["y"].numpy())
    np.testing.assert_array_equal(half_tf1(x)["y"].numpy(), out["y"].numpy())
    np.testing.assert_array_equal(half_tf1(px.constant(x))["y"].numpy(), out["y"].numpy())


def test_half_plus_two_tf1_parse_example(half_tf1):
    sigs = half_tf1.signatures
    examples = strings(EXAMPLES_X0123)
    y = only(sigs["regress_x_to_y"](inputs=examples))
    np.testing.assert_array_equal(y.numpy(), [[2], [2.5], [3], [3.5]])  # exact, TF's C API test
    np.testing.assert_array_equal(only(sigs["classify_x_to_y"](inputs=examples)).numpy(),
                                  [[2], [2.5], [3], [3.5]])
    np.testing.assert_array_equal(only(sigs["regress_x_to_y2"](inputs=examples)).numpy(),
                                  [[3], [3.5], [4], [4.5]])
    both = strings([EXAMPLE_X1_X2_4])
    np.testing.assert_array_equal(only(sigs["regress_x_to_y"](inputs=both)).numpy(), [[2.5]])
    np.testing.assert_array_equal(only(sigs["regress_x_to_y2"](inputs=both)).numpy(), [[3.5]])
    np.testing.assert_array_equal(
        only(sigs["regress_x2_to_y3"](inputs=np.array([[4], [0]], np.float32))).numpy(), [[5], [3]])


def test_string_inputs_from_a_python_list_keep_trailing_nul_bytes(half_tf1):
    y = only(half_tf1.signatures["regress_x_to_y"](inputs=EXAMPLES_X0123))
    np.testing.assert_array_equal(y.numpy(), [[2], [2.5], [3], [3.5]])


# ---- half_plus_two (TensorFlow 2) --------------------------------------------------------------


@pytest.fixture(scope="module")
def half_tf2():
    return px.saved_model.load(HALF_TF2)


def test_half_plus_two_tf2_signatures(half_tf2):
    assert half_tf2.tensorflow_version == "2.14.0"
    f32, s = px.float32, px.string
    assert sig_summary(half_tf2) == {
        "serving_default": ({"x": (f32, (1,))}, {"y": (f32, (1,))}),
        "regress_x_to_y": ({"inputs": (s, (None,))}, {"outputs": (f32, (None, 1))}),
        "regress_x_to_y2": ({"inputs": (s, (None,))}, {"outputs": (f32, (None, 1))}),
        "classify_x_to_y": ({"inputs": (s, (None,))}, {"scores": (f32, (None, 1))}),
        "regress_x2_to_y3": ({"inputs": (f32, (1,))}, {"outputs": (f32, (1,))}),
        "classify_x2_to_y3": ({"inputs": (f32, (1,))}, {"scores": (f32, (1,))}),
    }
    sigs = half_tf2.signatures
    assert sigs["serving_default"].inputs["x"]["name"] == "serving_default_x:0"
    assert sigs["serving_default"].outputs["y"]["name"] == "StatefulPartitionedCall_5:0"
    assert all(sig.method_name == "tensorflow/serving/predict" for sig in sigs.values())


def test_half_plus_two_tf2_every_signature(half_tf2):
    sigs = half_tf2.signatures
    y = half_tf2(x=np.array([3.0], np.float32))
    assert list(y) == ["y"]
    np.testing.assert_array_equal(y["y"].numpy(), [3.5])  # exact
    for key in ("regress_x2_to_y3", "classify_x2_to_y3"):
        np.testing.assert_array_equal(only(sigs[key](inputs=np.array([4.0], np.float32))).numpy(), [5.0])
    examples = strings(EXAMPLES_X0123)
    for key, want in [("regress_x_to_y", [[2], [2.5], [3], [3.5]]),
                      ("classify_x_to_y", [[2], [2.5], [3], [3.5]]),
                      ("regress_x_to_y2", [[3], [3.5], [4], [4.5]])]:
        got = only(sigs[key](examples))
        assert got.shape == (4, 1), key
        np.testing.assert_array_equal(got.numpy(), want, err_msg=key)
    np.testing.assert_array_equal(only(sigs["regress_x_to_y2"](strings([EXAMPLE_X1_X2_4]))).numpy(),
                                  [[3.5]])


# ---- counter (stateful TensorFlow 1) -----------------------------------------------------------


def test_counter_signatures():
    model = px.saved_model.load(str(COUNTER))
    assert model.tensorflow_version == "1.5.0-rc1"
    summary = sig_summary(model)
    assert summary == {
        # The SignatureDefs say DT_FLOAT_REF; a fetch yields the value, float32.
        "get_counter": ({}, {"output": (px.float32, ())}),
        "incr_counter": ({}, {"output": (px.float32, ())}),
        "incr_counter_by": ({"delta": (px.float32, None)}, {"output": (px.float32, ())}),
        "reset_counter": ({}, {"output": (px.float32, ())}),
    }
    assert model.signatures["incr_counter"].outputs["output"]["name"] == "incr_counter_op/AssignAdd:0"


def test_counter_keeps_state_across_calls():
    model = px.saved_model.load(COUNTER)
    s = model.signatures
    steps = [(s["get_counter"], {}, 0), (s["incr_counter"], {}, 1), (s["incr_counter"], {}, 2),
             (s["incr_counter_by"], {"delta": np.float32(3)}, 5), (s["get_counter"], {}, 5),
             (s["reset_counter"], {}, 0), (s["get_counter"], {}, 0)]
    for sig, inputs, want in steps:
        out = sig(**inputs)
        assert list(out) == ["output"]
        assert out["output"].dtype == px.float32
        assert out["output"].shape == ()
        assert out["output"].numpy() == want, sig.key  # exact
    s["incr_counter_by"](delta=np.float32(2.5))
    assert s["get_counter"]()["output"].numpy() == 2.5
    # A Python float converts to the signature's float32.
    assert s["incr_counter_by"](delta=0.5)["output"].numpy() == 3.0
    # A second load restores the checkpoint: its own state, starting at 0.
    other = px.saved_model.load(COUNTER)
    assert other.signatures["get_counter"]()["output"].numpy() == 0
    assert other.signatures["incr_counter"]()["output"].numpy() == 1
    assert s["get_counter"]()["output"].numpy() == 3.0
    with pytest.raises(KeyError, match="serving_default"):
        model()


# ---- regression with a train step (TensorFlow 2) -----------------------------------------------


def test_regression_tf2_train_signatures():
    model = px.saved_model.load(TRAIN)
    assert model.tensorflow_version == "2.5.0"
    assert sig_summary(model) == {
        "train": ({"x": (px.float32, (None,)), "y": (px.float32, (None,))}, {"loss": (px.float32, ())}),
        "w": ({}, {"output": (px.float32, (1,))}),
        "b": ({}, {"output": (px.float32, (1,))}),
    }
    # The inference signatures read the restored checkpoint (exact values).
    np.testing.assert_array_equal(model.signatures["w"]()["output"].numpy(),
                                  np.frombuffer(bytes.fromhex("6033513e"), np.float32))
    np.testing.assert_allclose(model.signatures["w"]()["output"].numpy(), [0.204297543], rtol=1e-7)
    np.testing.assert_array_equal(model.signatures["b"]()["output"].numpy(), [0.0])


def test_regression_tf2_train_steps():
    model = px.saved_model.load(TRAIN)
    s = model.signatures
    x = np.array([1, 2, 3], np.float32)
    y = np.array([3, 5, 7], np.float32)
    # float32 arithmetic: within 1e-5 relative of the reference math (MANIFEST).
    for loss, w, b in [(23.2306976, 10.5842419, 4.59140491), (480.099121, -36.6583633, -16.1684837)]:
        out = s["train"](x=x, y=y)
        assert list(out) == ["loss"] and out["loss"].shape == ()
        np.testing.assert_allclose(out["loss"].numpy(), loss, rtol=1e-5)
        np.testing.assert_allclose(s["w"]()["output"].numpy(), [w], rtol=1e-5)
        np.testing.assert_allclose(s["b"]()["output"].numpy(), [b], rtol=1e-5)
    # A fresh load starts again from the checkpoint.
    fresh = px.saved_model.load(TRAIN)
    np.testing.assert_allclose(fresh.signatures["w"]()["output"].numpy(), [0.204297543], rtol=1e-7)
    np.testing.assert_allclose(fresh.signatures["train"](x=x, y=y)["loss"].numpy(), 23.2306976, rtol=1e-5)


# ---- errors -----------------------------------------------------------------------------------


def test_missing_directory_is_not_found(tmp_path):
    missing = tmp_path / "no_model_here"
    with pytest.raises(errors.NotFoundError) as e:
        px.saved_model.load(missing)
    assert str(missing) in str(e.value)
    # A directory without saved_model.pb too.
    with pytest.raises(errors.NotFoundError, match="kws_cnn"):
        px.saved_model.load(DATA / "kws_cnn")


def test_unknown_tags_are_not_found():
    with pytest.raises(errors.NotFoundError, match="gpu"):
        px.saved_model.load(HALF_TF2, tags=["gpu"])


def test_wrong_input_key_names_signature_and_key(half_tf1):
    with pytest.raises(errors.InvalidArgumentError) as e:
        half_tf1.signatures["serving_default"](z=np.ones((1, 1), np.float32))
    assert "serving_default" in str(e.value)
    assert "'z'" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError, match="serving_default.*'x'"):
        half_tf1.signatures["serving_default"]()
    with pytest.raises(errors.InvalidArgumentError, match="'serving_default'.*'x'.*int32"):
        half_tf1.signatures["serving_default"](x=np.ones((1, 1), np.int32))
    with pytest.raises(TypeError, match="by key"):
        half_tf1.signatures["serving_default"](np.ones((1, 1), np.float32), np.ones((1, 1), np.float32))
    train = px.saved_model.load(TRAIN)
    with pytest.raises(errors.InvalidArgumentError, match="'train'.*'y'"):
        train.signatures["train"](x=np.ones(3, np.float32))
    with pytest.raises(KeyError):
        half_tf1.signatures["no_such_signature"]
    # The model still works.
    assert half_tf1(x=np.ones((1, 1), np.float32))["y"].numpy() == 2.5


def test_keras3_saved_model_restores_through_the_object_graph():
    """A Keras 3 model from tf.saved_model.save: nested checkpoint keys, and a
    restore op that writes other handles than the signature reads
    (tests/tf_zoo/make_keras3_savedmodel.py). Matches TensorFlow's output."""
    base = DATA / "keras3_saved_model"
    model = px.saved_model.load(base / "saved_model")
    image = np.load(base / "image.npy")
    got = model.signatures["serving_default"](inputs=image)
    out = got["output_0"] if isinstance(got, dict) else got
    np.testing.assert_allclose(out.numpy(), np.load(base / "expected.npy"), rtol=0, atol=1e-5)
