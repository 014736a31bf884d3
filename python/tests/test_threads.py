"""Threads per kernel: plexus.set_num_threads / get_num_threads (process-wide),
the ``threads=`` option of imported graphs, sessions and traced functions, and
results that do not depend on the count (convolutions and products against
NumPy). No timing assertions."""

import os
import pathlib

import numpy as np
import pytest

import plexus as px


def _mlp(name: str) -> str:
    env = os.environ.get("PLEXUS_TEST_DATA")
    root = pathlib.Path(env) if env else pathlib.Path(__file__).resolve().parent / ".." / ".." / "tests" / "data"
    return str(root / "tf_graphs" / "mlp_fc_layers" / name)


def _mlp_graph() -> str:
    return _mlp("frozen.pb")


@pytest.fixture
def restore_threads():
    yield
    px.set_num_threads(0)


def _conv_nhwc(x, f):
    """VALID, stride 1 convolution in float64."""
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    out = np.zeros((n, h - kh + 1, w - kw + 1, o))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,co->nhwo", x[:, i:i + h - kh + 1, j:j + w - kw + 1, :].astype(np.float64),
                             f[i, j].astype(np.float64))
    return out


def test_set_and_get_num_threads(restore_threads):
    automatic = px.get_num_threads()
    assert automatic >= 1
    px.set_num_threads(1)
    assert px.get_num_threads() == 1
    px.set_num_threads(3)
    assert px.get_num_threads() == 3
    with pytest.raises(ValueError, match="-1"):
        px.set_num_threads(-1)
    assert px.get_num_threads() == 3
    px.set_num_threads(0)
    assert px.get_num_threads() == automatic


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_eager_results_do_not_depend_on_the_count(restore_threads, threads):
    rng = np.random.default_rng(threads)
    x = rng.uniform(-1, 1, (2, 9, 10, 5)).astype(np.float32)
    f = rng.uniform(-1, 1, (3, 3, 5, 7)).astype(np.float32)
    a = rng.uniform(-1, 1, (33, 40)).astype(np.float32)
    b = rng.uniform(-1, 1, (40, 17)).astype(np.float32)
    px.set_num_threads(threads)
    y = px.nn.conv2d(x, f, strides=1, padding="VALID").numpy()
    np.testing.assert_allclose(y, _conv_nhwc(x, f), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(px.matmul(a, b).numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_threads_option_of_graphs_sessions_and_functions():
    # TensorFlow's outputs and tolerances (tests/data/tf_graphs/MANIFEST.md).
    x = np.load(_mlp("ref_input_ramp_div784.npy"))
    want = np.load(_mlp("ref_output_ramp_div784.npy")).reshape(1, 10)
    one = px.import_graph_def(_mlp_graph(), threads=1)(x).numpy()
    np.testing.assert_allclose(one, want, rtol=1e-5, atol=1e-4)
    session = px.Session(_mlp_graph(), threads=2)
    out = session.run("output", {"X": x})
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-4)

    @px.function(threads=1)
    def dense(a, b):
        return px.nn.relu(a @ b)

    a = np.ones((4, 6), np.float32)
    b = np.full((6, 3), 0.5, np.float32)
    np.testing.assert_allclose(dense(a, b).numpy(), np.full((4, 3), 3.0, np.float32))

    with pytest.raises(ValueError, match="threads"):
        px.import_graph_def(_mlp_graph(), threads=-2)
    with pytest.raises(ValueError, match="threads"):
        px.function(lambda v: v, threads=-1)
