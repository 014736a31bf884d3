"""The real-model benchmark (step 6 of bench/run.sh): the Keras models of
keras_models.py, frozen by TensorFlow and converted by tf2onnx, timed in
Plexus, ONNX Runtime, TensorFlow and PyTorch with one thread and with all
threads, then again with a busy loop on one core (the contention rows), each
output checked against TensorFlow's, with goal lines per model case.

    python bench/peers/models.py --bin /abs/path/plexus_graph_bench \
        [--seconds 1] [--cases REGEX] [--only all|quiet|contention] \
        [--all-threads N] [--out FILE]

Runtimes (each timing in a process of its own, so that one runtime's idle
threads cannot slow another's):
  plexus               plexus_graph_bench: one Session on the frozen GraphDef.
  onnxruntime          InferenceSession on the tf2onnx model, CPU provider.
  tensorflow           tf.compat.v1.Session on the frozen GraphDef.
  torch (onnx2torch)   the tf2onnx model turned into a torch.fx GraphModule by
                       onnx2torch, run eagerly. This is not a hand-written
                       PyTorch module: it pays per-node fx dispatch and runs
                       the converter's layouts (NHWC transposes included).
  torch (torchvision)  resnet50 only: torchvision.models.resnet50 with the
                       Keras model's weights (read from the frozen graph by
                       a TensorFlow subprocess and cached in
                       bench/.cache/torchvision/). Keras's ResNet50 is ResNet
                       v1, with the stride-2 of each stage's first block in
                       its 1x1 convolution, where torchvision (v1.5) has it in
                       the 3x3 one, so those two strides are swapped on the
                       torchvision module; Keras's convolution biases are
                       folded into the batch norms' means, and Keras's batch
                       norm epsilon (1.001e-5) is set. The input is
                       transposed to NCHW once, before timing, and the
                       softmax is part of the timed call. The output check
                       shows that the result is the same function.
                       There is no such row for the other models: torchvision's
                       mobilenet_v2 pads its stride-2 convolutions
                       symmetrically where Keras pads (0, 1) like TensorFlow's
                       SAME, its efficientnet_b0 and mobilenet_v3_small
                       differ from Keras's in their stems and preprocessing,
                       and densenet121 and the transformer have no Keras
                       layout twin; making them match would need rewritten
                       modules, not torchvision's.

Threads: "1" and "all". All is --all-threads (run.sh passes BENCH_THREADS
when it is set), else the CPUs this process may use (os.sched_getaffinity).
Plexus gets `--threads N` when its usage mentions that flag, else
OMP_NUM_THREADS=N (older binaries). ONNX Runtime: intra_op_num_threads=N,
inter_op_num_threads=1, sequential. TensorFlow: intra_op=N, inter_op=1.
PyTorch: torch.set_num_threads(N), set_num_interop_threads(1).

Contention (the slowdown as a ratio): with all threads, Plexus, ONNX Runtime
and TensorFlow (--contention-runtimes) are timed again while a child process
runs `while True: pass` pinned to the last CPU. It starts 0.5 s before the
timed process (so that the scheduler, and Plexus's load sampling, see it)
and is killed after it, followed by a 0.3 s pause. The row reports the
median under contention and slowdown = contended median / quiet median.
Goal: slowdown <= 2.5x. `--only contention` (BENCH_ONLY=contention) times
just the all-thread quiet runs and the contended runs of those runtimes.

Checks: each runtime's output (every quiet timing) against TensorFlow's for
the same input: ok when max |x - tf| <= 1e-3 * max |tf|. The models have
random weights and end in a softmax over 10 or 1000 classes, so outputs are
about 1e-3 to 1e-1: the tolerance is relative to their size, not to 1.

Goals per model case: plexus median <= onnxruntime median with one thread
and with all threads; under contention, plexus slowdown <= 2.5x.
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
import run_peer  # noqa: E402
import numpy as np  # noqa: E402

common.quiet_tensorflow()

TITLES = {
    "mobilenet_v2": "Keras MobileNetV2 (alpha 0.35), [B,96,96,3] -> softmax[1000]",
    "mobilenet_v3_small": "Keras MobileNetV3Small, [B,96,96,3] -> softmax[1000]",
    "efficientnet_b0": "Keras EfficientNetB0, [B,64,64,3] -> softmax[1000]",
    "resnet50": "Keras ResNet50, [B,64,64,3] -> softmax[1000]",
    "densenet121": "Keras DenseNet121, [B,64,64,3] -> softmax[1000]",
    "transformer_encoder": "2-block post-norm transformer encoder (4 heads, d 128, "
                           "tanh-GELU FF 512), [B,64,128] -> softmax[10]",
}
LABELS = {"plexus": "plexus", "onnxruntime": "onnxruntime", "tensorflow": "tensorflow",
          "torch": "torch (onnx2torch)", "torchvision": "torch (torchvision)"}
TORCHVISION_MODELS = ("resnet50",)
TOLERANCE = 1e-3      # relative to max |tf|
SLOWDOWN_GOAL = 2.5


def usable_cpus():
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


# --- Plexus -----------------------------------------------------------------

def plexus_has_threads_flag(binary):
    proc = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    return "--threads" in proc.stdout + proc.stderr


def time_plexus(binary, case, threads, seconds, min_iters, threads_flag):
    out_dir = tempfile.mkdtemp(prefix="plexus_models_")
    cmd = [binary, "--graph", case["graph"], "--fetch", case["fetch"],
           "--feed", "%s=%s" % (case["input"], case["input_file"]), "--batch", str(case["batch"]),
           "--warmup", "10", "--iters", str(min_iters), "--seconds", str(seconds),
           "--save-outputs", out_dir]
    env = dict(os.environ)
    if threads_flag:
        cmd += ["--threads", str(threads)]
    else:
        env["OMP_NUM_THREADS"] = str(threads)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["no output"])[-1][:300])
    result = json.loads(lines[-1])
    out = np.load(os.path.join(out_dir, "0.npy"))
    stats = {k: result[k] for k in ("median_us", "p10_us", "p90_us", "iters")}
    stats["setting"] = result.get("threads") or "OMP_NUM_THREADS=%d" % threads
    return stats, out


# --- The peers, each run by this script's --worker mode in a process of its own

def from_run_peer(runtime):
    """The peer as run_peer.py builds it for steps 4-5 (the same settings:
    one inter-op thread, ONNX Runtime sequential and fully optimized,
    onnx2torch's GraphModule under inference_mode)."""

    def make(case, threads):
        info, make_case = run_peer.RUNNERS[runtime]("default", threads)
        fn, _ = make_case(case)
        return fn, "%s %s: %s" % (runtime, info["version"], info["threads"])

    return make


def torch_threads(threads):
    import torch

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    return "torch %s: set_num_threads(%d) set_num_interop_threads(1)" % (torch.__version__,
                                                                         threads)


def make_torchvision(case, threads):
    """torchvision's resnet50 with the Keras model's weights (see the header)."""
    import torch
    import torchvision

    if case["model"] not in TORCHVISION_MODELS:
        raise RuntimeError("no torchvision twin of %s" % case["model"])
    setting = torch_threads(threads)
    w = np.load(keras_resnet50_weights(case["graph"]))
    model = torchvision.models.resnet50(weights=None).eval()

    def load(conv, bn, keras):
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))  # noqa: E731
        conv.weight.copy_(t(w[keras + "_conv/kernel"].transpose(3, 2, 0, 1)))  # HWIO -> OIHW
        bn.weight.copy_(t(w[keras + "_bn/gamma"]))
        bn.bias.copy_(t(w[keras + "_bn/beta"]))
        # BN(conv(x) + b) with mean m is BN(conv(x)) with mean m - b.
        bn.running_mean.copy_(t(w[keras + "_bn/mean"] - w[keras + "_conv/bias"]))
        bn.running_var.copy_(t(w[keras + "_bn/variance"]))
        bn.eps = float(w[keras + "_bn/epsilon"])

    with torch.no_grad():
        load(model.conv1, model.bn1, "conv1")
        for stage, layer in enumerate([model.layer1, model.layer2, model.layer3, model.layer4], 2):
            for b, block in enumerate(layer, 1):
                name = "conv%d_block%d" % (stage, b)
                load(block.conv1, block.bn1, name + "_1")
                load(block.conv2, block.bn2, name + "_2")
                load(block.conv3, block.bn3, name + "_3")
                if block.downsample is not None:
                    load(block.downsample[0], block.downsample[1], name + "_0")
                if stage > 2 and b == 1:  # ResNet v1: the 1x1 convolution strides
                    block.conv1.stride, block.conv2.stride = (2, 2), (1, 1)
        model.fc.weight.copy_(torch.from_numpy(w["predictions/kernel"].T.copy()))
        model.fc.bias.copy_(torch.from_numpy(w["predictions/bias"]))
    x = torch.from_numpy(np.load(case["input_file"]).transpose(0, 3, 1, 2).copy())

    def run():
        with torch.inference_mode():
            return torch.softmax(model(x), dim=1)

    return run, setting + ", torchvision.models.resnet50 (v1 strides), eager"


