"""The plexus-cuda pip package (plugins/cuda/python): installed beside NVIDIA's
pip packages, `import plexus` loads its plugin through the `plexus.plugins`
entry point and the plugin finds cuBLASLt, NVRTC, cuDNN and NCCL through its
run path, with no CUDA toolkit and no LD_LIBRARY_PATH.

Building the wheel compiles the cuda plugin with nvcc and installing it
downloads about 1.3 GB of NVIDIA libraries, so this runs only when asked:
PLEXUS_CUDA_WHEEL names the built wheel (`pip wheel ./plugins/cuda/python -w
dist`), and PLEXUS_CUDA_WHEEL_DEPS optionally a folder of NVIDIA wheels to
install from instead of the package index, or `installed` to use those
already installed in this environment (as PyTorch's CUDA build brings them),
checked against the wheel's pins. PLEXUS_CORE_LIBRARY_PATH optionally names
a folder of the core's own libraries, for a build tree carried to the GPU
machine (never NVIDIA's). Without a GPU it checks the packaging (the entry
point, the run path, that each library loads and has the pinned version);
with one, that CUDA:0 appears and MatMul (cuBLASLt) and Conv2D (cuDNN) on it
match the CPU within 1e-4 relative.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

WHEEL = os.environ.get("PLEXUS_CUDA_WHEEL")
pytestmark = pytest.mark.skipif(
    not WHEEL, reason="PLEXUS_CUDA_WHEEL is not set (build the wheel: pip wheel ./plugins/cuda/python -w dist)")


def _requirements(wheel):
    """The wheel's Requires-Dist entries, less plexus itself (this environment's)."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    reqs = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    return [r for r in reqs if not r.replace(" ", "").startswith("plexus")]


