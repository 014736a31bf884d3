"""The text-preprocessing ops (lookup tables, string ops, ragged-to-dense,
bincounts) run eagerly through plexus.raw_ops, against TensorFlow 2.21's
tf.raw_ops outputs for the same inputs, written down here; strings and
integers compare exactly, floats too (counts and small sums)."""

import itertools

import numpy as np
import pytest

import plexus as px
from plexus import errors

R = px.raw_ops
_names = itertools.count()


def strs(t):
    values = t if isinstance(t, np.ndarray) else t.numpy()
    return [bytes(v) for v in np.asarray(values).reshape(-1)]


def table(key_dtype=px.string, value_dtype=px.int64):
    return R.HashTableV2(shared_name=f"test_table_{next(_names)}", key_dtype=key_dtype, value_dtype=value_dtype)


def exported(t, key_dtype=px.string, value_dtype=px.int64):
    keys, values = R.LookupTableExportV2(table_handle=t, Tkeys=key_dtype, Tvalues=value_dtype)
    k = strs(keys) if key_dtype == px.string else keys.numpy().tolist()
    v = strs(values) if value_dtype == px.string else values.numpy().tolist()
    return sorted(zip(k, v))


# ---- hash tables ---------------------------------------------------------------------------


def test_table_import_find_size_export():
    t = table()
    assert int(R.LookupTableSizeV2(table_handle=t).numpy()) == 0
    R.LookupTableImportV2(table_handle=t, keys=px.constant([b"a", b"b"]), values=np.array([1, 2], np.int64))
    found = R.LookupTableFindV2(table_handle=t, keys=px.constant([[b"a", b"c"], [b"z", b"b"]]),
                                default_value=np.int64(-1))
    np.testing.assert_array_equal(found.numpy(), [[1, -1], [-1, 2]])
    # Filled again with as many entries: TensorFlow changes nothing.
    R.LookupTableImportV2(table_handle=t, keys=px.constant([b"a", b"c"]), values=np.array([1, 3], np.int64))
    assert int(R.LookupTableSizeV2(table_handle=t).numpy()) == 2
    assert exported(t) == [(b"a", 1), (b"b", 2)]
    # One default per key.
    found = R.LookupTableFindV2(table_handle=t, keys=px.constant([b"a", b"q"]),
                                default_value=np.array([7, 8], np.int64))
    np.testing.assert_array_equal(found.numpy(), [1, 8])


def test_table_int_keys_float_values():
    t = table(px.int32, px.float32)
    R.InitializeTableV2(table_handle=t, keys=np.array([3, 4], np.int32), values=np.array([0.5, 1.5], np.float32))
    found = R.LookupTableFindV2(table_handle=t, keys=np.array([[3], [5]], np.int32), default_value=np.float32(-1))
    assert found.dtype == px.float32
    np.testing.assert_array_equal(found.numpy(), [[0.5], [-1.0]])


def test_table_errors():
    t = table()
    with pytest.raises(errors.FailedPreconditionError, match="Table not initialized"):
        R.LookupTableFindV2(table_handle=t, keys=px.constant([b"a"]), default_value=np.int64(0))
    with pytest.raises(errors.FailedPreconditionError,
                       match="HashTable has different value for same key. Key a has 1 and trying to add value 2"):
        R.InitializeTableV2(table_handle=t, keys=px.constant([b"a", b"a"]), values=np.array([1, 2], np.int64))
    with pytest.raises(errors.InvalidArgumentError, match="Keys must be a vector"):
        R.InitializeTableV2(table_handle=t, keys=px.constant([[b"a"]]), values=np.array([[1]], np.int64))
    with pytest.raises(errors.InvalidArgumentError, match="same size 2 vs 1"):
        R.InitializeTableV2(table_handle=t, keys=px.constant([b"a", b"b"]), values=np.array([1], np.int64))
    R.InitializeTableV2(table_handle=t, keys=px.constant([b"a", b"a"]), values=np.array([1, 1], np.int64))
    assert int(R.LookupTableSizeV2(table_handle=t).numpy()) == 1
    with pytest.raises(errors.FailedPreconditionError, match="already initialized with different data"):
        R.InitializeTableV2(table_handle=t, keys=px.constant([b"a", b"b"]), values=np.array([1, 2], np.int64))
    with pytest.raises(errors.InvalidArgumentError, match="keys are int64 but .* holds string keys"):
        R.LookupTableFindV2(table_handle=t, keys=np.array([1], np.int64), default_value=np.int64(0))
    with pytest.raises(errors.InvalidArgumentError, match=r"Expected shape \[\] or \[2\] for default value, got \[3\]"):
        R.LookupTableFindV2(table_handle=t, keys=px.constant([b"a", b"b"]),
                            default_value=np.array([1, 2, 3], np.int64))
    with pytest.raises(errors.InvalidArgumentError, match="not a lookup table handle"):
        R.LookupTableSizeV2(table_handle=R.VarHandleOp(dtype=px.float32, shape=[], shared_name="not_a_table"))


