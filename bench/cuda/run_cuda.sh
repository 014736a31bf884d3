#!/usr/bin/env bash
# GPU benchmarks of Plexus (cuda plugin) against PyTorch, run on the GPU
# machine from the repository root, after .ci/gpu/run.sh has unpacked the
# build and set PX_BUILD and LD_LIBRARY_PATH:
#
#   bash .ci/gpu/run.sh .gpu bash bench/cuda/run_cuda.sh
#
# Writes to $OUT (default /tmp/px-cuda-bench): device.txt, plexus.jsonl,
# plexus.log, torch.jsonl, torch.log, plexus_train.jsonl, torch_train.jsonl,
# steps.log and table.txt (bench/cuda/README.md says how to read it), and
# prints the table. About 2 minutes on an H100 without the training steps
# (BENCH_TRAIN=0); those should add about 3 (not yet run on a GPU; their time
# limits allow 10). Every step has its own time limit, so one that hangs leaves
# the others.
#
# Environment: BENCH_SECONDS (timed seconds per case, default 0.25),
# TORCH_COMPILE_BUDGET (seconds of torch.compile before further compiles are
# skipped, default 60, for each of the two torch steps), TRAIN_SECONDS (timed
# seconds per training row, default 0.5), BENCH_TRAIN (0: no training
# steps), BENCH_CASES (the cases of both sides, default
# bandwidth,matmul,reduce,models), BENCH_PROFILE (0: no profile of the
# models), PYTHON (default python3), TORCH_LD_LIBRARY_PATH (the library path
# for torch, instead of the filtered one below).
set -uo pipefail
repo=$(pwd)
out=${OUT:-/tmp/px-cuda-bench}
mkdir -p "$out"
build=${PX_BUILD:-$repo/build}
bin="$build/bin/plexus_cuda_bench"
data="$repo/tests/data"
seconds=${BENCH_SECONDS:-0.25}
cases=${BENCH_CASES:-bandwidth,matmul,reduce,models}
TRAIN_SECONDS=${TRAIN_SECONDS:-0.5}
python=${PYTHON:-python3}
here="$repo/bench/cuda"

if [ ! -x "$bin" ]; then
  echo "run_cuda.sh: $bin not found (build the target plexus_cuda_bench with PX_BUILD_BENCH=ON)" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
  --format=csv > "$out/device.txt" 2>&1 || echo "nvidia-smi failed" >> "$out/device.txt"
cat "$out/device.txt"

weights=$(mktemp -d)
trap 'rm -rf "$weights"' EXIT
: > "$out/plexus.jsonl"
: > "$out/plexus.log"
: > "$out/steps.log"

step() {  # step NAME LIMIT_SECONDS COMMAND...: runs it, says how it ended
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - start)) s" | tee -a "$out/steps.log" >&2
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "== $name: TIMED OUT after $limit s" | tee -a "$out/steps.log" >&2
  fi
  return 0
}

# The torch models take the frozen graphs' weights; Plexus writes them.
step export 60 "$bin" --data-dir "$data" --export-weights "$weights" 2>> "$out/plexus.log"

# Plexus: every case, then the float MatMuls with TF32 (the plugin reads
# PX_CUDA_ALLOW_TF32 once per process), then the models with
# PLEXUS_DEVICE_GRAPHS=1.
step plexus 100 "$bin" --data-dir "$data" --seconds "$seconds" --cases "$cases" \
  >> "$out/plexus.jsonl" 2>> "$out/plexus.log"
case ,$cases, in *,matmul,*)
  step plexus_tf32 30 "$bin" --data-dir "$data" --seconds "$seconds" --cases matmul --tf32 \
    >> "$out/plexus.jsonl" 2>> "$out/plexus.log" ;;
