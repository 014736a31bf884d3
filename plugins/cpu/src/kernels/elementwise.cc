// CPU kernels: the elementwise family, written with sdk::OpKernel. The
// kernels check their inputs, build a broadcast plan and hand the loops to
// the per-dtype files (elementwise_<dtype>.cc); Select, SelectV2 and Cast
// are data movement and live here.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using ew::Bin;
using ew::Plan;
using ew::Un;
using sdk::Shape;

// The dtypes of this family: float, double, half, bfloat16, the integers and
// bool (most ops register fewer: uint16/32/64 only TruncateDiv).
template <typename F>
void VisitTypes(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_UINT16: f(sdk::TypeTag<uint16_t>{}); return;
    case PX_DT_UINT32: f(sdk::TypeTag<uint32_t>{}); return;
    case PX_DT_UINT64: f(sdk::TypeTag<uint64_t>{}); return;
    default: sdk::VisitRealOrBool(t, std::forward<F>(f), "elementwise");
  }
}

[[noreturn]] void IncompatibleShapes(const Shape& a, const Shape& b) {
  throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, "Incompatible shapes: " +
                                                       sdk::ShapeString(a) + " vs. " +
                                                       sdk::ShapeString(b));
}

// ---------------------------------------------------------------------------
// Binary ops
// ---------------------------------------------------------------------------

// Pow(x, k) for one exponent k in {-2, -1, 1, 2, 3, 4} (GELU's x^3, the
// squares of variance and norm layers) as products instead of std::pow,
// about 20 times faster; x*x is exactly pow(x, 2), the others are within
// an ulp or two of it. False (nothing written) for other exponents or
// shapes, where the general kernel runs.
template <typename T>
bool SmallIntegerPower(const Shape (&shapes)[2], const T* x, const T* y, T* out) {
  if (sdk::NumElements(shapes[1]) != 1 || shapes[1].size() > shapes[0].size()) return false;
  const T k = y[0];
  if (k != T(2) && k != T(3) && k != T(4) && k != T(1) && k != T(-1) && k != T(-2)) return false;
  const int64_t n = sdk::NumElements(shapes[0]);
  const int e = static_cast<int>(k);
  switch (e) {
    case 1: for (int64_t i = 0; i < n; ++i) out[i] = x[i]; break;
    case 2: for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i]; break;
    case 3: for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i] * x[i]; break;
    case 4: for (int64_t i = 0; i < n; ++i) { const T s = x[i] * x[i]; out[i] = s * s; } break;
    case -1: for (int64_t i = 0; i < n; ++i) out[i] = T(1) / x[i]; break;
    case -2: for (int64_t i = 0; i < n; ++i) out[i] = T(1) / (x[i] * x[i]); break;
  }
  return true;
}

Bin BinFromName(const std::string& op) {
  static const struct { const char* name; Bin op; } kOps[] = {
      {"Add", Bin::kAdd}, {"AddV2", Bin::kAdd}, {"Sub", Bin::kSub}, {"Mul", Bin::kMul},
      {"Div", Bin::kDiv}, {"RealDiv", Bin::kDiv}, {"FloorDiv", Bin::kFloorDiv},
      {"FloorMod", Bin::kFloorMod}, {"Maximum", Bin::kMax}, {"Minimum", Bin::kMin},
      {"Pow", Bin::kPow}, {"SquaredDifference", Bin::kSqDiff}, {"Less", Bin::kLess},
      {"LessEqual", Bin::kLessEqual}, {"Greater", Bin::kGreater},
      {"GreaterEqual", Bin::kGreaterEqual}, {"Equal", Bin::kEqual},
      {"NotEqual", Bin::kNotEqual}, {"LogicalAnd", Bin::kLogicalAnd},
      {"LogicalOr", Bin::kLogicalOr}, {"Atan2", Bin::kAtan2}, {"DivNoNan", Bin::kDivNoNan},
      {"MulNoNan", Bin::kMulNoNan}, {"TruncateDiv", Bin::kTruncDiv},
      {"TruncateMod", Bin::kTruncMod},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.op;
  }
  PX_SDK_CHECK(false, "no cpu binary kernel for op %s", op.c_str());
  return Bin::kAdd;
}

