#!/usr/bin/env bash
# Python-level benchmarks of Plexus against PyTorch and TensorFlow, one command:
#
#   bash bench/python/run.sh
#
# 1. eager_dispatch.py: per-call time of tiny eager ops (add, matmul, relu);
# 2. traced.py: plexus.function vs tf.function (with and without XLA) vs
#    torch.compile and torch eager on a small MLP and CNN. torch.compile
#    cannot share a process with TensorFlow (see traced.py), so this is three
#    processes: Plexus pinned to one thread, Plexus beside PyTorch, and Plexus
#    beside TensorFlow, whose tables join the other two;
# 3. train_step.py: one training step (forward, gradients, Adam) of the MLP
#    and the CNN at batch 64, every runtime on one thread, in two processes
#    (beside PyTorch, beside TensorFlow) joined as above; then the peak memory
#    of the step, one process per runtime and case.
# Prints the tables and writes bench/python/results.json.
#
# It needs bench/.venv, made by bench/run.sh (this script does not make it).
# Plexus comes from the Python package of a build tree (the `python` folder
# of the build directory; build the `_plexus` module there first).
#
# Environment (all optional):
#   BENCH_PY_BUILD_DIR=build   build directory whose python/ folder holds plexus
#   BENCH_PY_VENV=bench/.venv  the virtualenv with TensorFlow and PyTorch
#   BENCH_PY_SECONDS=...       seconds per timed repeat (eager 0.05, traced 0.1)
#   BENCH_PY_REPEATS=7         timed repeats (rounds) per case
#   BENCH_PY_OUT=bench/python/results.json
#   PLEXUS_*                   passed to Plexus and recorded
set -euo pipefail

cd "$(dirname "$0")/../.."
BUILD=${BENCH_PY_BUILD_DIR:-build}
VENV=${BENCH_PY_VENV:-bench/.venv}
REPEATS=${BENCH_PY_REPEATS:-7}
OUT=${BENCH_PY_OUT:-bench/python/results.json}
PY="$VENV/bin/python"
export TF_CPP_MIN_LOG_LEVEL=3 PYTHONWARNINGS=ignore

if [ ! -x "$PY" ]; then
  echo "no $PY: run 'bash bench/run.sh' once to make the virtualenv (or set BENCH_PY_VENV)" >&2
  exit 1
fi
if ! ls "$BUILD"/python/plexus/_plexus*.so >/dev/null 2>&1; then
  echo "no $BUILD/python/plexus/_plexus*.so: build the Python module in $BUILD (or set BENCH_PY_BUILD_DIR)" >&2
  exit 1
fi
PKG_DIR=$(cd "$BUILD/python" && pwd)
export PYTHONPATH="$PKG_DIR${PYTHONPATH:+:$PYTHONPATH}"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
step() { printf '\n### %s (%s)\n' "$1" "$(date +%T)"; }
secs() { if [ -n "${BENCH_PY_SECONDS:-}" ]; then echo "--seconds $BENCH_PY_SECONDS"; fi; }
# Runs a script, keeping TensorFlow's and torch's log lines out of the output
# (they go to $TMP/stderr.log, shown when the script fails).
quiet() {
  if ! "$@" 2>>"$TMP/stderr.log"; then
    echo "FAILED: $*" >&2
    grep -v "oneDNN custom operations\|absl::InitializeLog" "$TMP/stderr.log" | tail -40 >&2
    return 1
  fi
}

"$PY" - "$TMP/meta.json" "$BUILD" <<'EOF'
import json, os, sys, time
sys.path.insert(0, "bench/python")
import _common
meta = dict(_common.machine(), started=time.strftime("%Y-%m-%d %H:%M:%S"), build_dir=sys.argv[2],
            load_average_at_start=list(os.getloadavg()))
json.dump(meta, open(sys.argv[1], "w"))
print("machine:", meta["machine"], "|", meta["cpu"], "x", meta["cpus"], "| load", meta["load_average"])
EOF

status=0
step "eager dispatch (plexus, torch, tensorflow in one process)"
# shellcheck disable=SC2046
quiet "$PY" bench/python/eager_dispatch.py --repeats "$REPEATS" $(secs) --json "$TMP/eager.json" || status=1

