#!/usr/bin/env bash
# Sourced by .ci/fuzz.sh and .ci/sanitize.sh: the one Clang build with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# (build-fuzz/, -DPX_FUZZ=ON) that serves both the fuzz targets and the C++
# suite under ASan+UBSan, and the GCC build with ThreadSanitizer
# (build-tsan/). Defines px_sanitizer_build MODE, which installs what is
# missing, configures the build folder when it has none and prints its path.
# The packages beyond .ci/setup.sh's are Clang's libFuzzer and sanitizer
# runtimes.

px_sanitizer_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CCACHE_BASEDIR="$px_sanitizer_root"
export CCACHE_NOHASHDIR=1

px_sanitizer_packages() {
  local packages=(clang libclang-rt-14-dev libomp-14-dev cmake ninja-build ccache)
  local missing=() p sudo_cmd=""
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "sanitizers: installing ${missing[*]}" >&2
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# px_sanitizer_build address|thread: prints the configured build folder.
px_sanitizer_build() {
  local mode=$1 build
  # The plugins for other hardware, Python and the examples are left out:
  # nothing here can run them, and they would double the build.
  local common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPX_BUILD_PYTHON=OFF
                -DPX_BUILD_EXAMPLES=OFF -DPX_PLUGIN_CUDA=OFF -DPX_PLUGIN_ROCM=OFF -DPX_PLUGIN_XPU=OFF)
  case "$mode" in
    address)
      build=${PX_FUZZ_BUILD_DIR:-$px_sanitizer_root/build-fuzz}
      px_sanitizer_packages
      if [ ! -f "$build/build.ninja" ]; then
        # -O1 with line tables: fast enough to fuzz, stack traces with lines.
        cmake -S "$px_sanitizer_root" -B "$build" "${common[@]}" \
          -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
          -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
          -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
          -DPX_FUZZ=ON >&2
      fi
      ;;
    thread)
      build=${PX_TSAN_BUILD_DIR:-$px_sanitizer_root/build-tsan}
      if [ ! -f "$build/build.ninja" ]; then
        cmake -S "$px_sanitizer_root" -B "$build" "${common[@]}" \
          -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
          -DPX_SANITIZE=thread >&2
      fi
      ;;
    *) echo "sanitizers: the mode is address or thread, not $mode" >&2; return 2 ;;
  esac
  echo "$build"
}
