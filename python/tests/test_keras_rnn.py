"""Keras RNN layers as TensorFlow 2.21 exports them, against TensorFlow's
outputs: LSTM, GRU, SimpleRNN and Bidirectional, with return_sequences true
and false and go_backwards, each as a frozen graph (functional While, and
lowered to Enter/Merge/Switch/NextIteration/Exit), a tf.saved_model.save
SavedModel and a Keras Model.export SavedModel (tests/data/tf_graphs/keras_rnn,
written by tests/tf_zoo/make_rnn_models.py). TensorFlow runs these as While
loops over TensorList ops, which Plexus runs as host ops on variant tensors
while the cell's MatMuls run on the cpu plugin. Every form is run from
Python and through the plexus CLI, on the committed input and on a longer
input with another batch size; all match at rtol 1e-5, atol 1e-5.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import plexus as px


def _data_dir() -> pathlib.Path:
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"


DATA = _data_dir() / "tf_graphs" / "keras_rnn"
MANIFEST = json.loads((DATA / "MANIFEST.json").read_text())
MODELS = sorted(MANIFEST["models"])
FORMS = ["frozen.pb", "frozen_lowered.pb", "saved_model", "export"]
BUILD = pathlib.Path(os.environ.get("PLEXUS_BUILD_DIR")
                     or pathlib.Path(px.__file__).resolve().parent.parent.parent)
TOL = dict(rtol=1e-5, atol=1e-5)


def cases(model):
    folder = DATA / model
    return [(np.load(folder / f"x{s}.npy"), np.load(folder / f"expected{s}.npy")) for s in ("", "_long")]


def test_manifest_records_versions_and_every_form():
    assert MANIFEST["tensorflow"].startswith("2.21")
    assert MANIFEST["keras"].startswith("3.")
    assert len(MODELS) == 4
    for model in MODELS:
        assert sorted(MANIFEST["models"][model]) == sorted(FORMS)


@pytest.mark.parametrize("form", ["frozen.pb", "frozen_lowered.pb"])
@pytest.mark.parametrize("model", MODELS)
def test_frozen_graph_matches_tensorflow(model, form):
    entry = MANIFEST["models"][model][form]
    sess = px.Session(str(DATA / model / form))
    for x, expected in cases(model):
        got = sess.run(entry["output"], {entry["input"]: x}).numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, **TOL)


def test_frozen_graphs_use_the_loop_forms_they_claim():
    ops = {form: {n["op"] for n in px.import_graph_def(str(DATA / "lstm_sequences" / form)).graph.nodes()}
           for form in ("frozen.pb", "frozen_lowered.pb")}
    assert "While" in ops["frozen.pb"] and "Enter" not in ops["frozen.pb"]
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit"} <= ops["frozen_lowered.pb"]
    for form in ops:
        assert {"TensorListReserve", "TensorListFromTensor", "TensorListStack"} <= ops[form]


@pytest.mark.parametrize("form", ["saved_model", "export"])
@pytest.mark.parametrize("model", MODELS)
def test_saved_model_matches_tensorflow(model, form):
    entry = MANIFEST["models"][model][form]
    loaded = px.saved_model.load(DATA / model / form)
    signature = loaded.signatures["serving_default"]
    for x, expected in cases(model):
        got = signature(**{entry["input"]: x})[entry["output"]].numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, **TOL)


def test_lists_stay_on_the_host_and_matmuls_on_the_cpu_plugin():
    entry = MANIFEST["models"]["lstm_sequences"]["frozen_lowered.pb"]
    sess = px.Session(str(DATA / "lstm_sequences" / "frozen_lowered.pb"))
    sess.run(entry["output"], {entry["input"]: cases("lstm_sequences")[0][0]})
    report = sess.placement()
    by_op = {}
    for node in report.nodes:
        by_op.setdefault(node.op, set()).add(node.how)
    assert by_op["TensorListSetItem"] == {"host op"}
    assert by_op["TensorListGetItem"] == {"host op"}
    # The cell's MatMul (fused with its BiasAdd by the optimizer, or not).
    assert any(by_op.get(op) == {"kernel"} for op in ("MatMul", "_FusedMatMul"))


@pytest.mark.parametrize("form", ["frozen.pb", "frozen_lowered.pb"])
def test_a_list_passes_through_if_branches(form):
    """tf.cond over a TensorArray: the list goes into a StatelessIf's branch
    functions and comes back changed (or through Switch and Merge, lowered);
    the list before the branch is unchanged for the other branch."""
    entry = MANIFEST["list_through_if"]
    path = DATA / "list_through_if" / form
    ops = {n["op"] for n in px.import_graph_def(str(path)).graph.nodes()}
    assert ("StatelessIf" in ops or "If" in ops) if form == "frozen.pb" else {"Switch", "Merge"} <= ops
    sess = px.Session(str(path))
    x = np.array([1.5, -2.0], np.float32)
    for flag, factor in ((True, 2), (False, 3)):
        got = sess.run(entry["output"], {entry["inputs"][0]: x, entry["inputs"][1]: np.array(flag)}).numpy()
        np.testing.assert_array_equal(got, np.stack([x, x * factor, np.zeros(2, np.float32)]))


@pytest.mark.parametrize("form", ["frozen.pb", "frozen_lowered.pb"])
def test_a_loop_snapshot_of_a_list_keeps_its_value(form):
    """A While body writes element i of its list and passes the list it read
    on as another loop variable. Plexus updates a list in place only when
    nothing else holds it: the snapshot must miss the last write
    (TensorFlow: rows 0 and 1 of the difference are zero, row 2 is 3x)."""
    entry = MANIFEST["list_snapshot_in_loop"]
    sess = px.Session(str(DATA / "list_snapshot_in_loop" / form))
    x = np.array([1.5, -2.0], np.float32)
    for _ in range(2):  # the second run reuses the executors' scratch
        got = sess.run(entry["output"], {entry["input"]: x}).numpy()
        np.testing.assert_array_equal(got, np.stack([np.zeros(2), np.zeros(2), 3 * x]).astype(np.float32))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("model", ["bidirectional_stack", "gru_backwards_last"])
def test_cli_runs_every_form(model, form, tmp_path):
    entry = MANIFEST["models"][model][form]
    cli = BUILD / "bin" / "plexus"
    if not cli.exists():
        pytest.skip(f"no plexus CLI at {cli}")
    x, expected = cases(model)[1]
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    run = subprocess.run([str(cli), "run", str(DATA / model / form),
                          "--input", f"{entry['input']}={tmp_path / 'x.npy'}",
                          "--output", entry["output"], "--out", str(out)],
                         capture_output=True, text=True, env={**os.environ, "PLEXUS_PLUGIN_PATH": ""})
    assert run.returncode == 0, run.stdout + run.stderr
    written = out / (entry["output"].replace(":", "_").replace("/", "_") + ".npy")
    np.testing.assert_allclose(np.load(written), expected, **TOL)
