// Host kernels of the TensorList ops that read or write many elements at
// once (schemas in ops/tensor_list_ops.cc): TensorListStack,
// TensorListGather, TensorListConcatV2, TensorListSplit and
// TensorListScatterIntoExistingList. Elements never set read as zeros
// when their shape is known. Messages follow TensorFlow's list kernels.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "host_kernels/tensor_list.h"
#include "ops/partial_shapes.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The element shape merged with the shapes of the set elements among
// `indices` (all when null), as TensorFlow does when the list's own element
// shape is only partly known.
absl::StatusOr<PartialShape> MergeSetElements(const HostOpContext& ctx, const TensorList& list, PartialShape shape,
                                              const std::vector<int64_t>* indices) {
  if (list.element_shape.fully_defined()) return shape;
  const size_t n = indices ? indices->size() : list.elements.size();
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = list.elements[indices ? (*indices)[k] : k];
    if (!t.valid()) continue;
    auto merged = MergeShapes(shape, PartialShape(t.shape()));
    if (!merged.ok()) return ctx.InvalidArgument(merged.status().message());
    shape = *std::move(merged);
  }
  return shape;
}

// The elements at `indices` laid end to end under a new first dimension;
// unset ones are zeros of `element`, which is fully defined.
absl::Status StackElements(HostOpContext& ctx, const TensorList& list, const std::vector<int64_t>& indices,
                           const PartialShape& element) {
  Shape shape{static_cast<int64_t>(indices.size())};
  shape.insert(shape.end(), element.dims().begin(), element.dims().end());
  Tensor zeros;
  std::vector<const Tensor*> parts;
  for (int64_t i : indices) {
    const Tensor& t = list.elements[i];
    if (t.valid()) {
      if (t.shape() != element.dims()) {
        return ctx.InvalidArgument(absl::StrCat("Incompatible shapes during merge: ", element.ToString(), " vs. ",
                                                ShapeToString(t.shape())));
      }
      parts.push_back(&t);
      continue;
    }
    if (!zeros.valid()) {
      PX_ASSIGN_OR_RETURN(zeros, Zeros(list.element_dtype, element.dims()));
    }
    parts.push_back(&zeros);
  }
  auto out = Concatenate(list.element_dtype, shape, parts);
  if (!out.ok()) return ctx.InvalidArgument(out.status().message());
  ctx.set_output(0, *std::move(out));
  return absl::OkStatus();
}

absl::Status Stack(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *list));
  PX_ASSIGN_OR_RETURN(int64_t num_elements, GetAttrInt(ctx.node(), "num_elements"));
  const int64_t size = static_cast<int64_t>(list->elements.size());
  if (num_elements != -1 && size != num_elements) {
    return ctx.InvalidArgument(absl::StrCat("Operation expected a list with ", num_elements,
                                            " elements but got a list with ", size, " elements."));
  }
  PX_ASSIGN_OR_RETURN(PartialShape shape, ElementShapeFromInput(ctx, *list, 1));
  if (!shape.fully_defined() && size == 0) {
    return ctx.InvalidArgument(absl::StrCat(
        "Tried to stack elements of an empty list with non-fully-defined element_shape: ", shape.ToString()));
  }
  PX_ASSIGN_OR_RETURN(shape, MergeSetElements(ctx, *list, std::move(shape), nullptr));
  if (!shape.fully_defined()) {
    return ctx.InvalidArgument(absl::StrCat("Tried to stack list which only contains uninitialized tensors and ",
                                            "has a non-fully-defined element_shape: ", shape.ToString()));
  }
  std::vector<int64_t> all(size);
  for (int64_t i = 0; i < size; ++i) all[i] = i;
  return StackElements(ctx, *list, all, shape);
}
PX_REGISTER_HOST_OP("TensorListStack", Stack);

absl::Status Gather(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *list));
  const Tensor& indices_in = ctx.input(1);
  const int64_t size = static_cast<int64_t>(list->elements.size());
  std::vector<int64_t> indices(indices_in.num_elements());
  for (size_t k = 0; k < indices.size(); ++k) {
    indices[k] = indices_in.data<int32_t>()[k];
    if (indices[k] < 0 || indices[k] >= size) {
      return ctx.InvalidArgument(
          absl::StrCat("Trying to gather element ", indices[k], " in a list with ", size, " elements."));
    }
  }
  PX_ASSIGN_OR_RETURN(PartialShape shape, ElementShapeFromInput(ctx, *list, 2));
  if (!shape.fully_defined() && indices.empty()) {
    return ctx.InvalidArgument(absl::StrCat("Tried to gather 0-elements from a list with non-fully-defined shape: ",
                                            shape.ToString()));
  }
  PX_ASSIGN_OR_RETURN(shape, MergeSetElements(ctx, *list, std::move(shape), &indices));
  if (!shape.fully_defined()) {
    return ctx.InvalidArgument(absl::StrCat(
        "Tried to gather uninitialized tensors from a list with non-fully-defined element_shape: ", shape.ToString()));
  }
  return StackElements(ctx, *list, indices, shape);
}
PX_REGISTER_HOST_OP("TensorListGather", Gather);

