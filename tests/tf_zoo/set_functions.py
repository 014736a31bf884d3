"""The functions set: small tf.function programs with explicit input
signatures, one per theme, each a tf.Module whose `run` attribute is the
function. Every program returns a dict of named outputs (the signature's
output keys)."""
import numpy as np
import tensorflow as tf

from functions_common import Arg, program

CASES = []
LOOSE = {"rtol": 1e-4, "atol": 1e-4}


def p(name, description, args, tolerance=None, state=None):
    """Decorator form of program()."""
    def register(fn):
        program(CASES, name, description, args, fn, tolerance, state)
        return fn
    return register


# ---- tf.math ---------------------------------------------------------------
@p("math_cumulative", "tf.math.cumsum and cumprod, plain, exclusive and reverse",
   [Arg("x", (None, 5), low=0.5, high=1.5, draw=(3, 5))])
def _(x):
    return {"cumsum": tf.math.cumsum(x, axis=1),
            "cumsum_exclusive_reverse": tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
            "cumprod": tf.math.cumprod(x, axis=1),
            "cumprod_exclusive": tf.math.cumprod(x, axis=1, exclusive=True)}


@p("math_top_k_argmax", "tf.math.top_k (values and indices), argmax and argmin",
   [Arg("x", (3, 6))])
def _(x):
    top = tf.math.top_k(x, k=3)
    return {"values": top.values, "indices": top.indices,
            "argmax": tf.math.argmax(x, axis=1), "argmin_int32": tf.math.argmin(x, axis=0, output_type=tf.int32)}


@p("math_reduce", "tf.reduce_sum/mean/max/min/prod/any/all, logsumexp, std and variance over axes",
   [Arg("x", (2, 3, 4))], tolerance=LOOSE)
def _(x):
    positive = x > 0
    return {"sum": tf.reduce_sum(x, axis=[0, 2]), "mean_keepdims": tf.reduce_mean(x, axis=1, keepdims=True),
            "max": tf.reduce_max(x, axis=-1), "min_all": tf.reduce_min(x),
            "prod": tf.reduce_prod(x, axis=2), "any": tf.reduce_any(positive, axis=1),
            "all": tf.reduce_all(positive, axis=2), "logsumexp": tf.reduce_logsumexp(x, axis=1),
            "std": tf.math.reduce_std(x, axis=0), "variance": tf.math.reduce_variance(x, axis=[1, 2])}


@p("math_segment", "tf.math.segment_sum/mean/max/min/prod and unsorted_segment_sum/max/mean",
   [Arg("data", (6, 3)), Arg("ids", (6,), "int32", values=[0, 0, 1, 2, 2, 2]),
    Arg("unsorted_ids", (6,), "int32", values=[2, 0, 1, 0, 2, 3])])
def _(data, ids, unsorted_ids):
    return {"segment_sum": tf.math.segment_sum(data, ids), "segment_mean": tf.math.segment_mean(data, ids),
            "segment_max": tf.math.segment_max(data, ids), "segment_min": tf.math.segment_min(data, ids),
            "segment_prod": tf.math.segment_prod(data, ids),
            "unsorted_sum": tf.math.unsorted_segment_sum(data, unsorted_ids, num_segments=4),
            "unsorted_max": tf.math.unsorted_segment_max(data, unsorted_ids, num_segments=4),
            "unsorted_mean": tf.math.unsorted_segment_mean(data, unsorted_ids, num_segments=4)}


@p("math_finite", "tf.math.is_finite/is_nan/is_inf on values with NaN and infinities; divide_no_nan, multiply_no_nan",
   [Arg("x", (2, 4), values=[[1.0, np.nan, np.inf, -2.0], [-np.inf, 0.0, 3.5, np.nan]]),
    Arg("y", (2, 4), values=[[0.0, 1.0, 2.0, 0.0], [1.0, 0.0, 0.5, 2.0]])])
