"""Times the prepared cases in Plexus: one plexus_graph_bench process per
case (the same .pb file, the same input .npy as the peers), one JSON line
per case printed and appended to --out.

Variant "default" runs Plexus as it is; "noopt" sets PLEXUS_OPTIMIZER=off so
the session's graph optimizer leaves the graph alone. Other PLEXUS_*
variables in the environment (e.g. PLEXUS_DISABLE_PASSES) pass through and
are recorded. BENCH_CASES (a regex on case ids) picks cases.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="path of plexus_graph_bench")
    parser.add_argument("--variant", choices=["default", "noopt"], default="default")
    parser.add_argument("--group", choices=["all", "model", "overhead", "keras"], default="all")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--min-iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    env = dict(os.environ)
    if args.variant == "noopt":
        env["PLEXUS_OPTIMIZER"] = "off"
    plexus_env = {k: v for k, v in env.items() if k.startswith("PLEXUS_")}
    name = "plexus" + ("" if args.variant == "default" else "_noopt")

    for case in common.load_cases():
        if not common.case_selected(case, args.group):
            continue
        record = {"runtime": "plexus", "variant": args.variant, "label": case["id"],
                  "batch": case["batch"], "env": plexus_env,
                  "how": "plexus_graph_bench: one Session on the frozen GraphDef, cpu plugin"
                         + (", optimizer off" if args.variant == "noopt" else "")}
        outdir = tempfile.mkdtemp(prefix="plexus_bench_")
        cmd = [args.bin, "--graph", case["graph"], "--fetch", case["fetch"],
               "--feed", "%s=%s" % (case["input"], case["input_file"]),
               "--batch", str(case["batch"]), "--label", case["id"],
               "--warmup", str(args.warmup), "--iters", str(args.min_iters),
               "--seconds", str(args.seconds), "--save-outputs", outdir,
               # The same intra-op threads as every peer (BENCH_THREADS).
               "--threads", str(common.threads())]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
            if proc.returncode != 0 or not lines:
                err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                record["error"] = "exit %d: %s" % (proc.returncode, err[:300])
            else:
                result = json.loads(lines[-1])
                for key in ("graph", "label", "batch", "runtime"):
                    result.pop(key, None)
                record.update(result)
                produced = os.path.join(outdir, "0.npy")
                if os.path.exists(produced):
                    shutil.copy(produced, common.output_path(name, case["id"]))
        except subprocess.TimeoutExpired:
            record["error"] = "timed out after 600 s"
        finally:
            shutil.rmtree(outdir, ignore_errors=True)
        common.emit(record, args.out)


if __name__ == "__main__":
    main()
