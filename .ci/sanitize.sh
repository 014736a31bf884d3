#!/usr/bin/env bash
# The C++ test suite under sanitizers (docs/fuzzing.md), with GCC:
#
#   bash .ci/sanitize.sh [address|thread] [CTEST_ARGS...]
#
# address (default): build-asan/ with -DPX_SANITIZE=address,undefined, then
#   every C++ test (ctest -LE "python|gpu") with leak checking on and UBSan
#   stopping at its first report.
# thread: build-tsan/ with -DPX_SANITIZE=thread, then the tests that run
#   things concurrently: the executor's parallel scheduler and sessions run
#   from many threads (executor_test), the thread pools and budgets
#   (threads_test), and eager execution and run cancellation (core_test's
#   Eager* cases).
#
# Further arguments go to ctest (-R name, -j N, ...). Prints the build and
# run times. Not part of .ci/test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-address}
shift || true
# The packages are those .ci/setup.sh installs (run it once first; it also
# builds build/, which this script does not need).

export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
jobs=${PX_SANITIZE_JOBS:-$(nproc)}
case "$mode" in
  address)
    build=${PX_SANITIZE_BUILD_DIR:-$root/build-asan}
    sanitize="address,undefined"
    targets=(all)
    ;;
  thread)
    build=${PX_SANITIZE_BUILD_DIR:-$root/build-tsan}
    sanitize="thread"
    targets=(executor_test threads_test core_test)
    ;;
  *) echo "sanitize: mode is address or thread, not $mode" >&2; exit 2 ;;
esac

if [ ! -f "$build/build.ninja" ]; then
  # -O1 with line tables: the tests run fast enough and reports have lines.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DPX_SANITIZE="$sanitize" -DPX_BUILD_PYTHON=OFF \
    -DPX_PLUGIN_CUDA=OFF -DPX_PLUGIN_ROCM=OFF -DPX_PLUGIN_XPU=OFF
fi
start=$(date +%s)
nice ninja -C "$build" -j "$jobs" "${targets[@]}"
echo "sanitize: $mode build took $(( $(date +%s) - start )) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
start=$(date +%s)
cd "$build"
status=0
if [ "$mode" = address ]; then
  ctest --output-on-failure -j "$jobs" -LE "python|gpu" --timeout 1200 "$@" || status=$?
else
  # Whole programs but core_test, of which the eager and cancellation cases.
  ctest --output-on-failure -R '^(executor_test|threads_test)$' --timeout 1200 "$@" || status=$?
  GTEST_FILTER='Eager*:*Cancel*:*Concurren*:*Thread*' ctest --output-on-failure -R '^core_test$' \
    --timeout 1200 "$@" || status=$?
fi
echo "sanitize: $mode tests took $(( $(date +%s) - start )) s"
exit $status
