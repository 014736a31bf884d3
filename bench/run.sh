#!/usr/bin/env bash
# Runs every benchmark of bench/ with one command:
#
#   bash bench/run.sh
#
# 1. a virtualenv in bench/.venv with the peers of bench/requirements.txt
#    (TensorFlow, ONNX Runtime, tf2onnx, PyTorch, onnx2torch);
# 2. a Release build with -DPX_BUILD_BENCH=ON in build-bench/ (plexus_graph_bench,
#    and plexus_gemm_bench when the tree has it);
# 3. bench/.cache/: the benchmark graphs, their ONNX conversions and inputs;
# 4. each case timed in Plexus, TensorFlow, ONNX Runtime and PyTorch;
# 5. one table per benchmark, and bench/results.json;
# 6. the real models (bench/peers/keras_models.py: MobileNetV2/V3Small,
#    EfficientNetB0, ResNet50, DenseNet121, a transformer encoder; random
#    weights; batch 1 and 8), bench/peers/models.py, bench/results_models.json:
#    - Plexus, ONNX Runtime, TensorFlow and PyTorch each with one thread and
#      with all threads (the thread count is a column of the table). PyTorch
#      is "torch (onnx2torch)": the tf2onnx model converted by onnx2torch, not
#      a hand-written module; resnet50 also has "torch (torchvision)",
#      torchvision's resnet50 given the Keras weights (models.py's header
#      says how, and why the other models have no such row);
#    - contention rows: with all threads, Plexus, ONNX Runtime and TensorFlow
#      again while a child process spins (`while True: pass`) pinned to the
#      last CPU, reported as the slowdown contended / quiet median;
#    - each output checked against TensorFlow's: ok when
#      max|x - tf| <= 1e-3 * max|tf| (softmax outputs of random-weight
#      models are about 1e-3, so the tolerance is relative to their size);
#    - goal lines per model case: plexus <= onnxruntime with one thread and
#      with all threads; plexus slowdown <= 2.5x under contention.
#
# Modes:
#   bash bench/run.sh                                  everything
#   BENCH_ONLY=models bash bench/run.sh                step 6 only
#   BENCH_ONLY=contention bash bench/run.sh            step 6's slowdown ratios only
#   BENCH_CASES='mobilenet_v2|resnet50' bash bench/run.sh   only those cases
#   BENCH_NO_BUILD=1 BENCH_BUILD_DIR=/abs/build bash bench/run.sh   an existing build
#
# Environment (all optional):
#   BENCH_THREADS=N        steps 4-5: intra-op threads of every runtime, Plexus
#                          included (default 2; with 1, Plexus's inter-op
#                          parallelism is off too, as the peers' inter_op=1);
#                          step 6: the "all threads" count
#                          (default: the CPUs this process may use)
#   BENCH_SECONDS=1        timed seconds per case and runtime, after warmup
#   BENCH_MIN_ITERS=20     least number of timed runs per case
#   BENCH_BUILD_DIR=build-bench
#   BENCH_JOBS=2           ninja -j
#   BENCH_NO_BUILD=1       use the plexus_graph_bench already in BENCH_BUILD_DIR
#   BENCH_LOCK=FILE        hold this flock(1) lock while building (shared machines)
#   BENCH_TIMING_LOCK=FILE hold this lock while timing (keeps other builds off the CPUs)
#   BENCH_GEMM=0           skip the GEMM benchmark
#   BENCH_GEMM_ARGS=...    arguments for plexus_gemm_bench
#   PLEXUS_*               passed to Plexus (e.g. PLEXUS_DISABLE_PASSES) and recorded
#   BENCH_ONLY=models      only step 6; =contention: only its all-thread and
#                          contended timings (TensorFlow's too, for the checks)
#   BENCH_CASES=REGEX      only the cases whose id matches (re.search), in steps
#                          4-6 (ids: mobilenet_v2_b1, resnet50_b8, kws_cnn_s_b64,
#                          chain_1000_b1, ...); steps 4-5 are skipped when none
#                          of theirs match, and so is the GEMM benchmark
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=bench/.venv
CACHE=bench/.cache
BUILD=${BENCH_BUILD_DIR:-build-bench}
SECS=${BENCH_SECONDS:-1}
MIN_ITERS=${BENCH_MIN_ITERS:-20}
JOBS=${BENCH_JOBS:-2}
MODEL_THREADS=${BENCH_THREADS:-}   # step 6's "all threads" when set
export BENCH_THREADS=${BENCH_THREADS:-2}
export TF_CPP_MIN_LOG_LEVEL=3
export PYTHONWARNINGS=ignore

step() { printf '\n### %s (%s)\n' "$1" "$(date +%T)"; }
locked() {  # locked LOCKFILE CMD...: run CMD under flock when LOCKFILE is set
  local lock=$1; shift
  if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi
}

step "python environment: $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! cmp -s bench/requirements.txt "$VENV/.installed-requirements"; then
  "$VENV/bin/python" -m pip install -q -r bench/requirements.txt
  cp bench/requirements.txt "$VENV/.installed-requirements"
else
  echo "up to date"
fi
PY="$VENV/bin/python"

