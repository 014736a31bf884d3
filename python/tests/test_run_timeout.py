"""Run deadlines from Python: Session.run(timeout=...), plexus.run_timeout
around SavedModel signatures; each stops a long loop
with DeadlineExceededError within a bounded time and leaves the session
usable. The loop graph (tests/data/tf_graphs/pbtxt_graphs/functional_while.pbtxt)
counts its input up; from -2*10^9 it would run for minutes.
"""

from __future__ import annotations

import os
import pathlib
import time

import numpy as np
import pytest

import plexus as px

DATA = pathlib.Path(os.environ.get("PLEXUS_TEST_DATA") or pathlib.Path(__file__).parents[2] / "tests" / "data")
LOOP = DATA / "tf_graphs" / "pbtxt_graphs" / "functional_while.pbtxt"
LONG = np.int32(-2_000_000_000)


def _session():
    return px.graph.Session(px.graph.import_graph_def(str(LOOP)).graph)


def test_session_run_timeout_stops_a_long_loop_and_the_session_goes_on():
    s = _session()
    want = s.run("while:0", {"input": np.int32(3)})
    start = time.monotonic()
    with pytest.raises(px.errors.DeadlineExceededError, match="took longer than its timeout"):
        s.run("while:0", {"input": LONG}, timeout=0.3)
    assert time.monotonic() - start < 30
    np.testing.assert_array_equal(s.run("while:0", {"input": np.int32(3)}, timeout=60), want)


def test_run_timeout_block_covers_every_run_and_nests():
    s = _session()
    with px.run_timeout(0.3) as deadline:
        with pytest.raises(px.errors.DeadlineExceededError, match="deadline"):
            s.run("while:0", {"input": LONG})
    assert deadline.expired
    # A later inner deadline does not extend an earlier outer one.
    start = time.monotonic()
    with px.run_timeout(0.3):
        with px.run_timeout(600):
            with pytest.raises(px.errors.DeadlineExceededError):
                s.run("while:0", {"input": LONG})
    assert time.monotonic() - start < 30
    # An enclosing deadline that stops a run is not blamed on the run's own longer timeout.
    with px.run_timeout(0.3):
        with pytest.raises(px.errors.DeadlineExceededError) as e:
            s.run("while:0", {"input": LONG}, timeout=600)
    assert "timeout of 10m" not in str(e.value) and "deadline" in str(e.value)
    with px.run_timeout(60) as deadline:
        s.run("while:0", {"input": np.int32(3)})
    assert not deadline.expired


def test_run_timeout_stops_a_saved_model_signature(tmp_path):
    tf = pytest.importorskip("tensorflow")

    class Spin(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.int64, name="n")])
        def count(self, n):
            return {"i": tf.while_loop(lambda i: i < n, lambda i: [i + 1], [tf.constant(0, tf.int64)])[0]}

    module = Spin()
    tf.saved_model.save(module, str(tmp_path / "spin"), signatures={"serving_default": module.count})
    model = px.saved_model.load(str(tmp_path / "spin"))
    assert int(np.asarray(model(n=np.int64(5))["i"])) == 5
    start = time.monotonic()
    with px.run_timeout(0.3):
        with pytest.raises(px.errors.DeadlineExceededError):
            model(n=np.int64(10**12))
    assert time.monotonic() - start < 30
    assert int(np.asarray(model(n=np.int64(7))["i"])) == 7


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_bad_timeouts_are_refused(bad):
    with pytest.raises(ValueError):
        px.run_timeout(bad)
    if bad != 0:
        with pytest.raises((ValueError, px.errors.InvalidArgumentError)):
            _session().run("while:0", {"input": np.int32(3)}, timeout=bad)
