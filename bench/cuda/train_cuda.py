"""Training steps on the GPU: Plexus (a plexus.function holding a
GradientTape and an Adam update) against PyTorch eager and torch.compile,
with the same weights, batches and optimizer (train_models.py has the
models: digits_cnn, resnet, transformer), float32 and mixed precision,
batches 64 and 256.

Each side runs in a process of its own (torch refuses the library path
.ci/gpu/run.sh makes for Plexus; see README.md):

  python3 bench/cuda/train_cuda.py --side plexus --data DIR [--device CUDA:0] [--plugin SO] > plexus_train.jsonl
  python3 bench/cuda/train_cuda.py --side torch  --data DIR [--device cuda]   > torch_train.jsonl
  python3 bench/cuda/train_cuda.py --table plexus_train.jsonl torch_train.jsonl

The Plexus side writes the weights and batches into DIR as .npy files (it
needs NumPy); the torch side reads them without NumPy. Common options:
--cases, --batches (default 64,256), --precisions (float32,mixed),
--seconds (timed seconds per row, default 0.5), --quick (batch 8, a dry run
of the script on any device, not a benchmark). The torch side also takes
--compile-budget S (seconds of torch.compile after which further compiles
are skipped, default 120) and --no-compile.

Per row (case, precision, batch, runner) one JSON line: the losses of the
first 5 steps from the initial weights on the row's batch (they check
forward, gradients and update together), then the median, 10th and 90th
percentile time of one step (the step's loss read back to the host, which
waits for the device; the same on both sides), after 3 warm-up steps.

Optimizer: Adam, learning rate 1e-3, betas 0.9 / 0.999, epsilon 1e-7.
Plexus uses TensorFlow's formula, PyTorch its own (epsilon added after the
bias correction); over 5 steps the two differ by far less than the
tolerance. Mixed precision: Plexus reads the weights cast to float16 and
scales the loss dynamically with plexus.keras's LossScaleOptimizer; PyTorch
uses torch.autocast(float16) and torch.amp.GradScaler; both start at a
scale of 32768 and double it after 2000 finite steps.

The table compares each torch runner's losses with Plexus's (float32: within
1e-3 * max(1, |loss|), the two use different convolution and GEMM
algorithms; mixed: within 5e-2 * max(1, |loss|)) and gives the time ratios
(above 1: Plexus is faster).
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_models as M  # noqa: E402

LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7
CHECK_STEPS, WARMUP = 5, 3
INITIAL_SCALE, GROWTH_STEPS = 32768.0, 2000
TOLERANCE = {"float32": 1e-3, "mixed": 5e-2}


def emit(record):
    print(json.dumps(record), flush=True)


def key_of(case, precision, batch):
    return f"train_{case}_{precision}_b{batch}"


def timed(step, read, seconds, min_steps=5, max_steps=500):
    """Median, p10 and p90 milliseconds of step() followed by read()."""
    for _ in range(WARMUP):
        read(step())
    times = []
    start = time.perf_counter()
    while len(times) < max_steps and (len(times) < min_steps or time.perf_counter() - start < seconds):
        t0 = time.perf_counter()
        read(step())
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()

    def q(p):
        return round(times[min(len(times) - 1, int(p * (len(times) - 1) + 0.5))], 4)

    return {"steps": len(times), "median_ms": q(0.5), "p10_ms": q(0.1), "p90_ms": q(0.9)}


# ---- Plexus ------------------------------------------------------------------

def plexus_side(args, cases, batches, precisions):
    import numpy as np
    import plexus as px
    from plexus.keras import optimizers as kopt

    for plugin in args.plugin or []:
        px.load_plugin(plugin)
    os.makedirs(args.data, exist_ok=True)
    for case in cases:
        weights = M.make_weights(np, case)
        for name, a in weights.items():
            np.save(os.path.join(args.data, f"{case}.{name}.npy"), a)
        for batch in batches:
            x, y = M.make_batch(np, case, batch)
            np.save(os.path.join(args.data, f"{case}.x{batch}.npy"), x)
            np.save(os.path.join(args.data, f"{case}.y{batch}.npy"), y)
            for precision in precisions:
                key = key_of(case, precision, batch)
                try:
                    with px.device(args.device):
                        row = plexus_row(px, np, kopt, case, weights, x, y, precision == "mixed", args.seconds)
                    emit({"key": key, "runner": "plexus", "device": args.device, **row})
                except Exception as e:  # a failing row is reported, not fatal
                    emit({"key": key, "runner": "plexus", "device": args.device,
                          "error": f"{type(e).__name__}: {e}"[:2000]})


def plexus_row(px, np, kopt, case, weights, x, y, mixed, seconds):
    variables = {k: px.Variable(a, name=k) for k, a in weights.items()}
    names = list(weights)
    if mixed:
        optimizer = kopt.LossScaleOptimizer(kopt.Adam(learning_rate=LR, beta_1=BETA_1, beta_2=BETA_2,
                                                      epsilon=EPSILON),
                                            initial_scale=INITIAL_SCALE, dynamic_growth_steps=GROWTH_STEPS)
    else:
        optimizer = px.optimizers.Adam(LR, BETA_1, BETA_2, EPSILON)

    def read(name, float32=False):
        t = variables[name].read_value()
        return t if float32 or not mixed else px.cast(t, "float16")

    @px.function
    def step(xb, yb):
        trainable = [variables[k] for k in names]
        with px.GradientTape() as tape:
            logits = M.plexus_logits(px, case, read, xb, mixed)
            losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=yb)
            loss = px.reduce_mean(losses)
            target = optimizer.scale_loss(loss) if mixed else loss
        optimizer.apply_gradients(zip(tape.gradient(target, trainable), trainable))
        return loss

    xb, yb = px.constant(x), px.constant(y.astype(np.int32))
    losses = [float(step(xb, yb).numpy()) for _ in range(CHECK_STEPS)]
    row = {"losses": losses, **timed(lambda: step(xb, yb), lambda t: t.numpy(), seconds)}
    # The kernels of the step that ran elsewhere than the step's device, with
    # the placer's reason, and the copies the plan makes.
    report = step.placement(xb, yb)
    row["off_device"] = [f"{n.node} ({n.op}) on {n.device}: {n.reason}" for n in report.nodes
                         if n.how == "kernel" and n.device != report.device and not n.once][:20]
    row["copies"] = len(report.copies)
    return row


# ---- PyTorch -------------------------------------------------------------------

def torch_side(args, cases, batches, precisions):
    import torch
    from torch_cuda_bench import load_npy

    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    compile_left = [args.compile_budget]
    for case in cases:
        # The weights' files are CASE.NAME.npy, the batches' CASE.xB.npy and
        # CASE.yB.npy (no weight name starts with x or y).
        prefix = f"{case}."
        files = sorted(f for f in os.listdir(args.data) if f.startswith(prefix) and f.count(".") == 2)
        weights = {f[len(prefix):-4]: load_npy(os.path.join(args.data, f), torch) for f in files
                   if not f[len(prefix):].startswith(("x", "y"))}
        for batch in batches:
            x = load_npy(os.path.join(args.data, f"{case}.x{batch}.npy"), torch).to(device)
            y = load_npy(os.path.join(args.data, f"{case}.y{batch}.npy"), torch).to(device).long()
            x = M.torch_input(case, x)
            for precision in precisions:
                key = key_of(case, precision, batch)
                runners = ["eager"] + ([] if args.no_compile else ["compile"])
                for runner in runners:
                    if runner == "compile" and compile_left[0] <= 0:
                        emit({"key": key, "runner": runner, "error": "skipped: the compile budget is spent"})
                        continue
                    try:
                        t0 = time.perf_counter()
                        row = torch_row(torch, case, weights, x, y, precision == "mixed", runner == "compile",
                                        device, sync, args.seconds)
                        if runner == "compile":
                            compile_left[0] -= time.perf_counter() - t0
                        emit({"key": key, "runner": runner, "device": str(device), **row})
                    except Exception as e:
                        emit({"key": key, "runner": runner, "device": str(device),
                              "error": f"{type(e).__name__}: {e}"[:2000]})


def torch_row(torch, case, weights, x, y, mixed, compiled, device, sync, seconds):
    # A copy per row: every row starts from the initial weights.
    params = {k: M.torch_layout(t).to(device).clone().requires_grad_(True) for k, t in weights.items()}
    optimizer = torch.optim.Adam(list(params.values()), lr=LR, betas=(BETA_1, BETA_2), eps=EPSILON)
    scaler = torch.amp.GradScaler(device.type, init_scale=INITIAL_SCALE, growth_interval=GROWTH_STEPS,
                                  enabled=mixed)
    F = torch.nn.functional

    def loss_of(xb, yb):
        with torch.autocast(device.type, dtype=torch.float16, enabled=mixed):
            logits = M.torch_logits(torch, case, params, xb)
        return F.cross_entropy(logits.float(), yb)

    opt_step = optimizer.step
    compile_s = None
    if compiled:
        loss_of = torch.compile(loss_of, dynamic=False)
        if not mixed:  # GradScaler.step calls optimizer.step itself
            opt_step = torch.compile(optimizer.step, dynamic=False)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(x, y)
        if mixed:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            opt_step()
        return loss.detach()

    t0 = time.perf_counter()
    losses = [float(step())]
    if compiled:
        compile_s = round(time.perf_counter() - t0, 2)
    losses += [float(step()) for _ in range(CHECK_STEPS - 1)]
    row = {"losses": losses, **timed(step, lambda t: (sync(), float(t)), seconds)}
    if compile_s is not None:
        row["compile_s"] = compile_s
    return row


# ---- The table -------------------------------------------------------------------

def table(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    rows[(r["key"], r["runner"])] = r
    keys = sorted({k for k, _ in rows}, key=lambda k: (k.split("_b")[0], int(k.rsplit("_b", 1)[1])))
    print("| step | plexus ms | torch eager ms | torch.compile ms | eager/plexus | compile/plexus | losses |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    errors, ratios = [], {"eager": [], "compile": []}
    for key in keys:
        p = rows.get((key, "plexus"), {})
        cells, checks = [key], []
        for runner in ("plexus", "eager", "compile"):
            r = rows.get((key, runner), {})
            if "error" in r:
                errors.append(f"{key} {runner}: {r['error']}")
            cells.append(f"{r['median_ms']:.3f}" if "median_ms" in r else ("ERR" if "error" in r else "-"))
        for runner in ("eager", "compile"):
            r = rows.get((key, runner), {})
            if "median_ms" in r and "median_ms" in p:
                ratio = r["median_ms"] / p["median_ms"]
                ratios[runner].append(ratio)
                cells.append(f"{ratio:.2f}")
            else:
                cells.append("-")
            if "losses" in r and "losses" in p:
                tol = TOLERANCE["mixed" if "_mixed_" in key else "float32"]
                worst = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(p["losses"], r["losses"]))
                checks.append(f"{runner} {'ok' if worst <= tol else 'DIFFER'} ({worst:.1e})")
        if p.get("off_device"):
            checks.append(f"{len(p['off_device'])} kernels off the device")
        cells.append("; ".join(checks) or "-")
        print("| " + " | ".join(cells) + " |")
    for runner, values in ratios.items():
        if values:
            gm = statistics.geometric_mean(values)
            print(f"\ngeometric mean, torch {runner} / plexus: {gm:.2f} over {len(values)} rows")
    if errors:
        print("\nErrors:")
        for e in errors:
            print("  " + e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", choices=["plexus", "torch"])
    ap.add_argument("--table", nargs="+", metavar="JSONL")
    ap.add_argument("--data", help="the folder of the weights and batches (.npy)")
    ap.add_argument("--device", default=None, help="Plexus: CUDA:0 (default); torch: cuda (default)")
    ap.add_argument("--plugin", action="append", help="Plexus: a plugin file to load first (repeatable)")
    ap.add_argument("--cases", default=",".join(M.CASES))
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--precisions", default="float32,mixed")
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="batch 8 and few steps: a dry run, not a benchmark")
    ap.add_argument("--compile-budget", type=float, default=120.0)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    if args.table:
        table(args.table)
        return
    if not args.side or not args.data:
        ap.error("--side and --data are required (or --table)")
    cases = [c for c in args.cases.split(",") if c]
    batches = [8] if args.quick else [int(b) for b in args.batches.split(",") if b]
    precisions = [p for p in args.precisions.split(",") if p]
    if args.quick:
        args.seconds = 0.0
    if args.side == "plexus":
        args.device = args.device or "CUDA:0"
        plexus_side(args, cases, batches, precisions)
    else:
        args.device = args.device or "cuda"
        torch_side(args, cases, batches, precisions)


if __name__ == "__main__":
    main()
