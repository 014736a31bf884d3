"""The TensorList ops through plexus.raw_ops, eagerly, against TensorFlow
2.21's tf.raw_ops: the same calls, TensorFlow's values (written out here)
and its error messages. Lists are variant tensors: values with no NumPy
form, which every op leaves unchanged. tests/core/tensor_list_test.cc runs
the same ops inside graphs, folded and not."""

import numpy as np
import pytest

from plexus import errors
from plexus import raw_ops as R

F32 = "float32"


def i32(v):
    return np.asarray(v, np.int32)


def i64(v):
    return np.asarray(v, np.int64)


def reserve(shape=(-1, 2), n=3):
    return R.TensorListReserve(element_shape=i32(shape), num_elements=i32(n), element_dtype=F32)


def stack(lst, shape=-1):
    return R.TensorListStack(input_handle=lst, element_shape=i32(shape), element_dtype=F32).numpy()


def test_a_list_is_a_value_without_a_numpy_form():
    lst = reserve()
    assert lst.dtype == "variant" and lst.shape == ()
    with pytest.raises(errors.InvalidArgumentError, match="variant tensor has no NumPy form"):
        np.asarray(lst)


def test_set_item_leaves_the_input_list_unchanged():
    lst = reserve()
    ones = R.TensorListSetItem(input_handle=lst, index=i32(1), item=np.ones((4, 2), np.float32))
    twos = R.TensorListSetItem(input_handle=lst, index=i32(1), item=np.full((4, 2), 2, np.float32))
    # TensorFlow: unset elements stack as zeros of the merged element shape.
    want = np.zeros((3, 4, 2), np.float32)
    want[1] = 1
    np.testing.assert_array_equal(stack(ones, [-1, 2]), want)
    want[1] = 2
    np.testing.assert_array_equal(stack(twos, [-1, 2]), want)
    unset = R.TensorListGetItem(input_handle=lst, index=i32(1), element_shape=i32([3, 2]), element_dtype=F32)
    np.testing.assert_array_equal(unset.numpy(), np.zeros((3, 2), np.float32))
    assert R.TensorListLength(input_handle=lst).numpy() == 3
    np.testing.assert_array_equal(R.TensorListElementShape(input_handle=lst, shape_type="int32").numpy(), [-1, 2])


def test_resize_and_set_item_with_resize():
    lst = R.TensorListSetItem(input_handle=reserve(), index=i32(5), item=np.ones((1, 2), np.float32),
                              resize_if_index_out_of_bounds=True)
    assert R.TensorListLength(input_handle=lst).numpy() == 6
    assert R.TensorListLength(input_handle=R.TensorListResize(input_handle=lst, size=i32(2))).numpy() == 2


def test_from_tensor_gather_scatter_split_concat():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    lst = R.TensorListFromTensor(tensor=x, element_shape=i32([2]))
    np.testing.assert_array_equal(stack(lst), x)
    got = R.TensorListGather(input_handle=lst, indices=i32([2, 0]), element_shape=i32(-1), element_dtype=F32)
    np.testing.assert_array_equal(got.numpy(), x[[2, 0]])
    grown = R.TensorListScatterIntoExistingList(input_handle=lst, tensor=np.array([[9, 8]], np.float32),
                                                indices=i32([6]))
    assert R.TensorListLength(input_handle=grown).numpy() == 7
    split = R.TensorListSplit(tensor=np.arange(5, dtype=np.float32).reshape(5, 1), element_shape=i32([-1, 1]),
                              lengths=i64([2, 3]))
    part = R.TensorListGetItem(input_handle=split, index=i32(1), element_shape=i32(-1), element_dtype=F32)
    np.testing.assert_array_equal(part.numpy().ravel(), [2, 3, 4])
    # TensorFlow: lengths [1, 4, 2] from leading_dims for the unset elements.
    partial = R.TensorListSetItem(input_handle=reserve(), index=i32(1), item=np.ones((4, 2), np.float32))
    tensor, lengths = R.TensorListConcatV2(input_handle=partial, element_shape=i32([-1, 2]),
                                           leading_dims=i64([1, 1, 2]), element_dtype=F32)
    np.testing.assert_array_equal(lengths.numpy(), [1, 4, 2])
    assert tensor.shape == (7, 2) and tensor.numpy().sum() == 8
    # Without leading_dims, the one set element's first dimension: [4, 4, 4].
    _, lengths = R.TensorListConcatV2(input_handle=partial, element_shape=i32([-1, 2]),
                                      leading_dims=i64(np.zeros(0)), element_dtype=F32)
    np.testing.assert_array_equal(lengths.numpy(), [4, 4, 4])


