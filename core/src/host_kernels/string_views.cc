// Host fallbacks of the view ops (Reshape, ExpandDims, Squeeze) for string
// tensors: numeric tensors become views of their memory in the core
// (exec/views.h), but strings are no plain memory, and the plugins' kernels
// are numeric. The elements stay in order under the shape the op's shape
// function gives for the inputs' shapes and values. Run only when no plugin
// kernel matches.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ViewOfStrings(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dtype() != DataType::kString) {
    return ctx.Error(absl::StatusCode::kNotFound, absl::StrCat("no kernel for ", ctx.node().op, " of ",
                                                               DataTypeName(in.dtype()), " on any device"));
  }
  std::vector<PartialShape> shapes;
  std::vector<const Tensor*> values;
  for (const Tensor& t : ctx.inputs()) {
    shapes.emplace_back(t.shape());
    values.push_back(&t);
  }
  InferenceContext infer(ctx.node(), std::move(shapes), std::move(values));
  absl::Status s = InferShapes(infer);
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  const PartialShape& out = infer.output(0);
  if (!out.fully_defined() || NumElements(out.dims()) != in.num_elements()) {
    return ctx.InvalidArgument(absl::StrCat("cannot give ", in.num_elements(), " strings the shape ",
                                            out.ToString()));
  }
  ctx.set_output(0, Tensor::FromStrings(out.dims(), in.strings()));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("Reshape", ViewOfStrings);
PX_REGISTER_HOST_FALLBACK("ExpandDims", ViewOfStrings);
PX_REGISTER_HOST_FALLBACK("Squeeze", ViewOfStrings);

}  // namespace
}  // namespace plexus
