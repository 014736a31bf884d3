"""Helpers of plexus-serve's tests (test_serve_*.py) and of bench/peers/serve_load.py.

Models: SavedModels written by TensorFlow into BASE/NAME/VERSION, as
TensorFlow Serving lays them out. TensorFlow writes them in a child process
(``python serve_util.py DIR``), so the test process needs no TensorFlow for
them; every weight comes from a NumPy generator seeded by name and version,
and the ``*_ref`` functions compute the expected answers with NumPy.

  small     features float32 [None, 4] -> scores float32 [None, 3]
            scores = features @ W + b; versions 1 and 2 (different W, b)
  multi     values float32 [None, 2], count int32 [None], text string [None]
            -> scaled = values * count, doubled = count * 2 (int32),
               greeting = "hello " + text, echo_bytes = text
  examples  TF1 signatures over serialized tf.Example (feature x: 2 floats):
            serving_default / classify_x (classes "cat" "dog" "bird",
            scores = softmax(x @ Wc)), regress_x (outputs = x @ wr + 0.5)
  medium    features float32 [None, 256] -> logits [None, 10], an MLP
            256-1024-1024-10 with ReLUs (about 5 MB of weights)
  slow      features float32 [None, 4] -> scores = features * 2, after a
            chain of 1024x1024 matmuls that depends on the input (tens of ms)

Server: ``Server([...flags])`` starts build/bin/plexus-serve on 127.0.0.1
with --port=0 --grpc_port=0 and reads the ports from the "listening" lines.
Every wait here has a timeout.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

MEDIUM_SIZES = (256, 1024, 1024, 10)
SLOW_MATMULS = 6
SLOW_DIM = 1024
CLASSES = [b"cat", b"dog", b"bird"]


# ---- weights and reference answers (NumPy) -----------------------------------------------------


def _rng(name, version=1):
    return np.random.default_rng([ord(c) for c in name] + [version])


def small_weights(version):
    g = _rng("small", version)
    return (g.standard_normal((4, 3)).astype(np.float32),
            (g.standard_normal(3) + 10.0 * version).astype(np.float32))


def small_ref(x, version):
    w, b = small_weights(version)
    return np.asarray(x, np.float32) @ w + b


def multi_ref(values, count, text):
    values = np.asarray(values, np.float32)
    count = np.asarray(count, np.int32)
    return {"scaled": values * count.astype(np.float32)[:, None],
            "doubled": count * 2,
            "greeting": [b"hello " + t for t in text],
            "echo_bytes": list(text)}


def examples_weights():
    g = _rng("examples")
    return g.standard_normal((2, 3)).astype(np.float32), g.standard_normal((2, 1)).astype(np.float32)


def classify_ref(xs):
    wc, _ = examples_weights()
    logits = np.asarray(xs, np.float32) @ wc
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def regress_ref(xs):
    _, wr = examples_weights()
    return (np.asarray(xs, np.float32) @ wr + 0.5).reshape(-1)


def medium_weights():
    g = _rng("medium")
    out = []
    for a, b in zip(MEDIUM_SIZES[:-1], MEDIUM_SIZES[1:]):
        out.append(((g.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                    (0.1 * g.standard_normal(b)).astype(np.float32)))
    return out


def medium_ref(x):
    h = np.asarray(x, np.float32)
    layers = medium_weights()
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < len(layers) - 1:
            h = np.maximum(h, 0)
    return h


def slow_weights():
    g = _rng("slow")
    return (g.standard_normal((SLOW_DIM, SLOW_DIM)) / np.sqrt(SLOW_DIM)).astype(np.float32)


# ---- writing the SavedModels (TensorFlow, in a child process) -----------------------------------


def _write_all_with_tf(root):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    def save_tf2(module, fn, path):
        tf.saved_model.save(module, path, signatures={"serving_default": fn})

    for version in (1, 2):
        w, b = small_weights(version)
        m = tf.Module()
        m.w, m.b = tf.Variable(w), tf.Variable(b)

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features")])
        def small(features, m=m):
            return {"scores": tf.matmul(features, m.w) + m.b}
        save_tf2(m, small, os.path.join(root, "small", str(version)))

    m = tf.Module()

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="values"),
                                  tf.TensorSpec([None], tf.int32, name="count"),
                                  tf.TensorSpec([None], tf.string, name="text")])
    def multi(values, count, text):
        return {"scaled": values * tf.cast(count, tf.float32)[:, None],
                "doubled": count * 2,
                "greeting": tf.strings.join([tf.constant("hello "), text]),
                "echo_bytes": tf.identity(text)}
    save_tf2(m, multi, os.path.join(root, "multi", "1"))

    m = tf.Module()
    m.layers = [(tf.Variable(w), tf.Variable(b)) for w, b in medium_weights()]

    @tf.function(input_signature=[tf.TensorSpec([None, MEDIUM_SIZES[0]], tf.float32, name="features")])
    def medium(features, m=m):
        h = features
        for i, (w, b) in enumerate(m.layers):
            h = tf.matmul(h, w) + b
            if i < len(m.layers) - 1:
                h = tf.nn.relu(h)
        return {"logits": h}
    save_tf2(m, medium, os.path.join(root, "medium", "1"))

    m = tf.Module()
    m.w = tf.Variable(slow_weights())

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features")])
    def slow(features, m=m):
        # A chain of big matmuls the answer depends on only through 0 * ...,
        # fed from the input so that nothing folds it away.
        h = m.w + tf.reduce_sum(features) * 1e-30
        for _ in range(SLOW_MATMULS):
            h = tf.matmul(h, m.w)
        return {"scores": features * 2.0 + 0.0 * tf.reduce_sum(tf.abs(h[:1, :1]))}
    save_tf2(m, slow, os.path.join(root, "slow", "1"))

    _write_examples_tf1(tf, os.path.join(root, "examples", "1"))


def _write_examples_tf1(tf, path):
    v1 = tf.compat.v1
    wc, wr = examples_weights()
    graph = tf.Graph()
    with graph.as_default():
        serialized = v1.placeholder(tf.string, [None], name="tf_example")
        x = v1.io.parse_example(serialized, {"x": v1.io.FixedLenFeature([2], tf.float32)})["x"]
        wcv, wrv = v1.Variable(wc, name="wc"), v1.Variable(wr, name="wr")
        scores = tf.nn.softmax(tf.matmul(x, wcv), name="scores")
        # The labels [n, 3]: numbers made strings, then named (the cpu
        # plugin has no Tile/Fill/Gather/ConcatV2 kernels for strings).
        classes = tf.strings.as_string(tf.tile(tf.range(len(CLASSES))[None, :], [tf.shape(x)[0], 1]))
        for i, c in enumerate(CLASSES):
            classes = tf.strings.regex_replace(classes, f"^{i}$", c.decode())
        classes = tf.identity(classes, name="classes")
        predictions = tf.reshape(tf.matmul(x, wrv) + 0.5, [-1], name="predictions")
        classify = v1.saved_model.classification_signature_def(serialized, classes, scores)
        regress = v1.saved_model.regression_signature_def(serialized, predictions)
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            builder = v1.saved_model.Builder(path)
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": classify, "classify_x": classify,
                                                    "regress_x": regress})
            builder.save()


_models_lock = threading.Lock()
_models_dir = None


def models_dir(timeout=240):
    """The models of this module's header, written once per process (in a
    child process running TensorFlow) into a temporary directory."""
    global _models_dir
    with _models_lock:
        if _models_dir is None:
            root = tempfile.mkdtemp(prefix="plexus_serve_models_")
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), root], capture_output=True,
                                  text=True, timeout=timeout)
            if proc.returncode != 0:
                raise RuntimeError(f"writing the SavedModels failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
            import atexit
            atexit.register(shutil.rmtree, root, True)
            _models_dir = root
        return _models_dir


def copy_version(src_version_dir, base, version):
    """Puts a version into `base` as an exporter does: copied under a
    temporary name, then renamed into place in one step."""
    tmp = os.path.join(base, f".tmp-{version}-{os.getpid()}")
    shutil.copytree(src_version_dir, tmp)
    os.rename(tmp, os.path.join(base, str(version)))


def write_config(path, models):
    """TensorFlow Serving's model_config_list text file; `models` is a list of
    (name, base_path, policy[, extra]) where policy is a text-proto fragment
    or "", and extra more fields of the config (version_labels ...)."""
    lines = ["model_config_list {"]
    for name, base, policy, *extra in models:
        lines.append(f'  config {{ name: "{name}" base_path: "{base}" model_platform: "tensorflow"')
        if policy:
            lines.append(f"    model_version_policy {{ {policy} }}")
        lines.extend(f"    {e}" for e in extra)
        lines.append("  }")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# ---- the server ---------------------------------------------------------------------------------


def find_binary():
    """plexus-serve: $PLEXUS_SERVE_BINARY, $PLEXUS_BUILD_DIR/bin, the repo's build/bin, PATH."""
    candidates = [os.environ.get("PLEXUS_SERVE_BINARY")]
    if os.environ.get("PLEXUS_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["PLEXUS_BUILD_DIR"], "bin", "plexus-serve"))
    candidates.append(os.path.join(REPO, "build", "bin", "plexus-serve"))
    candidates.append(shutil.which("plexus-serve"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


_LISTEN = re.compile(r"plexus-serve: (REST|gRPC) listening on ([^\s:]+):(\d+)")


class ServerError(RuntimeError):
    pass


class Server:
    """A plexus-serve process on 127.0.0.1 with free ports (REST, and gRPC
    when the build has it: grpc_port is None otherwise)."""

    def __init__(self, args, start_timeout=90, grpc=True, command=None, env=None):
        binary = find_binary()
        if command is None and binary is None:
            raise ServerError("plexus-serve is not built (build/bin/plexus-serve)")
        self.log = tempfile.NamedTemporaryFile(prefix="plexus_serve_", suffix=".log", delete=False)
        argv = (command or [binary]) + ["--host=127.0.0.1", "--port=0",
                                        "--grpc_port=0" if grpc else "--grpc_port=-1"] + list(args)
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=env, start_new_session=True)
        self.pid = self.proc.pid
        self.port = self.grpc_port = None
        self._lines = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        deadline = time.monotonic() + start_timeout
        while self.port is None:
            self._take_line(deadline, f"no 'REST listening' line within {start_timeout} s")
        if grpc:
            # Both lines are printed together: wait a little for the second one.
            try:
                while self.grpc_port is None:
                    self._take_line(time.monotonic() + 2.0, "")
            except ServerError:
                if self.proc.poll() is not None:
                    raise
        self.host = "127.0.0.1"

    def _read_stdout(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _take_line(self, deadline, what):
        try:
            line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            if what:
                self.kill()
            raise ServerError(f"{what}; log:\n{self.log_text()[-3000:]}")
        if line is None:
            self.proc.wait(timeout=10)
            raise ServerError(f"plexus-serve exited ({self.proc.returncode}) before listening:\n"
                              f"{self.log_text()[-3000:]}")
        m = _LISTEN.search(line)
        if m and m.group(1) == "REST":
            self.port = int(m.group(3))
        elif m:
            self.grpc_port = int(m.group(3))

    def log_text(self):
        try:
            with open(self.log.name, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    # -- HTTP helpers (a fresh connection each; keep-alive clients use connection())

    def connection(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers dict, body bytes)."""
        conn = self.connection(timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def get_json(self, path, timeout=30):
        status, _, body = self.request("GET", path, timeout=timeout)
        return status, _loads(body)

    def post_json(self, path, body, headers=None, timeout=30):
        status, _, data = self.request("POST", path, body, headers, timeout=timeout)
        return status, _loads(data)

    def metrics(self):
        status, _, body = self.request("GET", "/metrics")
        assert status == 200, body
        return body.decode()

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise ServerError("no VmRSS")

    # -- stopping

    def terminate(self, timeout=40):
        """SIGTERM, then the exit code (SIGKILL and an error past `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise ServerError(f"plexus-serve did not exit within {timeout} s of SIGTERM")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        try:
            self.terminate(timeout=20)
        except ServerError:
            pass
        self.kill()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def run_together(n, fn, seconds_limit):
    """Runs fn(i) on n threads started together; returns their results (an
    exception is a result). Bounded by `seconds_limit`."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait(timeout=seconds_limit)
            results[i] = fn(i)
        except Exception as e:  # noqa: BLE001 - reported by the test
            results[i] = e
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds_limit)
    assert not any(t.is_alive() for t in threads), "clients did not finish in time"
    return results


def _loads(body):
    try:
        return json.loads(body) if body else None
    except ValueError:
        return {"_raw": body.decode(errors="replace")}


def metric_values(text, name):
    """{label string: value} of the samples of metric `name` in a Prometheus exposition."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            key, _, value = line.rpartition(" ")
            out[key[len(name):]] = float(value)
    return out


def raw_http(port, data, timeout=10, shut_write=True):
    """Sends raw bytes on a new connection and returns (status or None, body
    bytes) of what comes back before the server closes or `timeout` passes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(data)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        chunks = []
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
                if _complete(b"".join(chunks)):
                    break
        except (socket.timeout, ConnectionResetError):
            pass
        raw = b"".join(chunks)
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    if not m:
        return None, raw
    return int(m.group(1)), raw.partition(b"\r\n\r\n")[2]


def _complete(raw):
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"(?i)content-length:\s*(\d+)", head)
    return m is not None and len(body) >= int(m.group(1))


if __name__ == "__main__":
    _write_all_with_tf(sys.argv[1])
