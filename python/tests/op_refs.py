"""NumPy references and random input makers for test_ops_numpy.py.

Everything here is plain NumPy (no SciPy, no Plexus): dtype helpers, seeded
random inputs, the Case record a table entry produces, tolerances, and small
reference implementations of the ops whose NumPy equivalent is not a single
call (convolutions, pooling, batch norm, strided slice, gathers, space/batch
reshuffles, the audio spectrogram, ...). References compute in float64 (the
harness hands them float64 copies of floating inputs) and follow TensorFlow's
semantics where NumPy's differ (truncating integer division, TF's SAME
padding, ...).
"""
import io
import math
import wave
import zlib

import numpy as np

# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------

# docs/ops.md spells dtypes the TensorFlow way; the tests use NumPy's names.
DOC_DTYPE = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "bool": "bool", "string": "string", "complex64": "complex64", "complex128": "complex128",
}

FLOATS = ("float32", "float64", "float16", "bfloat16")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
ALL13 = FLOATS + INTS + ("bool",)


def is_float(dt):
    return dt in FLOATS


def is_int(dt):
    return dt in INTS


def carrier(dt):
    """The NumPy dtype that holds values of plexus dtype `dt` (bfloat16 lives in float32)."""
    if dt == "bfloat16":
        return np.dtype(np.float32)
    if dt == "string":
        return np.dtype(object)
    return np.dtype(dt)


def round_bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), still as float32."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32).reshape(x.shape)


def as_dtype_values(x, dt):
    """`x` converted to plexus dtype `dt`, held in its carrier NumPy dtype."""
    if dt == "bfloat16":
        return round_bf16(np.asarray(x, dtype=np.float64).astype(np.float32))
    return np.asarray(x).astype(carrier(dt))


def seed_for(*parts):
    """A fixed seed per (op, dtype, ...) so every case is reproducible on its own."""
    return zlib.crc32("/".join(str(p) for p in parts).encode())


def rand(rng, shape, dt, lo=-1.0, hi=1.0):
    """Random values of dtype `dt`: uniform in [lo, hi) for floats, integers in
    [lo, hi] for integer types (clipped to the type's range), coin flips for bool."""
    shape = tuple(shape)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if is_int(dt):
        info = np.iinfo(np.dtype(dt))
        lo_i = max(int(math.ceil(lo)), int(info.min))
        hi_i = min(int(math.floor(hi)), int(info.max))
        return rng.integers(lo_i, hi_i + 1, size=shape).astype(dt)
    return as_dtype_values(rng.uniform(lo, hi, size=shape), dt)


def rand_nonzero(rng, shape, dt, lo, hi):
    """Random values whose magnitude is in [lo, hi] with a random sign (unsigned
    types: positive); never zero for lo > 0."""
    if is_int(dt):
        mag = rng.integers(int(lo), int(hi) + 1, size=tuple(shape))
        if dt in UNSIGNED:
            return mag.astype(dt)
        return (mag * rng.choice([-1, 1], size=tuple(shape))).astype(dt)
    mag = rng.uniform(lo, hi, size=tuple(shape))
    return as_dtype_values(mag * rng.choice([-1.0, 1.0], size=tuple(shape)), dt)


def distinct(rng, shape, dt, axis=-1):
    """Values with no ties along `axis` (for ArgMax/ArgMin, TopK)."""
    shape = tuple(shape)
    n = shape[axis]
    base = np.argsort(rng.random(shape), axis=axis).astype(np.float64)  # a permutation
    if is_float(dt):
        vals = (base - n / 2) * 0.25  # exact in every float type for small n
    elif dt in UNSIGNED:
        vals = base
    else:
        vals = base - n // 2
    return as_dtype_values(vals, dt)


# ---------------------------------------------------------------------------
# Cases and tolerances
# ---------------------------------------------------------------------------


