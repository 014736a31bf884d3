"""The GPU training benchmark's models (bench/cuda/train_cuda.py and
train_models.py) on the CPU: Plexus's train steps and PyTorch eager's, from the
same weights and batches, in float32 and in mixed precision (float16 compute,
float32 weights, dynamic loss scaling: plexus.keras's LossScaleOptimizer
against torch.autocast and GradScaler), must give the same first 5 losses.

This checks that the benchmark compares like with like before it runs on a
GPU, and, on the CPU, Plexus's mixed-precision training against PyTorch's.
Tolerances are the benchmark's own (relative to max(1, |loss|)): 1e-3 in
float32 (the frameworks sum in different orders), 5e-2 in mixed precision
(measured here: about 6e-4). The timings of --quick mean nothing and are not
checked. Each side runs in a process of its own, as on the GPU machine.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "cuda" / "train_cuda.py"
TOLERANCE = {"float32": 1e-3, "mixed": 5e-2}


def _rows(args, tmp_path, name):
    out = subprocess.run([sys.executable, str(BENCH), *args, "--data", str(tmp_path / "data"), "--quick"],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "PLEXUS_PLUGIN_PATH": ""})
    assert out.returncode == 0, f"{name}: exit status {out.returncode}\n{out.stderr[-4000:]}"
    rows = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            rows[r["key"]] = r
    return rows


def test_plexus_and_torch_train_the_benchmark_models_alike(tmp_path):
    plexus = _rows(["--side", "plexus", "--device", "CPU:0"], tmp_path, "plexus")
    torch = _rows(["--side", "torch", "--device", "cpu", "--no-compile"], tmp_path, "torch")
    assert len(plexus) == 6 and set(plexus) == set(torch), (sorted(plexus), sorted(torch))
    for key, p in sorted(plexus.items()):
        t = torch[key]
        assert "error" not in p, f"plexus {key}: {p['error']}"
        assert "error" not in t, f"torch {key}: {t['error']}"
        assert p["off_device"] == [], f"{key}: kernels left CPU:0: {p['off_device']}"
        tol = TOLERANCE["mixed" if "_mixed_" in key else "float32"]
        assert len(p["losses"]) == len(t["losses"]) == 5
        for step, (a, b) in enumerate(zip(p["losses"], t["losses"])):
            assert abs(a - b) <= tol * max(1.0, abs(b)), f"{key} step {step + 1}: plexus {a}, torch {b}"
        # Training moves: the loss of the fifth step is below the first's.
        assert p["losses"][-1] < p["losses"][0], f"{key}: {p['losses']}"
