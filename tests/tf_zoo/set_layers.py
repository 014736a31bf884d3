"""The layers set: one tiny Keras model per exportable class of keras.layers
(several for classes with modes worth telling apart), and one per
keras.activations function through Activation(name). Batch 2, tiny shapes.

Core, activation, convolution, pooling, normalization, regularization,
reshaping and merging layers are here; recurrent, attention and
preprocessing layers are in set_layers_more.py.
"""
import functools
import inspect

import keras

import set_layers_more  # noqa: F401 - registers its cases
from layers_common import CASES, COVERED, In, case, layer, one, randomize_batch_norm

# Classes in keras.layers that no model uses, and why.
WHY_SKIPPED = {
    "Layer": "abstract base class of all layers",
    "Wrapper": "abstract base class of layer wrappers (Bidirectional, TimeDistributed are covered)",
    "InputSpec": "not a layer: describes an input's shape and dtype",
    "FlaxLayer": "wraps a Flax module; needs the JAX backend",
    "JaxLayer": "wraps a JAX function; needs the JAX backend",
    "TorchModuleWrapper": "wraps a torch.nn.Module; needs the PyTorch backend",
    "TFSMLayer": "reloads an existing SavedModel as a layer, for inference only; the zoo's models are those SavedModels",
    "MaxNumBoundingBoxes": "bounding-box data pipeline layer: takes a dict of boxes and labels, not a tensor",
}
# The committed zoo (zoo.py --keras-export sample) writes keras_export only
# for these models, one or two of each kind, to stay small; the others have
# the same graphs in saved_model. Without that option every model has one.
KERAS_EXPORT_SAMPLE = {
    "Dense", "Embedding", "Activations_sigmoid", "Conv2D", "Conv2D_grouped", "Conv2DTranspose",
    "DepthwiseConv2D", "MaxPooling2D", "BatchNormalization", "LayerNormalization", "Concatenate",
    "Stack_conv_bn_relu_dense", "LSTM", "GRU_sequences", "Bidirectional_LSTM", "TimeDistributed_Dense",
    "MultiHeadAttention", "Normalization", "Resizing_bilinear_up", "StringLookup", "TextVectorization_int",
    "RandomFlip",
}
# Classes every model uses without naming them.
IMPLICIT = {"InputLayer"}


def x(shape, **kw):
    return In("x", tuple(shape), **kw)


# ---- core -----------------------------------------------------------------
one("Dense", "Dense", {"units": 3}, x((4,)))
one("EinsumDense", "EinsumDense", {"equation": "abc,cd->abd", "output_shape": (None, 3), "bias_axes": "d"}, x((3, 4)))
one("Embedding", "Embedding", {"input_dim": 10, "output_dim": 3}, x((5,), dtype="int32", low=0, high=10))
one("ReversibleEmbedding", "ReversibleEmbedding", {"input_dim": 10, "output_dim": 3},
    x((5,), dtype="int32", low=0, high=10))
one("Identity", "Identity", {}, x((4,)))
case("Lambda", "Lambda", lambda t: layer("Lambda", lambda v: v * 2.0 + 1.0)(t), x((4,)),
     "keras.layers.Lambda(lambda v: v * 2 + 1) on x: float32[2, 4]")
one("Masking", "Masking", {"mask_value": 0.0}, x((3, 4), low=0, high=1))

# ---- activation layers and keras.activations -------------------------------
one("ReLU", "ReLU", {}, x((6,)))
one("ReLU_max_threshold", "ReLU", {"max_value": 0.5, "negative_slope": 0.1, "threshold": 0.1}, x((6,)))
one("ELU", "ELU", {"alpha": 0.7}, x((6,)))
one("LeakyReLU", "LeakyReLU", {"negative_slope": 0.2}, x((6,)))
one("PReLU", "PReLU", {"alpha_initializer": "random_uniform"}, x((6,)))
one("Softmax", "Softmax", {"axis": -1}, x((2, 5), low=-3, high=3))
case("Softmax_mask", "Softmax", lambda t, m: layer("Softmax")(t, mask=m),
     [x((5,), low=-3, high=3), In("mask", (5,), "bool")],
     "keras.layers.Softmax() with a boolean mask input")

# keras.activations functions, each through Activation(name), grouped by
# family into one model per family (one output per function, in the order
# the description lists) to keep the committed zoo small. The namespace is
# enumerated: a function missing from ACTIVATION_FAMILIES goes to "other".
ACTIVATION_FAMILIES = {
    "relu": ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "threshold", "hard_shrink", "soft_shrink",
             "sparse_plus"],
    "sigmoid": ["sigmoid", "hard_sigmoid", "log_sigmoid", "sparse_sigmoid", "silu", "swish", "hard_silu",
                "hard_swish", "mish", "gelu"],
    "smooth": ["tanh", "hard_tanh", "tanh_shrink", "softplus", "softsign", "squareplus", "exponential", "linear"],
    "softmax": ["softmax", "log_softmax", "sparsemax", "glu"],
}
# Activation('threshold') cannot give the function's required arguments.
_EXTRA_ARGS = {"threshold": {"threshold": 0.2, "default_value": -1.0}}