def _(x, y):
    return {"is_finite": tf.math.is_finite(x), "is_nan": tf.math.is_nan(x), "is_inf": tf.math.is_inf(x),
            "cleaned": tf.where(tf.math.is_finite(x), x, tf.zeros_like(x)),
            "divide_no_nan": tf.math.divide_no_nan(tf.where(tf.math.is_finite(x), x, 1.0), y),
            "multiply_no_nan": tf.math.multiply_no_nan(y, tf.where(tf.math.is_nan(x), 0.0, x))}


@p("math_trig", "trigonometric and hyperbolic functions and their inverses",
   [Arg("x", (2, 5), low=-0.9, high=0.9), Arg("y", (2, 5), low=1.1, high=3.0)], tolerance=LOOSE)
def _(x, y):
    return {"sin": tf.sin(x), "cos": tf.cos(x), "tan": tf.tan(x), "asin": tf.asin(x), "acos": tf.acos(x),
            "atan": tf.atan(x), "atan2": tf.atan2(x, y - 2.0), "sinh": tf.sinh(x), "cosh": tf.cosh(x),
            "tanh": tf.tanh(x), "asinh": tf.asinh(x), "acosh": tf.acosh(y), "atanh": tf.atanh(x)}


@p("math_special", "erf, erfc, lgamma, digamma, exp/expm1/log/log1p, sqrt/rsqrt, rounding, pow",
   [Arg("x", (2, 5), low=-2.5, high=2.5), Arg("y", (2, 5), low=0.2, high=3.0)], tolerance=LOOSE)
def _(x, y):
    return {"erf": tf.math.erf(x), "erfc": tf.math.erfc(x), "lgamma": tf.math.lgamma(y),
            "digamma": tf.math.digamma(y), "exp": tf.exp(x), "expm1": tf.math.expm1(x), "log": tf.math.log(y),
            "log1p": tf.math.log1p(y), "sqrt": tf.sqrt(y), "rsqrt": tf.math.rsqrt(y), "square": tf.square(x),
            "sign": tf.sign(x), "floor": tf.floor(x), "ceil": tf.math.ceil(x), "round": tf.round(x * 2.0),
            "rint": tf.math.rint(x * 2.0), "pow": tf.pow(y, x), "reciprocal": tf.math.reciprocal(y),
            "sigmoid": tf.sigmoid(x), "softplus": tf.math.softplus(x)}


@p("math_where", "tf.where with one argument (coordinates, a data-dependent shape) and three (broadcast select)",
   [Arg("x", (3, 4)), Arg("y", (4,))])
def _(x, y):
    return {"coordinates": tf.where(x > 0.2), "select": tf.where(x > 0, x, y),
            "select_scalar": tf.where(x < 0, 0.0, x), "count": tf.math.count_nonzero(x > 0, axis=1)}


@p("math_bincount", "tf.math.bincount plain, with minlength and weights, and with maxlength",
   [Arg("values", (8,), "int32", low=0, high=5), Arg("weights", (8,))])
def _(values, weights):
    return {"counts": tf.math.bincount(values), "counts_min8": tf.math.bincount(values, minlength=8),
            "weighted": tf.math.bincount(values, weights=weights, minlength=6),
            "max3": tf.math.bincount(values, maxlength=3)}


@p("math_integer", "integer arithmetic: floordiv, floormod, truncatediv/mod, bitwise ops, shifts, abs, casts",
   [Arg("a", (6,), "int32", values=[7, -7, 9, -3, 0, 13]), Arg("b", (6,), "int32", values=[2, 2, -4, 5, 3, -6])])
def _(a, b):
    return {"floordiv": tf.math.floordiv(a, b), "floormod": tf.math.floormod(a, b),
            "truncatediv": tf.truncatediv(a, b), "truncatemod": tf.truncatemod(a, b),
            "bitwise_and": tf.bitwise.bitwise_and(a, b), "bitwise_xor": tf.bitwise.bitwise_xor(a, b),
            "left_shift": tf.bitwise.left_shift(a, 2), "abs": tf.abs(a), "maximum": tf.maximum(a, b),
            "as_float": tf.cast(a, tf.float32) / 2.0, "as_int64": tf.cast(a, tf.int64) * 3}


