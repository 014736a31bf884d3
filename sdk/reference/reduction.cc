// Reference kernels: the reduction family (see reference_kernels.h).
//
// Sum, Mean, Max, Min, Prod, All, Any over the axes of a host-memory
// reduction_indices input, and ArgMax / ArgMin over one axis. One plain loop
// visits every input element and folds it into its output element.
#include <cstdint>
#include <limits>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

enum class Reducer { kSum, kMean, kMax, kMin, kProd, kAll, kAny };

// Per input dimension: whether it is reduced, and the output stride of each
// kept dimension (reduced ones contribute nothing to the output index).
struct Geometry {
  sdk::Shape in_shape, out_shape;
  std::vector<int64_t> out_strides;  // per input dimension
  int64_t count = 1;                 // elements folded into each output element
};

Geometry ReductionGeometry(const sdk::Call& call, bool keep_dims) {
  Geometry g;
  g.in_shape = call.input_shape(0);
  const int64_t rank = static_cast<int64_t>(g.in_shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : call.input_int_values(1)) {
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Invalid reduction dimension (%lld for input with %lld dimension(s)",
                 static_cast<long long>(axis), static_cast<long long>(rank));
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      g.out_shape.push_back(g.in_shape[d]);
    } else {
      if (keep_dims) g.out_shape.push_back(1);
      g.count *= g.in_shape[d];
    }
  }
  g.out_strides.assign(static_cast<size_t>(rank), 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (!reduced[d]) {
      g.out_strides[d] = stride;
      stride *= g.in_shape[d];
    }
  }
  return g;
}

// Output element of every input element, in input order.
std::vector<int64_t> OutputIndices(const Geometry& g) {
  const int64_t n = sdk::NumElements(g.in_shape);
  std::vector<int64_t> result(static_cast<size_t>(n));
  std::vector<int64_t> index(g.in_shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d) o += index[d] * g.out_strides[d];
    result[i] = o;
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < g.in_shape[d]) break;
      index[d] = 0;
    }
  }
  return result;
}

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// Floats accumulate in double. Integer sums and products accumulate in
// uint64 (wrapping like the type itself); max and min in the type.
template <typename T>
using Acc = std::conditional_t<kIsFloat<T>, double, uint64_t>;

template <typename T>
void Reduce(Reducer op, const T* in, const Geometry& g, T* out) {
  const int64_t out_n = sdk::NumElements(g.out_shape);
  const std::vector<int64_t> where = OutputIndices(g);
  if (op == Reducer::kMax || op == Reducer::kMin) {
    using C = sdk::ComputeType<T>;
    const bool is_max = op == Reducer::kMax;
    C init;
    if constexpr (kIsFloat<T>) {
      init = is_max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      init = is_max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
    std::vector<C> acc(static_cast<size_t>(out_n), init);
    for (size_t i = 0; i < where.size(); ++i) {
      const C v = static_cast<C>(in[i]);
      C& a = acc[where[i]];
      if (is_max ? v > a : v < a) a = v;
    }
    for (int64_t o = 0; o < out_n; ++o) out[o] = static_cast<T>(acc[o]);
    return;
  }
  const bool is_prod = op == Reducer::kProd;
  std::vector<Acc<T>> acc(static_cast<size_t>(out_n), is_prod ? Acc<T>(1) : Acc<T>(0));
  for (size_t i = 0; i < where.size(); ++i) {
    Acc<T> v;
    if constexpr (kIsFloat<T>) {
      v = static_cast<double>(static_cast<sdk::ComputeType<T>>(in[i]));
    } else {
      v = static_cast<uint64_t>(static_cast<int64_t>(in[i]));
    }
    if (is_prod) {
      acc[where[i]] *= v;
    } else {
      acc[where[i]] += v;
    }
  }
  for (int64_t o = 0; o < out_n; ++o) {
    if constexpr (kIsFloat<T>) {
      double v = acc[o];
      if (op == Reducer::kMean) v /= static_cast<double>(g.count);
      out[o] = static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
    } else {
      T v = static_cast<T>(acc[o]);  // wraps to the type
      if (op == Reducer::kMean) {
        v = g.count == 0 ? T(0)
                         : static_cast<T>(static_cast<int64_t>(v) / g.count);
      }
      out[o] = v;
    }
  }
}

class ReductionKernel : public sdk::OpKernel {
 public:
  explicit ReductionKernel(Reducer op) : op_(op) {}
  void Init(sdk::Attrs& attrs) override { keep_dims_ = attrs.Bool("keep_dims", false); }
  void Compute(sdk::Call& call) override {
    const Geometry g = ReductionGeometry(call, keep_dims_);
    if (op_ == Reducer::kAll || op_ == Reducer::kAny) {
      const bool* in = call.input<bool>(0);
      bool* out = call.AllocateOutput<bool>(0, g.out_shape);
      const bool init = op_ == Reducer::kAll;
      const int64_t out_n = sdk::NumElements(g.out_shape);
      for (int64_t o = 0; o < out_n; ++o) out[o] = init;
      const std::vector<int64_t> where = OutputIndices(g);
      for (size_t i = 0; i < where.size(); ++i) {
        if (init) {
          out[where[i]] = out[where[i]] && in[i];
        } else {
          out[where[i]] = out[where[i]] || in[i];
        }
      }
      return;
    }
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, g.out_shape);
      Reduce<T>(op_, in, g, out);
    });
  }

 private:
  Reducer op_;
  bool keep_dims_ = false;
};

