// Reference kernels: the elementwise family (see reference_kernels.h).
// Binary arithmetic, comparisons and logic with NumPy broadcasting, unary
// math, IsFinite/IsNan/IsInf and Select/SelectV2 (Cast is in cast.cc). Every
// output element is computed from its own coordinates, one at a time.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "broadcast.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"
#include "special_functions.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// ---------------------------------------------------------------------------
// Scalar semantics
// ---------------------------------------------------------------------------

template <typename C>
constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// Two's-complement wrapping arithmetic for integers (no signed overflow).
template <typename C>
C WrapAdd(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename C>
C WrapSub(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
}
template <typename C>
C WrapMul(C x, C y) {
  using U = std::make_unsigned_t<C>;
  // Promote small unsigned types so the product cannot overflow int.
  using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, U>;
  return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(x)) *
                                       static_cast<W>(static_cast<U>(y))));
}
template <typename C>
C WrapNeg(C x) {
  return WrapSub<C>(C(0), x);
}

// Truncating integer division; y != 0 was checked. min / -1 wraps.
template <typename C>
C TruncDiv(C x, C y) {
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return WrapNeg(x);
  }
  return static_cast<C>(x / y);
}
template <typename C>
C TruncMod(C x, C y) {
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return C(0);
  }
  return static_cast<C>(x % y);
}

enum class Bin {
  kAdd, kSub, kMul, kDiv, kRealDiv, kFloorDiv, kFloorMod, kMax, kMin, kPow, kSqDiff, kAtan2,
  kDivNoNan, kMulNoNan, kTruncDiv, kTruncMod, kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual, kLogicalAnd, kLogicalOr,
};

bool IsComparison(Bin op) { return op >= Bin::kLess; }
bool IsDivision(Bin op) {
  return op == Bin::kDiv || op == Bin::kRealDiv || op == Bin::kFloorDiv || op == Bin::kFloorMod ||
         op == Bin::kTruncDiv || op == Bin::kTruncMod;
}

template <typename C>
C Arith(Bin op, C x, C y) {
  if constexpr (kIsInt<C>) {
    switch (op) {
      case Bin::kAdd: return WrapAdd(x, y);
      case Bin::kSub: return WrapSub(x, y);
      case Bin::kMul: return WrapMul(x, y);
      case Bin::kDiv: case Bin::kRealDiv: case Bin::kTruncDiv: return TruncDiv(x, y);
      case Bin::kTruncMod: return TruncMod(x, y);
      case Bin::kFloorDiv: {
        C q = TruncDiv(x, y);
        if (TruncMod(x, y) != 0 && ((x < 0) != (y < 0))) q = WrapSub(q, C(1));
        return q;
      }
      case Bin::kFloorMod: {
        C r = TruncMod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r = WrapAdd(r, y);
        return r;
      }
      case Bin::kMax: return x > y ? x : y;
      case Bin::kMin: return x < y ? x : y;
      case Bin::kPow: {  // y >= 0 was checked: square and multiply
        C result = 1, base = x;
        for (C e = y; e > 0; e = static_cast<C>(e / 2)) {
          if (e % 2) result = WrapMul(result, base);
          base = WrapMul(base, base);
        }
        return result;
      }
      case Bin::kSqDiff: {
        C d = WrapSub(x, y);
        return WrapMul(d, d);
      }
      default: return 0;
    }
  } else {
    switch (op) {
      case Bin::kAdd: return x + y;
      case Bin::kSub: return x - y;
      case Bin::kMul: return x * y;
      case Bin::kDiv: case Bin::kRealDiv: return x / y;
      case Bin::kFloorDiv: return std::floor(x / y);
      case Bin::kFloorMod: {
        C r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return r;
      }
      // NaN in either operand gives NaN.
      case Bin::kMax: return std::isnan(x) || std::isnan(y) ? x + y : (x > y ? x : y);
      case Bin::kMin: return std::isnan(x) || std::isnan(y) ? x + y : (x < y ? x : y);
      case Bin::kPow: return std::pow(x, y);
      case Bin::kSqDiff: return (x - y) * (x - y);
      case Bin::kAtan2: return std::atan2(x, y);  // x is Atan2's y input
      case Bin::kDivNoNan: return y == C(0) ? C(0) : x / y;
      case Bin::kMulNoNan: return y == C(0) ? C(0) : x * y;
      case Bin::kTruncDiv: return std::trunc(x / y);
      case Bin::kTruncMod: return std::fmod(x, y);
      default: return 0;
    }
  }
}

template <typename C>
bool Compare(Bin op, C x, C y) {
  switch (op) {
    case Bin::kLess: return x < y;
    case Bin::kLessEqual: return x <= y;
    case Bin::kGreater: return x > y;
    case Bin::kGreaterEqual: return x >= y;
    case Bin::kEqual: return x == y;
    case Bin::kNotEqual: return x != y;
    case Bin::kLogicalAnd: return x && y;
    case Bin::kLogicalOr: return x || y;
    default: return false;
  }
}

