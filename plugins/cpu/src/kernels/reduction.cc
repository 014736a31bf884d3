// CPU kernels: the reduction family, written with sdk::OpKernel.
//
// Sum, Mean, Max, Min, Prod, All, Any: adjacent dimensions that are both
// reduced or both kept are merged first, then each reduced group is folded
// as an [outer, reduced, inner] view with the inner run contiguous (one
// pass per group, innermost first). ArgMax / ArgMin scan one axis the same
// way. Float sums and products accumulate in double, integer sums and
// products wrap like the type.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

enum class Reducer { kSum, kMean, kMax, kMin, kProd, kAll, kAny };

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

template <typename F>
void VisitReal(PX_DataType t, F&& f) {
  sdk::VisitReal(t, std::forward<F>(f), "reduction");
}

// The input viewed as merged groups of dimensions, alternately kept and
// reduced, plus the output shape.
struct Plan {
  sdk::Shape out_shape;
  std::vector<int64_t> dims;  // merged sizes
  std::vector<bool> reduced;  // per merged dimension
  int64_t count = 1;          // elements folded into each output element
};

Plan MakePlan(const sdk::Call& call, bool keep_dims) {
  Plan p;
  const sdk::Shape shape = call.input_shape(0);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : call.input_int_values(1)) {
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Invalid reduction dimension (%lld for input with %lld dimension(s)",
                 static_cast<long long>(axis), static_cast<long long>(rank));
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.count *= shape[d];
      if (keep_dims) p.out_shape.push_back(1);
    } else {
      p.out_shape.push_back(shape[d]);
    }
    if (shape[d] == 1) continue;  // size-1 dimensions change nothing
    if (!p.dims.empty() && p.reduced.back() == reduced[d]) {
      p.dims.back() *= shape[d];
    } else {
      p.dims.push_back(shape[d]);
      p.reduced.push_back(reduced[d]);
    }
  }
  return p;
}

// Accumulator types: double for float sums and products, the unsigned
// 64-bit integer for integer ones (wrapping), the compute type for max and
// min, a byte for All / Any.
template <typename T, Reducer R>
struct AccOf {
  using type = std::conditional_t<R == Reducer::kMax || R == Reducer::kMin, sdk::ComputeType<T>,
                                  std::conditional_t<kIsFloat<T>, double, uint64_t>>;
};
template <Reducer R>
struct AccOf<bool, R> {
  using type = uint8_t;
};

template <typename A, typename T>
A ToAcc(T v) {
  if constexpr (std::is_same_v<A, bool> || std::is_same_v<A, T>) {
    return static_cast<A>(v);
  } else if constexpr (std::is_same_v<A, uint64_t>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<A>(static_cast<sdk::ComputeType<T>>(v));
  }
}

template <Reducer R, typename A>
A Identity() {
  if constexpr (R == Reducer::kProd || R == Reducer::kAll) {
    return A(1);
  } else if constexpr (R == Reducer::kMax) {
    if constexpr (std::numeric_limits<A>::has_infinity) {
      return -std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::lowest();
    }
  } else if constexpr (R == Reducer::kMin) {
    if constexpr (std::numeric_limits<A>::has_infinity) {
      return std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::max();
    }
  } else {
    return A(0);
  }
}

template <Reducer R, typename A>
inline A Fold(A acc, A v) {
  if constexpr (R == Reducer::kSum || R == Reducer::kMean) {
    return acc + v;
  } else if constexpr (R == Reducer::kProd) {
    return acc * v;
  } else if constexpr (R == Reducer::kMax) {
    return v > acc ? v : acc;
  } else if constexpr (R == Reducer::kMin) {
    return v < acc ? v : acc;
  } else if constexpr (R == Reducer::kAll) {
    return acc && v;
  } else {
    return acc || v;
  }
}

// out[o, i] = fold over k of in[o, k, i].
template <Reducer R, typename A, typename S>
void Fold3(const S* in, int64_t outer, int64_t r, int64_t inner, A* out) {
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      const S* row = in + o * r;
      // Four independent partial results let the loop pipeline.
      A a0 = Identity<R, A>(), a1 = a0, a2 = a0, a3 = a0;
      int64_t k = 0;
      for (; k + 4 <= r; k += 4) {
        a0 = Fold<R>(a0, ToAcc<A>(row[k]));
        a1 = Fold<R>(a1, ToAcc<A>(row[k + 1]));
        a2 = Fold<R>(a2, ToAcc<A>(row[k + 2]));
        a3 = Fold<R>(a3, ToAcc<A>(row[k + 3]));
      }
      for (; k < r; ++k) a0 = Fold<R>(a0, ToAcc<A>(row[k]));
      out[o] = Fold<R>(Fold<R>(a0, a1), Fold<R>(a2, a3));
    }
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    A* dst = out + o * inner;
    std::fill(dst, dst + inner, Identity<R, A>());
    for (int64_t k = 0; k < r; ++k) {
      const S* row = in + (o * r + k) * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = Fold<R>(dst[i], ToAcc<A>(row[i]));
    }
  }
}

