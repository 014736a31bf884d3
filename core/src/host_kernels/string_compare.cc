// Host fallbacks of Equal and NotEqual for string tensors (the plugins'
// kernels are numeric), with NumPy broadcasting as TensorFlow's. Keras's
// TextVectorization compares its tokens with the mask token this way. Run
// only when no plugin kernel matches.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// For each element of `out`, the index of the element of `in` it reads
// under broadcasting (in's dimensions aligned to the right).
std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out) {
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t offset = rank - static_cast<int64_t>(in.size());
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= offset; --d) {
    const int64_t size = in[d - offset];
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
  const int64_t n = NumElements(out);
  std::vector<int64_t> index(n, 0);
  std::vector<int64_t> position(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) at += position[d] * strides[d];
    index[i] = at;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++position[d] < out[d]) break;
      position[d] = 0;
    }
  }
  return index;
}

absl::Status CompareStrings(HostOpContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != DataType::kString || b.dtype() != DataType::kString) {
    return ctx.Error(absl::StatusCode::kNotFound, absl::StrCat("no kernel for ", ctx.node().op, " of ",
                                                               DataTypeName(a.dtype()), " on any device"));
  }
  auto shape = BroadcastShapes(PartialShape(a.shape()), PartialShape(b.shape()));
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  const Shape out_shape = shape->dims();
  const std::vector<int64_t> ia = BroadcastIndex(a.shape(), out_shape);
  const std::vector<int64_t> ib = BroadcastIndex(b.shape(), out_shape);
  const bool equal = ctx.node().op == "Equal";
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, out_shape));
  for (size_t i = 0; i < ia.size(); ++i) {
    out.data<bool>()[i] = (a.strings()[ia[i]] == b.strings()[ib[i]]) == equal;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("Equal", CompareStrings);
PX_REGISTER_HOST_FALLBACK("NotEqual", CompareStrings);

}  // namespace
}  // namespace plexus
