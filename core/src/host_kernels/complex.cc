// Host kernels of the complex-number ops (schemas in ops/spectral_ops.cc):
// Real, Imag, Angle and ComplexAbs (complex to real), Conj, and Complex
// (two real tensors, broadcast, to one complex).
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/broadcast_index.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

bool IsComplex(DataType t) { return t == DataType::kComplex64 || t == DataType::kComplex128; }

template <typename R>
R Part(const std::string& op, std::complex<R> z) {
  if (op == "Real") return z.real();
  if (op == "Imag") return z.imag();
  if (op == "Angle") return std::arg(z);
  return std::abs(z);  // ComplexAbs
}

template <typename R>
absl::Status PartOf(HostOpContext& ctx, DataType out_type) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, in.shape()));
  const std::string& op = ctx.node().op;
  const int64_t n = in.num_elements();
  for (int64_t i = 0; i < n; ++i) out.data<R>()[i] = Part<R>(op, in.data<std::complex<R>>()[i]);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ComplexPart(HostOpContext& ctx) {
  const DataType t = ctx.input(0).dtype();
  if (!IsComplex(t)) {
    return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(t), ", not complex64 or complex128"));
  }
  const DataType out_type = t == DataType::kComplex64 ? DataType::kFloat : DataType::kDouble;
  return t == DataType::kComplex64 ? PartOf<float>(ctx, out_type) : PartOf<double>(ctx, out_type);
}
PX_REGISTER_HOST_OP("Real", ComplexPart);
PX_REGISTER_HOST_OP("Imag", ComplexPart);
PX_REGISTER_HOST_OP("Angle", ComplexPart);
PX_REGISTER_HOST_OP("ComplexAbs", ComplexPart);

template <typename R>
void Conjugate(const Tensor& in, Tensor* out) {
  for (int64_t i = 0; i < in.num_elements(); ++i) out->data<std::complex<R>>()[i] = std::conj(in.data<std::complex<R>>()[i]);
}

absl::Status Conj(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (!IsComplex(in.dtype())) {
    return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(in.dtype()), ", not complex64 or complex128"));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), in.shape()));
  if (in.dtype() == DataType::kComplex64) Conjugate<float>(in, &out);
  else Conjugate<double>(in, &out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Conj", Conj);

template <typename R>
absl::Status Combine(HostOpContext& ctx, DataType out_type) {
  const Tensor& re = ctx.input(0);
  const Tensor& im = ctx.input(1);
  auto shape = BroadcastShapes(PartialShape(re.shape()), PartialShape(im.shape()));
  if (!shape.ok()) {
    return ctx.InvalidArgument(absl::StrCat("Incompatible shapes: ", ShapeToString(re.shape()), " vs. ",
                                            ShapeToString(im.shape())));
  }
  const Shape out_shape = shape->dims();
  const std::vector<int64_t> ir = BroadcastIndex(re.shape(), out_shape);
  const std::vector<int64_t> ii = BroadcastIndex(im.shape(), out_shape);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, out_shape));
  for (size_t k = 0; k < ir.size(); ++k) {
    out.data<std::complex<R>>()[k] = std::complex<R>(re.data<R>()[ir[k]], im.data<R>()[ii[k]]);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Complex(HostOpContext& ctx) {
  const DataType t = ctx.input(0).dtype();
  if ((t != DataType::kFloat && t != DataType::kDouble) || ctx.input(1).dtype() != t) {
    return ctx.InvalidArgument(absl::StrCat("real and imag must both be float or both double, got ",
                                            DataTypeName(t), " and ", DataTypeName(ctx.input(1).dtype())));
  }
  return t == DataType::kFloat ? Combine<float>(ctx, DataType::kComplex64)
                               : Combine<double>(ctx, DataType::kComplex128);
}
PX_REGISTER_HOST_OP("Complex", Complex);

}  // namespace
}  // namespace plexus