def test_mutable_table_insert_remove_import():
    t = R.MutableHashTableV2(shared_name=f"test_mutable_{next(_names)}", key_dtype=px.int64,
                             value_dtype=px.string)
    find = lambda keys: strs(R.LookupTableFindV2(table_handle=t, keys=np.array(keys, np.int64),  # noqa: E731
                                                 default_value=px.constant(b"?")))
    assert find([1]) == [b"?"]  # no initializer needed
    R.LookupTableInsertV2(table_handle=t, keys=np.array([1, 2], np.int64), values=px.constant([b"a", b"b"]))
    R.LookupTableInsertV2(table_handle=t, keys=np.array([2, 3], np.int64), values=px.constant([b"B", b"c"]))
    assert find([1, 2, 3, 4]) == [b"a", b"B", b"c", b"?"]
    R.LookupTableRemoveV2(table_handle=t, keys=np.array([1, 9], np.int64))
    assert exported(t, px.int64, px.string) == [(2, b"B"), (3, b"c")]
    # An import replaces the contents.
    R.LookupTableImportV2(table_handle=t, keys=np.array([7], np.int64), values=px.constant([b"g"]))
    assert exported(t, px.int64, px.string) == [(7, b"g")]
    assert int(R.LookupTableSizeV2(table_handle=t).numpy()) == 1
    with pytest.raises(errors.InvalidArgumentError, match="takes no initializer"):
        R.InitializeTableV2(table_handle=t, keys=np.array([1], np.int64), values=px.constant([b"a"]))
    with pytest.raises(errors.UnimplementedError, match="is not mutable"):
        R.LookupTableInsertV2(table_handle=table(), keys=px.constant([b"a"]), values=np.array([1], np.int64))


def _from_file(tmp_path, content, key_index=-2, value_index=-1, key_dtype=px.string, value_dtype=px.int64,
               **attrs):
    path = tmp_path / f"vocab_{next(_names)}.txt"
    path.write_bytes(content)
    t = table(key_dtype, value_dtype)
    R.InitializeTableFromTextFileV2(table_handle=t, filename=px.constant(str(path).encode()), key_index=key_index,
                                    value_index=value_index, **attrs)
    return t, path


