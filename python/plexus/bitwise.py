"""Bitwise operations on integers, like tf.bitwise.

Filled at import from the op registry (see plexus/_names.py).
"""

from plexus._ops import _populate

_populate(__name__)
del _populate
