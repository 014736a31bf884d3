"""The cases of plexus_cuda_bench in PyTorch on the GPU, one JSON line each.

    python3 bench/cuda/torch_cuda_bench.py --weights DIR [--data-dir tests/data/tf_graphs]
        [--cases bandwidth,matmul,reduce,models] [--seconds 0.25] [--compile-budget 60]

Keys ("key") are those of plexus_cuda_bench, so bench/cuda/make_table.py can
set the two side by side. Inputs are made on the GPU once; each timed call is
the operation plus torch.cuda.synchronize(), timed on the host with
perf_counter, like one Session::Run of Plexus (which returns after the device
work has finished). Warm-up calls first, then enough calls to fill about
--seconds (at least 5); the median and 10th/90th percentiles are reported.

The models (mlp_fc_layers, the kws CNN_S and DS_CNN_S bodies) are written
here as ordinary torch modules (NCHW) holding the frozen graphs' own weights,
which `plexus_cuda_bench --export-weights DIR` writes as .npy files. Each runs
in eager mode ("side": "torch") and through torch.compile with the default
mode and static shapes ("side": "torch_compile"; compile time is reported
apart, and once --compile-budget seconds of compiling are spent the remaining
compiles are skipped); a compile that fails is reported and the rest
goes on. Before timing, each model is checked against TensorFlow's recorded
output for the reference input (ref_max_abs_diff, and ref_rel_diff: that
divided by the largest reference magnitude).

Float32 runs without TF32 unless the key says tf32: matmul and cuDNN TF32 are
switched off, as Plexus computes float32 in full precision by default.

--cpu-check builds the models on the CPU and checks them against the
references only (for machines without a GPU). Without a GPU and without
--cpu-check the script prints a "skip" line and exits with 0.
"""
import argparse
import ast
import json
import os
import statistics
import sys
import time


def emit(record):
    print(json.dumps(record), flush=True)


# ---------------------------------------------------------------------------
# .npy without numpy (the GPU machine may have torch only).
# ---------------------------------------------------------------------------

def load_npy(path, torch):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        header_len = int.from_bytes(data[8:10], "little")
        start = 10
    else:
        header_len = int.from_bytes(data[8:12], "little")
        start = 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError("%s: want little-endian float32 in C order, got %s" % (path, header))
    shape = tuple(header["shape"])
    payload = bytearray(data[start + header_len:])
    t = torch.frombuffer(payload, dtype=torch.float32) if payload else torch.empty(0)
    return t.reshape(shape).clone()


# ---------------------------------------------------------------------------
# Timing.
# ---------------------------------------------------------------------------

def time_calls(fn, sync, seconds, warmup=5, min_iters=5, max_iters=2000):
    t0 = time.perf_counter()
    fn()
    sync()
    first_us = (time.perf_counter() - t0) * 1e6
    warm = []
    for _ in range(warmup - 1):
        t0 = time.perf_counter()
        fn()
        sync()
        warm.append((time.perf_counter() - t0) * 1e6)
    estimate = statistics.median(warm) if warm else first_us
    iters = int(min(max_iters, max(min_iters, seconds * 1e6 / max(estimate, 1.0))))
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()

    def q(p):
        pos = p * (len(times) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(times) - 1)
        return times[lo] * (1 - (pos - lo)) + times[hi] * (pos - lo)

    return {"iters": iters, "first_run_us": round(first_us, 3), "median_us": round(q(0.5), 3),
            "p10_us": round(q(0.1), 3), "p90_us": round(q(0.9), 3), "min_us": round(times[0], 3)}


# ---------------------------------------------------------------------------
# Models from the frozen graphs' weights.
# ---------------------------------------------------------------------------

