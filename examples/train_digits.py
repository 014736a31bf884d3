#!/usr/bin/env python3
"""Trains a small CNN on scikit-learn's digits with Plexus's Python API.

    PYTHONPATH=build/python python3 examples/train_digits.py --out build/digits

The 8x8 digit images (1797 of them) are split into 1437 training and 360
test images. The model is conv 3x3 (16) + relu, max pool 2x2, conv 3x3 (32)
+ relu, max pool 2x2, dense 64 + relu, dense 10, trained with Adam by a
traced train step (plexus.function). It shows a progress bar per epoch,
writes TensorBoard scalars (tensorboard --logdir OUT/logs), checks the test
accuracy (exit status 1 below --min-accuracy), saves a checkpoint and a
SavedModel with a serving signature (images [None, 8, 8, 1] float32 ->
probabilities [None, 10]), reloads the SavedModel and checks that its
predictions equal the in-process model's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import numpy as np

import plexus as px
import plexus.progress
import plexus.summary


def load_data(seed: int):
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images.astype(np.float32) / 16.0)[..., None]  # [1797, 8, 8, 1] in [0, 1]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(images))
    test, train = order[:360], order[360:]
    return images[train], labels[train], images[test], labels[test]


class DigitsCNN:
    """The model's variables and its forward pass (plexus ops, so it traces and differentiates)."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed)

        def he(shape, fan_in):
            return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

        self.conv1_w = px.Variable(he([3, 3, 1, 16], 9), name="conv1/kernel")
        self.conv1_b = px.Variable(np.zeros([16], np.float32), name="conv1/bias")
        self.conv2_w = px.Variable(he([3, 3, 16, 32], 9 * 16), name="conv2/kernel")
        self.conv2_b = px.Variable(np.zeros([32], np.float32), name="conv2/bias")
        self.dense1_w = px.Variable(he([128, 64], 128), name="dense1/kernel")
        self.dense1_b = px.Variable(np.zeros([64], np.float32), name="dense1/bias")
        self.dense2_w = px.Variable(he([64, 10], 64), name="dense2/kernel")
        self.dense2_b = px.Variable(np.zeros([10], np.float32), name="dense2/bias")

    @property
    def trainable_variables(self):
        return [self.conv1_w, self.conv1_b, self.conv2_w, self.conv2_b,
                self.dense1_w, self.dense1_b, self.dense2_w, self.dense2_b]

    def logits(self, images):
        x = px.nn.conv2d(images, self.conv1_w.read_value(), strides=1, padding="SAME")
        x = px.nn.relu(px.nn.bias_add(x, self.conv1_b.read_value()))
        x = px.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")            # [N, 4, 4, 16]
        x = px.nn.conv2d(x, self.conv2_w.read_value(), strides=1, padding="SAME")
        x = px.nn.relu(px.nn.bias_add(x, self.conv2_b.read_value()))
        x = px.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")            # [N, 2, 2, 32]
        x = px.reshape(x, [-1, 128])
        x = px.nn.relu(px.nn.bias_add(px.matmul(x, self.dense1_w.read_value()), self.dense1_b.read_value()))
        return px.nn.bias_add(px.matmul(x, self.dense2_w.read_value()), self.dense2_b.read_value())

    def probabilities(self, images):
        return px.nn.softmax(self.logits(images))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join("build", "digits"), help="output directory")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-accuracy", type=float, default=0.97)
    p.add_argument("--device", default=None, help="the device to train on (default: the best one present)")
    args = p.parse_args(argv)

    started = time.perf_counter()
    device = px.find_device(args.device) if args.device else (px.default_device() or "CPU:0")
    print(f"plexus {px.__version__}, device {device}")
    x_train, y_train, x_test, y_test = load_data(args.seed)
    print(f"digits: {len(x_train)} training and {len(x_test)} test images of 8x8")

    os.makedirs(args.out, exist_ok=True)
    writer = plexus.summary.create_file_writer(os.path.join(args.out, "logs"))

    with px.device(device):
        model = DigitsCNN(args.seed)
        # The learning rate decays tenfold over the run.
        steps_per_epoch = -(-len(x_train) // args.batch_size)
        schedule = px.optimizers.ExponentialDecay(args.learning_rate, args.epochs * steps_per_epoch, 0.1)
        opt = px.optimizers.Adam(schedule)
        variables = model.trainable_variables

        @px.function
        def train_step(images, labels):
            with px.GradientTape() as tape:
                logits = model.logits(images)
                losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
                loss = px.reduce_mean(losses)
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        @px.function
        def predict(images):
            return model.probabilities(images)

        def accuracy(images, labels):
            probs = predict(px.constant(images)).numpy()
            return float(np.mean(np.argmax(probs, axis=1) == labels))

        rng = np.random.default_rng(args.seed)
        n = len(x_train)
        step = 0
        for epoch in range(args.epochs):
            order = rng.permutation(n)
            bar = plexus.progress.ProgressBar(n, desc=f"epoch {epoch + 1:2d}/{args.epochs}")
            for i in range(0, n, args.batch_size):
                idx = order[i:i + args.batch_size]
                loss = float(train_step(px.constant(x_train[idx]), px.constant(y_train[idx])).numpy())
                bar.update(len(idx), loss=loss)
                step += 1
            bar.close()
            test_acc = accuracy(x_test, y_test)
            with writer.as_default(step=step):
                plexus.summary.scalar("train/loss", bar.loss)
                plexus.summary.scalar("train/samples_per_second", bar.count / max(bar.elapsed, 1e-9))
                plexus.summary.scalar("test/accuracy", test_acc)
                plexus.summary.scalar("train/learning_rate", float(schedule(px.constant(float(step))).numpy()))
        writer.flush()

        train_acc = accuracy(x_train, y_train)
        test_acc = accuracy(x_test, y_test)
        print(f"train accuracy {train_acc:.4f}, test accuracy {test_acc:.4f} "
              f"({int(round(test_acc * len(x_test)))}/{len(x_test)}), {step} steps")
        writer.close()

        # Checkpoint: the model's variables and the optimizer's step counter.
        ckpt = px.train.Checkpoint(model=model, optimizer=opt)
        path = ckpt.save(os.path.join(args.out, "checkpoints", "ckpt"))
        print(f"checkpoint: {path}")
        # Restore it into a fresh model: the same predictions.
        restored = DigitsCNN(args.seed + 1)
        px.train.Checkpoint(model=restored).restore(path)
        np.testing.assert_allclose(
            restored.probabilities(px.constant(x_test[:32])).numpy(),
            model.probabilities(px.constant(x_test[:32])).numpy(), rtol=1e-5, atol=1e-6)
        print("checkpoint restored into a fresh model: same predictions")

        # SavedModel with a serving signature, reloaded and served.
        serve = px.function(lambda images: {"probabilities": model.probabilities(images)},
                            input_signature=[px.TensorSpec([None, 8, 8, 1], px.float32, "images")])
        export_dir = os.path.join(args.out, "saved_model")
        picks = [int(np.flatnonzero(y_test == d)[0]) for d in range(10) if np.any(y_test == d)]
        sample, sample_labels = x_test[picks], y_test[picks]  # one test image per digit
        expected = predict(px.constant(sample)).numpy()
        if os.path.isdir(export_dir):  # an export of an earlier run
            shutil.rmtree(export_dir)
        px.saved_model.save(export_dir, signatures={"serving_default": serve})
        print(f"SavedModel: {export_dir}")
        loaded = px.saved_model.load(export_dir)
        out = loaded.signatures["serving_default"](images=px.constant(sample))
        got = np.asarray(out["probabilities"])
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        print("reloaded SavedModel predictions (label: predicted, probability):")
        for label, probs in zip(sample_labels, got):
            print(f"  {label}: {int(np.argmax(probs))}  {float(np.max(probs)):.3f}")

    print(f"done in {time.perf_counter() - started:.1f}s")
    if test_acc < args.min_accuracy:
        print(f"FAILED: test accuracy {test_acc:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