def keras_resnet50_weights(graph):
    """The .npz of the ResNet50 weights in the frozen graph, made once by a
    TensorFlow subprocess (this process may hold torch) and cached."""
    import hashlib

    with open(graph, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    path = os.path.join(common.CACHE_DIR, "torchvision", "resnet50_%s.npz" % digest)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--bin", "-",
                        "--export-weights", graph, path], check=True, capture_output=True)
    return path


def export_weights(graph, path):
    """Writes the weights of each Keras layer of a frozen Keras graph, by
    layer name: <conv>/kernel (HWIO), <conv>/bias, <bn>/gamma, beta, mean,
    variance, epsilon, and predictions/kernel, bias. Found by following the
    inputs of Conv2D, MatMul, BiasAdd and the batch norm's arithmetic
    (batchnorm/add = variance + epsilon, mul = rsqrt * gamma,
    mul_2 = mean * ..., sub = beta - ...) back to their constants."""
    import tensorflow as tf

    gd = tf.compat.v1.GraphDef()
    with open(graph, "rb") as f:
        gd.ParseFromString(f.read())
    nodes = {n.name: n for n in gd.node}

    def const(name):  # through Identity, Reshape, Squeeze, ... to the Const
        n = nodes[name.split(":")[0].lstrip("^")]
        while n.op != "Const":
            n = nodes[n.input[0].split(":")[0]]
        return tf.make_ndarray(n.attr["value"].tensor)

    def layer(part):  # "conv2_block1_1_conv_1" -> "conv2_block1_1_conv"
        return re.sub(r"_\d+$", "", part)

    w = {}
    for n in gd.node:
        parts = n.name.split("/")
        if n.op in ("Conv2D", "MatMul", "BiasAdd") and len(parts) >= 2:
            w[layer(parts[-2]) + ("/bias" if n.op == "BiasAdd" else "/kernel")] = const(n.input[1])
        elif len(parts) >= 3 and parts[-2] == "batchnorm":
            bn = layer(parts[-3])
            if parts[-1] == "add":
                w[bn + "/variance"], w[bn + "/epsilon"] = const(n.input[0]), const(n.input[1])
            elif parts[-1] == "mul":
                w[bn + "/gamma"] = const(n.input[1])
            elif parts[-1] == "mul_2":
                w[bn + "/mean"] = const(n.input[0])
            elif parts[-1] == "sub":
                w[bn + "/beta"] = const(n.input[0])
    np.savez(path, **w)


