#!/usr/bin/env bash
# The whole test suite: set up, build, run every test with CTest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/.ci/setup.sh"
cd "${PX_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)"
