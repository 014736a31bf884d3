"""Graphs built through the C API (c_api_build.h) export GraphDef bytes that
TensorFlow imports and runs to the same numbers as Plexus.

The C library is driven through ctypes, as any language with a C FFI would.
It is found in $PLEXUS_BUILD_DIR/lib (CI sets it), else the repo's build/lib;
the test is skipped when neither has it (a wheel-only install).

The C part and TensorFlow run in processes of their own: TensorFlow carries
its own protobuf, and a process holding both it and the system protobuf
that libplexus_c uses may bind one's calls to the other's code.
"""
import ctypes
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLEXUS_BUILD_DIR") or HERE.parent.parent / "build")
LIB = BUILD / "lib" / "libplexus_c.so"
CPU_PLUGIN = BUILD / "lib" / "plexus-plugins" / "libplexus_plugin_cpu.so"

pytestmark = pytest.mark.skipif(not LIB.exists() or not CPU_PLUGIN.exists(),
                                reason=f"{LIB} or the cpu plugin is not built")

PX_DTYPE_FLOAT = 1


class Output(ctypes.Structure):
    _fields_ = [("operation", ctypes.c_void_p), ("index", ctypes.c_int)]


class OperationSpec(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("op_type", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("inputs", ctypes.POINTER(Output)), ("num_inputs", ctypes.c_size_t),
                ("control_inputs", ctypes.POINTER(ctypes.c_void_p)), ("num_control_inputs", ctypes.c_size_t),
                ("attrs", ctypes.c_void_p), ("device", ctypes.c_char_p)]


class RuntimeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("discover_plugins", ctypes.c_int),
                ("synchronous_debug", ctypes.c_int)]


class CApi:
    """The few C functions the test calls, with their types."""

    def __init__(self):
        lib = ctypes.CDLL(str(LIB))
        vp, sz, i64p = ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64)
        sigs = {
            "px_status_create": ([], vp), "px_status_destroy": ([vp], None),
            "px_status_message": ([vp], ctypes.c_char_p),
            "px_runtime_create": ([ctypes.POINTER(RuntimeOptions), ctypes.POINTER(vp), vp], ctypes.c_int),
            "px_runtime_load_plugin": ([vp, ctypes.c_char_p, vp], ctypes.c_int),
            "px_runtime_destroy": ([vp], None),
            "px_graph_create": ([ctypes.POINTER(vp), vp], ctypes.c_int),
            "px_graph_destroy": ([vp], None),
            "px_graph_add_operation": ([vp, ctypes.POINTER(OperationSpec), ctypes.POINTER(vp), vp], ctypes.c_int),
            "px_graph_to_graphdef": ([vp, ctypes.POINTER(vp), vp], ctypes.c_int),
            "px_buffer_data": ([vp], vp), "px_buffer_size": ([vp], sz), "px_buffer_destroy": ([vp], None),
            "px_attrs_create": ([ctypes.POINTER(vp), vp], ctypes.c_int), "px_attrs_destroy": ([vp], None),
            "px_attrs_set_type": ([vp, ctypes.c_char_p, ctypes.c_int, vp], ctypes.c_int),
            "px_attrs_set_shape": ([vp, ctypes.c_char_p, i64p, ctypes.c_int, vp], ctypes.c_int),
            "px_attrs_set_tensor": ([vp, ctypes.c_char_p, vp, vp], ctypes.c_int),
            "px_attrs_set_bool": ([vp, ctypes.c_char_p, ctypes.c_int, vp], ctypes.c_int),
            "px_attrs_set_int_list": ([vp, ctypes.c_char_p, i64p, sz, vp], ctypes.c_int),
            "px_attrs_set_string": ([vp, ctypes.c_char_p, ctypes.c_char_p, sz, vp], ctypes.c_int),
            "px_tensor_create_from_data": ([ctypes.c_int, i64p, ctypes.c_int, vp, sz, ctypes.POINTER(vp), vp],
                                           ctypes.c_int),
            "px_tensor_destroy": ([vp], None), "px_tensor_data": ([vp], vp),
            "px_tensor_num_elements": ([vp], ctypes.c_int64),
            "px_session_create": ([vp, vp, ctypes.c_char_p, ctypes.POINTER(vp), vp], ctypes.c_int),
            "px_session_destroy": ([vp], None),
            "px_session_run": ([vp, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(vp), sz,
                                ctypes.POINTER(ctypes.c_char_p), sz, ctypes.POINTER(ctypes.c_char_p), sz,
                                ctypes.POINTER(vp), vp], ctypes.c_int),
        }
        for name, (args, res) in sigs.items():
            f = getattr(lib, name)
            f.argtypes, f.restype = args, res
        self.lib = lib
        self.status = lib.px_status_create()

    def __getattr__(self, name):
        return getattr(self.lib, name)

    def check(self, code):
        if code != 0:
            raise RuntimeError(f"code {code}: {self.lib.px_status_message(self.status).decode()}")


