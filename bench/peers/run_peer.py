"""Times the prepared cases (bench/.cache/cases.json) in one peer runtime and
prints one JSON line per case (also appended to --out).

  tensorflow: tf.compat.v1.Session on the frozen GraphDef (the same .pb file
              Plexus runs), called through Session.make_callable.
  onnxruntime: InferenceSession on the tf2onnx conversion, CPU provider.
  torch:      the tf2onnx conversion turned into a torch.fx GraphModule by
              onnx2torch, run eagerly under torch.inference_mode().

Variants: "default" runs each runtime as it comes; "noopt" turns its graph
rewriting off (TensorFlow: grappler and the L1 graph optimizer; ONNX Runtime:
ORT_DISABLE_ALL), so that every node of the graph runs as a kernel. Every
runtime gets BENCH_THREADS intra-op threads (default 2) and one inter-op
thread. BENCH_CASES (a regex on case ids) picks cases.
"""
import argparse
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

common.quiet_tensorflow()
import numpy as np  # noqa: E402


def tensorflow_runner(variant, threads):
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads,
                                      inter_op_parallelism_threads=1)
    if variant == "noopt":
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        config.graph_options.optimizer_options.opt_level = tf.compat.v1.OptimizerOptions.L0
    info = {"version": tf.__version__,
            "threads": "intra_op=%d inter_op=1" % threads,
            "how": "tf.compat.v1.Session on the frozen GraphDef"
                   + (" (grappler off, optimizer L0)" if variant == "noopt" else "")}

    def make(case):
        gd = tf.compat.v1.GraphDef()
        with open(case["graph"], "rb") as f:
            gd.ParseFromString(f.read())
        graph = tf.Graph()
        with graph.as_default():
            tf.compat.v1.import_graph_def(gd, name="")
        sess = tf.compat.v1.Session(graph=graph, config=config)
        fn = sess.make_callable(graph.get_tensor_by_name(case["fetch"]),
                                feed_list=[graph.get_tensor_by_name(case["input"])])
        x = np.load(case["input_file"])
        return (lambda: fn(x)), sess.close

    return info, make


def onnxruntime_runner(variant, threads):
    import onnxruntime as ort

    info = {"version": ort.__version__,
            "threads": "intra_op=%d inter_op=1 sequential" % threads,
            "how": "InferenceSession on the tf2onnx model, CPUExecutionProvider"
                   + (", ORT_DISABLE_ALL" if variant == "noopt" else ", ORT_ENABLE_ALL")}

    def make(case):
        if not case.get("onnx"):
            raise RuntimeError("no ONNX model: " + str(case.get("onnx_error")))
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                                       if variant == "noopt"
                                       else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        sess = ort.InferenceSession(case["onnx"], so, providers=["CPUExecutionProvider"])
        in_name = sess.get_inputs()[0].name
        out_name = sess.get_outputs()[0].name
        x = np.load(case["input_file"])
        return (lambda: sess.run([out_name], {in_name: x})[0]), None

    return info, make


def explicit_same_padding(onnx_path):
    """onnx2torch cannot convert auto_pad=SAME_UPPER/SAME_LOWER (hey_snips'
    MaxPool). With stride 1 the padding does not depend on the input size,
    so such nodes get the equivalent explicit pads. Returns the ONNX model
    and how many nodes were rewritten."""
    import onnx

    model = onnx.load(onnx_path)
    inits = {i.name: i for i in model.graph.initializer}
    rewritten = 0
    for node in model.graph.node:
        auto = [a for a in node.attribute if a.name == "auto_pad"]
        if not auto or auto[0].s not in (b"SAME_UPPER", b"SAME_LOWER"):
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if "kernel_shape" in attrs:
            kernel = list(attrs["kernel_shape"])
        elif node.op_type == "Conv" and node.input[1] in inits:
            kernel = list(inits[node.input[1]].dims[2:])
        else:
            continue
        strides = list(attrs.get("strides", [1] * len(kernel)))
        dilations = list(attrs.get("dilations", [1] * len(kernel)))
        if any(s != 1 for s in strides):
            continue  # the padding would depend on the input size
        total = [(k - 1) * d for k, d in zip(kernel, dilations)]
        upper = auto[0].s == b"SAME_UPPER"
        begin = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - b for t, b in zip(total, begin)]
        node.attribute.remove(auto[0])
        node.attribute.append(onnx.helper.make_attribute("pads", begin + end))
        rewritten += 1
    return model, rewritten


def torch_runner(variant, threads):
    import torch
    from onnx2torch import convert

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    info = {"version": torch.__version__,
            "threads": "set_num_threads(%d) set_num_interop_threads(1)" % threads,
            "how": "onnx2torch GraphModule from the tf2onnx model, eager, inference_mode"}

    def make(case):
        if not case.get("onnx"):
            raise RuntimeError("no ONNX model: " + str(case.get("onnx_error")))
        model, rewritten = explicit_same_padding(case["onnx"])
        module = convert(model).eval()
        x = torch.from_numpy(np.load(case["input_file"]))

        def run():
            with torch.inference_mode():
                return module(x)

        return run, None

    return info, make


RUNNERS = {"tensorflow": tensorflow_runner, "onnxruntime": onnxruntime_runner,
           "torch": torch_runner}


def to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    if isinstance(value, (list, tuple)):
        value = value[0]
    return np.asarray(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime", choices=sorted(RUNNERS), required=True)
    parser.add_argument("--variant", choices=["default", "noopt"], default="default")
    parser.add_argument("--group", choices=["all", "model", "overhead", "keras"], default="all")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="timed seconds per case (after warmup)")
    parser.add_argument("--min-iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", required=True, help="JSON-lines file to append to")
    args = parser.parse_args()

    cases = [c for c in common.load_cases() if common.case_selected(c, args.group)]
    if not cases:  # nothing to time (BENCH_CASES): do not load the runtime
        return
    threads = common.threads()
    try:
        info, make = RUNNERS[args.runtime](args.variant, threads)
    except Exception as e:  # a runtime that cannot load is reported, not fatal
        for case in cases:
            common.emit({"runtime": args.runtime, "variant": args.variant,
                         "label": case["id"], "error": "cannot load: %s" % e}, args.out)
        return
    for case in cases:
        record = {"runtime": args.runtime, "variant": args.variant, "label": case["id"],
                  "batch": case["batch"]}
        record.update(info)
        try:
            run, close = make(case)
            out = to_numpy(run())
            name = args.runtime + ("" if args.variant == "default" else "_" + args.variant)
            np.save(common.output_path(name, case["id"]), out)
            record.update(common.time_calls(run, args.seconds, args.min_iters,
                                            warmup=args.warmup))
            if close:
                close()
        except Exception as e:
            record["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:300]
                                          if str(e).strip() else "")
            traceback.print_exc(file=sys.stderr)
        common.emit(record, args.out)


if __name__ == "__main__":
    main()
