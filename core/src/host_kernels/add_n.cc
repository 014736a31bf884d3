// Host fallbacks of AddN and AccumulateNV2 (schemas in
// ops/math_host_ops.cc): the elementwise sum of N tensors of one shape, for
// devices whose plugin has no kernel, in TensorFlow's order: the first
// N % 8 inputs (8 or 9 when that is 0 or 1) left to right, then each
// following group of 8 summed left to right and added to the total; in the
// element type (integers wrap, the 16-bit floats round after each
// addition). AddN also
// adds TensorLists (DT_VARIANT), element by element, as TensorFlow's
// gradient of a list does: an element that one list never set takes the
// other's.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "devices/variant.h"
#include "host_kernels/host_dispatch.h"
#include "host_kernels/tensor_list.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

template <typename T>
void Sum(const std::vector<const Tensor*>& in, Tensor* out) {
  const int64_t n = out->num_elements();
  T* o = out->data<T>();
  const size_t count = in.size();
  size_t first = count % 8;
  if (first < 2) first += 8;
  if (first > count) first = count;
  for (int64_t i = 0; i < n; ++i) {
    T acc = in[0]->data<T>()[i];
    for (size_t k = 1; k < first; ++k) acc = host::Add(acc, in[k]->data<T>()[i]);
    for (size_t g = first; g < count; g += 8) {
      T group = in[g]->data<T>()[i];
      for (size_t k = g + 1; k < g + 8; ++k) group = host::Add(group, in[k]->data<T>()[i]);
      acc = host::Add(acc, group);
    }
    o[i] = acc;
  }
}

// The sum of host tensors of one dtype and shape.
absl::StatusOr<Tensor> SumTensors(const HostOpContext& ctx, const std::vector<const Tensor*>& in) {
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in[0]->dtype(), in[0]->shape()));
  if (!host::Visit<host::kNumbers>(in[0]->dtype(), [&](auto v) { Sum<decltype(v)>(in, &out); })) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not add ", DataTypeName(in[0]->dtype()), " tensors"));
  }
  return out;
}

// Two lists added element by element.
absl::StatusOr<std::shared_ptr<TensorList>> AddLists(const HostOpContext& ctx, const TensorList& a,
                                                     const TensorList& b) {
  if (a.element_dtype != b.element_dtype) {
    return ctx.InvalidArgument(absl::StrCat("Trying to add two lists of tensors of different dtypes. One is ",
                                            DataTypeName(a.element_dtype), " and the other is ",
                                            DataTypeName(b.element_dtype)));
  }
  if (a.elements.size() != b.elements.size()) {
    return ctx.InvalidArgument(absl::StrCat("Trying to add two lists of tensors with different lengths. One is ",
                                            a.elements.size(), " and the other is ", b.elements.size()));
  }
  auto out = std::make_shared<TensorList>(a);
  for (size_t i = 0; i < a.elements.size(); ++i) {
    const Tensor& x = a.elements[i];
    const Tensor& y = b.elements[i];
    if (!x.valid()) {
      out->elements[i] = y;
    } else if (y.valid()) {
      if (x.shape() != y.shape()) {
        return ctx.InvalidArgument(absl::StrCat("Trying to add two tensors with incompatible element shapes. One is ",
                                                ShapeToString(x.shape()), " and the other is ",
                                                ShapeToString(y.shape()), ", element #", i));
      }
      PX_ASSIGN_OR_RETURN(out->elements[i], SumTensors(ctx, {&x, &y}));
    }
  }
  return out;
}

absl::Status AddN(HostOpContext& ctx) {
  const int n = ctx.num_inputs();
  const Tensor& first = ctx.input(0);
  if (first.dtype() == DataType::kVariant) {
    PX_ASSIGN_OR_RETURN(const TensorList* list, ListInput(ctx, 0));
    auto sum = std::make_shared<TensorList>(*list);
    for (int k = 1; k < n; ++k) {
      PX_ASSIGN_OR_RETURN(const TensorList* next, ListInput(ctx, k));
      PX_ASSIGN_OR_RETURN(sum, AddLists(ctx, *sum, *next));
    }
    SetListOutput(ctx, 0, std::move(sum));
    return absl::OkStatus();
  }
  std::vector<const Tensor*> in;
  for (int k = 0; k < n; ++k) {
    if (ctx.input(k).shape() != first.shape()) {
      return ctx.InvalidArgument(absl::StrCat("Inputs to operation ", ctx.node().name, " of type ", ctx.node().op,
                                              " must have the same size and shape.  Input 0: ",
                                              ShapeToString(first.shape()), " != input ", k, ": ",
                                              ShapeToString(ctx.input(k).shape())));
    }
    in.push_back(&ctx.input(k));
  }
  if (ctx.node().op == "AccumulateNV2") {
    PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
    bool fits = !shape.rank_known() || shape.rank() == first.dims();
    for (int64_t d = 0; fits && shape.rank_known() && d < shape.rank(); ++d) {
      fits = shape.dim(d) < 0 || shape.dim(d) == first.shape()[d];
    }
    if (!fits) {
      return ctx.InvalidArgument(absl::StrCat("the inputs' shape ", ShapeToString(first.shape()),
                                              " does not match the shape attribute ", shape.ToString()));
    }
  }
  PX_ASSIGN_OR_RETURN(Tensor out, SumTensors(ctx, in));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("AddN", AddN);
PX_REGISTER_HOST_FALLBACK("AccumulateNV2", AddN);

}  // namespace
}  // namespace plexus