def dims_array(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape)


def make_tensor(api, array):
    array = np.ascontiguousarray(array, dtype=np.float32)
    out = ctypes.c_void_p()
    api.check(api.px_tensor_create_from_data(PX_DTYPE_FLOAT, dims_array(array.shape), array.ndim,
                                             array.ctypes.data, array.nbytes, ctypes.byref(out), api.status))
    return out


def add(api, graph, op_type, name, inputs=(), attrs=None):
    spec = OperationSpec()
    spec.struct_size = ctypes.sizeof(OperationSpec)
    spec.op_type, spec.name = op_type.encode(), name.encode()
    arr = (Output * max(len(inputs), 1))(*[Output(op, k) for op, k in inputs])
    spec.inputs, spec.num_inputs = arr, len(inputs)
    spec.attrs = attrs
    out = ctypes.c_void_p()
    api.check(api.px_graph_add_operation(graph, ctypes.byref(spec), ctypes.byref(out), api.status))
    return out.value


def new_attrs(api):
    a = ctypes.c_void_p()
    api.check(api.px_attrs_create(ctypes.byref(a), api.status))
    return a


def build_and_run(out_dir):
    """Builds the graph through the C API, writes graph.pb, x.npy and the
    result Plexus computes (plexus.npy) into out_dir."""
    out_dir = pathlib.Path(out_dir)
    api = CApi()
    rng = np.random.default_rng(7)
    x_value = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
    w_value = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    b_value = rng.standard_normal((4,)).astype(np.float32)

    graph = ctypes.c_void_p()
    api.check(api.px_graph_create(ctypes.byref(graph), api.status))
    a = new_attrs(api)
    api.check(api.px_attrs_set_type(a, b"dtype", PX_DTYPE_FLOAT, api.status))
    api.check(api.px_attrs_set_shape(a, b"shape", dims_array([-1, 8, 8, 3]), 4, api.status))
    x = add(api, graph, "Placeholder", "x", attrs=a)
    api.px_attrs_destroy(a)
    consts = {}
    for name, value in (("w", w_value), ("b", b_value)):
        t = make_tensor(api, value)
        a = new_attrs(api)
        api.check(api.px_attrs_set_tensor(a, b"value", t, api.status))
        api.check(api.px_attrs_set_type(a, b"dtype", PX_DTYPE_FLOAT, api.status))
        consts[name] = add(api, graph, "Const", name, attrs=a)
        api.px_attrs_destroy(a)
        api.px_tensor_destroy(t)
    a = new_attrs(api)
    strides = (ctypes.c_int64 * 4)(1, 1, 1, 1)
    api.check(api.px_attrs_set_int_list(a, b"strides", strides, 4, api.status))
    api.check(api.px_attrs_set_string(a, b"padding", b"SAME", 4, api.status))
    conv = add(api, graph, "Conv2D", "conv", [(x, 0), (consts["w"], 0)], a)
    api.px_attrs_destroy(a)
    biased = add(api, graph, "BiasAdd", "biased", [(conv, 0), (consts["b"], 0)])
    relu = add(api, graph, "Relu", "relu", [(biased, 0)])
    add(api, graph, "Mean", "y", [(relu, 0), (add_axes(api, graph), 0)])

    buffer = ctypes.c_void_p()
    api.check(api.px_graph_to_graphdef(graph, ctypes.byref(buffer), api.status))
    (out_dir / "graph.pb").write_bytes(ctypes.string_at(api.px_buffer_data(buffer), api.px_buffer_size(buffer)))
    api.px_buffer_destroy(buffer)
    np.save(out_dir / "x.npy", x_value)

    runtime = ctypes.c_void_p()
    options = RuntimeOptions(ctypes.sizeof(RuntimeOptions), 0, 0)
    api.check(api.px_runtime_create(ctypes.byref(options), ctypes.byref(runtime), api.status))
    api.check(api.px_runtime_load_plugin(runtime, str(CPU_PLUGIN).encode(), api.status))
    session = ctypes.c_void_p()
    api.check(api.px_session_create(runtime, graph, b"CPU:0", ctypes.byref(session), api.status))
    xt = make_tensor(api, x_value)
    out = ctypes.c_void_p()
    feed_names = (ctypes.c_char_p * 1)(b"x")
    feeds = (ctypes.c_void_p * 1)(xt.value)
    fetch_names = (ctypes.c_char_p * 1)(b"y")
    api.check(api.px_session_run(session, feed_names, feeds, 1, fetch_names, 1, None, 0, ctypes.byref(out),
                                 api.status))
    n = api.px_tensor_num_elements(out)
    got = np.ctypeslib.as_array(ctypes.cast(api.px_tensor_data(out), ctypes.POINTER(ctypes.c_float)), (n,)).copy()
    np.save(out_dir / "plexus.npy", got)
    api.px_tensor_destroy(out)
    api.px_tensor_destroy(xt)
    api.px_session_destroy(session)
    api.px_runtime_destroy(runtime)
    api.px_graph_destroy(graph)
    api.px_status_destroy(api.status)


