"""Writes resize.npz, grouped_conv.npz and boxes_3d.npz: TensorFlow's outputs
for the image resize ops and their gradients, grouped Conv2D, CropAndResize,
NonMaxSuppressionV3/V4/V5, Conv3D, MaxPool3D and AvgPool3D, which
python/tests/test_image_ops.py and test_boxes_3d_ops.py compare Plexus
against.

Run with a TensorFlow install (2.21 made the committed files):
    python tests/data/image_ops/generate.py
Keys are "<op>|<mode>|<size>|<dtype>" (resize), "<grad op>|<mode>|<dtype>"
(gradients) and "conv|<case>|x", "...|f", "...|y" (grouped Conv2D).
"""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"legacy": (False, False), "align": (True, False), "half": (False, True)}
SIZES = [(9, 11), (2, 3), (4, 5), (1, 7), (6, 2)]
OPS = ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"]
# Every dtype at every size for these; the others at the first size only.
FULL = ["float32", "float64", "uint8"]
OTHERS = ["float16", "bfloat16", "int8", "int16", "uint16", "int32", "int64"]


def image(dtype, rng):
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        return rng.uniform(-2, 2, (2, 4, 5, 3)).astype(np.float32)
    lo = -100 if dtype.startswith("int") else 0
    return rng.integers(lo, 120, (2, 4, 5, 3)).astype(np.int64)


def resize_cases(out):
    rng = np.random.default_rng(7)
    for dtype in FULL + OTHERS:
        x = image(dtype, rng)
        out[f"x|{dtype}"] = x
        tx = tf.cast(tf.constant(x), dtype)
        for op in OPS:
            for mode, (align, half) in MODES.items():
                for size in SIZES if dtype in FULL else SIZES[:1]:
                    y = getattr(tf.raw_ops, op)(images=tx, size=list(size), align_corners=align,
                                                half_pixel_centers=half)
                    y = tf.cast(y, tf.float64) if y.dtype == tf.bfloat16 else y
                    out[f"{op}|{mode}|{size[0]}x{size[1]}|{dtype}"] = y.numpy()


def grad_cases(out):
    rng = np.random.default_rng(8)
    original = (2, 4, 5, 3)
    for mode, (align, half) in MODES.items():
        for size in [(9, 11), (2, 3)]:
            g = rng.uniform(-1, 1, (2, size[0], size[1], 3)).astype(np.float32)
            key = f"{mode}|{size[0]}x{size[1]}"
            out[f"grads|{key}"] = g
            for dtype in ["float32", "float64", "float16"]:
                r = tf.raw_ops.ResizeBilinearGrad(
                    grads=g, original_image=tf.zeros(original, dtype), align_corners=align,
                    half_pixel_centers=half)
                out[f"ResizeBilinearGrad|{key}|{dtype}"] = r.numpy()
            for dtype in ["float32", "int32"]:
                gi = g if dtype == "float32" else np.round(g * 50).astype(np.int32)
                out[f"grads_int|{key}"] = np.round(g * 50).astype(np.int32)
                r = tf.raw_ops.ResizeNearestNeighborGrad(
                    grads=gi, size=list(original[1:3]), align_corners=align,
                    half_pixel_centers=half)
                out[f"ResizeNearestNeighborGrad|{key}|{dtype}"] = r.numpy()


def conv_cases(out):
    rng = np.random.default_rng(9)
    # name: (input shape, filter shape, strides, padding, dilations)
    cases = {
        "g2_same": ((2, 6, 7, 4), (3, 3, 2, 6), (1, 1), "SAME", (1, 1)),
        "g3_valid_stride": ((1, 7, 6, 6), (3, 2, 2, 3), (2, 1), "VALID", (1, 1)),
        "g4_dilated": ((1, 8, 8, 8), (3, 3, 2, 8), (1, 1), "SAME", (2, 2)),
        "depthwise_like": ((2, 5, 5, 4), (3, 3, 1, 8), (2, 2), "SAME", (1, 1)),
    }
    for name, (xs, fs, strides, padding, dil) in cases.items():
        x = rng.uniform(-1, 1, xs).astype(np.float32)
        f = rng.uniform(-1, 1, fs).astype(np.float32)
        y = tf.nn.conv2d(x, f, strides=[1, *strides, 1], padding=padding,
                         dilations=[1, *dil, 1])
        out[f"conv|{name}|x"], out[f"conv|{name}|f"], out[f"conv|{name}|y"] = x, f, y.numpy()