// The plan MakePlan would make, without its general broadcasting work,
// for the common cases: equal shapes, or a rank-0 operand (one flat loop).
bool FlatPlan(const Shape* shapes, Plan<2>* plan) {
  const bool same = shapes[0] == shapes[1];
  const int full = same || shapes[1].empty() ? 0 : shapes[0].empty() ? 1 : -1;
  if (full < 0) return false;
  plan->out_shape = shapes[full];
  plan->num_elements = sdk::NumElements(plan->out_shape);
  if (plan->out_shape.empty() || plan->num_elements == 1) {
    if (!plan->out_shape.empty() && !same) return false;  // leave [1]-shaped mixes to MakePlan
    plan->dims.clear();
    for (auto& s : plan->strides) s.clear();
    return true;
  }
  plan->dims.assign(1, plan->num_elements);
  for (int k = 0; k < 2; ++k) plan->strides[k].assign(1, shapes[k].empty() ? 0 : 1);
  return true;
}

class BinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = BinFromName(attrs.op());
    strict_shapes_ = attrs.Bool("incompatible_shape_error", true);
  }

  void Compute(sdk::Call& call) override {
    if (FlatFloat(call)) return;
    // Per-thread scratch: steady-state calls reuse its capacity.
    thread_local Shape shapes[2];
    thread_local Plan<2> plan;
    for (int k = 0; k < 2; ++k) shapes[k].assign(call.input(k).shape, call.input(k).shape + call.input(k).ndim);
    if (!FlatPlan(shapes, &plan) && !ew::MakePlan<2>(shapes, &plan)) {
      if (strict_shapes_ || (op_ != Bin::kEqual && op_ != Bin::kNotEqual)) {
        IncompatibleShapes(shapes[0], shapes[1]);
      }
      // Equal/NotEqual with incompatible_shape_error = false: a scalar.
      *call.AllocateOutput<bool>(0, Shape{}) = op_ == Bin::kNotEqual;
      return;
    }
    VisitTypes(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* y = call.input<T>(1);
      if constexpr (ew::kIsInt<T>) {
        const int64_t ny = sdk::NumElements(shapes[1]);
        if (op_ == Bin::kDiv || op_ == Bin::kFloorDiv || op_ == Bin::kFloorMod ||
            op_ == Bin::kTruncDiv || op_ == Bin::kTruncMod) {
          bool zero = false;
          for (int64_t i = 0; i < ny; ++i) zero |= y[i] == 0;
          PX_SDK_CHECK(!zero, "Integer division by zero");
        } else if (op_ == Bin::kPow) {
          bool negative = false;
          for (int64_t i = 0; i < ny; ++i) negative |= ew::IsNeg(y[i]);
          PX_SDK_CHECK(!negative, "Integers to negative integer powers are not allowed");
        }
      }
      void* out = ew::IsComparison(op_)
                      ? static_cast<void*>(call.AllocateOutput<bool>(0, plan.out_shape))
                      : static_cast<void*>(call.AllocateOutput<T>(0, plan.out_shape));
      if constexpr (std::is_floating_point_v<T>) {
        if (op_ == Bin::kPow && SmallIntegerPower(shapes, x, y, static_cast<T*>(out))) return;
      }
      ew::RunBinary(op_, plan, x, y, out);
    });
  }

 private:
  // Float operands of one shape, or one of them a scalar (rank 0): one loop,
  // with no plan built (for small tensors, building one costs more than the
  // math). False, with nothing done, for every other case.
  bool FlatFloat(sdk::Call& call) const {
    const DLTensor& a = call.input(0);
    const DLTensor& b = call.input(1);
    if (op_ == Bin::kPow || sdk::DtypeOf(a) != PX_DT_FLOAT || sdk::DtypeOf(b) != PX_DT_FLOAT ||
        !px_sdk_is_contiguous(&a) || !px_sdk_is_contiguous(&b)) {
      return false;
    }
    const bool same = a.ndim == b.ndim && std::equal(a.shape, a.shape + a.ndim, b.shape);
    const int full = same || b.ndim == 0 ? 0 : a.ndim == 0 ? 1 : -1;
    if (full < 0) return false;
    const DLTensor& shape = full == 0 ? a : b;
    int64_t n = 1;
    for (int d = 0; d < shape.ndim; ++d) n *= shape.shape[d];
    void* out = ew::IsComparison(op_) ? static_cast<void*>(call.AllocateOutputLike<bool>(0, full))
                                      : static_cast<void*>(call.AllocateOutputLike<float>(0, full));
    ew::RunFlatBinary(op_, n, same || full == 0, same || full == 1, static_cast<const float*>(px_sdk_data(&a)),
                      static_cast<const float*>(px_sdk_data(&b)), out);
    return true;
  }

  Bin op_ = Bin::kAdd;
  bool strict_shapes_ = true;
};

