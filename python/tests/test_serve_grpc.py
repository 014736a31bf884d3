"""plexus-serve over gRPC with the real clients: tensorflow-serving-api's
PredictionService (Predict, GetModelMetadata, Classify, Regress) and
ModelService (GetModelStatus), and tritonclient.grpc (KServe's
GRPCInferenceService, raw_input_contents). Bad input answers INVALID_ARGUMENT
/ NOT_FOUND with a message naming the input or model and what was expected."""

import os

import numpy as np
import pytest

import serve_util as su

pytestmark = pytest.mark.skipif(su.find_binary() is None, reason="plexus-serve is not built")

grpc = pytest.importorskip("grpc")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = su.models_dir()
    d = tmp_path_factory.mktemp("serve_grpc")
    config = su.write_config(str(d / "models.config"), [
        ("small", os.path.join(models, "small"), "latest { num_versions: 2 }"),
        ("multi", os.path.join(models, "multi"), ""),
        ("examples", os.path.join(models, "examples"), ""),
    ])
    s = su.Server([f"--model_config_file={config}", "--max_request_bytes=4194304"])
    if s.grpc_port is None:
        s.close()
        pytest.skip("this plexus-serve was built without gRPC (no 'gRPC listening' line)")
    yield s
    s.close()


@pytest.fixture(scope="module")
def channel(server):
    ch = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    grpc.channel_ready_future(ch).result(timeout=30)
    yield ch
    ch.close()


@pytest.fixture(scope="module")
def tfs():
    from tensorflow_serving.apis import (classification_pb2, get_model_metadata_pb2, get_model_status_pb2,
                                         model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc,
                                         regression_pb2)
    from tensorflow.core.example import example_pb2
    from tensorflow.core.framework import tensor_pb2, types_pb2
    from tensorflow.core.protobuf import meta_graph_pb2

    class Apis:
        pass
    a = Apis()
    for m in (classification_pb2, get_model_metadata_pb2, get_model_status_pb2, model_service_pb2_grpc,
              predict_pb2, prediction_service_pb2_grpc, regression_pb2, example_pb2, tensor_pb2, types_pb2,
              meta_graph_pb2):
        setattr(a, m.__name__.rsplit(".", 1)[1], m)
    return a


TIMEOUT = 30
_DT = {np.float32: "DT_FLOAT", np.int32: "DT_INT32", np.int64: "DT_INT64", object: "DT_STRING"}


def tensor_proto(tfs, arr, content=True, shape=None):
    """A TensorProto: tensor_content (raw bytes) or the typed *_val fields."""
    arr = np.asarray(arr)
    t = tfs.tensor_pb2.TensorProto()
    key = object if arr.dtype == object else arr.dtype.type
    t.dtype = tfs.types_pb2.DataType.Value(_DT[key])
    for d in (arr.shape if shape is None else shape):
        t.tensor_shape.dim.add().size = d
    if arr.dtype == object:
        t.string_val.extend(list(arr.ravel()))
    elif content:
        t.tensor_content = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    elif arr.dtype == np.float32:
        t.float_val.extend(arr.ravel().tolist())
    else:
        t.int_val.extend(arr.ravel().tolist())
    return t


def to_numpy(tfs, t):
    shape = [d.size for d in t.tensor_shape.dim]
    name = tfs.types_pb2.DataType.Name(t.dtype)
    if name == "DT_STRING":
        return np.array(list(t.string_val), dtype=object).reshape(shape)
    dtype = {"DT_FLOAT": np.float32, "DT_INT32": np.int32, "DT_INT64": np.int64}[name]
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, np.dtype(dtype).newbyteorder("<")).reshape(shape)
    vals = {"DT_FLOAT": t.float_val, "DT_INT32": t.int_val, "DT_INT64": t.int64_val}[name]
    return np.array(list(vals), dtype).reshape(shape)


def predict_request(tfs, model, inputs, version=None, signature=""):
    req = tfs.predict_pb2.PredictRequest()
    req.model_spec.name = model
    if version is not None:
        req.model_spec.version.value = version
    if signature:
        req.model_spec.signature_name = signature
    for k, v in inputs.items():
        req.inputs[k].CopyFrom(v)
    return req