TF_RUN = """
import sys, numpy as np, tensorflow as tf
d = sys.argv[1]
graph_def = tf.compat.v1.GraphDef()
graph_def.ParseFromString(open(d + "/graph.pb", "rb").read())
with tf.Graph().as_default() as g:
    tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=g) as sess:
        np.save(d + "/tf.npy", sess.run("y:0", feed_dict={"x:0": np.load(d + "/x.npy")}))
"""


def test_built_graph_runs_in_tensorflow_like_in_plexus(tmp_path):
    pytest.importorskip("tensorflow")
    subprocess.run([sys.executable, __file__, str(tmp_path)], check=True, timeout=300)
    subprocess.run([sys.executable, "-c", TF_RUN, str(tmp_path)], check=True, timeout=300)
    want = np.load(tmp_path / "tf.npy")
    got = np.load(tmp_path / "plexus.npy")
    assert want.shape == (4,)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def add_axes(api, graph):
    """A Const [0, 1, 2] of int32 (the axes Mean reduces), made from bytes."""
    axes = np.array([0, 1, 2], dtype=np.int32)
    t = ctypes.c_void_p()
    api.check(api.px_tensor_create_from_data(3, dims_array([3]), 1, axes.ctypes.data, axes.nbytes,
                                             ctypes.byref(t), api.status))
    a = new_attrs(api)
    api.check(api.px_attrs_set_tensor(a, b"value", t, api.status))
    api.check(api.px_attrs_set_type(a, b"dtype", 3, api.status))
    op = add(api, graph, "Const", "axes", attrs=a)
    api.px_attrs_destroy(a)
    api.px_tensor_destroy(t)
    return op


if __name__ == "__main__":
    build_and_run(sys.argv[1])
