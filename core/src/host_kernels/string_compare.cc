// Host fallbacks of Equal and NotEqual for string tensors (the plugins'
// kernels are numeric), with NumPy broadcasting as TensorFlow's. Keras's
// TextVectorization compares its tokens with the mask token this way. Run
// only when no plugin kernel matches.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/broadcast_index.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

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
