"""Runs the models of the TensorFlow model zoo (tests/tf_zoo) through Plexus
and compares each result with TensorFlow's own outputs.

A zoo model is a folder ``<set>/<name>/`` holding ``meta.json``, its inputs
and TensorFlow's outputs as .npy files, and its exports (layout in
tests/tf_zoo/README.md). Each model runs every way its exports allow:

  cli_frozen             frozen_lowered.pb through ``plexus run``
  cli_frozen_functional  frozen_functional.pb (If/While kept) through ``plexus run``
  python_saved_model     saved_model/ through ``plexus.saved_model.load``
  c_saved_model          saved_model/ through the C API (plexus_run_saved_model)
  python_keras_export    keras_export/ (Keras's Model.export) through Python

Used by test_tf_zoo.py and, as a program, to write a results file for the
coverage table (tests/tf_zoo/coverage.py):

  python tf_zoo_runner.py --zoo DIR [--zoo DIR]... --results FILE.json [--only REGEX]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

WAYS = ("cli_frozen", "cli_frozen_functional", "python_saved_model", "c_saved_model",
        "python_keras_export")
# The export each way needs.
EXPORT_OF_WAY = {
    "cli_frozen": "frozen_lowered",
    "cli_frozen_functional": "frozen_functional",
    "python_saved_model": "saved_model",
    "c_saved_model": "saved_model",
    "python_keras_export": "keras_export",
}
# Seconds one way of one model may take (the applications are the largest).
TIMEOUT_S = 300


@dataclass
class Model:
    folder: Path
    meta: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.meta['set']}/{self.meta['name']}"

    def path(self, relative: str) -> Path:
        return self.folder / relative

    def export(self, kind: str) -> Path | None:
        name = self.meta.get("exports", {}).get(kind)
        return self.folder / name if name else None

    def signature(self, kind: str) -> str:
        default = "serve" if kind == "keras_export" else "serving_default"
        return self.meta.get("signatures", {}).get(kind, default)

    def ways(self) -> list[str]:
        return [w for w in WAYS if self.export(EXPORT_OF_WAY[w]) is not None]


def find_models(roots) -> list[Model]:
    """Every model (a folder with meta.json) under the given zoo roots."""
    models = []
    for root in roots:
        for meta_file in sorted(Path(root).glob("*/*/meta.json")):
            models.append(Model(meta_file.parent, json.loads(meta_file.read_text())))
    return models


def zoo_roots() -> list[Path]:
    """The committed zoo and, when PLEXUS_TF_ZOO_EXTRA names folders (':'-separated),
    the generated ones there (the Keras applications)."""
    roots = []
    data = os.environ.get("PLEXUS_TEST_DATA")
    if data and (Path(data) / "tf_zoo").is_dir():
        roots.append(Path(data) / "tf_zoo")
    for extra in filter(None, os.environ.get("PLEXUS_TF_ZOO_EXTRA", "").split(":")):
        roots.append(Path(extra))
    return roots


def binary(name: str) -> Path:
    build = os.environ.get("PLEXUS_BUILD_DIR")
    if not build:
        raise RuntimeError("PLEXUS_BUILD_DIR is not set: the CLI and the C runner come from the build")
    return Path(build) / "bin" / name


class WayFailed(Exception):
    """A way did not produce outputs: the runtime's message (first lines)."""


def _run(cmd) -> None:
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise WayFailed(f"timed out after {TIMEOUT_S} s") from None
    if proc.returncode != 0:
        text = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}")
        if proc.returncode < 0:
            text = f"killed by signal {-proc.returncode}: {text}"
        raise WayFailed(text)


def _outputs_cli_frozen(model: Model, graph: Path, out: Path) -> list[np.ndarray]:
    cmd = [binary("plexus"), "run", graph, "--out", out]
    # A TensorFlow 1 graph with lookup tables initializes them through
    # tf.compat.v1.tables_initializer's node, which a frozen graph keeps.
    if b"init_all_tables" in graph.read_bytes():
        cmd += ["--init", "init_all_tables"]
    for item in model.meta["inputs"]:
        cmd += ["--input", f"{item['tensor']}={model.path(item['file'])}"]
    for item in model.meta["outputs"]:
        cmd += ["--output", item["tensor"]]
    _run(cmd)
    return [np.load(out / (re.sub(r"[:/]", "_", item["tensor"]) + ".npy"), allow_pickle=False)
            for item in model.meta["outputs"]]


def _outputs_c(model: Model, saved: Path, out: Path) -> list[np.ndarray]:
    cmd = [binary("plexus_run_saved_model"), saved, "--signature",
           model.signature("saved_model"), "--out", out]
    cmd += [f"{item['key']}={model.path(item['file'])}" for item in model.meta["inputs"]]
    _run(cmd)
    return [np.load(out / f"{item['key']}.npy", allow_pickle=False) for item in model.meta["outputs"]]


