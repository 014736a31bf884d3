"""plexus-serve's versions and lifecycle under load: a new version swapped in
while 16 clients send requests (zero failures, versions 1 -> 2 monotonic per
client, version 1 unloaded after), a version that fails to load (reported,
the previous one keeps serving), version policies and labels, SIGTERM under
load (every answer a 200, exit 0 within the drain deadline), a burst of
connections while the CPUs are busy, deadlines, flags and the Python entry
point. Every wait is bounded."""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import serve_util as su

pytestmark = pytest.mark.skipif(su.find_binary() is None, reason="plexus-serve is not built")

CLIENTS = 16


@pytest.fixture(scope="module")
def models():
    return su.models_dir()


def v2_request(x):
    return json.dumps({"inputs": [{"name": "features", "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]})


def version_of_answer(x, data):
    """The version whose weights give `data` for `x` (None: neither)."""
    got = np.reshape(data, (x.shape[0], 3))
    for v in (1, 2):
        if np.allclose(got, su.small_ref(x, v), rtol=1e-4, atol=1e-4):
            return v
    return None


class Client(threading.Thread):
    """Sends /v2 infer requests on one keep-alive connection until `stop`
    (or its own deadline), recording (model_version, version the values
    belong to) per answer and every failure."""

    def __init__(self, server, index, stop, deadline):
        super().__init__(daemon=True)
        self.server, self.stop, self.deadline = server, stop, deadline
        self.rng = np.random.default_rng(1000 + index)
        self.versions, self.failures = [], []

    def run(self):
        conn = self.server.connection(timeout=30)
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            x = self.rng.standard_normal((1, 4)).astype(np.float32)
            try:
                conn.request("POST", "/v2/models/small/infer", v2_request(x))
                r = conn.getresponse()
                body = r.read()
            except (OSError, http.client.HTTPException) as e:
                self.failures.append(f"{type(e).__name__}: {e}")
                conn.close()
                conn = self.server.connection(timeout=30)
                continue
            if r.status != 200:
                self.failures.append((r.status, body[:300]))
                continue
            out = json.loads(body)
            claimed = int(out["model_version"])
            actual = version_of_answer(x, out["outputs"][0]["data"])
            if actual != claimed:
                self.failures.append(("version says %d, values are version %s" % (claimed, actual)))
            self.versions.append(claimed)
        conn.close()


def run_clients(server, until, max_seconds):
    """Starts CLIENTS clients, calls until() every 50 ms until it is true (or
    max_seconds pass), stops them, returns them."""
    stop = threading.Event()
    deadline = time.monotonic() + max_seconds
    clients = [Client(server, i, stop, deadline + 5) for i in range(CLIENTS)]
    for c in clients:  # staggered: a burst of connections is test_connection_burst_under_load's
        c.start()
        time.sleep(0.03)
    try:
        while time.monotonic() < deadline and not until(clients):
            time.sleep(0.05)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=40)
    assert not any(c.is_alive() for c in clients)
    return clients


def statuses(server, name="small"):
    status, body = server.get_json(f"/v1/models/{name}")
    assert status == 200, body
    return {int(v["version"]): v for v in body["model_version_status"]}


def wait_for(what, fn, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what} within {seconds} s")


@pytest.mark.parametrize("batching", [False, True], ids=["direct", "batching"])
def test_version_swap_under_load(models, tmp_path, batching):
    base = tmp_path / "small"
    base.mkdir()
    su.copy_version(os.path.join(models, "small", "1"), str(base), 1)
    flags = ["--enable_batching", "--max_batch_size=8", "--batch_timeout_micros=1000"] if batching else []
    s = su.Server([f"--model_name=small", f"--model_base_path={base}", "--file_system_poll_wait_seconds=0.2",
                   "--rest_threads=32"] + flags, grpc=False)
    try:
        assert set(statuses(s)) == {1}
        swapped = []

        def until(clients):
            if not swapped and all(len(c.versions) >= 5 for c in clients):
                su.copy_version(os.path.join(models, "small", "2"), str(base), 2)
                swapped.append(time.monotonic())
            # Run on until every client has had 20 answers from version 2.
            return swapped and all(c.versions.count(2) >= 20 for c in clients)
        clients = run_clients(s, until, max_seconds=40)
        assert swapped, "the clients never got going"
        failures = [f for c in clients for f in c.failures]
        assert failures == [], failures[:10]
        for c in clients:
            assert c.versions[0] == 1 and c.versions[-1] == 2, (c.versions[:3], c.versions[-3:])
            assert c.versions == sorted(c.versions), "a client saw version 1 again after version 2"
        total = sum(len(c.versions) for c in clients)
        assert total >= CLIENTS * 25
        # Version 1 goes: its status ends (or it leaves the list); version 2 serves.
        st = wait_for("version 1 unloaded", lambda: (lambda st: st if st.get(1, {}).get("state", "END") == "END"
                                                     else None)(statuses(s)), 15)
        assert st[2]["state"] == "AVAILABLE"
        text = s.metrics()
        versions = su.metric_values(text, "plexus_serve_model_versions")
        assert versions == {'{model="small",version="2"}': 1.0}, versions
    finally:
        s.close()


def test_failed_version_keeps_the_previous_one(models, tmp_path):
    base = tmp_path / "small"
    base.mkdir()
    su.copy_version(os.path.join(models, "small", "1"), str(base), 1)
    s = su.Server([f"--model_name=small", f"--model_base_path={base}", "--file_system_poll_wait_seconds=0.2"],
                  grpc=False)
    try:
        broken = tmp_path / "broken"
        shutil.copytree(os.path.join(models, "small", "2"), broken)
        (broken / "saved_model.pb").write_bytes(b"\x08\x01 this is not a SavedModel \xff\xff")
        os.rename(broken, base / "3")
        st = wait_for("version 3 reported as failed", lambda: (lambda st: st if 3 in st and
                                                               st[3]["status"]["error_code"] != "OK" else None)(
            statuses(s)), 20)
        assert st[3]["state"] == "END", st
        assert st[3]["status"]["error_message"], st
        assert st[1]["state"] == "AVAILABLE", st
        x = np.ones((2, 4), np.float32)
        status, body = s.post_json("/v1/models/small:predict", {"instances": x.tolist()})
        assert status == 200, body
        np.testing.assert_allclose(body["predictions"], su.small_ref(x, 1), rtol=1e-5)
        assert s.get_json("/v2/health/ready")[0] == 200
        failures = su.metric_values(s.metrics(), "plexus_serve_model_load_failures_total")
        assert failures.get('{model="small"}', 0) >= 1, failures
        status, body = s.post_json("/v1/models/small/versions/3:predict", {"instances": x.tolist()})
        assert status == 404 and "3" in body["error"], body
    finally:
        s.close()


def test_version_policy_from_config(models, tmp_path):
    base = os.path.join(models, "small")
    config = su.write_config(str(tmp_path / "models.config"), [
        ("latest2", base, "latest { num_versions: 2 }"),
        ("only1", base, "specific { versions: 1 }"),
        ("default", base, "", 'version_labels { key: "stable" value: 1 }',
         'version_labels { key: "canary" value: 2 }'),
    ])
    s = su.Server([f"--model_config_file={config}"], grpc=False)
    try:
        assert set(statuses(s, "latest2")) == {1, 2}
        assert set(statuses(s, "only1")) == {1}
        assert set(statuses(s, "default")) == {2}
        status, body = s.get_json("/v2/models/only1")
        assert status == 200 and body["versions"] == ["1"], body
        status, body = s.post_json("/v1/models/only1/versions/2:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 404 and "only1" in body["error"], body
        # Labels name versions; "stable" (1) is not served by the "default" policy.
        status, body = s.post_json("/v1/models/latest2/labels/stable:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 404 and "stable" in body["error"], body
        status, body = s.post_json("/v1/models/default/labels/canary:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 200, body
        np.testing.assert_allclose(body["predictions"], su.small_ref([[1, 2, 3, 4]], 2), rtol=1e-5)
        status, body = s.post_json("/v1/models/default/labels/stable:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 404 and "default" in body["error"] and ("stable" in body["error"] or "1" in body["error"]), body
    finally:
        s.close()


def _grpc_sigterm_client(s, stop, signalled, records, lock):
    """Calls ModelInfer on one channel until the server goes; records
    (start, end, 200 | "grpc <code>")."""
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc
    req = service_pb2.ModelInferRequest(model_name="slow")
    t = req.inputs.add()
    t.name, t.datatype = "features", "FP32"
    t.shape.extend([1, 4])
    req.raw_input_contents.append(np.array([[1, 2, 3, 4]], np.float32).tobytes())
    with grpc.insecure_channel(f"127.0.0.1:{s.grpc_port}") as ch:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                r = stub.ModelInfer(req, timeout=40)
                ok = np.frombuffer(r.raw_output_contents[0], np.float32).tolist() == [2, 4, 6, 8]
                outcome = 200 if ok else "wrong answer"
            except grpc.RpcError as e:
                outcome = f"grpc {e.code().name}"
                if not signalled:
                    outcome = f"error before SIGTERM: {outcome} {e.details()}"
                time.sleep(0.05)
            with lock:
                records.append((t0, time.monotonic(), outcome, "grpc"))
            if signalled and outcome != 200:
                return


def test_sigterm_under_load_drains(models):
    """REST clients (a connection per request) and, where built, gRPC clients
    (one channel each) keep the server busy; SIGTERM: every request answered
    is a 200 / OK, those in flight included, and the server exits 0 within
    --drain_seconds."""
    drain = 20
    s = su.Server([f"--model_name=slow", f"--model_base_path={os.path.join(models, 'slow')}",
                   f"--drain_seconds={drain}", "--rest_threads=32"])
    lock = threading.Lock()
    records = []  # (start, end, outcome)
    stop = threading.Event()
    signalled = []

    def client():
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            t0 = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=40)
            try:
                conn.request("POST", "/v1/models/slow:predict", '{"instances": [[1, 2, 3, 4]]}',
                             {"Connection": "close"})
                r = conn.getresponse()
                body = r.read()
                outcome = r.status if r.status != 200 or json.loads(body)["predictions"] == [[2, 4, 6, 8]] \
                    else "wrong answer"
            except (OSError, http.client.HTTPException) as e:
                outcome = type(e).__name__
                if not signalled:
                    outcome = f"error before SIGTERM: {e!r}"
                time.sleep(0.05)
            finally:
                conn.close()
            with lock:
                records.append((t0, time.monotonic(), outcome))
            if signalled and not isinstance(outcome, int):
                return  # the server has stopped accepting
    threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    if s.grpc_port is not None:
        threads[-4:] = [threading.Thread(target=_grpc_sigterm_client, args=(s, stop, signalled, records, lock),
                                         daemon=True) for _ in range(4)]
    try:
        for t in threads:  # staggered: a burst of connections is test_connection_burst_under_load's
            t.start()
            time.sleep(0.03)
        wait_for("requests answered before the signal", lambda: len(records) >= 20, 30)
        t_sig = time.monotonic()
        signalled.append(t_sig)
        s.proc.send_signal(signal.SIGTERM)
        try:
            rc = s.proc.wait(timeout=drain + 10)
        except Exception:
            s.kill()
            raise
        exit_seconds = time.monotonic() - t_sig
        stop.set()
        for t in threads:
            t.join(timeout=45)
        assert not any(t.is_alive() for t in threads)
        log = s.log_text()
        assert rc == 0, f"exit code {rc}; log:\n{log[-2000:]}"
        assert exit_seconds < drain + 2
        answered = [r for r in records if isinstance(r[2], int)]
        assert all(r[2] == 200 for r in answered), [r[2] for r in answered if r[2] != 200]
        assert not [r for r in records if isinstance(r[2], str) and ("before" in r[2] or "wrong" in r[2])], records
        in_flight = [r for r in answered if r[0] < t_sig < r[1]]
        assert in_flight, "no request was in flight at SIGTERM (the test proves nothing)"
        refused = [r for r in records if not isinstance(r[2], int)]
        assert all(r[0] >= t_sig - 0.2 for r in refused), "a connection failed well before the signal"
        grpc_refusals = {r[2] for r in refused if r[2].startswith("grpc")}
        assert grpc_refusals <= {"grpc UNAVAILABLE", "grpc CANCELLED"}, grpc_refusals
        if s.grpc_port is not None:
            assert [r for r in in_flight if r[3:] == ("grpc",)], "no gRPC call was in flight at SIGTERM"
    finally:
        stop.set()
        s.close()


def test_connection_burst_under_load(models):
    """64 clients connecting at once while the model keeps the CPUs busy are
    all let in promptly. (A listen backlog of a few connections drops the
    other SYNs, and each client then waits a second or more to retry.)"""
    s = su.Server([f"--model_name=slow", f"--model_base_path={os.path.join(models, 'slow')}",
                   "--rest_threads=96"], grpc=False)
    stop = threading.Event()

    def busy():
        conn = s.connection(timeout=60)
        while not stop.is_set():
            conn.request("POST", "/v1/models/slow:predict", '{"instances": [[1, 2, 3, 4]]}')
            conn.getresponse().read()
        conn.close()
    background = [threading.Thread(target=busy, daemon=True) for _ in range(2)]
    try:
        for t in background:
            t.start()
        time.sleep(0.5)
        for _ in range(2):
            def client(i):
                t0 = time.monotonic()
                status, _, _ = s.request("GET", "/v2/health/live", timeout=60)
                return status, round(time.monotonic() - t0, 3)
            results = su.run_together(64, client, 120)
            assert all(not isinstance(r, Exception) and r[0] == 200 for r in results), results
            slow = sorted((r[1] for r in results if r[1] > 0.9), reverse=True)
            assert not slow, f"{len(slow)} of 64 connections waited over 0.9 s (longest {slow[:3]} s)"
    finally:
        stop.set()
        for t in background:
            t.join(timeout=30)
        s.close()


def test_no_version_yet_then_one_arrives(models, tmp_path):
    """A model whose base path has no version: not ready, requests get 503;
    the first version to appear serves."""
    base = tmp_path / "small"
    base.mkdir()
    s = su.Server([f"--model_name=small", f"--model_base_path={base}", "--file_system_poll_wait_seconds=0.2"],
                  grpc=False)
    try:
        assert s.get_json("/v2/health/live")[0] == 200
        status, body = s.get_json("/v2/health/ready")
        assert status == 400, body
        status, body = s.post_json("/v1/models/small:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 503 and "small" in body["error"], body
        su.copy_version(os.path.join(models, "small", "1"), str(base), 1)
        wait_for("version 1 serving", lambda: s.get_json("/v2/health/ready")[0] == 200, 20)
        status, body = s.post_json("/v1/models/small:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 200, body
        np.testing.assert_allclose(body["predictions"], su.small_ref([[1, 2, 3, 4]], 1), rtol=1e-5)
    finally:
        s.close()


def test_request_timeout_threads_and_device(models):
    """--request_timeout_seconds: a run past it is 504; --intra_op_threads
    and --device=CPU:0 are taken; an unknown device is refused at start."""
    s = su.Server([f"--model_name=slow", f"--model_base_path={os.path.join(models, 'slow')}",
                   "--request_timeout_seconds=0.02", "--intra_op_threads=1", "--device=CPU:0"], grpc=False)
    try:
        t0 = time.monotonic()
        status, body = s.post_json("/v1/models/slow:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 504 and body["error"], body
        assert time.monotonic() - t0 < 5
        # The server counts a request once its answer is written, so the
        # count may lag the answer by a moment: poll for it (at most 5 s).
        deadline = time.monotonic() + 5
        while True:
            errors = su.metric_values(s.metrics(), "plexus_serve_errors_total")
            if errors.get('{kind="deadline"}', 0) >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert errors.get('{kind="deadline"}', 0) >= 1, errors
    finally:
        s.close()
    proc = subprocess.run([su.find_binary(), "--model_name=small", f"--model_base_path={os.path.join(models, 'small')}",
                           "--host=127.0.0.1", "--port=0", "--grpc_port=-1", "--device=NOPE:7"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "NOPE:7" in proc.stderr, (proc.returncode, proc.stderr[-1000:])


def test_python_entry_point(models):
    """python -m plexus.serve (here the module's file) runs the program in
    its place: same flags, same SIGTERM, exit 0."""
    source = os.path.join(su.REPO, "python", "plexus", "serve.py")
    env = dict(os.environ, PLEXUS_SERVE_BINARY=su.find_binary())
    s = su.Server([f"--model_name=small", f"--model_base_path={os.path.join(models, 'small')}"],
                  grpc=False, command=[sys.executable, source], env=env)
    try:
        status, body = s.post_json("/v1/models/small:predict", {"instances": [[1, 2, 3, 4]]})
        assert status == 200, body
        assert s.terminate(timeout=30) == 0
    finally:
        s.close()
    env["PLEXUS_SERVE_BINARY"] = "/nonexistent/plexus-serve"
    proc = subprocess.run([sys.executable, source, "--port=0"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 127 and "PLEXUS_SERVE_BINARY" in proc.stderr, proc.stderr
