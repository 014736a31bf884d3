"""Dtype policies: float32, mixed_float16 and mixed_bfloat16, like keras.mixed_precision.

Under a mixed policy a layer keeps its variables in float32 and computes in
float16 (or bfloat16): its float inputs are cast to the compute dtype and its
variables are read cast to it. ``Model.compile`` wraps the optimizer in a
:class:`~plexus.keras.optimizers.LossScaleOptimizer` under ``mixed_float16``.
"""

from __future__ import annotations

from . import _backend as B

_global = None


class DTypePolicy:
    """A layer's compute dtype and variable dtype."""

    def __init__(self, name="float32"):
        name = B.dtype_name(name)
        if name.startswith("mixed_"):
            compute = name[len("mixed_"):]
            if compute not in ("float16", "bfloat16"):
                raise ValueError(f"dtype policy {name!r}: use 'mixed_float16' or 'mixed_bfloat16'")
            self.compute_dtype, self.variable_dtype = compute, "float32"
        else:
            self.compute_dtype = self.variable_dtype = name
        self.name = name

    def get_config(self):
        return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": self.name},
                "registered_name": None}

    def __repr__(self):
        return f'<DTypePolicy "{self.name}">'

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name


def policy_from_config(config):
    if isinstance(config, dict):
        inner = config.get("config", config)
        return DTypePolicy(inner.get("name", "float32"))
    return config


def set_global_policy(policy) -> None:
    """Sets the policy of layers created from now on ("mixed_float16", "float32", ...)."""
    global _global
    _global = policy if isinstance(policy, DTypePolicy) or policy is None else DTypePolicy(policy)


def global_policy() -> DTypePolicy:
    return _global or DTypePolicy(B.floatx())


def get_policy(dtype) -> DTypePolicy:
    if dtype is None:
        return global_policy()
    if isinstance(dtype, DTypePolicy):
        return dtype
    if isinstance(dtype, dict):
        return policy_from_config(dtype)
    return DTypePolicy(dtype)


Policy = DTypePolicy
