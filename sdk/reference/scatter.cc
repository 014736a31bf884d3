// Reference kernels: the tensor-scatter family. TensorScatterUpdate, Add,
// Sub, Max and Min(tensor, indices, updates) copy tensor, then apply each
// index row's slice of updates in row order: Update replaces (the last of
// repeated rows wins), Add and Sub combine (integers wrap), Max and Min keep
// the running value unless the update is strictly larger or smaller (a NaN
// update changes nothing, a NaN already there stays), as TensorFlow's
// kernels do. Shapes and index checks are ScatterNd's (index_shapes.h);
// bad_indices_policy "IGNORE" skips rows that do not index into tensor
// instead of refusing them.
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/index_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
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

// A host-memory index tensor (int16, int32, int64 or uint16) as int64s.
std::vector<int64_t> HostIndices(const sdk::Call& call, size_t i) {
  std::vector<int64_t> v(static_cast<size_t>(call.input_size(i)));
  auto read = [&](const auto* p) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int64_t>(p[k]);
  };
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

template <typename T>
T Apply(Combine c, T out, T u) {
  if constexpr (std::is_same_v<T, bool>) {
    return u;  // bool is registered for Update only
  } else {
    using C = sdk::ComputeType<T>;
    const C a = static_cast<C>(out), b = static_cast<C>(u);
    switch (c) {
      case Combine::kUpdate: return u;
      case Combine::kMax: return a < b ? u : out;
      case Combine::kMin: return b < a ? u : out;
      default: break;
    }
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      const U r = c == Combine::kAdd ? static_cast<U>(a) + static_cast<U>(b) : static_cast<U>(a) - static_cast<U>(b);
      return static_cast<T>(r);
    } else {
      return T(c == Combine::kAdd ? a + b : a - b);
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
      for (int64_t e = 0; e < sdk::NumElements(shape); ++e) out[e] = tensor[e];
      for (int64_t i = 0; i < l.n; ++i) {
        if (offsets[i] < 0) continue;
        for (int64_t e = 0; e < l.slice; ++e) {
          out[offsets[i] + e] = Apply(combine_, out[offsets[i] + e], updates[i * l.slice + e]);
        }
      }
    });
  }

 private:
  Combine combine_ = Combine::kUpdate;
  bool skip_bad_ = false;
};

}  // namespace

PX_Status* RegisterScatterKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::reference
