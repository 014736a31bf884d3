"""Plexus against ONNX Runtime in paired, interleaved rounds, for shared
machines whose speed drifts over minutes (another tenant, frequency).

Each round times the case once in Plexus (a plexus_graph_bench process) and
right after in ONNX Runtime (one InferenceSession kept for all rounds), the
same number of runs each; the ratio of that round's medians compares the
two under the same conditions. The result is the median of the rounds'
ratios, with every ratio listed: a disturbed round shows as an outlier
instead of moving a whole table. run.sh's tables time each runtime in one
stretch, minutes apart, so a slow minute can land on one runtime only.

Usage (from the repository root, after bash bench/run.sh has prepared
bench/.cache):

  bench/.venv/bin/python bench/peers/paired.py --bin build/bin/plexus_graph_bench \\
      --threads 1 --rounds 7 'kws|hey_snips'

The positional argument is a regex searched in the case ids of
bench/.cache/cases.json (the run.sh cases and the real models alike).
ratio = ONNX Runtime median / Plexus median: above 1, Plexus is faster.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

import common


def plexus_median(binary, case, threads, iters):
    cmd = [binary, "--graph", case["graph"], "--fetch", case["fetch"],
           "--feed", f"{case['input']}={case['input_file']}", "--threads", str(threads),
           "--warmup", "5", "--iters", str(iters)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])["median_us"]


def ort_session(case, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(case["onnx"], so, providers=["CPUExecutionProvider"])


def ort_median(session, feed, iters):
    for _ in range(5):
        session.run(None, feed)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter_ns()
        session.run(None, feed)
        times.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", help="regex searched in the case ids")
    parser.add_argument("--bin", required=True, help="path of plexus_graph_bench")
    parser.add_argument("--threads", type=int, default=common.threads())
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="about how long each runtime runs per round")
    parser.add_argument("--out", help="also write the rows to this JSON file (appended to "
                        "its rows when it exists)")
    args = parser.parse_args()
    cases = [c for c in common.load_cases()
             if re.search(args.cases, c["id"]) and c.get("onnx") and not c.get("onnx_error")]
    if not cases:
        sys.exit(f"no case with an ONNX model matches {args.cases!r} in {common.CASES_FILE}")
    print(f"threads {args.threads}, {args.rounds} rounds; ratio = onnxruntime / plexus "
          f"(median of the rounds' ratios)")
    rows = []
    for case in cases:
        session = ort_session(case, args.threads)
        feed = {session.get_inputs()[0].name: np.load(case["input_file"])}
        # Runs per round from one ONNX Runtime estimate, the same for both.
        estimate = ort_median(session, feed, 5)
        iters = int(min(2000, max(10, args.seconds * 1e6 / max(estimate, 1.0))))
        plexus, onnx = [], []
        for _ in range(args.rounds):
            plexus.append(plexus_median(args.bin, case, args.threads, iters))
            onnx.append(ort_median(session, feed, iters))
        ratios = [o / p for o, p in zip(onnx, plexus)]
        print(f"{case['id']:24s} plexus {statistics.median(plexus):9.1f} us  "
              f"onnxruntime {statistics.median(onnx):9.1f} us  ratio {statistics.median(ratios):.3f}  "
              f"rounds {' '.join(f'{r:.2f}' for r in ratios)}", flush=True)
        rows.append({"case": case["id"], "threads": args.threads, "runs_per_round": iters,
                     "plexus_median_us": statistics.median(plexus),
                     "onnxruntime_median_us": statistics.median(onnx),
                     "ratio": statistics.median(ratios), "round_ratios": ratios})
    if args.out:
        try:
            with open(args.out) as f:
                record = json.load(f)
        except FileNotFoundError:
            record = {"meta": {}, "rows": []}
        record["meta"] = {"cpus": os.cpu_count(), "load_average_at_end": list(os.getloadavg()),
                          "ratio": "onnxruntime median / plexus median, median over rounds"}
        record["rows"] = [r for r in record["rows"]
                          if (r["case"], r["threads"]) not in {(x["case"], x["threads"]) for x in rows}] + rows
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