template <Reducer R>
class Reduction : public ReductionKernel {
 public:
  Reduction() : ReductionKernel(R) {}
};

// ArgMax / ArgMin: the first index of the extreme value along one axis.
template <bool kMax>
class ArgReductionKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(shape.size());
    PX_SDK_CHECK(call.input_rank(1) == 0, "dimension must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    int64_t axis = 0;
    if (call.input_dtype(1) == PX_DT_INT16) {
      axis = *call.input<int16_t>(1);
    } else {
      axis = call.input_int_values(1)[0];
    }
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Expected dimension in the range [%lld, %lld), but got %lld",
                 static_cast<long long>(-rank), static_cast<long long>(rank),
                 static_cast<long long>(axis));
    if (axis < 0) axis += rank;
    PX_SDK_CHECK(shape[axis] > 0, "Reduction axis %lld is empty in shape %s",
                 static_cast<long long>(axis), sdk::ShapeString(shape).c_str());
    sdk::Shape out_shape;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) out_shape.push_back(shape[d]);
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    const int64_t n = shape[axis];
    std::vector<int64_t> result(static_cast<size_t>(outer * inner));
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_same_v<T, bool>, int, sdk::ComputeType<T>>;
      const T* in = call.input<T>(0);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          int64_t best = 0;
          C best_value = static_cast<C>(in[o * n * inner + i]);
          for (int64_t k = 1; k < n; ++k) {
            const C v = static_cast<C>(in[(o * n + k) * inner + i]);
            if (kMax ? v > best_value : v < best_value) {
              best = k;
              best_value = v;
            }
          }
          result[o * inner + i] = best;
        }
      }
    });
    switch (call.output_dtype(0)) {
      case PX_DT_INT64: Store<int64_t>(call, out_shape, result); break;
      case PX_DT_INT32: Store<int32_t>(call, out_shape, result); break;
      case PX_DT_INT16: Store<int16_t>(call, out_shape, result); break;
      case PX_DT_UINT16: Store<uint16_t>(call, out_shape, result); break;
      default:
        PX_SDK_CHECK(false, "output_type %s is not supported",
                     sdk::DtypeName(call.output_dtype(0)));
    }
  }

 private:
  template <typename O>
  static void Store(sdk::Call& call, const sdk::Shape& shape, const std::vector<int64_t>& v) {
    O* out = call.AllocateOutput<O>(0, shape);
    for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<O>(v[i]);
  }
};

std::vector<PX_DataType> RealTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,
          PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64, PX_DT_UINT8};
}

}  // namespace

PX_Status* RegisterReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = RealTypes();
  const std::vector<PX_DataType> idx = {PX_DT_INT32, PX_DT_INT64};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<Reduction<Reducer::kSum>>(info, registrar, sdk::sig::kSum,
                                                         {types, idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kMean>>(info, registrar, sdk::sig::kMean,
                                                          {types, idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kMax>>(info, registrar, sdk::sig::kMax,
                                                         {types, idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kMin>>(info, registrar, sdk::sig::kMin,
                                                         {types, idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kProd>>(info, registrar, sdk::sig::kProd,
                                                          {types, idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kAll>>(info, registrar, sdk::sig::kAll, {idx})) ||
      (s = sdk::RegisterKernel<Reduction<Reducer::kAny>>(info, registrar, sdk::sig::kAny, {idx}))) {
    return s;
  }
  std::vector<PX_DataType> arg_types = types;
  arg_types.push_back(PX_DT_BOOL);
  const std::vector<PX_DataType> arg_idx = {PX_DT_INT16, PX_DT_INT32, PX_DT_INT64};
  const std::vector<PX_DataType> out_types = {PX_DT_INT16, PX_DT_UINT16, PX_DT_INT32,
                                              PX_DT_INT64};
  if ((s = sdk::RegisterKernel<ArgReductionKernel<true>>(info, registrar, sdk::sig::kArgMax,
                                                         {arg_types, arg_idx, out_types})) ||
      (s = sdk::RegisterKernel<ArgReductionKernel<false>>(info, registrar, sdk::sig::kArgMin,
                                                          {arg_types, arg_idx, out_types}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference
