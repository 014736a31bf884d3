// The XPU plugin's elementwise kernel classes: unary math and activations,
// Cast, binary arithmetic, comparisons and logical ops with NumPy
// broadcasting, Select and SelectV2. The classes check dtypes and shapes,
// build the collapsed broadcast plan (plans.h) and launch the kernels of
// kernels/elementwise.cl through xpu_stream.h. Dtypes: float, half and
// bfloat16 everywhere; int32 and int64 where the kernels have them (see the
// registration at the end); bool for the logical ops, Equal, NotEqual,
// Select and Cast.
#include <cstdint>
#include <string>
#include <vector>

#include "abi.h"
#include "kernels/dtype_suffix.h"
#include "kernels/families.h"
#include "kernels/plans.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "xpu_stream.h"

namespace plexus::xpu {
namespace {

using sdk::Shape;

void CheckContiguous(const sdk::Call& call, const char* op) {
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
  }
}

void Launch1D(XpuStream& stream, const std::string& kernel, int64_t n,
              std::initializer_list<KernelArg> args) {
  const size_t global = static_cast<size_t>(n);
  Launch(stream, kernel.c_str(), 1, &global, nullptr, args);
}

// ---------------------------------------------------------------------------
// Unary ops and activations
// ---------------------------------------------------------------------------

struct UnaryEntry {
  const sdk::OpSignature* sig;
  int code;
  bool integer;  // the integer kernels have it too
};
constexpr UnaryEntry kUnaryOps[] = {
    {&sdk::sig::kNeg, PX_UN_NEG, true},
    {&sdk::sig::kAbs, PX_UN_ABS, true},
    {&sdk::sig::kSign, PX_UN_SIGN, true},
    {&sdk::sig::kExp, PX_UN_EXP, false},
    {&sdk::sig::kLog, PX_UN_LOG, false},
    {&sdk::sig::kLog1p, PX_UN_LOG1P, false},
    {&sdk::sig::kSqrt, PX_UN_SQRT, false},
    {&sdk::sig::kRsqrt, PX_UN_RSQRT, false},
    {&sdk::sig::kSquare, PX_UN_SQUARE, true},
    {&sdk::sig::kReciprocal, PX_UN_RECIPROCAL, false},
    {&sdk::sig::kInv, PX_UN_RECIPROCAL, false},
    {&sdk::sig::kTanh, PX_UN_TANH, false},
    {&sdk::sig::kSigmoid, PX_UN_SIGMOID, false},
    {&sdk::sig::kErf, PX_UN_ERF, false},
    {&sdk::sig::kFloor, PX_UN_FLOOR, false},
    {&sdk::sig::kCeil, PX_UN_CEIL, false},
    {&sdk::sig::kRound, PX_UN_ROUND, true},
    {&sdk::sig::kRelu, PX_UN_RELU, true},
    {&sdk::sig::kRelu6, PX_UN_RELU6, true},
    {&sdk::sig::kElu, PX_UN_ELU, false},
    {&sdk::sig::kSelu, PX_UN_SELU, false},
    {&sdk::sig::kLeakyRelu, PX_UN_LEAKY_RELU, false},
    {&sdk::sig::kSoftplus, PX_UN_SOFTPLUS, false},
    {&sdk::sig::kGelu, PX_UN_GELU_TANH, false},
};

class UnaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    alpha_ = attrs.Float("alpha", 0.2f);
    for (const UnaryEntry& e : kUnaryOps) {
      if (op_name_ == e.sig->op) {
        entry_ = &e;
        break;
      }
    }
    PX_SDK_CHECK(entry_ != nullptr, "no XPU unary kernel for op %s", op_name_.c_str());
    code_ = entry_->code;
    if (code_ == PX_UN_GELU_TANH && !attrs.Bool("approximate", true)) code_ = PX_UN_GELU_ERF;
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const DLTensor& x = call.input(0);
    const PX_DataType dtype = call.input_dtype(0);
    const bool ok = IsFloatDtype(dtype) ||
                    ((dtype == PX_DT_INT32 || dtype == PX_DT_INT64) && entry_->integer);
    if (!ok) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on XPU does not support dtype %s",
                                                                op, sdk::DtypeName(dtype)));
    }
    CheckContiguous(call, op);
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    Launch1D(StreamOf(call), "ew_unary_" + RequireSuffix(dtype, op), n,
             {Arg(px_sdk_data(&x)), Arg(static_cast<const void*>(y)), Arg(n), Arg(int32_t{code_}),
              Arg(alpha_)});
  }

 private:
  std::string op_name_;
  const UnaryEntry* entry_ = nullptr;
  int code_ = PX_UN_NEG;
  float alpha_ = 0.2f;
};

class LogicalNotKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_dtype(0) == PX_DT_BOOL, "LogicalNot: input is %s, expected bool",
                 sdk::DtypeName(call.input_dtype(0)));
    CheckContiguous(call, "LogicalNot");
    const DLTensor& x = call.input(0);
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    Launch1D(StreamOf(call), "ew_logical_not", n,
             {Arg(px_sdk_data(&x)), Arg(static_cast<const void*>(y)), Arg(n)});
  }
};

// Cast between float, half, bfloat16, int32, int64 and bool (float to
// integer truncates; anything to bool is value != 0).
class CastKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const PX_DataType from = call.input_dtype(0), to = call.output_dtype(0);
    CheckContiguous(call, "Cast");
    const DLTensor& x = call.input(0);
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    XpuStream& stream = StreamOf(call);
    if (from == to) {
      CopyAsync(stream, y, px_sdk_data(&x), static_cast<size_t>(n) * sdk::DtypeSize(from));
      return;
    }
    Launch1D(stream, "cast_" + RequireSuffix(from, "Cast") + "_" + RequireSuffix(to, "Cast"), n,
             {Arg(px_sdk_data(&x)), Arg(static_cast<const void*>(y)), Arg(n)});
  }
};

// ---------------------------------------------------------------------------
// Binary ops
// ---------------------------------------------------------------------------

enum class Kind { kArith, kCompare, kLogical };
struct BinaryEntry {
  const char* op;
  Kind kind;
  int code;
};
constexpr BinaryEntry kBinaryOps[] = {
    {"Add", Kind::kArith, PX_BIN_ADD},
    {"AddV2", Kind::kArith, PX_BIN_ADD},
    {"Sub", Kind::kArith, PX_BIN_SUB},
    {"Mul", Kind::kArith, PX_BIN_MUL},
    {"Div", Kind::kArith, PX_BIN_DIV},
    {"RealDiv", Kind::kArith, PX_BIN_DIV},
    {"Maximum", Kind::kArith, PX_BIN_MAX},
    {"Minimum", Kind::kArith, PX_BIN_MIN},
    {"Pow", Kind::kArith, PX_BIN_POW},
    {"SquaredDifference", Kind::kArith, PX_BIN_SQUARED_DIFFERENCE},
    {"FloorDiv", Kind::kArith, PX_BIN_FLOOR_DIV},
    {"FloorMod", Kind::kArith, PX_BIN_FLOOR_MOD},
    {"Less", Kind::kCompare, PX_CMP_LESS},
    {"LessEqual", Kind::kCompare, PX_CMP_LESS_EQUAL},
    {"Greater", Kind::kCompare, PX_CMP_GREATER},
    {"GreaterEqual", Kind::kCompare, PX_CMP_GREATER_EQUAL},
    {"Equal", Kind::kCompare, PX_CMP_EQUAL},
    {"NotEqual", Kind::kCompare, PX_CMP_NOT_EQUAL},
    {"LogicalAnd", Kind::kLogical, PX_LOGICAL_AND},
    {"LogicalOr", Kind::kLogical, PX_LOGICAL_OR},
};

class BinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    strict_shapes_ = attrs.Bool("incompatible_shape_error", true);
    for (const BinaryEntry& e : kBinaryOps) {
      if (op_name_ == e.op) {
        entry_ = &e;
        return;
      }
    }
    PX_SDK_CHECK(false, "no XPU binary kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "%s: inputs are %s and %s", op,
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    std::string kernel;
    switch (entry_->kind) {
      case Kind::kArith: kernel = "ew_binary_" + RequireSuffix(dtype, op); break;
      case Kind::kCompare: kernel = "ew_compare_" + RequireSuffix(dtype, op); break;
      case Kind::kLogical: kernel = "ew_logical"; break;
    }
    const bool supported =
        entry_->kind == Kind::kLogical ? dtype == PX_DT_BOOL
        : dtype == PX_DT_BOOL          ? entry_->code == PX_CMP_EQUAL || entry_->code == PX_CMP_NOT_EQUAL
                                       : true;
    if (!supported) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on XPU does not support dtype %s",
                                                                op, sdk::DtypeName(dtype)));
    }
    CheckContiguous(call, op);
    const Shape shapes[2] = {call.input_shape(0), call.input_shape(1)};
    std::vector<int64_t> out_dims;
    px_xpu_broadcast_plan plan;
    if (!MakeBroadcastPlan(shapes, 2, &out_dims, &plan)) {
      if (strict_shapes_ || (entry_->code != PX_CMP_EQUAL && entry_->code != PX_CMP_NOT_EQUAL) ||
          entry_->kind != Kind::kCompare) {
        throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, "Incompatible shapes: " +
                                                             sdk::ShapeString(shapes[0]) + " vs. " +
                                                             sdk::ShapeString(shapes[1]));
      }
      // Equal / NotEqual with incompatible_shape_error = false: a scalar
      // (false for Equal, true for NotEqual).
      void* out = call.AllocateOutputRaw(0, Shape{});
      FillAsync(StreamOf(call), out, entry_->code == PX_CMP_NOT_EQUAL ? 1 : 0, 1);
      return;
    }
    void* out = call.AllocateOutputRaw(0, out_dims.data(), out_dims.size());
    if (plan.num_elements == 0) return;
    Launch1D(StreamOf(call), kernel, plan.num_elements,
             {Arg(call.input_data(0)), Arg(call.input_data(1)), Arg(static_cast<const void*>(out)),
              Arg(plan), Arg(int32_t{entry_->code})});
  }

 private:
  std::string op_name_;
  const BinaryEntry* entry_ = nullptr;
  bool strict_shapes_ = true;
};

// ---------------------------------------------------------------------------
// Select and SelectV2
// ---------------------------------------------------------------------------

class SelectKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { v2_ = std::string(attrs.op()) == "SelectV2"; }

  void Compute(sdk::Call& call) override {
    const char* op = v2_ ? "SelectV2" : "Select";
    PX_SDK_CHECK(call.input_dtype(0) == PX_DT_BOOL, "%s: condition is %s, expected bool", op,
                 sdk::DtypeName(call.input_dtype(0)));
    const PX_DataType dt = call.input_dtype(1);
    PX_SDK_CHECK(call.input_dtype(2) == dt, "'then' is %s but 'else' is %s", sdk::DtypeName(dt),
                 sdk::DtypeName(call.input_dtype(2)));
    const size_t size = sdk::DtypeSize(dt);
    if (size != 1 && size != 2 && size != 4 && size != 8) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on XPU does not support dtype %s",
                                                                op, sdk::DtypeName(dt)));
    }
    CheckContiguous(call, op);
    Shape shapes[3] = {call.input_shape(0), call.input_shape(1), call.input_shape(2)};
    if (!v2_) {
      // Select: the condition is a scalar, a vector along the first
      // dimension of 'then', or has the shape of 'then'; as a broadcast, the
      // vector gets trailing dimensions of 1.
      const Shape& c = shapes[0];
      PX_SDK_CHECK(shapes[1] == shapes[2], "'then' and 'else' must have the same shape: %s vs. %s",
                   sdk::ShapeString(shapes[1]).c_str(), sdk::ShapeString(shapes[2]).c_str());
      const Shape& shape = shapes[1];
      if (c.size() == 1 && shape.size() > 1) {
        PX_SDK_CHECK(c[0] == shape[0],
                     "Number of batches of 'then' must match size of 'cond', but saw: %lld vs. "
                     "%lld",
                     static_cast<long long>(shape[0]), static_cast<long long>(c[0]));
        shapes[0].resize(shape.size(), 1);
      } else if (!c.empty()) {
        PX_SDK_CHECK(c == shape,
                     "'condition' must be a scalar, a vector matching the first dimension of "
                     "'then', or have the shape of 'then': %s vs. %s",
                     sdk::ShapeString(c).c_str(), sdk::ShapeString(shape).c_str());
      }
    }
    std::vector<int64_t> out_dims;
    px_xpu_broadcast_plan plan;
    if (!MakeBroadcastPlan(shapes, 3, &out_dims, &plan)) {
      throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT,
                             "condition, 't' and 'e' must be broadcastable: " +
                                 sdk::ShapeString(shapes[0]) + ", " + sdk::ShapeString(shapes[1]) +
                                 ", " + sdk::ShapeString(shapes[2]));
    }
    void* out = call.AllocateOutputRaw(0, out_dims.data(), out_dims.size());
    if (plan.num_elements == 0) return;
    Launch1D(StreamOf(call), "ew_select_" + std::to_string(size), plan.num_elements,
             {Arg(call.input_data(0)), Arg(call.input_data(1)), Arg(call.input_data(2)),
              Arg(static_cast<const void*>(out)), Arg(plan)});
  }

 private:
  bool v2_ = false;
};

