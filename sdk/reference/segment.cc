// Reference kernels: the segment reductions other than UnsortedSegmentSum
// (activation_grad.cc).
//
// The sorted ops (SegmentSum, SegmentMean, SegmentMax, SegmentMin,
// SegmentProd) reduce the rows of data [n, ...] into [last id + 1, ...]; ids
// must be non-negative and non-decreasing. An empty segment is 0 (1 for
// Prod). The unsorted ones (UnsortedSegmentMax, UnsortedSegmentMin,
// UnsortedSegmentProd) reduce data viewed as [size(ids), inner] into
// [num_segments, inner]; negative ids are dropped, and an empty segment is
// the type's lowest value (Max), its highest (Min) or 1 (Prod).
//
// Max and Min follow TensorFlow's kernels where NaN is involved: an element
// replaces the running value unless it is strictly smaller (Max) or larger
// (Min), so a NaN replaces it and the next number replaces the NaN. Floats
// accumulate in double; integer sums and products wrap.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

enum class Reduce { kSum, kMean, kMax, kMin, kProd };

Reduce ReduceOf(const std::string& op) {
  if (op.find("Mean") != std::string::npos) return Reduce::kMean;
  if (op.find("Max") != std::string::npos) return Reduce::kMax;
  if (op.find("Min") != std::string::npos) return Reduce::kMin;
  if (op.find("Prod") != std::string::npos) return Reduce::kProd;
  return Reduce::kSum;
}

// The accumulator of T: double for floats, T for integers.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<sdk::ComputeType<T>>, double, T>;

template <typename A>
A Combine(Reduce r, A acc, A x) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    if (r == Reduce::kSum || r == Reduce::kMean) return static_cast<A>(static_cast<U>(acc) + static_cast<U>(x));
    // Through uint64: 16-bit operands would be promoted to int and could overflow.
    if (r == Reduce::kProd) {
      return static_cast<A>(static_cast<U>(static_cast<uint64_t>(static_cast<U>(acc)) * static_cast<U>(x)));
    }
  } else {
    if (r == Reduce::kSum || r == Reduce::kMean) return acc + x;
    if (r == Reduce::kProd) return acc * x;
  }
  if (r == Reduce::kMax) return x < acc ? acc : x;
  return x > acc ? acc : x;  // kMin
}

// The type's lowest (Max) or highest (Min) finite value, as TensorFlow's
// unsorted kernels start from; 16-bit floats have their own.
template <typename T>
Acc<T> UnsortedInit(Reduce r) {
  if (r == Reduce::kProd) return Acc<T>(1);
  double high;
  if constexpr (std::is_same_v<T, sdk::half>) {
    high = 65504.0;
  } else if constexpr (std::is_same_v<T, sdk::bfloat16>) {
    high = 3.3895313892515355e38;
  } else {
    if (r == Reduce::kMax) return static_cast<Acc<T>>(std::numeric_limits<T>::lowest());
    return static_cast<Acc<T>>(std::numeric_limits<T>::max());
  }
  return static_cast<Acc<T>>(r == Reduce::kMax ? -high : high);
}

template <typename T>
T FromAcc(Acc<T> a) {
  if constexpr (std::is_floating_point_v<sdk::ComputeType<T>>) {
    return T(static_cast<sdk::ComputeType<T>>(a));
  } else {
    return a;
  }
}

template <typename T>
T Mean(Acc<T> sum, int64_t count) {
  if constexpr (std::is_floating_point_v<Acc<T>>) {
    return FromAcc<T>(sum / static_cast<double>(count));
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(sum) / static_cast<uint64_t>(count));
  } else {
    return static_cast<T>(static_cast<int64_t>(sum) / count);
  }
}

class SortedSegmentKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { reduce_ = ReduceOf(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape data_shape = call.input_shape(0);
    const Shape ids_shape = call.input_shape(1);
    Shape out_shape;
    std::string error = index_shapes::SortedSegment(data_shape, ids_shape, -1, &out_shape);
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
      const T empty = reduce_ == Reduce::kProd ? T(1) : T(0);
      for (int64_t e = 0; e < sdk::NumElements(out_shape); ++e) out[e] = empty;
      for (int64_t start = 0; start < rows;) {
        int64_t end = start + 1;
        while (end < rows && ids[end] == ids[start]) ++end;
        for (int64_t j = 0; j < inner; ++j) {
          Acc<T> acc = static_cast<Acc<T>>(data[start * inner + j]);
          for (int64_t i = start + 1; i < end; ++i) {
            acc = Combine(reduce_, acc, static_cast<Acc<T>>(data[i * inner + j]));
          }
          out[ids[start] * inner + j] = reduce_ == Reduce::kMean ? Mean<T>(acc, end - start) : FromAcc<T>(acc);
        }
        start = end;
      }
    });
  }

 private:
  Reduce reduce_ = Reduce::kSum;
};

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
    const int64_t rows = static_cast<int64_t>(ids.size());
    int64_t inner = 1;
    for (size_t d = ids_shape.size(); d < data_shape.size(); ++d) inner *= data_shape[d];
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, out_shape);
      std::vector<Acc<T>> acc(static_cast<size_t>(num[0] * inner), UnsortedInit<T>(reduce_));
      for (int64_t i = 0; i < rows; ++i) {
        if (ids[i] < 0) continue;
        for (int64_t j = 0; j < inner; ++j) {
          Acc<T>& a = acc[ids[i] * inner + j];
          a = Combine(reduce_, a, static_cast<Acc<T>>(data[i * inner + j]));
        }
      }
      for (size_t e = 0; e < acc.size(); ++e) out[e] = FromAcc<T>(acc[e]);
    });
  }

 private:
  Reduce reduce_ = Reduce::kSum;
};

}  // namespace

PX_Status* RegisterSegmentKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> numeric = sdk::NumericTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  const sdk::OpSignature* sorted[] = {&sdk::sig::kSegmentSum, &sdk::sig::kSegmentMean, &sdk::sig::kSegmentMax,
                                      &sdk::sig::kSegmentMin, &sdk::sig::kSegmentProd};
  for (const sdk::OpSignature* op : sorted) {
    if (PX_Status* s = sdk::RegisterKernel<SortedSegmentKernel>(info, registrar, *op, {numeric, index})) {
      return s;
    }
  }
  const sdk::OpSignature* unsorted[] = {&sdk::sig::kUnsortedSegmentMax, &sdk::sig::kUnsortedSegmentMin,
                                        &sdk::sig::kUnsortedSegmentProd};
  for (const sdk::OpSignature* op : unsorted) {
    if (PX_Status* s = sdk::RegisterKernel<UnsortedSegmentKernel>(info, registrar, *op, {numeric, index, index})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::reference
