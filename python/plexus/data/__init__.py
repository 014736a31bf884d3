"""plexus.data: tf.data's input pipelines (Dataset, TFRecordDataset, AUTOTUNE) for plexus.

    ds = (plexus.data.TFRecordDataset(files, compression_type="GZIP")
          .map(parse, num_parallel_calls=plexus.data.AUTOTUNE)
          .shuffle(1024).batch(64).prefetch(plexus.data.AUTOTUNE))
    for images, labels in ds: ...

See docs/data.md.
"""

from . import batching, mapping, prefetch, sources  # noqa: F401  (Dataset's methods import them)
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
from .example import example, feature  # noqa: F401
from .tfrecord import TFRecordDataset, TFRecordWriter  # noqa: F401


class experimental:  # noqa: N801  (tf.data.experimental's names that moved)
    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY
