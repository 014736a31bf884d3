"""Every real TensorFlow graph of tests/data/tf_graphs, run from Python.

Frozen GraphDefs (binary, from a path and from bytes), text GraphDefs with
TensorFlow 1 and functional control flow, the TensorFlow 1 LSTM while loop,
the TF1-style Session, and clear errors for malformed files and unknown ops.
Expected values and tolerances are those of tests/data/tf_graphs/MANIFEST.md,
tests/e2e/tf_graphs_test.cc, tests/e2e/control_flow_test.cc and
examples/run_tf_graphs.c.
"""

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
KWS_LABELS = ["_silence_", "_unknown_", "yes", "no", "up", "down", "left", "right", "on", "off",
              "stop", "go"]


def data(relative: str) -> str:
    return str(DATA / relative)


def npy(relative: str) -> np.ndarray:
    return np.load(data(relative))


def assert_close(got, want, rtol, atol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# Each frozen graph imported both from its path and from its bytes.
@pytest.fixture(params=["path", "bytes", "pathlib"])
def load(request):
    def importer(relative, **kwargs):
        if request.param == "path":
            return px.import_graph_def(data(relative), **kwargs)
        if request.param == "pathlib":
            return px.import_graph_def(DATA / relative, **kwargs)
        with open(data(relative), "rb") as f:
            return px.import_graph_def(f.read(), **kwargs)
    return importer


# ---- frozen GraphDefs ----------------------------------------------------------------


def test_addition_tf2(load):
    f = load("addition_tf2/model.pb")
    assert f.inputs == ["x:0", "y:0"]
    assert f.outputs == ["z:0"]
    z = f(np.int32(2), np.int32(3))
    assert z.dtype == px.int32
    assert z.shape == ()
    assert z.numpy() == 5  # exact
    # By keyword too, and Python ints become int32 like the placeholders.
    assert f(x=2, y=3).numpy() == 5
    assert f(2, y=40).numpy() == 42


def test_regression_frozen(load):
    f = load("regression_frozen/frozen.pb")
    assert f.inputs == ["X:0"]
    assert f.outputs == ["pred:0"]
    pred = f(np.array([1, 2, 3], np.float32))
    assert pred.shape == (3,)
    assert pred.dtype == px.float32
    assert_close(pred.numpy(), [1.2634872, 1.4774489, 1.6914107], rtol=0, atol=1e-6)
    # X has unknown rank: any shape goes through.
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_close(f(x).numpy(), 0.21396178 * x + 1.04952538, rtol=0, atol=1e-5)


# tests/e2e/tf_graphs_test.cc: float32 differs by ~4e-3 from the float64
# reference at magnitudes ~1e4 (abs 1e-2 + rel 1e-6); the scaled input needs
# abs 1e-4 + rel 1e-5.
MLP_CASES = [("ref_input_ramp.npy", "ref_output_ramp.npy", 1e-2, 1e-6),
             ("ref_input_ramp_div784.npy", "ref_output_ramp_div784.npy", 1e-4, 1e-5)]


def test_mlp_fc_layers(load):
    f = load("mlp_fc_layers/frozen.pb")
    assert f.inputs == ["X:0"]
    assert f.outputs == ["output:0"]
    for inp, out, atol, rtol in MLP_CASES:
        x = npy("mlp_fc_layers/" + inp)
        y = f(x)
        assert y.shape == (1, 10)
        assert_close(y.numpy(), npy("mlp_fc_layers/" + out).reshape(1, 10), rtol=rtol, atol=atol)


def test_mlp_batch_matches_row_by_row():
    f = px.import_graph_def(data("mlp_fc_layers/frozen.pb"))
    a = npy("mlp_fc_layers/ref_input_ramp.npy")
    b = npy("mlp_fc_layers/ref_input_ramp_div784.npy")
    both = f(np.concatenate([a, b], axis=0)).numpy()
    assert both.shape == (2, 10)
    np.testing.assert_allclose(both[0], f(a).numpy()[0], rtol=0, atol=1e-2)
    np.testing.assert_allclose(both[1], f(b).numpy()[0], rtol=0, atol=1e-4)
    # A plexus tensor is as good as a NumPy array.
    np.testing.assert_array_equal(f(px.constant(b)).numpy(), f(b).numpy())


def test_mlp_explicit_inputs_and_outputs():
    f = px.import_graph_def(data("mlp_fc_layers/frozen.pb"), inputs=["X"],
                            outputs=["model/dense/Relu", "model/dense_1/Relu:0", "output"])
    assert f.inputs == ["X:0"]
    assert f.outputs == ["model/dense/Relu:0", "model/dense_1/Relu:0", "output:0"]
    x = npy("mlp_fc_layers/ref_input_ramp_div784.npy")
    h1, h2, y = f(x)
    assert h1.shape == (1, 256) and h2.shape == (1, 256) and y.shape == (1, 10)
    assert (h1.numpy() >= 0).all() and (h2.numpy() >= 0).all()
    # The last layer by hand from the fetched hidden layer and the weights.
    sess = px.Session(f.graph)
    w, b = sess.run(["pred/kernel", "pred/bias:0"])
    assert w.shape == (256, 10) and b.shape == (10,)
    want = h2.numpy().astype(np.float64) @ w.numpy() + b.numpy()
    assert_close(y.numpy(), want, rtol=1e-5, atol=1e-4)
    assert_close(y.numpy(), npy("mlp_fc_layers/ref_output_ramp_div784.npy").reshape(1, 10),
                 rtol=1e-5, atol=1e-4)

    # An inner tensor as the input: feeding the first hidden layer skips it.
    tail = px.import_graph_def(data("mlp_fc_layers/frozen.pb"), inputs=["model/dense/Relu:0"],
                               outputs=["output:0"])
    assert_close(tail(h1).numpy(), y.numpy(), rtol=1e-6, atol=1e-5)


def test_mlp_errors_name_the_problem():
    f = px.import_graph_def(data("mlp_fc_layers/frozen.pb"))
    with pytest.raises(errors.InvalidArgumentError, match=r"\[1,783\]") as e:
        f(np.zeros((1, 783), np.float32))
    assert "[?,784]" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError, match="int32"):
        f(np.zeros((1, 784), np.int32))
    with pytest.raises(TypeError, match="X:0"):
        f(np.zeros((1, 784), np.float32), np.zeros((1, 784), np.float32))
    sess = px.Session(f.graph)
    with pytest.raises(errors.PlexusError, match="'X'.*not fed|not fed.*'X'"):
        sess.run("output")
    with pytest.raises(errors.NotFoundError, match="no_such_node"):
        sess.run("no_such_node:0")
    with pytest.raises(errors.PlexusError, match="output:3"):
        sess.run("output:3")
    # Still usable afterwards.
    x = npy("mlp_fc_layers/ref_input_ramp_div784.npy")
    assert_close(f(x).numpy(), npy("mlp_fc_layers/ref_output_ramp_div784.npy").reshape(1, 10),
                 rtol=1e-5, atol=1e-4)


