"""Hand-written public functions for tf.strings, tf.signal and complex
numbers whose signatures differ from their ops (see _api.py): reduce_join and
to_number with TensorFlow's argument names, rfft/irfft that pad or crop
their input to fft_length as tf.signal does before the op, and real, imag and
complex that take real tensors too."""

from __future__ import annotations

import numpy as _np

from plexus import _plexus
from plexus._api import _export, _ex, _tensor, _all_axes, _ints

_int32 = _plexus.int32
_COMPLEX_OF = {"float32": _plexus.complex64, "float64": _plexus.complex128}
_REAL_OF = {"complex64": _plexus.float32, "complex128": _plexus.float64}


@_export("strings.reduce_join")
def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along `axis` with `separator` (op ReduceJoin); the
    first axis listed varies fastest. None joins all of them in row-major
    order (the axes from last to first, as TensorFlow)."""
    inputs = _tensor(inputs)
    if axis is None:
        axes = _ex("ReverseV2", [_all_axes(inputs), _ints([0])], None)[0]
    else:
        axes = _ints(list(axis) if isinstance(axis, (list, tuple)) else [axis])
    return _ex("ReduceJoin", [inputs, axes], {"keep_dims": bool(keepdims), "separator": separator})[0]


@_export("strings.to_number")
def to_number(input, out_type=_plexus.float32, name=None):
    """Parses each string as a number of `out_type` (op StringToNumber):
    float32, float64, int32 or int64; a string that is not one is an error."""
    return _ex("StringToNumber", [_tensor(input)], {"out_type": _plexus.as_dtype(out_type)})[0]


def _fit_inner(x, lengths):
    """x with its len(lengths) innermost dimensions cropped or zero-padded to
    `lengths` (tf.signal's rfft does this before the op); a complex x part by
    part (the plugins slice and pad real tensors)."""
    if x.dtype.name in _REAL_OF:
        tout = {"Tout": _REAL_OF[x.dtype.name]}
        re = _fit_inner(_ex("Real", [x], tout)[0], lengths)
        im = _fit_inner(_ex("Imag", [x], tout)[0], lengths)
        return _ex("Complex", [re, im], {"Tout": x.dtype})[0]
    shape = x.shape
    if shape is None or any(d is None for d in shape[len(shape) - len(lengths):]):
        raise ValueError("rfft needs the inner dimensions of its input to be known")
    inner = list(shape[len(shape) - len(lengths):])
    if inner == list(lengths):
        return x
    rank = len(shape)
    begin = [0] * rank
    size = [-1] * (rank - len(lengths)) + [min(a, b) for a, b in zip(inner, lengths)]
    x = _ex("Slice", [x, _ints(begin), _ints(size)], None)[0]
    pads = [[0, 0]] * (rank - len(lengths)) + [[0, max(0, b - a)] for a, b in zip(inner, lengths)]
    if any(p[1] for p in pads):
        x = _ex("Pad", [x, _plexus.constant(_np.array(pads, _np.int32))], None)[0]
    return x


def _real_fft(op, dims, forward):
    def transform(input_tensor, fft_length=None, name=None):
        x = _tensor(input_tensor)
        shape = x.shape
        if fft_length is None:
            if shape is None or any(d is None for d in shape[-dims:]):
                raise ValueError(f"{op} needs fft_length or inner dimensions that are known")
            inner = list(shape[-dims:])
            if not forward:
                inner[-1] = 2 * (inner[-1] - 1)
            fft_length = inner
        lengths = [int(v) for v in _np.asarray(fft_length).reshape(-1)]
        if forward:
            x = _fit_inner(x, lengths)
            attrs = {"Tcomplex": _COMPLEX_OF.get(x.dtype.name, _plexus.complex64)}
        else:
            x = _fit_inner(x, lengths[:-1] + [lengths[-1] // 2 + 1])
            attrs = {"Treal": _REAL_OF.get(x.dtype.name, _plexus.float32)}
        return _ex(op, [x, _plexus.constant(_np.array(lengths, _np.int32))], attrs)[0]
    name = op.lower()
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (f"{'Real-input' if forward else 'Real-output inverse'} Fourier transform over the "
                         f"{dims} innermost dimension(s) (op {op}); the input is cropped or zero-padded to "
                         "fft_length first, as tf.signal does.")
    return _export(f"signal.{name}")(transform)


rfft = _real_fft("RFFT", 1, True)
irfft = _real_fft("IRFFT", 1, False)
rfft2d = _real_fft("RFFT2D", 2, True)
irfft2d = _real_fft("IRFFT2D", 2, False)
rfft3d = _real_fft("RFFT3D", 3, True)
irfft3d = _real_fft("IRFFT3D", 3, False)


@_export("real", "math.real")
def real(input, name=None):
    """The real parts of a complex tensor (op Real); a real tensor as it is."""
    x = _tensor(input)
    if x.dtype.name not in _REAL_OF:
        return x
    return _ex("Real", [x], {"Tout": _REAL_OF[x.dtype.name]})[0]


@_export("imag", "math.imag")
def imag(input, name=None):
    """The imaginary parts of a complex tensor (op Imag); zeros for a real one."""
    x = _tensor(input)
    if x.dtype.name not in _REAL_OF:
        return _ex("ZerosLike", [x], None)[0]
    return _ex("Imag", [x], {"Tout": _REAL_OF[x.dtype.name]})[0]


@_export("complex")
def complex(real, imag, name=None):
    """Complex numbers from real and imaginary parts, broadcast (op Complex):
    complex64 from float32, complex128 from float64."""
    re, im = _tensor(real), _tensor(imag)
    return _ex("Complex", [re, im], {"Tout": _COMPLEX_OF.get(re.dtype.name, _plexus.complex64)})[0]
