#!/usr/bin/env python3
"""Trains the digits CNN of train_digits.py data-parallel on several processes.

    plexus-run --nproc 2 examples/train_digits_distributed.py --out build/digits_dp
    python -m plexus.distribute.run --nproc 2 examples/train_digits_distributed.py   # the same
    python3 examples/train_digits_distributed.py                                     # one process

Each rank builds the model inside MultiWorkerMirroredStrategy.scope() (from
a different seed: the scope gives every rank rank 0's initial weights),
takes its share of every global batch (--batch-size per rank), and runs a
traced train step whose gradients DistributedOptimizer averages over the
ranks (a CollectiveReduceV2 node per bucket). Every rank ends with the same
weights, checked bitwise; rank 0 prints progress, checks the test accuracy
(exit status 1 below --min-accuracy) and writes a checkpoint that every rank
restores and re-checks.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

import numpy as np

import plexus as px
import plexus.distribute as dist
import plexus.progress

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_digits import DigitsCNN, load_data  # noqa: E402


def weights_digest(variables):
    h = hashlib.sha256()
    for v in variables:
        h.update(np.ascontiguousarray(v.numpy()).tobytes())
    return int(h.hexdigest()[:15], 16)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join("build", "digits_dp"), help="output directory (checkpoint)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32, help="examples per rank and step")
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-accuracy", type=float, default=0.95)
    args = p.parse_args(argv)

    strategy = dist.MultiWorkerMirroredStrategy()
    rank, world = dist.rank(), strategy.num_replicas_in_sync
    x_train, y_train, x_test, y_test = load_data(args.seed)
    global_batch = args.batch_size * world
    steps_per_epoch = len(x_train) // global_batch  # whole global batches only, so every rank gets a share
    if rank == 0:
        print(f"digits: {world} rank(s), {args.batch_size} examples each per step "
              f"(global batch {global_batch}), {steps_per_epoch} steps per epoch")

    with strategy.scope():
        model = DigitsCNN(args.seed + rank)
    variables = model.trainable_variables
    schedule = px.optimizers.ExponentialDecay(args.learning_rate, args.epochs * steps_per_epoch, 0.1)
    opt = dist.DistributedOptimizer(px.optimizers.Adam(schedule))

    @px.function
    def train_step(images, labels):
        with px.GradientTape() as tape:
            losses, _ = px.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=model.logits(images), labels=labels)
            loss = px.reduce_mean(losses)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    @px.function
    def predict(images):
        return model.probabilities(images)

    def accuracy(images, labels):
        return float(np.mean(np.argmax(predict(px.constant(images)).numpy(), axis=1) == labels))

    rng = np.random.default_rng(args.seed)  # the same order on every rank
    start = time.monotonic()
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))[:steps_per_epoch * global_batch]
        batches = [(x_train[order[i:i + global_batch]], y_train[order[i:i + global_batch]])
                   for i in range(0, len(order), global_batch)]
        bar = plexus.progress.ProgressBar(len(order), desc=f"epoch {epoch + 1:2d}/{args.epochs}") if rank == 0 else None
        for images, labels in strategy.experimental_distribute_dataset(batches):
            loss = strategy.run(train_step, args=(px.constant(images), px.constant(labels)))
            mean_loss = float(strategy.reduce("mean", loss).numpy())
            if bar is not None:
                bar.update(global_batch, loss=mean_loss)
        if bar is not None:
            bar.close()
    seconds = time.monotonic() - start

    digests = dist.all_gather(np.array([weights_digest(variables)], np.int64)).numpy()
    if len(set(digests.tolist())) != 1:
        print(f"FAILED: rank {rank}: the ranks' weights differ: {digests.tolist()}", file=sys.stderr)
        return 1
    test_acc = accuracy(x_test, y_test)
    if rank == 0:
        print(f"train accuracy {accuracy(x_train, y_train):.4f}, test accuracy {test_acc:.4f} "
              f"({seconds:.1f} s on {world} rank(s); weights identical on every rank)")
    ckpt = px.train.Checkpoint(**{f"v{i}": v for i, v in enumerate(variables)})
    path = dist.save_checkpoint(ckpt, os.path.join(args.out, "ckpt"))
    for v in variables:
        v.assign(px.zeros_like(v.read_value()))
    dist.restore_checkpoint(ckpt, path)
    restored = accuracy(x_test, y_test)
    if restored != test_acc:
        print(f"FAILED: rank {rank}: accuracy after restoring {path} is {restored}, not {test_acc}", file=sys.stderr)
        return 1
    if rank == 0:
        print(f"checkpoint {path}: restored on every rank, same accuracy")
    if test_acc < args.min_accuracy:
        print(f"FAILED: test accuracy {test_acc:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
