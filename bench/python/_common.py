"""Helpers shared by bench/python/*.py: thread settings, timeit-style timing,
machine facts and table printing."""
import json
import os
import platform
import time
import timeit

import numpy as np


def configure_threads(tensorflow=True, pytorch=True, threads=1):
    """Imports TensorFlow and PyTorch (those asked for; None for the others)
    and gives each `threads` intra-op threads and one
    inter-op thread. Must run before either framework runs anything.
    Plexus is left as built (its settings come from the environment).

    Import plexus before calling this: with TensorFlow loaded first, tracing
    a plexus.function crashed in libprotobuf (TensorFlow's own protobuf and
    the system one that Plexus links clash), seen with TensorFlow 2.21."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    tf = torch = None
    if tensorflow:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    if pytorch:
        import torch

        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set, or torch already ran something
            pass
    return tf, torch


def process_threads():
    """Threads of this process now (after the runtimes made their pools)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"machine": platform.platform(), "python": platform.python_version(), "cpu": cpu,
            "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def calibrate(fn, seconds):
    """How many calls of fn fill about `seconds` (at least 1)."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    n = 1
    while True:  # like timeit.Timer.autorange, but aiming at `seconds`
        t = timeit.Timer(fn).timeit(n)
        if t >= seconds / 4 or n >= 10 ** 7:
            break
        n *= 4 if t < seconds / 40 else 2
    per_call = max(t / n, one / 1e6, 1e-9)
    return max(1, int(seconds / per_call))


def time_interleaved(fns, seconds_per_repeat, repeats, warmup_calls, warmup_seconds=0.2):
    """timeit-style timing of several callables that are compared with each
    other: each one gets at least `warmup_calls` calls and `warmup_seconds`
    of calls, then `repeats` rounds; in every
    round each callable is timed over a batch of calls (sized to fill about
    `seconds_per_repeat`), one callable after the other, so that a change in
    the machine's load hits all of them alike. Returns, per name, the
    per-call time of every round in seconds and their median, min and max."""
    numbers = {}
    for name, fn in fns.items():
        t0, done = time.perf_counter(), 0
        while done < warmup_calls or time.perf_counter() - t0 < warmup_seconds:
            fn()
            done += 1
        numbers[name] = calibrate(fn, seconds_per_repeat)
    per_round = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n = numbers[name]
            t = timeit.Timer(fn).timeit(n)
            per_round[name].append(t / n)
    out = {}
    for name, ts in per_round.items():
        out[name] = {"calls_per_repeat": numbers[name], "repeats": repeats,
                     "median_s": float(np.median(ts)), "min_s": float(min(ts)),
                     "max_s": float(max(ts)), "per_repeat_s": [float(t) for t in ts]}
    return out


def join_case(info, timed, base_label, extras, case):
    """Adds the timings of one case to `info` (per runner label): the
    median in ms, and for every runner but Plexus's the ratio to the Plexus
    runner `base_label` of this process; then joins the columns that other
    processes (`extras`, their JSON) measured for the case, with their own
    ratios."""
    for label, r in timed.items():
        info[label].update(r)
        info[label]["median_ms"] = round(r["median_s"] * 1e3, 4)
    base = info.get(base_label, {}).get("median_ms")
    if base:
        for label, r in info.items():
            if "median_ms" in r and not label.startswith("plexus.function"):
                r["ratio"] = round(r["median_ms"] / base, 3)
    for extra in extras:
        for label, r in extra["cases"].get(case, {}).items():
            info[label] = dict(r, separate_process=True)
    return info


def median_table(results):
    """(labels, rows) of median ms per case and runner, "median (ratio)"."""
    labels = []
    for info in results.values():
        labels += [k for k in info if k not in labels]
    rows = []
    for case, info in results.items():
        row = [case]
        for label in labels:
            r = info.get(label, {})
            if "median_ms" not in r:
                row.append("error" if "error" in r else "-")
            elif "ratio" in r:
                row.append("%.4g (%.2f)" % (r["median_ms"], r["ratio"]))
            else:
                row.append("%.4g" % r["median_ms"])
        rows.append(row)
    return labels, rows


def print_table(title, header, rows):
    """A Markdown table (so that it can be pasted into docs/benchmarks.md)."""
    print()
    print(title)
    print()
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    fmt = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(fmt(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(fmt(r))
    print(flush=True)


def write_json(path, data):
    if path:
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
