// Host kernels of the TensorList ops that make lists and read or change
// single elements (schemas in ops/tensor_list_ops.cc), and the helpers in
// tensor_list.h. Messages follow TensorFlow's list kernels.
#include "host_kernels/tensor_list.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/partial_shapes.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {

std::string TensorList::DebugString() const {
  return absl::StrCat("TensorList of ", elements.size(), " ", DataTypeName(element_dtype), " ",
                      element_shape.ToString());
}

absl::StatusOr<const TensorList*> ListInput(const HostOpContext& ctx, int i) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kVariant || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("Input list must be a scalar variant, saw ", DataTypeName(t.dtype()),
                                            " ", ShapeToString(t.shape())));
  }
  const VariantValue* value = GetVariant(t);
  const auto* list = dynamic_cast<const TensorList*>(value);
  if (list == nullptr) {
    return ctx.InvalidArgument(absl::StrCat("Input handle is not a list. Saw: '",
                                            value ? value->DebugString() : "nothing", "'"));
  }
  return list;
}

absl::StatusOr<ChangedList> ListToChange(HostOpContext& ctx, int i) {
  PX_ASSIGN_OR_RETURN(const TensorList* in, ListInput(ctx, i));
  Tensor held = ctx.TakeInput(i);
  if (auto* list = dynamic_cast<TensorList*>(UniqueVariant(held))) return ChangedList{std::move(held), list};
  auto copy = std::make_shared<TensorList>(*in);
  TensorList* list = copy.get();
  return ChangedList{MakeVariantTensor(std::move(copy)), list};
}

void SetListOutput(HostOpContext& ctx, int i, std::shared_ptr<TensorList> list) {
  ctx.set_output(i, MakeVariantTensor(std::move(list)));
}

absl::StatusOr<DataType> ElementDtypeAttr(const HostOpContext& ctx) {
  return GetAttrType(ctx.node(), "element_dtype");
}

absl::Status CheckElementDtype(const HostOpContext& ctx, const TensorList& list) {
  PX_ASSIGN_OR_RETURN(DataType dtype, ElementDtypeAttr(ctx));
  if (dtype == list.element_dtype) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat("Invalid data types; op elements ", DataTypeName(dtype),
                                          " but list elements ", DataTypeName(list.element_dtype)));
}

absl::StatusOr<PartialShape> ShapeInput(const HostOpContext& ctx, int i) {
  auto shape = PartialShapeFromTensor(ctx.input(i));
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  return shape;
}

absl::StatusOr<PartialShape> ElementShapeFromInput(const HostOpContext& ctx, const TensorList& list, int i) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, ShapeInput(ctx, i));
  auto merged = MergeShapes(shape, list.element_shape);
  if (!merged.ok()) return ctx.InvalidArgument(merged.status().message());
  return merged;
}

absl::StatusOr<int64_t> ScalarInput(const HostOpContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(what, " expected to be a scalar but got shape: ",
                                            ShapeToString(t.shape())));
  }
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  return int64_t{t.data<int32_t>()[0]};
}

absl::StatusOr<Tensor> Zeros(DataType dtype, const Shape& shape) { return Tensor::AllocateHost(dtype, shape); }

absl::StatusOr<Tensor> Rows(const Tensor& t, int64_t begin, int64_t end, bool drop_first) {
  Shape shape = t.shape();
  shape[0] = end - begin;
  if (drop_first) shape.erase(shape.begin());
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(t.dtype(), shape));
  const size_t row = t.shape()[0] > 0 ? t.nbytes() / t.shape()[0] : 0;
  if (out.nbytes() > 0) std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + begin * row, out.nbytes());
  return out;
}

absl::StatusOr<Tensor> Concatenate(DataType dtype, const Shape& shape, const std::vector<const Tensor*>& parts) {
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, shape));
  size_t offset = 0;
  for (const Tensor* part : parts) {
    const size_t bytes = part->nbytes();
    if (offset + bytes > out.nbytes()) return absl::InternalError("list elements overflow the stacked tensor");
    if (bytes > 0) std::memcpy(static_cast<char*>(out.raw_data()) + offset, part->raw_data(), bytes);
    offset += bytes;
  }
  return out;
}

