"""plexus-serve over REST: TensorFlow Serving's /v1 API and KServe's v2 (plain
HTTP and tritonclient.http, JSON and the binary tensor extension), every bad
input the issue lists (4xx naming the input and what was expected), /metrics,
the access log, batching and a full batch queue. Expected answers come from
NumPy on the models' own weights (serve_util)."""

import base64
import json
import os
import struct
import threading
import time

import numpy as np
import pytest

import serve_util as su

pytestmark = pytest.mark.skipif(su.find_binary() is None, reason="plexus-serve is not built")

LIMIT = 1 << 20  # --max_request_bytes of the main server
READ_TIMEOUT = 2  # --read_timeout_seconds of the main server


@pytest.fixture(scope="module")
def models():
    return su.models_dir()


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    d = tmp_path_factory.mktemp("serve_rest")
    config = su.write_config(str(d / "models.config"), [
        ("small", os.path.join(models, "small"), "latest { num_versions: 2 }"),
        ("small_v1", os.path.join(models, "small"), "specific { versions: 1 }"),
        ("multi", os.path.join(models, "multi"), ""),
        ("examples", os.path.join(models, "examples"), ""),
    ])
    s = su.Server([f"--model_config_file={config}", f"--max_request_bytes={LIMIT}", "--rest_threads=16",
                   f"--read_timeout_seconds={READ_TIMEOUT}",
                   f"--access_log={d / 'access.log'}"], grpc=False)
    s.access_log = str(d / "access.log")
    yield s
    s.close()


def rng(seed):
    return np.random.default_rng(seed)


def assert_error(status, body, code, *words):
    """`status` is `code`, the body is {"error": message} and the message
    holds every word (a tuple: any of its words), case-insensitively."""
    assert status == code, (status, body)
    assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"], body
    msg = body["error"].lower()
    for w in words:
        alternatives = w if isinstance(w, tuple) else (w,)
        assert any(a.lower() in msg for a in alternatives), f"{alternatives} not in error: {body['error']!r}"


# ---- /v1: TensorFlow Serving -----------------------------------------------------------------------


def test_v1_model_status(server):
    status, body = server.get_json("/v1/models/small")
    assert status == 200, body
    states = {v["version"]: v for v in body["model_version_status"]}
    assert set(states) == {"1", "2"}
    for v in states.values():
        assert v["state"] == "AVAILABLE"
        assert v["status"]["error_code"] == "OK"
    status, body = server.get_json("/v1/models/small/versions/1")
    assert status == 200 and [v["version"] for v in body["model_version_status"]] == ["1"], body
    status, body = server.get_json("/v1/models/small_v1")
    assert status == 200 and [v["version"] for v in body["model_version_status"]] == ["1"], body


def test_v1_metadata(server):
    status, body = server.get_json("/v1/models/small/metadata")
    assert status == 200, body
    assert body["model_spec"]["name"] == "small" and body["model_spec"]["version"] == "2"
    sig = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert sig["method_name"] == "tensorflow/serving/predict"
    features = sig["inputs"]["features"]
    assert features["dtype"] == "DT_FLOAT"
    assert [int(d["size"]) for d in features["tensor_shape"]["dim"]] == [-1, 4]
    assert sig["outputs"]["scores"]["dtype"] == "DT_FLOAT"
    status, body = server.get_json("/v1/models/small/versions/1/metadata")
    assert status == 200 and body["model_spec"]["version"] == "1", body
    status, body = server.get_json("/v1/models/examples/metadata")
    sigs = body["metadata"]["signature_def"]["signature_def"]
    assert sigs["classify_x"]["method_name"] == "tensorflow/serving/classify"
    assert sigs["regress_x"]["method_name"] == "tensorflow/serving/regress"
    assert "__saved_model_init_op" not in sigs


