"""The layers set, continued: recurrent, attention and preprocessing layers
(random augmentation layers run in inference mode)."""
import keras
import numpy as np

from layers_common import In, case, layer, one

RNN_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
WORDS = ["the cat sat", "a dog ran far", "the dog sat down", "cats and dogs"]


def x(shape, **kw):
    return In("x", tuple(shape), **kw)


# ---- recurrent -------------------------------------------------------------
_seq = x((5, 3))
for _cls in ("LSTM", "GRU", "SimpleRNN"):
    one(_cls, _cls, {"units": 4}, _seq, RNN_TOLERANCE)
    one(f"{_cls}_sequences", _cls, {"units": 4, "return_sequences": True}, _seq, RNN_TOLERANCE)
    one(f"{_cls}_backwards", _cls, {"units": 4, "return_sequences": True, "go_backwards": True}, _seq, RNN_TOLERANCE)
one("LSTM_state", "LSTM", {"units": 4, "return_state": True}, _seq, RNN_TOLERANCE)
one("GRU_reset_before", "GRU", {"units": 4, "reset_after": False, "return_sequences": True}, _seq, RNN_TOLERANCE)
case("RNN_cells", ["RNN", "LSTMCell", "GRUCell", "SimpleRNNCell", "StackedRNNCells"],
     lambda t: layer("RNN", keras.layers.StackedRNNCells(
         [keras.layers.LSTMCell(4), keras.layers.GRUCell(3), keras.layers.SimpleRNNCell(2)]),
         return_sequences=True)(t),
     _seq, "keras.layers.RNN(StackedRNNCells([LSTMCell(4), GRUCell(3), SimpleRNNCell(2)]), return_sequences=True)",
     RNN_TOLERANCE)
case("Embedding_mask_LSTM", ["Embedding", "LSTM"],
     lambda t: keras.layers.LSTM(3)(keras.layers.Embedding(10, 4, mask_zero=True)(t)),
     In("x", (6,), "int32", values=[[3, 4, 5, 0, 0, 0], [1, 2, 3, 4, 5, 9]]),
     "Embedding(mask_zero=True) then LSTM(3): padded steps are masked", RNN_TOLERANCE)
case("Masking_GRU", ["Masking", "GRU"],
     lambda t: keras.layers.GRU(3)(keras.layers.Masking(0.0)(t)),
     In("x", (4, 2), values=np.array([[[1, 2], [3, 4], [0, 0], [0, 0]],
                                      [[0.5, 1], [0, 0], [2, 1], [1, 1]]], "float32")),
     "Masking(0.0) then GRU(3)", RNN_TOLERANCE)
one("ConvLSTM1D", "ConvLSTM1D", {"filters": 2, "kernel_size": 3, "padding": "same"}, x((3, 5, 2)), RNN_TOLERANCE)
one("ConvLSTM2D", "ConvLSTM2D", {"filters": 2, "kernel_size": 3, "return_sequences": True},
    x((3, 5, 5, 2)), RNN_TOLERANCE)
one("ConvLSTM3D", "ConvLSTM3D", {"filters": 2, "kernel_size": 2}, x((2, 3, 3, 3, 1)), RNN_TOLERANCE)
case("Bidirectional_LSTM", ["Bidirectional", "LSTM"],
     lambda t: layer("Bidirectional", keras.layers.LSTM(3))(t), _seq,
     "keras.layers.Bidirectional(LSTM(3)) (concat)", RNN_TOLERANCE)
case("Bidirectional_GRU_sequences_sum", ["Bidirectional", "GRU"],
     lambda t: layer("Bidirectional", keras.layers.GRU(3, return_sequences=True), merge_mode="sum")(t), _seq,
     "keras.layers.Bidirectional(GRU(3, return_sequences=True), merge_mode='sum')", RNN_TOLERANCE)
case("TimeDistributed_Dense", ["TimeDistributed", "Dense"],
     lambda t: layer("TimeDistributed", keras.layers.Dense(2))(t), _seq,
     "keras.layers.TimeDistributed(Dense(2))")
