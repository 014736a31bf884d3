"""Helpers shared by the benchmark scripts: paths, timing and thread settings."""
import json
import os
import re
import time

import numpy as np

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)
CACHE_DIR = os.path.join(BENCH_DIR, ".cache")
DATA_DIR = os.path.join(REPO_DIR, "tests", "data", "tf_graphs")
CASES_FILE = os.path.join(CACHE_DIR, "cases.json")


def threads():
    """Threads every peer runtime is given (BENCH_THREADS, default 2)."""
    return int(os.environ.get("BENCH_THREADS", "2"))


def quiet_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def load_cases():
    with open(CASES_FILE) as f:
        return json.load(f)


def case_selected(case, group):
    """Whether run_plexus.py and run_peer.py time `case` for --group GROUP:
    "all" is every group but "keras" (models.py times those), and
    BENCH_CASES, a regex searched in the case id, narrows the choice."""
    if not (group == case["group"] or (group == "all" and case["group"] != "keras")):
        return False
    return re.search(os.environ.get("BENCH_CASES", ""), case["id"]) is not None


def time_calls(fn, seconds, min_iters, max_iters=100000, warmup=5):
    """Times fn() like plexus_graph_bench does: `warmup` calls (the first one
    timed apart), then enough calls to fill about `seconds` (at least
    `min_iters`). Returns the statistics in microseconds."""
    start = time.perf_counter_ns()
    fn()
    first_us = (time.perf_counter_ns() - start) / 1e3
    warm = []
    for _ in range(max(warmup - 1, 0)):
        t0 = time.perf_counter_ns()
        fn()
        warm.append((time.perf_counter_ns() - t0) / 1e3)
    estimate = float(np.median(warm)) if warm else first_us
    iters = int(min(max_iters, max(min_iters, seconds * 1e6 / max(estimate, 1e-3))))
    times = np.empty(iters)
    for i in range(iters):
        t0 = time.perf_counter_ns()
        fn()
        times[i] = (time.perf_counter_ns() - t0) / 1e3
    return {
        "iters": iters,
        "warmup": warmup,
        "first_run_us": round(first_us, 2),
        "median_us": round(float(np.percentile(times, 50)), 3),
        "p10_us": round(float(np.percentile(times, 10)), 3),
        "p90_us": round(float(np.percentile(times, 90)), 3),
        "mean_us": round(float(times.mean()), 3),
        "min_us": round(float(times.min()), 3),
    }


def output_path(runtime, case_id):
    d = os.path.join(CACHE_DIR, "outputs", runtime)
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, case_id + ".npy")


def emit(record, out_file):
    """Prints one JSON line and appends it to out_file."""
    line = json.dumps(record)
    print(line, flush=True)
    with open(out_file, "a") as f:
        f.write(line + "\n")
