#!/usr/bin/env bash
# One run of report.sh's exit check: a traced training run of
# python/tests/train_on_device.py on DEVICE (with the cuda plugin for CUDA:0,
# else the cpu plugin only) in a process of its own. Prints the end of its
# stderr when the process does not exit cleanly (a crash at exit included).
#
#   bash .ci/gpu/exit_run.sh DEVICE RUN_NUMBER
set -uo pipefail
dev=$1 i=$2
plugin=()
if [ "$dev" = CUDA:0 ]; then
  plugin=(--plugin "$PX_BUILD/lib/plexus-plugins/libplexus_plugin_cuda.so")
else
  export PLEXUS_PLUGINS=cpu  # a build tree's plexus would find the cuda plugin beside it too
fi
err=$(mktemp)
timeout -k 5 90 "${PX_PYTHON:-python3}" "$PX_SOURCE/python/tests/train_on_device.py" "$dev" traced \
    "${plugin[@]}" --steps 3 > /dev/null 2> "$err"
rc=$?
if [ $rc -ne 0 ]; then
  echo "$dev run $i: exit $rc"
  tail -30 "$err"
fi
rm -f "$err"