# examples/run_tf_graphs.c: Mfcc:0 fed directly, rtol 1e-5, atol 1e-6, same argmax.
@pytest.mark.parametrize("model, top, zero_prob", [("CNN_S", "no", 0.925), ("DS_CNN_S", "no", 0.899)])
def test_kws_cnn_from_mfcc(load, model, top, zero_prob):
    f = load(f"kws_cnn/{model}.pb", inputs=["Mfcc:0"], outputs=["labels_softmax:0"])
    mfcc = npy("kws_cnn/ref_mfcc_input.npy")
    assert mfcc.shape == (1, 49, 10)
    got = f(mfcc).numpy()
    want = npy(f"kws_cnn/ref_{model}_softmax.npy").reshape(1, 12)
    assert got.shape == (1, 12)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert KWS_LABELS[int(np.argmax(got))] == top == KWS_LABELS[int(np.argmax(want))]
    # All-zero MFCCs: _silence_ (MANIFEST, to the 3 digits given there).
    zero = f(np.zeros((1, 49, 10), np.float32)).numpy()
    assert KWS_LABELS[int(np.argmax(zero))] == "_silence_"
    assert abs(zero[0, 0] - zero_prob) < 1e-3


@pytest.mark.parametrize("model", ["CNN_S", "DS_CNN_S"])
def test_kws_cnn_from_wav(model):
    # The default input is wav_data:0, a string scalar with the WAV file's bytes.
    f = px.import_graph_def(data(f"kws_cnn/{model}.pb"))
    assert f.inputs == ["wav_data:0"]
    assert f.outputs == ["labels_softmax:0"]
    wav = pathlib.Path(data("kws_cnn/silence.wav")).read_bytes()
    probs = f(wav).numpy()
    assert probs.shape == (1, 12)
    assert abs(probs.sum() - 1) <= 1e-5
    assert (probs >= 0).all()
    # No TensorFlow reference: the plausible top-1 for a silent file.
    assert KWS_LABELS[int(np.argmax(probs))] == "_silence_"
    # The frontend produces the [1,49,10] MFCCs the nets take.
    mfcc, again = px.Session(f.graph).run(["Mfcc:0", "labels_softmax:0"], {"wav_data": wav})
    assert mfcc.shape == (1, 49, 10)
    np.testing.assert_array_equal(again.numpy(), probs)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _lstm_reference(session, mfcc):
    """The LSTM_S net in NumPy float64 from the graph's own weights: 25 steps
    of an LSTM cell with peepholes and a projection, then a softmax layer."""
    names = ["lstm/rnn/lstm_cell/kernel", "lstm/rnn/lstm_cell/bias", "lstm/rnn/lstm_cell/w_f_diag",
             "lstm/rnn/lstm_cell/w_i_diag", "lstm/rnn/lstm_cell/w_o_diag",
             "lstm/rnn/lstm_cell/projection/kernel", "W_o", "b_o"]
    kernel, bias, wf, wi, wo, proj, w_out, b_out = (
        t.numpy().astype(np.float64) for t in session.run(names))
    assert kernel.shape == (108, 576) and proj.shape == (144, 98)
    x = np.asarray(mfcc, np.float64).reshape(25, 1, 10)  # time major
    c = np.zeros((1, 144))
    h = np.zeros((1, 98))
    for t in range(25):
        z = np.concatenate([x[t], h], axis=1) @ kernel + bias
        i, j, f, o = np.split(z, 4, axis=1)
        c = _sigmoid(f + 1.0 + wf * c) * c + _sigmoid(i + wi * c) * np.tanh(j)  # forget bias 1
        h = (_sigmoid(o + wo * c) * np.tanh(c)) @ proj
    logits = h @ w_out + b_out
    e = np.exp(logits - logits.max())
    return e / e.sum()


