"""Eager dispatch overhead of tiny ops from Python: Plexus against PyTorch
eager and TensorFlow eager, in one process.

Each case is one op on tiny float32 tensors made before timing, so the time
is almost all per-call cost: argument handling, dispatch, output allocation
and the Python wrapper. Cases: scalar and [4] add, written with the `+`
operator and with the function (plexus.add / torch.add / tf.add), a [2,2] @
[2,2] matmul (plexus.matmul / torch.matmul / tf.matmul) and relu of [8]
(plexus.nn.relu / torch.relu / tf.nn.relu).

Timing is timeit-style: warmup calls, then several repeats ("rounds") of a
batch of calls each; in every round the three frameworks are timed one after
the other, so load changes hit all alike. The reported time is the median
over the rounds of the per-call time, in microseconds.
ratio = peer / Plexus (above 1: Plexus is faster).

PyTorch and TensorFlow get one intra-op and one inter-op thread; Plexus runs
as built. Results are checked equal (exactly: these ops are exact at these
sizes and values) before timing.

  python bench/python/eager_dispatch.py [--seconds 0.05] [--repeats 7] [--json out.json]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import plexus as px  # noqa: E402  (before TensorFlow: see _common.configure_threads)

tf, torch = _common.configure_threads()
import numpy as np  # noqa: E402

FRAMEWORKS = ("plexus", "torch", "tensorflow")


def make_cases():
    """name -> (description, {framework: zero-argument callable})."""
    rng = np.random.default_rng(0)
    arrays = {
        "scalar": (np.float32(1.5), np.float32(-0.25)),
        "vec4": (rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)),
        "mat2": (rng.standard_normal((2, 2)).astype(np.float32),
                 rng.standard_normal((2, 2)).astype(np.float32)),
        "vec8": (rng.standard_normal(8).astype(np.float32), None),
    }

    def tensors(key):
        a, b = arrays[key]
        conv = {"plexus": lambda v: px.constant(v, dtype=px.float32),
                "torch": lambda v: torch.tensor(v, dtype=torch.float32),
                "tensorflow": lambda v: tf.constant(v, dtype=tf.float32)}
        return {fw: (c(a), None if b is None else c(b)) for fw, c in conv.items()}

    s, v4, m2, v8 = tensors("scalar"), tensors("vec4"), tensors("mat2"), tensors("vec8")
    add_fn = {"plexus": px.add, "torch": torch.add, "tensorflow": tf.add}
    matmul = {"plexus": px.matmul, "torch": torch.matmul, "tensorflow": tf.matmul}
    relu = {"plexus": px.nn.relu, "torch": torch.relu, "tensorflow": tf.nn.relu}

    cases = {}

    def op_add(t):
        x, y = t
        return lambda: x + y

    def fn_add(f, t):
        x, y = t
        return lambda: f(x, y)

    def unary(f, t):
        x = t[0]
        return lambda: f(x)

    cases["add scalar, x + y"] = {fw: op_add(s[fw]) for fw in FRAMEWORKS}
    cases["add scalar, add(x, y)"] = {fw: fn_add(add_fn[fw], s[fw]) for fw in FRAMEWORKS}
    cases["add [4], x + y"] = {fw: op_add(v4[fw]) for fw in FRAMEWORKS}
    cases["add [4], add(x, y)"] = {fw: fn_add(add_fn[fw], v4[fw]) for fw in FRAMEWORKS}
    cases["matmul [2,2]@[2,2]"] = {fw: fn_add(matmul[fw], m2[fw]) for fw in FRAMEWORKS}
    cases["relu [8]"] = {fw: unary(relu[fw], v8[fw]) for fw in FRAMEWORKS}
    return cases


def to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.numpy()
    return np.asarray(value.numpy())


def check(cases):
    """Every framework's result equals Plexus' exactly (same dtype, shape, values)."""
    problems = []
    for name, fns in cases.items():
        ref = to_numpy(fns["plexus"]())
        if ref.dtype != np.float32:
            problems.append(f"{name}: plexus dtype {ref.dtype}")
        for fw in FRAMEWORKS[1:]:
            got = to_numpy(fns[fw]())
            if got.shape != ref.shape or not np.array_equal(got, ref):
                # matmul may round differently by summation order; allow 1 ulp-ish there
                if got.shape == ref.shape and np.allclose(got, ref, rtol=1e-6, atol=1e-7):
                    continue
                problems.append(f"{name}: {fw} {got!r} != plexus {ref!r}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.05, help="timed seconds per repeat and framework")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=200, help="warmup calls per case and framework")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    cases = make_cases()
    problems = check(cases)
    for p in problems:
        print("CHECK FAILED:", p, file=sys.stderr)

    results = {}
    rows = []
    for name, fns in cases.items():
        r = _common.time_interleaved(fns, args.seconds, args.repeats, args.warmup)
        results[name] = r
        us = {fw: r[fw]["median_s"] * 1e6 for fw in FRAMEWORKS}
        rows.append([name, "%.2f" % us["plexus"], "%.2f" % us["torch"], "%.2f" % us["tensorflow"],
                     "%.2f" % (us["torch"] / us["plexus"]), "%.2f" % (us["tensorflow"] / us["plexus"])])
        for fw in FRAMEWORKS:
            r[fw]["median_us"] = round(us[fw], 3)
        r["ratio_torch"] = round(us["torch"] / us["plexus"], 3)
        r["ratio_tensorflow"] = round(us["tensorflow"] / us["plexus"], 3)

    _common.print_table(
        "Eager dispatch, median us per call (%d repeats of ~%g s each; ratio = peer / plexus)"
        % (args.repeats, args.seconds),
        ["case", "plexus", "torch", "tensorflow", "torch/plexus", "tf/plexus"], rows)
    _common.write_json(args.json, {
        "versions": {"plexus": px.__version__, "torch": torch.__version__, "tensorflow": tf.__version__},
        "threads": {"torch": "set_num_threads(1), set_num_interop_threads(1)",
                    "tensorflow": "intra_op=1, inter_op=1", "plexus": "as built",
                    "process_threads_after": _common.process_threads()},
        "seconds_per_repeat": args.seconds, "repeats": args.repeats, "warmup_calls": args.warmup,
        "check_problems": problems, "cases": results})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
