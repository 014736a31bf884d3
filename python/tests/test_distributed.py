"""plexus.distribute: the store, every collective against NumPy on 2-4 ranks, data-parallel
training against one process, TensorFlow graphs with collective ops, checkpoints, the launcher,
mpirun, and failures (a killed rank, a stopped rank, a rank that never comes, mismatched
collectives), each bounded in time. Ranks are processes on 127.0.0.1 started by plexus-run
(dist_worker.py holds what each rank does)."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import plexus as px
import plexus.distribute as dist
from plexus import _plexus, errors

HERE = Path(__file__).resolve().parent
WORKER = str(HERE / "dist_worker.py")
DATA = Path(os.environ.get("PLEXUS_TEST_DATA", HERE.parent.parent / "tests" / "data")) / "dist"


def launch(nproc, *args, timeout=5, grace=2, env=None, limit=120):
    """Runs dist_worker.py on nproc ranks under the launcher; (exit code, output, seconds)."""
    cmd = [sys.executable, "-m", "plexus.distribute.run", "--nproc", str(nproc), "--timeout", str(timeout),
           "--grace", str(grace), WORKER, *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=limit,
                       env={**os.environ, **(env or {})})
    return p.returncode, p.stdout.decode(errors="replace"), time.monotonic() - t0


def results(out):
    return [line.split("RESULT ", 1)[1] for line in out.splitlines() if "RESULT " in line]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the store ---------------------------------------------------------------

def test_store_from_many_threads():
    server = _plexus.StoreServer.start("127.0.0.1", 0)
    try:
        errs = []

        def work(i):
            try:
                c = _plexus.StoreClient.connect("127.0.0.1", server.port, 5)
                c.set(f"k{i}", f"v{i}".encode())
                for _ in range(20):
                    c.add("counter", 1)
                assert c.get(f"k{(i + 1) % 8}", 5) == f"v{(i + 1) % 8}".encode()  # waits for the neighbour
            except Exception as e:  # noqa: BLE001
                errs.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errs, errs
        c = _plexus.StoreClient.connect("127.0.0.1", server.port, 5)
        assert c.add("counter", 0) == 160
        assert c.check("k3") and not c.check("nothing")
        t0 = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError, match="'missing' was not set"):
            c.get("missing", 0.5)
        assert time.monotonic() - t0 < 3
    finally:
        server.stop()
    with pytest.raises(errors.UnavailableError, match="unreachable"):
        c.get("k1", 1)


def test_store_that_never_answers():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match=f"no store answered at 127.0.0.1:{port}"):
        _plexus.StoreClient.connect("127.0.0.1", port, 0.5)
    assert time.monotonic() - t0 < 3


# -- one process ---------------------------------------------------------------

def test_world_of_one():
    assert dist.world_size() == 1 and dist.rank() == 0
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(dist.all_reduce(x, "mean").numpy(), x)
    np.testing.assert_array_equal(dist.all_gather(x).numpy(), x)
    np.testing.assert_array_equal(dist.broadcast(x, 0).numpy(), x)
    dist.barrier()
    strategy = dist.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        v = px.Variable(np.ones([2], np.float32))
    assert strategy.reduce("sum", v.read_value(), axis=0).numpy() == 2
    with pytest.raises(ValueError, match="unknown op 'median'"):
        dist.all_reduce(x, "median")
    with pytest.raises(ValueError, match="root 1 is not a rank"):
        dist.broadcast(x, 1)


def test_group_larger_than_the_world_needs_a_launcher():
    dist.shutdown()
    with pytest.raises(errors.FailedPreconditionError, match="needs a distributed run: start the program with "
                                                             "plexus-run"):
        px.raw_ops.CollectiveReduceV2(np.ones([2], np.float32), group_size=2, group_key=5, instance_key=1,
                                      ordering_token=[], merge_op="Add", final_op="Id")
    with pytest.raises(errors.InvalidArgumentError, match="merge_op must be Add, Mul, Min or Max"):
        px.raw_ops.CollectiveReduceV2(np.ones([2], np.float32), group_size=1, group_key=5, instance_key=1,
                                      ordering_token=[], merge_op="Median", final_op="Id")
    dist.init()
    with pytest.raises(errors.InvalidArgumentError, match="group 5 has 2 members but the world has 1 ranks"):
        px.raw_ops.CollectiveReduceV2(np.ones([2], np.float32), group_size=2, group_key=5, instance_key=1,
                                      ordering_token=[], merge_op="Add", final_op="Id")
    dist.shutdown()


# -- several processes -------------------------------------------------------------

@pytest.mark.parametrize("nproc", [2, 3, 4])
def test_collectives_match_numpy(nproc):
    code, out, _ = launch(nproc, "collectives", timeout=60)
    assert code == 0, out
    assert results(out) == ["collectives 120"] * nproc, out


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_data_parallel_training_equals_one_process(mode):
    code, out, _ = launch(2, "train", mode, timeout=60)
    assert code == 0, out
    digests = {r.split()[1] for r in results(out)}
    assert len(results(out)) == 2 and len(digests) == 1, out  # weights bitwise equal on both ranks


def test_tensorflow_graph_with_collectives():
    code, out, _ = launch(2, "tf_graph", str(DATA), timeout=60)
    assert code == 0, out
    assert results(out) == ["tf_graph ok"] * 2, out


def test_checkpoint_written_by_rank_zero(tmp_path):
    code, out, _ = launch(2, "checkpoint", str(tmp_path), timeout=60)
    assert code == 0, out
    assert results(out) == ["checkpoint ok"] * 2, out
    assert list(tmp_path.glob("ckpt.index"))


def test_mpirun_works_as_launcher():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not installed (Debian's openmpi-bin)")
    cmd = [mpirun, "-n", "2", "--oversubscribe", "-x", "MASTER_PORT", "-x", "PYTHONPATH", "-x", "PLEXUS_PLUGIN_PATH",
           sys.executable, WORKER, "collectives"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                       env={**os.environ, "MASTER_PORT": str(free_port()), "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                            "PLEXUS_PLUGIN_PATH": os.environ.get("PLEXUS_PLUGIN_PATH", "")})
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out
    # mpirun may interleave the two ranks' output within a line.
    assert out.count("RESULT collectives 120") == 2, out


# -- failures -----------------------------------------------------------------

@pytest.mark.parametrize("nproc", [2, 3])
def test_killed_rank_is_unavailable_everywhere(nproc):
    code, out, seconds = launch(nproc, "kill", timeout=5)
    assert code == 128 + 9, out  # the launcher exits with the failing rank's status
    assert "plexus-run: rank 1 was killed by SIGKILL" in out
    survivors = results(out)
    assert len(survivors) == nproc - 1, out
    for line in survivors:
        assert line.startswith("UnavailableError"), out
        assert "rank 1 is not responding" in line and "all-reduce #4" in line, out
    assert seconds < 5 + 15, out


def test_stopped_rank_is_deadline_exceeded():
    code, out, seconds = launch(3, "stall", timeout=4)
    assert code == 3, out
    survivors = results(out)
    assert len(survivors) == 2, out
    for line in survivors:
        assert line.startswith("DeadlineExceededError"), out
        assert "timed out after 4s" in line and "rank 1 is not responding" in line, out
        assert float(line.split("after ")[1].split("s")[0]) < 4 + 4, out
    assert seconds < 4 + 20, out


def test_rank_that_never_starts():
    code = ("import plexus.distribute as d\n"
            f"d.init(rank=0, world_size=3, master_port={free_port()}, timeout=2)\n")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    assert p.returncode != 0
    assert "DeadlineExceededError" in out and "ranks 1, 2 never arrived within 2s" in out, out
    assert time.monotonic() - t0 < 2 + 15


def test_debug_mode_names_the_rank_that_differs():
    code, out, _ = launch(2, "mismatch", timeout=5, env={"PLEXUS_DIST_DEBUG": "1"})
    assert code == 3, out
    for line in results(out):
        assert line.startswith("InvalidArgumentError"), out
        assert "rank 0 issued collective #1 all-reduce float [3]; rank 1 issued collective #1 all-reduce float [4]" \
            in line, out


def test_launcher_stops_the_others_when_a_rank_fails():
    code, out, seconds = launch(2, "exit", grace=1)
    assert code == 7, out
    assert "plexus-run: rank 1 exited with code 7; stopping the other ranks" in out
    assert seconds < 30  # rank 0 would have slept for 60 s


def test_digits_example_trains_data_parallel(tmp_path):
    example = HERE.parent.parent / "examples" / "train_digits_distributed.py"
    cmd = [sys.executable, "-m", "plexus.distribute.run", "--nproc", "2", "--timeout", "60", str(example),
           "--epochs", "8", "--min-accuracy", "0.9", "--out", str(tmp_path)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out
    assert "weights identical on every rank" in out and "restored on every rank, same accuracy" in out, out


def test_collectives_run_by_a_plugins_extension():
    plugin = Path(os.environ.get("PLEXUS_BUILD_DIR", HERE.parent.parent / "build")) / "lib" / "sdk" / \
        "libplexus_plugin_reference.so"
    if not plugin.exists():
        pytest.skip(f"the reference plugin is not built ({plugin})")
    code, out, _ = launch(2, "device", str(plugin), timeout=30)
    assert code == 0, out
    assert results(out) == ["device REF:0 REF:0 REF:0"] * 2, out