const std::vector<PX_DataType> kFloat = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
const std::vector<PX_DataType> kFloatInt = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_INT32,
                                            PX_DT_INT64};
const std::vector<PX_DataType> kAll = {PX_DT_FLOAT, PX_DT_HALF,  PX_DT_BFLOAT16,
                                       PX_DT_INT32, PX_DT_INT64, PX_DT_BOOL};

}  // namespace

PX_Status* RegisterXpuElementwiseKernels(sdk::RegistrationInfo* info,
                                         PX_KernelRegistrar* registrar) {
  for (const UnaryEntry& e : kUnaryOps) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<UnaryKernel>(info, registrar, *e.sig,
                                                            {e.integer ? kFloatInt : kFloat}));
  }
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<LogicalNotKernel>(info, registrar, sdk::sig::kLogicalNot));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<CastKernel>(info, registrar, sdk::sig::kCast, {kAll, kAll}));
  // Integer division and powers are not here: they need the cpu plugin's
  // zero-divisor and negative-exponent checks (the ops run elsewhere).
  struct Entry {
    const sdk::OpSignature* op;
    const std::vector<PX_DataType>* types;
  };
  const Entry binary[] = {
      {&sdk::sig::kAdd, &kFloatInt},     {&sdk::sig::kAddV2, &kFloatInt},
      {&sdk::sig::kSub, &kFloatInt},     {&sdk::sig::kMul, &kFloatInt},
      {&sdk::sig::kDiv, &kFloat},        {&sdk::sig::kRealDiv, &kFloat},
      {&sdk::sig::kMaximum, &kFloatInt}, {&sdk::sig::kMinimum, &kFloatInt},
      {&sdk::sig::kPow, &kFloat},        {&sdk::sig::kFloorDiv, &kFloat},
      {&sdk::sig::kFloorMod, &kFloat},   {&sdk::sig::kSquaredDifference, &kFloatInt},
      {&sdk::sig::kLess, &kFloatInt},    {&sdk::sig::kLessEqual, &kFloatInt},
      {&sdk::sig::kGreater, &kFloatInt}, {&sdk::sig::kGreaterEqual, &kFloatInt},
      {&sdk::sig::kEqual, &kAll},        {&sdk::sig::kNotEqual, &kAll},
  };
  for (const Entry& e : binary) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BinaryKernel>(info, registrar, *e.op, {*e.types}));
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kLogicalAnd, &sdk::sig::kLogicalOr}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BinaryKernel>(info, registrar, *op));
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kSelect, &sdk::sig::kSelectV2}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SelectKernel>(info, registrar, *op, {kAll}));
  }
  return nullptr;
}

}  // namespace plexus::xpu
