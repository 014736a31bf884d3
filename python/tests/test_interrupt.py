"""Long runs from Python: Ctrl-C (SIGINT) stops a running graph promptly with
KeyboardInterrupt and leaves the process working; runs release the GIL so
other Python threads go on meanwhile."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import plexus as px

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@px.function
def _chain(x, w, n):
    # n dependent matmuls: a graph of 2n nodes that runs n times as long as one.
    for _ in range(n):
        x = px.tanh(x @ w)
    return x


# The child: calibrates one step, starts a run that would take at least
# ~15 s (or 40 steps' worth), and reports when KeyboardInterrupt arrives.
_CHILD = textwrap.dedent("""
    import signal, sys, time
    # A child started from a background job inherits SIGINT ignored, and
    # then Python installs no handler: put Python's own in place.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import plexus as px

    @px.function
    def chain(x, w, n):
        for _ in range(n):
            x = px.tanh(x @ w)
        return x

    x = np.full((1024, 1024), 1e-3, np.float32)
    w = np.full((1024, 1024), 1e-3, np.float32)
    chain(x, w, 4)                               # warm up
    t0 = time.monotonic()
    chain(x, w, 8)
    step = (time.monotonic() - t0) / 8
    n = max(40, int(15.0 / step))
    chain.get_concrete_function(x, w, n)         # trace and prepare outside the timed run
    print("STEP", step, "N", n, "PREDICTED", step * n, flush=True)
    print("READY", flush=True)
    start = time.monotonic()
    try:
        chain(x, w, n)
    except KeyboardInterrupt:
        print("INTERRUPTED", time.monotonic() - start, flush=True)
    else:
        print("FINISHED", time.monotonic() - start, flush=True)
        sys.exit(3)
    # Python's own handler is back: a later Ctrl-C is a plain KeyboardInterrupt.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGINT)
    # The process goes on working: an op, and the same function again.
    r = px.constant([[1.0, 2.0]]) @ px.constant([[3.0], [4.0]])
    assert r.numpy().tolist() == [[11.0]], r
    small = chain(np.eye(4, dtype=np.float32), np.eye(4, dtype=np.float32), 3)
    assert np.allclose(small.numpy(), np.tanh(np.tanh(np.tanh(np.eye(4)))))
    again = chain(x, w, 2)
    assert again.shape == (1024, 1024)
    print("OK", flush=True)
""")


def _child_env():
    env = dict(os.environ)
    pkg_root = str(pathlib.Path(px.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def test_ctrl_c_stops_a_long_graph_run():
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], env=_child_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        deadline = time.monotonic() + 60
        while True:
            line = proc.stdout.readline()
            assert line, f"the child ended early: {lines} {proc.stderr.read()}"
            lines.append(line.strip())
            if line.startswith("READY"):
                break
            assert time.monotonic() < deadline, lines
        predicted = float(lines[-2].split()[-1])
        time.sleep(0.5)
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines += out.split("\n")
    assert proc.returncode == 0, (proc.returncode, lines, err)
    assert "OK" in lines, (lines, err)
    interrupted = [line for line in lines if line.startswith("INTERRUPTED")]
    assert interrupted, (lines, err)
    ran = float(interrupted[0].split()[1])
    # Promptly: well before the run would have ended, and soon after the signal.
    assert ran >= 0.3, ran  # the signal came during the run, not before it
    assert ran < predicted / 3, (ran, predicted)
    assert ran < 0.5 + 5.0, ran
    assert ended - signalled < predicted / 2, (ended - signalled, predicted)


def test_ctrl_c_outside_a_run_is_a_plain_keyboard_interrupt():
    code = textwrap.dedent("""
        import os, signal
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in _CHILD
        import plexus as px
        px.function(lambda x: x * 2.0)(px.constant([1.0]))   # a run installs and removes its handler
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000000):
                pass
        except KeyboardInterrupt:
            print("KI")
        print((px.constant([1.0]) + 1.0).numpy().tolist())
    """)
    r = subprocess.run([sys.executable, "-c", code], env=_child_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["KI", "[2.0]"], r.stdout


def _counter_samples_during(call):
    """Runs `call` while a thread counts; returns (start, end, sample times, count during)."""
    stop = threading.Event()
    samples = []
    count = [0]

    def counter():
        n = 0
        while not stop.is_set():
            n += 1
            if n % 2000 == 0:
                samples.append(time.monotonic())
                count[0] = n

    t = threading.Thread(target=counter, daemon=True)
    t.start()
    time.sleep(0.05)  # the counter runs
    before = count[0]
    start = time.monotonic()
    call()
    end = time.monotonic()
    after = count[0]
    stop.set()
    t.join()
    return start, end, [s for s in samples if start + 0.05 < s < end - 0.05], after - before


def test_gil_released_during_graph_run():
    x = np.full((512, 512), 1e-3, np.float32)
    w = np.full((512, 512), 1e-3, np.float32)
    n = 20
    while True:
        _chain.get_concrete_function(x, w, n)  # trace outside the measured call
        start, end, inside, counted = _counter_samples_during(lambda: _chain(x, w, n))
        if end - start >= 0.4 or n >= 2000:
            break
        n *= 3
    assert end - start >= 0.3, "the run was too short to tell"
    # The counter thread ran while the graph ran (not only around it).
    assert counted > 0
    assert len(inside) >= 3, (end - start, len(inside))


def test_gil_released_during_big_eager_op():
    a = px.constant(np.full((2048, 2048), 1e-3, np.float32))
    a @ a  # warm up
    reps = 1
    while True:
        def call():
            for _ in range(reps):
                a @ a
        start, end, inside, counted = _counter_samples_during(call)
        if end - start >= 0.4 or reps >= 16:
            break
        reps *= 2
    assert end - start >= 0.3, "the op was too short to tell"
    assert counted > 0
    assert len(inside) >= 3, (end - start, len(inside))


def test_runs_from_threads_at_once():
    # Graph runs in several threads (no signal handler there) all complete.
    x = np.full((64, 64), 1e-2, np.float32)
    expected = _chain(x, x, 5).numpy()
    results, failures = [], []

    def work():
        try:
            for _ in range(5):
                results.append(_chain(x, x, 5).numpy())
        except Exception as e:  # reported below
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert len(results) == 20
    for r in results:
        np.testing.assert_array_equal(r, expected)
