#!/usr/bin/env python3
"""Summarizes the traces of `plexus_cuda_bench --profile DIR`: for each model
and batch, each node's median duration over the traced runs (the runtime was
synchronous_debug, so a node's duration holds its device work and the wait
for it), added up by op, largest first, with the share of the run.

    python3 bench/cuda/profile_summary.py DIR [--top N]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import statistics


def summarize(path: pathlib.Path, top: int) -> str:
    events = json.loads(path.read_text())
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    per_node = collections.defaultdict(list)
    op_of = {}
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        per_node[e["name"]].append(float(e["dur"]))
        op_of[e["name"]] = e.get("cat", "?")
    by_op = collections.Counter()
    count = collections.Counter()
    for node, durs in per_node.items():
        by_op[op_of[node]] += statistics.median(durs)
        count[op_of[node]] += 1
    total = sum(by_op.values())
    lines = [f"{path.stem}: {total:.1f} us a run over {len(per_node)} nodes"]
    for op, us in by_op.most_common(top):
        lines.append(f"  {op:32s} {count[op]:4d} nodes  {us:9.1f} us  {100 * us / total:5.1f}%")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    for path in sorted(pathlib.Path(args.dir).glob("*.json")):
        print(summarize(path, args.top))


if __name__ == "__main__":
    main()
