// The segment reductions on the CPU, except UnsortedSegmentSum
// (activation_grad.cc).
//
// Sorted ops (SegmentSum, Mean, Max, Min, Prod): the ids are checked and cut
// into runs of equal ids; each run reduces its rows into one output row in
// the compute type (float for the 16-bit floats), runs in parallel. Rows no
// run reaches are 0 (1 for Prod). Unsorted ops (UnsortedSegmentMax, Min,
// Prod): an accumulator of num_segments rows starts at the type's lowest,
// highest or 1 and takes the rows in order; wide rows split their columns
// between threads. Max and Min keep the running value unless an element is
// strictly larger or smaller (so NaN behaves as in TensorFlow's kernels and
// the reference); integer sums and products wrap.
#include <algorithm>
#include <cstdint>
#include <limits>
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

enum class Reduce { kSum, kMean, kMax, kMin, kProd };

Reduce ReduceOf(const std::string& op) {
  if (op.find("Mean") != std::string::npos) return Reduce::kMean;
  if (op.find("Max") != std::string::npos) return Reduce::kMax;
  if (op.find("Min") != std::string::npos) return Reduce::kMin;
  if (op.find("Prod") != std::string::npos) return Reduce::kProd;
  return Reduce::kSum;
}

int MaxThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// dst[j] = dst[j] (op) src[j] for j in [j0, j1), in the compute type C.
template <Reduce R, typename C, typename T>
void CombineRow(C* dst, const T* src, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    const C x = static_cast<C>(src[j]);
    if constexpr (R == Reduce::kMax) {
      dst[j] = x < dst[j] ? dst[j] : x;
    } else if constexpr (R == Reduce::kMin) {
      dst[j] = x > dst[j] ? dst[j] : x;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      // Products through uint64: 16-bit operands would be promoted to int and
      // could overflow.
      dst[j] = R == Reduce::kProd
                   ? static_cast<C>(static_cast<U>(static_cast<uint64_t>(static_cast<U>(dst[j])) * static_cast<U>(x)))
                   : static_cast<C>(static_cast<U>(dst[j]) + static_cast<U>(x));
    } else {
      dst[j] = R == Reduce::kProd ? dst[j] * x : dst[j] + x;
    }
  }
}

template <typename T>
T MeanOf(sdk::ComputeType<T> sum, int64_t count) {
  using C = sdk::ComputeType<T>;
  if constexpr (std::is_floating_point_v<C>) {
    return T(sum / static_cast<C>(count));
  } else if constexpr (std::is_unsigned_v<C>) {
    return static_cast<T>(static_cast<uint64_t>(sum) / static_cast<uint64_t>(count));
  } else {
    return static_cast<T>(static_cast<int64_t>(sum) / count);
  }
}

template <Reduce R, typename T>
void SortedSegments(const T* data, const std::vector<int64_t>& ids, int64_t inner, int64_t num, T* out) {
  using C = sdk::ComputeType<T>;
  const int64_t rows = static_cast<int64_t>(ids.size());
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < rows; ++i) {
    if (i == 0 || ids[i] != ids[i - 1]) starts.push_back(i);
  }
  const int64_t runs = static_cast<int64_t>(starts.size());
  starts.push_back(rows);
  const T empty = R == Reduce::kProd ? T(1) : T(0);
  std::fill(out, out + num * inner, empty);
#pragma omp parallel if (rows * inner >= kParallelElements && runs > 1)
  {
    std::vector<C> acc(static_cast<size_t>(inner));
#pragma omp for schedule(dynamic, 16)
    for (int64_t s = 0; s < runs; ++s) {
      const int64_t begin = starts[s], end = starts[s + 1];
      const T* first = data + begin * inner;
      for (int64_t j = 0; j < inner; ++j) acc[j] = static_cast<C>(first[j]);
      for (int64_t i = begin + 1; i < end; ++i) CombineRow<R>(acc.data(), data + i * inner, 0, inner);
      T* dst = out + ids[begin] * inner;
      for (int64_t j = 0; j < inner; ++j) {
        dst[j] = R == Reduce::kMean ? MeanOf<T>(acc[j], end - begin) : T(acc[j]);
      }
    }
  }
}

class SortedSegmentKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { reduce_ = ReduceOf(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape data_shape = call.input_shape(0);
    Shape out_shape;
    std::string error = index_shapes::SortedSegment(data_shape, call.input_shape(1), -1, &out_shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const std::vector<int64_t> ids = call.input_int_values(1);
    const int64_t rows = static_cast<int64_t>(ids.size());
    error = index_shapes::SortedSegmentIds(ids.data(), rows, &out_shape[0]);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t inner = rows == 0 ? 0 : sdk::NumElements(data_shape) / rows;
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, out_shape);
      const int64_t num = out_shape[0];
      switch (reduce_) {
        case Reduce::kSum: SortedSegments<Reduce::kSum>(data, ids, inner, num, out); break;
        case Reduce::kMean: SortedSegments<Reduce::kMean>(data, ids, inner, num, out); break;
        case Reduce::kMax: SortedSegments<Reduce::kMax>(data, ids, inner, num, out); break;
        case Reduce::kMin: SortedSegments<Reduce::kMin>(data, ids, inner, num, out); break;
        case Reduce::kProd: SortedSegments<Reduce::kProd>(data, ids, inner, num, out); break;
      }
    });
  }

 private:
  Reduce reduce_ = Reduce::kSum;
};

// The start value of an unsorted reduction: TensorFlow's lowest / highest
// finite value of T (16-bit floats: their own), or 1.
template <Reduce R, typename T>
sdk::ComputeType<T> UnsortedInit() {
  using C = sdk::ComputeType<T>;
  if constexpr (R == Reduce::kProd) {
    return C(1);
  } else {
    C high;
    if constexpr (std::is_same_v<T, sdk::half>) {
      high = 65504.0f;
    } else if constexpr (std::is_same_v<T, sdk::bfloat16>) {
      high = 3.38953139e38f;
    } else {
      return R == Reduce::kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
    return R == Reduce::kMax ? -high : high;
  }
}

template <Reduce R, typename T>
void UnsortedSegments(const T* data, const std::vector<int64_t>& ids, int64_t inner, int64_t num, T* out) {
  using C = sdk::ComputeType<T>;
  const int64_t rows = static_cast<int64_t>(ids.size());
  std::vector<C> acc(static_cast<size_t>(num * inner), UnsortedInit<R, T>());
  const int threads = MaxThreads();
  const int64_t blocks =
      threads > 1 && rows * inner >= kParallelElements && inner >= 256 ? std::min<int64_t>(threads, inner / 64) : 1;
  const int64_t width = (inner + blocks - 1) / blocks;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t j0 = b * width, j1 = std::min(inner, (b + 1) * width);
    for (int64_t i = 0; i < rows; ++i) {
      if (ids[i] < 0) continue;  // dropped
      CombineRow<R>(acc.data() + ids[i] * inner, data + i * inner, j0, j1);
    }
  }
  for (size_t e = 0; e < acc.size(); ++e) out[e] = T(acc[e]);
}

class UnsortedSegmentKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { reduce_ = ReduceOf(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape data_shape = call.input_shape(0);
    const Shape ids_shape = call.input_shape(1);
    const std::vector<int64_t> num = call.input_int_values(2);
    PX_SDK_CHECK(call.input_rank(2) == 0 && num.size() == 1, "num_segments must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(2)).c_str());
    Shape out_shape;
    std::string error = index_shapes::UnsortedSegment(data_shape, ids_shape, num[0], true, &out_shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const std::vector<int64_t> ids = call.input_int_values(1);
    error = index_shapes::UnsortedSegmentIds(ids.data(), ids_shape, num[0]);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    int64_t inner = 1;
    for (size_t d = ids_shape.size(); d < data_shape.size(); ++d) inner *= data_shape[d];
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, out_shape);
      switch (reduce_) {
        case Reduce::kMax: UnsortedSegments<Reduce::kMax>(data, ids, inner, num[0], out); break;
        case Reduce::kMin: UnsortedSegments<Reduce::kMin>(data, ids, inner, num[0], out); break;
        default: UnsortedSegments<Reduce::kProd>(data, ids, inner, num[0], out); break;
      }
    });
  }

 private:
  Reduce reduce_ = Reduce::kProd;
};

}  // namespace

PX_Status* RegisterSegmentFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> numeric = sdk::NumericTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  for (const sdk::OpSignature* op : {&sdk::sig::kSegmentSum, &sdk::sig::kSegmentMean, &sdk::sig::kSegmentMax,
                                     &sdk::sig::kSegmentMin, &sdk::sig::kSegmentProd}) {
    if (PX_Status* s = sdk::RegisterKernel<SortedSegmentKernel>(info, registrar, *op, {numeric, index})) return s;
  }
  for (const sdk::OpSignature* op :
       {&sdk::sig::kUnsortedSegmentMax, &sdk::sig::kUnsortedSegmentMin, &sdk::sig::kUnsortedSegmentProd}) {
    if (PX_Status* s = sdk::RegisterKernel<UnsortedSegmentKernel>(info, registrar, *op, {numeric, index, index})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::cpu