case("TimeDistributed_Conv2D", ["TimeDistributed", "Conv2D"],
     lambda t: layer("TimeDistributed", keras.layers.Conv2D(2, 3))(t), x((3, 5, 5, 2)),
     "keras.layers.TimeDistributed(Conv2D(2, 3))")

# ---- attention -------------------------------------------------------------
_qv = [In("query", (3, 4)), In("value", (5, 4))]
case("Attention", "Attention", lambda q, v: layer("Attention")([q, v]), _qv,
     "keras.layers.Attention()([query, value]) (dot-product)")
case("Attention_scaled_concat", "Attention",
     lambda q, v: layer("Attention", use_scale=True, score_mode="concat")([q, v]), _qv,
     "keras.layers.Attention(use_scale=True, score_mode='concat')")
case("Attention_causal_scores", "Attention",
     lambda q: layer("Attention")([q, q], use_causal_mask=True, return_attention_scores=True),
     In("query", (4, 4)), "keras.layers.Attention() self-attention with a causal mask, returning the scores")
case("AdditiveAttention", "AdditiveAttention", lambda q, v: layer("AdditiveAttention")([q, v]), _qv,
     "keras.layers.AdditiveAttention()([query, value])")
case("MultiHeadAttention", "MultiHeadAttention",
     lambda q, v: layer("MultiHeadAttention", num_heads=2, key_dim=3)(q, v), _qv,
     "keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(query, value)")
case("MultiHeadAttention_self_causal", "MultiHeadAttention",
     lambda q: layer("MultiHeadAttention", num_heads=2, key_dim=2)(q, q, use_causal_mask=True,
                                                                   return_attention_scores=True),
     In("query", (4, 4)), "MultiHeadAttention self-attention, causal mask, returning the scores")
case("GroupQueryAttention", "GroupQueryAttention",
     lambda q, v: layer("GroupQueryAttention", head_dim=2, num_query_heads=4, num_key_value_heads=2)(q, v), _qv,
     "keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2)(query, value)")

# ---- preprocessing: numbers and images -------------------------------------
_img = x((6, 6, 3), low=0, high=1)
_img255 = x((8, 8, 3), low=0, high=255)
one("Rescaling", "Rescaling", {"scale": 1 / 127.5, "offset": -1.0}, x((4, 4, 3), low=0, high=255))


def _normalization(t):
    norm = keras.layers.Normalization()
    norm.adapt(np.random.default_rng(3).normal(2.0, 3.0, (20, 4)).astype("float32"))
    return norm(t)


case("Normalization", "Normalization", _normalization, x((4,)), "keras.layers.Normalization adapted on 20 samples")
for _interp in ("bilinear", "nearest", "bicubic"):
    one(f"Resizing_{_interp}_up", "Resizing", {"height": 9, "width": 7, "interpolation": _interp}, _img)
one("Resizing_bilinear_down", "Resizing", {"height": 4, "width": 3, "interpolation": "bilinear"}, _img)
one("Resizing_bilinear_antialias", "Resizing", {"height": 3, "width": 3, "antialias": True}, _img)
one("Resizing_pad_to_aspect", "Resizing", {"height": 4, "width": 2, "pad_to_aspect_ratio": True}, _img)
one("CenterCrop", "CenterCrop", {"height": 4, "width": 3}, _img)
one("Discretization", "Discretization", {"bin_boundaries": [-0.5, 0.0, 0.5]}, x((5,)))
for _mode in ("one_hot", "multi_hot", "count"):
    _shape = (1,) if _mode == "one_hot" else (4,)
    one(f"CategoryEncoding_{_mode}", "CategoryEncoding", {"num_tokens": 6, "output_mode": _mode},
        x(_shape, dtype="int32", low=0, high=6))
one("Hashing_int", "Hashing", {"num_bins": 5}, x((4,), dtype="int64", low=0, high=1000))
one("Hashing_string_salt", "Hashing", {"num_bins": 7, "salt": 42},
    In("x", (2,), "string", values=[[b"cat", b"dog"], [b"fish", b"cat"]]))
one("HashedCrossing", "HashedCrossing", {"num_bins": 8},
    [In("x1", (1,), "int64", low=0, high=5), In("x2", (1,), "string", values=[[b"a"], [b"b"]])])
