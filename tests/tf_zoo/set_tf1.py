"""The tf1 set: TF1-style graphs built with tf.compat.v1 (placeholders, raw
ops, tf.compat.v1.cond and while_loop with TF1 control flow, that is
Switch/Merge/Enter/Exit, and variables initialized in a Session). Each is
written as a frozen GraphDef (graph_util.convert_variables_to_constants,
recorded as frozen_lowered) and a TF1 SavedModel from SavedModelBuilder
(signature serving_default). Placeholders are named after the signature's
input keys and outputs are tf.identity nodes named outputs/<output key>.
"""
import os

import numpy as np
import tensorflow as tf

from export import SEED, Case, Tf1Built, short_error
from functions_common import Arg, rng_for

CASES = []
V1 = tf.compat.v1
TABLES_INIT = "init_all_tables"


def tf1(name, description, args, tolerance=None):
    """Decorator: make(rng, **placeholders) builds the graph and returns a
    dict of output tensors."""
    def register(make):
        def build(folder: str) -> Tf1Built:
            return build_tf1(name, args, make, folder)
        CASES.append(Case(name=name, kind="tf1", build=build, description=description, tolerance=tolerance))
        return make
    return register


def build_tf1(name, args, make, folder) -> Tf1Built:
    rng = rng_for(name)
    exports, errors, notes = {}, {}, []
    V1.disable_control_flow_v2()
    try:
        graph = tf.Graph()
        with graph.as_default():
            V1.set_random_seed(SEED)
            placeholders = {a.name: V1.placeholder(a.dtype, a.shape, name=a.name) for a in args}
            outputs = make(rng, **placeholders)
            outputs = {k: tf.identity(v, name=f"outputs/{k}") for k, v in outputs.items()}
            variables_init = V1.global_variables_initializer()
            tables_init = V1.tables_initializer(name=TABLES_INIT)
            has_tables = bool(V1.get_collection(V1.GraphKeys.TABLE_INITIALIZERS))
            with V1.Session(graph=graph) as session:
                session.run([variables_init, tables_init])
                try:
                    keep = [t.op.name for t in outputs.values()] + ([TABLES_INIT] if has_tables else [])
                    frozen = V1.graph_util.convert_variables_to_constants(session, graph.as_graph_def(), keep)
                    with open(os.path.join(folder, "frozen_lowered.pb"), "wb") as f:
                        f.write(frozen.SerializeToString())
                    exports["frozen_lowered"] = "frozen_lowered.pb"
                    if has_tables:
                        notes.append(f"the frozen graph holds lookup tables: run its node {TABLES_INIT} once first")
                except Exception as exc:  # noqa: BLE001
                    errors["frozen_lowered"] = short_error(exc)
                try:
                    builder = V1.saved_model.Builder(os.path.join(folder, "saved_model"))
                    signature = V1.saved_model.predict_signature_def(inputs=placeholders, outputs=outputs)
                    builder.add_meta_graph_and_variables(
                        session, [tf.saved_model.SERVING],
                        signature_def_map={"serving_default": signature},
                        main_op=tables_init if has_tables else None)
                    builder.save()
                    exports["saved_model"] = "saved_model"
                except Exception as exc:  # noqa: BLE001
                    errors["saved_model"] = short_error(exc)
    finally:
        V1.enable_control_flow_v2()
    return Tf1Built(inputs={a.name: a.sample(rng) for a in args},
                    input_tensors={a.name: f"{a.name}:0" for a in args},
                    output_tensors={k: outputs[k].name for k in sorted(outputs)},
                    exports=exports, errors=errors, notes=notes)


@tf1("tf1_dense_variables", "two dense layers from V1.get_variable weights, relu and softmax",
     [Arg("x", (None, 4), draw=(2, 4))])
def _(rng, x):
    w1 = V1.get_variable("w1", initializer=rng.normal(size=(4, 5)).astype("float32"))
    b1 = V1.get_variable("b1", initializer=rng.normal(size=(5,)).astype("float32"))
    w2 = V1.get_variable("w2", initializer=rng.normal(size=(5, 3)).astype("float32"))
    hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
    logits = tf.matmul(hidden, w2)
    return {"logits": logits, "probabilities": tf.nn.softmax(logits)}


@tf1("tf1_raw_ops", "raw ops: Conv2D, FusedBatchNormV3 (inference), Relu6, MaxPool, Reshape, MatMul, BiasAdd",
     [Arg("image", (1, 6, 6, 2))], tolerance={"rtol": 1e-4, "atol": 1e-4})
