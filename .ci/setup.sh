#!/usr/bin/env bash
# Installs what the build needs (Debian packages), configures and builds.
# Sourced or run by .ci/main.sh and .ci/test.sh; safe to run again.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PX_BUILD_DIR:-$root/build}

packages=(build-essential cmake ninja-build ccache pkg-config
          libprotobuf-dev protobuf-compiler libabsl-dev libeigen3-dev libdlpack-dev
          libgtest-dev libsnappy-dev libisal-dev libre2-dev libfarmhash-dev libopenblas-dev libdnnl-dev
          libjpeg-dev libpng-dev libsleef-dev zlib1g-dev
          # Host collectives (core/src/dist) on Gloo; mpirun for the launcher test.
          libgloo-dev openmpi-bin
          # plexus-serve (core/serve): HTTP and JSON; gRPC (optional).
          libcpp-httplib-dev rapidjson-dev libgrpc++-dev protobuf-compiler-grpc
          python3 python3-dev python3-venv
          # The Go and Rust bindings of the C API (c_api/bindings).
          golang-go rustc cargo
          # The ROCm plugin (plugins/rocm): Debian's HIP 5.2.
          hipcc libamdhip64-dev
          # The XPU plugin (plugins/xpu): the Level Zero loader and headers,
          # OpenCL C to SPIR-V, and the checks (spirv-val, Intel's offline
          # compiler ocloc, PoCL's CPU OpenCL device).
          libze-dev libze1 clang-14 llvm-spirv-14 spirv-tools
          intel-opencl-icd pocl-opencl-icd ocl-icd-opencl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python package's build and test dependencies, in a virtual
# environment of its own (python/requirements-test.txt).
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$build"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
       -r "$root/python/requirements-test.txt" 2>"$build/pip.log"; then
  cat "$build/pip.log" >&2
  exit 1
fi
# TensorFlow Serving's gRPC stubs for plexus-serve's tests: --no-deps, since
# the wheel requires "tensorflow" and tensorflow-cpu provides its modules.
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
       tensorflow-serving-api==2.21.0 2>"$build/pip.log"; then
  cat "$build/pip.log" >&2
  exit 1
fi

export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DPython_EXECUTABLE="$venv/bin/python" >/dev/null
cmake --build "$build" -j "$(nproc)"