@p("math_compare_logical", "comparisons, logical and/or/xor/not, equal with broadcasting, clip_by_value",
   [Arg("x", (3, 4)), Arg("y", (4,))])
def _(x, y):
    a, b = x > 0, x > y
    return {"equal": tf.equal(tf.round(x * 2), tf.round(y * 2)), "less_equal": tf.less_equal(x, y),
            "and": tf.logical_and(a, b), "or": tf.logical_or(a, b), "xor": tf.math.logical_xor(a, b),
            "not": tf.logical_not(a), "clip": tf.clip_by_value(x, -0.5, 0.25)}


# ---- tf.linalg -------------------------------------------------------------
@p("linalg_matmul_einsum", "tf.linalg.matmul (transposes, batched), band_part, einsum, tensordot, diag_part, trace",
   [Arg("a", (2, 3, 4)), Arg("b", (2, 4, 5)), Arg("m", (4, 4))], tolerance=LOOSE)
def _(a, b, m):
    return {"batch_matmul": tf.linalg.matmul(a, b),
            "matmul_transposed": tf.linalg.matmul(m, m, transpose_a=True, adjoint_b=True),
            "band_lower": tf.linalg.band_part(m, -1, 0), "band_1_2": tf.linalg.band_part(m, 1, 2),
            "einsum_bij_bjk": tf.einsum("bij,bjk->bik", a, b), "einsum_outer": tf.einsum("i,j->ij", m[0], m[1]),
            "einsum_reduce": tf.einsum("bij->bj", a), "einsum_transpose": tf.einsum("bij->jbi", a),
            "tensordot": tf.tensordot(a, m, axes=[[2], [0]]), "diag_part": tf.linalg.diag_part(m),
            "trace": tf.linalg.trace(m), "transpose": tf.linalg.matrix_transpose(a)}


# ---- tf.image --------------------------------------------------------------
_IMAGE = Arg("image", (1, 5, 6, 2), low=0.0, high=1.0)


@p("image_resize", "tf.image.resize: bilinear, nearest, bicubic, area, lanczos3, up and down, antialias",
   [_IMAGE], tolerance=LOOSE)
def _(image):
    r = tf.image.resize
    return {"bilinear_up": r(image, [8, 9]), "nearest_up": r(image, [8, 9], method="nearest"),
            "bicubic_up": r(image, [8, 9], method="bicubic"), "area_down": r(image, [3, 4], method="area"),
            "lanczos3_up": r(image, [7, 7], method="lanczos3"), "bilinear_down": r(image, [3, 3]),
            "bilinear_antialias_down": r(image, [3, 3], antialias=True),
            "nearest_down": r(image, [3, 4], method="nearest")}


@p("image_resize_v1", "tf.compat.v1.image.resize and raw ResizeBilinear/NearestNeighbor/Bicubic with "
   "align_corners and half_pixel_centers", [_IMAGE], tolerance=LOOSE)
def _(image):
    v1 = tf.compat.v1.image
    raw = tf.raw_ops
    return {"v1_bilinear": v1.resize(image, [8, 9]),
            "v1_bilinear_align": v1.resize(image, [8, 9], align_corners=True),
            "v1_nearest_align": v1.resize(image, [8, 9], method=v1.ResizeMethod.NEAREST_NEIGHBOR, align_corners=True),
            "v1_bicubic": v1.resize(image, [8, 9], method=v1.ResizeMethod.BICUBIC),
            "raw_bilinear_half_pixel": raw.ResizeBilinear(images=image, size=[8, 9], half_pixel_centers=True),
            "raw_nearest_half_pixel": raw.ResizeNearestNeighbor(images=image, size=[3, 4], half_pixel_centers=True),
            "raw_nearest_align": raw.ResizeNearestNeighbor(images=image, size=[8, 9], align_corners=True),
            "raw_bicubic_half_pixel": raw.ResizeBicubic(images=image, size=[8, 9], half_pixel_centers=True)}