template <Reducer R, typename T>
void Reduce(const T* in, const Plan& plan, T* out) {
  using A = typename AccOf<T, R>::type;
  const int64_t out_n = sdk::NumElements(plan.out_shape);
  std::vector<int64_t> dims = plan.dims;
  std::vector<bool> reduced = plan.reduced;
  std::vector<A> acc, next;
  bool first = true;
  // Innermost reduced group first: each pass removes one group.
  while (true) {
    int64_t g = static_cast<int64_t>(dims.size()) - 1;
    while (g >= 0 && !reduced[g]) --g;
    if (g < 0) break;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < g; ++d) outer *= dims[d];
    for (size_t d = g + 1; d < dims.size(); ++d) inner *= dims[d];
    next.assign(static_cast<size_t>(outer * inner), A());
    if (first) {
      Fold3<R, A>(in, outer, dims[g], inner, next.data());
    } else {
      Fold3<R, A>(acc.data(), outer, dims[g], inner, next.data());
    }
    acc.swap(next);
    first = false;
    dims.erase(dims.begin() + g);
    reduced.erase(reduced.begin() + g);
  }
  if (first) {  // nothing reduced: a copy
    std::copy(in, in + out_n, out);
    return;
  }
  for (int64_t o = 0; o < out_n; ++o) {
    if constexpr (std::is_same_v<T, bool>) {
      out[o] = acc[o] != 0;
    } else if constexpr (kIsFloat<T>) {
      double v = static_cast<double>(acc[o]);
      if (R == Reducer::kMean) v /= static_cast<double>(plan.count);
      out[o] = static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
    } else {
      T v = static_cast<T>(acc[o]);  // wraps to the type
      if (R == Reducer::kMean) {
        v = plan.count == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(v) / plan.count);
      }
      out[o] = v;
    }
  }
}

template <Reducer R>
class ReductionKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { keep_dims_ = attrs.Bool("keep_dims", false); }
  void Compute(sdk::Call& call) override {
    const Plan plan = MakePlan(call, keep_dims_);
    if constexpr (R == Reducer::kAll || R == Reducer::kAny) {
      const bool* in = call.input<bool>(0);
      bool* out = call.AllocateOutput<bool>(0, plan.out_shape);
      Reduce<R, bool>(in, plan, out);
    } else {
      VisitReal(call.input_dtype(0), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* in = call.input<T>(0);
        T* out = call.AllocateOutput<T>(0, plan.out_shape);
        Reduce<R, T>(in, plan, out);
      });
    }
  }

 private:
  bool keep_dims_ = false;
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
    int64_t axis = call.input_dtype(1) == PX_DT_INT16 ? *call.input<int16_t>(1)
                                                      : call.input_int_values(1)[0];
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
    switch (call.output_dtype(0)) {
      case PX_DT_INT64: Run<int64_t>(call, out_shape, outer, shape[axis], inner); break;
      case PX_DT_INT32: Run<int32_t>(call, out_shape, outer, shape[axis], inner); break;
      case PX_DT_INT16: Run<int16_t>(call, out_shape, outer, shape[axis], inner); break;
      case PX_DT_UINT16: Run<uint16_t>(call, out_shape, outer, shape[axis], inner); break;
      default:
        PX_SDK_CHECK(false, "output_type %s is not supported",
                     sdk::DtypeName(call.output_dtype(0)));
    }
  }

 private:
  template <typename O>
  static void Run(sdk::Call& call, const sdk::Shape& out_shape, int64_t outer, int64_t n,
                  int64_t inner) {
    O* out = call.AllocateOutput<O>(0, out_shape);
    auto scan = [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_same_v<T, bool>, int, sdk::ComputeType<T>>;
      const T* in = call.input<T>(0);
      std::vector<C> best(static_cast<size_t>(inner));
      for (int64_t o = 0; o < outer; ++o) {
        const T* block = in + o * n * inner;
        O* dst = out + o * inner;
        if (inner == 1) {
          int64_t at = 0;
          C value = static_cast<C>(block[0]);
          for (int64_t k = 1; k < n; ++k) {
            const C v = static_cast<C>(block[k]);
            if (kMax ? v > value : v < value) {
              value = v;
              at = k;
            }
          }
          dst[0] = static_cast<O>(at);
          continue;
        }
        for (int64_t i = 0; i < inner; ++i) {
          best[i] = static_cast<C>(block[i]);
          dst[i] = 0;
        }
        for (int64_t k = 1; k < n; ++k) {
          const T* row = block + k * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const C v = static_cast<C>(row[i]);
            if (kMax ? v > best[i] : v < best[i]) {
              best[i] = v;
              dst[i] = static_cast<O>(k);
            }
          }
        }
      }
    };
    if (call.input_dtype(0) == PX_DT_BOOL) {
      scan(sdk::TypeTag<bool>{});
    } else {
      VisitReal(call.input_dtype(0), scan);
    }
  }
};

std::vector<PX_DataType> RealTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,
          PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64, PX_DT_UINT8};
}

}  // namespace

PX_Status* RegisterReductionFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = RealTypes();
  const std::vector<PX_DataType> idx = {PX_DT_INT32, PX_DT_INT64};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ReductionKernel<Reducer::kSum>>(info, registrar, sdk::sig::kSum,
                                                               {types, idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kMean>>(info, registrar, sdk::sig::kMean,
                                                                {types, idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kMax>>(info, registrar, sdk::sig::kMax,
                                                               {types, idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kMin>>(info, registrar, sdk::sig::kMin,
                                                               {types, idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kProd>>(info, registrar, sdk::sig::kProd,
                                                                {types, idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kAll>>(info, registrar, sdk::sig::kAll,
                                                               {idx})) ||
      (s = sdk::RegisterKernel<ReductionKernel<Reducer::kAny>>(info, registrar, sdk::sig::kAny,
                                                               {idx}))) {
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

}  // namespace plexus::cpu