def build_models(torch, weights_dir, device):
    nn = torch.nn
    F = torch.nn.functional

    def w(model, name):
        path = os.path.join(weights_dir, model, name.replace("/", "_") + ".npy")
        return load_npy(path, torch).to(device)

    def conv_weight(t):   # TF [kh, kw, in, out] -> torch [out, in, kh, kw]
        return t.permute(3, 2, 0, 1).contiguous()

    def dw_weight(t):     # TF depthwise [kh, kw, C, 1] -> torch [C, 1, kh, kw]
        return t.permute(2, 3, 0, 1).contiguous()

    def same_pad(size, k, s):
        out = (size + s - 1) // s
        total = max((out - 1) * s + k - size, 0)
        return total // 2, total - total // 2

    class Mlp(nn.Module):
        """784 -> 256 -> 256 -> 10, Relu between (mlp_fc_layers/frozen.pb)."""

        def __init__(self):
            super().__init__()
            names = ["dense", "dense_1", "pred"]
            # nn.Linear's layout: weight [out, in].
            self.weights = [w("mlp_fc_layers", n + "/kernel").t().contiguous() for n in names]
            self.biases = [w("mlp_fc_layers", n + "/bias") for n in names]

        def forward(self, x):
            h = F.relu(F.linear(x, self.weights[0], self.biases[0]))
            h = F.relu(F.linear(h, self.weights[1], self.biases[1]))
            return F.linear(h, self.weights[2], self.biases[2])

    class CnnS(nn.Module):
        """kws_cnn/CNN_S.pb from the Mfcc features [B, 49, 10] to labels_softmax."""

        def __init__(self):
            super().__init__()
            m = "kws_cnn_s"
            self.c1w, self.c1b = conv_weight(w(m, "Variable")), w(m, "Variable_1")
            self.c2w, self.c2b = conv_weight(w(m, "Variable_2")), w(m, "Variable_3")
            self.bn = [[w(m, "bn%d/%s" % (i, k)) for k in ("moving_mean", "moving_variance",
                                                         "gamma", "beta")] for i in (1, 2, 3)]
            self.fc = [(w(m, "W"), w(m, "b")), (w(m, "Variable_4"), w(m, "Variable_5")),
                       (w(m, "Variable_6"), w(m, "Variable_7"))]

        def forward(self, x):
            x = x.reshape(-1, 1, 49, 10)
            x = F.conv2d(x, self.c1w, self.c1b)
            x = F.relu(F.batch_norm(x, *self.bn[0], training=False, eps=1e-3))
            x = F.conv2d(x, self.c2w, self.c2b, stride=(2, 1))
            x = F.relu(F.batch_norm(x, *self.bn[1], training=False, eps=1e-3))
            x = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1)   # TF flattens NHWC
            x = x @ self.fc[0][0] + self.fc[0][1]
            x = x @ self.fc[1][0] + self.fc[1][1]
            x = F.relu(F.batch_norm(x, *self.bn[2], training=False, eps=1e-3))
            x = x @ self.fc[2][0] + self.fc[2][1]
            return torch.softmax(x, dim=-1)

    class DsCnnS(nn.Module):
        """kws_cnn/DS_CNN_S.pb from the Mfcc features [B, 49, 10] to labels_softmax."""

        def __init__(self):
            super().__init__()
            m = "kws_ds_cnn_s"
            p = "MobileNet/"

            def bn(prefix):
                return [w(m, prefix + "/moving_mean"), w(m, prefix + "/moving_variance"),
                        w(m, prefix + "/Const"), w(m, prefix + "/beta")]

            self.c1w = conv_weight(w(m, p + "conv_1/weights"))
            self.c1b = w(m, p + "conv_1/biases")
            self.c1bn = bn(p + "conv_1/batch_norm")
            self.blocks = []
            for i in range(1, 5):
                q = p + "conv_ds_%d/" % i
                self.blocks.append((
                    dw_weight(w(m, q + "depthwise_conv/depthwise_weights")),
                    w(m, q + "depthwise_conv/biases"), bn(q + "dw_batch_norm"),
                    conv_weight(w(m, q + "pointwise_conv/weights")),
                    w(m, q + "pointwise_conv/biases"), bn(q + "pw_batch_norm")))
            self.fcw, self.fcb = w(m, p + "fc1/weights"), w(m, p + "fc1/biases")
            # conv_1: SAME padding, kernel 10x4, stride 2 on 49x10 (TF pads
            # the extra row at the bottom).
            self.pad1 = same_pad(10, 4, 2) + same_pad(49, 10, 2)

        def forward(self, x):
            x = x.reshape(-1, 1, 49, 10)
            x = F.conv2d(F.pad(x, self.pad1), self.c1w, self.c1b, stride=2)
            x = F.relu(F.batch_norm(x, *self.c1bn, training=False, eps=1e-3))
            for dww, dwb, dwbn, pww, pwb, pwbn in self.blocks:
                x = F.conv2d(x, dww, dwb, padding=1, groups=x.shape[1])
                x = F.relu(F.batch_norm(x, *dwbn, training=False, eps=1e-3))
                x = F.conv2d(x, pww, pwb)
                x = F.relu(F.batch_norm(x, *pwbn, training=False, eps=1e-3))
            x = F.avg_pool2d(x, (25, 5), stride=2)
            x = x.reshape(x.shape[0], x.shape[1])
            return torch.softmax(x @ self.fcw + self.fcb, dim=-1)

    return [
        ("mlp_fc_layers", Mlp(), (784,), "mlp_fc_layers/ref_input_ramp.npy",
         "mlp_fc_layers/ref_output_ramp.npy"),
        ("kws_cnn_s", CnnS(), (49, 10), "kws_cnn/ref_mfcc_input.npy",
         "kws_cnn/ref_CNN_S_softmax.npy"),
        ("kws_ds_cnn_s", DsCnnS(), (49, 10), "kws_cnn/ref_mfcc_input.npy",
         "kws_cnn/ref_DS_CNN_S_softmax.npy"),
    ]