step "traced: plexus.function pinned to one thread"
# shellcheck disable=SC2046
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PLEXUS_INTER_OP_THREADS=1 \
  quiet "$PY" bench/python/traced.py --runners plexus --label " (1 thread)" --repeats "$REPEATS" $(secs) \
  --json "$TMP/traced_1thread.json" >/dev/null || status=1
step "traced: plexus.function beside torch.compile and torch eager"
# shellcheck disable=SC2046
quiet "$PY" bench/python/traced.py --runners plexus,compile,eager --label " [torch process]" \
  --repeats "$REPEATS" $(secs) --json "$TMP/traced_torch.json" >/dev/null || status=1
step "traced: plexus.function beside tf.function and tf.function (XLA)"
extra=()
for f in "$TMP/traced_torch.json" "$TMP/traced_1thread.json"; do
  if [ -f "$f" ]; then extra+=(--extra "$f"); fi
done
# shellcheck disable=SC2046
quiet "$PY" bench/python/traced.py --runners plexus,tf,xla "${extra[@]}" --repeats "$REPEATS" $(secs) \
  --json "$TMP/traced.json" || status=1

pinned() { OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PLEXUS_INTER_OP_THREADS=1 "$@"; }
step "training step: plexus.function beside torch eager and torch.compile (1 thread each)"
# shellcheck disable=SC2046
pinned quiet "$PY" bench/python/train_step.py --runners plexus,eager,compile --label " [torch process]" \
  --repeats "$REPEATS" $(secs) --json "$TMP/train_torch.json" >/dev/null || status=1
step "training step: plexus.function beside tf.function and tf.function (XLA) (1 thread each)"
extra=()
if [ -f "$TMP/train_torch.json" ]; then extra+=(--extra "$TMP/train_torch.json"); fi
# shellcheck disable=SC2046
pinned quiet "$PY" bench/python/train_step.py --runners plexus,tf,xla "${extra[@]}" --repeats "$REPEATS" $(secs) \
  --json "$TMP/train.json" || status=1
step "training step: peak memory (one process per runner and case)"
for case in "mlp b64" "cnn b64"; do
  for runner in plexus eager tf; do
    pinned quiet "$PY" bench/python/train_step.py --memory "$runner" --case "$case" \
      --json "$TMP/memory_${runner}_${case// /_}.json" >/dev/null || status=1
  done
done

"$PY" - "$TMP" "$OUT" <<'EOF'
import glob, json, os, sys
tmp, out = sys.argv[1:]
def load(name):
    p = os.path.join(tmp, name)
    return json.load(open(p)) if os.path.exists(p) else None
meta = load("meta.json")
meta["load_average_at_end"] = list(os.getloadavg())
meta["env"] = {k: v for k, v in os.environ.items() if k.startswith("PLEXUS_")}
memory = {}
for path in sorted(glob.glob(os.path.join(tmp, "memory_*.json"))):
    m = json.load(open(path))
    memory.setdefault(m["case"], {})[m["runner"]] = m["result"]
if memory:
    runners = sorted({r for c in memory.values() for r in c})
    print("\nTraining step, memory above the loaded framework in MiB: peak (state between steps)\n")
    print("| case | " + " | ".join(runners) + " |")
    print("|---" * (len(runners) + 1) + "|")
    for case, by_runner in memory.items():
        cells = ["%.1f (%.1f)" % (by_runner[r]["peak_mib"], by_runner[r]["state_mib"]) if r in by_runner else "-"
                 for r in runners]
        print("| " + case + " | " + " | ".join(cells) + " |")
res = {"meta": meta, "eager_dispatch": load("eager.json"), "traced": load("traced.json"),
       "traced_processes": {"torch": load("traced_torch.json"), "plexus_1thread": load("traced_1thread.json")},
       "train_step": load("train.json"), "train_step_torch_process": load("train_torch.json"),
       "train_step_memory": memory}
with open(out, "w") as f:
    json.dump(res, f, indent=1)
print("\nload average at start %s, at end %s; wrote %s" % (
    [round(x, 2) for x in meta["load_average_at_start"]], [round(x, 2) for x in meta["load_average_at_end"]], out))
EOF
exit $status