def boxes_cases(out):
    rng = np.random.default_rng(10)
    image = rng.uniform(-2, 2, (2, 6, 7, 3)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.3, 0.5, 0.6, 1.4], [0.9, 0.8, 0.2, 0.1],
                      [0.5, 0.5, 0.5, 0.5]], np.float32)
    box_ind = np.array([0, 1, 1, 0], np.int32)
    out["crop|image"], out["crop|boxes"], out["crop|box_ind"] = image, boxes, box_ind
    for dtype in ["float32", "float64", "float16", "uint8", "int32"]:
        img = image if dtype.startswith("float") else np.round((image + 2) * 40)
        out[f"crop|image|{dtype}"] = img
        for method in ["bilinear", "nearest"]:
            for crop in [(3, 4), (1, 1), (5, 2)]:
                y = tf.raw_ops.CropAndResize(image=tf.cast(img, dtype), boxes=boxes,
                                             box_ind=box_ind, crop_size=list(crop), method=method,
                                             extrapolation_value=0.5)
                out[f"crop|{method}|{crop[0]}x{crop[1]}|{dtype}"] = y.numpy()
    # NMS: 40 random boxes with many overlaps, and scores with ties.
    corners = rng.uniform(0, 1, (40, 2)).astype(np.float32)
    sizes = rng.uniform(0.05, 0.4, (40, 2)).astype(np.float32)
    nms_boxes = np.concatenate([corners, corners + sizes], axis=1)
    nms_boxes[::7] = nms_boxes[::7][:, [2, 3, 0, 1]]  # flipped corners
    scores = np.round(rng.uniform(0, 1, 40), 2).astype(np.float32)
    out["nms|boxes"], out["nms|scores"] = nms_boxes, scores
    for dtype in ["float32", "float16"]:
        b, sc = tf.cast(nms_boxes, dtype), tf.cast(scores, dtype)
        for name, (m, iou, st) in {"a": (40, 0.5, -np.inf), "b": (10, 0.3, 0.4),
                                   "c": (25, 0.0, 0.2)}.items():
            r = tf.raw_ops.NonMaxSuppressionV3(boxes=b, scores=sc, max_output_size=m,
                                               iou_threshold=np.float32(iou),
                                               score_threshold=np.float32(st))
            out[f"nms3|{name}|{dtype}"] = r.numpy()
            r = tf.raw_ops.NonMaxSuppressionV4(boxes=b, scores=sc, max_output_size=m,
                                               iou_threshold=np.float32(iou),
                                               score_threshold=np.float32(st),
                                               pad_to_max_output_size=True)
            out[f"nms4|{name}|{dtype}"] = r.selected_indices.numpy()
            out[f"nms4_valid|{name}|{dtype}"] = r.valid_outputs.numpy()
        for name, (m, iou, st, sigma) in {"soft": (20, 1.0, 0.05, 0.5),
                                          "soft_hard": (15, 0.6, 0.1, 0.3),
                                          "hard": (40, 0.5, 0.0, 0.0)}.items():
            r = tf.raw_ops.NonMaxSuppressionV5(boxes=b, scores=sc, max_output_size=m,
                                               iou_threshold=tf.cast(iou, dtype),
                                               score_threshold=tf.cast(st, dtype),
                                               soft_nms_sigma=tf.cast(sigma, dtype),
                                               pad_to_max_output_size=False)
            out[f"nms5|{name}|{dtype}|indices"] = r.selected_indices.numpy()
            out[f"nms5|{name}|{dtype}|scores"] = r.selected_scores.numpy().astype(np.float32)
            out[f"nms5|{name}|{dtype}|valid"] = r.valid_outputs.numpy()


def window3d_cases(out):
    rng = np.random.default_rng(11)
    cases = {  # name: (x shape, window, strides, padding, dilations, out channels)
        "same": ((2, 4, 5, 6, 3), (3, 3, 3), (1, 1, 1), "SAME", (1, 1, 1), 4),
        "valid_strided": ((1, 5, 6, 4, 2), (2, 3, 2), (2, 1, 2), "VALID", (1, 1, 1), 3),
        "same_stride2": ((1, 6, 5, 5, 2), (2, 2, 2), (2, 2, 2), "SAME", (1, 1, 1), 2),
        "dilated": ((1, 6, 6, 6, 2), (2, 2, 2), (1, 1, 1), "VALID", (2, 1, 2), 2),
    }
    for name, (xs, k, st, pad, dil, oc) in cases.items():
        x = rng.uniform(-1, 1, xs).astype(np.float32)
        f = rng.uniform(-1, 1, (*k, xs[4], oc)).astype(np.float32)
        out[f"3d|{name}|x"], out[f"3d|{name}|f"] = x, f
        out[f"3d|{name}|conv"] = tf.raw_ops.Conv3D(
            input=x, filter=f, strides=[1, *st, 1], padding=pad,
            dilations=[1, *dil, 1]).numpy()
        if dil == (1, 1, 1):
            for op in ["MaxPool3D", "AvgPool3D"]:
                out[f"3d|{name}|{op}"] = getattr(tf.raw_ops, op)(
                    input=x, ksize=[1, *k, 1], strides=[1, *st, 1], padding=pad).numpy()


def main():
    resize = {}
    resize_cases(resize)
    grad_cases(resize)
    np.savez_compressed(os.path.join(HERE, "resize.npz"), **resize)
    conv = {}
    conv_cases(conv)
    np.savez_compressed(os.path.join(HERE, "grouped_conv.npz"), **conv)
    other = {}
    boxes_cases(other)
    window3d_cases(other)
    np.savez_compressed(os.path.join(HERE, "boxes_3d.npz"), **other)


if __name__ == "__main__":
    main()
