"""One training step (forward, gradients, Adam update) of a small MLP and a
small CNN on the CPU: plexus.function against tf.function (without and with
XLA), PyTorch eager and torch.compile, with the same weights and batch.

Models (float32, weights drawn once with a fixed seed, He-scaled normal), loss
the mean sparse softmax cross entropy over 10 classes:
  mlp: x[64,784] -> dense 512 -> relu -> dense 512 -> relu -> dense 10
  cnn: x[64,28,28,1] -> conv 3x3 32 (VALID, bias) -> relu -> maxpool 2x2/2 ->
       conv 3x3 64 (VALID, bias) -> relu -> mean over H, W -> dense 10
(the models of traced.py, trained at batch 64). Optimizer: Adam, learning
rate 1e-3, betas 0.9 / 0.999, epsilon 1e-7 in every framework.

A step is what a training loop calls per batch, with the batch already a
tensor of the framework:
  plexus: a plexus.function holding a GradientTape and
          plexus.optimizers.Adam.apply_gradients; returns the loss;
  tf / xla: the same with tf.GradientTape and keras' Adam in tf.function
          (jit_compile=False / True);
  torch eager: zero_grad(set_to_none=True), forward, loss.backward(),
          torch.optim.Adam.step() (its default single-tensor CPU path);
  torch.compile: the forward and loss compiled (backward by AOTAutograd), and
          torch.compile(optimizer.step).

Checks: every runner starts from the same weights and takes 5 steps on the
same batch; its 5 losses are compared with a float64 reference (PyTorch
autograd in float64 and Adam written out with the runner's formula:
TensorFlow's for Plexus and keras, PyTorch's for torch, which differ in where
epsilon goes): ok when
|loss - ref| <= 1e-4 * max(1, |ref|). The loss of step k depends on the
gradients and updates of the steps before it, so this checks all three.

Timing as in traced.py (warmup, then rounds over the runners of the process
in turn; median per-step time over the rounds), in milliseconds; ratio =
peer / plexus.function of the same process (above 1: Plexus is faster).
TensorFlow and torch.compile cannot share a process (see traced.py), so
run.sh runs this once per group and joins the columns (--extra).

Peak memory (--memory RUNNER --case CASE, one fresh process per runner and
case, importing only its own framework): the framework is warmed up by two
steps of a tiny model of the same kind (width 2), which loads its libraries
and starts its threads; the resident set size (RSS) is read then (base);
then the model and optimizer are made and 20
warmup steps run; the peak-RSS counter is reset (/proc/self/clear_refs) and
the RSS read (steady); 50 more steps run and the peak RSS is read (peak).
Reported: "state" = steady - base (weights, optimizer slots, caches and
anything the framework keeps between steps) and "peak" = peak - base, the
most memory training needed above the loaded framework.

  python bench/python/train_step.py [--runners plexus,tf,xla] [--threads 1] [--label TEXT]
                                    [--seconds 0.2] [--repeats 7] [--extra other.json] [--json out.json]
  python bench/python/train_step.py --memory plexus|tf|xla|eager|compile [--case "mlp b64"] [--json out.json]
"""
import argparse
import gc
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

DEFAULT_RUNNERS = "plexus,tf,xla"
RUNNER_KEYS = ("plexus", "tf", "xla", "eager", "compile")


def _arg(argv, name, default):
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


# Load only the frameworks this process runs (TensorFlow and torch.compile
# cannot share a process), with the thread count asked for, before anything runs.
_MEMORY = _arg(sys.argv[1:], "--memory", None)
_KEYS = [_MEMORY] if _MEMORY else [k.strip() for k in _arg(sys.argv[1:], "--runners", DEFAULT_RUNNERS).split(",")
                                   if k.strip()]
_THREADS = int(_arg(sys.argv[1:], "--threads", "1"))
# The float64 reference uses PyTorch, so timing processes load it whenever
# TensorFlow is not loaded; a memory process loads only its own framework.
_NEED_TF = bool({"tf", "xla"} & set(_KEYS))
_NEED_TORCH = bool({"compile", "eager"} & set(_KEYS)) or (not _MEMORY and not _NEED_TF)
if "plexus" in _KEYS:
    import plexus as px  # noqa: E402  (before TensorFlow: see _common.configure_threads)
tf, torch = _common.configure_threads(tensorflow=_NEED_TF, pytorch=_NEED_TORCH, threads=_THREADS)
import numpy as np  # noqa: E402

