// Reference kernels: the gradients of the array ops (see
// reference_kernels.h). StridedSliceGrad writes dy into a zero tensor at
// the positions StridedSlice reads, one element at a time; MirrorPadGrad
// adds every element of its input to the element it was mirrored from.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

void Check(const std::string& error) { PX_SDK_CHECK(error.empty(), "%s", error.c_str()); }

// Row-major strides (in elements) of a shape.
Index Strides(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// Calls f(index, k) for every multi-index of `shape` in row-major order; k
// is the flat position.
template <typename F>
void ForEachIndex(const Shape& shape, F&& f) {
  const int64_t n = sdk::NumElements(shape);
  Index index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(index, k);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void CheckVector(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 1, "%s must be a vector, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

class StridedSliceGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    begin_mask_ = attrs.Int("begin_mask", 0);
    end_mask_ = attrs.Int("end_mask", 0);
    ellipsis_mask_ = attrs.Int("ellipsis_mask", 0);
    new_axis_mask_ = attrs.Int("new_axis_mask", 0);
    shrink_axis_mask_ = attrs.Int("shrink_axis_mask", 0);
  }
  void Compute(sdk::Call& call) override {
    CheckVector(call, 0, "shape");
    for (size_t i = 1; i <= 3; ++i) CheckVector(call, i, i == 1 ? "begin" : i == 2 ? "end" : "strides");
    const Shape shape = call.input_int_values(0);
    for (int64_t d : shape) {
      PX_SDK_CHECK(d >= 0, "shape has a negative dimension: %s", sdk::ShapeString(shape).c_str());
    }
    const Index begin = call.input_int_values(1), end = call.input_int_values(2);
    array_shapes::StridedSliceResult r;
    Check(array_shapes::StridedSlice(shape, &begin, &end, call.input_int_values(3), begin_mask_, end_mask_,
                                     ellipsis_mask_, new_axis_mask_, shrink_axis_mask_, &r));
    PX_SDK_CHECK(call.input_shape(4) == r.final_shape, "shape of dy was %s instead of %s",
                 sdk::ShapeString(call.input_shape(4)).c_str(), sdk::ShapeString(r.final_shape).c_str());
    const size_t es = sdk::DtypeSize(call.input_dtype(4));
    PX_SDK_CHECK(es > 0, "dy has unsupported dtype %s", sdk::DtypeName(call.input_dtype(4)));
    char* dst = static_cast<char*>(call.AllocateOutputRaw(0, shape));
    // All-zero bytes are zero in every supported dtype (and false for bool).
    for (int64_t k = 0; k < sdk::NumElements(shape); ++k) std::memset(dst + k * es, 0, es);
    const char* src = static_cast<const char*>(call.input_data(4));
    const Index strides = Strides(shape);
    // dy holds the processing shape's elements in order.
    ForEachIndex(r.processing, [&](const Index& p, int64_t k) {
      int64_t offset = 0;
      for (size_t d = 0; d < shape.size(); ++d) offset += (r.begin[d] + p[d] * r.strides[d]) * strides[d];
      std::memcpy(dst + offset * es, src + k * es, es);
    });
  }

 private:
  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0, new_axis_mask_ = 0, shrink_axis_mask_ = 0;
};

// The output shape of MirrorPadGrad: the input shape less the paddings,
// which must be valid MirrorPad paddings of that shape.
Shape MirrorPadGradOutputShape(const Shape& in, const Shape& pad_shape, const Index& pad, int mirror) {
  const int64_t r = static_cast<int64_t>(in.size());
  PX_SDK_CHECK(pad_shape.size() == 2 && pad_shape[0] == r && pad_shape[1] == 2,
               "paddings must be a matrix of shape [%lld,2] for an input of shape %s, got %s",
               static_cast<long long>(r), sdk::ShapeString(in).c_str(), sdk::ShapeString(pad_shape).c_str());
  Shape out(in.size());
  for (int64_t i = 0; i < r; ++i) {
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    PX_SDK_CHECK(before >= 0 && after >= 0, "Paddings must be non-negative: %lld %lld",
                 static_cast<long long>(before), static_cast<long long>(after));
    out[i] = in[i] - before - after;
    PX_SDK_CHECK(out[i] >= 0, "paddings %lld, %lld are larger than dimension %lld of the input (%lld)",
                 static_cast<long long>(before), static_cast<long long>(after), static_cast<long long>(i),
                 static_cast<long long>(in[i]));
  }
  Shape padded;
  Check(array_shapes::Pad(out, pad_shape, pad, mirror, &padded));
  return out;
}

class MirrorPadGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string mode = attrs.String("mode");
    PX_SDK_CHECK(mode == "REFLECT" || mode == "SYMMETRIC", "mode must be REFLECT or SYMMETRIC, got '%s'",
                 mode.c_str());
    symmetric_ = mode == "SYMMETRIC";
  }
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const Index pad = call.input_int_values(1);
    const Shape out = MirrorPadGradOutputShape(in, call.input_shape(1), pad, symmetric_ ? 2 : 1);
    const Index out_strides = Strides(out);
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      // Floating types sum in double; integer types in uint64 (wrapping
      // like the integer type itself).
      using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
      std::vector<Acc> acc(static_cast<size_t>(sdk::NumElements(out)), Acc(0));
      ForEachIndex(in, [&](const Index& p, int64_t k) {
        int64_t offset = 0;
        for (size_t d = 0; d < in.size(); ++d) {
          const int64_t n = out[d];
          int64_t q = p[d] - pad[2 * d];
          if (q < 0) q = symmetric_ ? -q - 1 : -q;
          if (q >= n) q = symmetric_ ? 2 * n - 1 - q : 2 * (n - 1) - q;
          offset += q * out_strides[d];
        }
        if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>) {
          acc[offset] += static_cast<Acc>(x[k]);
        } else {
          acc[offset] += static_cast<float>(x[k]);  // half and bfloat16 through float
        }
      });
      T* y = call.AllocateOutput<T>(0, out);
      for (size_t i = 0; i < acc.size(); ++i) {
        if constexpr (std::is_integral_v<T> || std::is_same_v<T, double> || std::is_same_v<T, float>) {
          y[i] = static_cast<T>(acc[i]);
        } else {
          y[i] = T(static_cast<float>(acc[i]));
        }
      }
    }, "MirrorPadGrad");
  }

 private:
  bool symmetric_ = false;
};

