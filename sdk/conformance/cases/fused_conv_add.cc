// Cases for _PlexusFusedConv2DAdd, the optimizer's convolution with a
// residual Add: _FusedConv2D's epilogue (BiasAdd or FusedBatchNorm), plus a
// tensor of the output's shape, then the activation. NHWC geometries
// (paddings, strides, dilations, 1x1), every activation, a zero-size batch,
// and what a kernel must refuse: an addend of another shape, NCHW.
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

struct Geometry {
  std::string padding;
  int64_t n, h, w, kh, kw, sh, sw, dh, dw, out, oh, ow;
  std::string label;
};

Case AddCase(const CaseContext& ctx, const Geometry& k, const std::string& first, const std::string& act,
             const std::string& label, const std::string& format = "NHWC") {
  const DataType t = ctx.dtype;
  const int64_t in_c = 3;
  const bool bn = first == "FusedBatchNorm";
  Case c("_PlexusFusedConv2DAdd", label);
  c.Input(RandomTensor(t, {k.n, k.h, k.w, in_c}, ctx.rng, -2, 2))
      .Input(RandomTensor(t, {k.kh, k.kw, in_c, k.out}, ctx.rng, -2, 2));
  const int64_t num_args = bn ? 4 : 1;
  for (int64_t i = 0; i < num_args; ++i) c.Input(RandomTensor(t, {k.out}, ctx.rng, bn && i == 3 ? 0.25 : -2, 2));
  c.Input(RandomTensor(t, {k.n, k.oh, k.ow, k.out}, ctx.rng, -3, 3));
  tf::AttrValue ops;
  ops.mutable_list()->add_s(first);
  if (!act.empty()) ops.mutable_list()->add_s(act);
  c.Attr("T", t)
      .Attr("num_args", num_args)
      .Attr("fused_ops", ops)
      .Attr("data_format", format)
      .Attr("padding", k.padding)
      .Attr("strides", Ints{1, k.sh, k.sw, 1})
      .Attr("dilations", Ints{1, k.dh, k.dw, 1});
  if (k.padding == "EXPLICIT") c.Attr("explicit_paddings", Ints{0, 0, 1, 2, 2, 0, 0, 0});
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;  // sums of ~30 products, as _FusedConv2D's
  return c.WithTolerance(tol);
}

PX_CONFORMANCE_CASES("_PlexusFusedConv2DAdd")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kFloat && ctx.dtype != DataType::kDouble) return cases;
  const std::vector<Geometry> geometries = {
      {"VALID", 2, 6, 7, 3, 3, 1, 1, 1, 1, 4, 4, 5, "VALID 3x3"},
      {"SAME", 2, 6, 7, 3, 3, 2, 2, 1, 1, 2, 3, 4, "SAME 3x3 stride 2"},
      {"EXPLICIT", 1, 5, 6, 3, 2, 2, 1, 1, 1, 2, 3, 6, "EXPLICIT padding"},
      {"SAME", 1, 8, 6, 2, 2, 3, 1, 2, 1, 1, 3, 6, "SAME dilations 2,1 strides 3,1"},
      {"VALID", 2, 5, 5, 1, 1, 1, 1, 1, 1, 4, 5, 5, "1x1 filter"},
  };
  const std::vector<std::string> acts = {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
  size_t g = 0;
  for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
    for (const std::string& act : acts) {
      const Geometry& k = geometries[g++ % geometries.size()];
      cases.push_back(AddCase(ctx, k, first, act, std::string("[") + first + (act.empty() ? "" : "," + act) +
                                                      "] + addend " + k.label));
    }
  }
  const Geometry empty{"SAME", 0, 5, 5, 3, 3, 2, 2, 1, 1, 2, 3, 3, "zero-size batch"};
  cases.push_back(AddCase(ctx, empty, "BiasAdd", "Relu", "zero-size batch [BiasAdd,Relu] + addend"));
  Geometry wrong = geometries[0];
  wrong.ow += 1;  // the addend is one column wider than the output
  cases.push_back(AddCase(ctx, wrong, "BiasAdd", "Relu", "error: an addend of another shape")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(AddCase(ctx, geometries[4], "BiasAdd", "", "error: NCHW", "NCHW")
                      .ExpectError(absl::StatusCode::kUnimplemented));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance
