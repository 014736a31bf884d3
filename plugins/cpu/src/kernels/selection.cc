// The selection ops on the CPU: TopKV2 and Where.
//
// TopKV2 picks each row's k largest with a partial sort of the row's
// positions (value descending, equal values by lower position, NaN above
// every number: the reference kernel's order), rows in parallel; 16-bit
// floats are compared through a float copy of the row. The output is in
// that order whether or not `sorted` is set. Where counts the nonzero
// elements per chunk in parallel, allocates [count, rank] and writes each
// chunk's coordinates at its prefix offset, counting them up without division.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/register_kernels.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

constexpr int64_t kParallelElements = int64_t{1} << 15;
constexpr int64_t kWhereChunk = int64_t{1} << 16;

int64_t HostIntScalar(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 0, "%s must be 0-D, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
  switch (call.input_dtype(i)) {
    case PX_DT_INT16: return call.input<int16_t>(i)[0];
    case PX_DT_INT32: return call.input<int32_t>(i)[0];
    case PX_DT_INT64: return call.input<int64_t>(i)[0];
    default:
      PX_SDK_CHECK(false, "%s must be int16, int32 or int64, got %s", what, sdk::DtypeName(call.input_dtype(i)));
  }
  return 0;
}

// Position a ranks before position b in `row`.
template <typename C>
struct RankOrder {
  const C* row;
  bool operator()(int64_t a, int64_t b) const {
    const C x = row[a], y = row[b];
    if constexpr (std::is_floating_point_v<C>) {
      const bool nx = std::isnan(x), ny = std::isnan(y);
      if (nx || ny) return nx != ny ? nx : a < b;
    }
    if (x != y) return x > y;
    return a < b;
  }
};

template <typename T, typename I>
void TopKRows(const T* x, int64_t rows, int64_t n, int64_t k, T* values, I* indices) {
  using C = sdk::ComputeType<T>;
#pragma omp parallel if (rows * n >= kParallelElements && rows > 1)
  {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::vector<C> converted(std::is_same_v<C, T> ? 0 : static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      const C* keys;
      if constexpr (std::is_same_v<C, T>) {
        keys = row;
      } else {
        for (int64_t j = 0; j < n; ++j) converted[j] = static_cast<C>(row[j]);
        keys = converted.data();
      }
      std::iota(order.begin(), order.end(), int64_t{0});
      const RankOrder<C> before{keys};
      if (k < n) {
        std::nth_element(order.begin(), order.begin() + k, order.end(), before);
      }
      std::sort(order.begin(), order.begin() + k, before);
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = row[order[j]];
        indices[r * k + j] = static_cast<I>(order[j]);
      }
    }
  }
}

class TopKV2Kernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape in_shape = call.input_shape(0);
    const int64_t k = HostIntScalar(call, 1, "k");
    Shape out_shape;
    const std::string error = index_shapes::TopK(in_shape, k, true, &out_shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t n = in_shape.back();
    const int64_t rows = sdk::NumElements(Shape(in_shape.begin(), in_shape.end() - 1));
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* values = call.AllocateOutput<T>(0, out_shape);
      switch (call.output_dtype(1)) {
        case PX_DT_INT16: TopKRows(x, rows, n, k, values, call.AllocateOutput<int16_t>(1, out_shape)); break;
        case PX_DT_INT32: TopKRows(x, rows, n, k, values, call.AllocateOutput<int32_t>(1, out_shape)); break;
        case PX_DT_INT64: TopKRows(x, rows, n, k, values, call.AllocateOutput<int64_t>(1, out_shape)); break;
        default:
          PX_SDK_CHECK(false, "index_type must be int16, int32 or int64, got %s",
                       sdk::DtypeName(call.output_dtype(1)));
      }
    });
  }
};

class WhereKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(!shape.empty(), "input must be at least 1-D, got a scalar");
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run(call, call.input<T>(0), shape);
    });
  }

 private:
  template <typename T>
  static bool NonZero(T v) {
    using C = sdk::ComputeType<T>;
    return static_cast<C>(v) != C(0);
  }

  template <typename T>
  static void Run(sdk::Call& call, const T* x, const Shape& shape) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t size = sdk::NumElements(shape);
    const int64_t chunks = (size + kWhereChunk - 1) / kWhereChunk;
    std::vector<int64_t> first(static_cast<size_t>(chunks) + 1, 0);
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t count = 0;
      const int64_t end = std::min(size, (c + 1) * kWhereChunk);
      for (int64_t i = c * kWhereChunk; i < end; ++i) count += NonZero(x[i]) ? 1 : 0;
      first[c + 1] = count;
    }
    std::partial_sum(first.begin(), first.end(), first.begin());
    int64_t* out = call.AllocateOutput<int64_t>(0, {first.back(), rank});
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t* row = out + first[c] * rank;
      const int64_t begin = c * kWhereChunk, end = std::min(size, (c + 1) * kWhereChunk);
      // The coordinates of `begin`, then counted up element by element.
      std::vector<int64_t> coord(static_cast<size_t>(rank));
      for (int64_t d = rank - 1, rest = begin; d >= 0; --d) {
        coord[d] = rest % shape[d];
        rest /= shape[d];
      }
      for (int64_t i = begin; i < end; ++i) {
        if (NonZero(x[i])) {
          std::copy(coord.begin(), coord.end(), row);
          row += rank;
        }
        for (int64_t d = rank - 1; d >= 0 && ++coord[d] == shape[d]; --d) coord[d] = 0;
      }
    }
  }
};

}  // namespace

PX_Status* RegisterSelectionFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> index = {PX_DT_INT16, PX_DT_INT32, PX_DT_INT64};
  if (PX_Status* s = sdk::RegisterKernel<TopKV2Kernel>(info, registrar, sdk::sig::kTopKV2,
                                                       {sdk::NumericTypes(), index, index})) {
    return s;
  }
  return sdk::RegisterKernel<WhereKernel>(info, registrar, sdk::sig::kWhere, {sdk::AllTypes()});
}

}  // namespace plexus::cpu