def test_text_file_initializer(tmp_path):
    t, _ = _from_file(tmp_path, b"a\nb\r\nc")  # CRLF and a last line without newline
    assert exported(t) == [(b"a", 0), (b"b", 1), (b"c", 2)]
    t, _ = _from_file(tmp_path, b"a\nb\nc\n", offset=5)
    assert exported(t) == [(b"a", 5), (b"b", 6), (b"c", 7)]
    t, _ = _from_file(tmp_path, b"a\nb\nc\n", vocab_size=2)
    assert exported(t) == [(b"a", 0), (b"b", 1)]
    t, _ = _from_file(tmp_path, b"a\nb\nc\n", key_index=-1, value_index=-2, key_dtype=px.int64,
                      value_dtype=px.string)
    assert exported(t, px.int64, px.string) == [(0, b"a"), (1, b"b"), (2, b"c")]
    t, _ = _from_file(tmp_path, b"a\t1\nb\t2\n", key_index=0, value_index=1)
    assert exported(t) == [(b"a", 1), (b"b", 2)]
    t, _ = _from_file(tmp_path, b"a\t1\nb\t2\n", key_index=0, value_index=1, value_dtype=px.float32)
    assert exported(t, px.string, px.float32) == [(b"a", 1.0), (b"b", 2.0)]
    # The delimiter is a set of characters; empty fields count.
    t, _ = _from_file(tmp_path, b"a b  c\nd\n", key_index=0, delimiter=" ")
    assert exported(t) == [(b"a", 0), (b"d", 1)]
    # A filled table ignores a later text-file initializer, as TensorFlow does.
    again = tmp_path / "other.txt"
    again.write_bytes(b"x\ny\n")
    R.InitializeTableFromTextFileV2(table_handle=t, filename=px.constant(str(again).encode()), key_index=-2,
                                    value_index=-1)
    assert exported(t) == [(b"a", 0), (b"d", 1)]


@pytest.mark.parametrize("content,attrs,error,message", [
    (b"a\tx\nb\ty\r\n\nc\n", {}, errors.InvalidArgumentError, "empty line found at position 10"),
    (b"a\nb\nc", {"vocab_size": 5}, errors.InvalidArgumentError, "expected 5 but got 3"),
    (b"a\t1\nb\t2\n", {"key_index": 0, "value_index": 2}, errors.InvalidArgumentError,
     r"line 0 \(a\t1\) : expected at least 3 got 2"),
    (b"a\t1\n", {"key_index": 1, "value_index": 0, "key_dtype": px.string, "value_dtype": px.int64},
     errors.InvalidArgumentError, "Field a in line 0 is not a valid int64"),
    (b"a\na\nb\n", {}, errors.FailedPreconditionError, "Key a has 0 and trying to add value 1"),
])
def test_text_file_initializer_errors(tmp_path, content, attrs, error, message):
    with pytest.raises(error, match=message):
        _from_file(tmp_path, content, **attrs)


def test_text_file_initializer_missing_file():
    t = table()
    with pytest.raises(errors.NotFoundError, match="no_such_vocab.txt"):
        R.InitializeTableFromTextFileV2(table_handle=t, filename=px.constant(b"/nonexistent/no_such_vocab.txt"),
                                        key_index=-2, value_index=-1)


# ---- strings ---------------------------------------------------------------------------------


def test_lower_upper_ascii():
    s = px.constant(["Hello World \u00c4\u00d6".encode(), b"", b"MiXeD 123"])
    assert strs(R.StringLower(input=s)) == [b"hello world \xc3\x84\xc3\x96", b"", b"mixed 123"]
    assert strs(R.StringUpper(input=s)) == [b"HELLO WORLD \xc3\x84\xc3\x96", b"", b"MIXED 123"]
    with pytest.raises(errors.UnimplementedError, match="encoding 'utf-8'"):
        R.StringLower(input=s, encoding="utf-8")


def test_regex_replace():
    out = R.StaticRegexReplace(input=px.constant([b"Hello, World!! a.b", b"xx"]), pattern="[!,.]", rewrite="")
    assert strs(out) == [b"Hello World ab", b"xx"]
    assert strs(R.StaticRegexReplace(input=px.constant([b"aaa"]), pattern="a", rewrite="b",
                                     replace_global=False)) == [b"baa"]
    assert strs(R.StaticRegexReplace(input=px.constant([b"abc"]), pattern="(b)", rewrite=r"<\1>")) == [b"a<b>c"]
    assert strs(R.RegexReplace(input=px.constant([b"a1b22"]), pattern=px.constant(b"[0-9]+"),
                               rewrite=px.constant(b"#"))) == [b"a#b#"]
    with pytest.raises(errors.InvalidArgumentError, match="Invalid pattern: \\(, error: missing \\)"):
        R.StaticRegexReplace(input=px.constant([b"a"]), pattern="(", rewrite="")