// ---------------------------------------------------------------------------
// Unary ops
// ---------------------------------------------------------------------------

Un UnFromName(const std::string& op) {
  static const struct { const char* name; Un op; } kOps[] = {
      {"Neg", Un::kNeg}, {"Abs", Un::kAbs}, {"Sign", Un::kSign}, {"Exp", Un::kExp},
      {"Log", Un::kLog}, {"Log1p", Un::kLog1p}, {"Sqrt", Un::kSqrt}, {"Rsqrt", Un::kRsqrt},
      {"Square", Un::kSquare}, {"Reciprocal", Un::kReciprocal}, {"Inv", Un::kReciprocal},
      {"Tanh", Un::kTanh}, {"Sigmoid", Un::kSigmoid}, {"Erf", Un::kErf}, {"Floor", Un::kFloor},
      {"Erfc", Un::kErfc}, {"Sin", Un::kSin}, {"Cos", Un::kCos}, {"Tan", Un::kTan},
      {"Sinh", Un::kSinh}, {"Cosh", Un::kCosh}, {"Asin", Un::kAsin}, {"Acos", Un::kAcos},
      {"Atan", Un::kAtan}, {"Asinh", Un::kAsinh}, {"Acosh", Un::kAcosh}, {"Atanh", Un::kAtanh},
      {"Expm1", Un::kExpm1}, {"Ceil", Un::kCeil}, {"Round", Un::kRound}, {"Rint", Un::kRint},
      {"Lgamma", Un::kLgamma}, {"Digamma", Un::kDigamma},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.op;
  }
  PX_SDK_CHECK(false, "no cpu unary kernel for op %s", op.c_str());
  return Un::kNeg;
}

class UnaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { op_ = UnFromName(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const int64_t n = call.input_size(0);
    VisitTypes(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        sdk::UnsupportedType(PX_DT_BOOL, "unary");
      } else {
        const T* x = call.input<T>(0);
        if constexpr (ew::kIsInt<T>) {
          if (op_ == Un::kReciprocal) {
            bool zero = false;
            for (int64_t i = 0; i < n; ++i) zero |= x[i] == 0;
            PX_SDK_CHECK(!zero, "Integer division by zero");
          }
        }
        ew::RunUnary(op_, x, call.AllocateOutputLike<T>(0, 0), n);
      }
    });
  }

 private:
  Un op_ = Un::kNeg;
};

// IsFinite, IsNan, IsInf: a bool per element, classified in float (the
// 16-bit floats keep their infinities and NaNs there) or double.
class FloatClassKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string op = attrs.op();
    test_ = op == "IsNan" ? kNan : op == "IsInf" ? kInf : kFinite;
  }

  void Compute(sdk::Call& call) override {
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      bool* y = call.AllocateOutputLike<bool>(0, 0);
      switch (test_) {
        case kFinite:
          for (int64_t i = 0; i < n; ++i) y[i] = std::isfinite(static_cast<C>(x[i]));
          return;
        case kNan:
          for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(static_cast<C>(x[i]));
          return;
        case kInf:
          for (int64_t i = 0; i < n; ++i) y[i] = std::isinf(static_cast<C>(x[i]));
          return;
      }
    });
  }

 private:
  enum Test { kFinite, kNan, kInf } test_ = kFinite;
};

class LogicalNotKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    const bool* x = call.input<bool>(0);
    bool* y = call.AllocateOutput<bool>(0, shape);
    for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
  }
};

// ---------------------------------------------------------------------------
// Select and SelectV2
// ---------------------------------------------------------------------------

class SelectKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { v2_ = std::string(attrs.op()) == "SelectV2"; }

  void Compute(sdk::Call& call) override {
    const Shape shapes[3] = {call.input_shape(0), call.input_shape(1), call.input_shape(2)};
    const bool* cond = call.input<bool>(0);
    const PX_DataType dt = call.input_dtype(1);
    PX_SDK_CHECK(call.input_dtype(2) == dt, "'then' is %s but 'else' is %s", sdk::DtypeName(dt),
                 sdk::DtypeName(call.input_dtype(2)));
    const size_t size = sdk::DtypeSize(dt);
    const char* t = static_cast<const char*>(call.input_data(1));
    const char* e = static_cast<const char*>(call.input_data(2));
    // Selection only moves elements: dispatch on the element size.
    auto by_size = [&](auto run) {
      switch (size) {
        case 1: return run(uint8_t{});
        case 2: return run(uint16_t{});
        case 4: return run(uint32_t{});
        case 8: return run(uint64_t{});
        default: sdk::UnsupportedType(dt, "Select");
      }
    };
    if (v2_) {
      Plan<3> plan;
      if (!ew::MakePlan<3>(shapes, &plan)) {
        throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT,
                               "condition, 't' and 'e' must be broadcastable: " +
                                   sdk::ShapeString(shapes[0]) + ", " +
                                   sdk::ShapeString(shapes[1]) + ", " +
                                   sdk::ShapeString(shapes[2]));
      }
      char* out = static_cast<char*>(call.AllocateOutputRaw(0, plan.out_shape));
      by_size([&](auto word) {
        using W = decltype(word);
        SelectBroadcast(plan, cond, reinterpret_cast<const W*>(t),
                        reinterpret_cast<const W*>(e), reinterpret_cast<W*>(out));
      });
      return;
    }
    const Shape& c = shapes[0];
    PX_SDK_CHECK(shapes[1] == shapes[2], "'then' and 'else' must have the same shape: %s vs. %s",
                 sdk::ShapeString(shapes[1]).c_str(), sdk::ShapeString(shapes[2]).c_str());
    const Shape& shape = shapes[1];
    const int64_t n = sdk::NumElements(shape);
    if (c.empty()) {
      char* out = static_cast<char*>(call.AllocateOutputRaw(0, shape));
      if (n > 0) std::memcpy(out, cond[0] ? t : e, n * size);
    } else if (c.size() == 1 && shape.size() > 1) {
      PX_SDK_CHECK(c[0] == shape[0],
                   "Number of batches of 'then' must match size of 'cond', but saw: %lld vs. "
                   "%lld",
                   static_cast<long long>(shape[0]), static_cast<long long>(c[0]));
      char* out = static_cast<char*>(call.AllocateOutputRaw(0, shape));
      const size_t row = shape[0] == 0 ? 0 : n / shape[0] * size;
      for (int64_t r = 0; r < shape[0]; ++r) {
        if (row > 0) std::memcpy(out + r * row, (cond[r] ? t : e) + r * row, row);
      }
    } else {
      PX_SDK_CHECK(c == shape,
                   "'condition' must be a scalar, a vector matching the first dimension of "
                   "'then', or have the shape of 'then': %s vs. %s",
                   sdk::ShapeString(c).c_str(), sdk::ShapeString(shape).c_str());
      char* out = static_cast<char*>(call.AllocateOutputRaw(0, shape));
      by_size([&](auto word) {
        using W = decltype(word);
        const W* tw = reinterpret_cast<const W*>(t);
        const W* ev = reinterpret_cast<const W*>(e);
        W* ow = reinterpret_cast<W*>(out);
        for (int64_t i = 0; i < n; ++i) ow[i] = cond[i] ? tw[i] : ev[i];
      });
    }
  }

 private:
  template <typename W>
  static void SelectBroadcast(const Plan<3>& p, const bool* c, const W* t, const W* e, W* out) {
    if (p.num_elements == 0) return;
    const int rank = static_cast<int>(p.dims.size());
    if (rank == 0) {
      out[0] = c[0] ? t[0] : e[0];
      return;
    }
    const int64_t inner = p.dims[rank - 1];
    const int64_t sc = p.strides[0][rank - 1], st = p.strides[1][rank - 1],
                  se = p.strides[2][rank - 1];
    std::vector<int64_t> index(rank, 0);
    int64_t oc = 0, ot = 0, oe = 0;
    for (int64_t done = 0; done < p.num_elements; done += inner) {
      if (sc && st && se) {
        for (int64_t i = 0; i < inner; ++i) out[i] = c[oc + i] ? t[ot + i] : e[oe + i];
      } else {
        for (int64_t i = 0; i < inner; ++i) {
          out[i] = c[oc + i * sc] ? t[ot + i * st] : e[oe + i * se];
        }
      }
      out += inner;
      for (int d = rank - 2; d >= 0; --d) {
        oc += p.strides[0][d];
        ot += p.strides[1][d];
        oe += p.strides[2][d];
        if (++index[d] < p.dims[d]) break;
        oc -= p.strides[0][d] * p.dims[d];
        ot -= p.strides[1][d] * p.dims[d];
        oe -= p.strides[2][d] * p.dims[d];
        index[d] = 0;
      }
    }
  }

  bool v2_ = false;
};

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------

