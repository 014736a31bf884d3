"""Random numbers: TensorFlow's stateless random functions (stateless_uniform,
stateless_normal, stateless_truncated_normal, stateless_gamma), as
tf.random, giving TensorFlow's bits for the same seed.

Filled at import from the op registry (see plexus/_names.py and
_api_random.py).
"""

from plexus._ops import _populate

_populate(__name__)
del _populate
