// Host kernels of Assert, PrintV2 and Print (schemas in ops/logging_ops.cc).
// A failed Assert fails the run with an InvalidArgument error naming the
// node and listing its data (string scalars as text, other tensors
// summarized to `summarize` values), as TensorFlow's message does.
#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The data inputs from `first` on, summarized: "[text] [int32 [3] {1, 2, 3}]".
std::string Summaries(const HostOpContext& ctx, int first, int64_t summarize) {
  std::string out;
  for (int i = first; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    const bool text = t.dtype() == DataType::kString && t.dims() == 0;
    absl::StrAppend(&out, i > first ? " " : "", "[",
                    text ? t.strings()[0] : t.DebugString(summarize < 0 ? 1 << 30 : static_cast<int>(summarize)),
                    "]");
  }
  return out;
}

absl::Status Assert(HostOpContext& ctx) {
  const Tensor& condition = ctx.input(0);
  if (condition.dtype() != DataType::kBool || condition.num_elements() != 1) {
    return ctx.InvalidArgument(
        absl::StrCat("In[0] expected to be a bool scalar but got ", condition.DebugString(0)));
  }
  if (condition.data<bool>()[0]) return absl::OkStatus();
  PX_ASSIGN_OR_RETURN(int64_t summarize, GetAttrInt(ctx.node(), "summarize"));
  return ctx.InvalidArgument(absl::StrCat("assertion failed: ", Summaries(ctx, 1, summarize)));
}
PX_REGISTER_HOST_OP("Assert", Assert);

absl::Status PrintV2(HostOpContext& ctx) {
  const Tensor& input = ctx.input(0);
  if (input.dtype() != DataType::kString || input.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("input must be a string scalar, got ", input.DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(std::string stream, GetAttrString(ctx.node(), "output_stream"));
  PX_ASSIGN_OR_RETURN(std::string end, GetAttrString(ctx.node(), "end"));
  const std::string text = input.strings()[0] + end;
  if (stream == "stdout") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else if (stream == "stderr" || stream == "log(info)" || stream == "log(warning)" || stream == "log(error)") {
    std::fwrite(text.data(), 1, text.size(), stderr);
  } else {
    return ctx.InvalidArgument(absl::StrCat("output_stream '", stream,
                                            "' is not supported; stdout, stderr and log(info|warning|error) are"));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("PrintV2", PrintV2);

absl::Status Print(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string message, GetAttrString(ctx.node(), "message"));
  PX_ASSIGN_OR_RETURN(int64_t summarize, GetAttrInt(ctx.node(), "summarize"));
  PX_ASSIGN_OR_RETURN(int64_t first_n, GetAttrInt(ctx.node(), "first_n"));
  // first_n counts calls of the node over the session; without per-node
  // state every call prints, which only prints more than TensorFlow.
  (void)first_n;
  const std::string text = absl::StrCat(message, Summaries(ctx, 1, summarize), "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  ctx.set_output(0, ctx.TakeInput(0));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Print", Print);

}  // namespace
}  // namespace plexus