template <typename T>
constexpr bool kIsFloating = std::is_floating_point_v<T> || std::is_same_v<T, sdk::half> ||
                             std::is_same_v<T, sdk::bfloat16>;

template <typename T>
constexpr int MantissaBits() {
  if constexpr (std::is_same_v<T, double>) return 52;
  if constexpr (std::is_same_v<T, float>) return 23;
  if constexpr (std::is_same_v<T, sdk::half>) return 10;
  return 7;  // bfloat16
}

// Float to integer: NaN gives 0, out-of-range values saturate.
template <typename D, typename S>
inline D FloatToInt(S v) {
  if (std::isnan(v)) return D(0);
  if (v <= static_cast<S>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
  if (v >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(v);
}

template <typename D, typename S>
void CastLoop(const S* x, D* y, int64_t n, bool truncate) {
  using SC = sdk::ComputeType<S>;
  using DC = sdk::ComputeType<D>;
  if constexpr (std::is_same_v<D, bool>) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<SC>(x[i]) != SC(0);
  } else if constexpr (kIsFloating<S> && !kIsFloating<D>) {
    for (int64_t i = 0; i < n; ++i) y[i] = FloatToInt<D>(static_cast<SC>(x[i]));
  } else if constexpr (kIsFloating<S> && kIsFloating<D> &&
                       (MantissaBits<S>() > MantissaBits<D>())) {
    if (!truncate) {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<D>(static_cast<DC>(static_cast<SC>(x[i])));
      return;
    }
    // Truncate: drop the mantissa bits the destination cannot hold (through
    // float for a double source) so the conversion truncates.
    for (int64_t i = 0; i < n; ++i) {
      float f;
      if constexpr (std::is_same_v<S, double>) {
        double v = x[i];
        if (!std::isnan(v)) {
          uint64_t u;
          std::memcpy(&u, &v, sizeof(u));
          u &= ~((uint64_t{1} << 29) - 1);
          std::memcpy(&v, &u, sizeof(u));
        }
        f = static_cast<float>(v);
      } else {
        f = static_cast<float>(x[i]);
      }
      if (!std::isnan(f)) {
        uint32_t u;
        std::memcpy(&u, &f, sizeof(u));
        u &= ~((uint32_t{1} << (23 - std::min(23, MantissaBits<D>()))) - 1);
        std::memcpy(&f, &u, sizeof(u));
      }
      y[i] = static_cast<D>(f);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<D>(static_cast<DC>(static_cast<SC>(x[i])));
  }
}

class CastKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { truncate_ = attrs.Bool("Truncate", false); }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    const PX_DataType src = call.input_dtype(0), dst = call.output_dtype(0);
    if (src == dst) {
      void* out = call.AllocateOutputRaw(0, shape);
      if (n > 0) std::memcpy(out, call.input_data(0), n * sdk::DtypeSize(src));
      return;
    }
    sdk::VisitAll(src, [&](auto stag) {
      using S = typename decltype(stag)::type;
      const S* x = call.input<S>(0);
      sdk::VisitAll(dst, [&](auto dtag) {
        using D = typename decltype(dtag)::type;
        CastLoop<D, S>(x, call.AllocateOutput<D>(0, shape), n, truncate_);
      });
    });
  }

 private:
  bool truncate_ = false;
};

const std::vector<PX_DataType> kFloat = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
const std::vector<PX_DataType> kSigned = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16,
                                          PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64};
const std::vector<PX_DataType> kReal = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                        PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                        PX_DT_UINT8};
const std::vector<PX_DataType> kAll = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                       PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                       PX_DT_UINT8, PX_DT_BOOL};
const std::vector<PX_DataType> kSqDiff = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                          PX_DT_BFLOAT16, PX_DT_INT32, PX_DT_INT64};
const std::vector<PX_DataType> kTruncDiv = {
    PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,   PX_DT_INT16,
    PX_DT_INT32, PX_DT_INT64,  PX_DT_UINT8, PX_DT_UINT16,   PX_DT_UINT32, PX_DT_UINT64};
const std::vector<PX_DataType> kTruncMod = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                            PX_DT_BFLOAT16, PX_DT_INT32, PX_DT_INT64};

}  // namespace

