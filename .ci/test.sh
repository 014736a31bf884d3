#!/usr/bin/env bash
# The whole test suite: set up, build, run every C++ test with CTest, then
# install the Python package with pip (as a user would: pip install ./python)
# into the build's virtual environment and run the pytest suite against it;
# then the sanitizer stage (docs/fuzzing.md): every fuzz target for a few
# seconds on its corpus, the C++ suite under ASan+UBSan and the concurrency
# tests under TSan. PX_SANITIZERS=0 leaves the stage out.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/.ci/setup.sh"
build=${PX_BUILD_DIR:-$root/build}
venv="$build/venv"
(cd "$build" && ctest --output-on-failure -j "$(nproc)" -LE python)

# The wheel builds in a folder beside build/ (the same depth, so ccache
# serves the objects build/ compiled), with the packages of the venv.
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
echo "test: pip install ./python"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
    "$root/python" -Cbuild-dir="$root/build-wheel"
echo "test: pytest python/tests (against the installed package)"
(cd "$root/python/tests" &&
 PLEXUS_TEST_DATA="$root/tests/data" PLEXUS_BUILD_DIR="$build" PLEXUS_PLUGIN_PATH= \
     "$venv/bin/python" -m pytest -q -p no:cacheprovider --import-mode=importlib .)

if [ "${PX_SANITIZERS:-1}" != 0 ]; then
  start=$(date +%s)
  bash "$root/.ci/fuzz.sh" "${PX_FUZZ_SECONDS:-10}"
  bash "$root/.ci/sanitize.sh" address
  bash "$root/.ci/sanitize.sh" thread
  echo "test: the sanitizer stage took $(( $(date +%s) - start )) s"
fi
