// Host kernels of CheckNumerics and CheckNumericsV2 (schemas in
// ops/array_host_ops.cc): pass the tensor through, or fail with the
// message and what TensorFlow says was found ("message : Tensor had Inf and
// NaN values"; V2 tells -Inf from +Inf: "Tensor had -Inf, +Inf, and NaN
// values").
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

struct Found {
  bool nan = false, neg_inf = false, pos_inf = false;
};

template <typename T>
void Scan(const Tensor& t, Found* f) {
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(static_cast<host::Compute<T>>(t.data<T>()[i]));
    if (std::isnan(v)) f->nan = true;
    else if (std::isinf(v)) (v < 0 ? f->neg_inf : f->pos_inf) = true;
  }
}

absl::Status CheckNumerics(HostOpContext& ctx) {
  const Tensor& t = ctx.input(0);
  Found f;
  if (!host::Visit<host::kFloats>(t.dtype(), [&](auto v) { Scan<decltype(v)>(t, &f); })) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " takes floating-point tensors, not ", DataTypeName(t.dtype())));
  }
  PX_ASSIGN_OR_RETURN(std::string message, GetAttrString(ctx.node(), "message"));
  std::vector<std::string> problems;
  if (ctx.node().op == "CheckNumericsV2") {
    if (f.neg_inf) problems.push_back("-Inf");
    if (f.pos_inf) problems.push_back("+Inf");
  } else if (f.neg_inf || f.pos_inf) {
    problems.push_back("Inf");
  }
  if (f.nan) problems.push_back("NaN");
  if (!problems.empty()) {
    std::string what;
    if (problems.size() == 1) what = problems[0];
    else if (problems.size() == 2) what = absl::StrCat(problems[0], " and ", problems[1]);
    else what = absl::StrCat(problems[0], ", ", problems[1], ", and ", problems[2]);
    return ctx.InvalidArgument(absl::StrCat(message, " : Tensor had ", what, " values"));
  }
  ctx.set_output(0, ctx.TakeInput(0));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("CheckNumerics", CheckNumerics);
PX_REGISTER_HOST_OP("CheckNumericsV2", CheckNumerics);

}  // namespace
}  // namespace plexus
