"""Writes the Keras 3 text-preprocessing test data under DIR (normally
tests/data/tf_graphs/keras3_text): TextVectorization, StringLookup,
IntegerLookup, Hashing and CategoryEncoding, as

  frozen.pb       a TensorFlow 1 style frozen GraphDef of the layers, built in
                  a tf.compat.v1 graph; its tables are filled by the target
                  "init_all_tables" (tf.compat.v1.tables_initializer), which
                  a caller runs once before the outputs;
  saved_model/    tf.saved_model.save of a functional Keras model whose
                  StringLookup reads its vocabulary from a text file, so the
                  SavedModel carries it under assets/
                  (InitializeTableFromTextFileV2), with IntegerLookup,
                  Hashing and CategoryEncoding;
  export/         keras Model.export (signature "serve") of that model with
                  a TextVectorization reading the same vocabulary file;
  adapted/        tf.saved_model.save of adapt()ed layers (TextVectorization
                  with tf_idf bigrams, StringLookup, IntegerLookup), whose
                  adapt() state lives in MutableHashTables, fed words.npy
                  and codes.npy;
  tf1_saved_model/  a TensorFlow 1 SavedModel (SavedModelBuilder) whose main
                  op fills a table from a key-and-value asset file;

with the inputs (text.npy and words.npy, NumPy bytes arrays, and codes.npy) and
TensorFlow's outputs (frozen_<name>.npy, saved_model_<name>.npy,
export_<name>.npy, adapted_<name>.npy, tf1_saved_model_ids.npy) for them, and the
TensorFlow and Keras versions in VERSIONS.

Run in a virtual environment with tensorflow-cpu (TensorFlow 2.21, Keras 3):

    python tests/tf_zoo/make_text_models.py tests/data/tf_graphs/keras3_text

Everything is deterministic: vocabularies come from adapt() on fixed text.
"""
import contextlib
import os
import re
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "The dog sleeps; the FOX runs!",
    "A quick brown dog, a lazy fox.",
    "Über café: naïve résumé",
]
TEXT = np.array([b"The lazy fox, the quick DOG!", b"unknown words here", b"", "Caf\u00e9 \u00dcber alles".encode()],
                dtype=object)
WORDS = np.array([b"fox", b"the", b"zebra", b"quick", b"", b"Dog", b"lazy", b"aardvark"])
CODES = np.array([[12, 36, 7], [38, 12, 12], [0, 5, 39], [36, 36, 4]], dtype=np.int64)
INT_VOCAB = [12, 36, 38, 9]


def adapted_vocabularies():
    """Vocabularies adapt() finds on CORPUS (eagerly; the frozen graph's
    layers take them as lists)."""
    def vocabulary(layer, data):
        layer.adapt(data)
        return layer.get_vocabulary(include_special_tokens=False)

    return {
        "tokens": vocabulary(keras.layers.TextVectorization(max_tokens=16), CORPUS),
        "ngrams": vocabulary(keras.layers.TextVectorization(max_tokens=24, ngrams=2), CORPUS),
        "counts": vocabulary(keras.layers.TextVectorization(max_tokens=12, standardize="lower"), CORPUS),
        "words": vocabulary(keras.layers.StringLookup(), tf.strings.split(tf.strings.lower(CORPUS)).flat_values),
    }


