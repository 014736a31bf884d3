"""Model.fit throughput: plexus.keras against Keras 3 on TensorFlow, same model, data and batches.

    PYTHONPATH=build/python build/venv/bin/python bench/peers/keras_fit.py --threads 1 \
        --out bench/results_keras_fit.json

For each model (an MLP on 784 features, a small CNN on 28x28x1 images, an
LSTM over 32 steps), both frameworks build the same architecture from the
same weights, compile with Adam and sparse categorical cross-entropy, and
run `fit` for one warm-up epoch (tracing) and then timed epochs, in
interleaved rounds (plexus, TensorFlow, plexus, ...) so that drift on the
machine hits both alike. The best round's steps per second is kept for each;
the ratio is plexus / TensorFlow (above 1: plexus is faster). `--threads`
sets both frameworks' intra-op threads (0: all CPUs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402


def build(K, kind):
    L = K.layers
    if kind == "mlp":
        return K.Sequential([K.Input((784,)), L.Dense(256, activation="relu"), L.Dense(128, activation="relu"),
                             L.Dense(10)])
    if kind == "cnn":
        return K.Sequential([K.Input((28, 28, 1)), L.Conv2D(16, 3, padding="same", activation="relu"),
                             L.MaxPooling2D(), L.Conv2D(32, 3, padding="same", activation="relu"), L.MaxPooling2D(),
                             L.Flatten(), L.Dense(64, activation="relu"), L.Dense(10)])
    if kind == "lstm":
        return K.Sequential([K.Input((32, 16)), L.LSTM(64), L.Dense(10)])
    raise ValueError(kind)


def data(kind, n):
    rng = np.random.default_rng(0)
    shape = {"mlp": (784,), "cnn": (28, 28, 1), "lstm": (32, 16)}[kind]
    return rng.standard_normal((n,) + shape).astype(np.float32), rng.integers(0, 10, n).astype(np.int32)


def timed_fit(model, x, y, batch_size, epochs):
    start = time.perf_counter()
    model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
    return (time.perf_counter() - start) / (epochs * (len(x) // batch_size))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="mlp,cnn,lstm")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--samples", type=int, default=2048)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)

    import tensorflow as tf
    import keras
    import plexus as px
    from plexus import keras as pk
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        px.set_num_threads(args.threads)

    results = {"threads": args.threads, "batch_size": args.batch_size, "load_average": os.getloadavg()[0],
               "models": {}}
    for kind in args.models.split(","):
        x, y = data(kind, args.samples)
        km, pm = build(keras, kind), build(pk, kind)
        pm.set_weights(km.get_weights())
        for m, K in ((km, keras), (pm, pk)):
            m.compile(K.optimizers.Adam(1e-3), K.losses.SparseCategoricalCrossentropy(from_logits=True))
            m.fit(x[:args.batch_size * 4], y[:args.batch_size * 4], batch_size=args.batch_size, epochs=1,
                  shuffle=False, verbose=0)
        best = {"plexus": float("inf"), "tensorflow": float("inf")}
        for _ in range(args.rounds):
            best["plexus"] = min(best["plexus"], timed_fit(pm, x, y, args.batch_size, 1))
            best["tensorflow"] = min(best["tensorflow"], timed_fit(km, x, y, args.batch_size, 1))
        row = {"plexus_steps_per_s": 1 / best["plexus"], "tensorflow_steps_per_s": 1 / best["tensorflow"],
               "ratio": best["tensorflow"] / best["plexus"]}
        results["models"][kind] = row
        print(f"{kind:5s} plexus {row['plexus_steps_per_s']:8.1f} steps/s  tensorflow "
              f"{row['tensorflow_steps_per_s']:8.1f} steps/s  ratio {row['ratio']:.2f}", flush=True)
    results["load_average_after"] = os.getloadavg()[0]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