def test_v1_predict_row_and_columnar(server):
    x = rng(1).standard_normal((3, 4)).astype(np.float32)
    status, body = server.post_json("/v1/models/small:predict", {"instances": x.tolist()})
    assert status == 200, body
    np.testing.assert_allclose(body["predictions"], su.small_ref(x, 2), rtol=1e-5, atol=1e-5)
    status, body = server.post_json("/v1/models/small/versions/1:predict",
                                    {"instances": [{"features": r} for r in x.tolist()]})
    assert status == 200, body
    np.testing.assert_allclose(body["predictions"], su.small_ref(x, 1), rtol=1e-5, atol=1e-5)
    status, body = server.post_json("/v1/models/small:predict", {"inputs": {"features": x.tolist()}})
    assert status == 200, body
    np.testing.assert_allclose(body["outputs"], su.small_ref(x, 2), rtol=1e-5, atol=1e-5)
    status, body = server.post_json("/v1/models/small_v1:predict",
                                    {"signature_name": "serving_default", "inputs": x.tolist()})
    assert status == 200, body
    np.testing.assert_allclose(body["outputs"], su.small_ref(x, 1), rtol=1e-5, atol=1e-5)


def _b(value):
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value.encode()


def test_v1_predict_several_inputs_and_b64(server):
    values = [[1.0, 2.0], [0.5, -1.0]]
    count = [3, -2]
    text = [b"ab", b"\xff\x00z"]  # the second is not UTF-8: sent and answered as b64
    instances = [{"values": v, "count": c, "text": {"b64": base64.b64encode(t).decode()}}
                 for v, c, t in zip(values, count, text)]
    status, body = server.post_json("/v1/models/multi:predict", {"instances": instances})
    assert status == 200, body
    ref = su.multi_ref(values, count, text)
    rows = body["predictions"]
    assert len(rows) == 2 and set(rows[0]) == {"scaled", "doubled", "greeting", "echo_bytes"}
    for i, row in enumerate(rows):
        np.testing.assert_allclose(row["scaled"], ref["scaled"][i])
        assert row["doubled"] == int(ref["doubled"][i])
        assert isinstance(row["echo_bytes"], dict), "outputs named *_bytes are written as b64"
        assert _b(row["echo_bytes"]) == ref["echo_bytes"][i]
        assert _b(row["greeting"]) == ref["greeting"][i]
    status, body = server.post_json("/v1/models/multi:predict", {"inputs": {
        "values": values, "count": count, "text": ["plain", "text"]}})
    assert status == 200, body
    out = body["outputs"]
    assert out["greeting"] == ["hello plain", "hello text"]
    assert [_b(v) for v in out["echo_bytes"]] == [b"plain", b"text"]
    assert out["doubled"] == [6, -4]


def test_v1_predict_nan_and_infinity(server):
    body = '{"instances": [[NaN, 0, 0, 0], [1, 2, 3, Infinity], [1, 2, 3, 4]]}'
    status, _, data = server.request("POST", "/v1/models/small:predict", body)
    assert status == 200, data
    pred = np.array(json.loads(data)["predictions"], dtype=np.float64)
    assert np.isnan(pred[0]).all() and not np.isfinite(pred[1]).all()
    np.testing.assert_allclose(pred[2], su.small_ref([[1, 2, 3, 4]], 2)[0], rtol=1e-5)


def test_v1_classify_and_regress(server):
    xs = [[1.0, 2.0], [0.5, -1.0], [0.0, 0.0]]
    status, body = server.post_json("/v1/models/examples:classify", {"examples": [{"x": x} for x in xs]})
    assert status == 200, body
    ref = su.classify_ref(xs)
    assert len(body["result"]) == 3
    for row, probs in zip(body["result"], ref):
        assert [label for label, _ in row] == [c.decode() for c in su.CLASSES]
        np.testing.assert_allclose([score for _, score in row], probs, rtol=1e-5, atol=1e-6)
    # The context's features go into every example.
    status, body = server.post_json("/v1/models/examples:classify", {
        "signature_name": "classify_x", "context": {"x": [1.0, 2.0]}, "examples": [{}, {}]})
    assert status == 200, body
    for row in body["result"]:
        np.testing.assert_allclose([s for _, s in row], ref[0], rtol=1e-5, atol=1e-6)
    status, body = server.post_json("/v1/models/examples/versions/1:regress",
                                    {"signature_name": "regress_x", "examples": [{"x": x} for x in xs]})
    assert status == 200, body
    np.testing.assert_allclose(body["result"], su.regress_ref(xs), rtol=1e-5, atol=1e-5)


def test_v1_classify_needs_a_classify_signature(server):
    status, body = server.post_json("/v1/models/small:classify", {"examples": [{"x": [1.0, 2.0]}]})
    assert_error(status, body, 400, "classify", "serving_default")
    status, body = server.post_json("/v1/models/examples:regress", {"examples": [{"x": [1.0, 2.0]}]})
    assert_error(status, body, 400, "regress", "serving_default")


