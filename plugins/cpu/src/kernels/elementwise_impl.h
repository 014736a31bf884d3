// The cpu elementwise and activation families: shared declarations between
// the kernel classes (elementwise.cc, activation_family.cc) and the per-dtype
// compute files (elementwise_<dtype>.cc, activation_family_<dtype>.cc), which
// keep the Eigen-heavy template code in small translation units.
//
// Broadcasting: MakePlan collapses the inputs' shapes to the fewest
// dimensions that describe the broadcast (same shapes become one dimension,
// a scalar operand becomes a stride-0 dimension), and RunPlan walks the
// output with the innermost dimension as a tight loop specialized for
// contiguous or repeated operands. So the same-shape and scalar cases run
// as single flat loops and the general case as rows of them.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_IMPL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_IMPL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::cpu::ew {

using sdk::Shape;

// ---------------------------------------------------------------------------
// Broadcast plans
// ---------------------------------------------------------------------------

template <int N>
struct Plan {
  Shape out_shape;           // the real output shape
  int64_t num_elements = 0;  // of the output
  Shape dims;                // collapsed output dims (empty for a scalar output)
  Shape strides[N];          // element strides of each input per collapsed dim (0 = repeat)
};

// Broadcasts the shapes (NumPy rules). Returns false when they do not
// broadcast.
template <int N>
bool MakePlan(const Shape* shapes, Plan<N>* plan) {
  size_t rank = 0;
  for (int k = 0; k < N; ++k) rank = std::max(rank, shapes[k].size());
  // Scratch kept per thread, so steady-state calls do not allocate.
  thread_local Shape padded[N];
  thread_local std::vector<uint32_t> masks;  // bit k: input k repeats along a dim
  for (int k = 0; k < N; ++k) {
    padded[k].assign(rank - shapes[k].size(), 1);
    padded[k].insert(padded[k].end(), shapes[k].begin(), shapes[k].end());
  }
  plan->out_shape.assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t o = 1;
    for (int k = 0; k < N; ++k) {
      int64_t v = padded[k][d];
      if (v == 1) continue;
      if (o != 1 && o != v) return false;
      o = v;
    }
    plan->out_shape[d] = o;
  }
  plan->num_elements = sdk::NumElements(plan->out_shape);
  // Collapse: drop output dims of 1, merge neighbours whose inputs all
  // broadcast (or all do not) in the same way.
  plan->dims.clear();
  masks.clear();
  for (size_t d = 0; d < rank; ++d) {
    int64_t o = plan->out_shape[d];
    if (o == 1) continue;
    uint32_t mask = 0;
    for (int k = 0; k < N; ++k) {
      if (padded[k][d] == 1) mask |= 1u << k;
    }
    if (!masks.empty() && masks.back() == mask) {
      plan->dims.back() *= o;
    } else {
      plan->dims.push_back(o);
      masks.push_back(mask);
    }
  }
  for (int k = 0; k < N; ++k) {
    plan->strides[k].assign(plan->dims.size(), 0);
    int64_t stride = 1;
    for (size_t d = plan->dims.size(); d-- > 0;) {
      if (!(masks[d] & (1u << k))) {
        plan->strides[k][d] = stride;
        stride *= plan->dims[d];
      }
    }
  }
  return true;
}

