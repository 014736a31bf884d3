#!/usr/bin/env bash
# The whole test suite: set up, build, run every C++ test with CTest, then
# install the Python package with pip (as a user would: pip install ./python)
# into the build's virtual environment and run the pytest suite against it.
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
cd "$root/python/tests"
PLEXUS_TEST_DATA="$root/tests/data" PLEXUS_BUILD_DIR="$build" PLEXUS_PLUGIN_PATH= \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --import-mode=importlib .
