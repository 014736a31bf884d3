#!/usr/bin/env bash
# One GPU session's whole check, for .ci/gpu/run.sh on the GPU machine: the
# report (report.sh: tests, conformance, real graphs, Python on CUDA:0, the
# exit runs), then the benchmarks against PyTorch (bench/cuda/run_cuda.sh),
# each within its own time limit so that both end inside one call:
#
#   bash .ci/gpu/run.sh .gpu bash .ci/gpu/full.sh
#
# PX_GPU_LIMIT bounds each part of the report (default 200 s), PX_BENCH_LIMIT
# the benchmarks (default 300 s; 0 leaves them out). The benchmark's files
# come back as $OUT/bench.tar.gz.
set -uo pipefail
repo=$(pwd)
out=${OUT:-/tmp/px-out}
mkdir -p "$out"
start=$SECONDS
PX_GPU_LIMIT=${PX_GPU_LIMIT:-200} bash "$repo/.ci/gpu/report.sh"
rc=$?
echo "== report: exit $rc after $((SECONDS - start)) s"
bench_limit=${PX_BENCH_LIMIT:-300}
if [ "$bench_limit" -gt 0 ]; then
  bench_out=$(mktemp -d)
  OUT=$bench_out timeout -k 10 "$bench_limit" bash "$repo/bench/cuda/run_cuda.sh"
  echo "== bench: exit $? after $((SECONDS - start)) s"
  tar -C "$bench_out" -czf "$out/bench.tar.gz" .
fi
exit $rc