# ---- /v2: KServe ----------------------------------------------------------------------------------


def test_v2_health_and_server_metadata(server):
    assert server.get_json("/v2/health/live")[0] == 200
    assert server.get_json("/v2/health/ready")[0] == 200
    status, body = server.get_json("/v2")
    assert status == 200 and body["name"] and body["version"], body
    assert "binary_tensor_data" in body["extensions"]


def test_v2_model_metadata_and_ready(server):
    status, body = server.get_json("/v2/models/small")
    assert status == 200, body
    assert body["name"] == "small" and sorted(body["versions"]) == ["1", "2"]
    assert body["inputs"] == [{"name": "features", "datatype": "FP32", "shape": [-1, 4]}]
    assert body["outputs"] == [{"name": "scores", "datatype": "FP32", "shape": [-1, 3]}]
    status, body = server.get_json("/v2/models/multi/versions/1")
    assert status == 200, body
    types = {i["name"]: i["datatype"] for i in body["inputs"]}
    assert types == {"values": "FP32", "count": "INT32", "text": "BYTES"}
    assert server.get_json("/v2/models/small/ready")[0] == 200
    assert server.get_json("/v2/models/small/versions/1/ready")[0] == 200
    assert_error(*server.get_json("/v2/models/small/versions/7/ready"), 404, "small", "7")


def test_v2_infer_json(server):
    x = rng(2).standard_normal((2, 4)).astype(np.float32)
    req = {"id": "req-1", "inputs": [{"name": "features", "shape": [2, 4], "datatype": "FP32",
                                      "data": x.ravel().tolist()}]}
    status, body = server.post_json("/v2/models/small/infer", req)
    assert status == 200, body
    assert body["model_name"] == "small" and body["model_version"] == "2" and body["id"] == "req-1"
    (out,) = body["outputs"]
    assert out["name"] == "scores" and out["datatype"] == "FP32" and out["shape"] == [2, 3]
    np.testing.assert_allclose(np.reshape(out["data"], (2, 3)), su.small_ref(x, 2), rtol=1e-5, atol=1e-5)
    req["inputs"][0]["data"] = x.tolist()  # nested data
    status, body = server.post_json("/v2/models/small/versions/1/infer", req)
    assert status == 200 and body["model_version"] == "1", body
    np.testing.assert_allclose(np.reshape(body["outputs"][0]["data"], (2, 3)), su.small_ref(x, 1),
                               rtol=1e-5, atol=1e-5)
    req = {"inputs": [{"name": "values", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]},
                      {"name": "count", "shape": [1], "datatype": "INT32", "data": [4]},
                      {"name": "text", "shape": [1], "datatype": "BYTES", "data": ["zz"]}],
           "outputs": [{"name": "doubled"}, {"name": "greeting"}]}
    status, body = server.post_json("/v2/models/multi/infer", req)
    assert status == 200, body
    outs = {o["name"]: o for o in body["outputs"]}
    assert set(outs) == {"doubled", "greeting"}
    assert outs["doubled"]["datatype"] == "INT32" and outs["doubled"]["data"] == [8]
    assert outs["greeting"]["datatype"] == "BYTES" and outs["greeting"]["data"] == ["hello zz"]


def _binary_infer_body(inputs, outputs_binary=True):
    """Triton's binary extension: (body, JSON part's length); inputs are
    (name, array, datatype) sent as raw little-endian bytes."""
    header = {"inputs": [], "parameters": {"binary_data_output": outputs_binary}}
    raws = []
    for name, arr, dtype in inputs:
        if dtype == "BYTES":
            raw = b"".join(struct.pack("<I", len(v)) + v for v in arr.ravel())
        else:
            raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header["inputs"].append({"name": name, "shape": list(arr.shape), "datatype": dtype,
                                 "parameters": {"binary_data_size": len(raw)}})
        raws.append(raw)
    head = json.dumps(header).encode()
    return head + b"".join(raws), len(head)


