"""Keras 3 text-preprocessing models (TextVectorization, StringLookup,
IntegerLookup, Hashing, CategoryEncoding) from tests/data/tf_graphs/keras3_text
(tests/tf_zoo/make_text_models.py): a TensorFlow 1 style frozen graph whose
tables an init target fills, a tf.saved_model.save SavedModel and a Keras
Model.export SavedModel whose vocabulary file is an asset. Every output is
compared exactly with TensorFlow's (integers, and float counts)."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import plexus as px
from plexus import errors


def _data_dir() -> pathlib.Path:
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"


DATA = _data_dir() / "tf_graphs" / "keras3_text"
# TextVectorization splits into words, and RaggedTensor's row partitions
# take a Cumsum; graphs holding one import only where Cumsum is registered.
needs_cumsum = pytest.mark.skipif(not hasattr(px.raw_ops, "Cumsum"), reason="the graph needs the Cumsum op")

FROZEN_OUTPUTS = ["tokens", "ngram_multi_hot", "word_counts", "char_ids", "word_ids", "hashed", "salted",
                  "code_ids", "code_hashed", "code_one_hot", "code_multi_hot", "code_counts"]


def load(name):
    return np.load(DATA / f"{name}.npy")


def assert_same(actual, expected_file):
    expected = load(expected_file)
    actual = actual.numpy()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, expected_file
    np.testing.assert_array_equal(actual, expected, err_msg=expected_file)


def feeds():
    return {"text": load("text"), "words": load("words"), "codes": load("codes")}


@pytest.fixture(scope="module")
def frozen():
    sess = px.Session(DATA / "frozen.pb")
    sess.run([], targets=["init_all_tables"])
    return sess


@needs_cumsum
@pytest.mark.parametrize("name", FROZEN_OUTPUTS)
def test_frozen_graph_matches_tensorflow(frozen, name):
    assert_same(frozen.run(name, feeds()), f"frozen_{name}")


@needs_cumsum
def test_frozen_graph_runs_its_initializer_once_per_session(frozen):
    # Running the initializer again changes nothing (TensorFlow's rule).
    frozen.run([], targets=["init_all_tables"])
    assert_same(frozen.run("word_ids", feeds()), "frozen_word_ids")
    fresh = px.Session(DATA / "frozen.pb")
    with pytest.raises(errors.FailedPreconditionError, match="LookupTableFindV2.*Table not initialized"):
        fresh.run("word_ids", feeds())


SAVED_OUTPUTS = ["word_multi_hot", "hashed", "code_ids", "code_counts"]


def run_saved_model(path):
    model = px.saved_model.load(path)
    sig = model.signatures["serving_default"]
    assert {k: v["dtype"] for k, v in sig.inputs.items()} == {"inputs": px.int64, "inputs_1": px.string}
    return sig(inputs=load("codes"), inputs_1=load("text"))


def test_saved_model_matches_tensorflow():
    out = run_saved_model(DATA / "saved_model")
    assert sorted(out) == sorted(SAVED_OUTPUTS)
    for name in SAVED_OUTPUTS:
        assert_same(out[name], f"saved_model_{name}")


def test_saved_model_reads_its_assets_wherever_it_is_moved(tmp_path):
    moved = tmp_path / "elsewhere" / "model"
    shutil.copytree(DATA / "saved_model", moved)
    out = run_saved_model(moved)
    for name in SAVED_OUTPUTS:
        assert_same(out[name], f"saved_model_{name}")
    # The vocabulary comes from the moved folder's assets/, not the original.
    (moved / "assets" / "words.txt").unlink()
    with pytest.raises(errors.NotFoundError, match=str(moved / "assets" / "words.txt")):
        px.saved_model.load(moved)


@needs_cumsum
def test_keras_export_matches_tensorflow():
    model = px.saved_model.load(DATA / "export")
    for key in ("serve", "serving_default"):
        out = model.signatures[key](text=load("text"), codes=load("codes"))
        assert sorted(out) == sorted(SAVED_OUTPUTS + ["tokens"])
        for name, value in out.items():
            assert_same(value, f"export_{name}")


@needs_cumsum
def test_adapted_layers_restore_their_tables():
    """adapt()ed layers: the vocabularies come from the SavedModel's table
    initializers, the adapt() state (MutableHashTables) from its checkpoint."""
    model = px.saved_model.load(DATA / "adapted")
    sig = model.signatures["serving_default"]
    # tf.saved_model.save names a dict's inputs inputs, inputs_1, ...
    by_dtype = {v["dtype"]: k for k, v in sig.inputs.items()}
    out = sig(**{by_dtype[px.string]: load("words"), by_dtype[px.int64]: load("codes")})
    assert sorted(out) == ["code_ids", "tf_idf", "word_ids"]
    assert_same(out["word_ids"], "adapted_word_ids")
    assert_same(out["code_ids"], "adapted_code_ids")
    # tf_idf: counts times float32 idf weights, computed as TensorFlow does.
    np.testing.assert_allclose(out["tf_idf"].numpy(), load("adapted_tf_idf"), rtol=1e-6, atol=0)


def test_tf1_saved_model_main_op_fills_its_table_from_an_asset(tmp_path):
    """TensorFlow 1: the main op (tables_initializer) reads a key-and-value
    asset file; the loader feeds the asset's path in the folder it loads."""
    moved = tmp_path / "tf1"
    shutil.copytree(DATA / "tf1_saved_model", moved)
    for path in (DATA / "tf1_saved_model", moved):
        out = px.saved_model.load(path).signatures["serving_default"](words=load("words"))
        assert_same(out["ids"], "tf1_saved_model_ids")