Bin BinFromName(const std::string& op) {
  static const struct { const char* name; Bin op; } kOps[] = {
      {"Add", Bin::kAdd}, {"AddV2", Bin::kAdd}, {"Sub", Bin::kSub}, {"Mul", Bin::kMul},
      {"Div", Bin::kDiv}, {"RealDiv", Bin::kRealDiv}, {"FloorDiv", Bin::kFloorDiv},
      {"FloorMod", Bin::kFloorMod}, {"Maximum", Bin::kMax}, {"Minimum", Bin::kMin},
      {"Pow", Bin::kPow}, {"SquaredDifference", Bin::kSqDiff}, {"Less", Bin::kLess},
      {"LessEqual", Bin::kLessEqual}, {"Greater", Bin::kGreater},
      {"GreaterEqual", Bin::kGreaterEqual}, {"Equal", Bin::kEqual},
      {"NotEqual", Bin::kNotEqual}, {"LogicalAnd", Bin::kLogicalAnd},
      {"LogicalOr", Bin::kLogicalOr}, {"Atan2", Bin::kAtan2},
      {"DivNoNan", Bin::kDivNoNan}, {"MulNoNan", Bin::kMulNoNan},
      {"TruncateDiv", Bin::kTruncDiv}, {"TruncateMod", Bin::kTruncMod},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.op;
  }
  PX_SDK_CHECK(false, "no reference binary kernel for op %s", op.c_str());
  return Bin::kAdd;
}

// ---------------------------------------------------------------------------
// Binary kernel
// ---------------------------------------------------------------------------

class BinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = BinFromName(attrs.op());
    strict_shapes_ = attrs.Bool("incompatible_shape_error", true);
  }

  void Compute(sdk::Call& call) override {
    const Shape a = call.input_shape(0), b = call.input_shape(1);
    PX_DataType dt = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dt, "x is %s but y is %s", sdk::DtypeName(dt),
                 sdk::DtypeName(call.input_dtype(1)));
    Shape out_shape;
    try {
      out_shape = BroadcastShape(a, b);
    } catch (const sdk::KernelError&) {
      if (strict_shapes_ || (op_ != Bin::kEqual && op_ != Bin::kNotEqual)) throw;
      // Equal/NotEqual with incompatible_shape_error = false.
      *call.AllocateOutput<bool>(0, {}) = op_ == Bin::kNotEqual;
      return;
    }
    const int64_t n = sdk::NumElements(out_shape);
    sdk::VisitAll(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      const T* y = call.input<T>(1);
      if constexpr (kIsInt<C>) {
        if (IsDivision(op_)) {
          for (int64_t i = 0; i < sdk::NumElements(b); ++i) {
            PX_SDK_CHECK(y[i] != 0, "Integer division by zero");
          }
        }
        if (op_ == Bin::kPow) {
          for (int64_t i = 0; i < sdk::NumElements(b); ++i) {
            PX_SDK_CHECK(!(y[i] < 0), "Integers to negative integer powers are not allowed");
          }
        }
      }
      if (IsComparison(op_)) {
        bool* z = call.AllocateOutput<bool>(0, out_shape);
        for (int64_t i = 0; i < n; ++i) {
          z[i] = Compare<C>(op_, static_cast<C>(x[SourceIndex(a, out_shape, i)]),
                            static_cast<C>(y[SourceIndex(b, out_shape, i)]));
        }
      } else if constexpr (!std::is_same_v<T, bool>) {
        T* z = call.AllocateOutput<T>(0, out_shape);
        for (int64_t i = 0; i < n; ++i) {
          z[i] = static_cast<T>(Arith<C>(op_, static_cast<C>(x[SourceIndex(a, out_shape, i)]),
                                         static_cast<C>(y[SourceIndex(b, out_shape, i)])));
        }
      } else {
        PX_SDK_CHECK(false, "arithmetic on bool");
      }
    });
  }

 private:
  Bin op_ = Bin::kAdd;
  bool strict_shapes_ = true;
};

// ---------------------------------------------------------------------------
// Unary kernel
// ---------------------------------------------------------------------------

enum class Un {
  kNeg, kAbs, kSign, kExp, kLog, kLog1p, kSqrt, kRsqrt, kSquare, kReciprocal, kTanh,
  kSigmoid, kErf, kFloor, kCeil, kRound, kLogicalNot, kErfc, kSin, kCos, kTan, kSinh, kCosh,
  kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh, kExpm1, kRint, kLgamma, kDigamma,
};