def assert_rpc_error(call, code, *words):
    with pytest.raises(grpc.RpcError) as info:
        call()
    err = info.value
    assert err.code() == code, (err.code(), err.details())
    msg = (err.details() or "").lower()
    for w in words:
        alternatives = w if isinstance(w, tuple) else (w,)
        assert any(a.lower() in msg for a in alternatives), f"{alternatives} not in {err.details()!r}"


# ---- TensorFlow Serving's PredictionService and ModelService --------------------------------------


def test_tfs_predict(server, channel, tfs):
    stub = tfs.prediction_service_pb2_grpc.PredictionServiceStub(channel)
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    for content in (True, False):
        r = stub.Predict(predict_request(tfs, "small", {"features": tensor_proto(tfs, x, content)}),
                         timeout=TIMEOUT)
        assert r.model_spec.name == "small" and r.model_spec.version.value == 2
        np.testing.assert_allclose(to_numpy(tfs, r.outputs["scores"]), su.small_ref(x, 2), rtol=1e-5, atol=1e-5)
    r = stub.Predict(predict_request(tfs, "small", {"features": tensor_proto(tfs, x)}, version=1,
                                     signature="serving_default"), timeout=TIMEOUT)
    assert r.model_spec.version.value == 1
    np.testing.assert_allclose(to_numpy(tfs, r.outputs["scores"]), su.small_ref(x, 1), rtol=1e-5, atol=1e-5)


def test_tfs_predict_several_inputs(server, channel, tfs):
    stub = tfs.prediction_service_pb2_grpc.PredictionServiceStub(channel)
    values = np.array([[1, 2], [3, 4]], np.float32)
    count = np.array([2, -1], np.int32)
    text = np.array([b"x", b"\x00\xff"], dtype=object)
    req = predict_request(tfs, "multi", {"values": tensor_proto(tfs, values), "count": tensor_proto(tfs, count, False),
                                         "text": tensor_proto(tfs, text)})
    req.output_filter.extend(["scaled", "greeting", "echo_bytes"])
    r = stub.Predict(req, timeout=TIMEOUT)
    assert set(r.outputs) == {"scaled", "greeting", "echo_bytes"}
    ref = su.multi_ref(values, count, list(text))
    np.testing.assert_allclose(to_numpy(tfs, r.outputs["scaled"]), ref["scaled"])
    assert list(to_numpy(tfs, r.outputs["greeting"])) == ref["greeting"]
    assert list(to_numpy(tfs, r.outputs["echo_bytes"])) == ref["echo_bytes"]


def test_tfs_get_model_metadata(server, channel, tfs):
    stub = tfs.prediction_service_pb2_grpc.PredictionServiceStub(channel)
    req = tfs.get_model_metadata_pb2.GetModelMetadataRequest()
    req.model_spec.name = "small"
    req.metadata_field.append("signature_def")
    r = stub.GetModelMetadata(req, timeout=TIMEOUT)
    assert r.model_spec.name == "small" and r.model_spec.version.value == 2
    sigs = tfs.get_model_metadata_pb2.SignatureDefMap()
    assert r.metadata["signature_def"].Unpack(sigs)
    sig = sigs.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sig.inputs["features"].dtype == tfs.types_pb2.DT_FLOAT
    assert [d.size for d in sig.inputs["features"].tensor_shape.dim] == [-1, 4]
    assert set(sig.outputs) == {"scores"}


def test_tfs_get_model_status(server, channel, tfs):
    stub = tfs.model_service_pb2_grpc.ModelServiceStub(channel)
    req = tfs.get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = "small"
    r = stub.GetModelStatus(req, timeout=TIMEOUT)
    states = {v.version: tfs.get_model_status_pb2.ModelVersionStatus.State.Name(v.state)
              for v in r.model_version_status}
    assert states == {1: "AVAILABLE", 2: "AVAILABLE"}
    req.model_spec.version.value = 1
    r = stub.GetModelStatus(req, timeout=TIMEOUT)
    assert [v.version for v in r.model_version_status] == [1]
    req.model_spec.name = "nosuch"
    assert_rpc_error(lambda: stub.GetModelStatus(req, timeout=TIMEOUT), grpc.StatusCode.NOT_FOUND, "nosuch")


