"""Hand-written public functions of the 3-D convolution and pooling ops
(see _api.py): conv3d, conv3d_transpose, max_pool3d, avg_pool3d, with
TensorFlow's signatures."""

from __future__ import annotations

from plexus._api import _ex, _export, _ints, _spatial


@_export("nn.conv3d")
def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """3-D convolution (op Conv3D); filters [depth, height, width, in, out];
    strides and dilations: an int or a list of 1, 3 or 5 ints."""
    attrs = {"strides": _spatial(strides, 3, data_format, "strides"), "padding": padding}
    if data_format != "NDHWC":
        attrs["data_format"] = data_format
    if dilations is not None:
        attrs["dilations"] = _spatial(dilations, 3, data_format, "dilations")
    return _ex("Conv3D", [input, filters], attrs)[0]


@_export("nn.conv3d_transpose")
def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",
                     dilations=None, name=None):
    """The transposed 3-D convolution (op Conv3DBackpropInputV2): the gradient
    of conv3d with respect to its input, of shape `output_shape`; filters
    [depth, height, width, output_channels, in_channels]."""
    attrs = {"strides": _spatial(strides, 3, data_format, "strides"), "padding": padding}
    if data_format != "NDHWC":
        attrs["data_format"] = data_format
    if dilations is not None:
        attrs["dilations"] = _spatial(dilations, 3, data_format, "dilations")
    sizes = _ints(list(output_shape)) if isinstance(output_shape, (list, tuple)) else output_shape
    return _ex("Conv3DBackpropInputV2", [sizes, filters, input], attrs)[0]


@_export("nn.max_pool3d")
def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D max pooling (op MaxPool3D); ksize and strides: an int or 1, 3 or 5 ints."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format)


@_export("nn.avg_pool3d")
def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D average pooling (op AvgPool3D); ksize and strides: an int or 1, 3 or 5 ints."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format)


def _pool3d(op, input, ksize, strides, padding, data_format):
    attrs = {"ksize": _spatial(ksize, 3, data_format, "ksize"),
             "strides": _spatial(strides, 3, data_format, "strides"), "padding": padding}
    if data_format != "NDHWC":
        attrs["data_format"] = data_format
    return _ex(op, [input], attrs)[0]
