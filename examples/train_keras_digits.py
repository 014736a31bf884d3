#!/usr/bin/env python3
"""Trains a Keras-style CNN on scikit-learn's digits, fed by a TFRecord pipeline, with plexus.keras.

    PYTHONPATH=build/python python3 examples/train_keras_digits.py --out build/keras_digits

1. Writes the 1797 digit images (8x8, as PNG) with their labels as
   tf.train.Example records into TFRecord files (GZIP-compressed), two
   shards for training and one for testing.
2. Reads them back with plexus.data: list_files, TFRecordDataset, a traced
   map that parses each Example and decodes its PNG on C++ threads,
   shuffle, batch and prefetch.
3. Builds a Sequential CNN (Conv2D, BatchNormalization, MaxPooling2D,
   Dropout, Dense), compiles it with Adam and sparse categorical
   cross-entropy, and fits it with callbacks: ModelCheckpoint (the best
   model as .keras), EarlyStopping, ReduceLROnPlateau, CSVLogger and
   TensorBoard (OUT/logs).
4. Checks the test accuracy (exit status 1 below --min-accuracy), saves the
   model as a .keras file and exports a SavedModel, reloads both (the
   .keras with plexus.keras.load_model, the SavedModel with
   plexus.saved_model.load) and checks that their predictions equal the
   trained model's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import numpy as np

import plexus as px
from plexus import keras


def write_records(out, seed):
    """TFRecord shards of PNG digits: OUT/data/{train-0000i-of-00002,test-00000-of-00001}.tfrecord.gz."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = np.round(digits.images * (255.0 / 16.0)).astype(np.uint8)[..., None]  # [1797, 8, 8, 1]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(images))
    splits = {"test": [order[:360]], "train": np.array_split(order[360:], 2)}
    data_dir = os.path.join(out, "data")
    os.makedirs(data_dir, exist_ok=True)
    for split, shards in splits.items():
        for i, idx in enumerate(shards):
            path = os.path.join(data_dir, f"{split}-{i:05d}-of-{len(shards):05d}.tfrecord.gz")
            with px.data.TFRecordWriter(path, "GZIP") as w:
                for k in idx:
                    png = px.io.encode_png(px.constant(images[k])).numpy()
                    w.write(px.data.example({"image": png, "label": int(labels[k])}))
    return data_dir, len(order) - 360, 360


def parse(record):
    features = px.io.parse_single_example(record, {
        "image": px.io.FixedLenFeature([], px.string),
        "label": px.io.FixedLenFeature([], px.int64)})
    image = px.io.decode_png(features["image"], channels=1)
    image = px.cast(px.reshape(image, [8, 8, 1]), px.float32) / 255.0
    return image, px.cast(features["label"], px.int32)


def dataset(data_dir, split, batch_size, shuffle, seed):
    files = px.data.Dataset.list_files(os.path.join(data_dir, f"{split}-*.tfrecord.gz"), shuffle=False)
    ds = px.data.TFRecordDataset(files, compression_type="GZIP")
    ds = ds.map(parse, num_parallel_calls=px.data.AUTOTUNE)
    if shuffle:
        ds = ds.cache().shuffle(2048, seed=seed)
    return ds.batch(batch_size).prefetch(px.data.AUTOTUNE)


def build_model():
    L = keras.layers
    return keras.Sequential([
        keras.Input((8, 8, 1), name="images"),
        L.Conv2D(16, 3, padding="same", activation="relu"),
        L.BatchNormalization(),
        L.MaxPooling2D(),
        L.Conv2D(32, 3, padding="same", activation="relu"),
        L.MaxPooling2D(),
        L.Flatten(),
        L.Dropout(0.2),
        L.Dense(64, activation="relu"),
        L.Dense(10),
    ], name="digits_cnn")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join("build", "keras_digits"), help="output directory")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-accuracy", type=float, default=0.95)
    args = p.parse_args(argv)

    started = time.perf_counter()
    np.random.seed(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    print(f"plexus {px.__version__}, device {px.default_device() or 'CPU:0'}")
    data_dir, n_train, n_test = write_records(args.out, args.seed)
    print(f"digits: {n_train} training and {n_test} test images written as TFRecords to {data_dir}")
    train = dataset(data_dir, "train", args.batch_size, True, args.seed)
    test = dataset(data_dir, "test", 128, False, args.seed)

    model = build_model()
    model.compile(keras.optimizers.Adam(args.learning_rate),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.summary()
    best_path = os.path.join(args.out, "best.keras")
    callbacks = [
        keras.callbacks.ModelCheckpoint(best_path, monitor="val_accuracy", save_best_only=True),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=6, restore_best_weights=True),
        keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2),
        keras.callbacks.CSVLogger(os.path.join(args.out, "training.csv")),
        keras.callbacks.TensorBoard(os.path.join(args.out, "logs")),
    ]
    model.fit(train, validation_data=test, epochs=args.epochs, callbacks=callbacks, verbose=2)
    loss, accuracy = model.evaluate(test, verbose=0)
    print(f"test loss {loss:.4f}, test accuracy {accuracy:.4f}")

    x_test = np.concatenate([x.numpy() for x, _ in test])
    want = model.predict(x_test, verbose=0)
    keras_path = os.path.join(args.out, "digits.keras")
    model.save(keras_path)
    saved_dir = os.path.join(args.out, "saved_model")
    model.export(saved_dir, verbose=False)
    reloaded = keras.models.load_model(keras_path)
    from_keras = reloaded.predict(x_test, verbose=0)
    served = px.saved_model.load(saved_dir)
    from_saved = served.signatures["serving_default"](px.constant(x_test))
    from_saved = next(iter(from_saved.values())).numpy() if isinstance(from_saved, dict) else from_saved.numpy()
    print(f"saved {keras_path} and {saved_dir}; reloaded both: max |difference| "
          f"{np.abs(from_keras - want).max():.2e} (.keras), {np.abs(from_saved - want).max():.2e} (SavedModel)")
    ok = accuracy >= args.min_accuracy and np.allclose(from_keras, want, atol=1e-5) and np.allclose(
        from_saved, want, atol=1e-4)
    print(f"{'OK' if ok else 'FAILED'} in {time.perf_counter() - started:.1f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
