"""The real-model benchmark: the Keras models of keras_models.py (frozen
by TensorFlow, converted by tf2onnx) timed in Plexus, ONNX Runtime and
TensorFlow with one thread and with all threads, then again with a busy
loop on one core (the contention rows), each output checked against
TensorFlow's, with a goal line per model.

    python bench/peers/models.py --bin build-bench/bin/plexus_graph_bench \
        [--seconds 1] [--cases REGEX] [--only quiet|contention] [--out FILE]

Thread settings: Plexus gets `--threads N` (its SessionOptions), ONNX
Runtime intra_op_num_threads = N with one inter-op thread, TensorFlow
intra_op_parallelism_threads = N and inter_op = 1. "All" is the CPUs this
process may use (os.sched_getaffinity).

Contention: a child process spins (`while True: pass`) pinned to the last
CPU while the case is timed with all threads; the row reports the median
under contention and its ratio to the quiet all-thread median. Goal: at
most 2.5x.

Checks: each runtime's output against TensorFlow's for the same input:
ok when max |a - tf| <= 1e-3 * max |tf| (outputs are softmax
probabilities of random-weight models, about 1e-3 each, so the tolerance
is relative to their size, not to 1).
"""
import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import numpy as np  # noqa: E402

common.quiet_tensorflow()


def all_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def spin(cpu):
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass
    while True:
        pass


class BusyLoop:
    """A process spinning on the last CPU while the block runs."""

    def __enter__(self):
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
        self.proc = multiprocessing.Process(target=spin, args=(cpus[-1],), daemon=True)
        self.proc.start()
        time.sleep(0.5)  # let the scheduler and Plexus's load sampling see it
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.join(5)
        time.sleep(0.3)


def time_plexus(binary, case, threads, seconds, min_iters):
    out_dir = tempfile.mkdtemp(prefix="plexus_models_")
    cmd = [binary, "--graph", case["graph"], "--fetch", case["fetch"],
           "--feed", "%s=%s" % (case["input"], case["input_file"]), "--batch", str(case["batch"]),
           "--threads", str(threads), "--warmup", "10", "--iters", str(min_iters),
           "--seconds", str(seconds), "--save-outputs", out_dir]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["no output"])[-1][:300])
    result = json.loads(lines[-1])
    out = np.load(os.path.join(out_dir, "0.npy"))
    return result["median_us"], result["p90_us"], out


def make_onnxruntime(case, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(case["onnx"], so, providers=["CPUExecutionProvider"])
    name, out = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    x = np.load(case["input_file"])
    return lambda: sess.run([out], {name: x})[0]


def make_tensorflow(case, threads):
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads,
                                      inter_op_parallelism_threads=1)
    gd = tf.compat.v1.GraphDef()
    with open(case["graph"], "rb") as f:
        gd.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    sess = tf.compat.v1.Session(graph=graph, config=config)
    fn = sess.make_callable(graph.get_tensor_by_name(case["fetch"]),
                            feed_list=[graph.get_tensor_by_name(case["input"])])
    x = np.load(case["input_file"])
    return lambda: fn(x)


def time_python(runtime, case, threads, seconds, min_iters):
    """Times a peer in a process of its own (one runtime's idle threads
    must not slow another's), through this script's --worker mode."""
    out_file = tempfile.mktemp(prefix="peer_", suffix=".npy")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", runtime, "--case", case["id"],
           "--threads", str(threads), "--seconds", str(seconds), "--min-iters", str(min_iters),
           "--save", out_file, "--bin", "-"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["no output"])[-1][:300])
    stats = json.loads(lines[-1])
    out = np.load(out_file)
    os.remove(out_file)
    return stats["median_us"], stats["p90_us"], out


def worker(args):
    case = next(c for c in common.load_cases() if c["id"] == args.case)
    fn = PEERS[args.worker](case, args.threads)
    stats = common.time_calls(fn, args.seconds, args.min_iters, warmup=10)
    np.save(args.save, np.asarray(fn()))
    print(json.dumps(stats), flush=True)


PEERS = {"onnxruntime": make_onnxruntime, "tensorflow": make_tensorflow}


