"""plexus.data against tf.data: sources, transformations, TFRecord files and tf.train.Example parsing."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import plexus as px  # noqa: E402
from plexus import errors  # noqa: E402

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
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        elif isinstance(x, tuple):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(x, y)


def _both(build):
    return build(D), build(tf.data)


X = np.arange(40, dtype=np.float32).reshape(10, 4)
Y = np.arange(10, dtype=np.int64)


@pytest.mark.parametrize("name,build", [
    ("slices", lambda d: d.Dataset.from_tensor_slices((X, Y))),
    ("dict", lambda d: d.Dataset.from_tensor_slices({"x": X, "y": Y}).batch(3)),
    ("batch_drop", lambda d: d.Dataset.from_tensor_slices(X).batch(4, drop_remainder=True)),
    ("range_map", lambda d: d.Dataset.range(7).map(lambda i: i * 2)),
    ("map_tuple", lambda d: d.Dataset.from_tensor_slices((X, Y)).map(lambda x, y: (x * 2.0, y + 1))),
    ("parallel_map", lambda d: d.Dataset.range(50).map(lambda i: i * i, num_parallel_calls=4)),
    ("filter", lambda d: d.Dataset.range(20).filter(lambda i: i % 3 == 0)),
    ("take_skip_repeat", lambda d: d.Dataset.range(5).repeat(3).skip(2).take(9)),
    ("unbatch", lambda d: d.Dataset.from_tensor_slices(X).batch(3).unbatch()),
    ("zip_enumerate", lambda d: d.Dataset.zip((d.Dataset.range(4), d.Dataset.range(10, 20))).enumerate(5)),
    ("from_tensors", lambda d: d.Dataset.from_tensors(X)),
    ("cache_repeat", lambda d: d.Dataset.range(4).map(lambda i: i + 1).cache().repeat(2)),
    ("prefetch", lambda d: d.Dataset.range(30).batch(7).prefetch(2)),
    ("interleave", lambda d: d.Dataset.range(1, 5).interleave(
        lambda i: d.Dataset.range(i * 10, i * 10 + i), cycle_length=2, block_length=2)),
    ("interleave3", lambda d: d.Dataset.range(6).interleave(
        lambda i: d.Dataset.range(i).map(lambda j: j + 10 * i), cycle_length=3, block_length=1)),
])
def test_matches_tf_data(name, build):
    ours, theirs = _both(build)
    _same(list(ours), list(theirs))
    if int(theirs.cardinality()) >= 0:
        assert ours.cardinality() == int(theirs.cardinality())


def test_padded_batch_matches_tf():
    def build(d):
        return d.Dataset.range(1, 6).map(lambda n: d_fill(d, n)).padded_batch(2, padded_shapes=[None],
                                                                                padding_values=np.int64(-1))

    def d_fill(d, n):
        mod = px if d is D else tf
        return mod.fill([n], n)
    ours, theirs = _both(build)
    got, want = [b.numpy() for b in ours], [b.numpy() for b in theirs]
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_shuffle_is_a_reproducible_permutation():
    a = [int(v.numpy()) for v in D.Dataset.range(100).shuffle(30, seed=7)]
    b = [int(v.numpy()) for v in D.Dataset.range(100).shuffle(30, seed=7)]
    assert sorted(a) == list(range(100)) and a == b and a != list(range(100))
    ds = D.Dataset.range(20).shuffle(20, seed=1)
    assert [int(v.numpy()) for v in ds] != [int(v.numpy()) for v in ds]  # reshuffled each iteration
    fixed = D.Dataset.range(20).shuffle(20, seed=1, reshuffle_each_iteration=False)
    assert [int(v.numpy()) for v in fixed] == [int(v.numpy()) for v in fixed]


def test_cardinality_and_len():
    assert D.Dataset.range(10).batch(3).cardinality() == 4
    assert D.Dataset.range(10).batch(3, drop_remainder=True).cardinality() == 3
    assert D.Dataset.range(10).repeat().cardinality() == D.INFINITE_CARDINALITY
    assert D.Dataset.range(10).filter(lambda i: i > 2).cardinality() == D.UNKNOWN_CARDINALITY
    assert len(D.Dataset.range(10).take(4)) == 4
    with pytest.raises(TypeError, match="infinite"):
        len(D.Dataset.range(3).repeat())


def test_from_generator_and_eager_fallback():
    def gen():
        for i in range(4):
            yield np.full([2], i, np.float32), b"x" * i
    ds = D.Dataset.from_generator(gen, output_signature=(px.TensorSpec([2], px.float32),
                                                        px.TensorSpec([], px.string)))
    # .numpy() inside the function cannot be traced: it runs eagerly instead.
    out = list(ds.map(lambda v, s: (v + float(v.numpy().sum()), s)))
    assert [float(o[0].numpy()[0]) for o in out] == [0.0, 3.0, 6.0, 9.0]
    assert out[3][1].numpy().item() == b"xxx"


def _tf_records(path, records, compression=None):
    with tf.io.TFRecordWriter(str(path), options=compression) as w:
        for r in records:
            w.write(r)


RECORDS = [os.urandom(n) for n in (0, 1, 7, 100, 5000)] + [b"hello"]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_both_ways(tmp_path, compression):
    theirs = tmp_path / "tf.tfrecord"
    _tf_records(theirs, RECORDS, compression)
    got = [r.numpy().item() for r in D.TFRecordDataset(str(theirs), compression_type=compression)]
    assert got == RECORDS
    ours = tmp_path / "ours.tfrecord"
    with D.TFRecordWriter(ours, compression) as w:
        for r in RECORDS:
            w.write(r)
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(ours), compression_type=compression)] == RECORDS
    if compression is None:
        assert ours.read_bytes() == theirs.read_bytes()
    elif compression == "GZIP":
        assert gzip.decompress(ours.read_bytes()) == gzip.decompress(theirs.read_bytes())
    else:
        assert zlib.decompress(ours.read_bytes()) == zlib.decompress(theirs.read_bytes())


def test_corrupt_tfrecords_are_named(tmp_path):
    path = tmp_path / "good.tfrecord"
    _tf_records(path, [b"a" * 10, b"b" * 20, b"c" * 30])
    data = bytearray(path.read_bytes())
    second = 12 + 10 + 4  # the second record's offset
    cases = {"length": second + 2, "data": second + 12 + 5}
    for what, at in cases.items():
        bad = bytearray(data)
        bad[at] ^= 0xFF
        p = tmp_path / f"bad_{what}.tfrecord"
        p.write_bytes(bytes(bad))
        with pytest.raises(errors.DataLossError, match=f"bad_{what}.tfrecord.*byte offset {second}"):
            list(D.TFRecordDataset(str(p)))
    p = tmp_path / "truncated.tfrecord"
    p.write_bytes(bytes(data[:-7]))
    with pytest.raises(errors.DataLossError, match="truncated.tfrecord: truncated record at byte offset 62"):
        list(D.TFRecordDataset(str(p)))
    # The records before the damage are delivered first.
    it = iter(D.TFRecordDataset(str(p)))
    assert next(it).numpy().item() == b"a" * 10
    with pytest.raises(errors.NotFoundError, match="missing.tfrecord"):
        list(D.TFRecordDataset(str(tmp_path / "missing.tfrecord")))


def test_examples_both_ways_and_parsing_in_map(tmp_path):
    spec_tf = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64),
               "s": tf.io.FixedLenFeature([], tf.string), "d": tf.io.FixedLenFeature([], tf.int64, default_value=-5)}
    spec_px = {"x": px.io.FixedLenFeature([2], px.float32), "y": px.io.FixedLenFeature([], px.int64),
               "s": px.io.FixedLenFeature([], px.string), "d": px.io.FixedLenFeature([], px.int64, default_value=-5)}
    ours = [D.example({"x": [i, i + 0.5], "y": -i, "s": f"s{i}"}) for i in range(6)]
    for i, e in enumerate(ours):
        parsed = tf.io.parse_single_example(e, spec_tf)
        assert parsed["y"].numpy() == -i and parsed["s"].numpy() == f"s{i}".encode()
        assert parsed["d"].numpy() == -5
    path = tmp_path / "ex.tfrecord"
    _tf_records(path, ours)
    ds = D.TFRecordDataset(str(path)).map(lambda r: px.io.parse_single_example(r, spec_px),
                                          num_parallel_calls=3).batch(4)
    batches = list(ds)
    np.testing.assert_array_equal(batches[0]["y"].numpy(), [0, -1, -2, -3])
    np.testing.assert_array_equal(batches[1]["x"].numpy(), [[4, 4.5], [5, 5.5]])
    assert list(batches[1]["s"].numpy()) == [b"s4", b"s5"]


def test_png_pipeline_in_parallel(tmp_path):
    images = (np.arange(12 * 8 * 8 * 3) % 251).astype(np.uint8).reshape(12, 8, 8, 3)
    path = tmp_path / "img.tfrecord"
    with D.TFRecordWriter(path, "GZIP") as w:
        for i, img in enumerate(images):
            w.write(D.example({"png": tf.io.encode_png(img).numpy(), "label": i}))
    spec = {"png": px.io.FixedLenFeature([], px.string), "label": px.io.FixedLenFeature([], px.int64)}

    def parse(r):
        f = px.io.parse_single_example(r, spec)
        return px.cast(px.io.decode_png(f["png"], channels=3), px.float32) / 255.0, f["label"]
    files = D.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    ds = D.TFRecordDataset(files, compression_type="GZIP").map(parse, num_parallel_calls=D.AUTOTUNE).batch(5)
    got = list(ds)
    assert [int(b[0].shape[0]) for b in got] == [5, 5, 2]
    np.testing.assert_allclose(np.concatenate([b[0].numpy() for b in got]), images / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in got]), np.arange(12))


def test_fit_takes_a_dataset():
    from plexus import keras
    x = np.random.default_rng(0).standard_normal((64, 5)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    ds = D.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=1).batch(16).prefetch(2)
    m = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])
    m.compile(keras.optimizers.Adam(0.05), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    h = m.fit(ds, epochs=15, verbose=0, validation_data=D.Dataset.from_tensor_slices((x, y)).batch(32))
    assert h.history["accuracy"][-1] > 0.9 and len(h.history["val_loss"]) == 15


def test_a_failing_element_is_an_error_naming_the_op():
    records = [D.example({"png": tf.io.encode_png(np.zeros((2, 2, 1), np.uint8)).numpy()}),
               D.example({"png": b"not a png"})] * 20
    spec = {"png": px.io.FixedLenFeature([], px.string)}
    ds = D.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(
        lambda r: px.io.decode_png(px.io.parse_single_example(r, spec)["png"]), num_parallel_calls=2)
    with pytest.raises(errors.InvalidArgumentError, match="DecodePng"):
        list(ds)


def test_var_len_features_match_tf():
    # Empty NumPy arrays write empty lists of their dtype's kind.
    records = [D.example({"v": np.array([3, 1, 4][:i], np.int64), "f": [0.5] * (2 - i % 2),
                          "s": np.array([b"a", b"bc"][:i % 3], dtype=object)}) for i in range(4)]
    # Examples without the feature at all: no values for that record.
    records.append(D.example({"f": [1.0]}))
    spec_tf = {"v": tf.io.VarLenFeature(tf.int64), "f": tf.io.VarLenFeature(tf.float32),
               "s": tf.io.VarLenFeature(tf.string)}
    spec_px = {"v": px.io.VarLenFeature(px.int64), "f": px.io.VarLenFeature(px.float32),
               "s": px.io.VarLenFeature(px.string)}

    def check(ours, theirs):
        for k in spec_tf:
            np.testing.assert_array_equal(ours[k].indices.numpy(), theirs[k].indices.numpy())
            np.testing.assert_array_equal(ours[k].values.numpy(), theirs[k].values.numpy())
            np.testing.assert_array_equal(ours[k].dense_shape.numpy(), theirs[k].dense_shape.numpy())
            np.testing.assert_array_equal(ours[k].to_dense().numpy(), tf.sparse.to_dense(theirs[k]).numpy())
    check(px.io.parse_example(px.constant(np.array(records, dtype=object)), spec_px),
          tf.io.parse_example(tf.constant(records), spec_tf))
    for r in records:
        check(px.io.parse_single_example(px.constant(r), spec_px), tf.io.parse_single_example(r, spec_tf))
    # Traced in a map: the dense form batches.
    ds = D.Dataset.from_tensor_slices(np.array(records, dtype=object)).batch(5).map(
        lambda r: px.io.parse_example(r, spec_px)["v"].to_dense(-1))
    want = tf.sparse.to_dense(tf.io.parse_example(tf.constant(records), spec_tf)["v"], default_value=-1)
    np.testing.assert_array_equal(next(iter(ds)).numpy(), want.numpy())
    # Parsed one record at a time, then batched: SparseTensors batch as tf.data's do.
    ours = D.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(
        lambda r: px.io.parse_single_example(r, spec_px)).batch(3)
    theirs = tf.data.Dataset.from_tensor_slices(records).map(lambda r: tf.io.parse_single_example(r, spec_tf)).batch(3)
    assert theirs.element_spec["v"].shape.as_list() == [None, None]  # rank 2, as our parts say
    assert list(ours.element_spec["v"].dense_shape.shape) == [2]
    assert list(ours.element_spec["v"].indices.shape) == [None, 2]
    batches = list(zip(ours, theirs))
    assert len(batches) == 2
    for o, t in batches:
        check(o, t)
    # A map after the batch sees the batched SparseTensor.
    dense = list(ours.map(lambda d: d["v"].to_dense(-1)))
    for got, (_, t) in zip(dense, batches):
        np.testing.assert_array_equal(got.numpy(), tf.sparse.to_dense(t["v"], default_value=-1).numpy())


def _spec_text(spec):
    """A structure of specs as comparable text (tf's dtype names lose their 'tf.' prefix)."""
    if isinstance(spec, dict):
        return {k: _spec_text(v) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        return tuple(_spec_text(v) for v in spec)
    shape = spec.shape.as_list() if hasattr(spec.shape, "as_list") else list(spec.shape)
    return shape, spec.dtype.name


def _ragged_pairs(d):
    m = px if d is D else tf

    def gen():
        for n in range(1, 5):
            yield np.ones([2, n], np.float32) * n, np.arange(n)
    return m.data.Dataset.from_generator(gen, output_signature=(m.TensorSpec([2, None], m.float32),
                                                                m.TensorSpec([None], m.int64)))


@pytest.mark.parametrize("name,build", [
    ("list_is_a_tensor", lambda d: d.Dataset.from_tensor_slices([1, 2, 3])),
    ("nested_lists", lambda d: d.Dataset.from_tensor_slices({"a": [[1, 2], [3, 4]], "b": ([5.0, 6.0],)})),
    ("from_tensors_list", lambda d: d.Dataset.from_tensors([1, 2])),
    ("padded_tuple", lambda d: _ragged_pairs(d).padded_batch(3, padded_shapes=([2, 6], [None]),
                                                            padding_values=(np.float32(-1), np.int64(7)))),
    ("padded_default", lambda d: _ragged_pairs(d).padded_batch(2)),
    ("padded_drop", lambda d: _ragged_pairs(d).padded_batch(3, padded_shapes=([2, 6], [-1]), drop_remainder=True)),
    ("padded_dict", lambda d: d.Dataset.from_tensor_slices({"a": np.arange(4), "b": np.ones([4, 2])}).padded_batch(
        2, padded_shapes={"a": [], "b": [3]})),
    ("unbatch_generator", lambda d: _ragged_pairs(d).map(lambda a, b: (a, b[:2])).skip(1).unbatch()),
])
def test_structures_and_specs_match_tf(name, build):
    ours, theirs = _both(build)
    assert _spec_text(ours.element_spec) == _spec_text(theirs.element_spec)
    _same(list(ours), list(theirs))


def test_unbatch_of_unequal_components_is_an_error_as_in_tf():
    ours, theirs = _both(lambda d: _ragged_pairs(d).unbatch())
    with pytest.raises(tf.errors.InvalidArgumentError, match="same batch size"):
        list(theirs)
    with pytest.raises(px.errors.InvalidArgumentError, match="component 0 had size 2 but component 1 had size 1"):
        list(ours)


@pytest.mark.parametrize("build", [
    lambda d: d.Dataset.range(10).repeat(),
    lambda d: d.Dataset.range(10).filter(lambda i: i > 2).repeat(),
    lambda d: d.Dataset.range(10).filter(lambda i: i > 2).repeat(2),
    lambda d: d.Dataset.range(10).repeat().filter(lambda i: i > 2),
    lambda d: d.Dataset.range(10).repeat().take(5),
    lambda d: d.Dataset.range(10).skip(-1),
    lambda d: d.Dataset.range(10).skip(20),
    lambda d: d.Dataset.range(10).take(0).repeat(),
    lambda d: d.Dataset.range(10).batch(3).unbatch(),
    lambda d: d.Dataset.range(10).map(lambda i: i + 1).batch(4, drop_remainder=True),
    lambda d: d.Dataset.zip((d.Dataset.range(3), d.Dataset.range(5).repeat())),
    lambda d: d.Dataset.range(10).enumerate().cache().prefetch(1),
    lambda d: d.Dataset.range(3).interleave(lambda i: d.Dataset.range(i), cycle_length=2),
])
def test_cardinality_matches_tf(build):
    ours, theirs = _both(build)
    assert ours.cardinality() == int(theirs.cardinality())
    if ours.cardinality() >= 0:
        _same(list(ours), list(theirs))


def test_shuffle_keeps_cardinality_and_elements():
    ours, theirs = _both(lambda d: d.Dataset.range(10).shuffle(4).map(lambda i: i + 1).batch(4, drop_remainder=True))
    assert ours.cardinality() == int(theirs.cardinality()) == 2
    got = np.concatenate([b.numpy() for b in ours])
    assert len(got) == 8 and len(set(got.tolist())) == 8 and set(got.tolist()) <= set(range(1, 11))


def test_list_files_sorted_and_shuffled(tmp_path):
    names = [f"f{i:02d}.txt" for i in (3, 1, 10, 7, 0)]
    for n in names:
        (tmp_path / n).write_text(n)
    pattern = str(tmp_path / "f*.txt")
    ours = [f.numpy().item().decode() for f in D.Dataset.list_files(pattern, shuffle=False)]
    assert ours == [f.numpy().decode() for f in tf.data.Dataset.list_files(pattern, shuffle=False)]
    assert ours == sorted(str(tmp_path / n) for n in names)
    shuffled = [f.numpy().item().decode() for f in D.Dataset.list_files(pattern, seed=3)]
    assert sorted(shuffled) == ours
    assert bool(D.Dataset.range(3).repeat())  # true, though len() would raise
