#!/usr/bin/env python3
"""Checks that the docs name only paths that exist.

Every path written in backquotes in docs/*.md, README.md and the READMEs
of the tree's folders that starts with a top-level folder of the repository
(core/, c_api/, plugin_api/, plugins/, sdk/, python/, tests/, docs/, bench/,
examples/, .ci/) must exist, as a file or a folder. Globs (`*`), placeholders
(`<family>`, `X`-style names in capitals) and paths under build folders are
passed over.

Usage: check_doc_paths.py [REPO_ROOT]. Prints each missing path with the
file and line naming it, and exits 1 if there is one.
"""
import os
import re
import sys

TOP = ("core/", "c_api/", "plugin_api/", "plugins/", "sdk/", "python/", "tests/", "docs/",
       "bench/", "examples/", ".ci/")
CODE = re.compile(r"`([^`\s]+)`")
# What commands write (bench/run.sh), named by the docs that explain them.
GENERATED = ("bench/results.json", "bench/python/results.json", "bench/.venv", "bench/.cache")


def docs(root):
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md"):
            yield os.path.join("docs", name)
    yield "README.md"
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build")) and d not in (
            "node_modules", "__pycache__")]
        rel = os.path.relpath(dirpath, root)
        if rel != "." and "README.md" in files:
            yield os.path.join(rel, "README.md")


def candidates(text):
    for match in CODE.finditer(text):
        path = match.group(1).rstrip(".,;:)")
        path = path.split(":")[0]  # file:line
        if not path.startswith(TOP) or path.startswith(GENERATED):
            continue
        if any(c in path for c in "*<>{}$[]|") or re.search(r"/[A-Z]{1,2}(\.|/|$)", path):
            continue
        yield path


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    missing = []
    checked = 0
    for doc in docs(root):
        with open(os.path.join(root, doc), encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                for path in candidates(line):
                    checked += 1
                    if not os.path.exists(os.path.join(root, path)):
                        missing.append(f"{doc}:{number}: names {path}, which does not exist")
    for m in missing:
        print(m)
    if missing:
        print(f"{len(missing)} path(s) in the docs do not exist")
        return 1
    print(f"doc paths: {checked} paths checked, all exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
