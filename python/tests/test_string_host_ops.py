"""The string host ops StringStrip, RegexFullMatch, UnsortedSegmentJoin and
StringFormat (tf.strings.strip, regex_full_match, unsorted_segment_join,
format, and what tf.print formats) through plexus.raw_ops and the public
names, against TensorFlow on the same inputs in the same test. Every
result is text, so every comparison is exact; errors compare TensorFlow's
messages."""

import numpy as np
import pytest

import plexus as px
from plexus import errors

tf = pytest.importorskip("tensorflow")
R = px.raw_ops


def text(t):
    v = np.asarray(t.numpy())
    return v.tolist()


def scalar_text(t):
    return np.asarray(t.numpy()).item().decode()


# ---- StringStrip, RegexFullMatch ---------------------------------------------------------


def test_string_strip():
    words = [[b" a b \t\n", b""], [b"\x0b x\r", "\u00e9t\u00e9 ".encode()]]
    assert text(R.StringStrip(input=px.constant(words))) == text(tf.raw_ops.StringStrip(input=tf.constant(words)))
    assert text(px.strings.strip(words)) == text(tf.strings.strip(words))


@pytest.mark.parametrize("pattern", ["a.c", "", ".*", "[a-z]+\\d?", "(ab)+", "\u00e9.*"])
def test_regex_full_match(pattern):
    words = [b"abc", b"ab", b"xabc", b"", b"abab", b"abz1", "\u00e9t\u00e9".encode()]
    ours = R.RegexFullMatch(input=px.constant(words), pattern=px.constant(pattern))
    assert text(ours) == text(tf.raw_ops.RegexFullMatch(input=tf.constant(words), pattern=tf.constant(pattern)))
    assert text(px.strings.regex_full_match(words, px.constant(pattern))) == text(ours)
    assert text(px.strings.regex_full_match(words, pattern)) == text(ours)


def test_regex_full_match_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid pattern: a\(, error: missing \)"):
        R.RegexFullMatch(input=px.constant([b"abc"]), pattern=px.constant("a("))
    with pytest.raises(errors.PlexusError, match=r"Pattern must be scalar, but received \[1\]"):
        R.RegexFullMatch(input=px.constant([b"abc"]), pattern=px.constant(["a"]))


# ---- UnsortedSegmentJoin -----------------------------------------------------------------


@pytest.mark.parametrize("inputs,ids,num", [
    ([b"a", b"b", b"c", b"d"], [1, 0, 1, 3], 4),
    ([[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]], [1, 0, 1], 2),
    ([[b"a", b"b"], [b"c", b"d"]], [[0, 1], [1, 1]], 2),
    ([b"", b"x", b""], [0, 0, 0], 1),
    ([b"a"], [0], 3),
])
@pytest.mark.parametrize("separator", ["", ":", ", "])
def test_unsorted_segment_join(inputs, ids, num, separator):
    for idt in (np.int32, np.int64):
        ours = R.UnsortedSegmentJoin(inputs=px.constant(inputs), segment_ids=px.constant(np.array(ids, idt)),
                                     num_segments=px.constant(np.int32(num)), separator=separator)
        theirs = tf.raw_ops.UnsortedSegmentJoin(inputs=tf.constant(inputs), segment_ids=tf.constant(np.array(ids, idt)),
                                                num_segments=tf.constant(np.int32(num)), separator=separator)
        assert ours.shape == tuple(theirs.shape) and text(ours) == text(theirs)
    assert text(px.strings.unsorted_segment_join(inputs, ids, num, separator=separator)) == \
        text(tf.strings.unsorted_segment_join(inputs, ids, num, separator=separator))


def test_unsorted_segment_join_errors():
    msg = "segment_ids are not allowed to exceed num_segments or to have negative values."
    for ids in ([-1, 0], [2, 0]):
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            R.UnsortedSegmentJoin(inputs=px.constant([b"a", b"b"]), segment_ids=px.constant(ids),
                                  num_segments=px.constant(2))
    with pytest.raises(errors.PlexusError, match="Number of segments must be a scalar"):
        R.UnsortedSegmentJoin(inputs=px.constant([b"a", b"b"]), segment_ids=px.constant([0, 0]),
                              num_segments=px.constant([2]))
    with pytest.raises(errors.InvalidArgumentError, match="Segment dimension is 1 while input dimension is 1 in rank 0"):
        R.UnsortedSegmentJoin(inputs=px.constant([b"a", b"b"]), segment_ids=px.constant([0]),
                              num_segments=px.constant(2))


# ---- StringFormat ------------------------------------------------------------------------


