"""Writes the Keras 3 SavedModel test data: a small functional model with a
nested Sequential block, saved with tf.saved_model.save (whose checkpoint keys
are nested object-graph paths such as
"_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE" and whose restore op writes
other variable handles than the serving signature reads), with an input and
TensorFlow's output for it.

Run in a virtual environment with tensorflow-cpu (TensorFlow 2.21, Keras 3):

    python tests/tf_zoo/make_keras3_savedmodel.py tests/data/tf_graphs/keras3_saved_model

Fixed seeds: the same TensorFlow writes the same weights and output.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main(out_dir: str) -> None:
    keras.utils.set_random_seed(7)
    inputs = keras.Input((8, 8, 3), name="image")
    x = keras.layers.Conv2D(4, 3, padding="same", name="Conv1")(inputs)
    x = keras.layers.BatchNormalization(name="bn")(x)
    block = keras.Sequential([keras.layers.ReLU(), keras.layers.Conv2D(4, 1, name="inner")], name="block")
    x = block(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(3, name="head")(x)
    model = keras.Model(inputs, outputs, name="small")
    image = np.random.default_rng(7).random((2, 8, 8, 3), dtype=np.float32)
    expected = model(image).numpy()
    tf.saved_model.save(model, os.path.join(out_dir, "saved_model"))
    np.save(os.path.join(out_dir, "image.npy"), image)
    np.save(os.path.join(out_dir, "expected.npy"), expected)
    with open(os.path.join(out_dir, "VERSIONS"), "w") as f:
        f.write(f"tensorflow {tf.__version__}\nkeras {keras.__version__}\n")


if __name__ == "__main__":
    main(sys.argv[1])