def test_v2_infer_binary_extension_raw(server):
    x = rng(3).standard_normal((3, 4)).astype(np.float32)
    body, n = _binary_infer_body([("features", x, "FP32")])
    status, headers, data = server.request("POST", "/v2/models/small/infer", body,
                                           {"Inference-Header-Content-Length": str(n),
                                            "Content-Type": "application/octet-stream"})
    assert status == 200, data
    hlen = int({k.lower(): v for k, v in headers.items()}["inference-header-content-length"])
    head = json.loads(data[:hlen])
    (out,) = head["outputs"]
    assert out["shape"] == [3, 3] and out["parameters"]["binary_data_size"] == 36
    got = np.frombuffer(data[hlen:hlen + 36], "<f4").reshape(3, 3)
    np.testing.assert_allclose(got, su.small_ref(x, 2), rtol=1e-5, atol=1e-5)


def test_v2_tritonclient_http(server):
    import tritonclient.http as httpclient
    client = httpclient.InferenceServerClient(f"127.0.0.1:{server.port}", network_timeout=30)
    try:
        assert client.is_server_live() and client.is_server_ready()
        assert client.is_model_ready("small") and client.is_model_ready("small", "1")
        assert client.get_server_metadata()["name"]
        assert client.get_model_metadata("multi")["name"] == "multi"
        x = rng(4).standard_normal((5, 4)).astype(np.float32)
        for binary in (True, False):
            inp = httpclient.InferInput("features", list(x.shape), "FP32")
            inp.set_data_from_numpy(x, binary_data=binary)
            out = httpclient.InferRequestedOutput("scores", binary_data=binary)
            for version, ref_version in (("", 2), ("1", 1)):
                r = client.infer("small", [inp], model_version=version, outputs=[out], request_id="t")
                np.testing.assert_allclose(r.as_numpy("scores"), su.small_ref(x, ref_version),
                                           rtol=1e-5, atol=1e-5)
                assert r.get_response()["model_version"] == str(ref_version)
        values = np.array([[1, 2], [3, 4]], np.float32)
        count = np.array([2, 5], np.int32)
        text = np.array([b"a", b"\xfe\xff"], dtype=object)
        inputs = []
        for name, arr, dt in (("values", values, "FP32"), ("count", count, "INT32"), ("text", text, "BYTES")):
            i = httpclient.InferInput(name, list(arr.shape), dt)
            i.set_data_from_numpy(arr)
            inputs.append(i)
        r = client.infer("multi", inputs)
        ref = su.multi_ref(values, count, list(text))
        np.testing.assert_allclose(r.as_numpy("scaled"), ref["scaled"])
        np.testing.assert_array_equal(r.as_numpy("doubled"), ref["doubled"])
        assert list(r.as_numpy("greeting")) == ref["greeting"]
        assert list(r.as_numpy("echo_bytes")) == ref["echo_bytes"]
    finally:
        client.close()


# ---- bad input: a 4xx naming what was wrong and what was expected, never a crash ------------------

X4 = [[1.0, 2.0, 3.0, 4.0]]
PRED, INFER = "/v1/models/small:predict", "/v2/models/small/infer"
MULTI_PRED = "/v1/models/multi:predict"


def v2(name="features", shape=(1, 4), datatype="FP32", data=(1, 2, 3, 4)):
    return {"inputs": [{"name": name, "shape": list(shape), "datatype": datatype, "data": list(data)}]}


