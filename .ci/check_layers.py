#!/usr/bin/env python3
"""Checks the layering of the tree (docs/architecture.md, "Layers").

The core's sources live in layer folders under core/src/, lowest first:

  base < ir < devices < ops < passes < placer < exec < persist < host_kernels < dist

A file may include headers of its own layer and of layers below it, never of
a layer above. A public header in core/include/plexus/ belongs to the layer of
the source file with its name (plexus/graph.h: core/src/ir/graph.cc), or to the
layer LAYER_OF_HEADER names. The core never includes anything under plugins/,
and a plugin includes no core header: only plexus/plugin_api.h and
plexus/sdk/*.h. No core file is longer than MAX_LINES lines.

Usage: check_layers.py [REPO_ROOT]. Prints every violation and exits 1 if
there is one.
"""
import os
import re
import sys

LAYERS = ["base", "ir", "devices", "ops", "passes", "placer", "exec", "persist",
          "host_kernels", "dist"]
# Public headers without a source file of the same name.
LAYER_OF_HEADER = {
    "status.h": "base",
    "checkpoint.h": "persist",
    "optimizer_options.h": "passes",
    "placement.h": "placer",
    "distributed.h": "dist",
    "plexus.h": "top",  # the umbrella header: everything
}
MAX_LINES = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank(layer):
    return len(LAYERS) if layer == "top" else LAYERS.index(layer)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    src = os.path.join(root, "core", "src")
    pub = os.path.join(root, "core", "include", "plexus")
    errors = []

    # Where each source file's name lives, for the public headers.
    layer_of_stem = {}
    for layer in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(src, layer)):
            for f in files:
                stem = os.path.splitext(f)[0]
                layer_of_stem.setdefault(stem, layer)
    for d in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, d)) and d not in LAYERS:
            errors.append(f"core/src/{d}/: not a layer folder (layers: {', '.join(LAYERS)})")
        elif os.path.isfile(os.path.join(src, d)):
            errors.append(f"core/src/{d}: a source outside every layer folder")

    def public_layer(name):
        if name in LAYER_OF_HEADER:
            return LAYER_OF_HEADER[name]
        return layer_of_stem.get(os.path.splitext(name)[0])

    def target_layer(inc):
        """The layer of an included path, None for headers outside the core."""
        if inc.startswith("plexus/sdk/") or inc == "plexus/plugin_api.h":
            return None  # the SDK and the ABI sit below the whole core
        if inc.startswith("plexus/"):
            name = inc[len("plexus/"):]
            layer = public_layer(name)
            return layer if layer else ("?", inc)
        first = inc.split("/")[0]
        if first in LAYERS:
            return first
        return None  # third-party and generated (.pb.h) headers

    files = []
    for dirpath, _, names in os.walk(src):
        for f in names:
            if f.endswith((".h", ".cc")):
                path = os.path.join(dirpath, f)
                layer = os.path.relpath(path, src).split(os.sep)[0]
                files.append((path, layer if layer in LAYERS else None))
    for f in os.listdir(pub):
        if f.endswith(".h"):
            layer = public_layer(f)
            if layer is None:
                errors.append(f"core/include/plexus/{f}: no layer (add a source of the same "
                              "name or an entry in LAYER_OF_HEADER of .ci/check_layers.py)")
            files.append((os.path.join(pub, f), layer))

    for path, layer in files:
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.count("\n")
        if lines > MAX_LINES:
            errors.append(f"{rel}: {lines} lines, over the core's limit of {MAX_LINES}")
        if layer is None:
            continue
        for inc in INCLUDE.findall(text):
            if "plugins/" in inc or inc.startswith("../"):
                errors.append(f"{rel}: includes \"{inc}\" (the core reaches no plugin and no "
                              "path outside core/)")
                continue
            t = target_layer(inc)
            if isinstance(t, tuple):
                errors.append(f"{rel}: includes \"{inc}\", a header of no known layer")
            elif t is not None and rank(t) > rank(layer):
                errors.append(f"{rel} ({layer}) includes \"{inc}\" ({t}): a higher layer")

    # Plugins see only the ABI and the SDK.
    for plugin in ("cpu", "cuda", "rocm", "xpu", "gpu"):
        base = os.path.join(root, "plugins", plugin)
        for dirpath, _, names in os.walk(base):
            for f in names:
                if not f.endswith((".h", ".cc", ".cu", ".cpp", ".hip")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for inc in INCLUDE.findall(fh.read()):
                        if (inc.startswith("plexus/") and inc != "plexus/plugin_api.h"
                                and not inc.startswith("plexus/sdk/")):
                            errors.append(f"{os.path.relpath(path, root)}: includes the core "
                                          f"header \"{inc}\" (plugins see plugin_api/ and sdk/ only)")
                        if "core/" in inc:
                            errors.append(f"{os.path.relpath(path, root)}: includes \"{inc}\"")

    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering problem(s); see docs/architecture.md, \"Layers\"")
        return 1
    print(f"layers: {len(files)} core files checked, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
