#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz, docs/fuzzing.md): configures and builds
# build-fuzz/ with Clang, ASan and UBSan (-DPX_FUZZ=ON), then runs every
# target on its seed corpus for SECONDS each (default 20). Fails when a
# target crashes, leaks, times out, runs out of memory or a sanitizer
# reports; the input that did it is left in build-fuzz/artifacts/<target>/.
#
#   bash .ci/fuzz.sh [SECONDS] [TARGET...]
#
# New inputs a run finds go to build-fuzz/corpus/<target>/, never into the
# committed seeds. Not part of .ci/test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PX_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-20}
shift || true

# Clang and its libFuzzer runtime, besides what .ci/setup.sh installs.
packages=(clang libclang-rt-14-dev libomp-14-dev cmake ninja-build ccache)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
jobs=${PX_FUZZ_JOBS:-$(nproc)}
if [ ! -f "$build/build.ninja" ]; then
  # -O1 with line tables: fast enough to fuzz, stack traces with lines.
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DPX_FUZZ=ON -DPX_BUILD_PYTHON=OFF -DPX_BUILD_EXAMPLES=OFF \
    -DPX_PLUGIN_CUDA=OFF -DPX_PLUGIN_ROCM=OFF -DPX_PLUGIN_XPU=OFF
fi
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
export PLEXUS_LOG_LEVEL=${PLEXUS_LOG_LEVEL:-error}
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
