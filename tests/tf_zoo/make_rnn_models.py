"""Writes the Keras RNN test data: small LSTM, GRU, SimpleRNN and
Bidirectional models in each form TensorFlow 2 exports them, with an input
and TensorFlow's output for each.

TensorFlow 2 runs a Keras RNN layer as a While loop over TensorList ops
(TensorListFromTensor, TensorListGetItem, TensorListSetItem,
TensorListStack); the forms differ in how the loop is written:

  frozen.pb          convert_variables_to_constants_v2: a functional While
                     whose cond and body are library functions
  frozen_lowered.pb  the same with lower_control_flow=True: Enter, Merge,
                     Switch, NextIteration and Exit nodes
  saved_model/       tf.saved_model.save(model)
  export/            Keras 3's Model.export

Each model's folder holds the four, x.npy (batch 2, 5 steps, 3 features)
and expected.npy (the model's output for x), and x_long.npy (batch 3, 9
steps) with expected_long.npy: every form takes inputs of any batch size
and sequence length. MANIFEST.json names the input and output of each form
and records the TensorFlow and Keras versions. list_through_if/ holds a
TensorList passed through tf.cond (a functional StatelessIf, and lowered);
list_snapshot_in_loop/ a While loop that writes its list and passes the
list it read on unchanged. The script checks that
TensorFlow itself reproduces the expected outputs from every form.

Run in a virtual environment with tensorflow-cpu (TensorFlow 2.21, Keras 3):

    python tests/tf_zoo/make_rnn_models.py tests/data/tf_graphs/keras_rnn

Fixed seeds: the same TensorFlow writes the same weights and outputs.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

FEATURES = 3
L = keras.layers


def lstm_sequences(x):
    return L.LSTM(4, return_sequences=True, name="lstm")(x)


def gru_backwards_last(x):
    return L.GRU(4, go_backwards=True, name="gru")(x)


def simple_rnn_backwards_sequences(x):
    return L.SimpleRNN(4, return_sequences=True, go_backwards=True, name="rnn")(x)


def bidirectional_stack(x):
    x = L.Bidirectional(L.LSTM(3, return_sequences=True), name="bi_lstm")(x)
    x = L.Bidirectional(L.GRU(2), merge_mode="concat", name="bi_gru")(x)
    return L.Dense(2, name="head")(x)


MODELS = {
    "lstm_sequences": lstm_sequences,
    "gru_backwards_last": gru_backwards_last,
    "simple_rnn_backwards_sequences": simple_rnn_backwards_sequences,
    "bidirectional_stack": bidirectional_stack,
}


def build(name, layers):
    keras.utils.set_random_seed(11)
    inputs = keras.Input((None, FEATURES), name="x")
    model = keras.Model(inputs, layers(inputs), name=name)
    # Nonzero recurrent biases, so that every weight matters in the output.
    for w in model.weights:
        if "bias" in w.path:
            w.assign(np.random.default_rng(3).uniform(-0.5, 0.5, w.shape).astype(np.float32))
    return model


def write_frozen(model, path, lower):
    spec = tf.TensorSpec((None, None, FEATURES), tf.float32, name="x")
    concrete = tf.function(lambda x: model(x)).get_concrete_function(spec)
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
    graph = frozen.graph.as_graph_def()
    with open(path, "wb") as f:
        f.write(graph.SerializeToString())
    return {"input": frozen.inputs[0].name, "output": frozen.outputs[0].name}


def signature_keys(path, cases):
    sig = tf.saved_model.load(path).signatures["serving_default"]
    entry = {"input": list(sig.structured_input_signature[1].keys())[0],
             "output": list(sig.structured_outputs.keys())[0]}
    for x, expected in cases:
        got = sig(**{entry["input"]: tf.constant(x)})[entry["output"]].numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    return entry


def check_frozen(path, entry, cases):
    graph = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        graph.ParseFromString(f.read())
    with tf.Graph().as_default() as g:
        tf.compat.v1.import_graph_def(graph, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            for x, expected in cases:
                got = sess.run(entry["output"], {entry["input"]: x})
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def write_list_through_if(out_dir):
    """A TensorList passed through tf.cond: a functional StatelessIf (and its
    lowered Switch/Merge form) whose branches take and return a variant."""

    def f(x, flag):
        ta = tf.TensorArray(tf.float32, size=3).write(0, x)
        ta = tf.cond(flag, lambda: ta.write(1, x * 2), lambda: ta.write(1, x * 3))
        return ta.stack()

    spec = (tf.TensorSpec((2,), tf.float32, name="x"), tf.TensorSpec((), tf.bool, name="flag"))
    concrete = tf.function(f).get_concrete_function(*spec)
    folder = os.path.join(out_dir, "list_through_if")
    os.makedirs(folder, exist_ok=True)
    for form, lower in (("frozen.pb", False), ("frozen_lowered.pb", True)):
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
        with open(os.path.join(folder, form), "wb") as out:
            out.write(frozen.graph.as_graph_def().SerializeToString())
        x = np.array([1.5, -2.0], np.float32)
        for flag in (True, False):
            got = frozen(tf.constant(x), tf.constant(flag))[0].numpy()
            want = np.stack([x, x * (2 if flag else 3), np.zeros(2, np.float32)])
            np.testing.assert_array_equal(got, want)
    return {"inputs": [t.name for t in frozen.inputs], "output": frozen.outputs[0].name}


def write_list_snapshot_in_loop(out_dir):
    """A While loop whose body writes its list and also passes the list it
    read on as another loop variable: the write must not show in the
    snapshot (lists are values, even where Plexus updates them in place)."""

    def f(x):
        def body(i, ta, before):
            return i + 1, ta.write(i, x * tf.cast(i + 1, tf.float32)), ta

        empty = tf.TensorArray(tf.float32, size=3, element_shape=(2,))
        _, ta, before = tf.while_loop(lambda i, *_: i < 3, body, (0, empty, empty))
        return ta.stack() - before.stack()

    spec = tf.TensorSpec((2,), tf.float32, name="x")
    concrete = tf.function(f).get_concrete_function(spec)
    folder = os.path.join(out_dir, "list_snapshot_in_loop")
    os.makedirs(folder, exist_ok=True)
    x = np.array([1.5, -2.0], np.float32)
    want = np.stack([np.zeros(2, np.float32), np.zeros(2, np.float32), 3 * x])
    for form, lower in (("frozen.pb", False), ("frozen_lowered.pb", True)):
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
        with open(os.path.join(folder, form), "wb") as out:
            out.write(frozen.graph.as_graph_def().SerializeToString())
        np.testing.assert_array_equal(frozen(tf.constant(x))[0].numpy(), want)
    return {"input": frozen.inputs[0].name, "output": frozen.outputs[0].name}


def main(out_dir):
    manifest = {"tensorflow": tf.__version__, "keras": keras.__version__, "models": {}}
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, FEATURES)).astype(np.float32)
    x_long = rng.standard_normal((3, 9, FEATURES)).astype(np.float32)
    for name, layers in MODELS.items():
        model = build(name, layers)
        folder = os.path.join(out_dir, name)
        os.makedirs(folder, exist_ok=True)
        cases = [(x, model(x).numpy()), (x_long, model(x_long).numpy())]
        for suffix, (inputs, expected) in zip(("", "_long"), cases):
            np.save(os.path.join(folder, f"x{suffix}.npy"), inputs)
            np.save(os.path.join(folder, f"expected{suffix}.npy"), expected)
        entry = {}
        for form, lower in (("frozen.pb", False), ("frozen_lowered.pb", True)):
            entry[form] = write_frozen(model, os.path.join(folder, form), lower)
            check_frozen(os.path.join(folder, form), entry[form], cases)
        tf.saved_model.save(model, os.path.join(folder, "saved_model"))
        entry["saved_model"] = signature_keys(os.path.join(folder, "saved_model"), cases)
        model.export(os.path.join(folder, "export"), verbose=False)
        entry["export"] = signature_keys(os.path.join(folder, "export"), cases)
        manifest["models"][name] = entry
    manifest["list_through_if"] = write_list_through_if(out_dir)
    manifest["list_snapshot_in_loop"] = write_list_snapshot_in_loop(out_dir)
    with open(os.path.join(out_dir, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
