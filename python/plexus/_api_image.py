"""Hand-written public functions for tf.image whose signatures differ from
their ops (see _api.py): extract_patches with TensorFlow's argument names."""

from __future__ import annotations

from plexus._api import _export, _ex, _tensor


@_export("image.extract_patches")
def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Patches of `images` [batch, rows, cols, depth] (op ExtractImagePatches):
    sizes, strides and rates are [1, rows, cols, 1]; padding "SAME" or
    "VALID"; each output position holds its window flattened as
    [rows, cols, depth]."""
    return _ex("ExtractImagePatches", [_tensor(images)],
               {"ksizes": list(sizes), "strides": list(strides), "rates": list(rates), "padding": padding})[0]