// TensorListConcatV2's element shape without its first dimension, checked
// against the set elements, and the first dimension they share (-1 when
// they differ or none is set).
struct ConcatShape {
  PartialShape rest;
  int64_t first_dim = -1;
};

absl::StatusOr<ConcatShape> ConcatShapeOf(const HostOpContext& ctx, const TensorList& list) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, ElementShapeFromInput(ctx, list, 1));
  if (shape.rank() == 0) {
    return ctx.InvalidArgument("Concat requires elements to be at least vectors, found scalars instead.");
  }
  ConcatShape out;
  if (shape.rank_known()) {
    out.first_dim = shape.dim(0);
    out.rest = PartialShape(Shape(shape.dims().begin() + 1, shape.dims().end()));
  }
  if (list.elements.empty() && !out.rest.fully_defined()) {
    return ctx.InvalidArgument(absl::StrCat("All except the first dimension must be fully defined when concating ",
                                            "an empty tensor list. element_shape: ", out.rest.ToString()));
  }
  if (list.element_shape.fully_defined()) return out;
  bool infer = out.first_dim == -1;
  int64_t inferred = out.first_dim;
  for (size_t i = 0; i < list.elements.size(); ++i) {
    const Tensor& t = list.elements[i];
    if (!t.valid()) continue;
    if (t.dims() < 1) {
      return ctx.InvalidArgument(
          absl::StrCat("Concat saw a scalar shape at index ", i, " but requires at least vectors."));
    }
    auto merged = MergeShapes(out.rest, PartialShape(Shape(t.shape().begin() + 1, t.shape().end())));
    if (!merged.ok()) return ctx.InvalidArgument(merged.status().message());
    out.rest = *std::move(merged);
    if (out.first_dim != -1 && out.first_dim != t.shape()[0]) {
      return ctx.InvalidArgument(absl::StrCat("First entry of element_shape input does not match the first dim of ",
                                              "list element at index: ", i, " Expected: ", out.first_dim,
                                              " Actual: ", t.shape()[0]));
    }
    if (infer && inferred == -1) {
      inferred = t.shape()[0];
    } else if (infer && inferred != t.shape()[0]) {
      inferred = -1;
      infer = false;
    }
  }
  out.first_dim = inferred;
  return out;
}

absl::Status ConcatV2(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *list));
  PX_ASSIGN_OR_RETURN(ConcatShape shape, ConcatShapeOf(ctx, *list));
  if (!shape.rest.fully_defined()) {
    return ctx.InvalidArgument(absl::StrCat("Trying to concat list with only uninitialized tensors but ",
                                            "element_shape_except_first_dim_ is not fully defined: ",
                                            shape.rest.ToString()));
  }
  const Tensor& leading = ctx.input(2);
  const int64_t n = static_cast<int64_t>(list->elements.size());
  PX_ASSIGN_OR_RETURN(Tensor lengths, Tensor::AllocateHost(DataType::kInt64, {n}));
  std::vector<Tensor> zeros;  // one per unset element, kept while concatenating
  zeros.reserve(n);
  std::vector<const Tensor*> parts;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& t = list->elements[i];
    int64_t dim;
    if (t.valid()) {
      dim = t.shape()[0];
      parts.push_back(&t);
    } else {
      if (i >= leading.num_elements() && shape.first_dim != -1) {
        dim = shape.first_dim;
      } else if (i >= leading.num_elements()) {
        return ctx.InvalidArgument(absl::StrCat("List contains uninitialized tensor at index ", i,
                                                " but leading_dims has only ", leading.num_elements(), " elements."));
      } else {
        dim = leading.data<int64_t>()[i];
      }
      Shape zero_shape{dim};
      zero_shape.insert(zero_shape.end(), shape.rest.dims().begin(), shape.rest.dims().end());
      auto z = Zeros(list->element_dtype, zero_shape);
      if (!z.ok()) return ctx.InvalidArgument(z.status().message());
      zeros.push_back(*std::move(z));
      parts.push_back(&zeros.back());
    }
    lengths.data<int64_t>()[i] = dim;
    total += dim;
  }
  Shape out_shape{total};
  out_shape.insert(out_shape.end(), shape.rest.dims().begin(), shape.rest.dims().end());
  auto out = Concatenate(list->element_dtype, out_shape, parts);
  if (!out.ok()) return ctx.InvalidArgument(out.status().message());
  ctx.set_output(0, *std::move(out));
  ctx.set_output(1, std::move(lengths));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListConcatV2", ConcatV2);

