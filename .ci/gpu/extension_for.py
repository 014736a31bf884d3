#!/usr/bin/env python3
"""Builds the Python extension plexus._plexus of a finished build again for
another Python interpreter, beside the one the build made, so that the staged
package (BUILD/python/plexus) imports under both. The GPU machine runs a newer
Python than the build machine; .ci/gpu/bundle.sh calls this when PX_GPU_PYTHON
names an interpreter of that version.

    python3 .ci/gpu/extension_for.py BUILD PYTHON

It repeats the build's own compile and link commands for the extension and
for nanobind (from compile_commands.json and ninja), with the other
interpreter's include folder and extension suffix, in BUILD/python-abi/,
unless the extension it made is newer than the build's own.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import shlex
import subprocess
import sys


def interpreter_facts(python: str) -> tuple[str, str]:
    code = "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return out[0], out[1]


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build = pathlib.Path(sys.argv[1]).resolve()
    include, suffix = interpreter_facts(sys.argv[2])
    stage = build / "python" / "plexus"
    target_file = stage / ("_plexus" + suffix)
    # The build's own extension: the one for another suffix than the target's.
    own = [f for f in stage.glob("_plexus.cpython-*.so") if f.name != target_file.name]
    if not own:
        print(f"extension_for: no extension of the build in {stage} other than {target_file.name} "
              "(build the target _plexus first)", file=sys.stderr)
        return 1
    if target_file.exists() and target_file.stat().st_mtime >= own[0].stat().st_mtime:
        print(f"extension_for: {target_file} is up to date")
        return 0
    db = json.loads((build / "compile_commands.json").read_text())
    work = build / "python-abi"
    work.mkdir(exist_ok=True)
    jobs = []
    objects = {}
    for entry in db:
        args = shlex.split(entry["command"])
        out = entry.get("output") or args[args.index("-o") + 1]
        if "/_plexus.dir/" not in out and "/nanobind-static.dir/" not in out:
            continue
        new_out = str(work / pathlib.Path(out).name)
        fixed = []
        skip = False
        for a in args:
            if skip:
                skip = False
            elif a in ("-MT", "-MF", "-o"):  # each with the next argument
                skip = True
                if a == "-o":
                    fixed += ["-o", new_out]
            elif a.startswith("-I") and "/include/python3" in a:
                fixed.append("-I" + include)
            elif a not in ("-MD", "/usr/bin/ccache"):
                fixed.append(a)
        objects[out] = new_out
        jobs.append((fixed, entry["directory"]))
    if not jobs:
        print("extension_for: compile_commands.json lists no _plexus sources (configure with "
              "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)", file=sys.stderr)
        return 1

    def compile_one(job):
        args, cwd = job
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for r in pool.map(compile_one, jobs):
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                return 1

    # The link: the build's own command for the extension, with the objects
    # and the output replaced; nanobind's archive becomes its objects.
    target = "python/plexus/" + own[0].name
    cmds = subprocess.run(["ninja", "-C", str(build), "-t", "commands", target],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    link = next(c for c in reversed(cmds) if target in c and " -shared " in c)
    link = link.split("&&", 1)[1].rsplit("&&", 1)[0] if link.startswith(":") else link
    # Ninja's command is for a shell: "\$ORIGIN" in the run path is "$ORIGIN".
    args = [a.replace("\\$", "$") for a in shlex.split(link)]
    nb_objs = [o for k, o in objects.items() if "/nanobind-static.dir/" in k]
    new_args = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            new_args += ["-o", str(target_file)]
            skip = True
            continue
        if a in objects:
            new_args.append(objects[a])
            continue
        if a.endswith("libnanobind-static.a"):
            new_args += nb_objs
            continue
        new_args.append(a)
    r = subprocess.run(new_args, cwd=build, capture_output=True, text=True)
    if r.returncode != 0:
        print(" ".join(new_args), "\n", r.stderr, file=sys.stderr)
        return 1
    print(f"extension_for: built {target_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