def frozen_layers(vocab):
    """The layers of the frozen graph: name -> (input, layer). Multi-hot and
    count outputs pad to max_tokens: in a TensorFlow 1 graph Keras cannot
    size them from the vocabulary."""
    return {
        "tokens": ("text", keras.layers.TextVectorization(vocabulary=vocab["tokens"], output_sequence_length=7)),
        "ngram_multi_hot": ("text", keras.layers.TextVectorization(vocabulary=vocab["ngrams"], ngrams=2,
                                                                   output_mode="multi_hot", max_tokens=24,
                                                                   pad_to_max_tokens=True)),
        "word_counts": ("text", keras.layers.TextVectorization(vocabulary=vocab["counts"], output_mode="count",
                                                               standardize="lower", max_tokens=12,
                                                               pad_to_max_tokens=True)),
        "char_ids": ("text", keras.layers.TextVectorization(vocabulary=list("abcdefghijklmnopqrstuvwxyz\u00e9"),
                                                            split="character", output_sequence_length=12)),
        "word_ids": ("words", keras.layers.StringLookup(vocabulary=vocab["words"], num_oov_indices=2)),
        "hashed": ("text", keras.layers.Hashing(num_bins=7)),
        "salted": ("text", keras.layers.Hashing(num_bins=11, salt=[7, 1234])),
        "code_ids": ("codes", keras.layers.IntegerLookup(vocabulary=INT_VOCAB)),
        "code_hashed": ("codes", keras.layers.Hashing(num_bins=5)),
        "code_one_hot": ("code0", keras.layers.CategoryEncoding(num_tokens=40, output_mode="one_hot")),
        "code_multi_hot": ("codes", keras.layers.CategoryEncoding(num_tokens=40, output_mode="multi_hot")),
        "code_counts": ("codes", keras.layers.CategoryEncoding(num_tokens=40, output_mode="count")),
    }


def write_frozen(out_dir):
    tf1 = tf.compat.v1
    vocab = adapted_vocabularies()
    graph = tf.Graph()
    with graph.as_default():
        inputs = {
            "text": tf1.placeholder(tf.string, [None], name="text"),
            "words": tf1.placeholder(tf.string, [None], name="words"),
            "codes": tf1.placeholder(tf.int64, [None, 3], name="codes"),
        }
        inputs["code0"] = inputs["codes"][:, 0]
        outputs = {name: tf.identity(layer(inputs[src]), name=name) for name, (src, layer) in frozen_layers(vocab).items()}
        init = tf1.tables_initializer(name="init_all_tables")
        with tf1.Session() as sess:
            sess.run(init)
            values = sess.run(outputs, {inputs["text"]: TEXT.astype(bytes), inputs["words"]: WORDS,
                                         inputs["codes"]: CODES})
            frozen = tf1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(),
                                                                   list(outputs) + ["init_all_tables"])
    with open(os.path.join(out_dir, "frozen.pb"), "wb") as f:
        f.write(frozen.SerializeToString())
    for name, value in values.items():
        np.save(os.path.join(out_dir, f"frozen_{name}.npy"), value)