Un UnFromName(const std::string& op) {
  static const struct { const char* name; Un op; } kOps[] = {
      {"Neg", Un::kNeg}, {"Abs", Un::kAbs}, {"Sign", Un::kSign}, {"Exp", Un::kExp},
      {"Log", Un::kLog}, {"Log1p", Un::kLog1p}, {"Sqrt", Un::kSqrt}, {"Rsqrt", Un::kRsqrt},
      {"Square", Un::kSquare}, {"Reciprocal", Un::kReciprocal}, {"Inv", Un::kReciprocal},
      {"Tanh", Un::kTanh}, {"Sigmoid", Un::kSigmoid}, {"Erf", Un::kErf}, {"Floor", Un::kFloor},
      {"Ceil", Un::kCeil}, {"Round", Un::kRound}, {"LogicalNot", Un::kLogicalNot},
      {"Erfc", Un::kErfc}, {"Sin", Un::kSin}, {"Cos", Un::kCos}, {"Tan", Un::kTan},
      {"Sinh", Un::kSinh}, {"Cosh", Un::kCosh}, {"Asin", Un::kAsin}, {"Acos", Un::kAcos},
      {"Atan", Un::kAtan}, {"Asinh", Un::kAsinh}, {"Acosh", Un::kAcosh}, {"Atanh", Un::kAtanh},
      {"Expm1", Un::kExpm1}, {"Rint", Un::kRint}, {"Lgamma", Un::kLgamma},
      {"Digamma", Un::kDigamma},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.op;
  }
  PX_SDK_CHECK(false, "no reference unary kernel for op %s", op.c_str());
  return Un::kNeg;
}

template <typename C>
C UnaryValue(Un op, C x) {
  if constexpr (kIsInt<C>) {
    switch (op) {
      case Un::kNeg: return WrapNeg(x);
      case Un::kAbs: return x < 0 ? WrapNeg(x) : x;
      case Un::kSign: return static_cast<C>((x > 0) - (x < 0));
      case Un::kSquare: return WrapMul(x, x);
      case Un::kReciprocal: return TruncDiv(C(1), x);  // x != 0 was checked
      case Un::kRound: return x;
      default: return 0;
    }
  } else {
    switch (op) {
      case Un::kNeg: return -x;
      case Un::kAbs: return std::fabs(x);
      case Un::kSign: return std::isnan(x) ? x : static_cast<C>((x > 0) - (x < 0));
      case Un::kExp: return std::exp(x);
      case Un::kLog: return std::log(x);
      case Un::kLog1p: return std::log1p(x);
      case Un::kSqrt: return std::sqrt(x);
      case Un::kRsqrt: return C(1) / std::sqrt(x);
      case Un::kSquare: return x * x;
      case Un::kReciprocal: return C(1) / x;
      case Un::kTanh: return std::tanh(x);
      case Un::kSigmoid: return C(1) / (C(1) + std::exp(-x));
      case Un::kErf: return std::erf(x);
      case Un::kErfc: return std::erfc(x);
      case Un::kSin: return std::sin(x);
      case Un::kCos: return std::cos(x);
      case Un::kTan: return std::tan(x);
      case Un::kSinh: return std::sinh(x);
      case Un::kCosh: return std::cosh(x);
      case Un::kAsin: return std::asin(x);
      case Un::kAcos: return std::acos(x);
      case Un::kAtan: return std::atan(x);
      case Un::kAsinh: return std::asinh(x);
      case Un::kAcosh: return std::acosh(x);
      case Un::kAtanh: return std::atanh(x);
      case Un::kExpm1: return std::expm1(x);
      case Un::kFloor: return std::floor(x);
      case Un::kCeil: return std::ceil(x);
      case Un::kRound: case Un::kRint: return std::nearbyint(x);  // ties to even
      case Un::kLgamma: return static_cast<C>(std::lgamma(static_cast<double>(x)));
      case Un::kDigamma: return static_cast<C>(Digamma(static_cast<double>(x)));
      default: return 0;
    }
  }
}

class UnaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { op_ = UnFromName(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      if constexpr (std::is_same_v<T, bool>) {
        for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
      } else {
        if constexpr (kIsInt<C>) {
          if (op_ == Un::kReciprocal) {
            for (int64_t i = 0; i < n; ++i) PX_SDK_CHECK(x[i] != 0, "Integer division by zero");
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          y[i] = static_cast<T>(UnaryValue<C>(op_, static_cast<C>(x[i])));
        }
      }
    });
  }

 private:
  Un op_ = Un::kNeg;
};

// IsFinite, IsNan, IsInf: a bool per element.
class FloatClassKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string op = attrs.op();
    test_ = op == "IsNan" ? kNan : op == "IsInf" ? kInf : kFinite;
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      bool* y = call.AllocateOutput<bool>(0, shape);
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(static_cast<sdk::ComputeType<T>>(x[i]));
        y[i] = test_ == kNan ? std::isnan(v) : test_ == kInf ? std::isinf(v) : std::isfinite(v);
      }
    });
  }

 private:
  enum Test { kFinite, kNan, kInf } test_ = kFinite;
};