def _split(values, sep, maxsplit=-1):
    indices, tokens, shape = R.StringSplitV2(input=px.constant(values), sep=px.constant(sep), maxsplit=maxsplit)
    return indices.numpy().tolist(), strs(tokens), shape.numpy().tolist()


def test_string_split_v2():
    assert _split([b"  a b\t\tc  ", b"", b"x"], b"") == (
        [[0, 0], [0, 1], [0, 2], [2, 0]], [b"a", b"b", b"c", b"x"], [3, 3])
    assert _split([b"  a b\t\tc  ", b"a ", b"x"], b"", maxsplit=1) == (
        [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]], [b"a", b"b\t\tc  ", b"a", b"", b"x", b""], [3, 2])
    assert _split([b"1<>2<><>3", b"", b"<>"], b"<>") == (
        [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [2, 0], [2, 1]], [b"1", b"2", b"", b"3", b"", b"", b""], [3, 4])
    assert _split([b"1,2,3,4"], b",", maxsplit=2) == ([[0, 0], [0, 1], [0, 2]], [b"1", b"2", b"3,4"], [1, 3])
    assert _split([b"1,2", b" a b "], b"", maxsplit=0) == ([[0, 0], [1, 0]], [b"1,2", b" a b "], [2, 1])
    with pytest.raises(errors.InvalidArgumentError, match="must be a string vector"):
        _split([[b"a"]], b"")
    with pytest.raises(errors.InvalidArgumentError, match="sep must be a string scalar"):
        _split([b"a"], [b"a", b"b"])


def _ngrams(data, splits, **attrs):
    grams, out_splits = R.StringNGrams(data=px.constant(data), data_splits=splits, **attrs)
    return strs(grams), out_splits.numpy().tolist()


def test_string_ngrams():
    data = [b"a", b"b", b"c", b"d", b"e"]
    assert _ngrams(data, np.array([0, 3, 3, 5], np.int64), separator=" ", ngram_widths=[1, 2, 3], left_pad="<",
                   right_pad=">", pad_width=-1, preserve_short_sequences=False) == (
        [b"a", b"b", b"c", b"< a", b"a b", b"b c", b"c >", b"< < a", b"< a b", b"a b c", b"b c >", b"c > >",
         b"< >", b"< < >", b"< > >", b"d", b"e", b"< d", b"d e", b"e >", b"< < d", b"< d e", b"d e >", b"e > >"],
        [0, 12, 15, 24])
    assert _ngrams(data, np.array([0, 1, 5], np.int32), separator="|", ngram_widths=[3], left_pad="L",
                   right_pad="R", pad_width=0, preserve_short_sequences=True) == (
        [b"a", b"b|c|d", b"c|d|e"], [0, 1, 3])
    assert _ngrams([b"a", b"b", b"c"], np.array([0, 1, 3], np.int64), separator="|", ngram_widths=[4],
                   left_pad="L", right_pad="R", pad_width=1, preserve_short_sequences=True) == (
        [b"L|a|R", b"L|b|c|R"], [0, 1, 2])
    assert _ngrams([b"a", b"b", b"c"], np.array([0, 3], np.int64), separator="|", ngram_widths=[5],
                   left_pad="L", right_pad="R", pad_width=4, preserve_short_sequences=False) == (
        [b"L|L|L|L|a", b"L|L|L|a|b", b"L|L|a|b|c", b"L|a|b|c|R", b"a|b|c|R|R", b"b|c|R|R|R", b"c|R|R|R|R"], [0, 7])
    common = dict(separator=" ", left_pad="", right_pad="", pad_width=0, preserve_short_sequences=False)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid split value 3, must be in"):
        _ngrams([b"a", b"b"], np.array([0, 3], np.int64), ngram_widths=[2], **common)
    with pytest.raises(errors.InvalidArgumentError, match="First split value must be 0, got 1"):
        _ngrams([b"a", b"b"], np.array([1, 2], np.int64), ngram_widths=[2], **common)
    with pytest.raises(errors.InvalidArgumentError, match="ngram_widths must contain positive values"):
        _ngrams([b"a", b"b"], np.array([0, 2], np.int64), ngram_widths=[0], **common)


