#!/usr/bin/env bash
# The GPU check, run by .ci/gpu/run.sh on the GPU machine: the device, the
# whole CTest suite (the GPU-labelled tests run instead of skipping), the
# conformance tool on the cuda plugin, and every real graph on CUDA:0 and on
# CPU:0. Logs go to $OUT when it is set.
set -uo pipefail
out=${OUT:-/tmp/px-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/device.txt"
cd "$PX_BUILD"
rc=0
ctest -j 12 --output-on-failure -E '^(sdk_template_out_of_tree|plugin_guide_commands)$' > "$out/ctest.log" 2>&1 || rc=1
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$out/ctest.log" | tail -30
"$PX_BUILD/bin/plexus-plugin-check" "$PX_BUILD/lib/plexus-plugins/libplexus_plugin_cuda.so" > "$out/plugin_check.log" 2>&1 || rc=1
tail -5 "$out/plugin_check.log"
"$PX_BUILD/bin/plexus" devices | tee "$out/devices.txt"
for dev in CUDA:0 CPU:0; do
  echo "== real graphs on $dev"
  "$PX_BUILD/bin/plexus_run_tf_graphs" "$PX_SOURCE/tests/data/tf_graphs" "$dev" > "$out/graphs_${dev%%:*}.log" 2>&1 || rc=1
  cat "$out/graphs_${dev%%:*}.log"
done
# Training on CUDA:0 against CPU:0, eager and traced, each run in a process
# of its own with the fault handler on (python/tests/test_device_training.py),
# and DLPack with PyTorch on CUDA:0 where PyTorch is installed
# (test_dlpack_cuda.py),
# where this machine's Python can import the build's package and has NumPy
# and pytest.
py=${PX_PYTHON:-python3}
if PYTHONPATH="$PX_BUILD/python" "$py" -c "import plexus, numpy, pytest" 2>/dev/null; then
  echo "== training on CUDA:0 against CPU:0"
  PYTHONPATH="$PX_BUILD/python" PLEXUS_BUILD_DIR="$PX_BUILD" PLEXUS_PLUGIN_PATH= PYTHONFAULTHANDLER=1 \
    "$py" -m pytest -q -p no:cacheprovider -rs "$PX_SOURCE/python/tests/test_device_training.py" \
    "$PX_SOURCE/python/tests/test_dlpack_cuda.py" \
    > "$out/device_training.log" 2>&1 || rc=1
  tail -15 "$out/device_training.log"
else
  echo "== training on CUDA:0: skipped, $py cannot import the build's plexus with numpy and pytest"
fi
exit $rc
