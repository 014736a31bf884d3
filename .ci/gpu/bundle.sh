#!/usr/bin/env bash
# Packs a build made on this machine for a run on a GPU machine that cannot
# install packages: the programs, libraries and plugins of BUILD, the CTest
# files, and the shared libraries they need that are not part of the C and
# C++ runtimes. The CUDA libraries (cuBLASLt, NVRTC, cuDNN) are left out: the
# cuda plugin loads them at run time from the GPU machine's own toolkit.
#
#   bash .ci/gpu/bundle.sh BUILD OUT_DIR      ->  OUT_DIR/bundle.tar.xz
#
# .ci/gpu/run.sh unpacks it on the GPU machine and runs the tests there.
set -euo pipefail
build=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage/build/lib" "$stage/deps"
cp -a "$build/bin" "$stage/build/"
(cd "$build/lib" && find . -name '*.so' -print0 | tar --null -T - -cf - | tar -C "$stage/build/lib" -xf -)
(cd "$build" && find . -name CTestTestfile.cmake -print0 | tar --null -T - -cf - | tar -C "$stage/build" -xf -)
# The Python package as staged in the build tree. Its extension is built for
# this machine's Python; PX_GPU_PYTHON names an interpreter here of the GPU
# machine's Python version, to build it once more for that one.
if [ -n "${PX_GPU_PYTHON:-}" ]; then
  python3 "$(dirname "${BASH_SOURCE[0]}")/extension_for.py" "$build" "$PX_GPU_PYTHON"
fi
# (Into the folder the CTest files above already made, not beneath it.)
if [ -d "$build/python/plexus" ]; then
  mkdir -p "$stage/build/python"
  cp -a "$build/python/." "$stage/build/python/"
fi
find "$stage/build" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-unneeded "$1"' _ {} \; 2>/dev/null || true

# Shared libraries outside the C/C++ runtime, found through ldd.
find "$stage/build" -type f \( -name '*.so' -o -perm -u+x \) -print0 |
  xargs -0 -n 20 ldd 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r lib; do
    case $(readlink -f "$lib") in "$build"/*|"$stage"/*) continue ;; esac
    cp -L "$lib" "$stage/deps/"
  done

# Where the build was made: CTest files and test programs hold these paths.
{
  echo "build=$build"
  echo "source=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
} > "$stage/origin"
tar -C "$stage" -cf - . | xz -T2 -6 > "$out/bundle.tar.xz"
ls -la "$out/bundle.tar.xz"
