"""plexus-serve under load on loopback, against in-process plexus as the ceiling.

    PYTHONPATH=build/python PLEXUS_BUILD_DIR=build build/venv/bin/python bench/peers/serve_load.py \
        --seconds 5 --out bench/results_serve.json

Models (python/tests/serve_util.py writes them with TensorFlow): "small"
(features [N, 4] -> [N, 3], one matmul) and "medium" (an MLP 256-1024-1024-10,
about 5 MB of weights).

- ceiling: the same SavedModel loaded in this process with
  plexus.saved_model.load and its signature called with batches of 1, C and
  --max-batch rows (median time per call; rows per second).
- server: build/bin/plexus-serve on 127.0.0.1, once without and once with
  --enable_batching (--max-batch, --batch-timeout-us). Clients are
  --procs processes of threads, each thread a keep-alive HTTP connection
  sending KServe v2 infer requests of one row in the binary tensor
  extension (the body is encoded once; the server parses every request).
  Concurrency 1 and C (--concurrency), --seconds each: p50/p90/p99 latency
  seen by the client and requests (= rows) per second. The client is a raw
  socket with the request's bytes built once (TCP_NODELAY), so that it takes
  as little CPU as Python allows.
- the transport floor: GET /v2/health/live at concurrency 1 (HTTP and the
  client's own cost, no model).

Derived numbers, per model:
- overhead_us: server p50 at concurrency 1 without batching minus the
  in-process p50 at batch 1 (the server's cost per request, the Python
  client's included; transport_floor_us says how much of it is the client
  and HTTP alone);
- batched_fraction: server rows/s with batching at concurrency C over the
  in-process rows/s at batch C (goal >= 0.8); mean_batch is the server's
  own mean batch size from /metrics;
- batched_cpu_fraction: the same in CPU time (in-process CPU per row at
  batch C over the server's CPU per request, from /proc/PID/stat), which the
  clients' use of the same CPUs does not skew.
The clients share the machine's CPUs with the server (loopback): on a small
machine they take a good part of it, which the numbers include.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import socket
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python", "tests"))
import serve_util as su  # noqa: E402

FEATURES = {"small": 4, "medium": su.MEDIUM_SIZES[0]}


def percentiles(us):
    a = np.asarray(us, dtype=np.float64)
    if a.size == 0:
        return {}
    return {"n": int(a.size), "p50_us": round(float(np.percentile(a, 50)), 1),
            "p90_us": round(float(np.percentile(a, 90)), 1), "p99_us": round(float(np.percentile(a, 99)), 1),
            "mean_us": round(float(a.mean()), 1)}


# ---- in-process ceiling ------------------------------------------------------------------------------


def in_process(model_dir, features, batches, seconds):
    import plexus  # noqa: F401 - the package's runtime
    from plexus import saved_model
    sig = saved_model.load(model_dir).signatures["serving_default"]
    out = {}
    for b in batches:
        x = np.random.default_rng(b).standard_normal((b, features)).astype(np.float32)
        for _ in range(5):
            sig(features=x)
        times = []
        end = time.perf_counter() + seconds
        cpu0 = time.process_time()
        while time.perf_counter() < end or len(times) < 20:
            t0 = time.perf_counter_ns()
            r = sig(features=x)
            np.asarray(next(iter(r.values())))
            times.append((time.perf_counter_ns() - t0) / 1e3)
        cpu = time.process_time() - cpu0
        stats = percentiles(times)
        stats["rows_per_s"] = round(b * 1e6 / stats["p50_us"], 1)
        stats["cpu_us_per_row"] = round(cpu * 1e6 / (len(times) * b), 2)
        out[str(b)] = stats
    return out


# ---- load generator ----------------------------------------------------------------------------------


def _request(model, features):
    x = np.random.default_rng(0).standard_normal((1, features)).astype(np.float32)
    head = json.dumps({"inputs": [{"name": "features", "shape": [1, features], "datatype": "FP32",
                                   "parameters": {"binary_data_size": x.nbytes}}],
                       "parameters": {"binary_data_output": True}}).encode()
    return (f"/v2/models/{model}/infer", head + x.tobytes(),
            {"Inference-Header-Content-Length": str(len(head)), "Content-Type": "application/octet-stream"})


class _Conn:
    """A keep-alive HTTP/1.1 connection on a raw socket: the request's bytes
    are built once, and a response is read by its Content-Length (cheaper
    than http.client, so that more of the CPU is left to the server)."""

    def __init__(self, port, request):
        self.port, self.request = port, request
        self.sock, self.buf = None, b""

    def _connect(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def call(self):
        """The response's status; reconnects when the server closed."""
        if self.sock is None:
            self._connect()
        self.sock.sendall(self.request)
        buf = self.buf
        while True:
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the response")
            buf += chunk
        head = buf[:end].lower()
        i = head.find(b"content-length:")
        length = 0
        if i >= 0:
            j = head.find(b"\r\n", i)
            length = int(head[i + 15:j if j >= 0 else len(head)])
        need = end + 4 + length
        while len(buf) < need:
            chunk = self.sock.recv(max(65536, need - len(buf)))
            if not chunk:
                raise ConnectionError("closed in the body")
            buf += chunk
        self.buf = buf[need:]
        if b"connection: close" in head:
            self.close()
        return int(buf[9:12])

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buf = None, b""


