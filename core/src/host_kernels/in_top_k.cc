// Host kernels of InTopK and InTopKV2 (schemas in ops/math_host_ops.cc):
// whether each row's target class is among its k largest predictions. As
// TensorFlow: a target is in the top k when fewer than k classes predict
// strictly more; an out-of-range target or a non-finite prediction anywhere
// in its row gives false; ties count in the target's favor.
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status InTopK(HostOpContext& ctx) {
  const Tensor& predictions = ctx.input(0);
  const Tensor& targets = ctx.input(1);
  int64_t k = 0;
  if (ctx.node().op == "InTopKV2") {
    const Tensor& k_t = ctx.input(2);
    if (k_t.dims() != 0) {
      return ctx.InvalidArgument(absl::StrCat("k must be 0-D, got shape ", ShapeToString(k_t.shape())));
    }
    k = host::IntAt(k_t, 0);
  } else {
    PX_ASSIGN_OR_RETURN(k, GetAttrInt(ctx.node(), "k"));
  }
  if (predictions.dims() != 2) return ctx.InvalidArgument("predictions must be 2-dimensional");
  if (targets.dims() != 1) return ctx.InvalidArgument("targets must be 1-dimensional");
  const int64_t batch = predictions.shape()[0], classes = predictions.shape()[1];
  if (batch != targets.shape()[0]) {
    return ctx.InvalidArgument(absl::StrCat("First dimension of predictions ", batch,
                                            " must match length of targets ", targets.shape()[0]));
  }
  if (predictions.dtype() != DataType::kFloat) {
    return ctx.InvalidArgument(absl::StrCat("predictions must be float, got ", DataTypeName(predictions.dtype())));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, Shape{batch}));
  const float* p = predictions.data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t target = host::IntAt(targets, b);
    bool in = false;
    if (target >= 0 && target < classes && std::isfinite(p[b * classes + target])) {
      const float value = p[b * classes + target];
      int64_t more = 0;
      bool finite = true;
      for (int64_t c = 0; c < classes; ++c) {
        const float v = p[b * classes + c];
        finite = finite && std::isfinite(v);
        more += v > value ? 1 : 0;
      }
      in = finite && more < k;
    }
    out.data<bool>()[b] = in;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("InTopK", InTopK);
PX_REGISTER_HOST_OP("InTopKV2", InTopK);

}  // namespace
}  // namespace plexus