def _outputs_python(model: Model, saved: Path, kind: str) -> list[np.ndarray]:
    import plexus
    try:
        loaded = plexus.saved_model.load(str(saved))
        fn = loaded.signatures[model.signature(kind)]
        feeds = {item["key"]: np.load(model.path(item["file"]), allow_pickle=False)
                 for item in model.meta["inputs"]}
        results = fn(**feeds)
    except Exception as e:  # the runtime's error is the result of this way
        raise WayFailed(f"{type(e).__name__}: {e}") from None
    return [np.asarray(results[item["key"]]) for item in model.meta["outputs"]]


def outputs_of(model: Model, way: str) -> list[np.ndarray]:
    """Runs ``model`` one way and returns its outputs in meta order."""
    export = model.export(EXPORT_OF_WAY[way])
    with tempfile.TemporaryDirectory(prefix="plexus_zoo_") as tmp:
        out = Path(tmp)
        if way in ("cli_frozen", "cli_frozen_functional"):
            return _outputs_cli_frozen(model, export, out)
        if way == "c_saved_model":
            return _outputs_c(model, export, out)
        return _outputs_python(model, export, EXPORT_OF_WAY[way])


def _as_comparable(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "U":
        return np.char.encode(a, "utf-8")
    if a.dtype == object:
        return np.array([x if isinstance(x, bytes) else str(x).encode() for x in a.ravel()],
                        dtype=object).reshape(a.shape).astype(bytes)
    return a


def compare(model: Model, got: list[np.ndarray]) -> str | None:
    """None when every output matches TensorFlow's; else what differs. The
    float outputs of a model marked unstable (TensorFlow's own outputs move
    beyond the tolerance under a tiny input change, tests/tf_zoo/export.py)
    are compared by shape, dtype and finiteness only."""
    tol = model.meta.get("tolerance", {})
    unstable = "unstable" in model.meta
    rtol, atol = float(tol.get("rtol", 1e-5)), float(tol.get("atol", 1e-5))
    for item, actual in zip(model.meta["outputs"], got):
        expected = np.load(model.path(item["file"]), allow_pickle=False)
        actual = _as_comparable(actual)
        label = item["key"]
        if actual.shape != expected.shape:
            return f"output {label}: shape {list(actual.shape)}, TensorFlow gives {list(expected.shape)}"
        if expected.dtype.kind in "fc":
            if actual.dtype.kind not in "fc":
                return f"output {label}: dtype {actual.dtype}, TensorFlow gives {expected.dtype}"
            a, e = actual.astype(np.float64), expected.astype(np.float64)
            if unstable:
                if (np.isfinite(a) != np.isfinite(e)).any():
                    return f"output {label}: finite where TensorFlow's is not, or the other way"
                continue
            bad = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                err = np.abs(a - e)[bad]
                return (f"output {label}: {int(bad.sum())} of {e.size} values differ "
                        f"(max abs error {float(np.nanmax(err)):.3g}; rtol {rtol}, atol {atol})")
        elif expected.dtype.kind in "SUO":
            if not np.array_equal(actual.astype(bytes), _as_comparable(expected).astype(bytes)):
                return f"output {label}: strings differ"
        else:
            if actual.dtype != expected.dtype:
                return f"output {label}: dtype {actual.dtype}, TensorFlow gives {expected.dtype}"
            if not np.array_equal(actual, expected):
                return f"output {label}: {int((actual != expected).sum())} of {expected.size} values differ"
    return None


def run_way(model: Model, way: str) -> tuple[bool, str]:
    """(matches, message): message is the error or the difference."""
    try:
        got = outputs_of(model, way)
    except WayFailed as e:
        return False, str(e)
    problem = compare(model, got)
    if problem is None and "unstable" in model.meta:
        return True, "matches by shape only: TensorFlow's own outputs are unstable"
    return problem is None, problem or "matches"


def first_line(message: str) -> str:
    """The most telling line of an error, for a table."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() or "not" in line.lower() or "unsupported" in line.lower():
            return line[:300]
    return (lines[0] if lines else message)[:300]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zoo", action="append", default=[], help="a zoo folder (repeatable)")
    parser.add_argument("--results", required=True, help="the JSON file to write")
    parser.add_argument("--only", help="run only models whose set/name matches this regex")
    args = parser.parse_args(argv)
    roots = [Path(z) for z in args.zoo] or zoo_roots()
    results = {}
    for model in find_models(roots):
        if args.only and not re.search(args.only, model.id):
            continue
        entry = {"meta_errors": model.meta.get("errors", {}), "ways": {}}
        for way in model.ways():
            started = time.time()
            ok, message = run_way(model, way)
            entry["ways"][way] = {"ok": ok, "message": message, "seconds": round(time.time() - started, 2)}
            print(f"{model.id:50s} {way:22s} {'match' if ok else 'FAIL '} {first_line(message)}",
                  flush=True)
        results[model.id] = entry
    Path(args.results).write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
