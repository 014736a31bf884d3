"""Image ops as tf.image: resizing (every tf.image.resize method), cropping,
non-max suppression, colour conversions and adjustments, projective
transforms.

Filled at import from the op registry (see plexus/_names.py and _api.py).
"""

from plexus._ops import _populate

_populate(__name__)
del _populate