HASH_INPUTS = [b"", b"a", b"hello",
               b"The quick brown fox jumps over the lazy dog and more text to exceed sixty four bytes of length!!",
               b"x" * 17, b"y" * 33]


def test_string_to_hash_bucket_fast_is_farmhash_fingerprint64():
    out = R.StringToHashBucketFast(input=px.constant(HASH_INPUTS), num_buckets=2**62)
    assert out.numpy().tolist() == [1936946117179621455, 3694432073954588131, 3786372426573024488,
                                    2179363741420386070, 2082709914559524773, 3999049019338133246]
    out = R.StringToHashBucketFast(input=px.constant([[b"a", b"hello"]]), num_buckets=7)
    np.testing.assert_array_equal(out.numpy(), [[5, 5]])
    # Near 2**63: the unsigned fingerprint modulo num_buckets.
    out = R.StringToHashBucketFast(input=px.constant([b"a", b"hello", b"", b"x" * 17]), num_buckets=2**63 - 1)
    assert out.numpy().tolist() == [3694432073954588132, 3786372426573024489, 1936946117179621456,
                                    2082709914559524774]


def test_string_to_hash_bucket_strong_is_siphash():
    out = R.StringToHashBucketStrong(input=px.constant([b"", b"a", b"hello", b"x" * 17,
                                                       b"The quick brown fox jumps over the lazy dog"]),
                                     num_buckets=2**62, key=[7, 1234])
    assert out.numpy().tolist() == [273669196647033447, 4578036822522548270, 1973546438262572146,
                                    163085021049174301, 1568669374615601232]
    with pytest.raises(errors.InvalidArgumentError, match="Key must have 2 elements"):
        R.StringToHashBucketStrong(input=px.constant([b"a"]), num_buckets=3, key=[1])


def test_as_string():
    assert strs(R.AsString(input=np.array([1, -20, 3**30], np.int64))) == [b"1", b"-20", b"205891132094649"]
    assert strs(R.AsString(input=np.array([1.5, -2.25e10, 1e-7], np.float32))) == [
        b"1.500000", b"-22499999744.000000", b"0.000000"]
    assert strs(R.AsString(input=np.array([True, False]))) == [b"true", b"false"]
    assert strs(R.AsString(input=np.array([1.5, 3.14159], np.float32), precision=2)) == [b"1.50", b"3.14"]
    assert strs(R.AsString(input=np.array([1.5], np.float32), shortest=True)) == [b"1.5"]
    assert strs(R.AsString(input=np.array([1.5], np.float32), scientific=True)) == [b"1.500000e+00"]
    assert strs(R.AsString(input=np.array([7], np.int32), width=4, fill="0")) == [b"0007"]
    assert strs(R.AsString(input=np.array([7], np.int32), width=4)) == [b"   7"]
    assert strs(R.AsString(input=np.array([200], np.uint8))) == [b"200"]
    assert strs(R.AsString(input=np.array([np.nan, np.inf, -np.inf], np.float32))) == [b"nan", b"inf", b"-inf"]
    with pytest.raises(errors.InvalidArgumentError, match="precision not supported for datatype int32"):
        R.AsString(input=np.array([1], np.int32), precision=2)
    with pytest.raises(errors.InvalidArgumentError, match='Fill argument not supported: "x"'):
        R.AsString(input=np.array([1], np.int32), width=3, fill="x")


def test_string_length():
    s = px.constant([b"abc", "h\u00e9llo".encode(), b""])
    np.testing.assert_array_equal(R.StringLength(input=s).numpy(), [3, 6, 0])
    np.testing.assert_array_equal(R.StringLength(input=s, unit="UTF8_CHAR").numpy(), [3, 5, 0])


# ---- bincounts ------------------------------------------------------------------------------


EMPTY_F32 = np.zeros([0], np.float32)