@p("image_crop_and_resize", "tf.image.crop_and_resize bilinear and nearest, boxes partly outside the image",
   [Arg("image", (2, 6, 6, 1), low=0, high=1),
    Arg("boxes", (3, 4), values=[[0.0, 0.0, 1.0, 1.0], [0.2, 0.1, 0.7, 0.9], [-0.2, 0.5, 0.6, 1.3]]),
    Arg("box_indices", (3,), "int32", values=[0, 1, 1])], tolerance=LOOSE)
def _(image, boxes, box_indices):
    return {"bilinear": tf.image.crop_and_resize(image, boxes, box_indices, [4, 3]),
            "nearest": tf.image.crop_and_resize(image, boxes, box_indices, [3, 3], method="nearest",
                                                extrapolation_value=-1.0)}


_BOXES = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]


@p("image_non_max_suppression", "tf.image.non_max_suppression, its padded and with_scores (soft-NMS) forms",
   [Arg("boxes", (6, 4), values=_BOXES), Arg("scores", (6,), values=[0.9, 0.75, 0.6, 0.95, 0.5, 0.3])])
def _(boxes, scores):
    selected = tf.image.non_max_suppression(boxes, scores, max_output_size=4, iou_threshold=0.5)
    thresholded = tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=0.5, score_threshold=0.4)
    padded, valid = tf.image.non_max_suppression_padded(boxes, scores, 5, iou_threshold=0.5,
                                                        pad_to_max_output_size=True)
    soft, soft_scores = tf.image.non_max_suppression_with_scores(boxes, scores, 4, iou_threshold=1.0,
                                                                 soft_nms_sigma=0.5)
    return {"selected": selected, "thresholded": thresholded, "padded": padded, "padded_valid": valid,
            "soft_selected": soft, "soft_scores": soft_scores,
            "selected_boxes": tf.gather(boxes, selected)}


@p("image_misc", "tf.image flips, rot90, transpose, rgb_to_grayscale, rgb_to_hsv, adjust_brightness/contrast",
   [Arg("image", (1, 4, 5, 3), low=0, high=1)], tolerance=LOOSE)
def _(image):
    return {"flip_left_right": tf.image.flip_left_right(image), "flip_up_down": tf.image.flip_up_down(image),
            "rot90": tf.image.rot90(image, k=1), "transpose": tf.image.transpose(image),
            "grayscale": tf.image.rgb_to_grayscale(image), "hsv": tf.image.rgb_to_hsv(image),
            "brightness": tf.image.adjust_brightness(image, 0.1),
            "contrast": tf.image.adjust_contrast(image, 1.5)}


# ---- tf.strings ------------------------------------------------------------
_WORDS = Arg("s", (4,), "string", values=[b"Hello World", b"tensorFLOW runs", b"", b"a-b-c 123"])


@p("strings_basic", "tf.strings lower, upper, regex_replace, length, substr, join, reduce_join, "
   "to_hash_bucket_fast/strong, string_to_number, as_string", [_WORDS, Arg("n", (4,), "int32", values=[1, 22, -3, 4])])
def _(s, n):
    return {"lower": tf.strings.lower(s), "upper": tf.strings.upper(s),
            "regex_replace": tf.strings.regex_replace(s, "[aeiou]", "_"),
            "regex_first": tf.strings.regex_replace(s, r"(\w+) (\w+)", r"\2 \1", replace_global=False),
            "length": tf.strings.length(s), "substr": tf.strings.substr(s, 0, 4),
            "join": tf.strings.join([s, tf.strings.as_string(n)], separator="|"),
            "reduce_join": tf.strings.reduce_join(s, separator=","),
            "hash_fast": tf.strings.to_hash_bucket_fast(s, 100),
            "hash_strong": tf.strings.to_hash_bucket_strong(s, 100, key=[1, 2]),
            "to_number": tf.strings.to_number(tf.strings.as_string(n * 3), out_type=tf.int32),
            "as_string": tf.strings.as_string(tf.cast(n, tf.float32) / 4.0, precision=2)}