class In:
    """A tensor input: `value` (NumPy, carrier dtype) made into a plexus tensor of `dtype`."""

    def __init__(self, value, dtype):
        self.dtype = dtype
        if dtype == "string":
            self.value = np.asarray(value, dtype=object)
        else:
            self.value = as_dtype_values(value, dtype)

    def ref_value(self):
        """What a reference function sees: floats as float64, everything else as is."""
        if is_float(self.dtype):
            return self.value.astype(np.float64)
        return self.value


def ti(value, dtype="int32"):
    """A small integer input (axis, shape, perm, paddings...) as a tensor."""
    return In(np.asarray(value, dtype=np.int64), dtype)


# Tolerances (rtol, atol) by kind of computation and output dtype; the
# comparison is |actual - expected| <= atol + rtol * |expected| with the
# expected value computed in float64 from the exact (already rounded) inputs.
#  exact:  data movement and exact arithmetic: bit-for-bit equal.
#  elem:   one correctly rounded operation: the output's own rounding
#          (half 2^-11, bfloat16 2^-8 relative), with 2x margin.
#  transc: transcendental functions: a few ulp for float32 (Eigen's
#          polynomial exp/log/tanh/erf), ~1e-10 for float64; half and
#          bfloat16 as elem plus the float computation's error.
#  accum:  sums of up to a few dozen products (matmul, conv, reductions,
#          softmax, batch norm, spectrogram): float32 1e-5 relative/absolute
#          on values of magnitude ~1-10 (the order of summation differs from
#          NumPy's); half and bfloat16 computed in float then rounded once,
#          plus some margin for kernels that round intermediates (5e-3 half,
#          2e-2 bfloat16).
TOLERANCES = {
    "exact": {"float32": (0, 0), "float64": (0, 0), "float16": (0, 0), "bfloat16": (0, 0)},
    "elem": {"float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12),
             "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)},
    "transc": {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12),
               "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)},
    "accum": {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10),
              "float16": (5e-3, 5e-3), "bfloat16": (2e-2, 2e-2)},
}


class Case:
    """One run of an op: inputs (In, list of In, or plain Python values),
    attributes, the NumPy reference (called with the inputs' reference values,
    returns one array or a list), the kind of tolerance and, where the default
    guess is wrong, the expected output dtypes."""

    def __init__(self, variant, inputs, attrs=None, ref=None, tol="elem", out_dtypes=None,
                 expected=None, dtype=None):
        self.variant = variant
        self.inputs = inputs
        self.attrs = attrs or {}
        self.ref = ref
        self.tol = tol
        self.out_dtypes = out_dtypes
        self.expected = expected
        self.dtype = dtype  # the op's element dtype, filled in by the table

    def ref_inputs(self):
        def conv(v):
            if isinstance(v, In):
                return v.ref_value()
            if isinstance(v, list) and v and isinstance(v[0], In):
                return [conv(e) for e in v]
            return v
        return [conv(v) for v in self.inputs]

    def expected_outputs(self):
        if self.expected is not None:
            out = self.expected
        else:
            out = self.ref(*self.ref_inputs())
        if isinstance(out, tuple):
            out = list(out)
        if not isinstance(out, list):
            out = [out]
        return [np.asarray(o) if not isinstance(o, np.ndarray) else o for o in out]

    def tolerance(self, out_dtype):
        if isinstance(self.tol, tuple):
            return self.tol
        return TOLERANCES[self.tol].get(out_dtype, (0, 0))


# ---------------------------------------------------------------------------
# Elementwise references with TensorFlow's semantics
# ---------------------------------------------------------------------------


def trunc_div(x, y):
    """C-style (truncating) division for integers; true division for floats."""
    if x.dtype.kind in "iu":
        with np.errstate(all="ignore"):
            q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
            return (q * np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64))).astype(
                np.result_type(x, y))
    return x / y


def floor_div(x, y):
    if x.dtype.kind in "iu":
        return np.floor_divide(x, y)
    return np.floor(x / y)


def int_pow(x, y):
    if x.dtype.kind in "iu":
        return np.power(x.astype(np.int64), y.astype(np.int64)).astype(x.dtype)
    return np.power(x, y)


def reciprocal(x):
    if x.dtype.kind in "iu":
        return trunc_div(np.ones_like(x), x)
    return 1.0 / x


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def erfc(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def cumulative(x, axis, exclusive, reverse, product, dt):
    """Cumsum / Cumprod with TensorFlow's semantics: the running value is kept
    in dtype `dt` and rounded after every step (a long half sum drifts as
    TensorFlow's does); integers wrap around."""
    x = np.moveaxis(np.asarray(x), axis, 0)
    if reverse:
        x = x[::-1]
    if is_float(dt):
        def step(a, b):
            with np.errstate(invalid="ignore", over="ignore"):
                return as_dtype_values(a * b if product else a + b, dt).astype(np.float64)
        running = np.full(x.shape[1:], 1.0 if product else 0.0)
    else:
        def step(a, b):
            with np.errstate(over="ignore"):
                return (a * b if product else a + b).astype(x.dtype)
        running = np.full(x.shape[1:], 1 if product else 0, dtype=x.dtype)
    out = np.empty_like(x)
    for k in range(x.shape[0]):
        if exclusive:
            out[k] = running
        running = step(running, x[k])
        if not exclusive:
            out[k] = running
    if reverse:
        out = out[::-1]
    return np.moveaxis(out, 0, axis)


def band_part(x, lower, upper):
    """MatrixBandPart: keeps (m, n) where (lower < 0 or m - n <= lower) and
    (upper < 0 or n - m <= upper), zero elsewhere."""
    rows, cols = x.shape[-2], x.shape[-1]
    m = np.arange(rows)[:, None]
    n = np.arange(cols)[None, :]
    keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
    return np.where(keep, x, np.zeros((), dtype=x.dtype))


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def relu(x):
    return np.maximum(x, np.zeros_like(x))


def relu6(x):
    return np.minimum(np.maximum(x, np.zeros_like(x)), np.full_like(x, 6))


def elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def selu(x):
    return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))


def softplus(x):
    return np.logaddexp(0.0, x)


def f32attr(v):
    """A "float" attribute's value as the kernel sees it: attributes are float32."""
    return float(np.float32(v))


def leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, x * f32attr(alpha))


def gelu(x, approximate=True):
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    s = x - np.max(x, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


ACTIVATIONS = {
    "Relu": relu, "Relu6": relu6, "Elu": elu, "Tanh": np.tanh, "Sigmoid": sigmoid,
}


def activation(name, x, leakyrelu_alpha=0.2):
    if name is None:
        return x
    if name == "LeakyRelu":
        return leaky_relu(x, leakyrelu_alpha)
    return ACTIVATIONS[name](x)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def reduce(fn, x, axis, keep_dims, dtype):
    """TF reduction: `axis` a Python int or list (empty list: no reduction)."""
    axes = tuple(np.atleast_1d(np.asarray(axis, dtype=np.int64)).tolist())
    axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
    if fn == "mean" and dtype in INTS:
        s = np.sum(x.astype(np.int64), axis=axes, keepdims=keep_dims)
        n = max(int(np.prod([x.shape[a] for a in axes])), 1)
        return trunc_div(np.asarray(s), np.asarray(np.int64(n))).astype(dtype)
    f = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
         "all": np.all, "any": np.any}[fn]
    out = f(x, axis=axes, keepdims=keep_dims)
    if dtype in INTS:
        out = np.asarray(out).astype(dtype)
    return np.asarray(out)


# ---------------------------------------------------------------------------
# Convolution and pooling (NHWC in the references; NCHW cases transpose)
# ---------------------------------------------------------------------------


