"""The placement report (plexus.placement): where each node of a run went,
from a Session, a traced function and a SavedModel."""
import os
import pathlib

import numpy as np

import plexus as px
from plexus.placement import PlacementReport


def _data(relative: str) -> str:
    env = os.environ.get("PLEXUS_TEST_DATA")
    base = pathlib.Path(env) if env else pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"
    return str(base / "tf_graphs" / relative)


def _check_consistent(report: PlacementReport):
    assert report.nodes, "a run places at least one node"
    for n in report.nodes:
        assert n.how in ("kernel", "host op", "core"), n
        if n.how == "kernel":
            assert n.device and n.plugin, n
        else:
            assert n.device == "" and n.plugin == "", n
    counts = report.nodes_per_device()
    assert sum(counts.values()) == len(report.nodes)
    text = str(report)
    assert text.count("\n") == len(report.nodes) + len(report.copies) + 1
    assert f"summary: {report.summary}\n" in text
    for n in report.nodes:
        assert f"node '{n.node}' (op {n.op}): " in text


def test_session_report_after_a_run():
    f = px.import_graph_def(_data("addition_tf2/model.pb"))
    sess = px.Session(f.graph, device="CPU:0")
    assert sess.placement().nodes == []  # nothing ran yet
    assert sess.run("z:0", {"x:0": np.int32(2), "y:0": np.int32(3)}).numpy() == 5
    report = sess.placement()
    assert report.device == "CPU:0"
    assert [(n.node, n.op, n.how, n.device, n.plugin, n.reason) for n in report.nodes] == [
        ("z", "AddV2", "kernel", "CPU:0", "cpu", "")]
    assert report.copies == []
    assert report.nodes_per_device() == {"CPU:0": 1}
    assert report.summary == "1 node (CPU:0: 1), 0 copies across devices"
    _check_consistent(report)
    assert "CPU:0" in repr(report)


def test_traced_function_report_names_host_ops_and_core_work():
    v = px.Variable(np.ones((2, 2), np.float32))

    @px.function(device="CPU:0")
    def step(x):
        y = px.matmul(x, v) + 1.0
        v.assign(y)
        return px.identity(y)

    x = np.full((2, 2), 2.0, np.float32)
    np.testing.assert_allclose(step(x).numpy(), np.full((2, 2), 5.0))
    report = step.placement(x)
    _check_consistent(report)
    ops = {n.op: n for n in report.nodes}
    assert ops["MatMul"].how == "kernel" and ops["MatMul"].device == "CPU:0"
    # Variables are the core's own state: host ops, whatever the device.
    assert any(n.how == "host op" for n in report.nodes), str(report)
    assert ops["Identity"].how == "core"


def test_saved_model_report():
    model = px.saved_model.load(_data("half_plus_two_tf1/00000123"), device="CPU:0")
    y = model.signatures["serving_default"](x=np.array([[1.0], [2.0]], np.float32))
    assert y is not None
    report = model.placement()
    _check_consistent(report)
    assert any(n.how == "kernel" and n.plugin == "cpu" for n in report.nodes), str(report)