@p("strings_split", "tf.strings.split (ragged) padded to a dense tensor, row lengths, and bytes split",
   [_WORDS])
def _(s):
    words = tf.strings.split(s, sep=" ")
    chars = tf.strings.bytes_split(s)
    return {"words": words.to_tensor(default_value=""), "row_lengths": words.row_lengths(),
            "dash_split": tf.strings.split(s, sep="-").to_tensor(default_value="?"),
            "chars": chars.to_tensor(default_value="")}


# ---- tf.signal -------------------------------------------------------------
@p("signal_frames_stft", "tf.signal.frame, stft magnitude with hann window, hann and hamming windows",
   [Arg("signal", (2, 64))], tolerance={"rtol": 1e-4, "atol": 1e-4})
def _(signal):
    stft = tf.signal.stft(signal, frame_length=16, frame_step=8, fft_length=16, window_fn=tf.signal.hann_window)
    return {"frames": tf.signal.frame(signal, 16, 8), "frames_padded": tf.signal.frame(signal, 10, 7, pad_end=True),
            "stft_magnitude": tf.abs(stft), "hann": tf.signal.hann_window(8),
            "hann_symmetric": tf.signal.hann_window(8, periodic=False), "hamming": tf.signal.hamming_window(8)}


# ---- scatter, gather, reorder ----------------------------------------------
@p("scatter_nd", "tf.scatter_nd, tensor_scatter_nd_update, tensor_scatter_nd_add",
   [Arg("tensor", (4, 3)), Arg("indices", (2, 1), "int32", values=[[1], [3]]), Arg("updates", (2, 3))])
def _(tensor, indices, updates):
    return {"scatter_nd": tf.scatter_nd(indices, updates, [5, 3]),
            "update": tf.tensor_scatter_nd_update(tensor, indices, updates),
            "add": tf.tensor_scatter_nd_add(tensor, indices, updates),
            "update_elements": tf.tensor_scatter_nd_update(tensor, [[0, 0], [2, 1]], [10.0, 20.0])}


@p("gather", "tf.gather (axes, batch_dims, negative-free indices) and tf.gather_nd",
   [Arg("params", (3, 4, 2)), Arg("indices", (2,), "int32", values=[2, 0]),
    Arg("nd_indices", (3, 2), "int32", values=[[0, 1], [2, 3], [1, 0]])])
def _(params, indices, nd_indices):
    return {"axis0": tf.gather(params, indices), "axis1": tf.gather(params, indices, axis=1),
            "batch_dims": tf.gather(params, tf.stack([indices, indices, indices]), axis=1, batch_dims=1),
            "gather_nd": tf.gather_nd(params, nd_indices),
            "gather_nd_batch": tf.gather_nd(params, nd_indices[:, :1], batch_dims=0)}


@p("reverse_sort_unique", "tf.reverse, tf.sort (both directions), tf.argsort, tf.unique, unique_with_counts",
   [Arg("x", (3, 5)), Arg("ids", (8,), "int32", values=[4, 1, 4, 2, 1, 1, 7, 2])])
def _(x, ids):
    unique = tf.unique(ids)
    counted = tf.unique_with_counts(ids)
    return {"reverse": tf.reverse(x, axis=[1]), "reverse_both": tf.reverse(x, axis=[0, 1]),
            "sort": tf.sort(x, axis=-1), "sort_descending": tf.sort(x, axis=0, direction="DESCENDING"),
            "argsort": tf.argsort(x, axis=-1, stable=True), "unique": unique.y, "unique_idx": unique.idx,
            "unique_counts": counted.count}


