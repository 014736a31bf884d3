#!/usr/bin/env python3
"""Runs plexus-plugin-check on one plugin and checks its JSON report.

usage: check_report.py TOOL PLUGIN [--exit N] [--fail SECTION.NAME ...]
                       [--skip SECTION.NAME ...] [--min-cells N]
                       [--cell-fail OP/DTYPE ...] [--detail SECTION.NAME=TEXT ...]
                       [--only SECTIONS]

--fail lists checks that must fail, and no other check or kernel cell may fail
unless listed with --fail or --cell-fail. --skip lists checks that must be
skipped (with a reason). A check named SECTION.* matches any check of the
section.
"""
import argparse
import json
import subprocess
import sys
import tempfile


def matches(check, pattern):
    section, _, name = pattern.partition(".")
    return check["section"] == section and (name == "*" or check["name"] == name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tool")
    p.add_argument("plugin")
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--fail", nargs="*", default=[])
    p.add_argument("--skip", nargs="*", default=[])
    p.add_argument("--cell-fail", nargs="*", default=[])
    p.add_argument("--min-cells", type=int, default=0)
    p.add_argument("--detail", nargs="*", default=[])
    p.add_argument("--only", default=None, help="the tool's --only: the sections to run")
    args = p.parse_args()

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        only = ["--only", args.only] if args.only else []
        run = subprocess.run([args.tool, "--json", out.name] + only + [args.plugin],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(run.stdout)
        report = json.load(open(out.name))
    errors = []
    if run.returncode != args.exit:
        errors.append(f"exit status {run.returncode}, expected {args.exit}")
    for check in report["checks"]:
        if check["result"] == "fail" and not any(matches(check, f) for f in args.fail):
            errors.append(f"unexpected failure {check['section']}.{check['name']}: {check['detail']}")
        if check["result"] == "skip" and not check["detail"]:
            errors.append(f"{check['section']}.{check['name']} skipped without a reason")
    for pattern in args.fail:
        if not any(matches(c, pattern) and c["result"] == "fail" for c in report["checks"]):
            errors.append(f"{pattern} did not fail")
    for pattern in args.skip:
        if not any(matches(c, pattern) and c["result"] == "skip" for c in report["checks"]):
            errors.append(f"{pattern} was not skipped")
    for spec in args.detail:
        pattern, _, text = spec.partition("=")
        if not any(matches(c, pattern) and text in c["detail"] for c in report["checks"]):
            errors.append(f"no {pattern} mentions {text!r}")
    cells = report["kernels"]
    for cell in cells:
        key = f"{cell['op']}/{cell['dtype']}"
        if cell["result"] == "fail" and key not in args.cell_fail:
            errors.append(f"kernel cell {key} failed: {cell['detail']}")
        if cell["result"] == "skip" and not cell["detail"]:
            errors.append(f"kernel cell {key} skipped without a reason")
    for key in args.cell_fail:
        if not any(f"{c['op']}/{c['dtype']}" == key and c["result"] == "fail" for c in cells):
            errors.append(f"kernel cell {key} did not fail")
    passed = sum(1 for c in cells if c["result"] == "pass")
    if passed < args.min_cells:
        errors.append(f"{passed} kernel cells passed, expected at least {args.min_cells}")
    expected_result = "pass" if args.exit == 0 else "fail"
    if report["result"] != expected_result:
        errors.append(f"report result {report['result']}, expected {expected_result}")
    for e in errors:
        print("check_report:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
