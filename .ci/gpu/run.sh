#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root of the copy sent there, with
# the folder holding bundle.tar.xz (made by .ci/gpu/bundle.sh) as $1. Unpacks
# the build, recreates the paths it was built at (as links to this copy), finds
# the machine's CUDA libraries, and then runs the rest of the arguments as a
# command (default: the GPU report of .ci/gpu/report.sh).
set -euo pipefail
repo=$(pwd)
bundle=$(cd "$1" && pwd)
shift
px=/tmp/px
rm -rf "$px" && mkdir -p "$px"
xz -dc "$bundle/bundle.tar.xz" | tar -C "$px" -xf -
# shellcheck disable=SC1091
. "$px/origin"
if [ "$source" != "$repo" ]; then
  mkdir -p "$(dirname "$source")"
  [ -e "$source" ] || ln -s "$repo" "$source"
fi
[ -e "$build" ] || { mkdir -p "$(dirname "$build")"; ln -s "$px/build" "$build"; }
# Tests run programs by the absolute paths they had here (cmake, python3):
# point those that are missing there at the same programs on this machine.
grep -rhoE 'add_test\(\[=\[[^]]*\]=\] "/[^"]*"' "$px/build" --include CTestTestfile.cmake |
  sed -E 's/.*"(\/[^"]*)"/\1/' | sort -u | while read -r prog; do
    [ -e "$prog" ] && continue
    found=$(command -v "$(basename "$prog")" || true)
    [ -n "$found" ] || continue
    mkdir -p "$(dirname "$prog")" && ln -s "$found" "$prog"
  done
# The CUDA libraries the plugin loads at run time: the toolkit's, else those of
# the NVIDIA Python wheels. NCCL (libnccl.so.2) for the collectives
# (cuda_collectives_test skips without it).
# Python's site-packages come last (NVIDIA's wheels, PyTorch's NCCL); -H
# follows them where they are links.
cuda_dirs=""
site_dirs=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
for name in libcublasLt.so.13 libnvrtc.so.13 libcudnn.so.9 libnvrtc-builtins.so.13.0 libnccl.so.2; do
  # shellcheck disable=SC2086
  hit=$(find -H /usr/local/cuda/lib64/ /usr/local/cuda/targets/x86_64-linux/lib/ /usr/lib/x86_64-linux-gnu/ \
             /opt /usr/local/lib /usr/local/cuda/lib/ $site_dirs -name "$name" 2>/dev/null | head -1 || true)
  [ -n "$hit" ] || continue
  dir=$(dirname "$hit")
  # The system's own folders are searched anyway; listing them first would
  # also hand their (older) cuDNN to PyTorch.
  case $dir in /usr/lib/x86_64-linux-gnu | /lib/x86_64-linux-gnu | /usr/lib | /lib) continue ;; esac
  case ":$cuda_dirs:" in *":$dir:"*) continue ;; esac
  cuda_dirs="$cuda_dirs:$dir"
done
export LD_LIBRARY_PATH="$px/deps$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PX_BUILD="$build" PX_SOURCE="$source" PX_DEPS="$px/deps"
echo "build at $build, CUDA libraries from:${cuda_dirs//:/ }"
if [ $# -eq 0 ]; then set -- bash "$repo/.ci/gpu/report.sh"; fi
"$@"
