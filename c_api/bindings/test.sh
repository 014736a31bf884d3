#!/usr/bin/env bash
# Builds and tests one binding of the C API with Debian's toolchain:
#   test.sh go|rust
# CTest sets PLEXUS_LIB_DIR (the folder of libplexus_c.so), PLEXUS_CPU_PLUGIN,
# PLEXUS_TEST_DATA and PX_BINDINGS_WORK (a scratch folder in the build tree
# for the toolchain's caches). Nothing is downloaded: neither binding has
# dependencies.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=${PX_BINDINGS_WORK:?set PX_BINDINGS_WORK}
mkdir -p "$work"
export PLEXUS_PLUGIN_PATH=
case "${1:-}" in
  go)
    go=${PX_GO:-/usr/bin/go}
    export GOCACHE="$work/go-cache" GOPATH="$work/go-path" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
    export CGO_LDFLAGS="-L$PLEXUS_LIB_DIR -Wl,-rpath,$PLEXUS_LIB_DIR"
    cd "$here/go"
    "$go" vet ./...
    exec "$go" test -count=1 ./...
    ;;
  rust)
    # Debian's rustc and cargo, not another toolchain earlier on PATH.
    export RUSTC=${PX_RUSTC:-/usr/bin/rustc}
    export CARGO_TARGET_DIR="$work/rust-target" CARGO_HOME="$work/cargo-home"
    cd "$here/rust"
    exec "${PX_CARGO:-/usr/bin/cargo}" test --offline
    ;;
  *)
    echo "usage: $0 go|rust" >&2
    exit 2
    ;;
esac
