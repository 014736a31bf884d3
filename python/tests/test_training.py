"""The training API: GradientTape (eager and traced), gradients against finite
differences, optimizers against NumPy and PyTorch, learning-rate schedules,
tape errors, a tiny CNN that learns, and the progress bar's output."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import plexus as px
import plexus.progress
from plexus import errors


def _var(value, name="v"):
    return px.Variable(np.asarray(value), name=name)


# ---- GradientTape -------------------------------------------------------------


def _mlp_loss(x, y, w1, b1, w2):
    h = px.nn.relu(px.nn.bias_add(px.matmul(x, w1.read_value()), b1.read_value()))
    out = px.matmul(h, w2.read_value())
    return px.reduce_mean((out - y) ** 2)


def test_tape_eager_and_traced_gradients_are_equal():
    rng = np.random.default_rng(0)
    x = px.constant(rng.standard_normal([5, 4]).astype(np.float32))
    y = px.constant(rng.standard_normal([5, 2]).astype(np.float32))
    w1 = _var(rng.standard_normal([4, 3]).astype(np.float32), "w1")
    b1 = _var(rng.standard_normal([3]).astype(np.float32), "b1")
    w2 = _var(rng.standard_normal([3, 2]).astype(np.float32), "w2")
    vs = [w1, b1, w2]

    with px.GradientTape() as tape:
        loss = _mlp_loss(x, y, w1, b1, w2)
    eager = [g.numpy() for g in tape.gradient(loss, vs)]

    @px.function
    def grads(x, y):
        with px.GradientTape() as t:
            loss = _mlp_loss(x, y, w1, b1, w2)
        return [loss] + t.gradient(loss, vs)

    traced = grads(x, y)
    np.testing.assert_allclose(traced[0].numpy(), loss.numpy(), rtol=1e-6)
    for e, t in zip(eager, traced[1:]):
        assert e.shape == t.numpy().shape
        np.testing.assert_allclose(t.numpy(), e, rtol=1e-5, atol=1e-6)

    # Against the hand-written backward pass.
    xn, yn, w1n, b1n, w2n = (np.asarray(a, np.float64) for a in (x, y, w1, b1, w2))
    pre = xn @ w1n + b1n
    h = np.maximum(pre, 0)
    dout = 2 * (h @ w2n - yn) / yn.size
    dh = dout @ w2n.T * (pre > 0)
    np.testing.assert_allclose(eager[2], h.T @ dout, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(eager[1], dh.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(eager[0], xn.T @ dh, rtol=1e-4, atol=1e-6)


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


_CASES = {
    "tanh_mul": (lambda t: px.reduce_sum(px.tanh(t) * t), lambda a: np.sum(np.tanh(a) * a), [3, 4]),
    "exp_log": (lambda t: px.reduce_sum(px.exp(t) + px.math.log(t * t + 1.0)),
                lambda a: np.sum(np.exp(a) + np.log(a * a + 1.0)), [2, 3]),
    "softmax": (lambda t: px.reduce_sum(px.nn.softmax(t) * px.constant(np.arange(12.0).reshape(3, 4))),
                lambda a: np.sum(np.exp(a) / np.exp(a).sum(-1, keepdims=True) * np.arange(12.0).reshape(3, 4)),
                [3, 4]),
    "matmul_transpose": (lambda t: px.reduce_sum(px.matmul(t, px.transpose(t)) ** 2),
                         lambda a: np.sum((a @ a.T) ** 2), [3, 2]),
    "reduce_mean_axis_sigmoid": (lambda t: px.reduce_sum(px.reduce_mean(px.sigmoid(t), axis=1) ** 2),
                                 lambda a: np.sum(np.mean(1 / (1 + np.exp(-a)), axis=1) ** 2), [4, 3]),
    "conv2d_maxpool": (
        lambda t: px.reduce_sum(px.nn.max_pool2d(
            px.nn.conv2d(t, px.constant(np.linspace(-1, 1, 3 * 3 * 1 * 2).reshape(3, 3, 1, 2)),
                         strides=1, padding="SAME"), ksize=2, strides=2, padding="VALID") ** 2),
        None, [1, 4, 4, 1]),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_gradient_matches_finite_differences_float64(name):
    fn, ref, shape = _CASES[name]
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)

    def value(a):
        if ref is not None:
            return float(ref(a))
        return float(fn(px.constant(a)).numpy())

    x = px.constant(x0)
    assert x.dtype == px.float64
    with px.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x)
    assert g.dtype == px.float64
    np.testing.assert_allclose(float(y.numpy()), value(x0), rtol=1e-10)
    np.testing.assert_allclose(g.numpy(), _numeric_grad(value, x0), rtol=1e-5, atol=1e-7)


def test_sparse_softmax_cross_entropy_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    logits0 = rng.standard_normal([4, 5])
    labels = np.array([0, 3, 4, 1], np.int32)

    def value(a):
        z = a - a.max(1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        return float(-logp[np.arange(4), labels].mean())

    x = px.constant(logits0)
    with px.GradientTape() as tape:
        tape.watch(x)
        losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=px.constant(labels))
        loss = px.reduce_mean(losses)
    np.testing.assert_allclose(float(loss.numpy()), value(logits0), rtol=1e-10)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), _numeric_grad(value, logits0),
                               rtol=1e-5, atol=1e-8)


def test_non_persistent_tape_used_twice_raises():
    x = px.constant(np.array([1.0, 2.0], np.float32))
    with px.GradientTape() as tape:
        tape.watch(x)
        y = px.reduce_sum(x * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    with pytest.raises(errors.FailedPreconditionError):
        tape.gradient(y, x)


def test_persistent_tape_can_be_used_twice():
    x = px.constant(np.array([1.0, 2.0], np.float32))
    with px.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = px.reduce_sum(x * x)
        z = px.reduce_sum(x * 3.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [3.0, 3.0])


def test_unconnected_source_gives_none():
    a = _var(np.float32(2.0), "a")
    b = _var(np.float32(3.0), "b")
    with px.GradientTape() as tape:
        y = a.read_value() * 5.0
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga.numpy()) == pytest.approx(5.0)
    assert gb is None

    @px.function
    def traced():
        with px.GradientTape() as t:
            y = a.read_value() * 5.0
        g = t.gradient(y, [a, b])
        assert g[1] is None
        return g[0]

    assert float(traced().numpy()) == pytest.approx(5.0)


def test_unwatched_constant_gives_none():
    x = px.constant(np.array([1.0], np.float32))
    with px.GradientTape() as tape:
        y = x * 2.0
    assert tape.gradient(y, x) is None


# ---- optimizers -------------------------------------------------------------------

_W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
_GRADS = [np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.6]], np.float32),
          np.array([[-0.5, 0.2, 0.1], [0.3, -0.1, 0.2]], np.float32),
          np.array([[0.05, 0.5, -0.3], [-0.2, 0.7, 0.1]], np.float32)]


def _run_optimizer(opt, traced=False):
    w = px.Variable(_W0.copy(), name="w")
    def step(g):
        opt.apply_gradients([(g, w)])
    if traced:
        step = px.function(step)
    out = []
    for g in _GRADS:
        step(px.constant(g))
        out.append(w.numpy().astype(np.float64))
    return out


def _numpy_sgd(lr, momentum=0.0, nesterov=False):
    w, acc, out = _W0.astype(np.float64), np.zeros(_W0.shape), []
    for g in _GRADS:
        if momentum == 0.0:
            w = w - lr * g
        else:
            acc = momentum * acc + g
            w = w - lr * (g + momentum * acc if nesterov else acc)
        out.append(w)
    return out


def _numpy_adam(lr, b1, b2, eps):
    # TensorFlow's Adam: epsilon added to sqrt(v), the learning rate bias-corrected.
    w, m, v, out = _W0.astype(np.float64), np.zeros(_W0.shape), np.zeros(_W0.shape), []
    for t, g in enumerate(_GRADS, 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + eps)
        out.append(w)
    return out


def _numpy_adamw(lr, wd, b1, b2, eps):
    # PyTorch's AdamW: decay first, epsilon added to the bias-corrected sqrt(v).
    w, m, v, out = _W0.astype(np.float64), np.zeros(_W0.shape), np.zeros(_W0.shape), []
    for t, g in enumerate(_GRADS, 1):
        w = w * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)
        out.append(w)
    return out


def _numpy_rmsprop(lr, rho, momentum, eps):
    # TensorFlow's ApplyRMSProp: epsilon inside the square root.
    w, ms, mom, out = _W0.astype(np.float64), np.zeros(_W0.shape), np.zeros(_W0.shape), []
    for g in _GRADS:
        ms = rho * ms + (1 - rho) * g * g
        mom = momentum * mom + lr * g / np.sqrt(ms + eps)
        w = w - mom
        out.append(w)
    return out


_OPTIMIZERS = {
    "sgd": (lambda: px.optimizers.SGD(0.1), lambda: _numpy_sgd(0.1)),
    "sgd_momentum": (lambda: px.optimizers.SGD(0.1, momentum=0.9), lambda: _numpy_sgd(0.1, 0.9)),
    "sgd_nesterov": (lambda: px.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
                     lambda: _numpy_sgd(0.1, 0.9, True)),
    "adam": (lambda: px.optimizers.Adam(0.01), lambda: _numpy_adam(0.01, 0.9, 0.999, 1e-7)),
    "adam_custom": (lambda: px.optimizers.Adam(0.05, beta_1=0.5, beta_2=0.9, epsilon=1e-3),
                    lambda: _numpy_adam(0.05, 0.5, 0.9, 1e-3)),
    "adamw": (lambda: px.optimizers.AdamW(0.01, weight_decay=0.1),
              lambda: _numpy_adamw(0.01, 0.1, 0.9, 0.999, 1e-8)),
    "rmsprop": (lambda: px.optimizers.RMSprop(0.01), lambda: _numpy_rmsprop(0.01, 0.9, 0.0, 1e-7)),
    "rmsprop_momentum": (lambda: px.optimizers.RMSprop(0.01, rho=0.8, momentum=0.5, epsilon=1e-4),
                         lambda: _numpy_rmsprop(0.01, 0.8, 0.5, 1e-4)),
}


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", sorted(_OPTIMIZERS))
def test_optimizer_matches_numpy(name, traced):
    make, ref = _OPTIMIZERS[name]
    opt = make()
    got = _run_optimizer(opt, traced)
    for step, (g, e) in enumerate(zip(got, ref())):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"step {step + 1}")
    assert opt.iterations == 3


def _torch_run(make):
    torch = pytest.importorskip("torch")
    w = torch.nn.Parameter(torch.tensor(_W0.copy()))
    opt = make(torch, [w])
    out = []
    for g in _GRADS:
        w.grad = torch.tensor(g)
        opt.step()
        out.append(w.detach().numpy().astype(np.float64).copy())
    return out


def test_adamw_matches_torch():
    ref = _torch_run(lambda torch, p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, eps=1e-8))
    got = _run_optimizer(px.optimizers.AdamW(0.01, weight_decay=0.1, epsilon=1e-8))
    for g, e in zip(got, ref):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_matches_torch(nesterov):
    ref = _torch_run(lambda torch, p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=nesterov))
    got = _run_optimizer(px.optimizers.SGD(0.1, momentum=0.9, nesterov=nesterov))
    for g, e in zip(got, ref):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_optimizer_skips_none_gradients_and_exposes_slots():
    a, b = px.Variable(np.float32(1.0), name="a"), px.Variable(np.float32(1.0), name="b")
    opt = px.optimizers.Adam(0.1)
    opt.apply_gradients([(px.constant(np.float32(1.0)), a), (None, b)])
    assert float(a.numpy()) == pytest.approx(0.9, rel=1e-4)
    assert float(b.numpy()) == 1.0
    assert opt.iterations == 1
    # The step counter and a's two slots.
    assert len(opt.variables()) == 3


def test_optimizer_with_schedule_uses_the_step():
    sched = px.optimizers.PiecewiseConstantDecay([0.5], [1.0, 0.1])  # 1.0 at step 0, then 0.1
    w = px.Variable(np.float32(0.0), name="w")
    opt = px.optimizers.SGD(sched)
    for _ in range(3):
        opt.apply_gradients([(px.constant(np.float32(1.0)), w)])
    assert float(w.numpy()) == pytest.approx(-1.2, rel=1e-5)


# ---- learning-rate schedules ----------------------------------------------------------


def _sched_values(s, steps):
    return np.array([float(s(px.constant(float(t))).numpy()) for t in steps])


def test_exponential_decay_values():
    steps = [0, 1, 5, 10, 15, 25]
    s = px.optimizers.ExponentialDecay(0.1, 10, 0.5)
    np.testing.assert_allclose(_sched_values(s, steps), [0.1 * 0.5 ** (t / 10) for t in steps], rtol=1e-6)
    s = px.optimizers.ExponentialDecay(0.1, 10, 0.5, staircase=True)
    np.testing.assert_allclose(_sched_values(s, steps), [0.1 * 0.5 ** (t // 10) for t in steps], rtol=1e-6)


def test_inverse_time_decay_values():
    steps = [0, 1, 5, 10, 30]
    s = px.optimizers.InverseTimeDecay(0.2, 10, 0.5)
    np.testing.assert_allclose(_sched_values(s, steps), [0.2 / (1 + 0.5 * t / 10) for t in steps], rtol=1e-6)


def test_piecewise_constant_decay_values():
    s = px.optimizers.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    np.testing.assert_allclose(_sched_values(s, [0, 9, 10, 11, 20, 21, 100]),
                               [1.0, 1.0, 1.0, 0.5, 0.5, 0.1, 0.1], rtol=1e-6)
    with pytest.raises(ValueError):
        px.optimizers.PiecewiseConstantDecay([10, 20], [1.0, 0.5])


# ---- a tiny CNN learns -------------------------------------------------------------------


def _tiny_problem():
    # 4x4 single-channel images: class 1 has its bright pixels on the left half.
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 64).astype(np.int32)
    images = rng.uniform(0, 0.3, [64, 4, 4, 1]).astype(np.float32)
    images[labels == 1, :, :2, 0] += 0.7
    images[labels == 0, :, 2:, 0] += 0.7
    return images, labels


class _TinyCNN:
    def __init__(self):
        rng = np.random.default_rng(4)
        self.k = px.Variable((rng.standard_normal([3, 3, 1, 4]) * 0.5).astype(np.float32), name="k")
        self.b = px.Variable(np.zeros([4], np.float32), name="b")
        self.w = px.Variable((rng.standard_normal([16, 2]) * 0.3).astype(np.float32), name="w")

    def variables(self):
        return [self.k, self.b, self.w]

    def loss(self, x, y):
        h = px.nn.relu(px.nn.bias_add(px.nn.conv2d(x, self.k.read_value(), strides=1, padding="SAME"),
                                      self.b.read_value()))
        h = px.reshape(px.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID"), [-1, 16])
        logits = px.matmul(h, self.w.read_value())
        losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=y)
        return px.reduce_mean(losses)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_tiny_cnn_trains(traced):
    images, labels = _tiny_problem()
    x, y = px.constant(images), px.constant(labels)
    model = _TinyCNN()
    opt = px.optimizers.Adam(0.05)

    def step(x, y):
        with px.GradientTape() as tape:
            loss = model.loss(x, y)
        opt.apply_gradients(zip(tape.gradient(loss, model.variables()), model.variables()))
        return loss

    if traced:
        step = px.function(step)
    losses = [float(step(x, y).numpy()) for _ in range(30)]
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], losses
    assert float(model.loss(x, y).numpy()) < 0.2
    if traced:
        assert step.num_traces == 1


def test_eager_and_traced_training_agree():
    images, labels = _tiny_problem()
    x, y = px.constant(images), px.constant(labels)
    results = []
    for traced in (False, True):
        model = _TinyCNN()
        opt = px.optimizers.SGD(0.1, momentum=0.9)

        def step(x, y):
            with px.GradientTape() as tape:
                loss = model.loss(x, y)
            opt.apply_gradients(zip(tape.gradient(loss, model.variables()), model.variables()))
            return loss

        if traced:
            step = px.function(step)
        losses = [float(step(x, y).numpy()) for _ in range(5)]
        results.append((losses, [v.numpy() for v in model.variables()]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-4, atol=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ---- the progress bar ----------------------------------------------------------------------


_LINE = re.compile(r"^epoch 1/3 \[(#*)(-*)\] +(\d+)/(\d+) +(\d+)% loss (\d+\.\d{4}) (\d+) samples/s "
                   r"(in \d+\.\ds|ETA \d+\.\ds|ETA \?)$")


def test_progress_bar_not_a_tty_prints_one_line():
    out = io.StringIO()
    bar = plexus.progress.ProgressBar(100, desc="epoch 1/3", stream=out)
    assert not bar.interactive
    bar.update(40, loss=1.0)
    bar.update(60, loss=np.float32(0.5))
    assert out.getvalue() == ""  # nothing until close on a non-terminal
    bar.close()
    bar.close()  # once only
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "\r" not in out.getvalue()
    m = _LINE.match(lines[0])
    assert m, lines[0]
    assert len(m.group(1)) == 20 and m.group(2) == ""
    assert (m.group(3), m.group(4), m.group(5)) == ("100", "100", "100")
    assert m.group(6) == "0.7000"  # running mean weighted by the samples
    assert m.group(8).startswith("in ")
    assert bar.loss == pytest.approx(0.7)


def test_progress_bar_partial_line_and_tensor_loss():
    bar = plexus.progress.ProgressBar(100, desc="epoch 1/3", stream=io.StringIO())
    bar.update(25, loss=px.constant(np.float32(2.0)))
    line = bar.format(elapsed=0.5)
    m = _LINE.match(line)
    assert m, line
    assert (len(m.group(1)), len(m.group(2))) == (5, 15)
    assert m.group(3) == " 25" or m.group(3) == "25"
    assert m.group(5) == "25" and m.group(6) == "2.0000"
    assert m.group(7) == "50"  # 25 samples in 0.5 s
    assert m.group(8) == "ETA 1.5s"  # 75 more at 50/s


class _FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_redraws_in_place():
    out = _FakeTTY()
    with plexus.progress.ProgressBar(10, desc="epoch 1/3", stream=out, min_interval=0.0) as bar:
        assert bar.interactive
        for _ in range(10):
            bar.update(1, loss=0.25)
    text = out.getvalue()
    assert text.count("\r") == 11 and text.endswith("\n") and text.count("\n") == 1
    final = text.split("\r")[-1].replace("\x1b[K", "").rstrip("\n")
    m = _LINE.match(final)
    assert m, final
    assert m.group(3) == "10" and m.group(6) == "0.2500"


def test_traced_read_after_assign_sees_the_new_value():
    w = px.Variable(np.float32(1.0), name="w")

    @px.function
    def f():
        w.assign_add(np.float32(1.0))
        return w.read_value()

    assert float(f().numpy()) == 2.0
    assert float(f().numpy()) == 3.0


def test_traced_stateful_ops_run_in_program_order():
    # As tf.function: reads and writes of one variable in program order.
    v = px.Variable(np.float32(1.0), name="v")

    @px.function
    def f():
        v.assign(np.float32(2.0))
        a = v.read_value()
        v.assign_add(np.float32(1.0))
        b = v.read_value()
        return a, b

    for _ in range(200):
        v.assign(np.float32(1.0))
        a, b = f()
        assert (float(a.numpy()), float(b.numpy())) == (2.0, 3.0)
    graph = f.get_concrete_function().graph
    nodes = {n["name"]: n for n in graph.nodes()}
    assigns = [n for n in nodes.values() if n["op"].startswith("Assign")]
    assert len(assigns) == 2 and any(i.startswith("^") for i in assigns[1]["inputs"])


def test_traced_read_before_assign_keeps_the_old_value():
    # The read runs before the assignment, and what it returned is not
    # changed by it (values are never written in place under a reader).
    v = px.Variable(np.arange(4, dtype=np.float32), name="v")

    @px.function
    def f():
        before = v.read_value()
        v.assign_add(np.ones(4, np.float32))
        after = v.read_value()
        return before, after

    before, after = f()
    np.testing.assert_array_equal(before.numpy(), np.arange(4))
    np.testing.assert_array_equal(after.numpy(), np.arange(4) + 1)


def test_traced_stateful_ops_without_outputs_still_run():
    # Nothing reads the assignment, and the function returns nothing: it
    # runs anyway, before the call returns.
    v = px.Variable(np.float32(0.0), name="v")

    @px.function
    def bump():
        v.assign_add(np.float32(1.0))

    for _ in range(3):
        bump()
    assert float(v.numpy()) == 3.0


def test_train_digits_example(tmp_path, capsys):
    # The README's main job (examples/train_digits.py), end to end.
    pytest.importorskip("sklearn")
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "train_digits.py")
    spec = importlib.util.spec_from_file_location("train_digits", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr()
    accuracy = float(re.search(r"test accuracy (\d\.\d+)", out.out).group(1))
    assert accuracy >= 0.97
    assert out.err.count("samples/s") == 30  # one progress line per epoch
    assert os.listdir(tmp_path / "logs")
    assert (tmp_path / "checkpoints" / "checkpoint").exists()
    if hasattr(px.saved_model, "save"):
        assert "reloaded SavedModel predictions" in out.out
        loaded = px.saved_model.load(str(tmp_path / "saved_model"))
        probs = loaded.signatures["serving_default"](images=px.constant(np.zeros([2, 8, 8, 1], np.float32)))
        probs = np.asarray(probs["probabilities"])
        assert probs.shape == (2, 10)
        np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