def test_kws_lstm_tf1_while_loop():
    path = data("kws_lstm_while/LSTM_S.pb")
    f = px.import_graph_def(path)
    ops = [n["op"] for n in f.nodes()]
    for op, count in [("Enter", 12), ("Merge", 3), ("Switch", 3), ("LoopCond", 1),
                      ("NextIteration", 3), ("Exit", 1)]:
        assert ops.count(op) == count, op
    assert "TensorArrayV3" in ops and "TensorArrayScatterV3" in ops and "TensorArrayReadV3" in ops
    wav = pathlib.Path(data("kws_cnn/silence.wav")).read_bytes()
    first = f(wav).numpy()
    second = f(wav).numpy()
    assert first.shape == (1, 12)
    assert abs(first.sum() - 1) <= 1e-5
    np.testing.assert_array_equal(first, second)  # frames are per run: identical repeats

    # Against a NumPy LSTM unrolled 25 times, from the MFCCs the graph computed.
    sess = px.Session(path)
    mfcc, probs = sess.run(["Mfcc:0", "labels_softmax:0"], {"wav_data:0": wav})
    assert mfcc.shape == (1, 25, 10)
    np.testing.assert_array_equal(probs.numpy(), first)
    assert_close(probs.numpy(), _lstm_reference(sess, mfcc.numpy()), rtol=1e-5, atol=1e-6)

    # MFCCs fed directly, with values far from silence.
    rng = np.random.default_rng(7)
    m = (5 * rng.standard_normal((1, 25, 10))).astype(np.float32)
    got = sess.run("labels_softmax:0", {"Mfcc:0": m}).numpy()
    assert_close(got, _lstm_reference(sess, m), rtol=1e-5, atol=1e-6)