PX_Status* RegisterElementwiseFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  struct Entry {
    const sdk::OpSignature* op;
    const std::vector<PX_DataType>* types;
  };
  const Entry binary[] = {
      {&sdk::sig::kAdd, &kReal},          {&sdk::sig::kAddV2, &kReal},
      {&sdk::sig::kSub, &kReal},          {&sdk::sig::kMul, &kReal},
      {&sdk::sig::kDiv, &kReal},          {&sdk::sig::kRealDiv, &kReal},
      {&sdk::sig::kFloorDiv, &kReal},     {&sdk::sig::kFloorMod, &kReal},
      {&sdk::sig::kMaximum, &kReal},      {&sdk::sig::kMinimum, &kReal},
      {&sdk::sig::kPow, &kSigned},        {&sdk::sig::kLess, &kReal},
      {&sdk::sig::kLessEqual, &kReal},    {&sdk::sig::kGreater, &kReal},
      {&sdk::sig::kGreaterEqual, &kReal}, {&sdk::sig::kEqual, &kAll},
      {&sdk::sig::kNotEqual, &kAll},      {&sdk::sig::kSquaredDifference, &kSqDiff},
      {&sdk::sig::kAtan2, &kFloat},       {&sdk::sig::kDivNoNan, &kFloat},
      {&sdk::sig::kMulNoNan, &kFloat},    {&sdk::sig::kTruncateDiv, &kTruncDiv},
      {&sdk::sig::kTruncateMod, &kTruncMod},
  };
  for (const Entry& e : binary) {
    if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, *e.op, {*e.types})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kLogicalAnd, &sdk::sig::kLogicalOr}) {
    if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, *op)) return s;
  }
  const Entry unary[] = {
      {&sdk::sig::kNeg, &kSigned},    {&sdk::sig::kAbs, &kSigned},
      {&sdk::sig::kSign, &kSigned},   {&sdk::sig::kExp, &kFloat},
      {&sdk::sig::kLog, &kFloat},     {&sdk::sig::kLog1p, &kFloat},
      {&sdk::sig::kSqrt, &kFloat},    {&sdk::sig::kRsqrt, &kFloat},
      {&sdk::sig::kSquare, &kReal},   {&sdk::sig::kReciprocal, &kSigned},
      {&sdk::sig::kInv, &kSigned},    {&sdk::sig::kTanh, &kFloat},
      {&sdk::sig::kSigmoid, &kFloat}, {&sdk::sig::kErf, &kFloat},
      {&sdk::sig::kErfc, &kFloat},    {&sdk::sig::kSin, &kFloat},     {&sdk::sig::kCos, &kFloat},
      {&sdk::sig::kTan, &kFloat},     {&sdk::sig::kSinh, &kFloat},    {&sdk::sig::kCosh, &kFloat},
      {&sdk::sig::kAsin, &kFloat},    {&sdk::sig::kAcos, &kFloat},    {&sdk::sig::kAtan, &kFloat},
      {&sdk::sig::kAsinh, &kFloat},   {&sdk::sig::kAcosh, &kFloat},   {&sdk::sig::kAtanh, &kFloat},
      {&sdk::sig::kExpm1, &kFloat},   {&sdk::sig::kFloor, &kFloat},   {&sdk::sig::kCeil, &kFloat},
      {&sdk::sig::kRound, &kSigned},  {&sdk::sig::kRint, &kFloat},    {&sdk::sig::kLgamma, &kFloat},
      {&sdk::sig::kDigamma, &kFloat},
  };
  for (const Entry& e : unary) {
    if (PX_Status* s = sdk::RegisterKernel<UnaryKernel>(info, registrar, *e.op, {*e.types})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kIsFinite, &sdk::sig::kIsNan, &sdk::sig::kIsInf}) {
    if (PX_Status* s = sdk::RegisterKernel<FloatClassKernel>(info, registrar, *op, {kFloat})) {
      return s;
    }
  }
  if (PX_Status* s =
          sdk::RegisterKernel<LogicalNotKernel>(info, registrar, sdk::sig::kLogicalNot)) {
    return s;
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kSelect, &sdk::sig::kSelectV2}) {
    if (PX_Status* s = sdk::RegisterKernel<SelectKernel>(info, registrar, *op, {kAll})) {
      return s;
    }
  }
  return sdk::RegisterKernel<CastKernel>(info, registrar, sdk::sig::kCast,
                                         {sdk::AllTypes(), sdk::AllTypes()});
}

}  // namespace plexus::cpu
