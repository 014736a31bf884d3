"""One rank of a distributed test (test_distributed.py starts N of these with plexus-run).

    python -m plexus.distribute.run --nproc 2 dist_worker.py SCENARIO [ARGS]

Each scenario checks what it can on its own rank and raises on a mismatch
(exit 1); lines starting with "RESULT " are read back by the test.
"""
import hashlib
import os
import signal
import sys
import time

import numpy as np

import plexus as px
import plexus.distribute as dist
from plexus import errors


def data(rank, dtype, n, salt=0):
    """Rank r's input: small values so that products and sums stay exact."""
    rng = np.random.default_rng(1000 * rank + n + salt)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-3, 4, size=n).astype(dtype) / 2
    return rng.integers(-3, 4, size=n).astype(dtype)


def result(*parts):
    """Prints one RESULT line with a single write, so that a launcher that
    merges the ranks' output (mpirun) cannot interleave two ranks' lines."""
    sys.stdout.flush()
    os.write(1, ("RESULT " + " ".join(str(p) for p in parts) + "\n").encode())


def digest(t):
    return hashlib.sha256(np.ascontiguousarray(t).tobytes()).hexdigest()[:16]


def check_same_everywhere(values):
    """Every rank computed the same bytes: gather each rank's digest as int64 and compare."""
    h = np.array([int(digest(v), 16) & 0x7FFFFFFFFFFFFFFF for v in values], np.int64)
    everyone = dist.all_gather(h).numpy().reshape(dist.world_size(), -1)
    assert (everyone == everyone[0]).all(), f"results differ across ranks: {everyone}"


def collectives():
    r, n = dist.rank(), dist.world_size()
    results = []
    dtypes = [np.float32, np.float64, np.float16, np.int32, np.int64]
    for dtype in dtypes + ["bfloat16"]:
        np_dtype = np.float32 if dtype == "bfloat16" else dtype
        for size in (0, 1, 7, 1000):
            inputs = [data(k, np_dtype, size) for k in range(n)]
            mine = px.constant(inputs[r])
            if dtype == "bfloat16":
                mine = px.cast(mine, px.bfloat16)
            for op, ref in (("sum", np.sum), ("prod", np.prod), ("min", np.min), ("max", np.max),
                            ("mean", np.mean)):
                got = dist.all_reduce(mine, op)
                if dtype == "bfloat16":
                    got = px.cast(got, px.float32)
                got = got.numpy()
                want = ref(np.stack(inputs), axis=0) if size else np.zeros([0], np_dtype)
                if op == "mean" and np.dtype(np_dtype).kind == "i":
                    want = np.trunc(np.sum(np.stack(inputs), axis=0) / n) if size else want
                assert got.dtype == np.dtype(np_dtype), (op, dtype, got.dtype)
                np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), rtol=1e-2 if
                                           dtype in (np.float16, "bfloat16") else 1e-6, err_msg=f"{op} {dtype} {size}")
                results.append(got)
            if dtype == "bfloat16":
                continue
            rows = [x.reshape(-1, 1) for x in inputs]
            got = dist.all_gather(rows[r]).numpy()
            np.testing.assert_array_equal(got, np.concatenate(rows), err_msg=f"all_gather {dtype} {size}")
            block = [data(k, np_dtype, 4 * n, salt=1).reshape(n * 2, 2) for k in range(n)]
            got = dist.reduce_scatter(block[r], "sum").numpy()
            np.testing.assert_array_equal(got, np.sum(np.stack(block), axis=0)[2 * r:2 * r + 2])
            for root in range(n):
                got = dist.broadcast(inputs[r], root).numpy()
                np.testing.assert_array_equal(got, inputs[root], err_msg=f"broadcast from {root}")
            got = dist.all_to_all(block[r]).numpy()
            np.testing.assert_array_equal(got, np.concatenate([block[k][2 * r:2 * r + 2] for k in range(n)]))
    # Uneven gathers: rank r sends r + 1 rows.
    got = dist.all_gather(np.full([r + 1, 2], r, np.int32)).numpy()
    np.testing.assert_array_equal(got, np.concatenate([np.full([k + 1, 2], k, np.int32) for k in range(n)]))
    dist.barrier()
    check_same_everywhere(results)
    result("collectives", len(results))


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 0.3, [8, 16]).astype(np.float32), np.zeros([16], np.float32),
            rng.normal(0, 0.3, [16, 3]).astype(np.float32), np.zeros([3], np.float32)]


def loss_fn(params, x, y):
    w1, b1, w2, b2 = params
    h = px.nn.relu(px.matmul(x, w1) + b1)
    logits = px.matmul(h, w2) + b2
    return -px.reduce_mean(px.reduce_sum(y * px.nn.log_softmax(logits), 1))


