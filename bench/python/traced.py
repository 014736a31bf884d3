"""Traced functions on small models: plexus.function against tf.function
(without and with XLA) and torch.compile (plus PyTorch eager for reference),
in one process, with the same weights and inputs.

Models (float32, weights drawn once with a fixed seed, He-scaled normal):
  mlp: x[B,784] -> dense 512 -> relu -> dense 512 -> relu -> dense 10, B = 1, 64
  cnn: x[B,28,28,1] -> conv 3x3 32 (VALID, bias) -> relu -> maxpool 2x2/2 ->
       conv 3x3 64 (VALID, bias) -> relu -> mean over H, W -> dense 10, B = 1, 32

Plexus and TensorFlow run NHWC with [kh,kw,cin,cout] filters; PyTorch runs the
same network in its own NCHW layout (the input and filters are transposed
once, before timing; the output [B,10] needs no transposing). Weights are
captured by the traced function in every framework (plexus.function and
tf.function capture the constant tensors they read; the torch function reads
module-level tensors), and the input is a tensor of the framework made
before timing, so a call is: run the traced graph, return a tensor.

Every output is compared with a float64 NumPy computation of the same model:
ok when max|out - ref| <= 1e-4 * max(1, max|ref|).

Timing as in eager_dispatch.py (warmup, then rounds over the runners of the
process in turn; the median per-call time over the rounds), reported in milliseconds.
ratio = peer / Plexus (above 1: Plexus is faster). The first call of each
runner (tracing and compiling) is timed apart and reported as "first call".

torch.compile cannot run in a process where TensorFlow is loaded: both carry
their own LLVM, and the process aborts with "CommandLine Error: Option
'bitcode-mdindex-threshold' registered more than once" (TensorFlow 2.21,
PyTorch 2.15). So a process times either the TensorFlow runners or the
PyTorch ones, each beside plexus.function; run.sh runs one process of each
kind (and one with Plexus alone, pinned to one thread) and joins their
columns in one table (--extra). Every ratio is taken against the
plexus.function time measured in the same process; the plexus column of the
other process is shown too ("plexus.function [torch process]").

  python bench/python/traced.py [--runners plexus,tf,xla] [--label TEXT] [--seconds 0.1]
                                [--repeats 7] [--extra other.json] [--json out.json]
"""
import argparse
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import plexus as px  # noqa: E402  (before TensorFlow: see _common.configure_threads)

DEFAULT_RUNNERS = "plexus,tf,xla"


def _runner_keys(argv):
    value = DEFAULT_RUNNERS
    for i, a in enumerate(argv):
        if a == "--runners" and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--runners="):
            value = a.split("=", 1)[1]
    return [k.strip() for k in value.split(",") if k.strip()]


# Load only the peers this process times (see above: TensorFlow and
# torch.compile cannot share a process).
_KEYS = _runner_keys(sys.argv[1:])
tf, torch = _common.configure_threads(tensorflow=bool({"tf", "xla"} & set(_KEYS)),
                                      pytorch=bool({"compile", "eager"} & set(_KEYS)))
import numpy as np  # noqa: E402

TOL = 1e-4
CASES = [("mlp", 1), ("mlp", 64), ("cnn", 1), ("cnn", 32)]


# ---- weights, inputs and the float64 reference -------------------------------


def make_weights():
    rng = np.random.default_rng(1234)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    return {
        "mlp": {"w1": he((784, 512), 784), "b1": bias(512), "w2": he((512, 512), 512), "b2": bias(512),
                "w3": he((512, 10), 512), "b3": bias(10)},
        "cnn": {"k1": he((3, 3, 1, 32), 9), "c1": bias(32), "k2": he((3, 3, 32, 64), 9 * 32), "c2": bias(64),
                "w": he((64, 10), 64), "b": bias(10)},
    }


def make_input(model, batch):
    rng = np.random.default_rng(100 + batch)
    shape = (batch, 784) if model == "mlp" else (batch, 28, 28, 1)
    return rng.standard_normal(shape).astype(np.float32)


