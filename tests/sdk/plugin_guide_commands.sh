#!/usr/bin/env bash
# Runs every command of docs/plugin_guide.md: extracts each ```sh block in
# order into one script and runs it with bash -euo pipefail in an empty
# temporary folder, with the variables the guide documents preset:
#   PLEXUS_SRC     the source tree
#   PLEXUS_BUILD   the build tree (configured and built by the test run)
#   PLEXUS_PREFIX  a temporary install prefix
# Until plexus-plugin-check is built, the blocks that run it (or ctest, which
# runs it) are replaced by a line saying they were skipped.
#
# usage: plugin_guide_commands.sh BUILD_DIR SOURCE_DIR [GUIDE.md]
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
guide=${3:-$src/docs/plugin_guide.md}
work=$(mktemp -d "${TMPDIR:-/tmp}/plexus-guide.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

export PLEXUS_SRC=$src
export PLEXUS_BUILD=$build
export PLEXUS_PREFIX=$work/prefix
export PLEXUS_PLUGIN_PATH=  # only the plugins the guide installs or names
# Compiler caching for the guide's builds, when available (CMake reads these
# variables as the default launchers).
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
fi

have_check=1
if [ ! -x "$build/bin/plexus-plugin-check" ]; then
  have_check=0
  echo "note: $build/bin/plexus-plugin-check is not built: its steps are skipped"
fi

# Extract the blocks. Each starts with a line naming where it comes from.
script=$work/guide.sh
awk -v have_check="$have_check" -v guide="$(basename "$guide")" '
  /^```sh[[:space:]]*$/ { if (inside) { print "nested block at line " NR > "/dev/stderr"; exit 2 }
                          inside = 1; start = NR; body = ""; next }
  /^```/ && inside      { inside = 0; blocks++
                          printf "\necho \"--- %s:%d\"\n", guide, start
                          if (!have_check && body ~ /plexus-plugin-check|ctest/) {
                            printf "echo \"SKIP: this block runs plexus-plugin-check, which is not built yet\"\n"
                          } else {
                            printf "%s", body
                          }
                          next }
  inside                { body = body $0 "\n" }
  END { if (inside) { print "unterminated sh block from line " start > "/dev/stderr"; exit 2 }
        if (blocks == 0) { print "no sh blocks" > "/dev/stderr"; exit 2 } }
' "$guide" >"$script"
echo "$(grep -c '^echo "--- ' "$script") sh blocks from $guide"

mkdir "$work/run"
log=$work/guide.log
if ! (cd "$work/run" && bash -euo pipefail "$script") >"$log" 2>&1; then
  cat "$log"
  fail "a command of the guide failed (the last '---' line above names its block)"
fi
cat "$log"

# The outcomes the guide describes.
grep -q "^plugin myhw 0.1.0: ABI 0\.[0-9]*, platform MyHW, 4 kernels" "$log" ||
  fail "plexus devices did not list the renamed plugin"
grep -q "^y: float \[2,2\] {4, 1, 0, 0}" "$log" || fail "the graph on MYHW:0 printed something else"
grep -q "^plugin myhw 0.1.0: .*5 kernels, file .*/lib/plexus-plugins/libplexus_plugin_myhw.so" "$log" ||
  fail "the installed plugin (with Square) was not discovered"
if [ "$have_check" = 1 ]; then
  grep -q "plexus-plugin-check exited with status 1" "$log" ||
    fail "the broken out-of-memory mapping did not fail the check"
  grep -q "FAIL  out_of_memory" "$log" || fail "the check did not name out_of_memory"
fi
echo "PASS"
