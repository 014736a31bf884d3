// The TensorList value that DT_VARIANT tensors hold (schemas in
// ops/tensor_list_ops.cc), and what its host kernels share
// (tensor_list.cc: making, reading and changing single elements;
// tensor_list_bulk.cc: whole-list ops such as Stack, Concat and Split).
//
// A list is a value (devices/variant.h): an op that changes a list returns
// a new one and leaves its input as it was, unless it holds the only
// reference to its input, which it then changes in place (a loop's
// TensorListSetItem, whose list the executor moves in). Element tensors are
// immutable like every tensor, so a new list shares the element buffers of
// the old and copies only their handles; element buffers are never copied.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_TENSOR_LIST_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_TENSOR_LIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/host_ops.h"
#include "devices/variant.h"
#include "plexus/shape.h"
#include "plexus/tensor.h"

namespace plexus {

class TensorList : public VariantValue {
 public:
  std::string DebugString() const override;

  DataType element_dtype = DataType::kInvalid;
  PartialShape element_shape;    // what every element must match
  int64_t max_num_elements = -1;  // -1: no limit (EmptyTensorList's bound)
  std::vector<Tensor> elements;  // host tensors; invalid ones were never set
};

// The list that input `i` holds; an error naming the node when the input is
// not a scalar variant holding a TensorList.
absl::StatusOr<const TensorList*> ListInput(const HostOpContext& ctx, int i);
// A list to change and return as an output: input `i` itself when the op
// holds the only reference to it (the input is taken from the context),
// else a new tensor holding a copy.
struct ChangedList {
  Tensor tensor;     // the variant to output
  TensorList* list;  // the list it holds, to change before it is output
};
absl::StatusOr<ChangedList> ListToChange(HostOpContext& ctx, int i);
// Sets output `i` to a variant scalar holding `list`.
void SetListOutput(HostOpContext& ctx, int i, std::shared_ptr<TensorList> list);

// The node's element_dtype attribute against the list's, with TensorFlow's
// message ("Invalid data types; op elements int32 but list elements float").
absl::Status CheckElementDtype(const HostOpContext& ctx, const TensorList& list);
// The node's element_dtype attribute.
absl::StatusOr<DataType> ElementDtypeAttr(const HostOpContext& ctx);
// Input `i`, a shape tensor (-1 for an unknown rank or dimension).
absl::StatusOr<PartialShape> ShapeInput(const HostOpContext& ctx, int i);
// Input `i`'s shape merged with the list's element shape.
absl::StatusOr<PartialShape> ElementShapeFromInput(const HostOpContext& ctx, const TensorList& list, int i);
// Input `i`, an integer scalar; `what` names it in errors.
absl::StatusOr<int64_t> ScalarInput(const HostOpContext& ctx, int i, const char* what);

// A host tensor of zeros.
absl::StatusOr<Tensor> Zeros(DataType dtype, const Shape& shape);
// Rows [begin, end) of a host tensor along its first dimension, as a new
// tensor (with that dimension dropped when `drop_first`, for one row).
absl::StatusOr<Tensor> Rows(const Tensor& t, int64_t begin, int64_t end, bool drop_first);
// `parts` (host tensors of `dtype`) laid end to end in one new tensor of
// `shape`; their sizes must add up to it.
absl::StatusOr<Tensor> Concatenate(DataType dtype, const Shape& shape, const std::vector<const Tensor*>& parts);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_TENSOR_LIST_H_
