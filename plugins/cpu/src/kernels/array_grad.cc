// CPU kernels: the gradients of the array ops. StridedSliceGrad zero-fills
// its output and scatters dy into it: dimensions contiguous in both layouts
// are merged, and unit-stride rows are copied with memcpy. MirrorPadGrad
// folds the padding back one dimension at a time, adding whole contiguous
// rows.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

void Check(const std::string& error) { PX_SDK_CHECK(error.empty(), "%s", error.c_str()); }

Index Strides(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

void CheckVector(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 1, "%s must be a vector, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

// Copies `n` elements of `es` bytes from contiguous `src` to `dst` with an
// element stride of `stride`.
template <typename T>
void ScatterRow(const char* src, char* dst, int64_t stride, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * stride, s + i, sizeof(T));
}
void Row(size_t es, const char* src, char* dst, int64_t stride, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * es);
    return;
  }
  switch (es) {
    case 1: ScatterRow<uint8_t>(src, dst, stride, n); return;
    case 2: ScatterRow<uint16_t>(src, dst, stride, n); return;
    case 4: ScatterRow<uint32_t>(src, dst, stride, n); return;
    case 8: ScatterRow<uint64_t>(src, dst, stride, n); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * es, src + i * es, es);
  }
}

// Writes the contiguous block `src` of `shape` to dst + sum(i * dst_strides)
// (strides in elements, negative allowed).
void StridedScatter(size_t es, const Shape& shape, const char* src, const Index& dst_strides, char* dst) {
  Shape dims;
  Index ds;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return;
    if (shape[i] == 1) continue;
    // Source is contiguous: merge when the destination is contiguous too.
    if (!dims.empty() && ds.back() == dst_strides[i] * shape[i]) {
      dims.back() *= shape[i];
      ds.back() = dst_strides[i];
      continue;
    }
    dims.push_back(shape[i]);
    ds.push_back(dst_strides[i]);
  }
  if (dims.empty()) {
    std::memcpy(dst, src, es);
    return;
  }
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t cols = dims[r - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d < r - 1; ++d) rows *= dims[d];
  const int64_t e = static_cast<int64_t>(es);
  Index index(r - 1, 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < rows; ++k) {
    Row(es, src + k * cols * e, dst + offset * e, ds[r - 1], cols);
    for (int64_t d = r - 2; d >= 0; --d) {
      offset += ds[d];
      if (++index[d] < dims[d]) break;
      offset -= ds[d] * dims[d];
      index[d] = 0;
    }
  }
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
    const char* src = static_cast<const char*>(call.input_data(4));
    const size_t bytes = static_cast<size_t>(sdk::NumElements(shape)) * es;
    if (r.is_identity) {
      if (bytes > 0) std::memcpy(dst, src, bytes);
      return;
    }
    if (bytes > 0) std::memset(dst, 0, bytes);  // zero bits: zero in every dtype
    const Index strides = Strides(shape);
    Index dst_strides(shape.size());
    int64_t base = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      dst_strides[d] = strides[d] * r.strides[d];
      if (r.processing[d] > 0) base += r.begin[d] * strides[d];
    }
    StridedScatter(es, r.processing, src, dst_strides, dst + base * static_cast<int64_t>(es));
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

// Where element i of a padded dimension comes from in the unpadded one (n
// elements, `before` padded in front).
inline int64_t MirrorSource(int64_t i, int64_t before, int64_t n, bool symmetric) {
  int64_t q = i - before;
  if (q < 0) return symmetric ? -q - 1 : -q;
  if (q >= n) return symmetric ? 2 * n - 1 - q : 2 * (n - 1) - q;
  return q;
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
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // half and bfloat16 sum in float; the others in their own type.
      using Acc = std::conditional_t<std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>, float, T>;
      Compute<T, Acc>(call, in, pad, out);
    }, "MirrorPadGrad");
  }

 private:
  template <typename T, typename Acc>
  void Compute(sdk::Call& call, const Shape& in, const Index& pad, const Shape& out) {
    const T* x = call.input<T>(0);
    T* y = call.AllocateOutput<T>(0, out);
    const int64_t n_out = sdk::NumElements(out);
    if (n_out == 0) return;
    const int64_t n_in = sdk::NumElements(in);
    std::vector<Acc> cur(static_cast<size_t>(n_in)), next;
    for (int64_t i = 0; i < n_in; ++i) cur[i] = static_cast<Acc>(x[i]);
    // Dimensions before d are already folded (out sizes); d and after are not.
    Shape shape = in;
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t before = pad[2 * d], after = pad[2 * d + 1];
      if (before == 0 && after == 0) continue;
      int64_t outer = 1, inner = 1;
      for (size_t k = 0; k < d; ++k) outer *= shape[k];
      for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
      const int64_t rows_in = shape[d], rows_out = out[d];
      next.assign(static_cast<size_t>(outer * rows_out * inner), Acc(0));
      for (int64_t o = 0; o < outer; ++o) {
        const Acc* src = cur.data() + o * rows_in * inner;
        Acc* dst = next.data() + o * rows_out * inner;
        // The unpadded rows first (plain copies), then the mirrored ones.
        std::memcpy(dst, src + before * inner, static_cast<size_t>(rows_out * inner) * sizeof(Acc));
        for (int64_t i = 0; i < rows_in; ++i) {
          if (i >= before && i < before + rows_out) continue;
          const Acc* s = src + i * inner;
          Acc* t = dst + MirrorSource(i, before, rows_out, symmetric_) * inner;
          for (int64_t j = 0; j < inner; ++j) t[j] += s[j];
        }
      }
      cur.swap(next);
      shape[d] = rows_out;
    }
    for (int64_t i = 0; i < n_out; ++i) y[i] = static_cast<T>(cur[i]);
  }

  bool symmetric_ = false;
};

// ScatterNd: the indices are validated first, then each slice is added as
// a contiguous row (half and bfloat16 through float).
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
      const int64_t total = sdk::NumElements(shape);
      if (total > 0) std::memset(static_cast<void*>(out), 0, static_cast<size_t>(total) * sizeof(T));
      for (int64_t i = 0; i < l.n; ++i) {
        T* dst = out + offsets[i];
        const T* src = updates + i * l.slice;
        if constexpr (std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>) {
          for (int64_t e = 0; e < l.slice; ++e) dst[e] = T(static_cast<float>(dst[e]) + static_cast<float>(src[e]));
        } else {
          for (int64_t e = 0; e < l.slice; ++e) dst[e] = static_cast<T>(dst[e] + src[e]);
        }
      }
    }, "ScatterNd");
  }
};

}  // namespace

PX_Status* RegisterArrayGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::cpu
