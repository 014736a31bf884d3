// Reference kernels: the selection ops TopKV2 and Where.
//
// TopKV2(input [..., n], k) -> values, indices [..., k]: each last-axis row
// sorted by value, largest first, equal values by lower index first (as
// TensorFlow); NaN ranks above every number. The output is in that order
// whether or not `sorted` is set (TensorFlow leaves the unsorted order
// unspecified). Where(input) -> int64 [num_true, rank]: the coordinates of
// the nonzero (true) elements in row-major order; NaN counts as nonzero.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// A host-memory integer scalar of dtype int16, int32 or int64.
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

// a ranks before b: larger, NaN above all.
template <typename C>
bool RanksBefore(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
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
    const int64_t rows = n == 0 ? sdk::NumElements(Shape(in_shape.begin(), in_shape.end() - 1)) :
                                  sdk::NumElements(in_shape) / n;
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* values = call.AllocateOutput<T>(0, out_shape);
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::vector<int64_t> picked(static_cast<size_t>(rows * k));
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = x + r * n;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return RanksBefore(static_cast<C>(row[a]), static_cast<C>(row[b]));
        });
        for (int64_t j = 0; j < k; ++j) {
          values[r * k + j] = row[order[j]];
          picked[r * k + j] = order[j];
        }
      }
      WriteIndices(call, picked, out_shape);
    });
  }

 private:
  static void WriteIndices(sdk::Call& call, const std::vector<int64_t>& picked, const Shape& shape) {
    auto write = [&](auto* out) {
      for (size_t i = 0; i < picked.size(); ++i) out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(picked[i]);
    };
    switch (call.output_dtype(1)) {
      case PX_DT_INT16: write(call.AllocateOutput<int16_t>(1, shape)); break;
      case PX_DT_INT32: write(call.AllocateOutput<int32_t>(1, shape)); break;
      case PX_DT_INT64: write(call.AllocateOutput<int64_t>(1, shape)); break;
      default:
        PX_SDK_CHECK(false, "index_type must be int16, int32 or int64, got %s",
                     sdk::DtypeName(call.output_dtype(1)));
    }
  }
};

class WhereKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(!shape.empty(), "input must be at least 1-D, got a scalar");
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t size = sdk::NumElements(shape);
    std::vector<int64_t> flat;
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      for (int64_t i = 0; i < size; ++i) {
        if (static_cast<C>(x[i]) != C(0)) flat.push_back(i);
      }
    });
    const int64_t count = static_cast<int64_t>(flat.size());
    int64_t* out = call.AllocateOutput<int64_t>(0, {count, rank});
    for (int64_t r = 0; r < count; ++r) {
      int64_t rest = flat[r];
      for (int64_t d = rank - 1; d >= 0; --d) {
        out[r * rank + d] = rest % shape[d];
        rest /= shape[d];
      }
    }
  }
};

}  // namespace

PX_Status* RegisterSelectionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> index = {PX_DT_INT16, PX_DT_INT32, PX_DT_INT64};
  if (PX_Status* s = sdk::RegisterKernel<TopKV2Kernel>(info, registrar, sdk::sig::kTopKV2,
                                                       {sdk::NumericTypes(), index, index})) {
    return s;
  }
  return sdk::RegisterKernel<WhereKernel>(info, registrar, sdk::sig::kWhere, {sdk::AllTypes()});
}

}  // namespace plexus::reference