def check(out, ref):
    if ref is None or out is None:
        return None
    if out.shape != ref.shape:
        return "shape %s vs %s" % (out.shape, ref.shape)
    err = float(np.max(np.abs(out.astype(np.float64) - ref)))
    scale = float(np.max(np.abs(ref))) or 1.0
    return "ok" if err <= 1e-3 * scale else "MISMATCH (max err %.3g, max |tf| %.3g)" % (err, scale)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="plexus_graph_bench")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--min-iters", type=int, default=10)
    parser.add_argument("--cases", default="", help="regex on case ids")
    parser.add_argument("--only", choices=["all", "quiet", "contention"], default="all")
    parser.add_argument("--runtimes", default="plexus,onnxruntime,tensorflow")
    parser.add_argument("--out", default=os.path.join(common.BENCH_DIR, "results_models.json"))
    # Internal: time one peer on one case in this process (see time_python).
    parser.add_argument("--worker", choices=sorted(PEERS), help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)

    runtimes = args.runtimes.split(",")
    n_all = all_threads()
    thread_counts = [1] if n_all == 1 else [1, n_all]
    cases = [c for c in common.load_cases()
             if c["group"] == "keras" and re.search(args.cases, c["id"])]
    rows = []
    for case in cases:
        refs = {}
        row = {"case": case["id"], "quiet": {}, "contention": {}, "check": {}}
        # TensorFlow first: its output is the reference of the checks.
        for runtime in ["tensorflow"] + [r for r in runtimes if r != "tensorflow"]:
            for threads in thread_counts:
                if args.only == "contention" and threads != n_all:
                    continue
                try:
                    if runtime == "plexus":
                        median, p90, out = time_plexus(args.bin, case, threads, args.seconds,
                                                       args.min_iters)
                    else:
                        if runtime == "onnxruntime" and not case.get("onnx"):
                            raise RuntimeError("no ONNX model: %s" % case.get("onnx_error"))
                        median, p90, out = time_python(runtime, case, threads, args.seconds,
                                                       args.min_iters)
                except Exception as e:  # reported in the table, not fatal
                    row["quiet"]["%s/%d" % (runtime, threads)] = {"error": str(e)[:200]}
                    continue
                if runtime == "tensorflow":
                    refs.setdefault("tf", out.astype(np.float64))
                else:
                    row["check"][runtime] = check(out, refs.get("tf"))
                if args.only != "contention":
                    row["quiet"]["%s/%d" % (runtime, threads)] = {"median_us": median, "p90_us": p90}
                if threads == n_all and n_all > 1 and args.only != "quiet" and runtime != "tensorflow":
                    with BusyLoop():
                        if runtime == "plexus":
                            busy, busy_p90, _ = time_plexus(args.bin, case, threads, args.seconds,
                                                            args.min_iters)
                        else:
                            busy, busy_p90, _ = time_python(runtime, case, threads, args.seconds,
                                                            args.min_iters)
                    row["contention"][runtime] = {"median_us": busy, "p90_us": busy_p90,
                                                  "quiet_median_us": median,
                                                  "slowdown": round(busy / median, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)

    meta = {"machine": os.uname().machine, "cpus": n_all, "load_average_at_end": os.getloadavg(),
            "seconds_per_case": args.seconds}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print_tables(rows, thread_counts, n_all)


def ms(entry):
    if not entry:
        return "-"
    if "error" in entry:
        return "error"
    return "%.2f" % (entry["median_us"] / 1000)


def print_tables(rows, thread_counts, n_all):
    print("\n## Real models: median ms (goal: Plexus at or below ONNX Runtime)\n")
    head = "| case | threads | plexus | onnxruntime | tensorflow | ORT/plexus | goal |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for row in rows:
        for t in thread_counts:
            p = row["quiet"].get("plexus/%d" % t)
            o = row["quiet"].get("onnxruntime/%d" % t)
            tf = row["quiet"].get("tensorflow/%d" % t)
            if p is None and o is None:
                continue
            ratio, goal = "-", "-"
            if p and o and "median_us" in p and "median_us" in o:
                r = o["median_us"] / p["median_us"]
                ratio = "%.2f" % r
                goal = "met" if r >= 1.0 else "not met"
            print("| %s | %d | %s | %s | %s | %s | %s |" % (row["case"], t, ms(p), ms(o), ms(tf),
                                                            ratio, goal))
    if any(row["contention"] for row in rows):
        print("\n## Contention: %d threads, a busy loop on one core (goal: slowdown <= 2.5x)\n"
              % n_all)
        print("| case | runtime | quiet ms | contended ms | slowdown | goal |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            for runtime, c in row["contention"].items():
                print("| %s | %s | %.2f | %.2f | %.2fx | %s |" % (
                    row["case"], runtime, c["quiet_median_us"] / 1000, c["median_us"] / 1000,
                    c["slowdown"], "met" if c["slowdown"] <= 2.5 else "not met"))
    print("\n## Output checks against TensorFlow\n")
    for row in rows:
        print("- %s: %s" % (row["case"], ", ".join("%s %s" % (k, v) for k, v in row["check"].items())))


if __name__ == "__main__":
    main()