TOL = 1e-4
CHECK_STEPS = 5
LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7
CASES = [("mlp", 64), ("cnn", 64)]
NAMES = {"plexus": "plexus.function", "tf": "tf.function", "xla": "tf.function (XLA)",
         "eager": "torch eager", "compile": "torch.compile"}


# ---- weights, batch -----------------------------------------------------------

def make_weights(model, width=None):
    """The model's weights; `width` shrinks every hidden layer (for warming a framework up)."""
    rng = np.random.default_rng(1234)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    if model == "mlp":
        h = width or 512
        return {"w1": he((784, h), 784), "b1": bias(h), "w2": he((h, h), h), "b2": bias(h),
                "w3": he((h, 10), h), "b3": bias(10)}
    c1, c2 = (width, width) if width else (32, 64)
    return {"k1": he((3, 3, 1, c1), 9), "c1": bias(c1), "k2": he((3, 3, c1, c2), 9 * c1), "c2": bias(c2),
            "w": he((c2, 10), c2), "b": bias(10)}


def make_batch(model, batch):
    rng = np.random.default_rng(100 + batch)
    shape = (batch, 784) if model == "mlp" else (batch, 28, 28, 1)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 10, batch).astype(np.int32)


# ---- the runners: each returns (step, x, y, to_float); step(x, y) -> loss ------

def plexus_runner(model, w):
    v = {k: px.Variable(a, name=k) for k, a in w.items()}
    names = list(w)
    opt = px.optimizers.Adam(LR, BETA_1, BETA_2, EPSILON)

    def logits(x):
        if model == "mlp":
            h = px.nn.relu(px.nn.bias_add(px.matmul(x, v["w1"].read_value()), v["b1"].read_value()))
            h = px.nn.relu(px.nn.bias_add(px.matmul(h, v["w2"].read_value()), v["b2"].read_value()))
            return px.nn.bias_add(px.matmul(h, v["w3"].read_value()), v["b3"].read_value())
        h = px.nn.conv2d(x, v["k1"].read_value(), strides=1, padding="VALID")
        h = px.nn.relu(px.nn.bias_add(h, v["c1"].read_value()))
        h = px.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        h = px.nn.conv2d(h, v["k2"].read_value(), strides=1, padding="VALID")
        h = px.nn.relu(px.nn.bias_add(h, v["c2"].read_value()))
        h = px.reduce_mean(h, axis=[1, 2])
        return px.nn.bias_add(px.matmul(h, v["w"].read_value()), v["b"].read_value())

    @px.function
    def step(x, y):
        variables = [v[k] for k in names]
        with px.GradientTape() as tape:
            losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits(x), labels=y)
            loss = px.reduce_mean(losses)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return step, px.constant, lambda t: float(t.numpy())


def tf_runner(model, w, jit):
    v = {k: tf.Variable(a, name=k) for k, a in w.items()}
    names = list(w)
    opt = tf.keras.optimizers.Adam(LR, beta_1=BETA_1, beta_2=BETA_2, epsilon=EPSILON)

    def logits(x):
        if model == "mlp":
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, v["w1"]), v["b1"]))
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(h, v["w2"]), v["b2"]))
            return tf.nn.bias_add(tf.matmul(h, v["w3"]), v["b3"])
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, v["k1"], strides=1, padding="VALID"), v["c1"]))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, v["k2"], strides=1, padding="VALID"), v["c2"]))
        h = tf.reduce_mean(h, axis=[1, 2])
        return tf.nn.bias_add(tf.matmul(h, v["w"]), v["b"])

    @tf.function(jit_compile=jit)
    def step(x, y):
        variables = [v[k] for k in names]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits(x)))
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return step, tf.constant, lambda t: float(t.numpy())


def torch_params(model, w, dtype):
    """Parameters in PyTorch's layout (NCHW filters [cout, cin, kh, kw])."""
    def conv(a):
        return np.ascontiguousarray(a.transpose(3, 2, 0, 1)) if a.ndim == 4 else a
    return {k: torch.tensor(conv(a), dtype=dtype, requires_grad=True) for k, a in w.items()}


def torch_logits(model, p, x):
    F = torch.nn.functional
    if model == "mlp":
        h = torch.relu(torch.addmm(p["b1"], x, p["w1"]))
        h = torch.relu(torch.addmm(p["b2"], h, p["w2"]))
        return torch.addmm(p["b3"], h, p["w3"])
    h = F.max_pool2d(torch.relu(F.conv2d(x, p["k1"], p["c1"])), 2, 2)
    h = torch.relu(F.conv2d(h, p["k2"], p["c2"])).mean(dim=(2, 3))
    return torch.addmm(p["b"], h, p["w"])