def activation_functions():
    names = [n for n in sorted(dir(keras.activations))
             if not n.startswith("_") and inspect.isfunction(getattr(keras.activations, n))
             and n not in ("get", "serialize", "deserialize")]
    family_of = {n: f for f, members in ACTIVATION_FAMILIES.items() for n in members}
    groups = {}
    for family, members in ACTIVATION_FAMILIES.items():
        groups[family] = [n for n in members if n in names]
    groups["other"] = [n for n in names if n not in family_of]
    return {f: members for f, members in groups.items() if members}


def _activation(name):
    if name in _EXTRA_ARGS:
        return layer("Activation", functools.partial(getattr(keras.activations, name), **_EXTRA_ARGS[name]))
    return layer("Activation", name)


for _family, _members in activation_functions().items():
    case(f"Activations_{_family}", "Activation",
         lambda t, m=_members: [_activation(n)(t) for n in m], x((3, 4), low=-3, high=3),
         "keras.layers.Activation(name) for each keras.activations function of the family: "
         + ", ".join(f"output_{i} = {n}" + (f" {_EXTRA_ARGS[n]}" if n in _EXTRA_ARGS else "")
                     for i, n in enumerate(_members)))

# ---- convolution -----------------------------------------------------------
one("Conv1D", "Conv1D", {"filters": 3, "kernel_size": 3}, x((8, 2)))
one("Conv1D_causal_dilated", "Conv1D", {"filters": 3, "kernel_size": 2, "padding": "causal", "dilation_rate": 2}, x((8, 2)))
one("Conv2D", "Conv2D", {"filters": 3, "kernel_size": 3, "padding": "same", "activation": "relu"}, x((6, 6, 2)))
one("Conv2D_strided", "Conv2D", {"filters": 3, "kernel_size": 3, "strides": 2}, x((7, 7, 2)))
one("Conv2D_dilated", "Conv2D", {"filters": 2, "kernel_size": 3, "dilation_rate": 2, "padding": "same"}, x((7, 7, 2)))
one("Conv2D_grouped", "Conv2D", {"filters": 4, "kernel_size": 3, "groups": 2, "padding": "same"}, x((6, 6, 4)))
one("Conv3D", "Conv3D", {"filters": 2, "kernel_size": 2}, x((4, 4, 4, 2)))
one("Conv1DTranspose", "Conv1DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2}, x((5, 3)))
one("Conv2DTranspose", "Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, x((4, 4, 3)))
one("Conv3DTranspose", "Conv3DTranspose", {"filters": 2, "kernel_size": 2, "strides": 2}, x((3, 3, 3, 2)))
one("SeparableConv1D", "SeparableConv1D", {"filters": 3, "kernel_size": 3, "depth_multiplier": 2}, x((8, 2)))
one("SeparableConv2D", "SeparableConv2D", {"filters": 3, "kernel_size": 3, "padding": "same"}, x((6, 6, 2)))
one("DepthwiseConv1D", "DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2}, x((8, 2)))
one("DepthwiseConv2D", "DepthwiseConv2D", {"kernel_size": 3, "padding": "same"}, x((6, 6, 3)))

# ---- pooling ---------------------------------------------------------------
for _d, _shape in ((1, (8, 2)), (2, (6, 6, 2)), (3, (4, 4, 4, 2))):
    one(f"MaxPooling{_d}D", f"MaxPooling{_d}D", {"pool_size": 2}, x(_shape))
    one(f"AveragePooling{_d}D", f"AveragePooling{_d}D", {"pool_size": 2}, x(_shape))
    one(f"GlobalMaxPooling{_d}D", f"GlobalMaxPooling{_d}D", {}, x(_shape))
    one(f"GlobalAveragePooling{_d}D", f"GlobalAveragePooling{_d}D", {}, x(_shape))
    one(f"AdaptiveMaxPooling{_d}D", f"AdaptiveMaxPooling{_d}D", {"output_size": 3}, x(_shape))
    one(f"AdaptiveAveragePooling{_d}D", f"AdaptiveAveragePooling{_d}D", {"output_size": 3}, x(_shape))
one("MaxPooling2D_same_strided", "MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, x((7, 7, 2)))

# ---- normalization ---------------------------------------------------------
one("BatchNormalization", "BatchNormalization", {}, x((4, 4, 3)), prepare=randomize_batch_norm)
one("LayerNormalization", "LayerNormalization", {}, x((3, 4)))
one("LayerNormalization_2axes", "LayerNormalization", {"axis": [-2, -1], "scale": False}, x((3, 4)))
one("GroupNormalization", "GroupNormalization", {"groups": 2}, x((4, 4, 4)))
one("UnitNormalization", "UnitNormalization", {}, x((5,)))
one("RMSNormalization", "RMSNormalization", {}, x((3, 4)))
case("SpectralNormalization", "SpectralNormalization",
     lambda t: layer("SpectralNormalization", keras.layers.Dense(3))(t), x((4,)),
     "keras.layers.SpectralNormalization(Dense(3)) on x: float32[2, 4] (inference: the stored kernel)")

# ---- regularization (identity at inference) --------------------------------
one("Dropout", "Dropout", {"rate": 0.5}, x((6,)))
one("SpatialDropout1D", "SpatialDropout1D", {"rate": 0.5}, x((4, 3)))
one("SpatialDropout2D", "SpatialDropout2D", {"rate": 0.5}, x((4, 4, 3)))
one("SpatialDropout3D", "SpatialDropout3D", {"rate": 0.5}, x((3, 3, 3, 2)))
one("GaussianDropout", "GaussianDropout", {"rate": 0.5}, x((6,)))
one("GaussianNoise", "GaussianNoise", {"stddev": 0.5}, x((6,)))
one("AlphaDropout", "AlphaDropout", {"rate": 0.5}, x((6,)))
one("ActivityRegularization", "ActivityRegularization", {"l1": 0.01, "l2": 0.01}, x((6,)))

# ---- reshaping -------------------------------------------------------------
one("Flatten", "Flatten", {}, x((3, 2, 2)))
one("Reshape", "Reshape", {"target_shape": (2, -1)}, x((3, 4)))
one("Permute", "Permute", {"dims": (2, 3, 1)}, x((2, 3, 4)))
one("RepeatVector", "RepeatVector", {"n": 3}, x((4,)))
one("Cropping1D", "Cropping1D", {"cropping": (1, 2)}, x((7, 2)))
one("Cropping2D", "Cropping2D", {"cropping": ((1, 0), (1, 2))}, x((6, 6, 2)))
one("Cropping3D", "Cropping3D", {"cropping": 1}, x((4, 4, 4, 2)))
one("ZeroPadding1D", "ZeroPadding1D", {"padding": (1, 2)}, x((4, 2)))
one("ZeroPadding2D", "ZeroPadding2D", {"padding": ((1, 0), (2, 1))}, x((3, 3, 2)))
one("ZeroPadding3D", "ZeroPadding3D", {"padding": 1}, x((2, 2, 2, 2)))
one("UpSampling1D", "UpSampling1D", {"size": 2}, x((4, 2)))
one("UpSampling2D", "UpSampling2D", {"size": 2}, x((3, 3, 2)))
one("UpSampling2D_bilinear", "UpSampling2D", {"size": (2, 3), "interpolation": "bilinear"}, x((3, 3, 2)))
one("UpSampling3D", "UpSampling3D", {"size": 2}, x((2, 2, 2, 2)))

# ---- merging ---------------------------------------------------------------
_pair = [In("x1", (3, 4)), In("x2", (3, 4))]
for _name in ("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"):
    one(_name, _name, {}, _pair)
one("Concatenate", "Concatenate", {"axis": -1}, [In("x1", (3, 4)), In("x2", (3, 2))])
one("Dot", "Dot", {"axes": (2, 2)}, [In("x1", (3, 4)), In("x2", (5, 4))])
one("Dot_normalize", "Dot", {"axes": 1, "normalize": True}, [In("x1", (4,)), In("x2", (4,))])

# ---- a few small stacks ----------------------------------------------------


def _conv_block(t):
    t = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)(t)
    t = keras.layers.BatchNormalization()(t)
    t = keras.layers.ReLU(6.0)(t)
    t = keras.layers.MaxPooling2D()(t)
    t = keras.layers.Flatten()(t)
    return keras.layers.Dense(3, activation="softmax")(t)


case("Stack_conv_bn_relu_dense", ["Conv2D", "BatchNormalization", "ReLU", "MaxPooling2D", "Flatten", "Dense"],
     _conv_block, x((6, 6, 3)), "Conv2D, BatchNormalization, ReLU(6), MaxPooling2D, Flatten, Dense softmax",
     prepare=randomize_batch_norm)


def cases():
    return list(CASES)


def skipped_classes():
    """(class name, why) for each class in keras.layers that no case uses."""
    used = set()
    for names in COVERED.values():
        used.update(getattr(keras.layers, n) for n in names)
    used.update(getattr(keras.layers, n) for n in IMPLICIT)
    result = []
    for name in sorted(dir(keras.layers)):
        cls = getattr(keras.layers, name)
        if not inspect.isclass(cls) or cls in used:
            continue
        why = WHY_SKIPPED.get(name)
        if why is None:
            aliases = [n for n in dir(keras.layers) if getattr(keras.layers, n) is cls and n in WHY_SKIPPED]
            why = WHY_SKIPPED[aliases[0]] if aliases else "no model written for it yet"
        result.append((name, why))
    return result