def _request_bytes(method, path, body, headers):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def _thread(port, method, path, body, headers, t_end, latencies, errors):
    conn = _Conn(port, _request_bytes(method, path, body, headers))
    while time.perf_counter() < t_end:
        t0 = time.perf_counter_ns()
        try:
            status = conn.call()
        except OSError as e:
            errors.append(type(e).__name__)
            conn.close()
            continue
        if status != 200:
            errors.append(status)
            continue
        latencies.append((time.perf_counter_ns() - t0) / 1e3)
    conn.close()


def _proc(port, method, path, body, headers, threads, t_start, t_end, queue):
    while time.perf_counter() < t_start:
        time.sleep(0.001)
    lat, errors = [], []
    ts = [threading.Thread(target=_thread, args=(port, method, path, body, headers, t_end, lat, errors))
          for _ in range(threads)]
    for t in ts:
        t.start()
    cpu0 = time.process_time()
    for t in ts:
        t.join(timeout=(t_end - time.perf_counter()) + 120)
    queue.put((lat, errors, time.process_time() - cpu0))


def process_cpu_seconds(pid):
    """user + system CPU seconds of process `pid` so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(port, concurrency, seconds, procs, method="POST", path="", body=b"", headers=None, server_pid=None):
    """`concurrency` keep-alive clients for `seconds`: latency percentiles,
    requests per second, and CPU per request of the clients and (given its
    pid) the server."""
    procs = max(1, min(procs, concurrency))
    per = [concurrency // procs + (1 if i < concurrency % procs else 0) for i in range(procs)]
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    t_start = time.perf_counter() + 0.5
    t_end = t_start + seconds
    ps = [ctx.Process(target=_proc, args=(port, method, path, body, headers or {}, n, t_start, t_end, queue))
          for n in per]
    for p in ps:
        p.start()
    server_cpu0 = process_cpu_seconds(server_pid) if server_pid else None
    lat, errors, client_cpu = [], [], 0.0
    for _ in ps:
        l, e, c = queue.get(timeout=seconds + 180)
        lat += l
        errors += e
        client_cpu += c
    server_cpu = process_cpu_seconds(server_pid) - server_cpu0 if server_pid else None
    for p in ps:
        p.join(timeout=30)
    stats = percentiles(lat)
    stats["requests_per_s"] = round(len(lat) / seconds, 1)
    stats["errors"] = len(errors)
    if lat:
        # The server's CPU over the whole measurement (a little before and
        # after the clients' window too) per request answered.
        stats["client_cpu_us_per_request"] = round(client_cpu * 1e6 / len(lat), 1)
        if server_pid:
            stats["server_cpu_us_per_request"] = round(server_cpu * 1e6 / len(lat), 1)
    if errors:
        stats["error_kinds"] = sorted({str(e) for e in errors})
    return stats


def batch_counts(server, model):
    """(batches, rows) so far from the server's plexus_serve_batch_size histogram."""
    text = server.metrics()
    key = f'{{model="{model}"}}'
    return (su.metric_values(text, "plexus_serve_batch_size_count").get(key, 0),
            su.metric_values(text, "plexus_serve_batch_size_sum").get(key, 0))