# ---- shapes and construction -----------------------------------------------
@p("shapes", "tf.shape, dynamic reshape, tile, pad (constant/reflect/symmetric), concat, stack, split, "
   "slice, strided slices with ellipsis and new axes, expand_dims, squeeze",
   [Arg("x", (None, 3, 4), draw=(2, 3, 4))])
def _(x):
    parts = tf.split(x, [1, 3], axis=2)
    return {"shape": tf.shape(x), "reshape": tf.reshape(x, [tf.shape(x)[0], -1]),
            "tile": tf.tile(x, [1, 2, 1]), "pad": tf.pad(x, [[0, 0], [1, 2], [0, 1]], constant_values=-1.0),
            "pad_reflect": tf.pad(x, [[0, 0], [1, 1], [2, 1]], mode="REFLECT"),
            "pad_symmetric": tf.pad(x, [[0, 0], [1, 1], [2, 1]], mode="SYMMETRIC"),
            "concat": tf.concat([x, x * 2], axis=1), "stack": tf.stack([x, -x], axis=1),
            "split_first": parts[0], "split_second": parts[1], "slice": tf.slice(x, [0, 1, 1], [-1, 2, 2]),
            "strided": x[..., ::-2], "newaxis": x[:, tf.newaxis, 1, 1:3],
            "expand_squeeze": tf.squeeze(tf.expand_dims(x, 1), axis=1)}


@p("construct", "tf.one_hot, tf.range with a dynamic limit, fill, linspace, zeros_like, eye, stateless random",
   [Arg("labels", (4,), "int32", values=[0, 2, 1, 3]), Arg("n", (), "int32", values=5),
    Arg("seed", (2,), "int32", values=[7, 11])])
def _(labels, n, seed):
    return {"one_hot": tf.one_hot(labels, 4, on_value=2.0, off_value=-1.0), "range": tf.range(1, n * 2, 2),
            "fill": tf.fill([n, 2], 3.5), "linspace": tf.linspace(0.0, 1.0, 5), "eye": tf.eye(3),
            "stateless_uniform": tf.random.stateless_uniform([2, 3], seed=seed),
            "stateless_normal": tf.random.stateless_normal([3], seed=seed)}


# ---- tf.nn -----------------------------------------------------------------
@p("nn_ops", "tf.nn conv2d, depthwise, pooling, softmax, moments, l2_normalize, batch_normalization, "
   "depth_to_space, space_to_depth, local response normalization",
   [Arg("x", (1, 6, 6, 4)), Arg("filters", (3, 3, 4, 2))], tolerance=LOOSE)
def _(x, filters):
    mean, variance = tf.nn.moments(x, axes=[1, 2])
    return {"conv2d": tf.nn.conv2d(x, filters, strides=2, padding="SAME"),
            "depthwise": tf.nn.depthwise_conv2d(x, tf.ones([3, 3, 4, 1]) * 0.1, [1, 1, 1, 1], "VALID"),
            "max_pool": tf.nn.max_pool2d(x, 3, 2, "SAME"), "avg_pool": tf.nn.avg_pool2d(x, 2, 2, "VALID"),
            "softmax": tf.nn.softmax(x, axis=-1), "log_softmax": tf.nn.log_softmax(x), "mean": mean,
            "variance": variance, "l2_normalize": tf.nn.l2_normalize(x, axis=-1),
            "batch_norm": tf.nn.batch_normalization(x, 0.1, 2.0, 0.5, 1.5, 1e-3),
            "depth_to_space": tf.nn.depth_to_space(x, 2), "space_to_depth": tf.nn.space_to_depth(x, 2),
            "lrn": tf.nn.local_response_normalization(x, depth_radius=1), "relu6": tf.nn.relu6(x * 8),
            "gelu": tf.nn.gelu(x)}


