#!/usr/bin/env python3
"""Serves the digits SavedModel with plexus-serve and queries it over REST.

    python3 examples/serve_digits.py --saved-model build/digits/saved_model \
        --server build/bin/plexus-serve --work build/digits_serving

The SavedModel of examples/train_digits.py (images [None, 8, 8, 1] float32 ->
probabilities [None, 10]) becomes version 1 of the model "digits" under a
TensorFlow Serving base path. The server starts on 127.0.0.1 (free ports),
answers TensorFlow Serving's row-format predict and KServe v2's infer for
the 360 test images, and both must equal the SavedModel run in this process
(within 1e-5). Then a second version is copied in and served without a
restart, /metrics is read, and SIGTERM stops the server with exit status 0.
Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np

import plexus as px


def digits_test_images(seed=0):
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images.astype(np.float32) / 16.0)[..., None]
    order = np.random.default_rng(seed).permutation(len(images))
    test = order[:360]  # the split of examples/train_digits.py
    return images[test], digits.target[test]


def post(url, body, timeout=30):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def start(server, base, timeout=120):
    """Starts plexus-serve and returns (process, REST port)."""
    proc = subprocess.Popen([server, "--model_name=digits", f"--model_base_path={base}",
                             "--host=127.0.0.1", "--port=0", "--grpc_port=-1",
                             "--file_system_poll_wait_seconds=0.2"],
                            stdout=subprocess.PIPE, text=True)
    found = {}

    def read():
        for line in proc.stdout:
            m = re.match(r"plexus-serve: REST listening on [^:]+:(\d+)", line)
            if m:
                found["port"] = int(m.group(1))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while "port" not in found:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("plexus-serve did not start (see its messages above)")
        time.sleep(0.05)
    return proc, found["port"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saved-model", required=True)
    parser.add_argument("--server", required=True, help="the plexus-serve program")
    parser.add_argument("--work", required=True, help="folder for the model base path")
    args = parser.parse_args()

    x_test, y_test = digits_test_images()
    want = np.asarray(px.saved_model.load(args.saved_model).signatures["serving_default"](
        images=px.constant(x_test))["probabilities"])

    base = os.path.join(args.work, "digits")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(base)
    shutil.copytree(args.saved_model, os.path.join(base, "1"))
    proc, port = start(args.server, base)
    url = f"http://127.0.0.1:{port}"
    try:
        print(f"plexus-serve: model 'digits' on {url}")
        t0 = time.perf_counter()
        v1 = np.asarray(post(f"{url}/v1/models/digits:predict",
                             {"instances": x_test.tolist()})["predictions"], np.float32)
        t1 = time.perf_counter()
        outputs = post(f"{url}/v2/models/digits/infer", {"inputs": [{
            "name": "images", "shape": list(x_test.shape), "datatype": "FP32",
            "data": x_test.ravel().tolist()}]})["outputs"]
        v2 = np.asarray(outputs[0]["data"], np.float32).reshape(outputs[0]["shape"])
        np.testing.assert_allclose(v1, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(v2, want, rtol=1e-5, atol=1e-6)
        acc = float(np.mean(np.argmax(v1, 1) == y_test))
        print(f"TensorFlow Serving predict and KServe v2 infer of {len(x_test)} images: equal to "
              f"the SavedModel in process; accuracy {acc:.4f} ({(t1 - t0) * 1e3:.1f} ms for the predict)")

        # A second version appears (copied under a temporary name, then
        # renamed into place) and serves without a restart.
        tmp = os.path.join(base, ".incoming")
        shutil.copytree(args.saved_model, tmp)
        os.rename(tmp, os.path.join(base, "2"))
        deadline = time.monotonic() + 60
        while True:
            status = json.loads(get(f"{url}/v1/models/digits"))["model_version_status"]
            states = {s["version"]: s["state"] for s in status}
            if states.get("2") == "AVAILABLE":
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"version 2 did not start serving: {status}")
            time.sleep(0.1)
        served = post(f"{url}/v2/models/digits/infer", {"inputs": [{
            "name": "images", "shape": [1, 8, 8, 1], "datatype": "FP32",
            "data": x_test[:1].ravel().tolist()}]})
        assert served["model_version"] == "2", served
        print(f"version 2 copied in: serving {served['model_version']} (versions: {states})")
        metrics = [line for line in get(f"{url}/metrics").splitlines()
                   if line.startswith(("plexus_serve_requests_total", "plexus_serve_model_versions"))]
        print("metrics:\n  " + "\n  ".join(metrics))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed after 60 s"
    print(f"SIGTERM: plexus-serve exited with {code}")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