def serve_runs(models_root, model, args, batching):
    flags = [f"--model_name={model}", f"--model_base_path={os.path.join(models_root, model)}",
             "--rest_threads=64"]
    if batching:
        flags += ["--enable_batching", f"--max_batch_size={args.max_batch}",
                  f"--batch_timeout_micros={args.batch_timeout_us}", "--max_enqueued_batches=1000",
                  f"--num_batch_threads={args.batch_threads}"]
    s = su.Server(flags, grpc=False)
    try:
        path, body, headers = _request(model, FEATURES[model])
        out = {"flags": flags[2:]}
        load(s.port, 1, 1.0, 1, path=path, body=body, headers=headers)  # warm-up
        out["floor"] = load(s.port, 1, min(args.seconds, 3.0), 1, method="GET", path="/v2/health/live")
        for c in (1, args.concurrency):
            before = batch_counts(s, model)
            out[f"c{c}"] = load(s.port, c, args.seconds, args.procs, path=path, body=body, headers=headers,
                                server_pid=s.pid)
            after = batch_counts(s, model)
            if batching and after[0] > before[0]:
                out[f"c{c}"]["mean_batch"] = round((after[1] - before[1]) / (after[0] - before[0]), 2)
        out["rss_mib"] = round(s.rss_kb() / 1024, 1)
        rc = s.terminate(timeout=60)
        out["exit_code"] = rc
        return out
    finally:
        s.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="small,medium")
    p.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--procs", type=int, default=2, help="client processes sharing the clients")
    # max_batch_size at the concurrency: with more, a batch never fills and
    # every batch waits the whole timeout (the latency then bounds the
    # throughput at concurrency / timeout).
    p.add_argument("--max-batch", type=int, default=16)
    p.add_argument("--batch-timeout-us", type=int, default=2000)
    p.add_argument("--batch-threads", type=int, default=1)
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results_serve.json"))
    args = p.parse_args()
    if su.find_binary() is None:
        sys.exit("serve_load: plexus-serve not found (build it; PLEXUS_BUILD_DIR=build)")
    t_begin = time.time()
    models_root = su.models_dir()
    results = {"meta": {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.platform(),
                        "cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
                        "seconds_per_measurement": args.seconds, "concurrency": args.concurrency,
                        "client_processes": args.procs, "binary": su.find_binary(),
                        "protocol": "KServe v2 REST, binary tensor extension, one row per request, keep-alive",
                        "env": {k: v for k, v in os.environ.items()
                                if k.startswith("PLEXUS_") or k == "LD_PRELOAD"}},
               "models": {}}
    for model in args.models.split(","):
        feats = FEATURES[model]
        batches = sorted({1, args.concurrency, args.max_batch})
        print(f"serve_load: {model}: in-process", flush=True)
        # In a child process, so that its threads and memory leave before the server runs.
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        child = ctx.Process(target=lambda: q.put(in_process(os.path.join(models_root, model, "1"), feats, batches,
                                                            min(args.seconds, 3.0))))
        child.start()
        ceiling = q.get(timeout=600)
        child.join(timeout=30)
        entry = {"in_process": ceiling}
        for batching in (False, True):
            name = "batching" if batching else "no_batching"
            print(f"serve_load: {model}: server, {name}", flush=True)
            entry[name] = serve_runs(models_root, model, args, batching)
        c = args.concurrency
        entry["overhead_us"] = round(entry["no_batching"]["c1"]["p50_us"] - ceiling["1"]["p50_us"], 1)
        entry["transport_floor_us"] = entry["no_batching"]["floor"]["p50_us"]
        entry["batched_fraction"] = round(entry["batching"][f"c{c}"]["requests_per_s"]
                                          / ceiling[str(c)]["rows_per_s"], 3)
        entry["unbatched_fraction"] = round(entry["no_batching"][f"c{c}"]["requests_per_s"]
                                            / ceiling["1"]["rows_per_s"], 3)
        entry["mean_batch"] = entry["batching"][f"c{c}"].get("mean_batch")
        # The same comparison in CPU time, which the clients' share of this
        # machine's CPUs does not skew: in-process CPU per row at batch C over
        # the server's CPU per (one-row) request with batching.
        entry["batched_cpu_fraction"] = round(ceiling[str(c)]["cpu_us_per_row"]
                                              / entry["batching"][f"c{c}"]["server_cpu_us_per_request"], 3)
        results["models"][model] = entry
        print(f"serve_load: {model}: overhead {entry['overhead_us']} us/request (transport floor "
              f"{entry['transport_floor_us']} us), batched {entry['batching'][f'c{c}']['requests_per_s']} rows/s = "
              f"{entry['batched_fraction']:.2f} of in-process batch {c} ({ceiling[str(c)]['rows_per_s']} rows/s); "
              f"in CPU time {entry['batched_cpu_fraction']:.2f}", flush=True)
    results["goals"] = {m: {"batched_fraction >= 0.8": e["batched_fraction"] >= 0.8,
                            "batched_cpu_fraction >= 0.8": e["batched_cpu_fraction"] >= 0.8}
                        for m, e in results["models"].items()}
    results["meta"]["load_average_at_end"] = list(os.getloadavg())
    results["meta"]["wall_seconds"] = round(time.time() - t_begin, 1)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"serve_load: wrote {args.out}")


if __name__ == "__main__":
    main()