def test_hey_snips(load):
    f = load("hey_snips_v3/hey_snips_3.pb")
    assert f.inputs == ["inputs:0"]
    assert f.outputs == ["logits:0"]
    x = npy("hey_snips_v3/ref_input_T40.npy")
    assert x.shape == (40, 40)
    got = f(x)
    assert got.shape == (6, 5)  # T - 34 rows
    assert_close(got.numpy(), npy("hey_snips_v3/ref_logits_T40.npy"), rtol=1e-5, atol=1e-5)
    # The shortest input, T = 35, gives one row; the space-to-batch paddings
    # are computed at run time from the input's shape.
    short = f(x[:35])
    assert short.shape == (1, 5)
    assert np.isfinite(short.numpy()).all()
    longer = f(np.concatenate([x, x[:10]], axis=0))
    assert longer.shape == (16, 5)
    # The first length still gives the reference (no state kept between runs).
    assert_close(f(x).numpy(), npy("hey_snips_v3/ref_logits_T40.npy"), rtol=1e-5, atol=1e-5)


# ---- text GraphDefs -----------------------------------------------------------------------


def test_while_loop_v1():
    f = px.import_graph_def(data("pbtxt_graphs/while_loop_v1.pbtxt"))
    assert f.inputs == []
    assert f.outputs == ["while/Exit:0", "while/Exit_1:0"]
    i, x = f()
    assert i.dtype == px.int32 and i.numpy() == 10  # exact
    assert x.shape == (2048, 2)
    assert x.dtype == px.float32
    assert (x.numpy() == 1.0).all()
    again, _ = f()
    assert again.numpy() == 10


def test_cond_v1_both_branches():
    path = data("pbtxt_graphs/cond_v1.pbtxt")
    x = np.array([[1, 2], [3, 4]], np.float32)
    c = np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)
    sess = px.Session(path)
    f = px.import_graph_def(path, outputs=["cond/Merge:0", "cond/Merge:1"])
    assert f.inputs == ["Placeholder:0", "Placeholder_1:0"]
    for pred, want in [(True, [[0.7, 1.0], [1.5, 2.2]]), (False, [[1.1, 2.2], [3.3, 4.4]])]:
        value, index = sess.run(["cond/Merge:0", "cond/Merge:1"],
                                {"Placeholder": x, "Placeholder_1": np.bool_(pred)})
        assert value.shape == (2, 2)
        assert_close(value.numpy(), want, rtol=0, atol=1e-6)
        assert_close(value.numpy(), x @ c if pred else x + c, rtol=0, atol=1e-6)
        assert index.dtype == px.int32 and index.numpy() == (1 if pred else 0)
        v2, i2 = f(x, pred)  # a Python bool feeds the bool placeholder
        np.testing.assert_array_equal(v2.numpy(), value.numpy())
        assert i2.numpy() == index.numpy()


def test_cond_v1_untaken_branch_is_a_clear_error():
    sess = px.Session(data("pbtxt_graphs/cond_v1.pbtxt"))
    feeds = {"Placeholder": np.ones((2, 2), np.float32), "Placeholder_1": True}
    # switch_t is the output taken when the predicate is true: dead when false.
    assert sess.run("cond/switch_t:0", feeds).dtype == px.bool
    feeds["Placeholder_1"] = False
    with pytest.raises(errors.PlexusError, match="cond/switch_t"):
        sess.run("cond/switch_t:0", feeds)