def reference(model, w, x):
    w = {k: v.astype(np.float64) for k, v in w.items()}
    x = x.astype(np.float64)
    relu = lambda v: np.maximum(v, 0.0)
    if model == "mlp":
        h = relu(x @ w["w1"] + w["b1"])
        h = relu(h @ w["w2"] + w["b2"])
        return h @ w["w3"] + w["b3"]

    def conv(v, k, c):  # VALID, stride 1, NHWC
        win = np.lib.stride_tricks.sliding_window_view(v, (3, 3), axis=(1, 2))  # [B,H',W',C,3,3]
        return np.einsum("bhwcij,ijco->bhwo", win, k) + c

    h = relu(conv(x, w["k1"], w["c1"]))
    b, hh, ww, c = h.shape
    h = h[:, : hh // 2 * 2, : ww // 2 * 2].reshape(b, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
    h = relu(conv(h, w["k2"], w["c2"]))
    return h.mean(axis=(1, 2)) @ w["w"] + w["b"]


# ---- the runners: each returns (call, input) ----------------------------------


def plexus_model(model, w):
    p = {k: px.constant(v) for k, v in w.items()}
    if model == "mlp":
        @px.function
        def f(x):
            h = px.nn.relu(px.matmul(x, p["w1"]) + p["b1"])
            h = px.nn.relu(px.matmul(h, p["w2"]) + p["b2"])
            return px.matmul(h, p["w3"]) + p["b3"]
    else:
        @px.function
        def f(x):
            h = px.nn.relu(px.nn.conv2d(x, p["k1"], strides=1, padding="VALID") + p["c1"])
            h = px.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
            h = px.nn.relu(px.nn.conv2d(h, p["k2"], strides=1, padding="VALID") + p["c2"])
            h = px.reduce_mean(h, axis=[1, 2])
            return px.matmul(h, p["w"]) + p["b"]
    return f, (lambda x: px.constant(x)), (lambda y: y.numpy())


def tf_model(model, w, jit):
    t = {k: tf.constant(v) for k, v in w.items()}
    if model == "mlp":
        def f(x):
            h = tf.nn.relu(tf.matmul(x, t["w1"]) + t["b1"])
            h = tf.nn.relu(tf.matmul(h, t["w2"]) + t["b2"])
            return tf.matmul(h, t["w3"]) + t["b3"]
    else:
        def f(x):
            h = tf.nn.relu(tf.nn.conv2d(x, t["k1"], strides=1, padding="VALID") + t["c1"])
            h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
            h = tf.nn.relu(tf.nn.conv2d(h, t["k2"], strides=1, padding="VALID") + t["c2"])
            h = tf.reduce_mean(h, axis=[1, 2])
            return tf.matmul(h, t["w"]) + t["b"]
    return tf.function(f, jit_compile=jit), (lambda x: tf.constant(x)), (lambda y: y.numpy())


def torch_fn(model, w):
    F = torch.nn.functional
    if model == "mlp":
        t = {k: torch.from_numpy(v.copy()) for k, v in w.items()}

        def f(x):
            h = torch.relu(torch.addmm(t["b1"], x, t["w1"]))
            h = torch.relu(torch.addmm(t["b2"], h, t["w2"]))
            return torch.addmm(t["b3"], h, t["w3"])
    else:
        t = {k: torch.from_numpy(np.ascontiguousarray(v.transpose(3, 2, 0, 1))) if v.ndim == 4
             else torch.from_numpy(v.copy()) for k, v in w.items()}

        def f(x):
            h = torch.relu(F.conv2d(x, t["k1"], t["c1"]))
            h = F.max_pool2d(h, 2, 2)
            h = torch.relu(F.conv2d(h, t["k2"], t["c2"]))
            h = h.mean(dim=(2, 3))
            return torch.addmm(t["b"], h, t["w"])
    to_in = ((lambda x: torch.from_numpy(x.copy())) if model == "mlp"
             else (lambda x: torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))))
    return f, to_in, (lambda y: y.numpy())


def torch_model(model, w, compiled):
    f, to_in, to_np = torch_fn(model, w)
    if compiled:
        f = torch.compile(f, dynamic=False)

    def call(x):
        with torch.no_grad():
            return f(x)
    return call, to_in, to_np


