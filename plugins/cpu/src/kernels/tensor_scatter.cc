// The tensor-scatter family on the CPU: TensorScatterUpdate, Add, Sub, Max
// and Min. Every index row is checked first (index_shapes.h, shared with
// ScatterNd and the reference), then tensor is copied and each row's slice
// of updates applied in row order, as contiguous runs: Update copies (the
// last of repeated rows wins), Add and Sub combine (integers wrap; 16-bit
// floats through float), Max and Min keep the running value unless the
// update is strictly larger or smaller (NaN as in TensorFlow's kernels).
// bad_indices_policy "IGNORE" skips rows outside tensor.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

enum class Combine { kUpdate, kAdd, kSub, kMax, kMin };

Combine CombineOf(const std::string& op) {
  if (op == "TensorScatterAdd") return Combine::kAdd;
  if (op == "TensorScatterSub") return Combine::kSub;
  if (op == "TensorScatterMax") return Combine::kMax;
  if (op == "TensorScatterMin") return Combine::kMin;
  return Combine::kUpdate;
}

std::vector<int64_t> HostIndices(const sdk::Call& call, size_t i) {
  std::vector<int64_t> v(static_cast<size_t>(call.input_size(i)));
  auto read = [&](const auto* p) { std::copy(p, p + v.size(), v.begin()); };
  switch (call.input_dtype(i)) {
    case PX_DT_INT16: read(call.input<int16_t>(i)); break;
    case PX_DT_UINT16: read(call.input<uint16_t>(i)); break;
    case PX_DT_INT32: read(call.input<int32_t>(i)); break;
    case PX_DT_INT64: read(call.input<int64_t>(i)); break;
    default:
      PX_SDK_CHECK(false, "indices must be int16, uint16, int32 or int64, got %s",
                   sdk::DtypeName(call.input_dtype(i)));
  }
  return v;
}

template <Combine K, typename T>
void ApplySlice(T* dst, const T* src, int64_t n) {
  using C = sdk::ComputeType<T>;
  for (int64_t e = 0; e < n; ++e) {
    const C a = static_cast<C>(dst[e]), b = static_cast<C>(src[e]);
    if constexpr (K == Combine::kMax) {
      if (a < b) dst[e] = src[e];
    } else if constexpr (K == Combine::kMin) {
      if (b < a) dst[e] = src[e];
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      dst[e] = static_cast<T>(K == Combine::kAdd ? static_cast<U>(a) + static_cast<U>(b)
                                                 : static_cast<U>(a) - static_cast<U>(b));
    } else {
      dst[e] = T(K == Combine::kAdd ? a + b : a - b);
    }
  }
}

template <Combine K, typename T>
void ApplyAll(T* out, const T* updates, const std::vector<int64_t>& offsets, int64_t slice) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] < 0) continue;  // skipped by bad_indices_policy IGNORE
    const T* src = updates + static_cast<int64_t>(i) * slice;
    if constexpr (K == Combine::kUpdate) {
      if (slice > 0) std::memcpy(static_cast<void*>(out + offsets[i]), src, static_cast<size_t>(slice) * sizeof(T));
    } else {
      ApplySlice<K>(out + offsets[i], src, slice);
    }
  }
}

class TensorScatterKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    combine_ = CombineOf(attrs.op());
    const std::string policy = attrs.String("bad_indices_policy", "");
    PX_SDK_CHECK(policy.empty() || policy == "DEFAULT" || policy == "ERROR" || policy == "IGNORE",
                 "bad_indices_policy must be \"\", DEFAULT, ERROR or IGNORE, got \"%s\"", policy.c_str());
    skip_bad_ = policy == "IGNORE";
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const Shape indices_shape = call.input_shape(1);
    const std::string error = index_shapes::TensorScatter(shape, indices_shape, call.input_shape(2));
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const index_shapes::ScatterLayout l = index_shapes::MakeScatterLayout(indices_shape, shape);
    const std::vector<int64_t> idx = HostIndices(call, 1);
    std::vector<int64_t> offsets;
    const std::string bad = index_shapes::ScatterOffsets(l, idx.data(), shape, &offsets, skip_bad_);
    PX_SDK_CHECK(bad.empty(), "%s", bad.c_str());
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* tensor = call.input<T>(0);
      const T* updates = call.input<T>(2);
      T* out = call.AllocateOutput<T>(0, shape);
      const int64_t total = sdk::NumElements(shape);
      if (total > 0) std::memcpy(static_cast<void*>(out), tensor, static_cast<size_t>(total) * sizeof(T));
      if constexpr (std::is_same_v<T, bool>) {
        ApplyAll<Combine::kUpdate>(out, updates, offsets, l.slice);  // bool: Update only
      } else {
        switch (combine_) {
          case Combine::kUpdate: ApplyAll<Combine::kUpdate>(out, updates, offsets, l.slice); break;
          case Combine::kAdd: ApplyAll<Combine::kAdd>(out, updates, offsets, l.slice); break;
          case Combine::kSub: ApplyAll<Combine::kSub>(out, updates, offsets, l.slice); break;
          case Combine::kMax: ApplyAll<Combine::kMax>(out, updates, offsets, l.slice); break;
          case Combine::kMin: ApplyAll<Combine::kMin>(out, updates, offsets, l.slice); break;
        }
      }
    });
  }

 private:
  Combine combine_ = Combine::kUpdate;
  bool skip_bad_ = false;
};

}  // namespace

PX_Status* RegisterTensorScatterFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  if (PX_Status* s = sdk::RegisterKernel<TensorScatterKernel>(
          info, registrar, sdk::sig::kTensorScatterUpdate,
          {sdk::AllTypes(), {PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT16}})) {
    return s;
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kTensorScatterAdd, &sdk::sig::kTensorScatterSub,
                                     &sdk::sig::kTensorScatterMax, &sdk::sig::kTensorScatterMin}) {
    if (PX_Status* s = sdk::RegisterKernel<TensorScatterKernel>(info, registrar, *op, {sdk::NumericTypes(), index})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::cpu