def conv_out_and_pads(in_size, k, stride, dilation, padding, explicit=None):
    """Output size and (before, after) padding of one spatial dim, TF's rules."""
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return (in_size - eff) // stride + 1 if in_size >= eff else 0, (0, 0)
    if padding == "SAME":
        out = -(-in_size // stride)
        total = max((out - 1) * stride + eff - in_size, 0)
        return out, (total // 2, total - total // 2)
    before, after = explicit
    return (in_size + before + after - eff) // stride + 1, (before, after)


def conv2d(x, w, strides, padding, dilations=(1, 1), explicit=None, depthwise=False):
    """NHWC input, HWIO filter (HW, in, multiplier for depthwise); strides and
    dilations (h, w); explicit ((top, bottom), (left, right))."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    oh, ph = conv_out_and_pads(h, kh, strides[0], dilations[0], padding,
                               explicit[0] if explicit else None)
    ow, pw = conv_out_and_pads(wd, kw, strides[1], dilations[1], padding,
                               explicit[1] if explicit else None)
    xp = np.pad(x, ((0, 0), ph, pw, (0, 0)))
    out_c = c * w.shape[3] if depthwise else w.shape[3]
    acc = np.zeros((n, oh, ow, out_c), dtype=np.result_type(x, w, np.float64)
                   if x.dtype.kind == "f" else np.int64)
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilations[0], j * dilations[1]
            patch = xp[:, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                       c0:c0 + (ow - 1) * strides[1] + 1:strides[1], :]
            if oh == 0 or ow == 0:
                continue
            if depthwise:
                acc += (patch[..., :, None] * w[i, j][None, None, None]).reshape(
                    n, oh, ow, out_c)
            else:
                acc += patch.astype(acc.dtype) @ w[i, j].astype(acc.dtype)
    return acc


def pool2d(x, ksize, strides, padding, kind):
    """NHWC max or average pool with window ksize=(kh, kw), TF's SAME rules
    (max ignores padding, average divides by the number of valid elements)."""
    n, h, wd, c = x.shape
    oh, ph = conv_out_and_pads(h, ksize[0], strides[0], 1, padding)
    ow, pw = conv_out_and_pads(wd, ksize[1], strides[1], 1, padding)
    out = np.zeros((n, oh, ow, c), dtype=np.float64 if x.dtype.kind == "f" else x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0 = max(i * strides[0] - ph[0], 0)
            r1 = min(i * strides[0] - ph[0] + ksize[0], h)
            c0 = max(j * strides[1] - pw[0], 0)
            c1 = min(j * strides[1] - pw[0] + ksize[1], wd)
            win = x[:, r0:r1, c0:c1, :]
            out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


def nchw(x):
    return np.transpose(x, (0, 3, 1, 2))


def nhwc(x):
    return np.transpose(x, (0, 2, 3, 1))


def batch_norm_inference(x, scale, offset, mean, variance, epsilon, channel_axis=-1):
    shape = [1] * x.ndim
    shape[channel_axis] = -1
    r = lambda v: np.asarray(v, dtype=np.float64).reshape(shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(variance) + f32attr(epsilon)) * r(scale) + r(offset)


def bias_add(x, b, data_format="NHWC"):
    if data_format == "NCHW" and x.ndim >= 3:
        return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return x + b


# ---------------------------------------------------------------------------
# Array ops
# ---------------------------------------------------------------------------


def strided_slice(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """TF's StridedSlice as a NumPy basic index (NumPy clamps ranges the same way)."""
    idx = []
    for i in range(len(begin)):
        bit = 1 << i
        if ellipsis_mask & bit:
            idx.append(Ellipsis)
        elif new_axis_mask & bit:
            idx.append(None)
        elif shrink_axis_mask & bit:
            idx.append(int(begin[i]))
        else:
            b = None if begin_mask & bit else int(begin[i])
            e = None if end_mask & bit else int(end[i])
            idx.append(slice(b, e, int(strides[i])))
    return np.array(x[tuple(idx)])


def gather_v2(params, indices, axis=0, batch_dims=0):
    axis = axis % params.ndim
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    return np.stack([gather_v2(params[i], indices[i], axis - 1, batch_dims - 1)
                     for i in range(params.shape[0])])


def gather_nd(params, indices):
    k = indices.shape[-1]
    flat = indices.reshape(-1, k)
    picked = params[tuple(flat.T)] if k else np.broadcast_to(
        params, (flat.shape[0],) + params.shape)
    return picked.reshape(indices.shape[:-1] + params.shape[k:])


def one_hot(indices, depth, on, off, axis=-1):
    eye = (indices[..., None] == np.arange(depth))
    out = np.where(eye, on, off)
    if axis != -1 and axis != indices.ndim:
        out = np.moveaxis(out, -1, axis)
    return out


def space_to_batch_nd(x, block, paddings):
    block = [int(b) for b in block]
    m = len(block)
    pads = [(0, 0)] + [tuple(int(v) for v in p) for p in paddings] + [(0, 0)] * (x.ndim - 1 - m)
    xp = np.pad(x, pads)
    b = xp.shape[0]
    shape = [b]
    for i in range(m):
        shape += [xp.shape[1 + i] // block[i], block[i]]
    rest = list(xp.shape[1 + m:])
    y = xp.reshape(shape + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = y.transpose(perm)
    return y.reshape([b * int(np.prod(block))] + [xp.shape[1 + i] // block[i] for i in range(m)]
                     + rest)


def batch_to_space_nd(x, block, crops):
    block = [int(b) for b in block]
    m = len(block)
    nb = int(np.prod(block))
    b = x.shape[0] // nb
    spatial = list(x.shape[1:1 + m])
    rest = list(x.shape[1 + m:])
    y = x.reshape(block + [b] + spatial + rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = y.transpose(perm).reshape([b] + [spatial[i] * block[i] for i in range(m)] + rest)
    idx = [slice(None)] + [slice(int(c[0]), y.shape[1 + i] - int(c[1]))
                           for i, c in enumerate(crops)]
    return y[tuple(idx)]


def broadcast_gradient_args(s0, s1):
    """TF's BroadcastGradientArgs: the axes to sum over for each input's gradient."""
    s0, s1 = [int(v) for v in s0], [int(v) for v in s1]
    n = max(len(s0), len(s1))
    a = [1] * (n - len(s0)) + s0
    b = [1] * (n - len(s1)) + s1
    # Each input's gradient sums over the dims where its (left-padded) size is 1
    # and the other's is not.
    r0 = [i for i in range(n) if a[i] == 1 and b[i] != 1]
    r1 = [i for i in range(n) if b[i] == 1 and a[i] != 1]
    return np.asarray(r0), np.asarray(r1)


# ---------------------------------------------------------------------------
# Audio
# ---------------------------------------------------------------------------


def wav_bytes(samples_int16, sample_rate):
    """A 16-bit PCM WAV file holding samples [frames, channels]."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples_int16.shape[1])
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(np.ascontiguousarray(samples_int16, dtype="<i2").tobytes())
    return buf.getvalue()


def audio_spectrogram(x, window_size, stride, magnitude_squared):
    """TF's AudioSpectrogram: [samples, channels] -> [channels, frames, bins],
    periodic Hann window, FFT length the next power of two."""
    samples, channels = x.shape
    fft_len = 1
    while fft_len < window_size:
        fft_len *= 2
    frames = 0 if samples < window_size else 1 + (samples - window_size) // stride
    n = np.arange(window_size)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / window_size)
    out = np.zeros((channels, frames, fft_len // 2 + 1))
    for c in range(channels):
        for f in range(frames):
            seg = x[f * stride:f * stride + window_size, c] * hann
            spec = np.fft.rfft(seg, n=fft_len)
            p = np.abs(spec) ** 2
            out[c, f] = p if magnitude_squared else np.sqrt(p)
    return out