namespace {

// The element at `index`, or zeros of the element shape (merged with the
// element_shape input, then with the set elements) when it was never set.
absl::StatusOr<Tensor> ElementOrZeros(const HostOpContext& ctx, const TensorList& list, int64_t index) {
  if (list.elements[index].valid()) return list.elements[index];
  PX_ASSIGN_OR_RETURN(PartialShape shape, ElementShapeFromInput(ctx, list, 2));
  for (const Tensor& t : list.elements) {
    if (shape.fully_defined() || !t.valid()) continue;
    auto merged = MergeShapes(shape, PartialShape(t.shape()));
    if (!merged.ok()) return ctx.InvalidArgument(merged.status().message());
    shape = *merged;
  }
  if (!shape.fully_defined()) {
    return ctx.InvalidArgument(absl::StrCat("Trying to read an uninitialized tensor but element_shape is not fully ",
                                            "defined: ", shape.ToString(), " and no list element is set."));
  }
  return Zeros(list.element_dtype, shape.dims());
}

absl::Status CheckElementShape(const HostOpContext& ctx, const TensorList& list, const Tensor& item,
                               const char* message) {
  if (CompatibleShapes(list.element_shape, PartialShape(item.shape()))) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat(message, ShapeToString(item.shape()), " list shape: ",
                                          list.element_shape.ToString()));
}

absl::Status NewList(HostOpContext& ctx, int64_t size, int64_t max_num_elements = -1) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, ShapeInput(ctx, 0));
  auto list = std::make_shared<TensorList>();
  PX_ASSIGN_OR_RETURN(list->element_dtype, ElementDtypeAttr(ctx));
  list->element_shape = std::move(shape);
  list->elements.resize(size);
  list->max_num_elements = max_num_elements;
  SetListOutput(ctx, 0, std::move(list));
  return absl::OkStatus();
}

absl::Status EmptyTensorList(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(int64_t max, ScalarInput(ctx, 1, "max_num_elements"));
  return NewList(ctx, 0, max);
}
PX_REGISTER_HOST_OP("EmptyTensorList", EmptyTensorList);

absl::Status Reserve(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(int64_t n, ScalarInput(ctx, 1, "num_elements"));
  if (n < 0) {
    return ctx.InvalidArgument(
        absl::StrCat("The num_elements to reserve must be a non negative number, but got ", n));
  }
  return NewList(ctx, n);
}
PX_REGISTER_HOST_OP("TensorListReserve", Reserve);