GEMM_BIN=""
if [ "${BENCH_NO_BUILD:-0}" = 1 ]; then
  step "build: skipped (BENCH_NO_BUILD=1), using $BUILD/bin"
  [ -x "$BUILD/bin/plexus_graph_bench" ] || { echo "no $BUILD/bin/plexus_graph_bench"; exit 1; }
  if [ "${BENCH_GEMM:-1}" != 0 ] && [ -x "$BUILD/bin/plexus_gemm_bench" ]; then
    GEMM_BIN="$BUILD/bin/plexus_gemm_bench"
  fi
else
  step "build: $BUILD"
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  locked "${BENCH_LOCK:-}" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPX_BUILD_BENCH=ON -DPX_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
  locked "${BENCH_LOCK:-}" ninja -C "$BUILD" -j"$JOBS" plexus_graph_bench
  if [ "${BENCH_GEMM:-1}" != 0 ]; then
    if ninja -C "$BUILD" -t targets all 2>/dev/null | grep -q '^plexus_gemm_bench:'; then
      if locked "${BENCH_LOCK:-}" ninja -C "$BUILD" -j"$JOBS" plexus_gemm_bench; then
        GEMM_BIN="$BUILD/bin/plexus_gemm_bench"
      else
        echo "plexus_gemm_bench did not build; skipping GEMM"
      fi
    elif [ -x build/bin/plexus_gemm_bench ]; then
      GEMM_BIN=build/bin/plexus_gemm_bench
    fi
  fi
fi

step "prepare graphs, ONNX models and inputs: $CACHE"
mkdir -p "$CACHE"
"$PY" bench/peers/prepare.py 2> "$CACHE/prepare.log" || { cat "$CACHE/prepare.log"; exit 1; }

RAW="$CACHE/raw.jsonl"
rm -f "$RAW" "$CACHE/gemm.json"
rm -rf "$CACHE/outputs"
"$PY" - "$CACHE/meta.json" <<'EOF'
import json, os, platform, sys, time
cpu = ""
try:
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
except OSError:
    pass
json.dump({"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.platform(),
           "cpu": cpu, "cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
           "peer_threads": int(os.environ["BENCH_THREADS"]),
           "seconds_per_case": float(os.environ.get("BENCH_SECONDS", "1"))}, open(sys.argv[1], "w"))
EOF

timed() {
  local args=(--seconds "$SECS" --min-iters "$MIN_ITERS" --out "$RAW")
  step "plexus"
  "$PY" bench/peers/run_plexus.py --bin "$BUILD/bin/plexus_graph_bench" "${args[@]}" >/dev/null
  "$PY" bench/peers/run_plexus.py --bin "$BUILD/bin/plexus_graph_bench" --variant noopt \
    --group overhead "${args[@]}" >/dev/null
  step "tensorflow"
  "$PY" bench/peers/run_peer.py --runtime tensorflow "${args[@]}" >/dev/null 2>"$CACHE/tensorflow.log"
  "$PY" bench/peers/run_peer.py --runtime tensorflow --variant noopt --group overhead \
    "${args[@]}" >/dev/null 2>>"$CACHE/tensorflow.log"
  step "onnxruntime"
  "$PY" bench/peers/run_peer.py --runtime onnxruntime "${args[@]}" >/dev/null 2>"$CACHE/onnxruntime.log"
  "$PY" bench/peers/run_peer.py --runtime onnxruntime --variant noopt --group overhead \
    "${args[@]}" >/dev/null 2>>"$CACHE/onnxruntime.log"
  step "torch"
  "$PY" bench/peers/run_peer.py --runtime torch "${args[@]}" >/dev/null 2>"$CACHE/torch.log"
  if [ -n "$GEMM_BIN" ] && [ -z "${BENCH_CASES:-}" ]; then
    step "gemm: $GEMM_BIN"
    # shellcheck disable=SC2086
    "$GEMM_BIN" ${BENCH_GEMM_ARGS:---benchmark_min_time=0.2} \
      --benchmark_out="$CACHE/gemm.json" --benchmark_out_format=json || echo "GEMM benchmark failed"
  fi
}
models() {
  step "real models: one thread, all threads, contention"
  local opts=(--only all)
  [ "${BENCH_ONLY:-}" = contention ] && opts=(--only contention)
  [ -n "$MODEL_THREADS" ] && opts+=(--all-threads "$MODEL_THREADS")
  "$PY" bench/peers/models.py --bin "$BIN" --seconds "$SECS" --cases "${BENCH_CASES:-}" \
    "${opts[@]}" --out bench/results_models.json 2>"$CACHE/models.log" | grep -v '^{'
}
BIN=$(realpath -m "$BUILD/bin/plexus_graph_bench")
# Steps 4-5 run unless BENCH_ONLY is set or BENCH_CASES matches none of their cases.
MAIN_CASES=$("$PY" -c 'import sys; sys.path.insert(0, "bench/peers"); import common
print(sum(common.case_selected(c, "all") for c in common.load_cases()))')
export -f timed step models
export PY RAW SECS MIN_ITERS BUILD CACHE GEMM_BIN ROOT BIN MODEL_THREADS
if [ -z "${BENCH_ONLY:-}" ] && [ "$MAIN_CASES" -gt 0 ]; then
  locked "${BENCH_TIMING_LOCK:-}" bash -c timed
  step "report"
  "$PY" bench/peers/report.py --raw "$RAW" --meta "$CACHE/meta.json" --out bench/results.json
fi
locked "${BENCH_TIMING_LOCK:-}" bash -c models
