"""Set-up for the benchmarks: builds every graph the benchmarks run, converts
each to ONNX with tf2onnx, writes the input tensors, and lists the cases in
bench/.cache/cases.json. Everything lands under bench/.cache/ and is reused
on the next run (delete the folder, or pass --force, to rebuild it).

Graphs:
  - mlp_fc_layers: the real frozen MLP (tests/data/tf_graphs/mlp_fc_layers).
  - kws_cnn_s, kws_ds_cnn_s: the real frozen keyword-spotting CNNs
    (tests/data/tf_graphs/kws_cnn). Their audio frontend (DecodeWav,
    AudioSpectrogram, Mfcc) takes one WAV file and cannot be batched, so the
    benchmark graph is the network body: the Mfcc node is replaced by a float
    Placeholder of shape [batch, 49, 10] with the same name, and everything
    not needed for labels_softmax is dropped. The weights and every other
    node are the original ones.
  - hey_snips: the real frozen wake-word net (tests/data/tf_graphs/hey_snips_v3);
    its input is [T, 40] frames, so its "batch" is T (40, as tract benchmarks
    it, and 400).
  - chain_N, fan_N (executor overhead): made here with TensorFlow. chain_N is
    N tiny ops in sequence on a float[16] (AddV2, Mul, Neg, Mul repeating,
    each with its own scalar constant); fan_N is N independent tiny ops
    (AddV2 / Mul with distinct scalar constants) on the same float[16] input,
    joined by one ConcatV2.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import keras_models  # noqa: E402

common.quiet_tensorflow()
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OPSET = 17
OVERHEAD_SIZES = (100, 1000)


def read_graph_def(path):
    gd = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        gd.ParseFromString(f.read())
    return gd


def write_graph_def(gd, path):
    with open(path, "wb") as f:
        f.write(gd.SerializeToString())


def kws_body(src, dst):
    """The CNN without its audio frontend: Mfcc becomes a Placeholder."""
    gd = read_graph_def(src)
    for node in gd.node:
        if node.name == "Mfcc":
            node.Clear()
            node.name = "Mfcc"
            node.op = "Placeholder"
            node.attr["dtype"].type = tf.float32.as_datatype_enum
            node.attr["shape"].shape.CopyFrom(tf.TensorShape([None, 49, 10]).as_proto())
    body = tf.compat.v1.graph_util.extract_sub_graph(gd, ["labels_softmax"])
    write_graph_def(body, dst)


def chain_graph(n, dst):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [16], name="x")
        h = x
        for i in range(n):
            kind = i % 4
            if kind == 0:
                h = tf.add(h, tf.constant(0.5 + 1e-4 * i, tf.float32))
            elif kind == 2:
                h = tf.negative(h)
            else:
                h = tf.multiply(h, tf.constant(0.5 + 1e-5 * i, tf.float32))
        tf.identity(h, name="y")
    write_graph_def(g.as_graph_def(), dst)


def fan_graph(n, dst):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [16], name="x")
        branches = []
        for i in range(n):
            if i % 2 == 0:
                branches.append(tf.add(x, tf.constant(0.5 + 1e-4 * i, tf.float32)))
            else:
                branches.append(tf.multiply(x, tf.constant(0.5 + 1e-5 * i, tf.float32)))
        tf.concat(branches, axis=0, name="y")
    write_graph_def(g.as_graph_def(), dst)


def to_onnx(pb, inputs, outputs, dst, shape_override=None):
    import tf2onnx

    gd = read_graph_def(pb)
    tf2onnx.convert.from_graph_def(gd, input_names=inputs, output_names=outputs,
                                   opset=OPSET, shape_override=shape_override,
                                   output_path=dst)


def onnx_summary(path):
    import onnx

    model = onnx.load(path)
    ops = {}
    for node in model.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    return {"onnx_nodes": len(model.graph.node), "onnx_ops": ops}


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild everything")
    args = parser.parse_args()

    cache = common.CACHE_DIR
    # The cache is only reused by the same prepare.py with the same
    # TensorFlow and tf2onnx; anything else rebuilds it.
    import tf2onnx

    stamp = "%s %s tf %s tf2onnx %s" % (
        sha256(os.path.abspath(__file__)), sha256(os.path.abspath(keras_models.__file__)),
        tf.__version__, tf2onnx.__version__)
    stamp_file = os.path.join(cache, "stamp")
    old_stamp = open(stamp_file).read() if os.path.exists(stamp_file) else None
    if args.force or old_stamp != stamp:
        for sub in ("models", "onnx", "inputs"):
            shutil.rmtree(os.path.join(cache, sub), ignore_errors=True)
    os.makedirs(cache, exist_ok=True)
    with open(stamp_file, "w") as f:
        f.write(stamp)
    for sub in ("models", "onnx", "inputs"):
        os.makedirs(os.path.join(cache, sub), exist_ok=True)

    def model_path(name):
        return os.path.join(cache, "models", name + ".pb")

    # (model, graph file, input tensor, fetch tensor, [(batch, input shape)], group, ops)
    models = [
        ("mlp_fc_layers", os.path.join(common.DATA_DIR, "mlp_fc_layers", "frozen.pb"),
         "X:0", "output:0", [(1, [1, 784]), (64, [64, 784])], "model", None),
    ]
    for name, src in (("kws_cnn_s", "CNN_S.pb"), ("kws_ds_cnn_s", "DS_CNN_S.pb")):
        dst = model_path(name)
        if not os.path.exists(dst):
            kws_body(os.path.join(common.DATA_DIR, "kws_cnn", src), dst)
        models.append((name, dst, "Mfcc:0", "labels_softmax:0",
                       [(1, [1, 49, 10]), (64, [64, 49, 10])], "model", None))
    models.append(("hey_snips", os.path.join(common.DATA_DIR, "hey_snips_v3", "hey_snips_3.pb"),
                   "inputs:0", "logits:0", [(40, [40, 40]), (400, [400, 40])], "model", None))
    for name in keras_models.MODELS:
        dst = model_path(name)
        names_file = dst + ".io"
        if not (os.path.exists(dst) and os.path.exists(names_file)):
            print("building and freezing %s (Keras, random weights)" % name, flush=True)
            with open(names_file, "w") as f:
                f.write(" ".join(keras_models.freeze(name, dst)))
        inp, fetch = open(names_file).read().split()
        models.append((name, dst, inp, fetch,
                       [(b, keras_models.input_shape(name, b)) for b in (1, 8)], "keras", None))
    for n in OVERHEAD_SIZES:
        for kind, make in (("chain", chain_graph), ("fan", fan_graph)):
            name = "%s_%d" % (kind, n)
            dst = model_path(name)
            if not os.path.exists(dst):
                make(n, dst)
            models.append((name, dst, "x:0", "y:0", [(1, [16])], "overhead", n))

    rng = np.random.default_rng(20240601)
    cases = []
    problems = []
    for name, graph, inp, fetch, sizes, group, ops in models:
        onnx_file = os.path.join(cache, "onnx", name + ".onnx")
        onnx_error = None
        if not os.path.exists(onnx_file):
            print("converting %s to ONNX (tf2onnx, opset %d)" % (name, OPSET), flush=True)
            try:
                # hey_snips' Placeholder has no shape: tell tf2onnx it is [T, 40].
                override = {inp: [None, 40]} if name == "hey_snips" else None
                to_onnx(graph, [inp], [fetch], onnx_file, override)
            except Exception as e:  # the report says which model did not convert
                onnx_error = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
                problems.append("tf2onnx failed on %s: %s" % (name, onnx_error))
                if os.path.exists(onnx_file):
                    os.remove(onnx_file)
        summary = onnx_summary(onnx_file) if os.path.exists(onnx_file) else {}
        tf_nodes = len(read_graph_def(graph).node)
        for batch, shape in sizes:
            case_id = "%s_b%d" % (name, batch)
            input_file = os.path.join(cache, "inputs", case_id + ".npy")
            if not os.path.exists(input_file):
                np.save(input_file, rng.standard_normal(shape).astype(np.float32))
            case = {
                "id": case_id, "model": name, "group": group, "batch": batch,
                "graph": graph, "graph_sha256": sha256(graph), "tf_nodes": tf_nodes,
                "onnx": onnx_file if os.path.exists(onnx_file) else None,
                "onnx_error": onnx_error, "input": inp, "fetch": fetch,
                "shape": shape, "input_file": input_file,
            }
            if ops is not None:
                case["ops"] = ops
            case.update(summary)
            cases.append(case)

    with open(common.CASES_FILE, "w") as f:
        json.dump(cases, f, indent=1)
    print("prepared %d cases in %s" % (len(cases), common.CASES_FILE))
    for p in problems:
        print("PROBLEM: " + p)


if __name__ == "__main__":
    main()
