"""Variables keep and share their values without copies, and nothing written
from outside Plexus reaches a variable: reads share the variable's memory;
DLPack exports of a variable's value are copies; an assigned value whose
memory someone else may write (a DLPack import, or a tensor exported for
writing) is copied."""

import ctypes

import numpy as np

import plexus as px


def _address(t):
    return t.numpy().__array_interface__["data"][0]


def test_reads_share_memory():
    v = px.Variable(np.arange(6, dtype=np.float32))
    assert _address(v.read_value()) == _address(v.read_value())


def test_assign_keeps_an_op_output_without_a_copy():
    v = px.Variable(np.zeros(4, np.float32))
    t = px.constant(np.arange(4, dtype=np.float32)) * 2.0  # Plexus's own memory
    v.assign(t)
    assert _address(v.read_value()) == _address(t)
    np.testing.assert_array_equal(v.numpy(), [0, 2, 4, 6])


def test_dlpack_export_of_a_read_is_a_copy():
    v = px.Variable(np.arange(4, dtype=np.float32))
    r = v.read_value()
    exported = np.from_dlpack(r)
    assert not np.shares_memory(exported, r.numpy())
    np.testing.assert_array_equal(exported, [0, 1, 2, 3])
    addr = exported.__array_interface__["data"][0]
    np.ctypeslib.as_array((ctypes.c_float * 4).from_address(addr))[0] = 42
    np.testing.assert_array_equal(v.numpy(), [0, 1, 2, 3])


def test_assign_from_a_dlpack_import_copies():
    a = np.ones(4, np.float32)
    t = px.from_dlpack(a)
    assert np.shares_memory(t.numpy(), a)
    v = px.Variable(np.zeros(4, np.float32))
    v.assign(t)
    a[0] = 5  # NumPy still owns the memory and writes it
    np.testing.assert_array_equal(v.numpy(), [1, 1, 1, 1])


def test_assign_of_a_tensor_exported_for_writing_copies():
    t = px.constant(np.arange(4, dtype=np.float32)) + 1.0
    exported = np.from_dlpack(t)  # shares t's memory with a consumer that may write it
    v = px.Variable(np.zeros(4, np.float32))
    v.assign(t)
    # Write through the exported memory (NumPy may import it read-only).
    addr = exported.__array_interface__["data"][0]
    np.ctypeslib.as_array((ctypes.c_float * 4).from_address(addr))[:] = -1
    np.testing.assert_array_equal(exported, [-1, -1, -1, -1])
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3, 4])


def test_traced_training_step_updates_in_the_variables():
    w = px.Variable(np.ones((3, 2), np.float32))
    before = w.numpy().copy()
    opt = px.optimizers.Adam(0.1)

    @px.function
    def step(x):
        with px.GradientTape() as tape:
            loss = px.reduce_sum(px.matmul(x, w.read_value()))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    x = px.constant(np.ones((1, 3), np.float32))
    step(x)
    after_one = w.numpy().copy()
    step(x)
    # Each step moves w by lr against the gradient's sign (Adam's first steps).
    np.testing.assert_allclose(after_one, before - 0.1, rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), before - 0.2, rtol=1e-5)
