"""plexus.random.stateless_*: TensorFlow's tf.random.stateless_* functions.

Each is the composite TensorFlow's Python builds, op for op, so the results
are TensorFlow's bits: StatelessRandomGetKeyCounter turns the seed into a
Philox key and counter, a V2 op draws from them, and the same arithmetic
scales the draw (rnd * (maxval - minval) + minval, rnd * stddev + mean,
max(tiny, rnd / beta)). Registered into _api.EXPORTS (imported at the end of
_api.py).
"""

from __future__ import annotations

import numpy as _np

from plexus import _plexus
from plexus._api import _as_dtype, _dims, _ex, _export, _tensor, _TENSOR_TYPES

_float32 = _plexus.float32

# Algorithm ids of the V2 ops (TensorFlow's tf.random.Algorithm).
_ALGS = {"philox": 1, "threefry": 2, "autoselect": 3}


def _alg_id(alg):
    """TensorFlow's convert_alg_to_int: an int, a name ("philox", "threefry",
    "auto_select") or a tf.random.Algorithm-like enum."""
    if alg is None:
        return 3
    if isinstance(alg, int) or isinstance(alg, _TENSOR_TYPES):
        return alg
    if hasattr(alg, "value"):
        return int(alg.value)
    if isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        if canon in _ALGS:
            return _ALGS[canon]
        raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are "
                         "'philox' (1), 'threefry' (2) and 'auto_select' (3).")
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) to int.")


def _shape(shape):
    return shape if isinstance(shape, _TENSOR_TYPES) else _dims(shape)


def _key_counter_alg(seed, alg):
    """Key, counter and algorithm inputs of a V2 op. Philox and auto-select
    scramble the seed the same way (TensorFlow's Python spells the Philox one
    out with StatelessRandomUniformFullIntV2; the words are identical)."""
    alg = _alg_id(alg)
    seed = _tensor(seed)
    key, counter = _ex("StatelessRandomGetKeyCounter", [seed], {"Tseed": seed.dtype})
    if not isinstance(alg, _TENSOR_TYPES):
        alg = _plexus.constant(int(alg), _plexus.int32)
    return key, counter, alg


@_export("random.stateless_uniform")
def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_float32, name=None,
                      alg="auto_select"):
    """Deterministic uniform values from `seed` (a vector of 2 ints), as
    tf.random.stateless_uniform: floats in [minval, maxval) (maxval None is
    1; ops StatelessRandomGetKeyCounter, StatelessRandomUniformV2), integers
    in [minval, maxval) (StatelessRandomUniformIntV2), or integers of every
    bit pattern when both bounds are None (StatelessRandomUniformFullIntV2)."""
    dtype = _as_dtype(dtype)
    if dtype.name not in ("float16", "bfloat16", "float32", "float64", "int32", "int64",
                          "uint32", "uint64"):
        raise ValueError(f"Argument `dtype` got invalid value {dtype.name}. Accepted dtypes are "
                         "float16, bfloat16, float32, float64, int32, int64, uint32, uint64.")
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype.name}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} and "
                             f"`maxval`={maxval}.")
        if minval is not None and dtype.name in ("uint32", "uint64"):
            raise ValueError(f"Argument `dtype` got invalid value {dtype.name} when argument "
                             "`minval` is not None. Please don't use unsigned integers in this case.")
    elif maxval is None:
        maxval = 1
    shape = _shape(shape)
    key, counter, alg = _key_counter_alg(seed, alg)
    if dtype.is_integer and minval is None:
        return _ex("StatelessRandomUniformFullIntV2", [shape, key, counter, alg], {"dtype": dtype})[0]
    minval = _tensor(minval, dtype)
    maxval = _tensor(maxval, dtype)
    if dtype.is_integer:
        return _ex("StatelessRandomUniformIntV2", [shape, key, counter, alg, minval, maxval],
                   {"dtype": dtype})[0]
    rnd = _ex("StatelessRandomUniformV2", [shape, key, counter, alg], {"dtype": dtype})[0]
    scaled = _ex("Mul", [rnd, _ex("Sub", [maxval, minval], None)[0]], None)[0]
    return _ex("AddV2", [scaled, minval], None)[0]


def _normal(op, shape, seed, mean, stddev, dtype, alg):
    dtype = _as_dtype(dtype)
    mean = _tensor(mean, dtype)
    stddev = _tensor(stddev, dtype)
    key, counter, alg = _key_counter_alg(seed, alg)
    rnd = _ex(op, [_shape(shape), key, counter, alg], {"dtype": dtype})[0]
    return _ex("AddV2", [_ex("Mul", [rnd, stddev], None)[0], mean], None)[0]


@_export("random.stateless_normal")
def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_float32, name=None,
                     alg="auto_select"):
    """Deterministic normal values from `seed` (a vector of 2 ints), as
    tf.random.stateless_normal: rnd * stddev + mean of a standard normal
    draw (ops StatelessRandomGetKeyCounter, StatelessRandomNormalV2)."""
    return _normal("StatelessRandomNormalV2", shape, seed, mean, stddev, dtype, alg)


@_export("random.stateless_truncated_normal")
def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_float32, name=None,
                               alg="auto_select"):
    """Deterministic normal values within two standard deviations of the mean
    from `seed`, as tf.random.stateless_truncated_normal (ops
    StatelessRandomGetKeyCounter, StatelessTruncatedNormalV2)."""
    return _normal("StatelessTruncatedNormalV2", shape, seed, mean, stddev, dtype, alg)


@_export("random.stateless_gamma")
def stateless_gamma(shape, seed, alpha, beta=None, dtype=_float32, name=None):
    """Deterministic Gamma(alpha, beta) samples from `seed`, as
    tf.random.stateless_gamma: `shape` ends with the broadcast shape of alpha
    and beta; max(tiny, rnd / beta) of Gamma(alpha, 1) draws (ops
    StatelessRandomGetKeyCounter, StatelessRandomGammaV3)."""
    dtype = _as_dtype(dtype)
    alpha = _tensor(alpha, dtype)
    beta = _tensor(1 if beta is None else beta, dtype)
    broadcast = _ex("BroadcastArgs", [_ex("Shape", [alpha], None)[0],
                                      _ex("Shape", [beta], None)[0]], None)[0]
    alpha = _ex("BroadcastTo", [alpha, broadcast], None)[0]
    key, counter, alg = _key_counter_alg(seed, "auto_select")
    rnd = _ex("StatelessRandomGammaV3", [_shape(shape), key, counter, alg, alpha], None)[0]
    tiny = _plexus.constant(_np.finfo(_np.dtype(dtype.as_numpy_dtype)).tiny, dtype)
    return _ex("Maximum", [tiny, _ex("RealDiv", [rnd, beta], None)[0]], None)[0]