// out[i] = f(a[i or 0], b[i or 0]) for n elements: va (vb) says a (b) has
// n values rather than one.
template <typename TA, typename TB, typename TO, typename F>
inline void RunFlat2(int64_t n, bool va, bool vb, const TA* a, const TB* b, TO* out, F f) {
  if (va && vb) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (va) {
    const TB y = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else if (vb) {
    const TA x = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else {
    const TO v = f(*a, *b);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

// out[i] = f(a[ia], b[ib]) over a two-input plan.
template <typename TA, typename TB, typename TO, typename F>
void RunPlan2(const Plan<2>& p, const TA* a, const TB* b, TO* out, F f) {
  if (p.num_elements == 0) return;
  const int rank = static_cast<int>(p.dims.size());
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  const int64_t inner = p.dims[rank - 1];
  const bool va = p.strides[0][rank - 1] != 0, vb = p.strides[1][rank - 1] != 0;
  if (rank == 1) return RunFlat2(inner, va, vb, a, b, out, f);
  thread_local std::vector<int64_t> index;
  index.assign(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t done = 0; done < p.num_elements; done += inner) {
    RunFlat2(inner, va, vb, a + oa, b + ob, out, f);
    out += inner;
    for (int d = rank - 2; d >= 0; --d) {
      oa += p.strides[0][d];
      ob += p.strides[1][d];
      if (++index[d] < p.dims[d]) break;
      oa -= p.strides[0][d] * p.dims[d];
      ob -= p.strides[1][d] * p.dims[d];
      index[d] = 0;
    }
  }
}

// ---------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------

enum class Bin {
  kAdd, kSub, kMul, kDiv, kFloorDiv, kFloorMod, kMax, kMin, kPow, kSqDiff, kAtan2, kDivNoNan,
  kMulNoNan, kTruncDiv, kTruncMod, kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual, kLogicalAnd, kLogicalOr,
};
inline bool IsComparison(Bin op) { return op >= Bin::kLess; }

enum class Un {
  kNeg, kAbs, kSign, kExp, kLog, kLog1p, kSqrt, kRsqrt, kSquare, kReciprocal, kTanh,
  kSigmoid, kErf, kFloor, kCeil, kRound, kErfc, kSin, kCos, kTan, kSinh, kCosh, kAsin, kAcos,
  kAtan, kAsinh, kAcosh, kAtanh, kExpm1, kRint, kLgamma, kDigamma,
};

enum class Act { kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign, kGelu };

// ---------------------------------------------------------------------------
// Scalar semantics shared by the per-dtype files
// ---------------------------------------------------------------------------

template <typename C>
constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// x < 0, without a comparison that is always false for unsigned types.
template <typename C>
constexpr bool IsNeg(C x) {
  if constexpr (std::is_signed_v<C>) {
    return x < 0;
  } else {
    return false;
  }
}

// Two's-complement wrapping integer arithmetic (no signed overflow).
template <typename C>
inline C WrapAdd(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename C>
inline C WrapSub(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
}
template <typename C>
inline C WrapMul(C x, C y) {
  using U = std::make_unsigned_t<C>;
  using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, U>;
  return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(x)) *
                                       static_cast<W>(static_cast<U>(y))));
}
// Truncating division and remainder; y != 0. min / -1 wraps to min.
template <typename C>
inline C IntDiv(C x, C y) {
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return WrapSub(C(0), x);
  }
  return static_cast<C>(x / y);
}
template <typename C>
inline C IntMod(C x, C y) {
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return C(0);
  }
  return static_cast<C>(x % y);
}

// Calls run(g, (TO*)nullptr) with g(T, T) -> TO computing binary `op` in C
// (float for the 16-bit floats); TO is bool for comparisons, else T.
template <typename T, typename Run>
void DispatchBinary(Bin op, Run run) {
  using C = sdk::ComputeType<T>;
  auto arith = [&](auto f) {
    run([f](T x, T y) { return static_cast<T>(f(static_cast<C>(x), static_cast<C>(y))); },
        static_cast<T*>(nullptr));
  };
  auto compare = [&](auto f) {
    run([f](T x, T y) -> bool { return f(static_cast<C>(x), static_cast<C>(y)); },
        static_cast<bool*>(nullptr));
  };
  switch (op) {
    case Bin::kLess: return compare([](C x, C y) { return x < y; });
    case Bin::kLessEqual: return compare([](C x, C y) { return x <= y; });
    case Bin::kGreater: return compare([](C x, C y) { return x > y; });
    case Bin::kGreaterEqual: return compare([](C x, C y) { return x >= y; });
    case Bin::kEqual: return compare([](C x, C y) { return x == y; });
    case Bin::kNotEqual: return compare([](C x, C y) { return x != y; });
    case Bin::kLogicalAnd: return compare([](C x, C y) { return x && y; });
    case Bin::kLogicalOr: return compare([](C x, C y) { return x || y; });
    default: break;
  }
  if constexpr (kIsInt<C>) {
    switch (op) {
      case Bin::kAdd: return arith([](C x, C y) { return WrapAdd(x, y); });
      case Bin::kSub: return arith([](C x, C y) { return WrapSub(x, y); });
      case Bin::kMul: return arith([](C x, C y) { return WrapMul(x, y); });
      case Bin::kDiv: case Bin::kTruncDiv: return arith([](C x, C y) { return IntDiv(x, y); });
      case Bin::kTruncMod: return arith([](C x, C y) { return IntMod(x, y); });
      case Bin::kFloorDiv:
        return arith([](C x, C y) {
          C q = IntDiv(x, y);
          return IntMod(x, y) != 0 && (IsNeg(x) != IsNeg(y)) ? WrapSub(q, C(1)) : q;
        });
      case Bin::kFloorMod:
        return arith([](C x, C y) {
          C r = IntMod(x, y);
          return r != 0 && (IsNeg(r) != IsNeg(y)) ? WrapAdd(r, y) : r;
        });
      case Bin::kMax: return arith([](C x, C y) { return std::max(x, y); });
      case Bin::kMin: return arith([](C x, C y) { return std::min(x, y); });
      case Bin::kPow:
        return arith([](C x, C y) {
          C result = 1, base = x;
          for (C e = y; e > 0; e = static_cast<C>(e >> 1)) {
            if (e & 1) result = WrapMul(result, base);
            base = WrapMul(base, base);
          }
          return result;
        });
      case Bin::kSqDiff:
        return arith([](C x, C y) {
          C d = WrapSub(x, y);
          return WrapMul(d, d);
        });
      default: break;
    }
  } else if constexpr (!std::is_same_v<C, bool>) {
    switch (op) {
      case Bin::kAdd: return arith([](C x, C y) { return x + y; });
      case Bin::kSub: return arith([](C x, C y) { return x - y; });
      case Bin::kMul: return arith([](C x, C y) { return x * y; });
      case Bin::kDiv: return arith([](C x, C y) { return x / y; });
      case Bin::kFloorDiv: return arith([](C x, C y) { return std::floor(x / y); });
      case Bin::kFloorMod:
        return arith([](C x, C y) {
          C r = std::fmod(x, y);
          return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
        });
      // NaN in either operand gives NaN.
      case Bin::kMax: return arith([](C x, C y) { return x > y || std::isnan(x) ? x : y; });
      case Bin::kMin: return arith([](C x, C y) { return x < y || std::isnan(x) ? x : y; });
      case Bin::kPow: return arith([](C x, C y) { return std::pow(x, y); });
      case Bin::kSqDiff:
        return arith([](C x, C y) {
          C d = x - y;
          return d * d;
        });
      case Bin::kAtan2: return arith([](C y, C x) { return std::atan2(y, x); });
      case Bin::kDivNoNan: return arith([](C x, C y) { return y == C(0) ? C(0) : x / y; });
      case Bin::kMulNoNan: return arith([](C x, C y) { return y == C(0) ? C(0) : x * y; });
      case Bin::kTruncDiv: return arith([](C x, C y) { return std::trunc(x / y); });
      case Bin::kTruncMod: return arith([](C x, C y) { return std::fmod(x, y); });
      default: break;
    }
  }
  throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, "binary op not available for this dtype");
}