def _link_installed(target, reqs):
    """PLEXUS_CUDA_WHEEL_DEPS=installed: NVIDIA's packages are already installed
    in this environment (as PyTorch's CUDA build brings them, on a machine that
    cannot download); check their versions against the wheel's pins and link
    their `nvidia` folder into the target, where the plugin's run path looks."""
    from importlib import metadata

    from packaging.requirements import Requirement

    for r in reqs:
        req = Requirement(r)
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{req.name} is not installed here")
        if not req.specifier.contains(have, prereleases=True):
            pytest.fail(f"{req.name} {have} is installed; the wheel pins {req.specifier}")
    import nvidia

    dirs = [pathlib.Path(d) for d in nvidia.__path__ if (pathlib.Path(d) / "cudnn").is_dir()]
    assert dirs, f"no nvidia/cudnn among {list(nvidia.__path__)}"
    (pathlib.Path(target) / "nvidia").symlink_to(dirs[0], target_is_directory=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(target)]
    r = subprocess.run(pip + ["--no-deps", WHEEL], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    reqs = _requirements(WHEEL)
    assert any(r.startswith("nvidia-cublas") for r in reqs), reqs
    deps = os.environ.get("PLEXUS_CUDA_WHEEL_DEPS")
    if deps == "installed":
        _link_installed(target, reqs)
        return target
    extra = ["--no-index", "--find-links", deps] if deps else []
    r = subprocess.run(pip + extra + reqs, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        pytest.skip(f"NVIDIA's packages ({', '.join(reqs)}) could not be installed: {r.stderr.strip()[-600:]}")
    return target


_PROBE = r'''
import ctypes, json, os, subprocess, sys, warnings
warnings.simplefilter("error")  # a failing entry point warns: make it fail
import plexus as px
import plexus_cuda

out = {"plugins": [dict(p) for p in px.plugins()], "devices": [d.name for d in px.devices()],
       "plugin_path": plexus_cuda.plugin_path(), "library_dirs": plexus_cuda.library_dirs()}
# The run path the plugin was linked with, its $ORIGIN made concrete.
dyn = subprocess.run([sys.argv[1], "-d", out["plugin_path"]], capture_output=True, text=True).stdout
runpath = [l.split("[", 1)[1].rstrip("]") for l in dyn.splitlines() if "(RUNPATH)" in l]
origin = os.path.dirname(out["plugin_path"])
out["runpath"] = [os.path.normpath(p.replace("$ORIGIN", origin)) for p in runpath[0].split(":")] if runpath else []
# What each loader opens (plugins/cuda/src/*_loader.cc), where the run path
# leads, and the version each library reports.
versions = {}
for soname, fn in [("libcublasLt.so.13", "cublasLtGetVersion"), ("libnvrtc.so.13", None),
                   ("libcudnn.so.9", "cudnnGetVersion"), ("libnccl.so.2", None)]:
    found = [d for d in out["runpath"] if os.path.isfile(os.path.join(d, soname))]
    if not found:
        versions[soname] = None
        continue
    lib = ctypes.CDLL(os.path.join(found[0], soname))
    if soname.startswith("libnvrtc"):
        major, minor = ctypes.c_int(), ctypes.c_int()
        lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        versions[soname] = [major.value, minor.value]
    elif soname.startswith("libnccl"):
        v = ctypes.c_int()
        lib.ncclGetVersion(ctypes.byref(v))
        versions[soname] = v.value
    else:
        getattr(lib, fn).restype = ctypes.c_size_t
        versions[soname] = getattr(lib, fn)()
out["versions"] = versions
if "CUDA:0" in out["devices"]:
    import numpy as np
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal([64, 96], np.float32), rng.standard_normal([96, 32], np.float32)
    x, f = rng.standard_normal([2, 12, 12, 3], np.float32), rng.standard_normal([3, 3, 3, 8], np.float32)
    res = {}
    for dev in ("CUDA:0", "CPU:0"):
        with px.device(dev):
            mm = px.matmul(px.constant(a), px.constant(b))
            conv = px.nn.conv2d(px.constant(x), px.constant(f), strides=1, padding="SAME")
            res[dev] = (mm.device, mm.numpy(), conv.numpy())
    assert res["CUDA:0"][0] == "CUDA:0", res["CUDA:0"][0]
    np.testing.assert_allclose(res["CUDA:0"][1], res["CPU:0"][1], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res["CUDA:0"][2], res["CPU:0"][2], rtol=1e-4, atol=1e-4)
    out["ran_on_gpu"] = True
print(json.dumps(out))
'''


def _readelf():
    for cand in ("readelf", "/usr/bin/readelf"):
        r = subprocess.run(["sh", "-c", f"command -v {cand}"], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.strip()
    pytest.skip("readelf (binutils) is not installed")


def test_plexus_loads_the_cuda_wheel_and_its_libraries(site, tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    # Discovery loads the cpu plugin only (a build tree's plexus finds every
    # plugin of the build beside it): the cuda plugin must come from the wheel.
    env = dict(os.environ, PLEXUS_PLUGIN_PATH="", PLEXUS_PLUGINS="cpu", PYTHONPATH=os.pathsep.join(
        [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("LD_LIBRARY_PATH", None)
    # A plexus that is not a self-contained wheel (a build tree carried to
    # another machine) may need a folder of its own libraries; never NVIDIA's.
    if os.environ.get("PLEXUS_CORE_LIBRARY_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["PLEXUS_CORE_LIBRARY_PATH"]
    r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), _readelf()],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-6000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    plugin = pathlib.Path(out["plugin_path"])
    assert plugin.parent.parent == pathlib.Path(site).resolve() or plugin.parent.parent == pathlib.Path(site)
    # The entry point loaded this package's plugin, nothing else named cuda.
    cuda = [p for p in out["plugins"] if p["device_type"] == "CUDA"]
    assert len(cuda) == 1 and pathlib.Path(cuda[0]["path"]).resolve() == plugin.resolve(), out["plugins"]
    # The run path names the package's NVIDIA folders, and each library the
    # plugin opens is there, with the version the wheel pins.
    assert sorted(out["runpath"]) == sorted(os.path.normpath(d) for d in out["library_dirs"]), out
    v = out["versions"]
    assert v["libcublasLt.so.13"] is not None and v["libcublasLt.so.13"] // 10000 == 13, v
    assert v["libnvrtc.so.13"] is not None and v["libnvrtc.so.13"][0] == 13, v
    assert v["libcudnn.so.9"] is not None and v["libcudnn.so.9"] // 10000 == 9, v
    assert v["libnccl.so.2"] is not None and v["libnccl.so.2"] >= 22700, v
    if cuda[0]["num_devices"] == 0:
        assert not any(d.startswith("CUDA") for d in out["devices"])
    else:
        assert out.get("ran_on_gpu"), out
