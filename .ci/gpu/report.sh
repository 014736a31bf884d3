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
exit $rc