BAD_REQUESTS = [
    # (id, method, path, body, status, words the message must hold)
    ("malformed_json_v1", "POST", PRED, '{"instances": [[1, 2, 3, 4]', 400, ["json"]),
    ("malformed_json_v2", "POST", INFER, '{"inputs": [{"name": "features", ', 400, ["json"]),
    ("not_json", "POST", PRED, "instances=1", 400, ["json"]),
    ("not_an_object", "POST", PRED, "[1, 2]", 400, ["object"]),
    ("deep_nesting", "POST", PRED, '{"instances": ' + "[" * 100000 + "]" * 100000 + "}", 400, []),
    ("instances_and_inputs", "POST", PRED, {"instances": X4, "inputs": X4}, 400, ["instances", "inputs"]),
    ("neither_instances_nor_inputs", "POST", PRED, {"signature_name": "serving_default"}, 400,
     ["instances", "inputs"]),
    ("wrong_name_columnar", "POST", PRED, {"inputs": {"pixels": X4}}, 400, ["pixels", "features"]),
    ("wrong_name_row", "POST", PRED, {"instances": [{"pixels": X4[0]}]}, 400, ["pixels", "features"]),
    ("missing_input", "POST", MULTI_PRED, {"inputs": {"values": [[1, 2]], "count": [1]}}, 400, ["text"]),
    ("wrong_dtype_string_for_float", "POST", PRED, {"instances": [["a", "b", "c", "d"]]}, 400,
     ["features", ("float", "fp32", "number")]),
    ("wrong_dtype_fraction_for_int", "POST", MULTI_PRED,
     {"inputs": {"values": [[1, 2]], "count": [1.5], "text": ["a"]}}, 400, ["count", "int"]),
    ("int_out_of_range", "POST", MULTI_PRED,
     {"inputs": {"values": [[1, 2]], "count": [2**40], "text": ["a"]}}, 400, ["count", ("range", "int32")]),
    ("bad_base64", "POST", MULTI_PRED,
     {"inputs": {"values": [[1, 2]], "count": [1], "text": [{"b64": "!!not base64!!"}]}}, 400,
     ["text", ("base64", "b64")]),
    ("wrong_shape_row", "POST", PRED, {"instances": [[1, 2, 3]]}, 400, ["features", "4"]),
    ("wrong_rank_columnar", "POST", PRED, {"inputs": {"features": [1, 2, 3, 4]}}, 400, ["features", "4"]),
    ("ragged_instances", "POST", PRED, {"instances": [[1, 2, 3, 4], [1, 2]]}, 400, ["features"]),
    ("unknown_signature", "POST", PRED, {"signature_name": "nosig", "instances": X4}, 404,
     ["nosig", "serving_default"]),
    ("v2_no_inputs", "POST", INFER, {"id": "x"}, 400, ["inputs"]),
    ("v2_wrong_name", "POST", INFER, v2(name="pixels"), 400, ["pixels", "features"]),
    ("v2_wrong_datatype", "POST", INFER, v2(datatype="INT64"), 400, ["features", "int64", ("fp32", "float")]),
    ("v2_unknown_datatype", "POST", INFER, v2(datatype="FLOAT99"), 400, ["float99"]),
    ("v2_data_fewer_than_shape", "POST", INFER, v2(shape=(2, 4)), 400, ["features", "8"]),
    ("v2_wrong_shape", "POST", INFER, v2(shape=(1, 3), data=(1, 2, 3)), 400, ["features", "4"]),
    ("v2_huge_declared_shape", "POST", INFER, v2(shape=(10**12, 4)), 400, ["features"]),
    ("v2_overflowing_shape", "POST", INFER, v2(shape=(2**62, 2**62)), 400, ["features"]),
    ("v2_negative_dimension", "POST", INFER, v2(shape=(-1, 4)), 400, ["features"]),
    ("v2_wrong_data_kind", "POST", INFER, v2(data=("a", "b", "c", "d")), 400, ["features"]),
    ("v1_unknown_model_status", "GET", "/v1/models/nosuch", None, 404, ["nosuch"]),
    ("v1_unknown_model_metadata", "GET", "/v1/models/nosuch/metadata", None, 404, ["nosuch"]),
    ("v1_unknown_model_predict", "POST", "/v1/models/nosuch:predict", {"instances": X4}, 404, ["nosuch"]),
    ("v1_unknown_version_status", "GET", "/v1/models/small/versions/7", None, 404, ["small", "7"]),
    ("v1_unknown_version_predict", "POST", "/v1/models/small/versions/7:predict", {"instances": X4}, 404,
     ["small", "7"]),
    ("v1_version_not_in_policy", "POST", "/v1/models/small_v1/versions/2:predict", {"instances": X4}, 404,
     ["small_v1", "2"]),
    ("v1_unknown_label", "POST", "/v1/models/small/labels/canary:predict", {"instances": X4}, 404,
     ["canary"]),
    ("v1_version_not_a_number", "GET", "/v1/models/small/versions/abc", None, 400, ["abc"]),
    ("v2_unknown_model", "GET", "/v2/models/nosuch", None, 404, ["nosuch"]),
    ("v2_unknown_model_ready", "GET", "/v2/models/nosuch/ready", None, 404, ["nosuch"]),
    ("v2_unknown_model_infer", "POST", "/v2/models/nosuch/infer", v2(), 404, ["nosuch"]),
    ("v2_unknown_version_infer", "POST", "/v2/models/small/versions/7/infer", v2(), 404, ["small", "7"]),
    ("unknown_route", "GET", "/v3/whatever", None, 404, []),
]


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_request(server, case):
    _, method, path, body, code, words = case
    t0 = time.monotonic()
    status, _, data = server.request(method, path, body, {"Content-Type": "application/json"})
    assert_error(status, su._loads(data), code, *words)
    assert time.monotonic() - t0 < 5, "an error must come back fast"
    assert server.proc.poll() is None


