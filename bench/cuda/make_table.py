"""Sets the JSON lines of plexus_cuda_bench and torch_cuda_bench.py side by side.

    python3 bench/cuda/make_table.py FILE.jsonl [FILE.jsonl ...]

Rows are joined on "key". "torch/Plexus" is torch's median time divided by
Plexus's: above 1, Plexus is faster. GB/s counts the bytes read plus the
bytes written; "frac" is that over the same runtime's own device copy
bandwidth (copy_1GiB). Standard library only (the GPU machine may lack numpy).
"""
import json
import math
import sys


def load(paths):
    rows = {}     # (side, key) -> record
    order = []    # keys, first seen first
    infos = []
    skips = []
    for path in paths:
        try:
            lines = open(path).read().splitlines()
        except OSError as e:
            skips.append("%s: %s" % (path, e))
            continue
        for line in lines:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            side = rec.get("side", "?")
            if "skip" in rec:
                text = "%s: %s" % (side, rec["skip"])
                if text not in skips:
                    skips.append(text)
                continue
            if "info" in rec:
                infos.append(rec)
                continue
            if side == "plexus" and rec.get("capture"):
                side = "plexus_capture"
            key = rec.get("key")
            if key is None:
                continue
            rows[(side, key)] = rec
            if key not in order:
                order.append(key)
    return rows, order, infos, skips


def fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if value == 0 or not math.isfinite(value):
        return "%g" % value
    mag = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - mag)
    return "%.*f" % (min(decimals, 6), value)


def cell(rec, field, scale=1.0):
    if rec is None:
        return "-"
    if "error" in rec:
        return "ERR"
    v = rec.get(field)
    return fmt(v * scale) if isinstance(v, (int, float)) else "-"


def ratio(num, den, field="median_us"):
    if not num or not den or "error" in num or "error" in den:
        return None
    a, b = num.get(field), den.get(field)
    if not a or not b:
        return None
    return a / b


def table(header, body):
    widths = [max(len(str(r[i])) for r in [header] + body) for i in range(len(header))]
    out = ["  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w)
                     for i, (h, w) in enumerate(zip(header, widths)))]
    out.append("  ".join("-" * w for w in widths))
    for r in body:
        out.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def notes_of(rec):
    if rec is None:
        return ""
    if "error" in rec:
        return "plexus error: " + rec["error"][:120]
    parts = []
    notes = [n for n in (rec.get("placement_notes") or "").split("; ") if n]
    placed = [n for n in notes if n.startswith("node '")]
    consts = [n for n in placed if "(op Const)" in n]
    others = [n for n in placed if "(op Const)" not in n]
    copies = [n for n in notes if n.startswith("copy of")]
    if others:
        parts.append("%d op(s) off the GPU: %s" % (
            len(others), ", ".join(sorted({n.split("(op ")[1].split(")")[0] for n in others}))))
    if consts:
        parts.append("%d Const on the CPU" % len(consts))
    if copies:
        parts.append("%d CPU->GPU copies" % len(copies))
    if isinstance(rec.get("copies_per_run"), int):
        parts.append("%d copies per run" % rec["copies_per_run"])
    if rec.get("output_device") not in (None, "") and not str(rec["output_device"]).startswith("CUDA"):
        parts.append("output on " + rec["output_device"])
    rel = rec.get("ref_rel_diff")
    if isinstance(rel, (int, float)) and rel > 1e-3:
        parts.append("ref rel diff %.2g" % rel)
    if "ref_error" in rec:
        parts.append("ref check failed")
    return "; ".join(parts)


def main(paths):
    rows, order, infos, skips = load(paths)
    out = []
    for info in infos:
        out.append("%s: %s" % (info.get("side"), ", ".join(
            "%s=%s" % (k, v) for k, v in info.items() if k not in ("side", "info"))))
    for s in skips:
        out.append("SKIP " + s)
    if infos or skips:
        out.append("")
    out.append("torch/Plexus = torch median time / Plexus median time (>1: Plexus faster).")
    out.append("")

    def get(side, key):
        return rows.get((side, key))

    errors = []

    def memory_bound(group, title):
        keys = [k for k in order if (get("plexus", k) or get("torch", k) or {}).get("group") == group]
        if not keys:
            return
        body = []
        ratios = []
        for k in keys:
            p, t = get("plexus", k), get("torch", k)
            r = ratio(t, p)
            ratios.append(r)
            body.append([k, cell(p, "median_us"), cell(p, "gbps"), cell(p, "frac_copy"),
                         cell(t, "median_us"), cell(t, "gbps"), cell(t, "frac_copy"),
                         fmt(r), notes_of(p)])
        out.append("== %s (GB/s = bytes read + written / median time; frac = of that "
                   "runtime's own copy bandwidth)" % title)
        out.append(table(["case", "plexus us", "GB/s", "frac", "torch us", "GB/s", "frac",
                          "torch/Plexus", "notes"], body))
        out.append("geometric mean torch/Plexus: %s" % fmt(geomean(ratios)))
        out.append("")

    memory_bound("bandwidth", "Bandwidth: device copy and elementwise ops")
    keys = [k for k in order if k.startswith("matmul_")]
    if keys:
        body = []
        ratios = []
        for k in keys:
            p, t = get("plexus", k), get("torch", k)
            r = ratio(t, p)
            ratios.append(r)
            body.append([k, cell(p, "median_us"), cell(p, "tflops"), cell(t, "median_us"),
                         cell(t, "tflops"), fmt(r), notes_of(p)])
        out.append("== MatMul (square n x n; TFLOP/s = 2 n^3 / median time)")
        out.append(table(["case", "plexus us", "TFLOP/s", "torch us", "TFLOP/s",
                          "torch/Plexus", "notes"], body))
        out.append("geometric mean torch/Plexus: %s" % fmt(geomean(ratios)))
        out.append("")

    memory_bound("reduce", "Softmax and reductions")
    keys = [k for k in order if k.startswith("model_")]
    if keys:
        body = []
        for k in keys:
            p, pc = get("plexus", k), get("plexus_capture", k)
            t, tc = get("torch", k), get("torch_compile", k)
            body.append([k, cell(p, "median_us", 1e-3), cell(pc, "median_us", 1e-3),
                         cell(t, "median_us", 1e-3), cell(tc, "median_us", 1e-3),
                         fmt(ratio(t, p)), fmt(ratio(tc, p)), notes_of(p)])
        out.append("== Models (median ms per run; 'capture' = Plexus with PLEXUS_DEVICE_GRAPHS=1)")
        out.append(table(["case", "plexus ms", "capture ms", "torch eager ms",
                          "torch.compile ms", "eager/Plexus", "compile/Plexus", "notes"], body))
        out.append("")

    for (side, key), rec in sorted(rows.items()):
        if "error" in rec:
            errors.append("%s %s: %s" % (side, key, rec["error"]))
    if errors:
        out.append("== Errors")
        out.extend(errors)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
