"""plexus.data against tf.data: file caches, parallel interleave over TFRecord files, traced maps of nested
elements, and plexus.io's TFRecord names."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import errors  # noqa: E402
from plexus.data.mapping import UserFunction  # noqa: E402

D = px.data


def _np(structure):
    if isinstance(structure, dict):
        return {k: _np(v) for k, v in structure.items()}
    if isinstance(structure, (tuple, list)):
        return tuple(_np(v) for v in structure)
    return np.asarray(structure.numpy())


def _same(ours, theirs):
    a, b = [_np(e) for e in ours], [_np(e) for e in theirs]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_equal(x, y)


def _spec_text(spec):
    if isinstance(spec, dict):
        return {k: _spec_text(v) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        return tuple(_spec_text(v) for v in spec)
    shape = spec.shape.as_list() if hasattr(spec.shape, "as_list") else list(spec.shape)
    return shape, spec.dtype.name


WORDS = np.array([b"a", b"bb", b"", b"dddd", b"e", b"ff"], dtype=object)


def test_file_cache_written_once_and_reused(tmp_path):
    calls = []

    def gen():
        for i in range(6):
            calls.append(i)
            yield {"x": np.full([2], i, np.float32), "w": WORDS[i]}, np.int64(i)
    source = D.Dataset.from_generator(gen, output_signature=(
        {"x": px.TensorSpec([2], px.float32), "w": px.TensorSpec([], px.string)}, px.TensorSpec([], px.int64)))
    ds = source.map(lambda d, i: ({"x": d["x"] * 2.0, "w": d["w"]}, i + 1)).cache(str(tmp_path / "c"))
    first = list(ds.as_numpy_iterator())
    assert len(calls) == 6 and os.listdir(tmp_path) == ["c.pxcache"]
    second = list(ds.as_numpy_iterator())
    assert len(calls) == 6  # read from the file
    np.testing.assert_equal(first, second)
    assert second[3][0]["w"] == b"dddd" and second[3][1] == 4
    # A new dataset with the same file name reads the file (as tf.data does), and matches tf.data.
    again = D.Dataset.range(0).map(lambda i: ({"x": px.fill([2], 0.0), "w": px.constant(b"")}, i)).cache(
        str(tmp_path / "c"))
    np.testing.assert_equal(list(again.as_numpy_iterator()), first)
    want = tf.data.Dataset.from_generator(gen, output_signature=(
        {"x": tf.TensorSpec([2], tf.float32), "w": tf.TensorSpec([], tf.string)}, tf.TensorSpec([], tf.int64))).map(
        lambda d, i: ({"x": d["x"] * 2.0, "w": d["w"]}, i + 1)).cache(str(tmp_path / "tf"))
    _same(list(ds), list(want))


def test_file_cache_partial_iteration_and_damage(tmp_path):
    path = str(tmp_path / "c")
    ds = D.Dataset.range(100).batch(7).cache(path)
    it = iter(ds)
    next(it)
    it.close()
    assert os.listdir(tmp_path) == []  # an iteration stopped early leaves no cache
    assert [int(b.numpy()[-1]) for b in ds] == [int(b.numpy()[-1]) for b in ds] == list(range(6, 100, 7)) + [99]
    data = bytearray((tmp_path / "c.pxcache").read_bytes())
    data[60] ^= 1
    (tmp_path / "c.pxcache").write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError, match="c.pxcache"):
        list(ds)
    empty = D.Dataset.range(0).cache(str(tmp_path / "e"))
    assert list(empty) == list(empty) == []


def _write_files(tmp_path, mod, n_files=3, n_records=(5, 2, 7)):
    names = []
    for f in range(n_files):
        name = str(tmp_path / f"part-{f}.tfrecord")
        with mod.TFRecordWriter(name) as w:
            for r in range(n_records[f]):
                w.write(f"file{f}-record{r}".encode())
        names.append(name)
    return names


@pytest.mark.parametrize("cycle,block,parallel", [(2, 3, 2), (3, 1, D.AUTOTUNE), (1, 2, None), (4, 2, 3)])
def test_parallel_interleave_of_files_matches_tf(tmp_path, cycle, block, parallel):
    _write_files(tmp_path, D)
    pattern = str(tmp_path / "part-*.tfrecord")

    def build(d):
        return d.Dataset.list_files(pattern, shuffle=False).interleave(
            lambda f: d.TFRecordDataset(f), cycle_length=cycle, block_length=block, num_parallel_calls=parallel)
    ours, theirs = build(D), build(tf.data)
    assert _spec_text(ours.element_spec) == _spec_text(theirs.element_spec)
    _same(list(ours), list(theirs))


def test_interleave_spec_lets_map_trace():
    ds = D.Dataset.range(1, 4).interleave(lambda i: D.Dataset.from_tensor_slices(
        {"v": np.arange(6, dtype=np.float32).reshape(3, 2)}), cycle_length=2)
    assert _spec_text(ds.element_spec) == {"v": ([2], "float32")}
    assert UserFunction(lambda e: e["v"] * 2.0, ds.element_spec, "map").traced
    mapped = ds.map(lambda e: e["v"] * 2.0, num_parallel_calls=2).batch(2, drop_remainder=True)
    assert _spec_text(mapped.element_spec) == ([2, 2], "float32")
    assert len(list(mapped)) == 4
    # An interleave stopped early stops the threads of its open inner datasets.
    it = iter(D.Dataset.range(3).interleave(lambda i: D.Dataset.range(100).repeat(), cycle_length=3,
                                            num_parallel_calls=3))
    assert [int(next(it).numpy()) for _ in range(4)] == [0, 0, 0, 1]
    it.close()


def test_maps_of_nested_elements_are_traced_and_match_tf():
    data = {"b": np.arange(6, dtype=np.int64), "a": WORDS}

    def fn(mod):
        return lambda e, y: ({"z": e["b"] * 2, "a": e["a"]}, y * 2.0, 3)

    def build(d, **kw):
        mod = px if d is D else tf
        return d.Dataset.from_tensor_slices((data, np.ones([6, 2], np.float32))).map(fn(mod), **kw)
    ours = build(D)
    assert UserFunction(fn(px), D.Dataset.from_tensor_slices((data, np.ones([6, 2], np.float32))).element_spec,
                        "map").traced
    theirs = build(tf.data)
    assert _spec_text(ours.element_spec) == _spec_text(theirs.element_spec)
    _same(list(ours), list(theirs))
    _same(list(build(D, num_parallel_calls=3)), list(theirs))
    kept = D.Dataset.from_tensor_slices(data).filter(lambda e: e["b"] % 2 == 1)
    assert [e["a"] for e in kept.as_numpy_iterator()] == [b"bb", b"dddd", b"ff"]


def test_io_tfrecord_names(tmp_path):
    path = str(tmp_path / "x.tfrecord.gz")
    with px.io.TFRecordWriter(path, px.io.TFRecordOptions(compression_type="GZIP")) as w:
        w.write(px.constant(b"tensor record"))
        w.write(b"bytes record")
        w.write("text record")
    want = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type="GZIP")]
    assert want == [b"tensor record", b"bytes record", b"text record"]
    assert list(D.TFRecordDataset(path, "GZIP").as_numpy_iterator()) == want
