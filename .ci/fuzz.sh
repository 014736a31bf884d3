#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz, docs/fuzzing.md): configures and builds
# build-fuzz/ with Clang, ASan and UBSan (-DPX_FUZZ=ON; .ci/sanitizer_build.sh,
# the same build .ci/sanitize.sh runs the C++ suite in), then runs every
# target on its seed corpus for SECONDS each (default 20). Fails when a
# target crashes, leaks, times out, runs out of memory or a sanitizer
# reports; the input that did it is left in build-fuzz/artifacts/<target>/.
#
#   bash .ci/fuzz.sh [SECONDS] [TARGET...]
#
# New inputs a run finds go to build-fuzz/corpus/<target>/, never into the
# committed seeds. .ci/test.sh runs it for 10 s a target.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PX_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-20}
shift || true

source "$root/.ci/sanitizer_build.sh"
PX_FUZZ_BUILD_DIR=$build px_sanitizer_build address >/dev/null
jobs=${PX_FUZZ_JOBS:-$(nproc)}
start=$(date +%s)
nice ninja -C "$build" -j "$jobs" fuzzers
echo "fuzz: build took $(( $(date +%s) - start )) s"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in "$root"/tests/fuzz/corpus/*/; do targets+=("$(basename "$src")"); done
fi

# UBSan stops at its first report (the build also says so); leaks count.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# As in .ci/sanitize.sh: Clang 14's LeakSanitizer cannot scan glibc 2.36's
# thread-local storage (tests/sanitizers/lsan.supp).
export LSAN_OPTIONS=${LSAN_OPTIONS:-use_tls=0:suppressions=$root/tests/sanitizers/lsan.supp}
export PLEXUS_LOG_LEVEL=${PLEXUS_LOG_LEVEL:-error}
# The file targets write each input to a folder under TMPDIR: keep it in
# memory where the machine has /dev/shm.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
failed=()
for t in "${targets[@]}"; do
  bin="$build/bin/fuzz_$t"
  work="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  dict=()
  if [ -f "$root/tests/fuzz/dict/$t.dict" ]; then
    dict=(-dict="$root/tests/fuzz/dict/$t.dict")
  elif grep -q kSplit "$root/tests/fuzz/$t.cc"; then
    dict=(-dict="$root/tests/fuzz/dict/split.dict")
  fi
  echo "fuzz: $t for $seconds s"
  log="$build/fuzz_$t.log"
  if nice "$bin" "$work" "$root/tests/fuzz/corpus/$t" "${dict[@]}" \
      -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$log" | tr '\n' ' '
    echo
  else
    echo "fuzz: $t FAILED (log: $log, input in $artifacts/)"
    tail -n 40 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
