// Shared pieces of the linear-algebra host kernels (linalg_*.cc): batches
// of matrices over the leading dimensions as Eigen maps, TensorFlow's
// input checks and messages, and the dtype dispatch (float, double,
// complex64, complex128; half and bfloat16 computed in float and rounded
// back, where the op's type list allows them).
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_LINALG_UTIL_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_LINALG_UTIL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/sdk/float16.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus::linalg {

template <typename S>
using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using ConstMap = Eigen::Map<const Matrix<S>>;
template <typename S>
using Map = Eigen::Map<Matrix<S>>;
template <typename S>
using Real = typename Eigen::NumTraits<S>::Real;

// A tensor's shape split into the batch (leading) dimensions and the
// matrix dimensions.
struct Batches {
  Shape outer;
  int64_t count = 1;
  int64_t rows = 0, cols = 0;
};

inline Batches SplitBatches(const Shape& s) {
  Batches b;
  const size_t r = s.size();
  b.outer.assign(s.begin(), s.end() - 2);
  for (int64_t d : b.outer) b.count *= d;
  b.rows = s[r - 2];
  b.cols = s[r - 1];
  return b;
}

// TensorFlow's LinearAlgebraOp checks: input `index` has rank >= 2 and,
// when `square`, square matrices.
inline absl::Status CheckMatrixInput(const HostOpContext& ctx, int index, bool square) {
  const Tensor& t = ctx.input(index);
  if (t.dims() < 2) {
    return ctx.InvalidArgument(absl::StrCat("Input tensor ", index, " must have rank >= 2, got ", t.dims()));
  }
  if (square && t.shape()[t.dims() - 1] != t.shape()[t.dims() - 2]) {
    return ctx.InvalidArgument("Input matrix must be square.");
  }
  return absl::OkStatus();
}

// Matrix k of a batch, read-only and writable.
template <typename S>
ConstMap<S> MatrixAt(const Tensor& t, const Batches& b, int64_t k) {
  return ConstMap<S>(t.data<S>() + k * b.rows * b.cols, b.rows, b.cols);
}
template <typename S>
Map<S> MutableMatrixAt(Tensor* t, int64_t rows, int64_t cols, int64_t k) {
  return Map<S>(t->data<S>() + k * rows * cols, rows, cols);
}

// `outer` followed by `inner`.
inline Shape Concat(const Shape& outer, std::initializer_list<int64_t> inner) {
  Shape s = outer;
  s.insert(s.end(), inner.begin(), inner.end());
  return s;
}

// A float copy of a half or bfloat16 tensor, and back.
inline absl::StatusOr<Tensor> ToFloat(const Tensor& t) {
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kFloat, t.shape()));
  const int64_t n = t.num_elements();
  if (t.dtype() == DataType::kHalf) {
    for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = static_cast<float>(t.data<sdk::half>()[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = static_cast<float>(t.data<sdk::bfloat16>()[i]);
  }
  return out;
}
inline absl::StatusOr<Tensor> FromFloat(const Tensor& t, DataType to) {
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(to, t.shape()));
  const int64_t n = t.num_elements();
  if (to == DataType::kHalf) {
    for (int64_t i = 0; i < n; ++i) out.data<sdk::half>()[i] = sdk::half(t.data<float>()[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out.data<sdk::bfloat16>()[i] = sdk::bfloat16(t.data<float>()[i]);
  }
  return out;
}

inline bool IsHalfLike(DataType t) { return t == DataType::kHalf || t == DataType::kBFloat16; }

// Runs `fn` (a function of HostOpContext&) with every half or bfloat16
// input as float, and rounds its float outputs back to `t`.
template <typename Fn>
absl::Status RunInFloat(HostOpContext& ctx, DataType t, Fn&& fn) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dtype() == t) {
      PX_ASSIGN_OR_RETURN(Tensor f, ToFloat(ctx.input(i)));
      inputs.push_back(std::move(f));
    } else {
      inputs.push_back(ctx.input(i));
    }
  }
  HostOpContext inner(ctx.node(), std::move(inputs), ctx.state());
  PX_RETURN_IF_ERROR(fn(inner));
  for (int i = 0; i < static_cast<int>(inner.outputs().size()); ++i) {
    Tensor& out = inner.outputs()[i];
    if (out.valid() && out.dtype() == DataType::kFloat) {
      PX_ASSIGN_OR_RETURN(Tensor back, FromFloat(out, t));
      ctx.set_output(i, std::move(back));
    } else {
      ctx.set_output(i, std::move(out));
    }
  }
  return absl::OkStatus();
}

// Calls `f(S{})` with S the scalar type of `t`: float, double,
// std::complex<float> or std::complex<double> (`complex` false refuses the
// complex types); half and bfloat16 run as float through RunInFloat when
// `half` is set. Other types are an error naming the op.
template <typename F>
absl::Status Dispatch(HostOpContext& ctx, DataType t, F&& f, bool complex = true, bool half = true) {
  switch (t) {
    case DataType::kFloat: return f(ctx, float{});
    case DataType::kDouble: return f(ctx, double{});
    case DataType::kComplex64:
      if (complex) return f(ctx, std::complex<float>{});
      break;
    case DataType::kComplex128:
      if (complex) return f(ctx, std::complex<double>{});
      break;
    case DataType::kHalf:
    case DataType::kBFloat16:
      if (half) return RunInFloat(ctx, t, [&](HostOpContext& inner) { return f(inner, float{}); });
      break;
    default:
      break;
  }
  return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not take ", DataTypeName(t), " input"));
}

// The DataType of scalar type S.
template <typename S>
constexpr DataType TypeOf() {
  if constexpr (std::is_same_v<S, float>) return DataType::kFloat;
  else if constexpr (std::is_same_v<S, double>) return DataType::kDouble;
  else if constexpr (std::is_same_v<S, std::complex<float>>) return DataType::kComplex64;
  else return DataType::kComplex128;
}

}  // namespace plexus::linalg

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_LINALG_UTIL_H_
