"""A TFRecord image pipeline: plexus.data against tf.data and PyTorch's DataLoader, examples per second.

    PYTHONPATH=build/python build/venv/bin/python bench/peers/data_pipeline.py --threads 1 \
        --out bench/results_data_pipeline.json

The data: N JPEG images (64x64x3, random noise smoothed so JPEG has work to
do) with int64 labels, as tf.train.Example records in 4 TFRecord files,
written once by TensorFlow under bench/.cache/pipeline. Each framework runs
the same pipeline over all files for one epoch: read records, parse the
Example, decode the JPEG, convert to float32 in [0, 1], batch 64, prefetch.

- plexus: TFRecordDataset -> map(parse + decode, num_parallel_calls=T) ->
  batch -> prefetch.
- tf.data: the same with tf.io.parse_single_example and tf.io.decode_jpeg,
  num_parallel_calls=T.
- PyTorch: a map-style Dataset over the records (read up front, as PyTorch
  has no TFRecord reader; the Examples are parsed with TensorFlow's protobuf
  classes and decoded with Pillow, the usual DataLoader way) in a DataLoader
  with batch_size 64 and num_workers=T (0 when T is 1: decoding in the main
  process). Needs Pillow (`pip install pillow`); the row is skipped without it.

T is --threads (0: all CPUs). Rounds are interleaved (plexus, tf.data,
PyTorch, plexus, ...); the best round of each is kept. The ratio is
plexus / peer in examples per second (above 1: plexus is faster).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

CACHE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".cache", "pipeline")


def make_files(n, size=64, shards=4):
    import tensorflow as tf
    os.makedirs(CACHE, exist_ok=True)
    pattern = os.path.join(CACHE, f"images-{n}-*.tfrecord")
    files = sorted(glob.glob(pattern))
    if len(files) == shards:
        return files
    rng = np.random.default_rng(0)
    files = []
    per = -(-n // shards)
    for s in range(shards):
        path = os.path.join(CACHE, f"images-{n}-{s:02d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for i in range(s * per, min(n, (s + 1) * per)):
                noise = rng.uniform(0, 255, (size // 8, size // 8, 3))
                img = np.kron(noise, np.ones((8, 8, 1))).astype(np.uint8)
                jpeg = tf.io.encode_jpeg(img, quality=90).numpy()
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}))
                w.write(ex.SerializeToString())
        files.append(path)
    return files


def run_plexus(files, threads, batch):
    import plexus as px
    spec = {"image": px.io.FixedLenFeature([], px.string), "label": px.io.FixedLenFeature([], px.int64)}

    def parse(record):
        f = px.io.parse_single_example(record, spec)
        image = px.cast(px.io.decode_jpeg(f["image"], channels=3), px.float32) / 255.0
        return image, f["label"]
    ds = px.data.TFRecordDataset(files).map(parse, num_parallel_calls=threads).batch(batch).prefetch(2)
    n = 0
    start = time.perf_counter()
    for x, _ in ds:
        n += x.shape[0]
    return n / (time.perf_counter() - start)


def run_tf(files, threads, batch):
    import tensorflow as tf
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(record):
        f = tf.io.parse_single_example(record, spec)
        return tf.cast(tf.io.decode_jpeg(f["image"], channels=3), tf.float32) / 255.0, f["label"]
    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=threads).batch(batch).prefetch(2)
    n = 0
    start = time.perf_counter()
    for x, _ in ds:
        n += int(x.shape[0])
    return n / (time.perf_counter() - start)


class _TorchRecords:
    def __init__(self, records):
        self.records = records

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        import io

        import torch
        from PIL import Image
        from tensorflow.core.example import example_pb2
        ex = example_pb2.Example.FromString(self.records[i])
        jpeg = ex.features.feature["image"].bytes_list.value[0]
        label = ex.features.feature["label"].int64_list.value[0]
        img = np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"), np.float32) / 255.0
        return torch.from_numpy(img), label


def torch_records(files):
    import tensorflow as tf
    return [r.numpy() for r in tf.data.TFRecordDataset(files)]


def run_torch(records, threads, batch):
    import torch
    loader = torch.utils.data.DataLoader(_TorchRecords(records), batch_size=batch,
                                         num_workers=0 if threads == 1 else threads)
    n = 0
    start = time.perf_counter()
    for x, _ in loader:
        n += x.shape[0]
    return n / (time.perf_counter() - start)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    threads = args.threads or os.cpu_count()

    import tensorflow as tf
    import plexus as px
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    px.set_num_threads(1)  # each element's ops are small; parallelism is across elements
    files = make_files(args.images)
    try:
        import PIL  # noqa: F401
        import torch  # noqa: F401
        records = torch_records(files)
    except ImportError as e:
        print(f"PyTorch row skipped: {e}")
        records = None
    best = {"plexus": 0.0, "tf.data": 0.0, "torch DataLoader": 0.0}
    load_before = os.getloadavg()[0]
    for _ in range(args.rounds):
        best["plexus"] = max(best["plexus"], run_plexus(files, threads, args.batch_size))
        best["tf.data"] = max(best["tf.data"], run_tf(files, threads, args.batch_size))
        if records is not None:
            best["torch DataLoader"] = max(best["torch DataLoader"], run_torch(records, threads, args.batch_size))
    rows = {k: v for k, v in best.items() if v > 0}
    for k, v in rows.items():
        ratio = "" if k == "plexus" else f"  plexus / {k} = {best['plexus'] / v:.2f}"
        print(f"{k:18s} {v:9.0f} examples/s{ratio}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"threads": threads, "images": args.images, "batch_size": args.batch_size,
                       "examples_per_second": rows, "load_average_before": load_before,
                       "load_average_after": os.getloadavg()[0]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
