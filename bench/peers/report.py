"""Reads the JSON lines of every runtime (bench/.cache/raw.jsonl), prints one
table per benchmark with Plexus beside each peer, and writes
bench/results.json.

ratio = peer time / Plexus time (the same statistic: the median, or for the
executor overhead the per-op slope), so > 1 means Plexus is faster.
"check" compares each runtime's output with TensorFlow's (default variant)
for the same input: ok when max |a - b| <= 1e-3 * max(1, max |tf|).
The Keras models (group "keras") are not here: bench/peers/models.py times
them and prints their tables (titles in its TITLES).
"""
import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import numpy as np  # noqa: E402

NAMES = {
    ("plexus", "default"): "plexus",
    ("plexus", "noopt"): "plexus (optimizer off)",
    ("tensorflow", "default"): "tensorflow",
    ("tensorflow", "noopt"): "tensorflow (grappler off)",
    ("onnxruntime", "default"): "onnxruntime",
    ("onnxruntime", "noopt"): "onnxruntime (opt off)",
    ("torch", "default"): "torch (onnx2torch)",
}
ORDER = list(NAMES)
MODEL_TITLES = {
    "mlp_fc_layers": "mlp_fc_layers: frozen MLP 784-256-256-10 (MatMul/BiasAdd/Relu), batch 1 and 64",
    "kws_cnn_s": "kws_cnn_s: frozen keyword-spotting CNN_S body (Mfcc [B,49,10] -> softmax), batch 1 and 64",
    "kws_ds_cnn_s": "kws_ds_cnn_s: frozen DS_CNN_S body (depthwise-separable), batch 1 and 64",
    "hey_snips": "hey_snips: frozen 1-D conv wake-word net, input [T,40], T = 40 and 400 (\"batch\" = T)",
}


def output_name(runtime, variant):
    return runtime + ("" if variant == "default" else "_" + variant)


def check(record, case_id):
    """Compares a runtime's saved output with TensorFlow's."""
    ref_path = common.output_path("tensorflow", case_id)
    mine = common.output_path(output_name(record["runtime"], record["variant"]), case_id)
    if not (os.path.exists(ref_path) and os.path.exists(mine)):
        return None, "n/a"
    ref = np.load(ref_path).astype(np.float64)
    out = np.load(mine).astype(np.float64)
    if ref.shape != out.shape:
        return None, "SHAPE %s vs %s" % (list(out.shape), list(ref.shape))
    diff = float(np.max(np.abs(ref - out))) if ref.size else 0.0
    ok = diff <= 1e-3 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
    return diff, ("ok %.1e" % diff) if ok else ("DIFF %.1e" % diff)


def fmt(us):
    if us is None:
        return "-"
    if us >= 10000:
        return "%.0f" % us
    if us >= 100:
        return "%.1f" % us
    return "%.2f" % us