// ScatterNd: one index row at a time, one element at a time.
class ScatterNdKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(2) == 1, "shape must be a vector, got shape %s",
                 sdk::ShapeString(call.input_shape(2)).c_str());
    const Shape shape = call.input_int_values(2);
    for (int64_t d : shape) {
      PX_SDK_CHECK(d >= 0, "shape has a negative dimension: %s", sdk::ShapeString(shape).c_str());
    }
    const Shape indices_shape = call.input_shape(0);
    const std::string error = index_shapes::ScatterNd(indices_shape, call.input_shape(1), shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const index_shapes::ScatterLayout l = index_shapes::MakeScatterLayout(indices_shape, shape);
    const Index idx = call.input_int_values(0);
    std::vector<int64_t> offsets;
    const std::string bad = index_shapes::ScatterOffsets(l, idx.data(), shape, &offsets);
    PX_SDK_CHECK(bad.empty(), "%s", bad.c_str());
    sdk::VisitReal(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* updates = call.input<T>(1);
      T* out = call.AllocateOutput<T>(0, shape);
      for (int64_t e = 0; e < sdk::NumElements(shape); ++e) out[e] = T(0);
      for (int64_t i = 0; i < l.n; ++i) {
        const int64_t offset = offsets[i];
        for (int64_t e = 0; e < l.slice; ++e) {
          if constexpr (std::is_integral_v<T> || std::is_same_v<T, double> || std::is_same_v<T, float>) {
            out[offset + e] = static_cast<T>(out[offset + e] + updates[i * l.slice + e]);
          } else {
            out[offset + e] = T(static_cast<float>(out[offset + e]) + static_cast<float>(updates[i * l.slice + e]));
          }
        }
      }
    }, "ScatterNd");
  }
};

}  // namespace

PX_Status* RegisterArrayGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  PX_Status* s = nullptr;
  auto reg = [&](PX_Status* status) {
    if (s == nullptr) s = status;
  };
  reg(sdk::RegisterKernel<StridedSliceGradKernel>(info, registrar, sdk::sig::kStridedSliceGrad,
                                                  {all, index}));
  std::vector<PX_DataType> real = sdk::FloatTypes();
  for (PX_DataType t : {PX_DT_INT8, PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT8}) real.push_back(t);
  reg(sdk::RegisterKernel<MirrorPadGradKernel>(info, registrar, sdk::sig::kMirrorPadGrad,
                                               {real, index}));
  reg(sdk::RegisterKernel<ScatterNdKernel>(info, registrar, sdk::sig::kScatterNd, {real, index}));
  return s;
}

}  // namespace plexus::reference