// ---------------------------------------------------------------------------
// Select and SelectV2
// ---------------------------------------------------------------------------

class SelectKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { v2_ = std::string(attrs.op()) == "SelectV2"; }

  void Compute(sdk::Call& call) override {
    const Shape c = call.input_shape(0), t = call.input_shape(1), e = call.input_shape(2);
    const bool* cond = call.input<bool>(0);
    sdk::VisitAll(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* tv = call.input<T>(1);
      const T* ev = call.input<T>(2);
      if (v2_) {
        Shape out = BroadcastShape(c, BroadcastShape(t, e));
        T* z = call.AllocateOutput<T>(0, out);
        for (int64_t i = 0; i < sdk::NumElements(out); ++i) {
          z[i] = cond[SourceIndex(c, out, i)] ? tv[SourceIndex(t, out, i)]
                                              : ev[SourceIndex(e, out, i)];
        }
        return;
      }
      PX_SDK_CHECK(t == e, "'then' and 'else' must have the same shape: %s vs. %s",
                   sdk::ShapeString(t).c_str(), sdk::ShapeString(e).c_str());
      const int64_t n = sdk::NumElements(t);
      if (c.empty()) {  // a scalar condition picks a whole tensor
        T* z = call.AllocateOutput<T>(0, t);
        for (int64_t i = 0; i < n; ++i) z[i] = cond[0] ? tv[i] : ev[i];
      } else if (c.size() == 1 && t.size() > 1) {  // one condition per row
        PX_SDK_CHECK(c[0] == t[0],
                     "Number of batches of 'then' must match size of 'cond', but saw: %lld vs. "
                     "%lld",
                     static_cast<long long>(t[0]), static_cast<long long>(c[0]));
        T* z = call.AllocateOutput<T>(0, t);
        const int64_t row = t[0] == 0 ? 0 : n / t[0];
        for (int64_t i = 0; i < n; ++i) z[i] = cond[i / row] ? tv[i] : ev[i];
      } else {
        PX_SDK_CHECK(c == t,
                     "'condition' must be a scalar, a vector matching the first dimension of "
                     "'then', or have the shape of 'then': %s vs. %s",
                     sdk::ShapeString(c).c_str(), sdk::ShapeString(t).c_str());
        T* z = call.AllocateOutput<T>(0, t);
        for (int64_t i = 0; i < n; ++i) z[i] = cond[i] ? tv[i] : ev[i];
      }
    });
  }

 private:
  bool v2_ = false;
};

// ---------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------

const std::vector<PX_DataType> kFloat = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
const std::vector<PX_DataType> kSigned = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16,
                                          PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64};
const std::vector<PX_DataType> kReal = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                        PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                        PX_DT_UINT8};
const std::vector<PX_DataType> kAll = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                       PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                       PX_DT_UINT8, PX_DT_BOOL};

}  // namespace

PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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
      {&sdk::sig::kNotEqual, &kAll},
  };
  static const std::vector<PX_DataType> kSqDiff = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                                   PX_DT_BFLOAT16, PX_DT_INT32, PX_DT_INT64};
  for (const Entry& e : binary) {
    if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, *e.op, {*e.types})) {
      return s;
    }
  }
  if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar,
                                                       sdk::sig::kSquaredDifference, {kSqDiff})) {
    return s;
  }
  static const std::vector<PX_DataType> kTruncDiv = {
      PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,   PX_DT_INT16,
      PX_DT_INT32, PX_DT_INT64,  PX_DT_UINT8, PX_DT_UINT16,   PX_DT_UINT32, PX_DT_UINT64};
  static const std::vector<PX_DataType> kTruncMod = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                                     PX_DT_BFLOAT16, PX_DT_INT32, PX_DT_INT64};
  if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, sdk::sig::kTruncateDiv,
                                                       {kTruncDiv})) {
    return s;
  }
  if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, sdk::sig::kTruncateMod,
                                                       {kTruncMod})) {
    return s;
  }
  for (const sdk::OpSignature* op :
       {&sdk::sig::kAtan2, &sdk::sig::kDivNoNan, &sdk::sig::kMulNoNan}) {
    if (PX_Status* s = sdk::RegisterKernel<BinaryKernel>(info, registrar, *op, {kFloat})) return s;
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
  if (PX_Status* s = sdk::RegisterKernel<UnaryKernel>(info, registrar, sdk::sig::kLogicalNot))
    return s;
  for (const sdk::OpSignature* op : {&sdk::sig::kSelect, &sdk::sig::kSelectV2}) {
    if (PX_Status* s = sdk::RegisterKernel<SelectKernel>(info, registrar, *op, {kAll})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::reference