esac
case ,$cases, in *,models,*)
  step plexus_capture 30 "$bin" --data-dir "$data" --seconds "$seconds" --cases models --capture \
    >> "$out/plexus.jsonl" 2>> "$out/plexus.log"
  # Where the models' time goes (profile_summary.py): each node's device
  # time, by op, with cuBLASLt and cuDNN and with the native kernels, and the
  # host's time to queue each node.
  if [ "${BENCH_PROFILE:-1}" != 0 ]; then
    step profile 60 "$bin" --data-dir "$data" --cases models --profile "$out/profile_vendor" \
      2>> "$out/plexus.log"
    step profile_native 60 env PX_CUDA_KERNELS=native "$bin" --data-dir "$data" --cases models \
      --profile "$out/profile_native" 2>> "$out/plexus.log"
    step profile_host 60 "$bin" --data-dir "$data" --cases models --profile-host "$out/profile_host" \
      2>> "$out/plexus.log"
    { echo "== device time by op, vendor kernels (cuBLASLt, cuDNN)"
      "$python" "$here/profile_summary.py" "$out/profile_vendor"
      echo "== device time by op, native kernels (PX_CUDA_KERNELS=native)"
      "$python" "$here/profile_summary.py" "$out/profile_native"
      echo "== host time to queue, by op (vendor kernels)"
      "$python" "$here/profile_summary.py" "$out/profile_host"
    } > "$out/profile.txt" 2>&1
  fi ;;
esac

# PyTorch: the same cases, plus torch.compile for the models. Not with the
# library path .ci/gpu/run.sh made for Plexus: the system's cuDNN (or cuBLAS)
# found there is older than the one torch bundles, and torch refuses it
# ("cuDNN version incompatibility"). Dropped: the bundle's deps folder and
# every folder holding one of the CUDA libraries run.sh looks for.
torch_ld=""
IFS=: read -r -a ld_dirs <<< "${LD_LIBRARY_PATH:-}"
for d in "${ld_dirs[@]}"; do
  [ -n "$d" ] || continue
  case $d in */px/deps) continue ;; esac
  skip=0
  for lib in libcudnn.so.9 libcublasLt.so.13 libnvrtc.so.13 libnvrtc-builtins.so.13.0; do
    [ -e "$d/$lib" ] && skip=1
  done
  [ $skip -eq 1 ] || torch_ld="${torch_ld:+$torch_ld:}$d"
done
torch_ld=${TORCH_LD_LIBRARY_PATH:-$torch_ld}
echo "torch runs with LD_LIBRARY_PATH=$torch_ld" > "$out/torch.log"
step torch 110 env LD_LIBRARY_PATH="$torch_ld" "$python" "$here/torch_cuda_bench.py" --weights "$weights" \
  --data-dir "$data/tf_graphs" --seconds "$seconds" --cases "$cases" \
  --compile-budget "${TORCH_COMPILE_BUDGET:-60}" \
  > "$out/torch.jsonl" 2>> "$out/torch.log"

"$python" "$here/make_table.py" "$out/plexus.jsonl" "$out/torch.jsonl" > "$out/table.txt"

# Training steps (train_cuda.py): Plexus writes the weights and batches, torch
# reads them; BENCH_TRAIN=0 skips them.
if [ "${BENCH_TRAIN:-1}" != 0 ]; then
  train_data="$weights/train"
  step plexus_train 240 env PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" PLEXUS_PLUGIN_PATH= \
    "$python" "$here/train_cuda.py" --side plexus --data "$train_data" --seconds "$TRAIN_SECONDS" \
    --plugin "$build/lib/plexus-plugins/libplexus_plugin_cuda.so" \
    > "$out/plexus_train.jsonl" 2>> "$out/plexus.log"
  step torch_train 360 env LD_LIBRARY_PATH="$torch_ld" "$python" "$here/train_cuda.py" --side torch \
    --data "$train_data" --seconds "$TRAIN_SECONDS" --compile-budget "${TORCH_COMPILE_BUDGET:-60}" \
    > "$out/torch_train.jsonl" 2>> "$out/torch.log"
  "$python" "$here/train_cuda.py" --table "$out/plexus_train.jsonl" "$out/torch_train.jsonl" >> "$out/table.txt"
fi
cat "$out/table.txt"
echo
cat "$out/steps.log"
echo "stderr tails:"
tail -5 "$out/plexus.log"
tail -5 "$out/torch.log"
