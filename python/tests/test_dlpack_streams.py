"""The DLPack stream handshake (plugin ABI 0.8, docs/plugin_abi.md section 19)
on the asynchronous test device, whose work finishes later on another thread
as a GPU's does: a tensor exported with a consumer stream is ordered on that
stream instead of waiting on the host, a device tensor imported from another
library names a plexus stream to its producer (not the eager stream, which an
eager op failing meanwhile gives up), and bad stream values are clear
errors. The GPU version of these checks (PyTorch and CuPy on
CUDA:0) runs on the GPU machine; each script runs in a process of its own.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import plexus as px

BUILD = pathlib.Path(os.environ.get("PLEXUS_BUILD_DIR") or pathlib.Path(px.__file__).resolve().parent.parent.parent)
ASYNC_PLUGIN = BUILD / "lib" / "test-plugins" / "libpx_test_plugin_async.so"

pytestmark = pytest.mark.skipif(
    not ASYNC_PLUGIN.is_file(), reason="the build tree's asynchronous test plugin (lib/test-plugins) is not here")

_SCRIPT = r'''
import sys
import numpy as np
import plexus as px

px.load_plugin(sys.argv[1])
expected = np.arange(12, dtype=np.float32).reshape(3, 4) * 2 + 1


class Producer:
    """Another library's tensor on ASYNC:0: it records the consumer stream."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.streams = []

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return self.tensor.__dlpack__(stream=stream)


with px.device("ASYNC:0"):
    # Queued eager work: the device writes b later, on its own thread.
    b = px.constant(np.arange(12, dtype=np.float32).reshape(3, 4)) * 2.0 + 1.0

# Import: plexus names a stream of ASYNC:0 (a native handle, never DLPack's
# reserved 0, 1 or 2); the producer orders its work before it, and the eager
# stream waits for that stream on the device.
producer = Producer(b)
c = px.from_dlpack(producer)
assert len(producer.streams) == 1, producer.streams
assert isinstance(producer.streams[0], int) and producer.streams[0] > 2, producer.streams
assert c.device == "ASYNC:0", c.device
np.testing.assert_array_equal(c.numpy(), expected)
with px.device("ASYNC:0"):
    np.testing.assert_array_equal((c + 1.0).numpy(), expected + 1)



class FailingProducer(Producer):
    """A producer during whose handshake an eager op on ASYNC:0 fails: the
    eager stream is given up (destroyed) before the producer orders its work
    on the stream it was named. That stream must not have been the eager
    stream."""

    def __dlpack__(self, stream=None, **kwargs):
        with px.device("ASYNC:0"):
            params = px.constant(np.arange(4, dtype=np.float32))
            bad = px.gather(params, px.constant(np.array([7], dtype=np.int32)))
            try:
                bad.numpy()
            except px.errors.InvalidArgumentError as err:
                assert "GatherV2" in str(err), err
            else:
                raise AssertionError("the out-of-range gather did not fail")
        return super().__dlpack__(stream=stream, **kwargs)


with px.device("ASYNC:0"):
    g = px.constant(np.arange(12, dtype=np.float32).reshape(3, 4)) * 2.0 + 1.0
failing = FailingProducer(g)
h = px.from_dlpack(failing)
assert failing.streams[0] > 2, failing.streams
np.testing.assert_array_equal(h.numpy(), expected)
with px.device("ASYNC:0"):
    np.testing.assert_array_equal((h * 2.0).numpy(), expected * 2)

# Export with a consumer stream: that stream waits on the device (the eager
# stream's own handle is a stream of the device too).
with px.device("ASYNC:0"):
    e = b * 3.0
capsule = e.__dlpack__(stream=producer.streams[0])
f = px.from_dlpack(capsule)
np.testing.assert_array_equal(f.numpy(), expected * 3)
# -1: the consumer synchronizes itself; None: the host waits.
assert e.__dlpack__(stream=-1) is not None
assert e.__dlpack__() is not None

# A stream that is not one of the device's is an error naming both.
try:
    e.__dlpack__(stream=12345)
except Exception as err:  # the plugin's INVALID_ARGUMENT
    assert "12345" in str(err) and "ASYNC:0" in str(err), err
else:
    raise AssertionError("stream 12345 was accepted")
for bad, kind in (("a", TypeError), (-7, ValueError)):
    try:
        e.__dlpack__(stream=bad)
    except kind:
        pass
    else:
        raise AssertionError(f"stream {bad!r} was accepted")
# The device keeps working after the refusals.
with px.device("ASYNC:0"):
    np.testing.assert_array_equal((e + 0.0).numpy(), expected * 3)
print("ok")
'''


def test_dlpack_stream_handshake_on_the_asynchronous_device(tmp_path):
    script = tmp_path / "handshake.py"
    script.write_text(_SCRIPT)
    r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), str(ASYNC_PLUGIN)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), f"exit status {r.returncode}\n{r.stderr[-6000:]}"
