"""plexus-serve soak: a couple of minutes of mixed traffic (v1 predict, v2
infer in JSON and binary, bad requests, metrics, gRPC when built) from a few
keep-alive clients, with the server's RSS (/proc/PID/status) sampled: after a
warm-up it must stay flat (growth under 10%), and every good request must
succeed.

Bounded: PLEXUS_SERVE_SOAK_SECONDS (default 120) of traffic, plus the server's
start and stop; PLEXUS_SERVE_SOAK_SECONDS=0 skips it. Run it alone with
    pytest python/tests/test_serve_soak.py
"""

import json
import os
import threading
import time

import numpy as np
import pytest

import serve_util as su

SECONDS = float(os.environ.get("PLEXUS_SERVE_SOAK_SECONDS", "120"))
pytestmark = [pytest.mark.skipif(su.find_binary() is None, reason="plexus-serve is not built"),
              pytest.mark.skipif(SECONDS <= 0, reason="PLEXUS_SERVE_SOAK_SECONDS=0")]

CLIENTS = 6
GROWTH_LIMIT = 0.10


def _rest_client(server, index, stop, stats):
    g = np.random.default_rng(index)
    conn = server.connection(timeout=30)
    n = 0
    while not stop.is_set():
        n += 1
        rows = int(g.integers(1, 9))
        x = g.standard_normal((rows, 4)).astype(np.float32)
        kind = n % 5
        try:
            if kind == 0:
                conn.request("POST", "/v1/models/small:predict", json.dumps({"instances": x.tolist()}))
                expect = 200
            elif kind == 1:
                conn.request("POST", "/v2/models/small/versions/1/infer", json.dumps({"inputs": [
                    {"name": "features", "shape": [rows, 4], "datatype": "FP32", "data": x.ravel().tolist()}]}))
                expect = 200
            elif kind == 2:
                head = json.dumps({"inputs": [{"name": "features", "shape": [rows, 4], "datatype": "FP32",
                                               "parameters": {"binary_data_size": x.nbytes}}],
                                   "parameters": {"binary_data_output": True}}).encode()
                conn.request("POST", "/v2/models/small/infer",
                             head + x.tobytes(), {"Inference-Header-Content-Length": str(len(head))})
                expect = 200
            elif kind == 3:
                bad = ['{"instances": [[1, 2', '{"inputs": {"nope": [1]}}', '{"instances": [[1, 2, 3]]}'][n % 3]
                conn.request("POST", "/v1/models/small:predict", bad)
                expect = 400
            else:
                conn.request("GET", "/metrics" if n % 2 else "/v1/models/small")
                expect = 200
            r = conn.getresponse()
            body = r.read()
        except Exception as e:  # noqa: BLE001 - counted
            stats["errors"].append(f"{type(e).__name__}: {e}")
            conn.close()
            conn = server.connection(timeout=30)
            continue
        if r.status != expect:
            stats["errors"].append((r.status, body[:200]))
        elif kind == 0:
            if not np.allclose(json.loads(body)["predictions"], su.small_ref(x, 2), rtol=1e-4, atol=1e-4):
                stats["errors"].append("wrong answer")
        stats["count"][index] = stats["count"].get(index, 0) + 1
    conn.close()


def _grpc_client(server, index, stop, stats):
    import tritonclient.grpc as grpcclient
    c = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
    g = np.random.default_rng(index)
    try:
        while not stop.is_set():
            x = g.standard_normal((int(g.integers(1, 9)), 256)).astype(np.float32)
            i = grpcclient.InferInput("features", list(x.shape), "FP32")
            i.set_data_from_numpy(x)
            try:
                r = c.infer("medium", [i], client_timeout=30)
                if not np.allclose(r.as_numpy("logits"), su.medium_ref(x), rtol=1e-3, atol=1e-3):
                    stats["errors"].append("wrong medium answer")
            except Exception as e:  # noqa: BLE001 - counted
                stats["errors"].append(f"grpc {type(e).__name__}: {e}")
            stats["count"][index] = stats["count"].get(index, 0) + 1
    finally:
        c.close()


def test_soak_memory_is_flat(tmp_path):
    models = su.models_dir()
    config = su.write_config(str(tmp_path / "models.config"), [
        ("small", os.path.join(models, "small"), "latest { num_versions: 2 }"),
        ("medium", os.path.join(models, "medium"), ""),
    ])
    s = su.Server([f"--model_config_file={config}", "--rest_threads=16"])
    stop = threading.Event()
    stats = {"errors": [], "count": {}}
    threads = [threading.Thread(target=_rest_client, args=(s, i, stop, stats), daemon=True) for i in range(CLIENTS)]
    if s.grpc_port is not None:
        threads.append(threading.Thread(target=_grpc_client, args=(s, CLIENTS, stop, stats), daemon=True))
    samples = []  # (seconds since start, RSS kB)
    try:
        t0 = time.monotonic()
        for t in threads:
            t.start()
        while time.monotonic() - t0 < SECONDS:
            samples.append((time.monotonic() - t0, s.rss_kb()))
            time.sleep(min(2.0, max(0.1, SECONDS / 60)))
            assert s.proc.poll() is None, s.log_text()[-2000:]
        stop.set()
        for t in threads:
            t.join(timeout=40)
        assert not any(t.is_alive() for t in threads)
        requests = sum(stats["count"].values())
        assert stats["errors"] == [], (len(stats["errors"]), stats["errors"][:10])
        assert requests > CLIENTS * 50, requests
        # After a warm-up of a quarter of the run: the last quarter's RSS
        # against the second quarter's.
        warm = [kb for t, kb in samples if SECONDS * 0.25 <= t < SECONDS * 0.5]
        last = [kb for t, kb in samples if t >= SECONDS * 0.75]
        assert warm and last
        base, end = float(np.median(warm)), float(np.median(last))
        growth = (end - base) / base
        print(f"soak: {requests} requests in {SECONDS:.0f} s, RSS {base / 1024:.1f} -> {end / 1024:.1f} MiB "
              f"({100 * growth:+.1f}%), peak {max(kb for _, kb in samples) / 1024:.1f} MiB")
        assert growth < GROWTH_LIMIT, (f"RSS grew {100 * growth:.1f}% after warm-up: "
                                       f"{[(round(t), kb) for t, kb in samples]}")
        assert s.terminate(timeout=40) == 0
    finally:
        stop.set()
        s.close()
