"""ExtractImagePatches and CombinedNonMaxSuppression (host ops) through
plexus.raw_ops against TensorFlow's tf.raw_ops on the same inputs in the
same test: patches are copies, so exact; the suppression is exact too
(random scores have no ties, so the ranking is TensorFlow's)."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops
RNG = np.random.default_rng(5)


@pytest.mark.parametrize("ksize,stride,rate,padding", [
    ((1, 3, 3, 1), (1, 1, 1, 1), (1, 1, 1, 1), "VALID"), ((1, 3, 2, 1), (1, 2, 3, 1), (1, 1, 1, 1), "SAME"),
    ((1, 2, 2, 1), (1, 2, 2, 1), (1, 2, 2, 1), "SAME"), ((1, 4, 4, 1), (1, 4, 4, 1), (1, 1, 1, 1), "VALID"),
    ((1, 3, 3, 1), (1, 1, 1, 1), (1, 3, 2, 1), "VALID")])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_extract_image_patches(ksize, stride, rate, padding, dtype):
    images = RNG.integers(0, 100, (2, 9, 10, 3)).astype(dtype)
    attrs = dict(ksizes=list(ksize), strides=list(stride), rates=list(rate), padding=padding)
    ours = R.ExtractImagePatches(images=px.constant(images), **attrs).numpy()
    theirs = tf.raw_ops.ExtractImagePatches(images=tf.constant(images), **attrs).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_extract_image_patches_bad_attrs():
    with pytest.raises(errors.PlexusError, match=r"\[1, rows, cols, 1\]"):
        R.ExtractImagePatches(images=px.constant(np.zeros((1, 4, 4, 1), np.float32)), ksizes=[2, 2, 2, 1],
                              strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="VALID")


def _boxes(batch, n, q):
    corners = RNG.uniform(-0.1, 1.1, (batch, n, q, 2, 2)).astype(np.float32)
    return np.concatenate([corners.min(3), corners.max(3)], -1)[..., [0, 1, 2, 3]]


@pytest.mark.parametrize("q", [1, 3])
@pytest.mark.parametrize("pad_per_class,clip", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("per_class,total,iou,score", [(5, 8, 0.5, 0.1), (2, 20, 0.3, 0.0), (10, 4, 0.7, 0.5)])
def test_combined_non_max_suppression(q, pad_per_class, clip, per_class, total, iou, score):
    boxes = _boxes(2, 12, q)
    scores = RNG.uniform(0, 1, (2, 12, 3)).astype(np.float32)
    args = dict(max_output_size_per_class=np.int32(per_class), max_total_size=np.int32(total),
                iou_threshold=np.float32(iou), score_threshold=np.float32(score),
                pad_per_class=pad_per_class, clip_boxes=clip)
    ours = R.CombinedNonMaxSuppression(boxes=px.constant(boxes), scores=px.constant(scores), **args)
    theirs = tf.raw_ops.CombinedNonMaxSuppression(boxes=tf.constant(boxes), scores=tf.constant(scores), **args)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_combined_non_max_suppression_errors():
    with pytest.raises(errors.InvalidArgumentError, match="1 or num classes"):
        R.CombinedNonMaxSuppression(boxes=px.constant(_boxes(1, 4, 2)),
                                    scores=px.constant(np.zeros((1, 4, 3), np.float32)),
                                    max_output_size_per_class=np.int32(2), max_total_size=np.int32(2),
                                    iou_threshold=np.float32(0.5), score_threshold=np.float32(0.0))


def test_public_extract_patches_matches_tensorflow():
    images = RNG.standard_normal((1, 6, 6, 2)).astype(np.float32)
    args = ([1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    np.testing.assert_array_equal(px.image.extract_patches(images, *args).numpy(),
                                  tf.image.extract_patches(images, *args).numpy())


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("blank", [-1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ctc_greedy_decoder(merge, blank, dtype):
    # Few classes so that repeats and blanks happen.
    logits = RNG.standard_normal((12, 4, 3)).astype(dtype)
    lengths = np.array([12, 7, 0, 3], np.int32)
    ours = R.CTCGreedyDecoder(inputs=px.constant(logits), sequence_length=lengths, merge_repeated=merge,
                              blank_index=blank)
    theirs = tf.raw_ops.CTCGreedyDecoder(inputs=tf.constant(logits), sequence_length=lengths,
                                         merge_repeated=merge, blank_index=blank)
    for o, t in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    np.testing.assert_allclose(ours[3].numpy(), theirs[3].numpy(), rtol=1e-6)
    with pytest.raises(errors.InvalidArgumentError, match="sequence_length"):
        R.CTCGreedyDecoder(inputs=px.constant(logits), sequence_length=np.array([13, 1, 1, 1], np.int32))
