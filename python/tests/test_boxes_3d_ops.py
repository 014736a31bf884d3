"""CropAndResize, non-max suppression (V3, V4, V5) and the 3-D window ops
(Conv3D, MaxPool3D, AvgPool3D) against TensorFlow's own outputs.

The fixtures (tests/data/image_ops/boxes_3d.npz) were written by
tests/data/image_ops/generate.py with TensorFlow 2.21. Tolerances:
CropAndResize's blends are float arithmetic in TensorFlow's order (1e-6);
NMS selections are exact (indices), soft-NMS scores to the box type's
rounding; Conv3D sums up to 81 float products (1e-5), pooling 1e-6.
"""

import os
import pathlib

import numpy as np
import pytest

import plexus as px
from plexus import errors, raw_ops


def _data_dir() -> pathlib.Path:
    env = os.environ.get("PLEXUS_TEST_DATA")
    if env:
        return pathlib.Path(env) / "image_ops"
    return pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data" / "image_ops"


D = np.load(_data_dir() / "boxes_3d.npz")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "uint8", "int32"])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", ["3x4", "1x1", "5x2"])
def test_crop_and_resize_matches_tensorflow(dtype, method, crop):
    image = px.constant(D[f"crop|image|{dtype}"].astype(dtype))
    h, w = (int(v) for v in crop.split("x"))
    y = px.image.crop_and_resize(image, D["crop|boxes"], D["crop|box_ind"], [h, w],
                                 method=method, extrapolation_value=0.5)
    assert y.dtype == px.float32
    np.testing.assert_allclose(y.numpy(), D[f"crop|{method}|{crop}|{dtype}"], rtol=1e-6,
                               atol=1e-6)


def test_crop_and_resize_errors():
    image = px.constant(D["crop|image|float32"])
    boxes = D["crop|boxes"]
    with pytest.raises(errors.OutOfRangeError, match="box_ind"):
        px.image.crop_and_resize(image, boxes, np.array([0, 2, 1, 0], np.int32), [3, 3]).numpy()
    bad = boxes.copy()
    bad[1, 2] = np.nan
    with pytest.raises(errors.InvalidArgumentError, match="not finite"):
        px.image.crop_and_resize(image, bad, D["crop|box_ind"], [3, 3]).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="CropAndResize"):
        px.image.crop_and_resize(image, boxes, D["crop|box_ind"], [3, 3], method="area")


NMS3 = {"a": (40, 0.5, -np.inf), "b": (10, 0.3, 0.4), "c": (25, 0.0, 0.2)}
NMS5 = {"soft": (20, 1.0, 0.05, 0.5), "soft_hard": (15, 0.6, 0.1, 0.3), "hard": (40, 0.5, 0.0, 0.0)}


def nms_inputs(dtype):
    dt = px.float16 if dtype == "float16" else px.float32
    return (raw_ops.Cast(px.constant(D["nms|boxes"]), DstT=dt),
            raw_ops.Cast(px.constant(D["nms|scores"]), DstT=dt))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(NMS3))
def test_non_max_suppression_v3_v4_match_tensorflow(dtype, name):
    boxes, scores = nms_inputs(dtype)
    m, iou, st = NMS3[name]
    f32 = lambda v: px.constant(np.float32(v))  # noqa: E731  (T_threshold float)
    v3 = raw_ops.NonMaxSuppressionV3(boxes, scores, px.constant(np.int32(m)), f32(iou), f32(st))
    np.testing.assert_array_equal(v3.numpy(), D[f"nms3|{name}|{dtype}"])
    v4 = raw_ops.NonMaxSuppressionV4(boxes, scores, px.constant(np.int32(m)), f32(iou), f32(st),
                                     pad_to_max_output_size=True)
    np.testing.assert_array_equal(v4.selected_indices.numpy(), D[f"nms4|{name}|{dtype}"])
    assert int(v4.valid_outputs.numpy()) == int(D[f"nms4_valid|{name}|{dtype}"])
    assert v4.selected_indices.shape == (m,)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(NMS5))
