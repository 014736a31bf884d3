// Host kernel of EuclideanNorm (schema in ops/math_host_ops.cc), behind
// tf.norm's Euclidean case: sqrt(sum(|x|^2)) over the axes given, keeping
// them as 1s with keep_dims. Integers sum in their own type and take the
// integer part of the root, as TensorFlow's Eigen reducer does, except that
// a sum that overflows is an error where TensorFlow wraps around; complex
// inputs give complex results with a zero imaginary part; no axes leaves
// the input as it is.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// False when an integer sum of squares, or its root, does not fit the
// type: TensorFlow wraps around there (undefined behaviour in C++), Plexus
// reports it.
template <typename T>
bool Reduce(const Tensor& in, const std::vector<int64_t>& out_index, int64_t out_size, Tensor* out) {
  using C = host::Compute<T>;
  std::vector<C> acc(static_cast<size_t>(out_size), C(0));
  const int64_t n = in.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const C v = C(in.data<T>()[i]);
    if constexpr (host::kIsComplex<T>) {
      acc[out_index[i]] += v * std::conj(v);
    } else if constexpr (std::is_integral_v<C>) {
      C square;
      if (__builtin_mul_overflow(v, v, &square) ||
          __builtin_add_overflow(acc[out_index[i]], square, &acc[out_index[i]])) {
        return false;
      }
    } else {
      acc[out_index[i]] = C(acc[out_index[i]] + v * v);
    }
  }
  for (int64_t j = 0; j < out_size; ++j) {
    if constexpr (host::kIsComplex<T>) {
      out->data<T>()[j] = std::sqrt(acc[j]);
    } else if constexpr (std::is_integral_v<T>) {
      const double root = std::floor(std::sqrt(static_cast<double>(acc[j])));
      if (root > static_cast<double>(std::numeric_limits<T>::max())) return false;
      out->data<T>()[j] = static_cast<T>(root);
    } else {
      out->data<T>()[j] = T(std::sqrt(acc[j]));
    }
  }
  return true;
}

absl::Status EuclideanNorm(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> axes;
  if (!host::ReadInts(ctx.input(1), &axes)) return ctx.InvalidArgument("reduction_indices must be int32 or int64");
  PX_ASSIGN_OR_RETURN(bool keep_dims, GetAttrBool(ctx.node(), "keep_dims"));
  const int64_t rank = in.dims();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return ctx.InvalidArgument(
          absl::StrCat("Invalid reduction dimension (", a, " for input with ", rank, " dimension(s)"));
    }
    const int64_t d = a < 0 ? a + rank : a;
    if (reduced[d]) {
      return ctx.InvalidArgument(
          absl::StrCat("Invalid reduction arguments: Axes contains duplicate dimension: ", d));
    }
    reduced[d] = true;
  }
  Shape out_shape, kept;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out_shape.push_back(in.shape()[d]);
      kept.push_back(in.shape()[d]);
    } else if (keep_dims) {
      out_shape.push_back(1);
    }
  }
  // The output element of each input element.
  const int64_t n = in.num_elements();
  std::vector<int64_t> out_index(static_cast<size_t>(n));
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) at = at * in.shape()[d] + pos[d];
    }
    out_index[i] = at;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < in.shape()[d]) break;
      pos[d] = 0;
    }
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), out_shape));
  bool fits = true;
  if (!host::Visit<host::kNumbers>(in.dtype(),
                   [&](auto v) { fits = Reduce<decltype(v)>(in, out_index, NumElements(kept), &out); })) {
    return ctx.InvalidArgument(absl::StrCat("EuclideanNorm does not take ", DataTypeName(in.dtype()), " input"));
  }
  if (!fits) {
    return ctx.InvalidArgument(absl::StrCat("the sum of squares of the ", DataTypeName(in.dtype()),
                                            " input overflows ", DataTypeName(in.dtype())));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("EuclideanNorm", EuclideanNorm);

}  // namespace
}  // namespace plexus