@pytest.mark.parametrize("x, want", [(3, (7, -1, 10)), (12, (0, -1, 12))])
def test_functional_while(x, want):
    f = px.import_graph_def(data("pbtxt_graphs/functional_while.pbtxt"),
                            outputs=["while:0", "while:1", "while:2"])
    assert f.inputs == ["input:0"]
    got = f(np.int32(x))
    assert tuple(int(t.numpy()) for t in got) == want
    assert all(t.dtype == px.int32 for t in got)


def test_functional_if():
    f = px.import_graph_def(data("pbtxt_graphs/functional_if.pbtxt"),
                            outputs=["StatefulIf:0", "StatelessIf:0"])
    assert f.inputs == ["a:0", "b:0"]
    a = np.array([10, 20, 30, 40], np.float32)
    b = np.array([1, 2, 3, 4], np.float32)
    stateful, stateless = f(a, b)
    np.testing.assert_array_equal(stateful.numpy(), [6, 8, 10, 12])  # exact
    np.testing.assert_array_equal(stateless.numpy(), a - b)  # exact


def test_conv2d_small():
    f = px.import_graph_def(data("pbtxt_graphs/conv2d_small.pbtxt"))
    assert f.inputs == ["input:0"]
    assert f.outputs == ["output_0:0"]
    x = npy("pbtxt_graphs/conv2d_small.ref_input.npy")
    got = f(x)
    want = npy("pbtxt_graphs/conv2d_small.ref_output.npy")
    assert_close(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert (got.numpy() >= 0).all()  # Relu


def test_text_graph_from_bytes():
    text = pathlib.Path(data("pbtxt_graphs/while_loop_v1.pbtxt")).read_bytes()
    i, x = px.import_graph_def(text)()
    assert i.numpy() == 10 and x.shape == (2048, 2)


# ---- Session (TensorFlow 1 style) ---------------------------------------------------------


def test_session_tf1_style():
    sess = px.Session(data("regression_frozen/frozen.pb"))
    assert sess.device == "CPU:0"
    x = np.array([1, 2, 3], np.float32)
    # A single fetch name gives one tensor; a list gives a list.
    pred = sess.run("pred:0", feed_dict={"X:0": x})
    assert isinstance(pred, px.Tensor)
    assert_close(pred.numpy(), [1.2634872, 1.4774489, 1.6914107], rtol=0, atol=1e-6)
    both = sess.run(["pred", "X"], {"X": x})
    assert isinstance(both, list) and len(both) == 2
    np.testing.assert_array_equal(both[1].numpy(), x)
    # Constants need no feed; a feed overrides any tensor, not only placeholders.
    w, b = sess.run(["W", "b/read:0"])
    assert abs(w.numpy() - 0.21396178) < 1e-7 and abs(b.numpy() - 1.04952538) < 1e-7
    over = sess.run("pred", {"X": np.array([1, 2], np.float32), "W/read": np.float32(10)})
    assert_close(over.numpy(), [10 + 1.04952538, 20 + 1.04952538], rtol=0, atol=1e-5)
    # The weight is unchanged for the next run.
    assert_close(sess.run("pred", {"X": x}).numpy(), pred.numpy(), rtol=0, atol=0)
    # Targets run for their effects only.
    assert sess.run([], {"X": x}, targets=["pred"]) == []


def test_session_from_graph_function_and_bytes():
    f = px.import_graph_def(data("addition_tf2/model.pb"))
    for source in (f, f.graph, pathlib.Path(data("addition_tf2/model.pb")).read_bytes()):
        sess = px.Session(source)
        assert sess.run("z", {"x": np.int32(20), "y": np.int32(22)}).numpy() == 42
    # The graph's GraphDef round-trips through import.
    again = px.import_graph_def(f.graph_def())
    assert again(2, 3).numpy() == 5
    assert [n["op"] for n in again.nodes()] == ["Placeholder", "Placeholder", "AddV2"]


def test_session_concurrent_threads():
    import concurrent.futures

    sess = px.Session(data("regression_frozen/frozen.pb"))

    def work(t):
        for i in range(20):
            x = np.float32(t * 100 + i)
            got = sess.run("pred", {"X": np.array([x])}).numpy()[0]
            if abs(got - (0.21396178 * x + 1.04952538)) > 1e-3:
                return False
        return True

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))


