"""DLPack on CUDA:0 with PyTorch and with CuPy: tensors cross in both
directions without copies, and the stream handshake (plugin ABI 0.8) orders
the work of each side before the other reads. PyTorch writes its tensor on
a side stream after a long spin, and CuPy after a long chain of kernels on a
stream of its own, so a reader that did not wait for that stream would see
the values before they are written. CuPy on its default stream names it as
DLPack's 1 (the legacy default stream). Each skips without its library built
for CUDA or without CUDA:0 (runs on the GPU machine through
.ci/gpu/report.sh).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import plexus as px

BUILD = pathlib.Path(os.environ.get("PLEXUS_BUILD_DIR") or pathlib.Path(px.__file__).resolve().parent.parent.parent)
CUDA_PLUGIN = BUILD / "lib" / "plexus-plugins" / "libplexus_plugin_cuda.so"
NO_DEVICE = 3

# After each library's own device check: the cuda plugin, CUDA:0, a size.
_ON_CUDA = '''px.load_plugin(sys.argv[1])
if "CUDA:0" not in [d.name for d in px.devices()]:
    print("no CUDA:0 in plexus", file=sys.stderr)
    sys.exit(3)
n = 1 << 22
'''

_SCRIPT = r'''
import sys
import numpy as np
import torch
import plexus as px

if not torch.cuda.is_available():
    print("PyTorch sees no CUDA device", file=sys.stderr)
    sys.exit(3)
{on_cuda}
# Import: PyTorch writes on a side stream after spinning; plexus names its
# eager stream, which PyTorch makes wait for the side stream.
side = torch.cuda.Stream()
with torch.cuda.stream(side):
    torch.cuda._sleep(200_000_000)  # a few tens of milliseconds of spinning
    t = torch.full((n,), 3.0, device="cuda")
    p = px.from_dlpack(t)
assert p.device == "CUDA:0", p.device
with px.device("CUDA:0"):
    q = p * 2.0  # queued on plexus's eager stream, after PyTorch's write
np.testing.assert_array_equal(q.numpy()[:: n // 16], np.full(16, 6.0, np.float32))

# Export: plexus's eager work, then PyTorch reads on its current stream,
# which waits for plexus's stream on the device.
with px.device("CUDA:0"):
    big = px.fill([n], 5.0)
    for _ in range(20):
        big = big * 1.0 + 0.0
u = torch.from_dlpack(big)
assert u.device.type == "cuda"
assert bool(torch.all(u == 5.0)), "PyTorch read the tensor before plexus wrote it"
# No copy: the same memory.
assert u.data_ptr() == torch.from_dlpack(big).data_ptr()
print("ok")
'''


_CUPY_SCRIPT = r'''
import sys
import numpy as np
import cupy as cp
import plexus as px

try:
    if cp.cuda.runtime.getDeviceCount() == 0:
        raise RuntimeError("no device")
except Exception as e:
    print(f"CuPy sees no CUDA device: {e}", file=sys.stderr)
    sys.exit(3)
{on_cuda}
# Import: CuPy's work queued on a stream of its own, then handed over; the
# eager stream waits for it on the device.
side = cp.cuda.Stream(non_blocking=True)
with side:
    a = cp.zeros(n, cp.float32)
    for _ in range(200):
        a = a * 1.0 + 0.015
    p = px.from_dlpack(a)
assert p.device == "CUDA:0", p.device
with px.device("CUDA:0"):
    q = p * 2.0
np.testing.assert_allclose(q.numpy()[:: n // 16], np.full(16, 6.0, np.float32), rtol=1e-5)

# Export to CuPy on its default stream (DLPack stream 1) and on a stream of
# its own: CuPy reads after plexus's eager work, in the same memory.
with px.device("CUDA:0"):
    big = px.fill([n], 5.0)
    for _ in range(20):
        big = big * 1.0 + 0.0
u = cp.from_dlpack(big)
assert bool((u == 5.0).all()), "CuPy read the tensor before plexus wrote it"
assert u.data.ptr == cp.from_dlpack(big).data.ptr
with px.device("CUDA:0"):
    big2 = px.fill([n], 7.0)
    for _ in range(20):
        big2 = big2 * 1.0 + 0.0
with cp.cuda.Stream(non_blocking=True):
    v = cp.from_dlpack(big2)
    assert bool((v == 7.0).all()), "CuPy (own stream) read the tensor before plexus wrote it"
print("ok")
'''


def _run(tmp_path, name, source):
    if not CUDA_PLUGIN.is_file():
        pytest.skip("the build has no cuda plugin")
    script = tmp_path / name
    script.write_text(source.replace("{on_cuda}", _ON_CUDA))
    r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), str(CUDA_PLUGIN)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode == NO_DEVICE:
        pytest.skip(r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), f"exit status {r.returncode}\n{r.stderr[-6000:]}"


def test_dlpack_with_pytorch_on_cuda(tmp_path):
    pytest.importorskip("torch")
    _run(tmp_path, "torch_cuda.py", _SCRIPT)


def test_dlpack_with_cupy_on_cuda(tmp_path):
    pytest.importorskip("cupy")
    _run(tmp_path, "cupy_cuda.py", _CUPY_SCRIPT)