absl::Status Split(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape element_shape, ShapeInput(ctx, 1));
  if (element_shape.rank() == 0) {
    return ctx.InvalidArgument("TensorListSplit requires element_shape to be at least of rank 1, but saw: []");
  }
  const Tensor& t = ctx.input(0);
  if (t.dims() < 1) {
    return ctx.InvalidArgument(
        absl::StrCat("Tensor must be at least a vector, but saw shape: ", ShapeToString(t.shape())));
  }
  PartialShape rest;
  if (element_shape.rank_known()) {
    rest = PartialShape(Shape(element_shape.dims().begin() + 1, element_shape.dims().end()));
  }
  if (!CompatibleShapes(rest, PartialShape(Shape(t.shape().begin() + 1, t.shape().end())))) {
    return ctx.InvalidArgument(absl::StrCat("tensor shape ", ShapeToString(t.shape()),
                                            " is not compatible with element_shape ", element_shape.ToString()));
  }
  const Tensor& lengths = ctx.input(2);
  if (lengths.dims() != 1) {
    return ctx.InvalidArgument(
        absl::StrCat("Expected lengths to be a vector, received shape: ", ShapeToString(lengths.shape())));
  }
  auto list = std::make_shared<TensorList>();
  list->element_dtype = t.dtype();
  list->element_shape = element_shape;
  int64_t start = 0;
  for (int64_t i = 0; i < lengths.num_elements(); ++i) {
    const int64_t length = lengths.data<int64_t>()[i];
    if (length < 0) return ctx.InvalidArgument(absl::StrCat("Invalid value in lengths: ", length));
    if (start + length > t.shape()[0]) {
      return ctx.InvalidArgument(absl::StrCat("Attempting to slice [", start, ", ", start + length,
                                              "] from tensor with length ", t.shape()[0]));
    }
    PX_ASSIGN_OR_RETURN(Tensor part, Rows(t, start, start + length, /*drop_first=*/false));
    list->elements.push_back(std::move(part));
    start += length;
  }
  if (start != t.shape()[0]) {
    return ctx.InvalidArgument(
        absl::StrCat("Unused values in tensor. Length of tensor: ", t.shape()[0], " Values used: ", start));
  }
  SetListOutput(ctx, 0, std::move(list));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListSplit", Split);

absl::Status ScatterIntoExistingList(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* in, ListInput(ctx, 0));
  const Tensor& t = ctx.input(1);
  const Tensor& indices = ctx.input(2);
  if (t.dtype() != in->element_dtype) {
    return ctx.InvalidArgument(absl::StrCat("Invalid data types; input tensor type: ", DataTypeName(t.dtype()),
                                            " list element_type: ", DataTypeName(in->element_dtype)));
  }
  if (t.dims() < 1) {
    return ctx.InvalidArgument(
        absl::StrCat("Tensor must be at least a vector, but saw shape: ", ShapeToString(t.shape())));
  }
  if (indices.dims() != 1) {
    return ctx.InvalidArgument(
        absl::StrCat("Expected indices to be a vector, but received shape: ", ShapeToString(indices.shape())));
  }
  if (indices.num_elements() != t.shape()[0]) {
    return ctx.InvalidArgument(absl::StrCat("Expected len(indices) == tensor.shape[0], but saw: ",
                                            indices.num_elements(), " vs. ", t.shape()[0]));
  }
  // TensorFlow leaves the element shape unchecked here; a later Stack would
  // fail on it, so the check comes now, where the cause is.
  const Shape row(t.shape().begin() + 1, t.shape().end());
  if (!CompatibleShapes(in->element_shape, PartialShape(row))) {
    return ctx.InvalidArgument(absl::StrCat("Tried to scatter tensors of shape ", ShapeToString(row),
                                            " into a list of element shape ", in->element_shape.ToString()));
  }
  int64_t max_index = -1;
  for (int64_t k = 0; k < indices.num_elements(); ++k) {
    const int64_t i = indices.data<int32_t>()[k];
    if (i < 0) return ctx.InvalidArgument("Indices in TensorListScatter must all be non-negative.");
    max_index = std::max(max_index, i);
  }
  PX_ASSIGN_OR_RETURN(ChangedList out, ListToChange(ctx, 0));
  std::vector<Tensor>& elements = out.list->elements;
  if (max_index + 1 > static_cast<int64_t>(elements.size())) elements.resize(max_index + 1);
  for (int64_t k = 0; k < indices.num_elements(); ++k) {
    PX_ASSIGN_OR_RETURN(Tensor row_value, Rows(t, k, k + 1, /*drop_first=*/true));
    elements[indices.data<int32_t>()[k]] = std::move(row_value);
  }
  ctx.set_output(0, std::move(out.tensor));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListScatterIntoExistingList", ScatterIntoExistingList);

}  // namespace
}  // namespace plexus