# key -> (name in the tables, maker)
RUNNERS = {
    "plexus": ("plexus.function", lambda m, w: plexus_model(m, w)),
    "tf": ("tf.function", lambda m, w: tf_model(m, w, False)),
    "xla": ("tf.function (XLA)", lambda m, w: tf_model(m, w, True)),
    "compile": ("torch.compile", lambda m, w: torch_model(m, w, True)),
    "eager": ("torch eager", lambda m, w: torch_model(m, w, False)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.1, help="timed seconds per repeat and runner")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=10,
                    help="least warmup calls after the first one (and at least 0.2 s of them)")
    ap.add_argument("--runners", default=DEFAULT_RUNNERS,
                    help="comma-separated, of: " + ", ".join(RUNNERS) + " (TensorFlow's and torch's not together)")
    ap.add_argument("--label", default="", help="appended to the name of the plexus runner")
    ap.add_argument("--extra", action="append", default=[],
                    help="JSON of an earlier run (another process) whose columns join the tables")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    keys = _KEYS
    for k in keys:
        if k not in RUNNERS:
            ap.error(f"unknown runner {k!r}")
    if {"tf", "xla"} & set(keys) and "compile" in keys:
        ap.error("torch.compile cannot run beside TensorFlow in one process (see the top of this file)")
    weights = make_weights()
    extras = []
    for path in args.extra:
        import json
        with open(path) as f:
            extras.append(json.load(f))

    results, problems = {}, []
    for model, batch in CASES:
        case = f"{model} b{batch}"
        x = make_input(model, batch)
        ref = reference(model, weights[model], x)
        scale = max(1.0, float(np.abs(ref).max()))
        fns, info = {}, {}
        for key in keys:
            name, make = RUNNERS[key]
            label = name + (args.label if key == "plexus" else "")
            try:
                call, to_in, to_np = make(model, weights[model])
                xin = to_in(x)
                t0 = time.perf_counter()
                y = call(xin)
                first = time.perf_counter() - t0
                err = float(np.abs(to_np(y).astype(np.float64) - ref).max())
                ok = err <= TOL * scale
                info[label] = {"first_call_ms": round(first * 1e3, 2), "max_abs_err": err, "ok": bool(ok)}
                if not ok:
                    problems.append(f"{case}: {label} differs from the reference by {err:.3g}")
                fns[label] = (lambda c=call, a=xin: c(a))
            except Exception as e:  # report the failure, keep the others running
                msg = "".join(traceback.format_exception_only(type(e), e)).strip()
                info[label] = {"error": msg[-2000:]}
                problems.append(f"{case}: {label} failed: {msg.splitlines()[0][:300]}")
                print(f"[{case}] {label} failed:\n{traceback.format_exc()}", file=sys.stderr)
        timed = _common.time_interleaved(fns, args.seconds, args.repeats, args.warmup)
        _common.join_case(info, timed, "plexus.function" + args.label, extras, case)
        results[case] = info
    for extra in extras:
        problems += [p + " (separate process)" for p in extra.get("problems", [])]

    labels, rows = _common.median_table(results)
    _common.print_table(
        "Traced functions, median ms per call (%d repeats of ~%g s each); in parentheses: "
        "peer / plexus.function of the same process" % (args.repeats, args.seconds), ["case"] + labels, rows)
    rows = [[case] + [str(info.get(l, {}).get("first_call_ms", "-")) for l in labels]
            for case, info in results.items()]
    _common.print_table("First call (trace + compile + run), ms", ["case"] + labels, rows)
    rows = [[case] + [("%.2g" % info[l]["max_abs_err"] + ("" if info[l]["ok"] else " FAIL"))
                      if "max_abs_err" in info.get(l, {}) else "-" for l in labels]
            for case, info in results.items()]
    _common.print_table("max |out - float64 reference| (ok when <= %g * max(1, max|ref|))" % TOL,
                        ["case"] + labels, rows)
    for p in problems:
        print("PROBLEM:", p)

    versions = {"plexus": px.__version__}
    if torch is not None:
        versions["torch"] = torch.__version__
    if tf is not None:
        versions["tensorflow"] = tf.__version__
    for extra in extras:
        versions.update(extra.get("versions", {}))
    _common.write_json(args.json, {
        "versions": versions, "tolerance": f"max|out - ref| <= {TOL} * max(1, max|ref|), ref in float64",
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("PLEXUS_", "OMP_", "OPENBLAS_", "TORCHINDUCTOR_"))},
        "process_threads_after": _common.process_threads(),
        "seconds_per_repeat": args.seconds, "repeats": args.repeats, "warmup_calls": args.warmup,
        "problems": problems, "cases": results})
    return 1 if any("FAIL" in p or "differs" in p for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