def test_non_max_suppression_v5_matches_tensorflow(dtype, name):
    boxes, scores = nms_inputs(dtype)
    m, iou, st, sigma = NMS5[name]
    idx, sc = px.image.non_max_suppression_with_scores(boxes, scores, m, iou, st, sigma)
    np.testing.assert_array_equal(idx.numpy(), D[f"nms5|{name}|{dtype}|indices"])
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(sc.numpy().astype(np.float32), D[f"nms5|{name}|{dtype}|scores"],
                               rtol=tol, atol=tol)


def test_non_max_suppression_public_name_and_errors():
    got = px.image.non_max_suppression(D["nms|boxes"], D["nms|scores"], 10, 0.3, 0.4)
    np.testing.assert_array_equal(got.numpy(), D["nms3|b|float32"])
    with pytest.raises(errors.InvalidArgumentError, match="iou_threshold"):
        px.image.non_max_suppression(D["nms|boxes"], D["nms|scores"], 10, 1.5).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="scores"):
        px.image.non_max_suppression(D["nms|boxes"], D["nms|scores"][:5], 10).numpy()
    with pytest.raises(errors.InvalidArgumentError, match="max_output_size"):
        px.image.non_max_suppression(D["nms|boxes"], D["nms|scores"], -1).numpy()


def test_non_max_suppression_in_a_graph_function():
    """The selected count is known only at run time: a traced function still runs."""
    @px.function
    def select(boxes, scores):
        return px.image.non_max_suppression(boxes, scores, 10, 0.3, 0.4)
    got = select(px.constant(D["nms|boxes"]), px.constant(D["nms|scores"]))
    np.testing.assert_array_equal(got.numpy(), D["nms3|b|float32"])


WINDOW3D = {
    "same": ((1, 1, 1), "SAME", (1, 1, 1), (3, 3, 3)),
    "valid_strided": ((2, 1, 2), "VALID", (1, 1, 1), (2, 3, 2)),
    "same_stride2": ((2, 2, 2), "SAME", (1, 1, 1), (2, 2, 2)),
    "dilated": ((1, 1, 1), "VALID", (2, 1, 2), (2, 2, 2)),
}


@pytest.mark.parametrize("name", list(WINDOW3D))
def test_conv3d_matches_tensorflow(name):
    strides, padding, dilations, _ = WINDOW3D[name]
    x, f = D[f"3d|{name}|x"], D[f"3d|{name}|f"]
    y = px.nn.conv3d(px.constant(x), px.constant(f), strides, padding, dilations=dilations)
    np.testing.assert_allclose(y.numpy(), D[f"3d|{name}|conv"], rtol=1e-5, atol=1e-5)
    y64 = px.nn.conv3d(px.constant(x.astype(np.float64)), px.constant(f.astype(np.float64)),
                       strides, padding, dilations=dilations)
    np.testing.assert_allclose(y64.numpy(), D[f"3d|{name}|conv"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", [n for n, v in WINDOW3D.items() if v[2] == (1, 1, 1)])
@pytest.mark.parametrize("op", ["max_pool3d", "avg_pool3d"])
def test_pool3d_matches_tensorflow(name, op):
    strides, padding, _, ksize = WINDOW3D[name]
    expected = D[f"3d|{name}|{'MaxPool3D' if op == 'max_pool3d' else 'AvgPool3D'}"]
    y = getattr(px.nn, op)(px.constant(D[f"3d|{name}|x"]), ksize, strides, padding)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6, atol=1e-6)
    h = getattr(px.nn, op)(px.constant(D[f"3d|{name}|x"].astype(np.float16)), ksize, strides,
                           padding)
    np.testing.assert_allclose(h.numpy().astype(np.float32), expected, rtol=2e-3, atol=2e-3)


def test_window3d_errors():
    x = px.constant(np.zeros((1, 4, 4, 4, 2), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="Conv3D"):
        px.nn.conv3d(x, px.constant(np.zeros((2, 2, 2, 3, 1), np.float32)), 1, "SAME")
    with pytest.raises(errors.UnimplementedError, match="NDHWC"):
        raw_ops.MaxPool3D(px.constant(np.zeros((1, 2, 4, 4, 4), np.float32)),
                          ksize=[1, 1, 2, 2, 2], strides=[1, 1, 1, 1, 1], padding="SAME",
                          data_format="NCDHW").numpy()
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        px.nn.avg_pool3d(x, 5, 1, "VALID")