def _examples(tfs, xs):
    out = []
    for x in xs:
        e = tfs.example_pb2.Example()
        e.features.feature["x"].float_list.value.extend(x)
        out.append(e)
    return out


def test_tfs_classify_and_regress(server, channel, tfs):
    stub = tfs.prediction_service_pb2_grpc.PredictionServiceStub(channel)
    xs = [[1.0, 2.0], [-0.5, 0.25]]
    req = tfs.classification_pb2.ClassificationRequest()
    req.model_spec.name = "examples"
    req.input.example_list.examples.extend(_examples(tfs, xs))
    r = stub.Classify(req, timeout=TIMEOUT)
    ref = su.classify_ref(xs)
    assert len(r.result.classifications) == 2
    for c, probs in zip(r.result.classifications, ref):
        assert [k.label for k in c.classes] == [n.decode() for n in su.CLASSES]
        np.testing.assert_allclose([k.score for k in c.classes], probs, rtol=1e-5, atol=1e-6)
    req = tfs.regression_pb2.RegressionRequest()
    req.model_spec.name = "examples"
    req.model_spec.signature_name = "regress_x"
    req.input.example_list.examples.extend(_examples(tfs, xs))
    r = stub.Regress(req, timeout=TIMEOUT)
    np.testing.assert_allclose([g.value for g in r.result.regressions], su.regress_ref(xs), rtol=1e-5, atol=1e-5)


def test_tfs_bad_requests(server, channel, tfs):
    stub = tfs.prediction_service_pb2_grpc.PredictionServiceStub(channel)
    x = np.ones((1, 4), np.float32)
    code = grpc.StatusCode

    def predict(model="small", inputs=None, **kw):
        if inputs is None:
            inputs = {"features": tensor_proto(tfs, x)}
        return lambda: stub.Predict(predict_request(tfs, model, inputs, **kw), timeout=TIMEOUT)
    assert_rpc_error(predict("nosuch"), code.NOT_FOUND, "nosuch")
    assert_rpc_error(predict(version=7), code.NOT_FOUND, "small", "7")
    assert_rpc_error(predict(signature="nosig"), code.NOT_FOUND, "nosig")
    assert_rpc_error(predict(inputs={"pixels": tensor_proto(tfs, x)}), code.INVALID_ARGUMENT, "pixels", "features")
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, x.astype(np.int32))}), code.INVALID_ARGUMENT,
                     "features", ("float", "fp32"))
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, np.ones((1, 3), np.float32))}),
                     code.INVALID_ARGUMENT, "features", "4")
    # tensor_content shorter than the declared shape; a huge declared shape.
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, x, shape=(2, 4))}), code.INVALID_ARGUMENT,
                     "features")
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, x, shape=(10**12, 4))}), code.INVALID_ARGUMENT,
                     "features")
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, x, content=False, shape=(10**12, 4))}),
                     code.INVALID_ARGUMENT, "features")
    assert_rpc_error(predict(inputs={}), code.INVALID_ARGUMENT, "features")
    big = np.zeros((300000, 4), np.float32)  # 4.8 MB > --max_request_bytes
    assert_rpc_error(predict(inputs={"features": tensor_proto(tfs, big)}), code.RESOURCE_EXHAUSTED)
    assert server.proc.poll() is None


# ---- KServe's GRPCInferenceService through tritonclient.grpc --------------------------------------


@pytest.fixture(scope="module")
def triton(server):
    import tritonclient.grpc as grpcclient
    c = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
    yield c
    c.close()


def test_v2_grpc_health_and_metadata(triton):
    assert triton.is_server_live() and triton.is_server_ready()
    assert triton.is_model_ready("small") and triton.is_model_ready("small", "1")
    meta = triton.get_server_metadata(as_json=True)
    assert meta["name"] and "binary_tensor_data" in meta.get("extensions", [])
    m = triton.get_model_metadata("small", as_json=True)
    assert m["name"] == "small" and sorted(m["versions"]) == ["1", "2"]
    assert m["inputs"] == [{"name": "features", "datatype": "FP32", "shape": ["-1", "4"]}]
    assert m["outputs"] == [{"name": "scores", "datatype": "FP32", "shape": ["-1", "3"]}]