def test_push_back_and_pop_back():
    empty = R.EmptyTensorList(element_shape=i32([2]), max_num_elements=i32(1), element_dtype=F32)
    one = R.TensorListPushBack(input_handle=empty, tensor=np.array([1, 2], np.float32))
    rest, last = R.TensorListPopBack(input_handle=one, element_shape=i32(-1), element_dtype=F32)
    np.testing.assert_array_equal(last.numpy(), [1, 2])
    assert R.TensorListLength(input_handle=rest).numpy() == 0
    assert R.TensorListLength(input_handle=one).numpy() == 1
    with pytest.raises(errors.InvalidArgumentError,
                       match="Tried to push item into a full list list size: 1 max_num_elements: 1"):
        R.TensorListPushBack(input_handle=one, tensor=np.array([3, 4], np.float32))


@pytest.mark.parametrize("call, message", [
    (lambda: R.TensorListGetItem(input_handle=reserve(), index=i32(3), element_shape=i32([3, 2]),
                                 element_dtype=F32),
     "Trying to access element 3 in a list with 3 elements."),
    (lambda: R.TensorListGetItem(input_handle=reserve(), index=i32(0), element_shape=i32([-1, 2]),
                                 element_dtype=F32),
     r"Trying to read an uninitialized tensor but element_shape is not fully defined: \[\?,2\]"),
    (lambda: R.TensorListGetItem(input_handle=reserve(), index=i32(0), element_shape=i32([3, 2]),
                                 element_dtype="int32"),
     "Invalid data types; op elements int32 but list elements float"),
    (lambda: R.TensorListSetItem(input_handle=reserve(), index=i32(0), item=np.ones((1, 3), np.float32)),
     r"Item element shape: \[1,3\] list shape: \[\?,2\]"),
    (lambda: R.TensorListSetItem(input_handle=reserve(), index=i32(3), item=np.ones((1, 2), np.float32)),
     "Trying to modify element 3 in a list with 3 elements."),
    (lambda: stack(reserve(), [-1, 2]),
     r"only contains uninitialized tensors and has a non-fully-defined element_shape: \[\?,2\]"),
    (lambda: R.TensorListStack(input_handle=reserve(), element_shape=i32([3, 2]), element_dtype=F32,
                               num_elements=2),
     "Operation expected a list with 2 elements but got a list with 3 elements."),
    (lambda: R.TensorListFromTensor(tensor=np.ones((3, 2), np.float32), element_shape=i32([3])),
     r"Specified a list with shape \[3\] from a tensor with shape \[2\]"),
    (lambda: R.TensorListPopBack(input_handle=R.EmptyTensorList(element_shape=i32([2]), max_num_elements=i32(-1),
                                                                 element_dtype=F32),
                                 element_shape=i32(-1), element_dtype=F32),
     "Trying to pop from an empty list."),
    (lambda: R.TensorListResize(input_handle=reserve(), size=i32(-1)),
     "TensorListSlice expects size to be non-negative. Got: -1"),
    (lambda: R.TensorListGather(input_handle=reserve(), indices=i32([-1]), element_shape=i32([3, 2]),
                                element_dtype=F32),
     "Trying to gather element -1 in a list with 3 elements."),
    (lambda: R.TensorListSplit(tensor=np.ones((5, 2), np.float32), element_shape=i32([-1, 2]), lengths=i64([2, 4])),
     r"Attempting to slice \[2, 6\] from tensor with length 5"),
    (lambda: R.TensorListScatterIntoExistingList(input_handle=reserve(), tensor=np.ones((2, 1, 2), np.float32),
                                                 indices=i32([1])),
     r"Expected len\(indices\) == tensor.shape\[0\], but saw: 1 vs. 2"),
    (lambda: R.TensorListReserve(element_shape=i32(2), num_elements=i32(1), element_dtype=F32),
     "The only valid scalar shape tensor is the fully unknown shape specified as -1."),
])
def test_bad_input_is_tensorflows_error(call, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        call()
