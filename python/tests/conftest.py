"""Test-session setup shared by every test file.

TensorFlow and PyTorch's Triton each carry their own copy of LLVM. Loaded in
the order TensorFlow first, Triton second, LLVM aborts the process
("Option ... registered more than once"); the other order is fine. Tests
import TensorFlow (round trips with our checkpoints and SavedModels) and
PyTorch (reference optimizers, DLPack) in whatever order pytest collects
them, so Triton is loaded here, before any test module runs, when it is
installed.
"""

import importlib.util

if importlib.util.find_spec("torch") is not None and importlib.util.find_spec("triton") is not None:
    import torch  # noqa: F401
    import triton  # noqa: F401
