#!/usr/bin/env bash
# The GPU check, run by .ci/gpu/run.sh on the GPU machine. Three parts run at
# once, each with a time limit, so that one that hangs leaves the others:
#
#   ctest.log    the CTest suite but its Python-labelled entries (they need the
#                build machine's virtual environment): the GPU-labelled tests
#                run instead of skipping
#   checks.log   the conformance tool on the cuda plugin, `plexus devices`,
#                and every real graph on CUDA:0 and on CPU:0
#   python.log   the GPU Python tests (test_device_training.py: training on
#                CUDA:0 against CPU:0, eager and traced, the digits example,
#                traced functions and variables; test_dlpack_cuda.py;
#                test_cuda_wheel.py where PLEXUS_CUDA_WHEEL names a wheel),
#                with the fault handler on
#
# and exits.log: a traced training run repeated in processes of their own
# (exit_run.sh; PX_GPU_EXIT_RUNS times on CUDA:0, default 24, and half as
# many on CPU:0 with only the cpu plugin), counting the exits that are not
# clean, then one under compute-sanitizer's memcheck where it works
# (PX_GPU_SANITIZER=0 leaves it out).
# Logs go to $OUT when it is set. PX_GPU_LIMIT (seconds, default 300) bounds
# each part. The Python parts need a Python that imports the build's package
# (.ci/gpu/bundle.sh builds its extension for the GPU machine's Python when
# PX_GPU_PYTHON names one of that version here).
set -uo pipefail
out=${OUT:-/tmp/px-out}
mkdir -p "$out"
limit=${PX_GPU_LIMIT:-300}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
cd "$PX_BUILD"

( timeout -k 10 "$limit" ctest -j 10 --timeout 240 --output-on-failure -LE python \
    -E '^(sdk_template_out_of_tree|plugin_guide_commands)$' > "$out/ctest.log" 2>&1
  echo "ctest exit $?" >> "$out/ctest.log" ) &

( check=$PX_BUILD/bin/plexus-plugin-check
  timeout -k 10 "$limit" "$check" "$PX_BUILD/lib/plexus-plugins/libplexus_plugin_cuda.so" 2>&1 | tail -40
  echo "plugin check exit ${PIPESTATUS[0]}"
  "$PX_BUILD/bin/plexus" devices
  for dev in CUDA:0 CPU:0; do
    echo "== real graphs on $dev"
    timeout -k 10 120 "$PX_BUILD/bin/plexus_run_tf_graphs" "$PX_SOURCE/tests/data/tf_graphs" "$dev"
    echo "graphs on $dev exit $?"
  done ) > "$out/checks.log" 2>&1 &

py=${PX_PYTHON:-python3}
pyenv=(env PYTHONPATH="$PX_BUILD/python" PLEXUS_BUILD_DIR="$PX_BUILD" PLEXUS_PLUGIN_PATH= PYTHONFAULTHANDLER=1
       PLEXUS_CORE_LIBRARY_PATH="${PX_DEPS:-}")
if "${pyenv[@]}" "$py" -c "import plexus, numpy, pytest" 2> "$out/python.log"; then
  tests=("$PX_SOURCE/python/tests/test_device_training.py" "$PX_SOURCE/python/tests/test_dlpack_cuda.py")
  [ -n "${PLEXUS_CUDA_WHEEL:-}" ] && tests+=("$PX_SOURCE/python/tests/test_cuda_wheel.py")
  xdist=()
  "$py" -c "import xdist" 2> /dev/null && xdist=(-n 4)
  ( timeout -k 10 "$limit" "${pyenv[@]}" "$py" -m pytest -q -p no:cacheprovider -rs "${xdist[@]}" "${tests[@]}" \
      >> "$out/python.log" 2>&1
    echo "pytest exit $?" >> "$out/python.log" ) &
  # The exit crash: the same training runs many times, each a process, four
  # at a time: on CUDA:0 and, with only the cpu plugin, on CPU:0.
  ( runs=${PX_GPU_EXIT_RUNS:-24}
    export PYTHONPATH="$PX_BUILD/python" PLEXUS_BUILD_DIR="$PX_BUILD" PLEXUS_PLUGIN_PATH= PYTHONFAULTHANDLER=1
    for dev in CUDA:0 CPU:0; do
      n=$runs
      [ "$dev" = CPU:0 ] && n=$((runs / 2))
      seq 1 "$n" | xargs -P 4 -n 1 bash "$PX_SOURCE/.ci/gpu/exit_run.sh" "$dev" > "$out/exit_runs.txt" 2>&1
      cat "$out/exit_runs.txt"
      echo "exit runs on $dev: $(grep -c "^$dev run" "$out/exit_runs.txt") of $n not clean"
      rm -f "$out/exit_runs.txt"
    done
    if [ "${PX_GPU_SANITIZER:-1}" != 0 ] && command -v compute-sanitizer > /dev/null; then
      echo "== compute-sanitizer memcheck, train_on_device.py CUDA:0 traced, 2 steps"
      "${pyenv[@]}" timeout -k 5 "$((limit - 60))" compute-sanitizer --tool memcheck --print-limit 20 \
          "$py" "$PX_SOURCE/python/tests/train_on_device.py" CUDA:0 traced \
          --plugin "$PX_BUILD/lib/plexus-plugins/libplexus_plugin_cuda.so" --steps 2 2>&1 | grep -v '^{' | tail -40
      echo "compute-sanitizer exit ${PIPESTATUS[0]}"
    fi ) > "$out/exits.log" 2>&1 &
else
  echo "== python: skipped, $py cannot import the build's plexus with numpy and pytest" | tee -a "$out/python.log"
fi
wait
rc=0
echo "== ctest"; grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout|ctest exit" "$out/ctest.log" | tail -30
grep -q "ctest exit 0" "$out/ctest.log" || rc=1
echo "== checks"; grep -E "exit|PASS|FAIL|passed|failed|match|CUDA" "$out/checks.log" | tail -40
grep -qE "(check|graphs on [A-Z]+:0) exit [1-9]" "$out/checks.log" && rc=1
echo "== python"; tail -25 "$out/python.log"
grep -q "pytest exit 0" "$out/python.log" || rc=1
echo "== exits"; tail -25 "$out/exits.log" 2>/dev/null
exit $rc