def fmt_both(values, template="{}", summarize=3):
    ours = R.StringFormat(inputs=[px.constant(v) for v in values], template=template, placeholder="{}",
                          summarize=summarize)
    theirs = tf.raw_ops.StringFormat(inputs=[tf.constant(v) for v in values], template=template, placeholder="{}",
                                     summarize=summarize)
    return scalar_text(ours), scalar_text(theirs)


FLOATS = [1.0, 2.5, -3.25, 1e10, 1e-5, 123456789.0, np.nan, np.inf, -np.inf, 0.1, 1 / 3, 2 / 3, 1e20, 1e16,
          123456.7, 1234567.8, 3.14159265, 100.0, 1e6, 1e7, 12345678.0, 1.5e-7, -0.0, 1e17]
# (No subnormal numbers: TensorFlow's threads flush them to zero.)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16"])
def test_format_floats(dtype):
    if dtype == "bfloat16":
        pv, tv = px.constant(np.array(FLOATS, np.float32)), tf.constant(FLOATS, tf.float32)
        pv = px.cast(pv, px.bfloat16)
        tv = tf.cast(tv, tf.bfloat16)
        ours = scalar_text(R.StringFormat(inputs=[pv], template="{}", placeholder="{}", summarize=-1))
        theirs = scalar_text(tf.raw_ops.StringFormat(inputs=[tv], template="{}", placeholder="{}", summarize=-1))
    else:
        with np.errstate(over="ignore", under="ignore"):
            values = np.array(FLOATS).astype(dtype)
        ours, theirs = fmt_both([values], summarize=-1)
    assert ours == theirs


@pytest.mark.parametrize("shape", [(), (1,), (6,), (7,), (10,), (2, 3), (10, 10), (2, 3, 4), (7, 7, 7), (1, 1),
                                   (0,), (2, 0), (0, 3), (3, 1, 2, 2)])
@pytest.mark.parametrize("summarize", [3, 2, 1, 0, -1, 100])
def test_format_shapes_and_summaries(shape, summarize):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    ours, theirs = fmt_both([x], summarize=summarize)
    assert ours == theirs


@pytest.mark.parametrize("values", [
    [np.array([1, 255], np.uint8)], [np.array([1, -5], np.int8)], [np.array([2 ** 40, -5], np.int64)],
    [np.array([2 ** 63 + 5], np.uint64)], [np.array([True, False])], [np.array(True)], [np.array(-7, np.int16)],
    [np.array(b"hello")], [np.array([b"a", b"b c"])], [np.array([[b"a", b'q"uote'], [b"tab\there\n", b"\x01\\"]])],
    [np.array("h\u00e9llo".encode())], [np.array([1 + 2j, 3 - 1j], np.complex64)], [np.array(1 + 2j)],
    [np.arange(10, dtype=np.complex128)],
])
def test_format_element_types(values):
    ours, theirs = fmt_both(values)
    assert ours == theirs


def test_format_templates_and_errors():
    x = [np.array(1), np.array([2.0, 3.0], np.float32)]
    assert fmt_both(x, template="x={} y={} done")[0] == fmt_both(x, template="x={} y={} done")[1]
    assert fmt_both(x, template="{}{}")[0] == "1[2 3]"
    ours = R.StringFormat(inputs=[], template="no placeholders", placeholder="{}")
    assert scalar_text(ours) == "no placeholders"
    # The defaults: template "%s" and placeholder "%s".
    assert scalar_text(R.StringFormat(inputs=[px.constant(1)])) == \
        scalar_text(tf.raw_ops.StringFormat(inputs=[tf.constant(1)]))
    with pytest.raises(errors.PlexusError, match="num placeholders in template and num inputs must match: 2 vs. 1"):
        R.StringFormat(inputs=[px.constant(1)], template="x={} y={}", placeholder="{}")


def test_public_format_and_print_template():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert scalar_text(px.strings.format("x = {}, y = {}!", [x, "s"])) == \
        scalar_text(tf.strings.format("x = {}, y = {}!", [x, "s"]))
    assert scalar_text(px.strings.format("{}", x, summarize=1)) == \
        scalar_text(tf.strings.format("{}", tf.constant(x), summarize=1))
    assert scalar_text(px.strings.format("<>", [x], placeholder="<>", summarize=-1)) == \
        scalar_text(tf.strings.format("<>", [x], placeholder="<>", summarize=-1))

    # tf.print inside a function builds StringFormat then PrintV2; the graph
    # imported into Plexus formats the same text.
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def show(t):
        return tf.strings.format("values: {} and {}", [t, tf.reduce_sum(t)])

    concrete = show.get_concrete_function()
    graph = concrete.graph.as_graph_def()
    assert any(n.op == "StringFormat" for n in graph.node)
    want = scalar_text(show(tf.constant(x)))
    got = px.function(lambda t: px.strings.format("values: {} and {}", [t, px.reduce_sum(t)]))(px.constant(x))
    assert scalar_text(got) == want