def _(rng, image):
    raw = tf.raw_ops
    f = lambda *s: tf.constant(rng.normal(size=s).astype("float32"))  # noqa: E731
    conv = raw.Conv2D(input=image, filter=f(3, 3, 2, 4), strides=[1, 1, 1, 1], padding="SAME")
    bn = raw.FusedBatchNormV3(x=conv, scale=f(4), offset=f(4), mean=f(4),
                              variance=tf.constant(rng.uniform(0.5, 2, 4).astype("float32")),
                              epsilon=1e-3, is_training=False)[0]
    act = raw.Relu6(features=bn)
    pool = raw.MaxPool(input=act, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    flat = raw.Reshape(tensor=pool, shape=[1, -1])
    dense = raw.BiasAdd(value=raw.MatMul(a=flat, b=f(36, 3)), bias=f(3))
    return {"features": act, "logits": dense}


@tf1("tf1_cond", "tf.compat.v1.cond (Switch/Merge) on a placeholder flag and on a reduction",
     [Arg("x", (3,)), Arg("flag", (), "bool", values=False)])
def _(rng, x, flag):
    by_flag = V1.cond(flag, lambda: x * 2.0 + 1.0, lambda: tf.square(x))
    by_sum = V1.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_max(x), lambda: tf.reduce_min(x))
    return {"by_flag": by_flag, "by_sum": by_sum}


@tf1("tf1_while", "tf.compat.v1.while_loop (Enter/Exit/NextIteration): Newton square root, data-dependent count",
     [Arg("x", (4,), low=1.0, high=9.0), Arg("steps", (), "int32", values=6)])
def _(rng, x, steps):
    i, root = V1.while_loop(lambda i, y: i < steps, lambda i, y: (i + 1, 0.5 * (y + x / y)),
                            (tf.constant(0), tf.ones_like(x)))
    return {"sqrt": root, "iterations": i}


@tf1("tf1_while_tensor_array", "tf.compat.v1.while_loop writing a TensorArray (TF1 TensorArrayV3 ops), stacked",
     [Arg("x", (None, 3), draw=(4, 3))])
def _(rng, x):
    n = tf.shape(x)[0]
    array = tf.TensorArray(tf.float32, size=n)

    def body(i, total, out):
        total = total + x[i]
        return i + 1, total, out.write(i, total * tf.cast(i + 1, tf.float32))
    _, total, array = V1.while_loop(lambda i, *_: i < n, body, (tf.constant(0), tf.zeros([3]), array))
    return {"rows": array.stack(), "total": total}


@tf1("tf1_lookup_strings", "a V1 HashTable from strings to ids (initialized by init_all_tables), "
     "string ops on a placeholder", [Arg("words", (None,), "string", values=[b"cat", b"Dog", b"bird", b"fish"])])
def _(rng, words):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(["cat", "dog", "fish"]), tf.constant([1, 2, 3], tf.int64)),
        default_value=-1)
    lower = tf.strings.lower(words)
    return {"ids": table.lookup(lower), "lower": lower, "hash": tf.strings.to_hash_bucket_fast(words, 16)}


@tf1("tf1_image_resize", "V1 image resizes: resize_bilinear with align_corners and half_pixel_centers, "
     "resize_nearest_neighbor, crop_and_resize", [Arg("image", (1, 5, 6, 2), low=0, high=1)],
     tolerance={"rtol": 1e-4, "atol": 1e-4})
def _(rng, image):
    return {"bilinear_align": V1.image.resize_bilinear(image, [8, 9], align_corners=True),
            "bilinear_half_pixel": V1.image.resize_bilinear(image, [8, 9], half_pixel_centers=True),
            "nearest": V1.image.resize_nearest_neighbor(image, [3, 4]),
            "crop_and_resize": tf.image.crop_and_resize(image, [[0.1, 0.2, 0.8, 0.9]], [0], [3, 3])}


@tf1("tf1_math_gather", "segment_sum, gather, top_k, cumsum, argmax and where on placeholders",
     [Arg("data", (6, 3)), Arg("ids", (6,), "int32", values=[0, 0, 1, 1, 1, 2])])
def _(rng, data, ids):
    top = tf.math.top_k(data[:, 0], k=3)
    return {"segment_sum": tf.math.segment_sum(data, ids), "gathered": tf.gather(data, top.indices),
            "top_values": top.values, "cumsum": tf.cumsum(data, axis=0), "argmax": tf.argmax(data, axis=1),
            "where": tf.where(data > 0, data, tf.zeros_like(data))}


def cases():
    return list(CASES)
