#!/usr/bin/env bash
# The vendor kit as a vendor gets it: installs a built Plexus tree to a
# temporary prefix, checks the installed layout, copies sdk/template out of
# the source tree, builds it against the installed SDK only (CMake package),
# checks its exports, loads it with the installed `plexus devices`, runs the
# installed plexus-plugin-check on it, and builds it once more by hand with
# pkg-config (plus a C program against plexus.pc).
#
# usage: template_out_of_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/plexus-sdk-oot.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Compiler caching, when available, with paths made relative to the
# temporary folder so that cache entries survive between runs.
launch=()
cc_launch=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
  launch=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cc_launch=(ccache)
fi
# Only the installed plugins are discovered.
export PLEXUS_PLUGIN_PATH=

step "install the build tree to a temporary prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log"; fail "cmake --install failed (is the whole tree built?)"; }

step "installed layout"
for f in \
    include/plexus/plugin_api.h \
    include/plexus/sdk/plugin_sdk.h include/plexus/sdk/kernel.h include/plexus/sdk/plugin.h \
    include/plexus/sdk/float16.h \
    include/plexus/sdk/reference/reference_kernels.h \
    include/plexus/c_api.h \
    lib/libplexus.so lib/libplexus_c.so lib/libplexus_reference_kernels.a \
    lib/plexus-plugins/libplexus_plugin_cpu.so \
    lib/plexus/libplexus_plugin_reference.so \
    lib/cmake/Plexus/PlexusConfig.cmake lib/cmake/Plexus/PlexusConfigVersion.cmake \
    lib/cmake/Plexus/PlexusPlugin.cmake lib/cmake/Plexus/plexus_plugin_exports.map \
    lib/cmake/PlexusPluginSDK/PlexusPluginSDKConfig.cmake \
    lib/cmake/PlexusPluginSDK/PlexusPluginSDKConfigVersion.cmake \
    lib/pkgconfig/plexus-plugin-sdk.pc lib/pkgconfig/plexus.pc \
    bin/plexus share/plexus/template/CMakeLists.txt; do
  [ -e "$prefix/$f" ] || fail "missing from the install tree: $f"
done
for f in libplexus_plugin_template.so libplexus_plugin_reference.so libplexus_plugin_skeleton.so; do
  [ ! -e "$prefix/lib/plexus-plugins/$f" ] || fail "$f must not be installed among the discovered plugins"
done
(cd "$prefix" && find . -type f | sort | grep -v '^./include/plexus/sdk/' | sed 's/^/  /')

# The plugin must export exactly the two entry points.
check_exports() {
  local exports
  exports=$(nm -D --defined-only "$1" | awk '{print $NF}' | sort | tr '\n' ' ')
  [ "$exports" = "PX_PluginInitialize PX_PluginProbe " ] ||
    fail "$1 exports [$exports], expected only PX_PluginInitialize and PX_PluginProbe"
  echo "exports: $exports"
}
# The plugin must load as 'template' with its TEMPLATE:0 device.
check_loads() {
  local out
  out=$("$prefix/bin/plexus" devices --plugin "$1")
  echo "$out"
  grep -q "^plugin template 0.1.0: ABI 0\.[0-9]*, platform Template, 4 kernels" <<<"$out" ||
    fail "plexus devices did not list the template plugin"
  grep -q "^  device TEMPLATE:0: " <<<"$out" || fail "plexus devices did not list TEMPLATE:0"
  if grep -q "^refused:" <<<"$out"; then fail "a plugin was refused"; fi
}

step "copy the template and build it against the installed SDK"
cp -r "$src/sdk/template" "$work/vendor"
cmake -S "$work/vendor" -B "$work/vendor/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" "${launch[@]}" >"$work/configure.log" || {
  cat "$work/configure.log"; fail "configuring the template failed"; }
cmake --build "$work/vendor/build"
so=$work/vendor/build/libplexus_plugin_template.so
[ -f "$so" ] || fail "no $so"
check_exports "$so"

step "load it with the installed plexus"
check_loads "$so"

step "run the installed conformance tool on it"
if [ -x "$prefix/bin/plexus-plugin-check" ]; then
  "$prefix/bin/plexus-plugin-check" "$so" || fail "plexus-plugin-check failed on the template"
else
  echo "SKIP: plexus-plugin-check is not installed by this build, so the conformance step is skipped"
fi

step "the same package under its SDK name, from a C-only project"
mkdir -p "$work/cproject"
cp "$src/sdk/skeleton/skeleton_plugin.c" "$work/cproject/"
cat >"$work/cproject/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(skeleton_copy C)
find_package(PlexusPluginSDK REQUIRED)
plexus_add_plugin(plexus_plugin_skeleton_copy SOURCES skeleton_plugin.c)
CMAKE
cmake -S "$work/cproject" -B "$work/cproject/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" "${launch[@]}" >"$work/cconfigure.log" || {
  cat "$work/cconfigure.log"; fail "configuring a C project with find_package(PlexusPluginSDK) failed"; }
cmake --build "$work/cproject/build"
check_exports "$work/cproject/build/libplexus_plugin_skeleton_copy.so"

step "build the template by hand with pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
mkdir -p "$work/pc"
# shellcheck disable=SC2046
"${cc_launch[@]}" c++ -std=c++17 -O1 \
  $(pkg-config --cflags plexus-plugin-sdk) $(pkg-config --variable=plugin_cflags plexus-plugin-sdk) \
  "$work/vendor/src/template_plugin.cc" "$work/vendor/src/template_kernels.cc" \
  "$work/vendor/src/fake_driver.cc" -o "$work/pc/libplexus_plugin_template.so" \
  $(pkg-config --variable=plugin_ldflags plexus-plugin-sdk)
check_exports "$work/pc/libplexus_plugin_template.so"
check_loads "$work/pc/libplexus_plugin_template.so"

step "a C program against the C API with plexus.pc"
cat >"$work/pc/main.c" <<'C'
#include <stdio.h>
#include <plexus/c_api.h>
int main(void) {
  printf("%s is %zu bytes\n", px_dtype_name(PX_DTYPE_DOUBLE), px_dtype_size(PX_DTYPE_DOUBLE));
  return px_dtype_size(PX_DTYPE_DOUBLE) == 8 ? 0 : 1;
}
C
if [ -n "${PX_SANITIZED:-}" ]; then
  echo "SKIP: the installed C API is built with -fsanitize=$PX_SANITIZED, which a plain C program cannot link"
else
  # shellcheck disable=SC2046
  cc $(pkg-config --cflags plexus) "$work/pc/main.c" -o "$work/pc/main" $(pkg-config --libs plexus) \
    -Wl,-rpath,"$prefix/lib"
  "$work/pc/main"
fi

echo "PASS"