absl::Status FromTensor(HostOpContext& ctx) {
  const Tensor& t = ctx.input(0);
  PX_ASSIGN_OR_RETURN(PartialShape shape, ShapeInput(ctx, 1));
  if (t.dims() < 1) {
    return ctx.InvalidArgument(
        absl::StrCat("Tensor must be at least a vector, but saw shape: ", ShapeToString(t.shape())));
  }
  const Shape row(t.shape().begin() + 1, t.shape().end());
  if (!CompatibleShapes(shape, PartialShape(row))) {
    return ctx.InvalidArgument(absl::StrCat("Specified a list with shape ", shape.ToString(),
                                            " from a tensor with shape ", ShapeToString(row)));
  }
  auto list = std::make_shared<TensorList>();
  list->element_dtype = t.dtype();
  list->element_shape = std::move(shape);
  for (int64_t i = 0; i < t.shape()[0]; ++i) {
    PX_ASSIGN_OR_RETURN(Tensor element, Rows(t, i, i + 1, /*drop_first=*/true));
    list->elements.push_back(std::move(element));
  }
  SetListOutput(ctx, 0, std::move(list));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListFromTensor", FromTensor);

absl::Status Length(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  ctx.set_output(0, Tensor::FromVector<int32_t>(DataType::kInt32, {},
                                                {static_cast<int32_t>(list->elements.size())}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListLength", Length);

absl::Status ElementShape(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  PX_ASSIGN_OR_RETURN(DataType type, GetAttrType(ctx.node(), "shape_type"));
  const PartialShape& shape = list->element_shape;
  Shape dims = shape.rank_known() ? shape.dims() : Shape{-1};
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(type, shape.rank_known() ? Shape{shape.rank()} : Shape{}));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (type == DataType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    } else {
      out.data<int64_t>()[i] = dims[i];
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListElementShape", ElementShape);

absl::Status GetItem(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *list));
  PX_ASSIGN_OR_RETURN(int64_t index, ScalarInput(ctx, 1, "index"));
  if (index < 0 || index >= static_cast<int64_t>(list->elements.size())) {
    return ctx.InvalidArgument(absl::StrCat("Trying to access element ", index, " in a list with ",
                                            list->elements.size(), " elements."));
  }
  PX_ASSIGN_OR_RETURN(Tensor item, ElementOrZeros(ctx, *list, index));
  ctx.set_output(0, std::move(item));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListGetItem", GetItem);

absl::Status SetItem(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* in, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *in));
  const Tensor& item = ctx.input(2);
  PX_RETURN_IF_ERROR(CheckElementShape(
      ctx, *in, item, "Tried to set a tensor with incompatible shape at a list index. Item element shape: "));
  PX_ASSIGN_OR_RETURN(int64_t index, ScalarInput(ctx, 1, "index"));
  PX_ASSIGN_OR_RETURN(bool resize, GetAttrBool(ctx.node(), "resize_if_index_out_of_bounds"));
  const int64_t size = static_cast<int64_t>(in->elements.size());
  if (index < 0 || (index >= size && !resize)) {
    return ctx.InvalidArgument(
        absl::StrCat("Trying to modify element ", index, " in a list with ", size, " elements."));
  }
  PX_ASSIGN_OR_RETURN(ChangedList out, ListToChange(ctx, 0));
  TensorList* list = out.list;
  if (index >= size) list->elements.resize(index + 1);
  list->elements[index] = ctx.input(2);
  ctx.set_output(0, std::move(out.tensor));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListSetItem", SetItem);

absl::Status PushBack(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* in, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *in));
  PX_RETURN_IF_ERROR(CheckElementShape(
      ctx, *in, ctx.input(1), "Tried to append a tensor with incompatible shape to a list. Op element shape: "));
  const size_t size = in->elements.size();
  if (in->max_num_elements != -1 && static_cast<int64_t>(size) >= in->max_num_elements) {
    return ctx.InvalidArgument(absl::StrCat("Tried to push item into a full list list size: ", size,
                                            " max_num_elements: ", in->max_num_elements));
  }
  PX_ASSIGN_OR_RETURN(ChangedList out, ListToChange(ctx, 0));
  TensorList* list = out.list;
  list->elements.push_back(ctx.input(1));
  ctx.set_output(0, std::move(out.tensor));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListPushBack", PushBack);

absl::Status PopBack(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const TensorList* in, ListInput(ctx, 0));
  PX_RETURN_IF_ERROR(CheckElementDtype(ctx, *in));
  if (in->elements.empty()) return ctx.InvalidArgument("Trying to pop from an empty list.");
  const int64_t last = static_cast<int64_t>(in->elements.size()) - 1;
  Tensor item;
  if (in->elements[last].valid()) {
    item = in->elements[last];
  } else {
    PX_ASSIGN_OR_RETURN(PartialShape shape, ElementShapeFromInput(ctx, *in, 1));
    if (!shape.fully_defined()) {
      return ctx.InvalidArgument(absl::StrCat(
          "Trying to read an uninitialized tensor but element_shape is not fully defined: ", shape.ToString()));
    }
    PX_ASSIGN_OR_RETURN(item, Zeros(in->element_dtype, shape.dims()));
  }
  PX_ASSIGN_OR_RETURN(ChangedList out, ListToChange(ctx, 0));
  TensorList* list = out.list;
  list->elements.pop_back();
  ctx.set_output(0, std::move(out.tensor));
  ctx.set_output(1, std::move(item));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListPopBack", PopBack);

absl::Status Resize(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(ListInput(ctx, 0).status());
  PX_ASSIGN_OR_RETURN(int64_t size, ScalarInput(ctx, 1, "size"));
  if (size < 0) {
    return ctx.InvalidArgument(absl::StrCat("TensorListSlice expects size to be non-negative. Got: ", size));
  }
  PX_ASSIGN_OR_RETURN(ChangedList out, ListToChange(ctx, 0));
  TensorList* list = out.list;
  list->elements.resize(size);
  ctx.set_output(0, std::move(out.tensor));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorListResize", Resize);

}  // namespace
}  // namespace plexus