@contextlib.contextmanager
def vocabulary_folder():
    """A temporary working folder for vocabulary files, named relatively:
    TensorFlow writes the file name it was given into the SavedModel (table
    names, the asset constant's default), and a relative name keeps this
    machine's temporary paths out of the test data."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(cwd)


def file_model(word_file, vectorize):
    """A functional model whose lookups read the vocabulary file
    `word_file`; with `vectorize`, a TextVectorization (split into words:
    its graph needs Cumsum) too."""
    text = keras.Input(shape=(), dtype="string", name="text")
    codes = keras.Input(shape=(3,), dtype="int64", name="codes")
    lookup = keras.layers.StringLookup(vocabulary=word_file, num_oov_indices=1, output_mode="multi_hot",
                                       name="lookup")
    outputs = {
        "word_multi_hot": lookup(keras.ops.expand_dims(text, -1)),
        "hashed": keras.layers.Hashing(num_bins=9, name="hash")(text),
        "code_ids": keras.layers.IntegerLookup(vocabulary=INT_VOCAB, name="int_lookup")(codes),
        "code_counts": keras.layers.CategoryEncoding(num_tokens=40, output_mode="count", name="encode")(codes),
    }
    if vectorize:
        tv = keras.layers.TextVectorization(vocabulary=word_file, output_sequence_length=6, name="vectorize")
        outputs["tokens"] = tv(text)
    return keras.Model({"text": text, "codes": codes}, outputs, name="text_preprocessing")


def write_saved(out_dir):
    """saved_model/ (lookups only) by tf.saved_model.save, export/ (with
    TextVectorization) by Model.export."""
    inputs = {"text": tf.constant(TEXT.astype(bytes)), "codes": tf.constant(CODES)}
    out_dir = os.path.abspath(out_dir)
    with vocabulary_folder():
        words = sorted({w for line in CORPUS for w in re.sub(r"[^\w\s]", " ", line.lower()).split()})
        word_file = "words.txt"
        with open(word_file, "w", encoding="utf-8") as f:
            f.write("\n".join(words) + "\n")
        for sub, vectorize in (("saved_model", False), ("export", True)):
            model = file_model(word_file, vectorize)
            path = os.path.join(out_dir, sub)
            shutil.rmtree(path, ignore_errors=True)
            if vectorize:
                model.export(path, verbose=False)
            else:
                tf.saved_model.save(model, path)
            for name, value in model(inputs).items():
                np.save(os.path.join(out_dir, f"{sub}_{name}.npy"), np.asarray(value))


def write_adapted(out_dir):
    """adapted/: tf.saved_model.save of layers whose vocabularies adapt()
    found; Keras keeps their adapt() state in MutableHashTables, which the
    SavedModel saves and restores."""
    tv = keras.layers.TextVectorization(max_tokens=20, ngrams=2, output_mode="tf_idf", name="tf_idf")
    tv.adapt(CORPUS)
    words = keras.layers.StringLookup(name="words")
    words.adapt(tf.strings.split(tf.strings.lower(CORPUS)).flat_values)
    codes = keras.layers.IntegerLookup(name="codes")
    codes.adapt(CODES.reshape(-1))
    text = keras.Input(shape=(), dtype="string", name="text")
    ids = keras.Input(shape=(3,), dtype="int64", name="ids")
    model = keras.Model({"text": text, "ids": ids},
                        {"tf_idf": tv(text), "word_ids": words(text), "code_ids": codes(ids)}, name="adapted")
    path = os.path.join(out_dir, "adapted")
    shutil.rmtree(path, ignore_errors=True)
    tf.saved_model.save(model, path)
    values = model({"text": tf.constant(WORDS), "ids": tf.constant(CODES)})
    for name, value in values.items():
        np.save(os.path.join(out_dir, f"adapted_{name}.npy"), np.asarray(value))


def write_tf1_saved_model(out_dir):
    """tf1_saved_model/: a TensorFlow 1 SavedModel whose main op fills a
    table from a two-column asset (key, tab, value)."""
    tf1 = tf.compat.v1
    path = os.path.abspath(os.path.join(out_dir, "tf1_saved_model"))
    shutil.rmtree(path, ignore_errors=True)
    with vocabulary_folder():
        labels = "labels.txt"
        with open(labels, "w", encoding="utf-8") as f:
            f.write("fox\t3\ndog\t5\nthe\t7\nquick\t11\n")
        graph = tf.Graph()
        with graph.as_default():
            words = tf1.placeholder(tf.string, [None], name="words")
            init = tf.lookup.TextFileInitializer(labels, tf.string, 0, tf.int64, 1, delimiter="\t")
            table = tf.lookup.StaticHashTable(init, -1)
            ids = tf.identity(table.lookup(tf.strings.lower(words)), name="ids")
            with tf1.Session() as sess:
                sess.run(tf1.tables_initializer())
                values = sess.run(ids, {words: WORDS})
                builder = tf1.saved_model.Builder(path)
                signature = tf1.saved_model.predict_signature_def({"words": words}, {"ids": ids})
                builder.add_meta_graph_and_variables(
                    sess, ["serve"], signature_def_map={"serving_default": signature},
                    main_op=tf1.tables_initializer(), strip_default_attrs=True,
                    assets_collection=graph.get_collection(tf1.GraphKeys.ASSET_FILEPATHS))
                builder.save()
    np.save(os.path.join(out_dir, "tf1_saved_model_ids.npy"), values)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "text.npy"), TEXT.astype(bytes))
    np.save(os.path.join(out_dir, "words.npy"), WORDS)
    np.save(os.path.join(out_dir, "codes.npy"), CODES)
    write_frozen(out_dir)
    write_saved(out_dir)
    write_adapted(out_dir)
    write_tf1_saved_model(out_dir)
    with open(os.path.join(out_dir, "VERSIONS"), "w") as f:
        f.write(f"tensorflow {tf.__version__}\nkeras {keras.__version__}\n")


if __name__ == "__main__":
    main(sys.argv[1])