def ref_diff(torch, model, data_dir, ref_in, ref_out, device):
    x = load_npy(os.path.join(data_dir, ref_in), torch).to(device)
    want = load_npy(os.path.join(data_dir, ref_out), torch).to(device)
    with torch.inference_mode():
        got = model(x)
    err = float((got.float() - want).abs().max())
    return err, err / max(float(want.abs().max()), 1e-30)


# ---------------------------------------------------------------------------
# Cases.
# ---------------------------------------------------------------------------

def dtype_label(torch, dtype):
    return {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}[dtype]


def shape_label(shape):
    return "x".join(str(d) for d in shape)


class Runner:
    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        self.dev = torch.device("cuda")
        self.sync = torch.cuda.synchronize
        self.copy_gbps = {}

    def line(self, group, key, side="torch", **fields):
        rec = {"side": side, "group": group, "key": key}
        rec.update(fields)
        emit(rec)

    def error(self, group, key, exc, side="torch"):
        msg = "%s: %s" % (type(exc).__name__, (str(exc).strip().splitlines() or [""])[0][:300])
        self.line(group, key, side=side, error=msg)
        print("torch_cuda_bench: %s: %s" % (key, msg), file=sys.stderr)

    def rand(self, shape, dtype, seed):
        g = self.torch.Generator(device=self.dev)
        g.manual_seed(seed)
        return (self.torch.rand(shape, generator=g, device=self.dev, dtype=self.torch.float32)
                * 2 - 1).to(dtype)

    def memory_bound(self, group, key, fn, nbytes, seconds=None, **fields):
        try:
            st = time_calls(fn, self.sync, seconds or self.args.seconds)
        except Exception as e:  # reported, the run goes on
            self.error(group, key, e)
            return
        gbps = nbytes / (st["median_us"] * 1e3)
        extra = {"frac_copy": gbps / self.copy_gbps["torch"]} if self.copy_gbps else {}
        self.line(group, key, bytes=nbytes, gbps=gbps, **fields, **st, **extra)

    def bandwidth(self):
        torch = self.torch
        nbytes = 1 << 30
        src = torch.empty(nbytes, dtype=torch.uint8, device=self.dev).fill_(1)
        dst = torch.empty_like(src)
        st = time_calls(lambda: dst.copy_(src), self.sync, self.args.seconds, warmup=3,
                        min_iters=10, max_iters=200)
        gbps = 2.0 * nbytes / (st["median_us"] * 1e3)
        self.copy_gbps["torch"] = gbps
        self.line("bandwidth", "copy_1GiB", what="Tensor.copy_, 1 GiB", bytes=2.0 * nbytes,
                  gbps=gbps, frac_copy=1.0, **st)
        del src, dst
        n = 64 << 20
        ops = [("Relu", torch.float32, 1, torch.relu), ("Add", torch.float32, 2, torch.add),
               ("Mul", torch.float32, 2, torch.mul), ("Exp", torch.float32, 1, torch.exp),
               ("Tanh", torch.float32, 1, torch.tanh), ("Sigmoid", torch.float32, 1, torch.sigmoid),
               ("Add", torch.float16, 2, torch.add), ("Add", torch.bfloat16, 2, torch.add)]
        inputs = {}
        for op, dtype, arity, fn in ops:
            if dtype not in inputs:
                inputs[dtype] = (self.rand((n,), dtype, 1), self.rand((n,), dtype, 2))
            x, y = inputs[dtype]
            call = (lambda fn=fn, x=x: fn(x)) if arity == 1 else (lambda fn=fn, x=x, y=y: fn(x, y))
            key = "ew_%s_%s" % (op, dtype_label(torch, dtype))
            nbytes = float(n * x.element_size() * (arity + 1))
            self.memory_bound("bandwidth", key, call, nbytes, op=op,
                              dtype=dtype_label(torch, dtype), shape=[n])
        inputs.clear()

    def matmul(self):
        torch = self.torch
        kinds = [("float32", torch.float32, False), ("tf32", torch.float32, True),
                 ("bfloat16", torch.bfloat16, False)]
        for label, dtype, tf32 in kinds:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            for n in (1024, 2048, 4096, 8192):
                key = "matmul_%s_%d" % (label, n)
                try:
                    a = self.rand((n, n), dtype, 3)
                    b = self.rand((n, n), dtype, 4)
                    st = time_calls(lambda: torch.matmul(a, b), self.sync, self.args.seconds)
                except Exception as e:
                    self.error("matmul", key, e)
                    continue
                flops = 2.0 * n ** 3
                self.line("matmul", key, op="MatMul", dtype=label, shape=[n, n], flops=flops,
                          tflops=flops / (st["median_us"] * 1e6), allow_tf32=tf32,
                          allow_bf16_reduced_precision_reduction=
                          torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
                          **st)
                del a, b
        torch.backends.cuda.matmul.allow_tf32 = False

    def reduce(self):
        torch = self.torch
        for shape in ((4096, 1024), (32768, 4096)):
            for dtype in (torch.float32, torch.float16):
                key = "softmax_%s_%s" % (dtype_label(torch, dtype), shape_label(shape))
                x = self.rand(shape, dtype, 5)
                self.memory_bound("reduce", key, lambda x=x: torch.softmax(x, dim=-1),
                                  2.0 * x.numel() * x.element_size(), op="Softmax",
                                  dtype=dtype_label(torch, dtype), shape=list(shape))
                del x
        fns = {"Sum": lambda x, d: x.sum(dim=d), "Mean": lambda x, d: x.mean(dim=d),
               "Max": lambda x, d: x.amax(dim=d)}
        for shape in ((4096, 4096), (64, 1024, 1024)):
            x = self.rand(shape, torch.float32, 6)
            for op in ("Sum", "Mean", "Max"):
                for last in (True, False):
                    axis = len(shape) - 1 if last else 0
                    key = "reduce_%s_%s_float32_%s" % (op, "last" if last else "first",
                                                       shape_label(shape))
                    out_elems = x.numel() // shape[axis]
                    self.memory_bound("reduce", key,
                                      lambda fn=fns[op], x=x, axis=axis: fn(x, axis),
                                      float(x.numel() * 4 + out_elems * 4), op=op,
                                      dtype="float32", shape=list(shape))
            del x

    def models(self):
        torch = self.torch
        args = self.args
        # Full float32, like Plexus by default.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        settings = {"cudnn_benchmark": torch.backends.cudnn.benchmark, "tf32": False}
        compile_spent = 0.0
        for name, model, sample, ref_in, ref_out in build_models(torch, args.weights, self.dev):
            try:
                diff, rel = ref_diff(torch, model, args.data_dir, ref_in, ref_out, self.dev)
            except Exception as e:
                diff = rel = None
                self.error("models", "model_%s_ref" % name, e)
            compiled = None
            compile_error = None
            try:
                # Static shapes: each batch size gets its own specialised graph.
                compiled = torch.compile(model, dynamic=False)
            except Exception as e:
                compile_error = e
            for batch in (1, 256):
                key = "model_%s_b%d" % (name, batch)
                x = self.rand((batch,) + sample, torch.float32, 7)
                with torch.inference_mode():
                    try:
                        st = time_calls(lambda: model(x), self.sync, max(args.seconds, 0.5))
                        self.line("models", key, side="torch", model=name, batch=batch,
                                  median_ms=st["median_us"] / 1e3, ref_max_abs_diff=diff,
                                  ref_rel_diff=rel,
                                  **settings, **st)
                    except Exception as e:
                        self.error("models", key, e)
                    if compiled is None:
                        self.error("models", key, compile_error, side="torch_compile")
                        continue
                    if compile_spent > args.compile_budget:
                        self.line("models", key, side="torch_compile",
                                  error="skipped: the compile budget (%g s) is spent"
                                  % args.compile_budget)
                        continue
                    try:
                        t0 = time.perf_counter()
                        compiled(x)
                        self.sync()
                        compile_s = time.perf_counter() - t0
                        compile_spent += compile_s
                        st = time_calls(lambda: compiled(x), self.sync, max(args.seconds, 0.5))
                        self.line("models", key, side="torch_compile", model=name, batch=batch,
                                  median_ms=st["median_us"] / 1e3, compile_s=round(compile_s, 2),
                                  mode="default", **settings, **st)
                    except Exception as e:
                        compile_spent += time.perf_counter() - t0
                        self.error("models", key, e, side="torch_compile")