def _binary_request(server, head, raw, header_length=None):
    head_bytes = json.dumps(head).encode()
    n = len(head_bytes) if header_length is None else header_length
    status, _, data = server.request("POST", INFER, head_bytes + raw, {"Inference-Header-Content-Length": str(n)})
    return status, su._loads(data)


def test_v2_binary_body_shorter_than_declared(server):
    head = {"inputs": [{"name": "features", "shape": [2, 4], "datatype": "FP32",
                        "parameters": {"binary_data_size": 32}}]}
    # 16 of the 32 bytes declared.
    assert_error(*_binary_request(server, head, b"\0" * 16), 400, "features", ("32", "16"))
    # Declared size agrees with the bytes sent, not with the shape.
    head["inputs"][0]["parameters"]["binary_data_size"] = 16
    assert_error(*_binary_request(server, head, b"\0" * 16), 400, "features", ("32", "16"))
    # A huge declared shape with a few bytes.
    head = {"inputs": [{"name": "features", "shape": [10**9, 4], "datatype": "FP32",
                        "parameters": {"binary_data_size": 16}}]}
    assert_error(*_binary_request(server, head, b"\0" * 16), 400, "features")
    # The JSON part's length beyond the body.
    head = {"inputs": [{"name": "features", "shape": [1, 4], "datatype": "FP32",
                        "parameters": {"binary_data_size": 16}}]}
    status, body = _binary_request(server, head, b"\0" * 16, header_length=10**6)
    assert_error(status, body, 400, "inference-header-content-length")
    # BYTES elements whose 4-byte lengths run past the data.
    head = {"inputs": [{"name": "text", "shape": [1], "datatype": "BYTES", "parameters": {"binary_data_size": 6}},
                       {"name": "values", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]},
                       {"name": "count", "shape": [1], "datatype": "INT32", "data": [1]}]}
    head_bytes = json.dumps(head).encode()
    status, _, data = server.request("POST", "/v2/models/multi/infer", head_bytes + struct.pack("<I", 100) + b"ab",
                                     {"Inference-Header-Content-Length": str(len(head_bytes))})
    assert_error(status, su._loads(data), 400, "text")
    assert server.proc.poll() is None