PEERS = {"onnxruntime": from_run_peer("onnxruntime"), "tensorflow": from_run_peer("tensorflow"),
         "torch": from_run_peer("torch"), "torchvision": make_torchvision}


def worker(args):
    case = next(c for c in common.load_cases() if c["id"] == args.case)
    fn, setting = PEERS[args.worker](case, args.threads)
    stats = common.time_calls(fn, args.seconds, args.min_iters, warmup=10)
    np.save(args.save, run_peer.to_numpy(fn()))
    stats["setting"] = setting
    print(json.dumps(stats), flush=True)


def time_peer(runtime, case, threads, seconds, min_iters):
    out_file = tempfile.mktemp(prefix="peer_", suffix=".npy")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", runtime, "--case", case["id"],
           "--threads", str(threads), "--seconds", str(seconds), "--min-iters", str(min_iters),
           "--save", out_file, "--bin", "-"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    sys.stderr.write(proc.stderr)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["no output"])[-1][:300])
    stats = json.loads(lines[-1])
    out = np.load(out_file)
    os.remove(out_file)
    return {k: stats[k] for k in ("median_us", "p10_us", "p90_us", "iters", "setting")}, out


# --- The run ------------------------------------------------------------------

def check(out, ref):
    """(ok, max |out - ref|, text) for an output against TensorFlow's."""
    if ref is None:
        return None, None, "no reference"
    if out.shape != ref.shape:
        return False, None, "SHAPE %s vs %s" % (list(out.shape), list(ref.shape))
    err = float(np.max(np.abs(out.astype(np.float64) - ref))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    ok = err <= TOLERANCE * (scale or 1.0)
    return ok, err, ("ok %.1e" % err) if ok else ("DIFF %.1e (max|tf| %.1e)" % (err, scale))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="plexus_graph_bench (an absolute path)")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--min-iters", type=int, default=10)
    parser.add_argument("--cases", default="", help="regex on case ids (mobilenet_v2_b1)")
    parser.add_argument("--only", choices=["all", "quiet", "contention"], default="all")
    parser.add_argument("--all-threads", type=int, default=0,
                        help="the 'all threads' count (default: the usable CPUs)")
    parser.add_argument("--runtimes", default="plexus,onnxruntime,tensorflow,torch,torchvision")
    parser.add_argument("--contention-runtimes", default="plexus,onnxruntime,tensorflow")
    parser.add_argument("--out", default=os.path.join(common.BENCH_DIR, "results_models.json"))
    # Internal: time one peer on one case in this process (see time_peer),
    # or write the ResNet50 weights of a frozen graph (keras_resnet50_weights).
    parser.add_argument("--worker", choices=sorted(PEERS), help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    parser.add_argument("--export-weights", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.export_weights:
        return export_weights(*args.export_weights)
    if args.worker:
        return worker(args)

    n_all = args.all_threads or usable_cpus()
    thread_counts = [1] if n_all == 1 else [1, n_all]
    if args.only == "contention":
        thread_counts = [n_all]
    contended = [] if n_all == 1 or args.only == "quiet" else args.contention_runtimes.split(",")
    runtimes = args.runtimes.split(",")
    if args.only == "contention":  # TensorFlow stays: it is the checks' reference
        runtimes = [r for r in runtimes if r in contended or r == "tensorflow"]
    # TensorFlow first: its output is the reference of the checks.
    runtimes = ["tensorflow"] + [r for r in runtimes if r != "tensorflow"]
    threads_flag = plexus_has_threads_flag(args.bin) if "plexus" in runtimes else False
    cases = [c for c in common.load_cases()
             if c["group"] == "keras" and re.search(args.cases, c["id"])]

    if not cases:
        print("no real-model case matches %r" % args.cases)
        return

    def timed(runtime, case, threads):
        if runtime == "plexus":
            return time_plexus(args.bin, case, threads, args.seconds, args.min_iters,
                               threads_flag)
        return time_peer(runtime, case, threads, args.seconds, args.min_iters)

    rows = []
    for case in cases:
        ref = None
        row = {"case": case["id"], "model": case["model"], "batch": case["batch"],
               "quiet": {}, "contention": {}}
        for runtime in runtimes:
            if runtime == "torchvision" and case["model"] not in TORCHVISION_MODELS:
                continue
            for threads in thread_counts:
                key = "%s/%d" % (runtime, threads)
                try:
                    stats, out = timed(runtime, case, threads)
                except Exception as e:  # reported in the table, not fatal
                    row["quiet"][key] = {"runtime": runtime, "threads": threads,
                                         "error": str(e)[:200]}
                    continue
                if runtime == "tensorflow" and ref is None:
                    ref = out.astype(np.float64)
                stats["ok"], stats["max_abs_diff_vs_tf"], stats["check"] = check(out, ref)
                row["quiet"][key] = {"runtime": runtime, "threads": threads, **stats}
                if threads != n_all or runtime not in contended:
                    continue
                try:
                    with BusyLoop():
                        busy, _ = timed(runtime, case, threads)
                    busy["slowdown"] = round(busy["median_us"] / stats["median_us"], 3)
                except Exception as e:
                    busy = {"error": str(e)[:200]}
                row["contention"][runtime] = {"runtime": runtime, "threads": threads,
                                              "quiet_median_us": stats["median_us"], **busy}
        row["goals"] = goals(row, thread_counts)
        rows.append(row)
        print(json.dumps(row), flush=True)

    meta = {"machine": os.uname().machine, "cpus": usable_cpus(), "all_threads": n_all,
            "plexus_threads": None if "plexus" not in runtimes else
                              "--threads N" if threads_flag else "OMP_NUM_THREADS=N",
            "load_average_at_end": os.getloadavg(), "seconds_per_case": args.seconds,
            "tolerance": "max|x - tf| <= %g * max|tf|" % TOLERANCE,
            "slowdown_goal": SLOWDOWN_GOAL}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print_tables(rows, thread_counts, n_all, meta)
    print("\nwrote %s" % args.out)


def median(entry):
    return None if not entry or "error" in entry else entry["median_us"]


def goals(row, thread_counts):
    """{goal: True/False/None}: plexus <= onnxruntime per thread count, and
    plexus's slowdown under contention <= SLOWDOWN_GOAL."""
    g = {}
    for t in thread_counts:
        p, o = median(row["quiet"].get("plexus/%d" % t)), median(row["quiet"].get("onnxruntime/%d" % t))
        g["plexus <= onnxruntime, %d thread%s" % (t, "s" if t > 1 else "")] = (
            None if p is None or o is None else p <= o)
    c = row["contention"].get("plexus")
    if c is not None:
        g["plexus slowdown <= %.1fx" % SLOWDOWN_GOAL] = (
            None if "error" in c else c["slowdown"] <= SLOWDOWN_GOAL)
    return g


def ms(us):
    return "%.2f" % (us / 1000)


def print_tables(rows, thread_counts, n_all, meta):
    runtimes = [r for r in LABELS if any(e["runtime"] == r for row in rows for e in
                                         list(row["quiet"].values()) + list(row["contention"].values()))]
    print("\n## Real models: median ms per run (in brackets under contention: the slowdown, "
          "contended / quiet median)")
    print("check: each output against TensorFlow's, ok when %s (random weights, softmax "
          "outputs of about 1e-3; the number is max|x - tf|, the worst over thread counts)"
          % meta["tolerance"])
    met = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        mrows = [r for r in rows if r["model"] == model]
        cols = [r for r in runtimes if any(k.startswith(r + "/") for m in mrows for k in m["quiet"])
                or any(r in m["contention"] for m in mrows)]
        print("\n### %s: %s\n" % (model, TITLES.get(model, model)))
        head = ["batch", "threads"] + [LABELS.get(r, r) for r in cols] + ["ORT/plexus"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in mrows:
            for t in thread_counts:
                cells = []
                for r in cols:
                    e = row["quiet"].get("%s/%d" % (r, t))
                    cells.append("-" if e is None else "error" if "error" in e else ms(e["median_us"]))
                p = median(row["quiet"].get("plexus/%d" % t))
                o = median(row["quiet"].get("onnxruntime/%d" % t))
                ratio = "-" if p is None or o is None else "%.2f" % (o / p)
                print("| %d | %d | %s | %s |" % (row["batch"], t, " | ".join(cells), ratio))
            if row["contention"]:
                cells = []
                for r in cols:
                    c = row["contention"].get(r)
                    cells.append("-" if c is None else "error" if "error" in c else
                                 "%s (%.2fx)" % (ms(c["median_us"]), c["slowdown"]))
                print("| %d | %d + busy core | %s | - |" % (row["batch"], n_all, " | ".join(cells)))
        print()
        for row in mrows:
            checks = {}  # runtime -> the worst check over its thread counts
            for e in row["quiet"].values():
                if e["runtime"] == "tensorflow":
                    continue
                if "error" in e:
                    worst = (2, 0.0, "error: " + e["error"][:80])
                else:
                    worst = (0 if e["ok"] else 1, e["max_abs_diff_vs_tf"] or 0.0, e["check"])
                checks[e["runtime"]] = max(checks.get(e["runtime"], worst), worst)
            goal_text = "; ".join("%s: %s" % (g, "n/a" if v is None else "MET" if v else "not met")
                                  for g, v in row["goals"].items())
            for g, v in row["goals"].items():
                if g.startswith("plexus"):
                    met.setdefault(g, []).append(v)
            print("- batch %d goals: %s" % (row["batch"], goal_text))
            print("  check vs tensorflow: %s" % (", ".join(
                "%s %s" % (LABELS.get(r, r), c[2]) for r, c in checks.items()) or "-"))
    if met:
        print("\n## Goals met by plexus over the cases")
        for g, vs in met.items():
            known = [v for v in vs if v is not None]
            print("- %s: %d of %d%s" % (g, sum(known), len(known),
                                        "" if len(known) == len(vs) else
                                        " (%d not measured)" % (len(vs) - len(known))))
    settings = {}
    for row in rows:
        for e in list(row["quiet"].values()):
            if "setting" in e:
                settings.setdefault(e["runtime"], {})[e["threads"]] = e["setting"]
    print("\n## Settings (all threads = %d%s)" % (n_all, "" if not meta["plexus_threads"] else
                                                  "; Plexus's threads set by " + meta["plexus_threads"]))
    for r, by_threads in settings.items():
        for t, s in sorted(by_threads.items()):
            print("- %s, %d thread%s: %s" % (LABELS.get(r, r), t, "s" if t > 1 else "", s))
    print("- load average at the end: %s" % ", ".join("%.2f" % v for v in meta["load_average_at_end"]))


if __name__ == "__main__":
    main()