def cpu_check(torch, args):
    """Builds the models on the CPU and checks them against TensorFlow's outputs."""
    torch.set_grad_enabled(False)
    ok = True
    for name, model, sample, ref_in, ref_out in build_models(torch, args.weights, "cpu"):
        diff, rel = ref_diff(torch, model, args.data_dir, ref_in, ref_out, "cpu")
        x = torch.rand((256,) + sample) * 2 - 1
        shape = list(model(x).shape)
        emit({"side": "torch_cpu_check", "model": name, "ref_max_abs_diff": diff,
              "ref_rel_diff": rel, "batch256_output_shape": shape})
        ok = ok and rel < 1e-5 and shape[0] == 256
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--weights", required=True,
                        help="folder written by plexus_cuda_bench --export-weights")
    parser.add_argument("--data-dir",
                        default=os.path.join(os.path.dirname(os.path.dirname(here)),
                                             "tests", "data", "tf_graphs"))
    parser.add_argument("--cases", default="bandwidth,matmul,reduce,models")
    parser.add_argument("--seconds", type=float, default=0.25)
    parser.add_argument("--compile-budget", type=float, default=60.0,
                        help="seconds of torch.compile after which further compiles are skipped")
    parser.add_argument("--cpu-check", action="store_true")
    args = parser.parse_args()

    try:
        import torch
    except ImportError as e:
        emit({"side": "torch", "skip": "no torch: %s" % e})
        print("SKIP: no torch", file=sys.stderr)
        return 0
    if args.cpu_check:
        return cpu_check(torch, args)
    if not torch.cuda.is_available():
        emit({"side": "torch", "skip": "no CUDA device for torch %s" % torch.__version__})
        print("SKIP: no CUDA device", file=sys.stderr)
        return 0
    emit({"side": "torch", "info": "device", "torch": torch.__version__,
          "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
          "device_name": torch.cuda.get_device_name(0), "seconds_per_case": args.seconds})
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    runner = Runner(torch, args)
    cases = set(args.cases.split(","))
    for case in ("bandwidth", "matmul", "reduce", "models"):
        if case not in cases:
            continue
        try:
            getattr(runner, case)()
        except Exception as e:  # one family failing leaves the others
            runner.error(case, case, e)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