def _dense_state(module, rng):
    module.w = tf.Variable(rng.normal(size=(4, 3)).astype("float32"), name="w")
    module.b = tf.Variable(rng.normal(size=(3,)).astype("float32"), name="b")


@p("variables_dense", "a dense layer from tf.Variable weights held by the module (frozen into constants)",
   [Arg("x", (None, 4), draw=(2, 4))], state=_dense_state)
def _(module, x):
    return {"y": tf.nn.relu(tf.matmul(x, module.w) + module.b)}


# ---- control flow ----------------------------------------------------------
@p("control_cond", "tf.cond on a data-dependent predicate, each branch with its own ops",
   [Arg("x", (3,)), Arg("flag", (), "bool", values=True)])
def _(x, flag):
    by_flag = tf.cond(flag, lambda: x * 2.0 + 1.0, lambda: tf.square(x))
    by_sum = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_max(x), lambda: tf.reduce_min(x))
    return {"by_flag": by_flag, "by_sum": by_sum}


@p("control_while", "tf.while_loop: Newton iterations for a square root with a data-dependent count",
   [Arg("x", (4,), low=1.0, high=9.0), Arg("steps", (), "int32", values=6)])
def _(x, steps):
    def body(i, y):
        return i + 1, 0.5 * (y + x / y)
    i, root = tf.while_loop(lambda i, y: i < steps, body, (tf.constant(0), tf.ones_like(x)))
    count = tf.while_loop(lambda c, v: v > 1.0, lambda c, v: (c + 1, v / 2.0),
                          (tf.constant(0), tf.reduce_max(x)), maximum_iterations=10)[0]
    return {"sqrt": root, "iterations": i, "halvings": count}


@p("control_while_tensor_array", "tf.while_loop accumulating rows into a TensorArray, then stacked",
   [Arg("x", (None, 3), draw=(4, 3))])
def _(x):
    n = tf.shape(x)[0]
    array = tf.TensorArray(tf.float32, size=n)

    def body(i, total, out):
        total = total + x[i]
        return i + 1, total, out.write(i, total * tf.cast(i + 1, tf.float32))
    _, total, array = tf.while_loop(lambda i, *_: i < n, body, (0, tf.zeros([3]), array))
    return {"rows": array.stack(), "total": total}


@p("control_autograph_loop", "a Python for-loop over tf.range and an if on a tensor, converted by AutoGraph",
   [Arg("x", (5,)), Arg("n", (), "int32", values=4)])
def _(x, n):
    y = x
    for i in tf.range(n):
        if tf.reduce_sum(y) > 0:
            y = y - tf.cast(i, tf.float32) * 0.1
        else:
            y = y * 1.5
    return {"y": y}


@p("control_map_fn", "tf.map_fn over the rows, with a different output dtype, and tf.vectorized_map",
   [Arg("x", (None, 4), draw=(3, 4))])
def _(x):
    normalized = tf.map_fn(lambda row: row / (tf.reduce_max(tf.abs(row)) + 1.0), x)
    argmax = tf.map_fn(lambda row: tf.argmax(row, output_type=tf.int32), x,
                       fn_output_signature=tf.int32)
    return {"normalized": normalized, "argmax": argmax,
            "vectorized": tf.vectorized_map(lambda row: tf.reduce_sum(row * row), x)}


@p("control_nested", "tf.cond inside a tf.while_loop body, and a while_loop inside a cond branch",
   [Arg("x", (3,)), Arg("limit", (), "int32", values=5)])
def _(x, limit):
    def body(i, y):
        y = tf.cond(i % 2 == 0, lambda: y + 1.0, lambda: y * 0.5)
        return i + 1, y
    _, looped = tf.while_loop(lambda i, y: i < limit, body, (0, x))

    def countdown():
        return tf.while_loop(lambda k: k > 0, lambda k: k - 2, [limit])[0]
    branch = tf.cond(limit > 3, countdown, lambda: limit)
    return {"looped": looped, "branch": branch}


def cases():
    return list(CASES)