def test_v2_grpc_infer(triton):
    import tritonclient.grpc as grpcclient
    x = np.random.default_rng(6).standard_normal((4, 4)).astype(np.float32)
    inp = grpcclient.InferInput("features", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    for version, ref_version in (("", 2), ("1", 1)):
        r = triton.infer("small", [inp], model_version=version, request_id="g1", client_timeout=TIMEOUT)
        np.testing.assert_allclose(r.as_numpy("scores"), su.small_ref(x, ref_version), rtol=1e-5, atol=1e-5)
        resp = r.get_response()
        assert resp.model_name == "small" and resp.model_version == str(ref_version) and resp.id == "g1"
    values = np.array([[1, 2]], np.float32)
    count = np.array([7], np.int32)
    text = np.array([b"\x01\x02"], dtype=object)
    inputs = []
    for name, arr, dt in (("values", values, "FP32"), ("count", count, "INT32"), ("text", text, "BYTES")):
        i = grpcclient.InferInput(name, list(arr.shape), dt)
        i.set_data_from_numpy(arr)
        inputs.append(i)
    r = triton.infer("multi", inputs, outputs=[grpcclient.InferRequestedOutput("doubled"),
                                               grpcclient.InferRequestedOutput("echo_bytes")],
                     client_timeout=TIMEOUT)
    assert r.as_numpy("doubled").tolist() == [14]
    assert list(r.as_numpy("echo_bytes")) == [b"\x01\x02"]
    assert r.as_numpy("scaled") is None


def test_v2_grpc_bad_requests(server, channel, triton):
    import tritonclient.grpc as grpcclient
    from tritonclient.grpc import service_pb2, service_pb2_grpc
    from tritonclient.utils import InferenceServerException

    def expect(fn, status, *words):
        with pytest.raises(InferenceServerException) as info:
            fn()
        assert info.value.status() == status, (info.value.status(), info.value.message())
        msg = info.value.message().lower()
        for w in words:
            alternatives = w if isinstance(w, tuple) else (w,)
            assert any(a.lower() in msg for a in alternatives), f"{alternatives} not in {info.value.message()!r}"

    x = np.ones((1, 4), np.float32)

    def infer(model="small", name="features", arr=x, dt="FP32", version=""):
        i = grpcclient.InferInput(name, list(arr.shape), dt)
        i.set_data_from_numpy(arr)
        return lambda: triton.infer(model, [i], model_version=version, client_timeout=TIMEOUT)
    expect(infer(model="nosuch"), "StatusCode.NOT_FOUND", "nosuch")
    expect(infer(version="9"), "StatusCode.NOT_FOUND", "small", "9")
    expect(infer(name="pixels"), "StatusCode.INVALID_ARGUMENT", "pixels", "features")
    expect(infer(arr=x.astype(np.int64), dt="INT64"), "StatusCode.INVALID_ARGUMENT", "features", ("fp32", "float"))
    expect(infer(arr=np.ones((1, 3), np.float32)), "StatusCode.INVALID_ARGUMENT", "features", "4")
    assert not triton.is_model_ready("nosuch")

    # raw_input_contents that disagree with the declared shape, by hand.
    stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)

    def raw(shape, content):
        req = service_pb2.ModelInferRequest(model_name="small")
        t = req.inputs.add()
        t.name, t.datatype = "features", "FP32"
        t.shape.extend(shape)
        req.raw_input_contents.append(content)
        return lambda: stub.ModelInfer(req, timeout=TIMEOUT)
    assert_rpc_error(raw([2, 4], x.tobytes()), grpc.StatusCode.INVALID_ARGUMENT, "features", ("32", "16"))
    assert_rpc_error(raw([10**12, 4], x.tobytes()), grpc.StatusCode.INVALID_ARGUMENT, "features")
    assert_rpc_error(raw([2**62, 2**62], x.tobytes()), grpc.StatusCode.INVALID_ARGUMENT, "features")
    req = service_pb2.ModelInferRequest(model_name="small")  # no raw contents, no data
    t = req.inputs.add()
    t.name, t.datatype = "features", "FP32"
    t.shape.extend([1, 4])
    assert_rpc_error(lambda: stub.ModelInfer(req, timeout=TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT, "features")
    assert server.proc.poll() is None
