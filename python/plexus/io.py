"""Checkpoint files and tf.Example parsing, like tf.io.

Filled at import from the op registry (see plexus/_names.py and _api.py).
"""

from plexus._ops import _populate

_populate(__name__)
del _populate

# tf.io's Example parsing (hand-written over ParseExampleV2); parse_example
# takes a features dict, and the raw op's arguments still work.
from plexus import _parsing_api  # noqa: E402

_parsing_api._raw_parse_example = parse_example  # noqa: F821  (set by _populate)
FixedLenFeature = _parsing_api.FixedLenFeature
VarLenFeature = _parsing_api.VarLenFeature
SparseTensor = _parsing_api.SparseTensor
parse_single_example = _parsing_api.parse_single_example
parse_example = _parsing_api.parse_example


def __getattr__(name):
    # tf.io's TFRecord names; they live in plexus.data, which is imported after plexus.io.
    if name in ("TFRecordWriter", "TFRecordOptions"):
        from plexus.data import tfrecord
        return getattr(tfrecord, name)
    raise AttributeError(f"module 'plexus.io' has no attribute {name!r}")