def test_truncated_http_body(server):
    """A body shorter than its Content-Length: 400 once --read_timeout_seconds
    passes (the server cannot know more is not coming)."""
    body = json.dumps({"instances": X4 * 20}).encode()
    req = (f"POST {PRED} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body[: len(body) // 2]
    t0 = time.monotonic()
    status, data = su.raw_http(server.port, req, timeout=READ_TIMEOUT + 10, shut_write=False)
    assert_error(status, su._loads(data), 400, ("truncated", "could not be read"))
    assert time.monotonic() - t0 < READ_TIMEOUT + 5
    # The client closing its side mid-body: no answer is owed, and nothing breaks.
    su.raw_http(server.port, req, timeout=READ_TIMEOUT + 10, shut_write=True)
    assert server.get_json("/v2/health/live")[0] == 200


def test_oversized_body_413(server):
    """A Content-Length over --max_request_bytes is refused with 413 from the
    headers alone, before the body is read."""
    size = 2 * LIMIT
    head = (f"POST {PRED} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()
    t0 = time.monotonic()
    status, data = su.raw_http(server.port, head, timeout=10, shut_write=False)
    assert time.monotonic() - t0 < 5
    assert_error(status, su._loads(data), 413, str(LIMIT), "max_request_bytes")
    # The whole body sent: a 413 or (the server closing with the body unread) a reset.
    body = b'{"instances": [' + b"[1,2,3,4]," * (LIMIT // 10 + 10) + b"[1,2,3,4]]}"
    head = head.replace(str(size).encode(), str(len(body)).encode())
    status, data = su.raw_http(server.port, head + body, timeout=15)
    assert status in (413, None), (status, data[:300])
    assert server.get_json("/v2/health/live")[0] == 200


# ---- metrics and the access log -------------------------------------------------------------------


def test_metrics(server):
    x = np.ones((1, 4), np.float32)
    assert server.post_json(PRED, {"instances": x.tolist()})[0] == 200
    assert server.post_json("/v2/models/small/infer", v2())[0] == 200
    assert server.post_json("/v1/models/nosuch:predict", {"instances": X4})[0] == 404
    text = server.metrics()
    reqs = su.metric_values(text, "plexus_serve_requests_total")
    assert any('model="small"' in k and 'protocol="rest_v1"' in k and 'code="200"' in k for k in reqs), reqs
    assert any('protocol="rest_v2"' in k and 'code="200"' in k for k in reqs), reqs
    lat = su.metric_values(text, "plexus_serve_request_duration_seconds_bucket")
    assert any('le="+Inf"' in k and 'model="small"' in k for k in lat), lat
    assert su.metric_values(text, "plexus_serve_request_duration_seconds_count")
    errors = su.metric_values(text, "plexus_serve_errors_total")
    assert errors.get('{kind="not_found"}', 0) >= 1 and errors.get('{kind="bad_request"}', 0) >= 1, errors
    versions = su.metric_values(text, "plexus_serve_model_versions")
    assert versions.get('{model="small",version="1"}') == 1 and versions.get('{model="small",version="2"}') == 1
    assert "# TYPE plexus_serve_batch_size histogram" in text
    assert "plexus_serve_in_flight_requests " in text
    status, _, body = server.request("GET", "/monitoring/prometheus/metrics")
    assert status == 200 and b"plexus_serve_requests_total" in body


def test_access_log(server):
    assert server.post_json("/v1/models/small/versions/1:predict", {"instances": X4})[0] == 200
    assert server.post_json("/v1/models/nosuch:predict", {"instances": X4})[0] == 404
    deadline = time.monotonic() + 10
    records = []
    while time.monotonic() < deadline:
        with open(server.access_log) as f:
            records = [json.loads(line) for line in f if line.strip()]
        if any(r.get("status") == 404 and "nosuch" in str(r.get("path")) for r in records):
            break
        time.sleep(0.1)
    ok = [r for r in records if r.get("path") == "/v1/models/small/versions/1:predict" and r.get("status") == 200]
    assert ok, records[-5:]
    r = ok[-1]
    assert r["method"] == "POST" and r["model"] == "small" and int(r["version"]) == 1
    assert {"time", "remote", "protocol", "bytes_in", "bytes_out", "ms"} <= set(r), r
    assert r["protocol"] == "rest_v1" and r["bytes_in"] > 0 and r["bytes_out"] > 0 and r["ms"] >= 0
    bad = [r for r in records if r.get("status") == 404 and "nosuch" in str(r.get("path"))]
    assert bad and "nosuch" in str(bad[-1].get("error", "")), bad[-1:]


def test_keep_alive_requests_are_fast(server):
    """Requests on one keep-alive connection answer in well under the 40 ms of
    a delayed ACK (Nagle's algorithm holding the response's second write)."""
    conn = server.connection(timeout=10)
    times = []
    try:
        for path in ["/v2/health/live"] * 10 + ["/v1/models/small"] * 10:
            t0 = time.perf_counter()
            conn.request("GET", path)
            r = conn.getresponse()
            r.read()
            assert r.status == 200
            times.append(time.perf_counter() - t0)
    finally:
        conn.close()
    assert float(np.median(times[1:])) < 0.02, [round(t * 1e3, 1) for t in times]


# ---- batching and back-pressure -------------------------------------------------------------------


def _multi_request(g, rows):
    values = g.standard_normal((rows, 2)).astype(np.float32)
    count = g.integers(-5, 5, rows).astype(np.int32)
    text = [bytes(g.integers(0, 256, int(g.integers(0, 6))).astype(np.uint8)) for _ in range(rows)]
    body = {"inputs": {"values": values.tolist(), "count": count.tolist(),
                       "text": [{"b64": base64.b64encode(t).decode()} for t in text]}}
    return body, su.multi_ref(values, count, text)


def test_batching_joins_concurrent_requests(models, tmp_path):
    """Requests of 1-3 rows from 16 clients, to a one-input float model and to
    a model with float, int and string inputs, come back right when joined."""
    config = su.write_config(str(tmp_path / "models.config"), [
        ("small", os.path.join(models, "small"), ""), ("multi", os.path.join(models, "multi"), "")])
    s = su.Server([f"--model_config_file={config}", "--enable_batching", "--max_batch_size=16",
                   "--batch_timeout_micros=20000", "--num_batch_threads=1", "--rest_threads=24"], grpc=False)
    try:
        def client(i):
            conn = s.connection(timeout=30)
            g = rng(100 + i)
            bad = []
            for _ in range(8):
                rows = 1 + i % 3
                if i % 2:
                    body, ref = _multi_request(g, rows)
                    path = MULTI_PRED
                else:
                    x = g.standard_normal((rows, 4)).astype(np.float32)
                    body, ref, path = {"instances": x.tolist()}, su.small_ref(x, 2), PRED
                conn.request("POST", path, json.dumps(body))
                r = conn.getresponse()
                out = json.loads(r.read())
                if r.status != 200:
                    bad.append(out)
                elif i % 2 == 0:
                    if not np.allclose(out["predictions"], ref, rtol=1e-5, atol=1e-5):
                        bad.append(("wrong answer", body, out))
                else:
                    o = out["outputs"]
                    if not (np.allclose(o["scaled"], ref["scaled"], rtol=1e-5, atol=1e-5)
                            and o["doubled"] == ref["doubled"].tolist()
                            and [_b(v) for v in o["echo_bytes"]] == ref["echo_bytes"]
                            and [_b(v) for v in o["greeting"]] == ref["greeting"]):
                        bad.append(("wrong answer", body, out))
            conn.close()
            return bad
        results = su.run_together(16, client, 60)
        assert all(r == [] for r in results), [r for r in results if r][:3]
        text = s.metrics()
        for model in ("small", "multi"):
            count = su.metric_values(text, "plexus_serve_batch_size_count")[f'{{model="{model}"}}']
            total = su.metric_values(text, "plexus_serve_batch_size_sum")[f'{{model="{model}"}}']
            assert total >= 8 * 8 and total / count > 1.0, (model, count, total)
    finally:
        s.close()


def test_full_queue_is_refused_fast(models):
    s = su.Server([f"--model_name=slow", f"--model_base_path={os.path.join(models, 'slow')}",
                   "--enable_batching", "--max_batch_size=1", "--batch_timeout_micros=0",
                   "--max_enqueued_batches=1", "--num_batch_threads=1", "--rest_threads=24"])
    try:
        conns = [s.connection(timeout=60) for _ in range(16)]
        for c in conns:  # connected before the burst: the time measured is the server's answer
            c.connect()

        def client(i):
            t0 = time.monotonic()
            conns[i].request("POST", "/v1/models/slow:predict", json.dumps({"instances": X4}))
            r = conns[i].getresponse()
            body = su._loads(r.read())
            return r.status, body, time.monotonic() - t0
        results = su.run_together(16, client, 90)
        for c in conns:
            c.close()
        assert not [r for r in results if isinstance(r, Exception)], results
        ok = [r for r in results if r[0] == 200]
        refused = [r for r in results if r[0] in (429, 503)]
        assert len(ok) + len(refused) == 16, [r[:2] for r in results]
        assert ok and refused, [r[:2] for r in results]
        for _, body, _ in ok:
            np.testing.assert_allclose(body["predictions"], np.array(X4) * 2)
        slowest_ok = max(r[2] for r in ok)
        for status, body, seconds in refused:
            assert_error(status, body, status, ("queue", "full", "busy", "overload"))
            assert seconds < max(1.0, slowest_ok / 2), f"a refusal took {seconds:.2f} s"
        rejections = su.metric_values(s.metrics(), "plexus_serve_queue_rejections_total")
        assert rejections.get('{model="slow"}', 0) >= len(refused)
        if s.grpc_port is not None:
            _full_queue_grpc(s)
    finally:
        s.close()


def _full_queue_grpc(s):
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    def client(i):
        c = grpcclient.InferenceServerClient(f"127.0.0.1:{s.grpc_port}")
        inp = grpcclient.InferInput("features", [1, 4], "FP32")
        inp.set_data_from_numpy(np.array(X4, np.float32))
        try:
            return "ok", c.infer("slow", [inp], client_timeout=60).as_numpy("scores")
        except InferenceServerException as e:
            return e.status(), e.message()
        finally:
            c.close()
    results = su.run_together(16, client, 90)
    codes = [r[0] for r in results]
    assert "ok" in codes, results
    assert all(c in ("ok", "StatusCode.RESOURCE_EXHAUSTED", "StatusCode.UNAVAILABLE") for c in codes), results
    assert any(c != "ok" for c in codes), results
