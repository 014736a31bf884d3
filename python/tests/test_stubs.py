"""The committed type stubs match the op registry and parse."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "gen_stubs.py"


def test_stubs_current():
    r = subprocess.run([sys.executable, str(TOOL), "--check"], env=dict(os.environ),
                       capture_output=True, text=True)
    assert r.returncode == 0, (
        "stale stubs; regenerate with PYTHONPATH=build/python python3 "
        "python/tools/gen_stubs.py\n" + r.stdout + r.stderr)


def test_stubs_parse_and_cover_modules():
    import plexus
    from plexus import _ops
    for name in list(_ops.SUBMODULES) + ["_ops", "_plexus"]:
        path = ROOT / "plexus" / f"{name}.pyi"
        tree = ast.parse(path.read_text(), str(path))
        if name in ("_ops", "_plexus"):
            continue
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        mod = getattr(plexus, name, None) or __import__(f"plexus.{name}", fromlist=["x"])
        assert set(mod.__all__) <= defined, (name, set(mod.__all__) - defined)
    assert (ROOT / "plexus" / "py.typed").exists()


def test_check_detects_stale(tmp_path):
    r = subprocess.run([sys.executable, str(TOOL), "--check", "--out", str(tmp_path)],
                       env=dict(os.environ), capture_output=True, text=True)
    assert r.returncode == 1 and "stale" in r.stderr