# ---- errors -------------------------------------------------------------------------------


def test_truncated_pb_names_the_file(tmp_path):
    raw = pathlib.Path(data("mlp_fc_layers/frozen.pb")).read_bytes()
    path = tmp_path / "truncated.pb"
    path.write_bytes(raw[:1000])
    with pytest.raises(errors.InvalidArgumentError) as e:
        px.import_graph_def(path)
    assert str(path) in str(e.value)
    assert "GraphDef" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_garbage_bytes_name_the_file(tmp_path):
    path = tmp_path / "garbage.pb"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(errors.InvalidArgumentError, match="garbage.pb"):
        px.import_graph_def(str(path))
    with pytest.raises(errors.InvalidArgumentError, match="<bytes>"):
        px.import_graph_def(bytes(range(256)) * 4)


def test_malformed_text_graph_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.pbtxt"
    path.write_text("node { name: 'a' op: ")
    with pytest.raises(errors.InvalidArgumentError) as e:
        px.import_graph_def(path)
    assert "broken.pbtxt" in str(e.value)
    assert "line 1" in str(e.value)


def test_missing_file_is_not_found(tmp_path):
    path = tmp_path / "missing.pb"
    with pytest.raises(errors.NotFoundError, match="missing.pb"):
        px.import_graph_def(path)


def test_unknown_op_names_node_and_op(tmp_path):
    path = tmp_path / "unknown_op.pbtxt"
    path.write_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'weird' op: 'FrobnicateV7' input: 'x' }\n")
    with pytest.raises(errors.NotFoundError) as e:
        px.import_graph_def(path)
    message = str(e.value)
    assert "FrobnicateV7" in message
    assert "'weird'" in message
    assert "unknown_op.pbtxt" in message
    assert isinstance(e.value, LookupError)


def test_graph_error_at_run_time_names_the_node():
    text = b"""
    node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'sum' op: 'Add' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }
    """
    f = px.import_graph_def(text)
    assert f.inputs == ["a:0", "b:0"] and f.outputs == ["sum:0"]
    np.testing.assert_array_equal(f(np.ones(3, np.float32), np.float32(2)).numpy(), [3, 3, 3])
    with pytest.raises(errors.InvalidArgumentError) as e:
        f(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    assert "node 'sum' (op Add)" in str(e.value)
    assert "Incompatible shapes: [2,3] vs. [4]" in str(e.value)


def test_feeds_that_do_not_fit_are_a_run_error_naming_the_feeds_and_node(tmp_path):
    """A placeholder of unknown dimensions fed a shape the graph cannot take:
    the error is about the feeds (not "importing"), names them, the file and
    the node the user wrote, and the session keeps working."""
    tf = pytest.importorskip("tensorflow")
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None, None], name="x")
        w = tf.constant(np.ones([4, 3], np.float32))
        b = tf.constant(np.ones([3], np.float32))
        tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w, name="dense/MatMul"), b), name="out")
    path = tmp_path / "dense.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    f = px.graph.import_graph_def(str(path))
    with pytest.raises(errors.InvalidArgumentError) as e:
        f(np.ones([2, 5], np.float32))
    message = str(e.value)
    assert "the feeds 'x' [2,5] do not fit the graph" in message and str(path) in message
    assert "node 'dense/MatMul' (op MatMul)" in message and "importing" not in message
    np.testing.assert_allclose(np.asarray(f(np.ones([2, 4], np.float32))), np.full([2, 3], 5.0))