def train(steps=20, traced=False):
    r, n = dist.rank(), dist.world_size()
    rng = np.random.default_rng(7)
    batches = [(rng.normal(size=[8 * n, 8]).astype(np.float32), np.eye(3, dtype=np.float32)[rng.integers(0, 3, [8 * n])])
               for _ in range(steps)]
    strategy = dist.MultiWorkerMirroredStrategy()
    with strategy.scope():
        # Every rank starts from different values; the scope gives them rank 0's.
        params = [px.Variable(p, name=f"p{i}") for i, p in enumerate(mlp_params(seed=r))]
    opt = dist.DistributedOptimizer(px.optimizers.SGD(0.1), bucket_bytes=256)

    def step(x, y):
        with px.GradientTape() as tape:
            loss = loss_fn(params, x, y)
        grads = tape.gradient(loss, params)
        opt.apply_gradients(zip(grads, params))
        return loss

    if traced:
        step = px.function(step)
    for x, y in strategy.experimental_distribute_dataset(batches):
        strategy.run(step, args=(x, y))
    final = [p.numpy() for p in params]
    check_same_everywhere(final)
    if r == 0:
        # One process, the whole batch, the same steps.
        ref = [px.Variable(p) for p in mlp_params(seed=0)]
        sgd = px.optimizers.SGD(0.1)
        for x, y in batches:
            with px.GradientTape() as tape:
                loss = loss_fn(ref, x, y)
            sgd.apply_gradients(zip(tape.gradient(loss, ref), ref))
        for got, want in zip(final, ref):
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)
    result("train", digest(final[0]))


def fault(kind):
    """Rank 1 dies (kill) or stops (stall) at step 3; the others must fail with a clear error."""
    r = dist.rank()
    x = np.ones([64], np.float32)
    t0 = None
    try:
        for step in range(1000):
            if step == 3 and r == 1:
                os.kill(os.getpid(), signal.SIGKILL if kind == "kill" else signal.SIGSTOP)
            t0 = time.monotonic()
            dist.all_reduce(x)
            time.sleep(0.02)
    except (errors.UnavailableError, errors.DeadlineExceededError) as e:
        result(f"{type(e).__name__} after {time.monotonic() - t0:.1f}s: {e}")
        sys.exit(3)
    result("no error")


def mismatch():
    r = dist.rank()
    try:
        dist.all_reduce(np.ones([3 + r], np.float32))
    except errors.InvalidArgumentError as e:
        result(f"InvalidArgumentError: {e}")
        sys.exit(3)
    result("no error")


def tf_graph(folder):
    r = dist.rank()
    f = px.import_graph_def(os.path.join(folder, "collective_step.pb"), inputs=["x"],
                            outputs=["mean", "gathered", "total"])
    xs = [np.arange(12, dtype=np.float32).reshape(4, 3) * (k + 1) for k in range(2)]
    mean, gathered, total = [t.numpy() for t in f(xs[r])]
    np.testing.assert_allclose(mean, (xs[0] * 2 + xs[1] * 2) / 2)
    np.testing.assert_array_equal(gathered, np.concatenate(xs))
    np.testing.assert_array_equal(total, [2])
    if r == 0:
        sent = px.import_graph_def(os.path.join(folder, "bcast_send.pb"), inputs=["x"], outputs=["sent"])
        out = sent(np.array([[1, 2], [3, 4]], np.float32))
    else:
        recv = px.import_graph_def(os.path.join(folder, "bcast_recv.pb"), inputs=[], outputs=["received"])
        out = recv()
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [3, 4]])
    result("tf_graph ok")


def checkpoint(folder):
    r = dist.rank()
    v = px.Variable(np.full([3], float(r), np.float32), name="v")
    ckpt = px.train.Checkpoint(v=v)
    path = dist.save_checkpoint(ckpt, os.path.join(folder, "ckpt"))
    v.assign(np.full([3], -1.0, np.float32))
    dist.restore_checkpoint(ckpt, path)
    np.testing.assert_array_equal(v.numpy(), [0, 0, 0])  # rank 0's values on every rank
    result("checkpoint ok")


def device(plugin):
    """Collectives on REF:0, run by the reference plugin's collectives extension (ABI 0.7)."""
    r, n = dist.rank(), dist.world_size()
    px.load_plugin(plugin)
    xs = [np.arange(12, dtype=np.float32).reshape(4, 3) * (k + 1) for k in range(n)]
    with px.device("ref:0"):
        x = px.constant(xs[r]) + 0.0  # made on REF:0
        assert x.device == "REF:0", x.device
        y = dist.all_reduce(x, "mean")
        g = dist.all_gather(x)
        s = dist.reduce_scatter(px.constant(np.ones([2 * n, 2], np.int64) * (r + 1)) + 0, "sum")
    for t in (y, g, s):
        assert t.device == "REF:0", t.device  # the results stay on the device
    np.testing.assert_allclose(y.numpy(), np.mean(np.stack(xs), axis=0))
    np.testing.assert_array_equal(g.numpy(), np.concatenate(xs))
    np.testing.assert_array_equal(s.numpy(), np.full([2, 2], sum(range(1, n + 1)), np.int64))

    @px.function
    def step(t):
        return dist.all_reduce(t * 2.0, "sum")

    with px.device("ref:0"):
        z = step(px.constant(xs[r]) + 0.0)
    np.testing.assert_allclose(z.numpy(), 2 * np.sum(np.stack(xs), axis=0))
    result("device", y.device, g.device, s.device)


if __name__ == "__main__":
    scenario = sys.argv[1]
    if scenario == "exit":
        # The launcher test: rank 1 fails at once, rank 0 would run for a minute.
        if dist.rank() == 1:
            sys.exit(7)
        time.sleep(60)
    elif scenario == "collectives":
        collectives()
    elif scenario == "train":
        train(traced=len(sys.argv) > 2 and sys.argv[2] == "traced")
    elif scenario in ("kill", "stall"):
        fault(scenario)
    elif scenario == "mismatch":
        mismatch()
    elif scenario == "tf_graph":
        tf_graph(sys.argv[2])
    elif scenario == "device":
        device(sys.argv[2])
    elif scenario == "checkpoint":
        checkpoint(sys.argv[2])
    else:
        raise SystemExit(f"unknown scenario {scenario}")