def torch_input(model, x, dtype=None):
    if model == "cnn":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))  # NHWC -> NCHW
    return torch.tensor(x, dtype=dtype or torch.float32)


def torch_runner(model, w, compiled):
    p = torch_params(model, w, torch.float32)
    opt = torch.optim.Adam(list(p.values()), lr=LR, betas=(BETA_1, BETA_2), eps=EPSILON)
    F = torch.nn.functional

    def loss_fn(x, y):
        return F.cross_entropy(torch_logits(model, p, x), y)

    opt_step = opt.step
    if compiled:
        loss_fn = torch.compile(loss_fn, dynamic=False)
        opt_step = torch.compile(opt.step, dynamic=False)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        opt_step()
        return loss.detach()

    return step, (lambda a: torch_input(model, a) if a.dtype == np.float32 else torch.tensor(a, dtype=torch.long)), \
        lambda t: float(t)


def reference_losses(model, w, x, y, formula, steps=CHECK_STEPS):
    """Losses of `steps` Adam steps in float64 (PyTorch autograd), with
    TensorFlow's Adam formula (formula "tf": Plexus and keras) or PyTorch's
    ("torch": epsilon added after the bias correction of sqrt(v))."""
    p = torch_params(model, w, torch.float64)
    m = {k: torch.zeros_like(t) for k, t in p.items()}
    s = {k: torch.zeros_like(t) for k, t in p.items()}
    xt, yt = torch_input(model, x, torch.float64), torch.tensor(y, dtype=torch.long)
    losses = []
    for t in range(1, steps + 1):
        loss = torch.nn.functional.cross_entropy(torch_logits(model, p, xt), yt)
        grads = torch.autograd.grad(loss, list(p.values()))
        losses.append(float(loss.detach()))
        with torch.no_grad():
            for (k, var), g in zip(p.items(), grads):
                m[k].mul_(BETA_1).add_(g, alpha=1 - BETA_1)
                s[k].mul_(BETA_2).addcmul_(g, g, value=1 - BETA_2)
                if formula == "tf":
                    lr_t = LR * np.sqrt(1 - BETA_2 ** t) / (1 - BETA_1 ** t)
                    var.sub_(lr_t * m[k] / (s[k].sqrt() + EPSILON))
                else:
                    denom = s[k].sqrt() / np.sqrt(1 - BETA_2 ** t) + EPSILON
                    var.sub_(LR / (1 - BETA_1 ** t) * m[k] / denom)
    return losses


MAKERS = {
    "plexus": lambda m, w: plexus_runner(m, w),
    "tf": lambda m, w: tf_runner(m, w, False),
    "xla": lambda m, w: tf_runner(m, w, True),
    "eager": lambda m, w: torch_runner(m, w, False),
    "compile": lambda m, w: torch_runner(m, w, True),
}


# ---- peak memory -------------------------------------------------------------------

def _rss_kib():
    with open("/proc/self/status") as f:
        d = dict(line.split(":", 1) for line in f)
    return int(d["VmRSS"].split()[0]), int(d["VmHWM"].split()[0])


def measure_memory(key, case_name, json_path):
    model, batch = next((m, b) for m, b in CASES if f"{m} b{b}" == case_name)
    # Warm the framework up on a tiny model of the same kind (loads its
    # libraries' code and starts its threads), so that "base" holds them.
    step, to_in, to_float = MAKERS[key](model, make_weights(model, width=2))
    xa, ya = make_batch(model, 2)
    for _ in range(2):
        to_float(step(to_in(xa), to_in(ya)))
    del step
    gc.collect()
    xa, ya = make_batch(model, batch)
    w = make_weights(model)
    base, _ = _rss_kib()
    step, to_in, to_float = MAKERS[key](model, w)
    x, y = to_in(xa), to_in(ya)
    for _ in range(20):
        to_float(step(x, y))
    steady, _ = _rss_kib()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak RSS to the current RSS
    for _ in range(50):
        to_float(step(x, y))
    _, peak = _rss_kib()
    r = {"state_mib": round((steady - base) / 1024, 2), "peak_mib": round((peak - base) / 1024, 2),
         "base_mib": round(base / 1024, 1)}
    print(json.dumps({NAMES[key]: {case_name: r}}))
    _common.write_json(json_path, {"runner": NAMES[key], "case": case_name, "result": r})