def test_dense_bincount():
    out = R.DenseBincount(input=np.array([[1, 2, 2, 7], [0, 0, 3, 9]], np.int32), size=np.int32(5),
                          weights=EMPTY_F32, binary_output=False)
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 2, 0, 0], [2, 0, 0, 1, 0]])
    out = R.DenseBincount(input=np.array([1, 2, 2], np.int32), size=np.int32(4),
                          weights=np.array([0.5, 1.0, 2.0], np.float32), binary_output=True)
    np.testing.assert_array_equal(out.numpy(), [0, 1, 1, 0])
    out = R.DenseBincount(input=np.array([1, 2, 2], np.int64), size=np.int64(4),
                          weights=np.array([0.5, 1.0, 2.0]), binary_output=False)
    assert out.dtype == px.float64
    np.testing.assert_array_equal(out.numpy(), [0, 0.5, 3.0, 0])
    out = R.DenseBincount(input=np.array([1, 1], np.int32), size=np.int32(3), weights=np.zeros([0], np.int32))
    np.testing.assert_array_equal(out.numpy(), [0, 2, 0])
    with pytest.raises(errors.InvalidArgumentError, match="Input arr must be non-negative!"):
        R.DenseBincount(input=np.array([1, -2], np.int32), size=np.int32(4), weights=EMPTY_F32)
    with pytest.raises(errors.InvalidArgumentError, match=r"size \(-1\) must be non-negative"):
        R.DenseBincount(input=np.array([1], np.int32), size=np.int32(-1), weights=EMPTY_F32)
    with pytest.raises(errors.InvalidArgumentError, match="at most rank 2 but is rank 3"):
        R.DenseBincount(input=np.array([[[1]]], np.int32), size=np.int32(3), weights=EMPTY_F32)
    with pytest.raises(errors.InvalidArgumentError, match=r"must be the same shape as `arr`.*Received \[1\]"):
        R.DenseBincount(input=np.array([1, 1], np.int32), size=np.int32(3), weights=np.array([1.0], np.float32))


def test_bincount_and_ragged_bincount():
    np.testing.assert_array_equal(
        R.Bincount(arr=np.array([1, 1, 5, 2], np.int32), size=np.int32(3), weights=EMPTY_F32).numpy(), [0, 2, 1])
    np.testing.assert_array_equal(R.Bincount(arr=np.array([1, 2], np.int32), size=np.int32(3),
                                             weights=np.array([2, 3], np.int64)).numpy(), [0, 2, 3])
    with pytest.raises(errors.InvalidArgumentError, match="Input arr must be non-negative!"):
        R.Bincount(arr=np.array([1, -1], np.int32), size=np.int32(3), weights=EMPTY_F32)
    out = R.RaggedBincount(splits=np.array([0, 3, 3, 5], np.int64), values=np.array([1, 1, 4, 0, 9], np.int32),
                           size=np.int32(5), weights=EMPTY_F32, binary_output=False)
    np.testing.assert_array_equal(out.numpy(), [[0, 2, 0, 0, 1], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]])
    out = R.RaggedBincount(splits=np.array([0, 3, 5], np.int64), values=np.array([1, 1, 4, 0, 2], np.int64),
                           size=np.int64(5), weights=np.array([1, 2, 3, 4, 5], np.float32), binary_output=True)
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 0, 0, 1], [1, 0, 1, 0, 0]])
    with pytest.raises(errors.InvalidArgumentError, match="Splits must end with the number of values, got 9 instead of 5"):
        R.RaggedBincount(splits=np.array([0, 3, 9], np.int64), values=np.array([1, 1, 4, 0, 2], np.int32),
                         size=np.int32(5), weights=EMPTY_F32)
    with pytest.raises(errors.InvalidArgumentError, match="Input must be non-negative"):
        R.RaggedBincount(splits=np.array([0, 2], np.int64), values=np.array([1, -1], np.int32), size=np.int32(5),
                         weights=EMPTY_F32)


# ---- RaggedTensorToTensor -------------------------------------------------------------------


def _to_tensor(shape, values, default, partitions, types):
    return R.RaggedTensorToTensor(shape=shape, values=values, default_value=default,
                                  row_partition_tensors=partitions, row_partition_types=types)