one("StringLookup", "StringLookup", {"vocabulary": ["cat", "dog", "fish"]},
    In("x", (3,), "string", values=[[b"cat", b"fish", b"bird"], [b"dog", b"dog", b"cat"]]))
one("StringLookup_multi_hot_oov2", "StringLookup",
    {"vocabulary": ["cat", "dog", "fish"], "output_mode": "multi_hot", "num_oov_indices": 2},
    In("x", (3,), "string", values=[[b"cat", b"fish", b"bird"], [b"dog", b"dog", b"cow"]]))
one("IntegerLookup", "IntegerLookup", {"vocabulary": [12, 36, 1138, 42]}, In("x", (3,), "int64", values=[[12, 42, 7], [1138, 36, 12]]))


def _text_vectorization(mode, **kw):
    def make(t):
        vec = keras.layers.TextVectorization(output_mode=mode, **kw)
        vec.adapt(WORDS)
        return vec(t)
    return make


_text = In("x", (1,), "string", values=[[b"The cat sat down"], [b"a Dog ran! and a cat"]])
case("TextVectorization_int", "TextVectorization", _text_vectorization("int", output_sequence_length=6), _text,
     "keras.layers.TextVectorization(output_mode='int', output_sequence_length=6) adapted on a 4-line corpus")
case("TextVectorization_multi_hot", "TextVectorization", _text_vectorization("multi_hot"), _text,
     "keras.layers.TextVectorization(output_mode='multi_hot') adapted on a 4-line corpus")
case("TextVectorization_tf_idf_bigrams", "TextVectorization", _text_vectorization("tf_idf", ngrams=2), _text,
     "keras.layers.TextVectorization(output_mode='tf_idf', ngrams=2) adapted on a 4-line corpus")
one("MelSpectrogram", "MelSpectrogram", {"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 8,
                                          "sampling_rate": 8000}, x((128,)), {"rtol": 1e-3, "atol": 1e-3})
one("STFTSpectrogram", "STFTSpectrogram", {"frame_length": 16, "frame_step": 8, "fft_length": 16},
    x((64, 1)), {"rtol": 1e-3, "atol": 1e-4})

# Augmentation and image-adjustment layers: inference mode.
_AUGMENT = {
    "AugMix": {}, "AutoContrast": {}, "ContrastLimitedAdaptiveHistogramEqualization": {"tile_grid_size": (2, 2)},
    "CutMix": {}, "Equalization": {}, "MixUp": {}, "RandAugment": {}, "RandomBrightness": {"factor": 0.2},
    "RandomColorDegeneration": {"factor": 0.5}, "RandomColorJitter": {"brightness_factor": 0.2},
    "RandomContrast": {"factor": 0.5}, "RandomCrop": {"height": 5, "width": 6},
    "RandomElasticTransform": {}, "RandomErasing": {}, "RandomFlip": {}, "RandomGaussianBlur": {},
    "RandomGrayscale": {}, "RandomHue": {"factor": 0.5}, "RandomInvert": {}, "RandomPerspective": {},
    "RandomPosterization": {"factor": (1, 4)}, "RandomRotation": {"factor": 0.2},
    "RandomSaturation": {"factor": 0.5}, "RandomSharpness": {"factor": 0.5}, "RandomShear": {"x_factor": 0.2},
    "RandomTranslation": {"height_factor": 0.2, "width_factor": 0.2}, "RandomZoom": {"height_factor": 0.2},
    "Solarization": {"addition_factor": 0.0, "threshold_factor": 0.5},
}
for _name, _kw in _AUGMENT.items():
    one(_name, _name, _kw, _img255, {"rtol": 1e-4, "atol": 1e-3}, note="inference mode")
case("Pipeline", "Pipeline",
     lambda t: layer("Pipeline", [keras.layers.RandomFlip(), keras.layers.Rescaling(1 / 255.0),
                                  keras.layers.CenterCrop(4, 4)])(t),
     _img255, "keras.layers.Pipeline([RandomFlip(), Rescaling(1/255), CenterCrop(4, 4)]) in inference mode")
