"""The real-model cases of the benchmarks: Keras applications and a small
transformer encoder built from keras.layers, with random weights (a fixed
seed), frozen by TensorFlow into GraphDefs.

Each model is traced with a batch dimension of None and frozen with
convert_variables_to_constants_v2, as users export them; prepare.py then
converts the frozen graph to ONNX with tf2onnx and times it at batch 1 and 8.
Image sizes are small so that a case takes milliseconds on a 2-core machine;
the network structure (layers, fusion patterns) is the full one.
"""
import os

import numpy as np

# name -> (constructor, input shape without the batch)
IMAGE_SIZE = {
    "mobilenet_v2": 96,
    "mobilenet_v3_small": 96,
    "efficientnet_b0": 64,
    "resnet50": 64,
    "densenet121": 64,
}
TRANSFORMER_SEQ = 64
TRANSFORMER_DIM = 128


def _application(name):
    import keras

    size = IMAGE_SIZE[name]
    shape = (size, size, 3)
    apps = keras.applications
    if name == "mobilenet_v2":
        return apps.MobileNetV2(input_shape=shape, alpha=0.35, weights=None)
    if name == "mobilenet_v3_small":
        return apps.MobileNetV3Small(input_shape=shape, weights=None)
    if name == "efficientnet_b0":
        return apps.EfficientNetB0(input_shape=shape, weights=None)
    if name == "resnet50":
        return apps.ResNet50(input_shape=shape, weights=None)
    if name == "densenet121":
        return apps.DenseNet121(input_shape=shape, weights=None)
    raise ValueError(name)


def _transformer():
    """Two post-norm encoder blocks (MultiHeadAttention, LayerNormalization,
    a GELU feed-forward), then mean pooling and a classifier. GELU is the
    tanh approximation (BERT's): tf2onnx cannot convert the exact one's Erfc."""
    import keras
    from keras import layers

    x = inp = keras.Input((TRANSFORMER_SEQ, TRANSFORMER_DIM))
    for _ in range(2):
        att = layers.MultiHeadAttention(num_heads=4, key_dim=TRANSFORMER_DIM // 4)(x, x)
        x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, att]))
        ff = layers.Dense(4 * TRANSFORMER_DIM)(x)
        ff = keras.activations.gelu(ff, approximate=True)
        ff = layers.Dense(TRANSFORMER_DIM)(ff)
        x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, ff]))
    x = layers.GlobalAveragePooling1D()(x)
    out = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inp, out)


MODELS = list(IMAGE_SIZE) + ["transformer_encoder"]


def input_shape(name, batch):
    if name == "transformer_encoder":
        return [batch, TRANSFORMER_SEQ, TRANSFORMER_DIM]
    size = IMAGE_SIZE[name]
    return [batch, size, size, 3]


def freeze(name, dst):
    """Builds `name` with seeded random weights and writes its frozen
    GraphDef to dst. Returns (input tensor name, output tensor name)."""
    import keras
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    keras.utils.set_random_seed(20241128)
    model = _transformer() if name == "transformer_encoder" else _application(name)
    # Random moving statistics, so batch norm is not the identity.
    rng = np.random.default_rng(7)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            mean, var = layer.moving_mean, layer.moving_variance
            mean.assign(rng.normal(0, 0.1, mean.shape).astype(np.float32))
            var.assign(rng.uniform(0.5, 1.5, var.shape).astype(np.float32))
    spec = tf.TensorSpec([None] + input_shape(name, 1)[1:], tf.float32, name="input")
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(spec)
    frozen = convert_variables_to_constants_v2(fn)
    gd = frozen.graph.as_graph_def()
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(gd.SerializeToString())
    return frozen.inputs[0].name, frozen.outputs[0].name