// The binary ops over a plan.
template <typename T>
void RunBinaryImpl(Bin op, const Plan<2>& p, const T* a, const T* b, void* out) {
  DispatchBinary<T>(op, [&](auto g, auto* tag) {
    RunPlan2(p, a, b, static_cast<decltype(tag)>(out), g);
  });
}

// The same for operands of the output's n elements (va, vb) or of one.
template <typename T>
void RunFlatBinaryImpl(Bin op, int64_t n, bool va, bool vb, const T* a, const T* b, void* out) {
  DispatchBinary<T>(op, [&](auto g, auto* tag) {
    RunFlat2(n, va, vb, a, b, static_cast<decltype(tag)>(out), g);
  });
}

// Per-dtype compute, defined in elementwise_<dtype>.cc. Inputs were checked
// (dtypes, shapes, integer divisors non-zero, integer exponents
// non-negative). Comparisons write bool, the rest T.
#define PX_EW_DECLARE(T)                                                      \
  void RunBinary(Bin op, const Plan<2>& plan, const T* a, const T* b, void* out); \
  void RunUnary(Un op, const T* x, T* y, int64_t n)

PX_EW_DECLARE(float);
// Float operands without a plan (see RunFlatBinaryImpl): tiny tensors spend
// more on building a plan than on the math.
void RunFlatBinary(Bin op, int64_t n, bool va, bool vb, const float* a, const float* b, void* out);
PX_EW_DECLARE(sdk::half);
PX_EW_DECLARE(sdk::bfloat16);
PX_EW_DECLARE(double);
PX_EW_DECLARE(int8_t);
PX_EW_DECLARE(int16_t);
PX_EW_DECLARE(int32_t);
PX_EW_DECLARE(int64_t);
PX_EW_DECLARE(uint8_t);
PX_EW_DECLARE(uint16_t);
PX_EW_DECLARE(uint32_t);
PX_EW_DECLARE(uint64_t);
void RunBinary(Bin op, const Plan<2>& plan, const bool* a, const bool* b, void* out);

// Activations, defined in activation_family_<dtype>.cc (the 16-bit floats
// with float). Relu and Relu6 for integers are in activation_family.cc.
// Softmax (or LogSoftmax) works on `rows` rows of `cols` values.
#define PX_ACT_DECLARE(T)                                                              \
  void RunActivation(Act act, float alpha, bool approximate, const T* x, T* y, int64_t n); \
  void RunSoftmax(bool log, const T* x, T* y, int64_t rows, int64_t cols)

PX_ACT_DECLARE(float);
PX_ACT_DECLARE(sdk::half);
PX_ACT_DECLARE(sdk::bfloat16);
PX_ACT_DECLARE(double);

}  // namespace plexus::cpu::ew

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_IMPL_H_