def fmt_ratio(r):
    return "-" if r is None else "%.2fx" % r


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)),
             "  ".join("-" * w for w in widths)]
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--raw", default=os.path.join(common.CACHE_DIR, "raw.jsonl"))
    parser.add_argument("--meta", default=os.path.join(common.CACHE_DIR, "meta.json"))
    parser.add_argument("--out", default=os.path.join(common.BENCH_DIR, "results.json"))
    args = parser.parse_args()

    cases = {c["id"]: c for c in common.load_cases()}
    records = []
    with open(args.raw) as f:
        for line in f:
            if line.strip():
                records.append(json.loads(line))
    by = {}
    for r in records:
        by[(r["runtime"], r["variant"], r["label"])] = r
        if r["label"] in cases and "error" not in r:
            r["max_abs_diff_vs_tf"], r["check"] = check(r, r["label"])

    timed = {label for (_, _, label) in by}  # BENCH_CASES may have left cases out

    def median(runtime, variant, label):
        r = by.get((runtime, variant, label))
        return None if r is None or "error" in r else r.get("median_us")

    out_text = []
    summary = {}
    problems = sorted({"%s %s %s: %s" % (r["runtime"], r["variant"], r["label"], r["error"])
                       for r in records if "error" in r})

    # Executor overhead: per-op cost from the slope between N=100 and N=1000.
    overhead = {}
    for kind, title in (("chain", "chain of N tiny ops in sequence on float[16] (AddV2, Mul, Neg, Mul, ...)"),
                        ("fan", "fan of N independent tiny ops on float[16] (AddV2 / Mul), joined by one ConcatV2")):
        sizes = sorted(c["ops"] for c in cases.values() if c["group"] == "overhead"
                       and c["model"].startswith(kind + "_"))
        if len(sizes) < 2:
            continue
        lo, hi = sizes[0], sizes[-1]
        rows = []
        slopes = {}
        for runtime, variant in ORDER:
            t_lo = median(runtime, variant, "%s_%d_b1" % (kind, lo))
            t_hi = median(runtime, variant, "%s_%d_b1" % (kind, hi))
            if (runtime, variant, "%s_%d_b1" % (kind, hi)) not in by:
                continue
            slope = (t_hi - t_lo) / (hi - lo) if t_lo is not None and t_hi is not None else None
            slopes[(runtime, variant)] = slope
            rec = by[(runtime, variant, "%s_%d_b1" % (kind, hi))]
            overhead.setdefault(kind, {})[NAMES[(runtime, variant)]] = {
                "median_us_n%d" % lo: t_lo, "median_us_n%d" % hi: t_hi,
                "us_per_op_slope": slope,
                "us_per_op_total": t_hi / hi if t_hi is not None else None}
            rows.append([NAMES[(runtime, variant)], fmt(t_lo), fmt(t_hi),
                         "-" if slope is None else "%.3f" % slope,
                         "-" if t_hi is None else "%.3f" % (t_hi / hi),
                         None, rec.get("check", rec.get("error", "-"))[:40]])
        base = slopes.get(("plexus", "default"))
        for row, (runtime, variant) in zip(rows, [k for k in ORDER if k in slopes]):
            s = slopes[(runtime, variant)]
            row[5] = "-" if (runtime, variant) == ("plexus", "default") else fmt_ratio(
                s / base if s is not None and base else None)
        if not rows:
            continue
        headers = ["runtime", "N=%d us" % lo, "N=%d us" % hi, "us/op (slope)",
                   "us/op (N=%d total/N)" % hi, "ratio", "check (N=%d)" % hi]
        text = "== Executor overhead: %s\n" % title + table(headers, rows)
        # The goals are about the executor, so they compare the unfused runs:
        # Plexus with its optimizer off (with it on, the chain is fused into
        # one kernel) against each peer's lower slope of its two variants.
        unfused = slopes.get(("plexus", "noopt"))
        for runtime, goal in (("tensorflow", 5.0), ("onnxruntime", 1.0)):
            peer = [slopes[(runtime, v)] for v in ("default", "noopt") if slopes.get((runtime, v)) is not None]
            s = min(peer) if peer else None
            ratio = s / unfused if s is not None and unfused else None
            met = ratio is not None and ratio >= goal
            summary["overhead_%s_vs_%s" % (kind, runtime)] = {
                "ratio": ratio, "goal": ">= %.0fx" % goal if goal > 1 else "> 1x", "met": met,
                "plexus_us_per_op": unfused, "peer_us_per_op": s}
            text += ("\n   goal: per-op overhead of plexus (optimizer off) %s than %s's (the lower of its "
                     "two variants): ratio %s -> %s") % (
                "at least 5x lower" if goal > 1 else "lower", runtime, fmt_ratio(ratio),
                "MET" if met else "not met")
        out_text.append(text)

    # Models: one table per model, rows by batch and runtime.
    for model, title in MODEL_TITLES.items():
        ids = sorted((c["batch"], c["id"]) for c in cases.values()
                     if c["model"] == model and c["id"] in timed)
        if not ids:
            continue
        rows = []
        for batch, cid in ids:
            base = median("plexus", "default", cid)
            for runtime, variant in ORDER:
                r = by.get((runtime, variant, cid))
                if r is None:
                    continue
                if "error" in r:
                    rows.append([batch, NAMES[(runtime, variant)], "error", "", "", "", "-",
                                 r["error"][:60]])
                    continue
                m = r["median_us"]
                ratio = None if (runtime, variant) == ("plexus", "default") or not base else m / base
                rows.append([batch, NAMES[(runtime, variant)], fmt(m), fmt(r["p10_us"]),
                             fmt(r["p90_us"]), r["iters"],
                             "-" if ratio is None else fmt_ratio(ratio), r.get("check", "-")])
            tf_r = median("tensorflow", "default", cid)
            torch_r = median("torch", "default", cid)
            ort_r = median("onnxruntime", "default", cid)
            goals = {
                "faster_than_tensorflow": None if not (base and tf_r) else tf_r / base > 1,
                "faster_than_torch": None if not (base and torch_r) else torch_r / base > 1,
                "within_10pct_of_onnxruntime": None if not (base and ort_r) else base <= 1.1 * ort_r,
            }
            summary[cid] = {"plexus_median_us": base,
                            "ratio_tensorflow": tf_r / base if base and tf_r else None,
                            "ratio_torch": torch_r / base if base and torch_r else None,
                            "ratio_onnxruntime": ort_r / base if base and ort_r else None,
                            **goals}
        headers = ["batch", "runtime", "median us", "p10 us", "p90 us", "iters", "ratio", "check"]
        text = "== %s\n" % title + table(headers, rows)
        for batch, cid in ids:
            s = summary[cid]

            def yn(v):
                return "n/a" if v is None else ("MET" if v else "not met")
            text += "\n   goals (%s): faster than TF %s; faster than torch %s; within 10%% of ORT %s" % (
                ("T=%d" if model == "hey_snips" else "batch %d") % batch, yn(s["faster_than_tensorflow"]), yn(s["faster_than_torch"]),
                yn(s["within_10pct_of_onnxruntime"]))
        out_text.append(text)

    meta = {}
    if os.path.exists(args.meta):
        with open(args.meta) as f:
            meta = json.load(f)
    meta["load_average_at_report"] = list(os.getloadavg())
    meta.setdefault("machine", platform.platform())
    info = {}
    for r in records:
        key = NAMES.get((r["runtime"], r["variant"]), r["runtime"])
        if key not in info and "error" not in r:
            info[key] = {k: r.get(k) for k in ("version", "threads", "how", "env") if r.get(k)}

    print("\n\n".join(out_text))
    print("\n== Settings")
    for name, i in info.items():
        print("  %-26s %s" % (name, "; ".join("%s: %s" % kv for kv in i.items())))
    print("  ratio = peer median / plexus median (overhead: peer us/op slope / plexus us/op slope); > 1 means plexus is faster")
    print("  load average: start %s, end %s (2-core machine; other processes add noise)" % (
        meta.get("load_average_at_start"), meta["load_average_at_report"]))
    if problems:
        print("\n== Problems")
        for p in problems:
            print("  " + p)

    gemm = None
    gemm_file = os.path.join(os.path.dirname(args.raw), "gemm.json")
    if os.path.exists(gemm_file):
        with open(gemm_file) as f:
            gemm = json.load(f)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "gemm": gemm, "settings": info, "summary": summary, "overhead": overhead,
                   "cases": list(cases.values()), "results": records, "problems": problems},
                  f, indent=1)
    print("\nwrote %s" % args.out)


if __name__ == "__main__":
    main()
