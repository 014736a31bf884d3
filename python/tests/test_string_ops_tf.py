"""String ops of tf.strings and feature crossing (Substr, ReduceJoin,
StringToNumber, StringSplit, SparseCross, SparseCrossV2, SparseCrossHashed)
and Assert, run eagerly through plexus.raw_ops against TensorFlow's
tf.raw_ops on the same inputs in the same test. Strings and integers
compare exactly; parsed floats too (both parse to the nearest value)."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops

WORDS = [b"Hello World", b"tensorFLOW runs", b"", b"a-b-c 123", "h\u00e9llo w\u00f6rld".encode()]


def flat(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t).reshape(-1).tolist()


def same(ours, theirs):
    a, b = np.asarray(ours.numpy()), np.asarray(theirs.numpy())
    assert a.shape == b.shape
    assert a.dtype.kind == b.dtype.kind or (a.dtype.kind in "SOU" and b.dtype.kind in "SOU")
    assert flat(a) == flat(b)


# ---- Substr ------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["BYTE", "UTF8_CHAR"])
@pytest.mark.parametrize("pos,length", [(0, 4), (1, 100), (-3, 2), (-1, 5), (2, -1), (0, 0), (-5, 2)])
def test_substr_scalar_pos(unit, pos, length):
    words = [w for w in WORDS if len(w.decode()) >= 5]
    for dtype in (np.int32, np.int64):
        ours = R.Substr(input=px.constant(words), pos=dtype(pos), len=dtype(length), unit=unit)
        theirs = tf.raw_ops.Substr(input=tf.constant(words), pos=dtype(pos), len=dtype(length), unit=unit)
        same(ours, theirs)


@pytest.mark.parametrize("unit", ["BYTE", "UTF8_CHAR"])
def test_substr_elementwise_and_broadcast(unit):
    words = np.array([[b"abcdef", "\u00e9t\u00e9 ok".encode()], [b"xyz", b"0123456789"]])
    pos = np.array([[1, 2], [0, -4]], np.int32)
    length = np.array([[3, 2], [10, 2]], np.int32)
    same(R.Substr(input=px.constant(words), pos=pos, len=length, unit=unit),
         tf.raw_ops.Substr(input=tf.constant(words), pos=pos, len=length, unit=unit))
    # pos and len of one row broadcast over the rows.
    same(R.Substr(input=px.constant(words), pos=pos[0], len=length[0], unit=unit),
         tf.raw_ops.Substr(input=tf.constant(words), pos=pos[0], len=length[0], unit=unit))


def test_substr_errors():
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        R.Substr(input=px.constant([b"abc"]), pos=np.int32(4), len=np.int32(1))
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        R.Substr(input=px.constant(["\u00e9t\u00e9".encode()]), pos=np.int32(4), len=np.int32(1), unit="UTF8_CHAR")
    with pytest.raises(errors.InvalidArgumentError, match="same shape"):
        R.Substr(input=px.constant([b"abc", b"de"]), pos=np.array([0, 1], np.int32), len=np.int32(1))


# ---- ReduceJoin --------------------------------------------------------------------------


@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 1], [1, 0], [2, 0], [], [0, 2, 1]])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce_join(axes, keep_dims):
    values = np.array([[[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]], [[b"g", b"h"], [b"i", b"j"], [b"k", b"l"]]])
    ours = R.ReduceJoin(inputs=px.constant(values), reduction_indices=np.array(axes, np.int32),
                        keep_dims=keep_dims, separator="-")
    theirs = tf.raw_ops.ReduceJoin(inputs=values, reduction_indices=np.array(axes, np.int32), keep_dims=keep_dims,
                                   separator="-")
    same(ours, theirs)


def test_reduce_join_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate reduction dimension"):
        R.ReduceJoin(inputs=px.constant([[b"a"]]), reduction_indices=np.array([0, -2], np.int32))
    with pytest.raises(errors.PlexusError, match="Invalid reduction dimension"):
        R.ReduceJoin(inputs=px.constant([[b"a"]]), reduction_indices=np.array([2], np.int32))


# ---- StringToNumber ----------------------------------------------------------------------


@pytest.mark.parametrize("out_type,texts", [
    (px.float32, [b"1.5", b" -2e3 ", b"inf", b"-0", b"3", b"1e-40"]),
    (px.float64, [b"0.1", b"1e308", b"-nan", b"  7  "]),
    (px.int32, [b"12", b"-2147483648", b" 42", b"+5"]),
    (px.int64, [b"9223372036854775807", b"-1", b"0"]),
])
def test_string_to_number(out_type, texts):
    ours = R.StringToNumber(string_tensor=px.constant(texts), out_type=out_type)
    theirs = tf.raw_ops.StringToNumber(string_tensor=texts, out_type=tf.as_dtype(out_type.name))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("text,out_type", [(b"abc", px.float32), (b"2147483648", px.int32), (b"1.5", px.int64),
                                           (b"", px.int32)])
def test_string_to_number_rejects(text, out_type):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.StringToNumber(string_tensor=[text], out_type=tf.as_dtype(out_type.name))
    with pytest.raises(errors.InvalidArgumentError, match="could not correctly convert string"):
        R.StringToNumber(string_tensor=px.constant([text]), out_type=out_type)


# ---- StringSplit (v1) --------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [b" ", b"-", b" -", b"", b"o"])
@pytest.mark.parametrize("skip_empty", [True, False])
def test_string_split_v1(delimiter, skip_empty):
    words = WORDS + [b"  two  spaces ", b"--"]
    ours = R.StringSplit(input=px.constant(words), delimiter=px.constant(delimiter), skip_empty=skip_empty)
    theirs = tf.raw_ops.StringSplit(input=words, delimiter=delimiter, skip_empty=skip_empty)
    for o, t in zip(ours, theirs):
        same(o, t)


# ---- feature crosses ---------------------------------------------------------------------


def _sparse(rows, dtype):
    indices = [[r, k] for r, row in enumerate(rows) for k in range(len(row))]
    values = [v for row in rows for v in row]
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, dtype),
            np.array([len(rows), max(len(r) for r in rows)], np.int64))


def _inputs():
    s1 = _sparse([[b"a", b"b"], [], [b"c"]], object)
    s2 = _sparse([[3], [4, 5], [6, 7]], np.int64)
    d1 = np.array([[b"x"], [b"y"], [b"z"]])
    d2 = np.array([[10, 11], [12, 13], [14, 15]], np.int64)
    return [s1, s2], [d1, d2]


def _cross_args(sparse, dense, conv):
    return dict(indices=[conv(s[0]) for s in sparse],
                values=[conv(np.array(s[1].tolist()) if s[1].dtype == object else s[1]) for s in sparse],
                shapes=[conv(s[2]) for s in sparse],
                dense_inputs=[conv(d) for d in dense])


@pytest.mark.parametrize("hashed,num_buckets", [(False, 0), (True, 0), (True, 100)])
def test_sparse_cross(hashed, num_buckets):
    sparse, dense = _inputs()
    if not hashed:  # joined as strings: TensorFlow takes string columns only
        with pytest.raises(errors.InvalidArgumentError, match="internal type string"):
            R.SparseCross(**_cross_args(sparse, dense, px.constant), hashed_output=False, num_buckets=0, hash_key=0,
                          out_type=px.string, internal_type=px.string)
        sparse, dense = sparse[:1], dense[:1]
    attrs = dict(hashed_output=hashed, num_buckets=num_buckets, hash_key=956888297470)
    out_type = px.int64 if hashed else px.string
    ours = R.SparseCross(**_cross_args(sparse, dense, px.constant), **attrs, out_type=out_type, internal_type=out_type)
    theirs = tf.raw_ops.SparseCross(**_cross_args(sparse, dense, tf.constant), **attrs,
                                    out_type=tf.int64 if hashed else tf.string,
                                    internal_type=tf.int64 if hashed else tf.string)
    for o, t in zip(ours, theirs):
        same(o, t)


def test_sparse_cross_v2():
    sparse, dense = _inputs()
    ours = R.SparseCrossV2(**_cross_args(sparse, dense, px.constant), sep=px.constant(b"::"))
    theirs = tf.raw_ops.SparseCrossV2(**_cross_args(sparse, dense, tf.constant), sep=b"::")
    for o, t in zip(ours, theirs):
        same(o, t)


@pytest.mark.parametrize("strong", [False, True])
@pytest.mark.parametrize("num_buckets", [0, 7])
def test_sparse_cross_hashed(strong, num_buckets):
    sparse, dense = _inputs()
    if strong:
        # TensorFlow 2.21 crashes on a strong hash of a dense integer
        # column (it reads the salt out of bounds), so none here.
        dense = dense[:1]
    extra = dict(num_buckets=np.int64(num_buckets), strong_hash=np.bool_(strong), salt=np.array([13, 17], np.int64))
    ours = R.SparseCrossHashed(**_cross_args(sparse, dense, px.constant), **extra)
    theirs = tf.raw_ops.SparseCrossHashed(**_cross_args(sparse, dense, tf.constant), **extra)
    for o, t in zip(ours, theirs):
        same(o, t)


def test_sparse_cross_dense_only_like_hashed_crossing():
    x1 = np.array([[1], [4], [0]], np.int64)
    x2 = np.array([[b"a"], [b"b"], [b"a"]])
    attrs = dict(hashed_output=True, num_buckets=8, hash_key=956888297470, out_type=px.int64, internal_type=px.int64)
    ours = R.SparseCross(indices=[], values=[], shapes=[], dense_inputs=[px.constant(x1), px.constant(x2)], **attrs)
    theirs = tf.sparse.cross_hashed([tf.constant(x1), tf.constant(x2)], num_buckets=8)
    np.testing.assert_array_equal(ours[1].numpy(), theirs.values.numpy())


def test_sparse_cross_batch_mismatch():
    with pytest.raises(errors.InvalidArgumentError, match="Expected batch size"):
        R.SparseCross(indices=[], values=[], shapes=[],
                      dense_inputs=[px.constant(np.zeros((2, 1), np.int64)), px.constant(np.zeros((3, 1), np.int64))],
                      hashed_output=True, num_buckets=4, hash_key=1, out_type=px.int64, internal_type=px.int64)


# ---- Assert ------------------------------------------------------------------------------


def test_assert_passes_and_fails_with_its_data():
    R.Assert(condition=np.bool_(True), data=[px.constant(b"never shown")])
    with pytest.raises(errors.InvalidArgumentError, match=r"assertion failed: \[x must be small\] \[.*1, 2, 3"):
        R.Assert(condition=np.bool_(False), data=[px.constant(b"x must be small"), np.array([1, 2, 3, 4], np.int32)],
                 summarize=3)


def test_assert_in_a_function_stops_the_run():
    @px.function
    def checked(x):
        px.debugging.assert_less(x, 10.0, message="too big") if hasattr(px, "debugging") else R.Assert(
            condition=R.All(input=R.Less(x=x, y=px.constant(10.0)), reduction_indices=np.array([0], np.int32)),
            data=[px.constant(b"too big")])
        return x * 2.0

    np.testing.assert_array_equal(checked(px.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    with pytest.raises(errors.InvalidArgumentError, match="too big"):
        checked(px.constant([1.0, 20.0])).numpy()


def test_public_string_names_match_tensorflow():
    words = np.array([[b"ab", b"cd", b"ef"], [b"gh", b"ij", b"kl"]])
    for axis in (None, 0, 1, -1, [1, 0]):
        same(px.strings.reduce_join(words, axis=axis, separator="+"),
             tf.strings.reduce_join(words, axis=axis, separator="+"))
    same(px.strings.reduce_join(words, axis=1, keepdims=True), tf.strings.reduce_join(words, axis=1, keepdims=True))
    np.testing.assert_array_equal(px.strings.to_number([b"1.25", b"-3"]).numpy(),
                                  tf.strings.to_number([b"1.25", b"-3"]).numpy())
    np.testing.assert_array_equal(px.strings.to_number([b"7"], out_type=px.int64).numpy(), [7])
    same(px.strings.substr(words, 1, 1), tf.strings.substr(words, 1, 1))


@pytest.mark.parametrize("errors_mode", ["replace", "ignore"])
def test_unicode_decode_with_offsets(errors_mode):
    words = ["h\u00e9llo".encode(), b"", b"ab\xffc", "\u20ac\U0001F600x".encode()]
    ours = R.UnicodeDecodeWithOffsets(input=px.constant(np.array(words, dtype=object).astype(bytes)),
                                      input_encoding="UTF-8", errors=errors_mode)
    theirs = tf.raw_ops.UnicodeDecodeWithOffsets(input=tf.constant(words), input_encoding="UTF-8", errors=errors_mode)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_print_v2_and_print(capfd):
    R.PrintV2(input=px.constant(b"hello from a graph"), output_stream="stdout", end="!\n")
    R.PrintV2(input=px.constant(b"to stderr"))
    x = px.constant(np.array([1.0, 2.0], np.float32))
    y = R.Print(input=x, data=[np.array([7, 8], np.int32)], message="values: ")
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])
    out, err = capfd.readouterr()
    assert "hello from a graph!\n" in out
    assert "to stderr\n" in err and "values: " in err and "7, 8" in err
    with pytest.raises(errors.InvalidArgumentError, match="output_stream"):
        R.PrintV2(input=px.constant(b"x"), output_stream="nowhere")