# ---- timing ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.2, help="timed seconds per repeat and runner")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--runners", default=DEFAULT_RUNNERS, help="comma-separated, of: " + ", ".join(RUNNER_KEYS))
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads of the peers (Plexus: see run.sh)")
    ap.add_argument("--label", default="", help="appended to the name of the plexus runner")
    ap.add_argument("--extra", action="append", default=[], help="JSON of another process whose columns join")
    ap.add_argument("--memory", choices=RUNNER_KEYS, help="measure the peak memory of this runner instead")
    ap.add_argument("--case", default="mlp b64", help="with --memory: the case (%s)"
                    % ", ".join(f"{m} b{b}" for m, b in CASES))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if args.memory:
        measure_memory(args.memory, args.case, args.json)
        return 0
    for k in _KEYS:
        if k not in MAKERS:
            ap.error(f"unknown runner {k!r}")
    if _NEED_TF and "compile" in _KEYS:
        ap.error("torch.compile cannot run beside TensorFlow in one process (see traced.py)")
    extras = [json.load(open(p)) for p in args.extra]

    results, problems, references = {}, [], {}
    for model, batch in CASES:
        case = f"{model} b{batch}"
        xa, ya = make_batch(model, batch)
        w = make_weights(model)
        if torch is not None:
            refs = {f: reference_losses(model, w, xa, ya, f) for f in ("tf", "torch")}
        else:  # a TensorFlow process: the reference of the PyTorch process (--extra)
            refs = next((e["reference"][case] for e in extras if case in e.get("reference", {})), None)
        references[case] = refs
        fns, info = {}, {}
        for key in _KEYS:
            label = NAMES[key] + (args.label if key == "plexus" else "")
            try:
                # A runner for the check (5 steps from the initial weights) ...
                step, to_in, to_float = MAKERS[key](model, w)
                x, y = to_in(xa), to_in(ya)
                t0 = time.perf_counter()
                losses = [to_float(step(x, y))]
                first = time.perf_counter() - t0
                losses += [to_float(step(x, y)) for _ in range(CHECK_STEPS - 1)]
                r = {"first_step_ms": round(first * 1e3, 2), "losses": losses}
                ref = refs and refs["torch" if key in ("eager", "compile") else "tf"]
                if ref is not None:
                    err = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(losses, ref))
                    r.update(max_rel_err=err, ok=bool(err <= TOL))
                    if err > TOL:
                        problems.append(f"{case}: {label} losses {losses} differ from the reference {ref}")
                info[label] = r
                fns[label] = (lambda s=step, a=x, b=y: s(a, b))  # ... and it goes on training for the timing
            except Exception as e:  # report the failure, keep the others running
                msg = "".join(traceback.format_exception_only(type(e), e)).strip()
                info[label] = {"error": msg[-2000:]}
                problems.append(f"{case}: {label} failed: {msg.splitlines()[0][:300]}")
                print(f"[{case}] {label} failed:\n{traceback.format_exc()}", file=sys.stderr)
        timed = _common.time_interleaved(fns, args.seconds, args.repeats, args.warmup)
        _common.join_case(info, timed, NAMES["plexus"] + args.label, extras, case)
        results[case] = info
    for extra in extras:
        problems += [p + " (separate process)" for p in extra.get("problems", [])]

    labels, rows = _common.median_table(results)
    _common.print_table(
        "Training step (forward, gradients, Adam), median ms per step (%d repeats of ~%g s); in parentheses: "
        "peer / plexus.function of the same process" % (args.repeats, args.seconds), ["case"] + labels, rows)
    rows = [[case] + [str(info.get(l, {}).get("first_step_ms", "-")) for l in labels] for case, info in results.items()]
    _common.print_table("First step (trace + compile + run), ms", ["case"] + labels, rows)
    rows = [[case] + [("%.2g" % info[l]["max_rel_err"] + ("" if info[l]["ok"] else " FAIL"))
                      if "max_rel_err" in info.get(l, {}) else "-" for l in labels]
            for case, info in results.items()]
    _common.print_table("max |loss - float64 reference| / max(1, |ref|) over %d steps (ok when <= %g)"
                        % (CHECK_STEPS, TOL), ["case"] + labels, rows)
    for p in problems:
        print("PROBLEM:", p)
    versions = {}
    if "plexus" in _KEYS:
        versions["plexus"] = px.__version__
    if torch is not None:
        versions["torch"] = torch.__version__
    if tf is not None:
        versions["tensorflow"] = tf.__version__
    for extra in extras:
        versions.update(extra.get("versions", {}))
    _common.write_json(args.json, {
        "versions": versions, "threads": args.threads,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("PLEXUS_", "OMP_", "OPENBLAS_"))},
        "seconds_per_repeat": args.seconds, "repeats": args.repeats, "problems": problems,
        "reference": references, "cases": results})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
