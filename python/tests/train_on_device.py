"""Trains two small models on one device, eagerly or traced, and prints each
step's loss, the final weights and the device of the results as JSON; a
traced step also lists the kernels that ran on another device.

    python train_on_device.py DEVICE {eager,traced} [--plugin PATH] [--steps N]

test_device_training.py runs it in processes of their own (so that the exit
is checked too) and compares devices and modes step by step. The models: a
linear regression with Adam (the example of docs/python.md) and a small CNN
(conv, relu, max pool, dense, softmax cross entropy) with SGD and momentum.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import plexus as px


def _train(step, traced, steps, x, y, variables, opt) -> dict:
    if traced:
        step = px.function(step)
    losses = []
    for _ in range(steps):
        loss = step(x, y)
        losses.append(float(loss.numpy()))
    out = {"losses": losses, "weights": [v.numpy().ravel().tolist() for v in variables],
           "result_device": loss.device, "iterations": opt.iterations}
    if traced:
        # The kernels of the traced step that ran elsewhere than the step's
        # device, with the placer's reason.
        report = step.placement(x, y)
        # (Constants made once, when the executor was built, do no work at a
        # step: a Const the device has no kernel for is made on the CPU and
        # copied to the device then.)
        out["off_device"] = [f"{n.node} ({n.op}) on {n.device}: {n.reason}" for n in report.nodes
                             if n.how == "kernel" and n.device != report.device and not n.once]
        out["copies"] = len(report.copies)
    return out


def linear_regression(device: str, traced: bool, steps: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal([64, 3]).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.3
         + 0.1 * rng.standard_normal([64, 1])).astype(np.float32)
    with px.device(device):
        xt, yt = px.constant(x), px.constant(y)
        w = px.Variable(np.full([3, 1], 0.1, np.float32), name="w")
        b = px.Variable(np.zeros([1], np.float32), name="b")
        opt = px.optimizers.Adam(0.05)

        def step(x, y):
            with px.GradientTape() as tape:
                loss = px.reduce_mean((px.matmul(x, w) + b - y) ** 2)
            grads = tape.gradient(loss, [w, b])
            opt.apply_gradients(zip(grads, [w, b]))
            return loss

        return _train(step, traced, steps, xt, yt, [w, b], opt)


def small_cnn(device: str, traced: bool, steps: int) -> dict:
    rng = np.random.default_rng(1)
    images = rng.standard_normal([16, 8, 8, 1]).astype(np.float32)
    labels = rng.integers(0, 4, 16).astype(np.int32)
    with px.device(device):
        kernel = px.Variable((0.3 * rng.standard_normal([3, 3, 1, 4])).astype(np.float32), name="conv/kernel")
        bias = px.Variable(np.zeros([4], np.float32), name="conv/bias")
        dense = px.Variable((0.2 * rng.standard_normal([64, 4])).astype(np.float32), name="dense/kernel")
        variables = [kernel, bias, dense]
        opt = px.optimizers.SGD(0.1, momentum=0.9)
        xt, yt = px.constant(images), px.constant(labels)

        def step(x, y):
            with px.GradientTape() as tape:
                h = px.nn.conv2d(x, kernel.read_value(), strides=1, padding="SAME")
                h = px.nn.relu(px.nn.bias_add(h, bias.read_value()))
                h = px.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")  # [16, 4, 4, 4]
                logits = px.matmul(px.reshape(h, [-1, 64]), dense.read_value())
                losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=y)
                loss = px.reduce_mean(losses)
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        return _train(step, traced, steps, xt, yt, variables, opt)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("device")
    p.add_argument("mode", choices=["eager", "traced"])
    p.add_argument("--plugin", action="append", default=[], help="a plugin file to load first")
    p.add_argument("--steps", type=int, default=12)
    args = p.parse_args(argv)
    for path in args.plugin:
        px.load_plugin(path)
    names = [d.name for d in px.devices()]
    if args.device.upper() not in names:
        print(f"no device {args.device} (devices: {', '.join(names)})", file=sys.stderr)
        return 3
    traced = args.mode == "traced"
    out = {"linear": linear_regression(args.device, traced, args.steps),
           "cnn": small_cnn(args.device, traced, args.steps)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
