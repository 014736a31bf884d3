#!/usr/bin/env python3
"""Checks that the CUDA plugin depends on no CUDA shared library.

The plugin must load on machines without the driver (libcuda) or the
toolkit's shared libraries: it links the static CUDA runtime and opens
cuBLASLt, NVRTC and cuDNN with dlopen on first use. So its dynamic section must name
none of them (NEEDED), and no function of theirs may be left for the dynamic
linker to bind (undefined dynamic symbols).

Usage: cuda_plugin_deps_check.py READELF PLUGIN
"""
import re
import subprocess
import sys

FORBIDDEN_LIBRARIES = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|nvrtc|nvrtc-builtins|cudnn|curand|nccl)\.so")
FORBIDDEN_SYMBOLS = re.compile(r"^(cublas|nvrtc|cudnn|curand|nccl|cu[A-Z])")


def readelf(tool, *args):
    return subprocess.run([tool, "-W", *args], check=True, capture_output=True, text=True).stdout


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tool, plugin = sys.argv[1], sys.argv[2]
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(tool, "-d", plugin))
    undefined = []
    for line in readelf(tool, "--dyn-syms", plugin).splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[6] == "UND":
            undefined.append(fields[7].split("@")[0])
    print("NEEDED: " + ", ".join(needed))
    bad_libraries = [n for n in needed if FORBIDDEN_LIBRARIES.match(n)]
    bad_symbols = sorted(set(s for s in undefined if FORBIDDEN_SYMBOLS.match(s)))
    if bad_libraries:
        print("FAIL: the plugin links CUDA shared libraries: " + ", ".join(bad_libraries))
    if bad_symbols:
        print("FAIL: the plugin leaves CUDA library functions to the dynamic linker: " + ", ".join(bad_symbols))
    if not needed:
        print("FAIL: no NEEDED entries found (is this a shared object?)")
        return 1
    if bad_libraries or bad_symbols:
        return 1
    print("OK: no libcuda, libcudart, libcublas, libcublasLt, libnvrtc or libcudnn dependency")
    return 0


if __name__ == "__main__":
    sys.exit(main())
