#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora, tests/fuzz/corpus/<target>/.

Seeds come from the real test data in tests/data (small frozen graphs,
SavedModels, checkpoints, WAV files) and from files this script makes with
NumPy and TensorFlow (.npy of every dtype and layout, tf.Examples, TFRecords
with each compression, random bytes for the op fuzzers). Every file is at
most 64 KiB; the corpus is committed, so CI needs neither TensorFlow nor
../shared. Run it from anywhere with a Python that has NumPy and
TensorFlow (build/venv):

    build/venv/bin/python tests/fuzz/make_corpus.py

The input formats (a kSplit marker between files, trailing bytes that pick
options) are those of the targets' sources in this folder.
"""

import hashlib
import io
import os
import random
import shutil
import struct
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "tests" / "data"
CORPUS = HERE / "corpus"
SPLIT = b"PXFUZZSPLIT"
MAX_FILE = 64 * 1024
MAX_PER_TARGET = 40


class Target:
    def __init__(self, name):
        self.name = name
        self.dir = CORPUS / name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.count = 0

    def add(self, data, limit=MAX_PER_TARGET):
        if len(data) > MAX_FILE or self.count >= limit:
            return False
        digest = hashlib.sha1(data).hexdigest()[:16]
        path = self.dir / digest
        if path.exists():
            return False
        path.write_bytes(data)
        self.count += 1
        return True


def small_files(pattern, exclude=()):
    files = [p for p in sorted(DATA.rglob(pattern))
             if p.stat().st_size <= MAX_FILE and not any(x in str(p) for x in exclude)]
    # Spread the picks over the tree rather than taking one folder's files.
    random.Random(27).shuffle(files)
    return files


def graph_targets():
    binary, text = Target("graphdef_binary"), Target("graphdef_text")
    from tensorflow.core.framework import graph_pb2
    from google.protobuf import text_format
    for path in small_files("*.pb", exclude=("saved_model.pb", "fingerprint.pb")):
        data = path.read_bytes()
        if not binary.add(data):
            continue
        graph = graph_pb2.GraphDef()
        try:
            graph.ParseFromString(data)
        except Exception:
            continue
        text.add(text_format.MessageToString(graph).encode())
    for path in small_files("*.pbtxt"):
        text.add(path.read_bytes())


def saved_model_targets():
    plain, split, ckpt = Target("saved_model"), Target("saved_model_split"), Target("checkpoint")
    for model in small_files("saved_model.pb"):
        pb = model.read_bytes()
        plain.add(pb)
        variables = model.parent / "variables"
        index = variables / "variables.index"
        shard = variables / "variables.data-00000-of-00001"
        if index.exists() and shard.exists():
            split.add(pb + SPLIT + index.read_bytes() + SPLIT + shard.read_bytes())
            ckpt.add(index.read_bytes() + SPLIT + shard.read_bytes())
        else:
            split.add(pb)


def npy_target():
    import numpy as np
    t = Target("npy")
    arrays = [np.float32(1.5), np.arange(6, dtype=np.float32).reshape(2, 3),
              np.zeros((0, 3), np.float64), np.array([True, False]),
              np.arange(4, dtype=np.float16), np.array([[1, 2], [3, 4]], np.int64, order="F"),
              np.arange(3, dtype=">i4"), np.arange(5, dtype=np.uint8), np.arange(4, dtype=np.int8),
              np.arange(4, dtype=np.int16), np.arange(4, dtype=np.uint16), np.arange(2, dtype=np.uint32),
              np.arange(2, dtype=np.uint64), np.array([1 + 2j], np.complex64),
              np.array([1 - 1j], np.complex128), np.ones((2, 1, 2, 1), np.float32),
              np.array(["ab", "c"]), np.array([b"xy"])]
    for a in arrays:
        for version in [(1, 0), (2, 0), (3, 0)]:
            buf = io.BytesIO()
            try:
                np.lib.format.write_array(buf, a, version=version)
            except ValueError:
                continue
            t.add(buf.getvalue())
    for path in small_files("*.npy")[:8]:
        t.add(path.read_bytes())


def example_target():
    import tensorflow as tf
    t = Target("example")
    f = tf.train.Feature
    rng = random.Random(27)
    for spec in range(20):  # the last byte picks the feature spec (example.cc)
        examples = []
        for _ in range(rng.randint(1, 3)):
            feats = {
                "f": f(float_list=tf.train.FloatList(value=[rng.random() for _ in range(rng.choice([1, 3, 4]))])),
                "i": f(int64_list=tf.train.Int64List(value=[rng.randint(-5, 5) for _ in range(rng.choice([1, 2, 4]))])),
                "s": f(bytes_list=tf.train.BytesList(value=[b"abc"] * rng.choice([1, 2]))),
                "sf": f(float_list=tf.train.FloatList(value=[1.0, 2.0])),
                "si": f(int64_list=tf.train.Int64List(value=[7])),
                "ss": f(bytes_list=tf.train.BytesList(value=[b"x", b"yz"])),
            }
            for drop in rng.sample(sorted(feats), rng.randint(0, 2)):
                del feats[drop]
            examples.append(tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString())
        t.add(SPLIT.join(examples) + bytes([spec]))


def wav_bytes(channels, width, rate, frames, rng):
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(bytes(rng.randrange(256) for _ in range(frames * channels * width)))
    return buf.getvalue()


def wav_target():
    t = Target("wav")
    rng = random.Random(27)
    # Two trailing bytes pick desired_channels and desired_samples (wav.cc);
    # 0 keeps the file's own.
    tail = bytes([0, 0])
    for path in small_files("*.wav"):
        t.add(path.read_bytes() + tail)
    for channels in (1, 2, 3):
        for width in (1, 2, 3, 4):
            t.add(wav_bytes(channels, width, 16000, 40, rng) + tail)
    t.add(wav_bytes(1, 2, 16000, 0, rng) + tail)
    t.add(wav_bytes(2, 2, 8000, 30, rng) + bytes([220, 210]))


def tfrecord_target():
    import tensorflow as tf
    t = Target("tfrecord")
    tmp = HERE / ".tfrecord.tmp"
    rng = random.Random(27)
    for selector, compression in enumerate(["", "ZLIB", "GZIP"]):  # last byte (tfrecord.cc)
        for n in (0, 1, 3):
            with tf.io.TFRecordWriter(str(tmp), options=compression) as w:
                for _ in range(n):
                    w.write(bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))))
            t.add(tmp.read_bytes() + bytes([selector]))
    tmp.unlink()


def random_targets():
    rng = random.Random(27)
    for name in ("shape_fns", "eager_ops"):
        t = Target(name)
        for _ in range(MAX_PER_TARGET):
            t.add(bytes(rng.randrange(256) for _ in range(rng.randint(16, 512))))


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    graph_targets()
    saved_model_targets()
    npy_target()
    example_target()
    wav_target()
    tfrecord_target()
    random_targets()
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    for d in sorted(CORPUS.iterdir()):
        files = list(d.iterdir())
        print(f"{d.name:20s} {len(files):3d} files {sum(f.stat().st_size for f in files):8d} bytes")
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