def test_ragged_tensor_to_tensor():
    splits = [np.array([0, 2, 2, 5], np.int64)]
    vals = np.array([1, 2, 3, 4, 5], np.int32)
    np.testing.assert_array_equal(_to_tensor(np.int64(-1), vals, np.int32(0), splits, ["ROW_SPLITS"]).numpy(),
                                  [[1, 2, 0], [0, 0, 0], [3, 4, 5]])
    np.testing.assert_array_equal(
        _to_tensor(np.array([2, 2], np.int64), vals, np.int32(9), splits, ["ROW_SPLITS"]).numpy(), [[1, 2], [9, 9]])
    np.testing.assert_array_equal(
        _to_tensor(np.array([4, -1], np.int64), vals, np.int32(9), splits, ["ROW_SPLITS"]).numpy(),
        [[1, 2, 9], [9, 9, 9], [3, 4, 5], [9, 9, 9]])
    out = _to_tensor(np.array([-1, -1], np.int32), px.constant([b"a", b"b", b"c"]), px.constant(b""),
                     [np.int64(4), np.array([0, 0, 2], np.int64)], ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
    assert [strs(row) for row in out.numpy()] == [[b"a", b"b"], [b"", b""], [b"c", b""], [b"", b""]]
    out = _to_tensor(np.int64(-1), np.array([[1, 2], [3, 4], [5, 6]], np.float32), np.array([0, -1], np.float32),
                     [np.array([0, 1, 3], np.int64), np.array([0, 2, 2, 3], np.int64)], ["ROW_SPLITS", "ROW_SPLITS"])
    np.testing.assert_array_equal(out.numpy(), [[[[1, 2], [3, 4]], [[0, -1], [0, -1]]],
                                                [[[0, -1], [0, -1]], [[5, 6], [0, -1]]]])
    out = _to_tensor(np.array([3, 1, 2], np.int64), np.array([1, 2, 3, 4], np.int32), np.int32(0),
                     [np.int64(2), np.array([0, 0, 1], np.int64), np.array([0, 0, 2, 2], np.int64)],
                     ["FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS"])
    np.testing.assert_array_equal(out.numpy(), [[[1, 2]], [[3, 4]], [[0, 0]]])


def test_ragged_tensor_to_tensor_errors():
    vals = np.array([1, 2, 3], np.int32)
    with pytest.raises(errors.InvalidArgumentError, match="next_value_rowid=3 which is not less than 2"):
        _to_tensor(np.int64(-1), vals, np.int32(0), [np.int64(2), np.array([0, 3, 1], np.int64)],
                   ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
    with pytest.raises(errors.InvalidArgumentError, match="Unknown string for partition info type: FOO"):
        _to_tensor(np.int64(-1), vals, np.int32(0), [np.array([0, 3], np.int64)], ["FOO"])
    with pytest.raises(errors.InvalidArgumentError, match="rt_input.rank = 2 but shape.rank = 3"):
        _to_tensor(np.array([1, 2, 3], np.int64), vals, np.int32(0), [np.array([0, 3], np.int64)], ["ROW_SPLITS"])
    # TensorFlow reads out of bounds here; Plexus refuses.
    with pytest.raises(errors.InvalidArgumentError, match="row partitions give 5 values, values has 3"):
        _to_tensor(np.int64(-1), vals, np.int32(0), [np.array([0, 2, 5], np.int64)], ["ROW_SPLITS"])


# ---- string fallbacks of view and comparison ops ---------------------------------------------


def test_reshape_expand_dims_squeeze_of_strings():
    s = px.constant([b"a", b"b", b"c", b"d", b"e", b"f"])
    out = R.Reshape(tensor=s, shape=np.array([2, -1], np.int32))
    assert out.shape == (2, 3) and strs(out) == strs(s)
    out = R.ExpandDims(input=s, dim=np.int32(-1))
    assert out.shape == (6, 1) and strs(out) == strs(s)
    out = R.Squeeze(input=R.ExpandDims(input=s, dim=np.int32(0)), squeeze_dims=[0])
    assert out.shape == (6,) and strs(out) == strs(s)
    with pytest.raises(errors.InvalidArgumentError, match="Reshape"):
        R.Reshape(tensor=s, shape=np.array([4, -1], np.int32))


def test_equal_and_not_equal_of_strings_broadcast():
    a = px.constant([[b"x", b""], [b"", b"y"]])
    np.testing.assert_array_equal(R.Equal(x=a, y=px.constant(b"")).numpy(), [[False, True], [True, False]])
    np.testing.assert_array_equal(R.NotEqual(x=a, y=px.constant([b"x", b"y"])).numpy(),
                                  [[False, True], [True, False]])
    with pytest.raises(errors.InvalidArgumentError):
        R.Equal(x=a, y=px.constant([b"x", b"y", b"z"]))


# ---- UnicodeDecode, UnicodeEncode ------------------------------------------------------------

UTF8_SAMPLES = [b"ab", "h\u00e9\u20ac\U0001F600".encode(), b"", b"a\x80b", b"a\xe2\x82", b"\xe2\x82\xac\xe2",
                b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"a\x01\x1f\x7f\xc2\x85z",
                b"\xff\xfe", b"\xe0\x80\xaf"]


def _decode(**attrs):
    splits, chars = R.UnicodeDecode(input=px.constant(UTF8_SAMPLES), input_encoding="UTF-8", **attrs)
    return splits.numpy().tolist(), chars.numpy().tolist()


def test_unicode_decode_replaces_maximal_subparts_like_tensorflow():
    F = 65533
    assert _decode() == (
        [0, 2, 6, 6, 9, 11, 13, 15, 18, 22, 23, 29, 31, 34],
        [97, 98, 104, 233, 8364, 128512, 97, F, 98, 97, F, 8364, F, F, F, F, F, F, F, F, F, F, F, 97, 1, 31, 127,
         133, 122, F, F, F, F, F])
    assert _decode(errors="ignore") == (
        [0, 2, 6, 6, 8, 9, 10, 10, 10, 10, 10, 16, 16, 16],
        [97, 98, 104, 233, 8364, 128512, 97, 98, 97, 8364, 97, 1, 31, 127, 133, 122])
    splits, chars = _decode(replacement_char=63, replace_control_characters=True)
    assert chars[23:29] == [97, 63, 63, 127, 133, 122]  # C0 controls only
    with pytest.raises(errors.InvalidArgumentError, match="Invalid formatting on input string"):
        R.UnicodeDecode(input=px.constant([b"a\x80"]), input_encoding="UTF-8", errors="strict")
    splits, chars = R.UnicodeDecode(input=px.constant([[b"ab", b"c"]]), input_encoding="UTF-8")
    assert splits.numpy().tolist() == [0, 2, 3] and chars.numpy().tolist() == [97, 98, 99]


def _encode(values, splits, **attrs):
    out = R.UnicodeEncode(input_values=np.array(values, np.int32), input_splits=np.array(splits, np.int64),
                          output_encoding="UTF-8", **attrs)
    return strs(out)


def test_unicode_encode():
    assert _encode([104, 233, 8364, 128512, 0x110000, -1, 0xD800, 65], [0, 2, 4, 6, 8]) == [
        b"h\xc3\xa9", b"\xe2\x82\xac\xf0\x9f\x98\x80", b"\xef\xbf\xbd\xef\xbf\xbd", b"\xef\xbf\xbdA"]
    assert _encode([104, 0x110000, 0xD800], [0, 3], errors="ignore") == [b"h"]
    assert _encode([104, 0x110000], [0, 2], replacement_char=63) == [b"h?"]
    with pytest.raises(errors.InvalidArgumentError, match="out of range for Unicode, or is a surrogate"):
        _encode([104, 0x110000], [0, 2], errors="strict")
    with pytest.raises(errors.InvalidArgumentError, match="Last value in input_splits must be equal"):
        _encode([1, 2], [0, 3])
    out = R.UnicodeEncode(input_values=np.array([233, 128512], np.int32), input_splits=np.array([0, 2], np.int64),
                          output_encoding="UTF-16-BE")
    assert strs(out) == ["\u00e9\U0001F600".encode("utf-16-be")]
