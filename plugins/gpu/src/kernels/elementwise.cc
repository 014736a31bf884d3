// The CUDA plugin's elementwise kernels: unary math and activations, binary
// arithmetic, comparisons and logical ops with NumPy broadcasting, Select
// and SelectV2. The classes here check dtypes and shapes, build the
// collapsed broadcast plan and call the launch functions of the .cu files
// (elementwise_launch.h) on the call's CUDA stream. Dtypes and semantics are
// the cpu plugin's (plugins/cpu/src/kernels/elementwise*.cc,
// activation_family.cc).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/dtype_map.h"
#include "kernels/elementwise_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;


// Refuses integer arguments the cpu plugin refuses (INVALID_ARGUMENT with
// its message): a zero divisor, or a negative exponent when `negative`.
// The values are in device memory: a small kernel raises a flag and one
// synchronous 4-byte read brings it back, so the host waits for the work
// queued before (a stream synchronize per integer division).
void CheckIntegers(GpuStream& stream, ew::Type type, const void* values, int64_t n,
                   bool negative, const char* op) {
  if (n == 0) return;
  px_gpu::Stream s = stream.get();
  unsigned* flag = nullptr;
  PX_GPU_THROW_IF_FAILED(px_gpu::MallocAsync(reinterpret_cast<void**>(&flag), sizeof(unsigned), s),
                          "px_gpu::MallocAsync(4 bytes for the argument check)");
  px_gpu::Error error = px_gpu::MemsetAsync(flag, 0, sizeof(unsigned), s);
  if (error == px_gpu::kSuccess) {
    ew::LaunchFindBadInteger(type, values, n, negative, flag, s);
    error = px_gpu::GetLastError();
  }
  unsigned bad = 0;
  if (error == px_gpu::kSuccess) {
    error = px_gpu::MemcpyAsync(&bad, flag, sizeof(bad), px_gpu::kDeviceToHost, s);
  }
  (void)px_gpu::FreeAsync(flag, s);
  if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(s);
  PX_GPU_THROW_IF_FAILED(error, "the integer argument check");
  if (negative) {
    PX_SDK_CHECK(bad == 0, "Integers to negative integer powers are not allowed");
  } else {
    PX_SDK_CHECK(bad == 0, "Integer division by zero");
  }
}

// Broadcasts N shapes (NumPy rules) into out_dims (their rank) and the
// collapsed plan: output dimensions of 1 dropped, neighbours merged where
// each input broadcasts along both or neither. Returns false for shapes that
// do not broadcast; throws UNIMPLEMENTED when more than kMaxBroadcastRank
// dimensions remain.
template <int N>
bool MakePlan(const Shape* shapes, std::vector<int64_t>* out_dims, ew::PlanN<N>* plan) {
  size_t rank = 0;
  for (int k = 0; k < N; ++k) rank = shapes[k].size() > rank ? shapes[k].size() : rank;
  out_dims->assign(rank, 1);
  int64_t dims[ew::kMaxBroadcastRank];
  unsigned masks[ew::kMaxBroadcastRank];  // bit k: input k repeats along the dim
  int collapsed = 0;
  bool too_many = false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size[N];
    int64_t o = 1;
    for (int k = 0; k < N; ++k) {
      const size_t lead = rank - shapes[k].size();
      size[k] = d >= lead ? shapes[k][d - lead] : 1;
      if (size[k] == 1) continue;
      if (o != 1 && o != size[k]) return false;
      o = size[k];
    }
    (*out_dims)[d] = o;
    if (o == 1) continue;
    unsigned mask = 0;
    for (int k = 0; k < N; ++k) mask |= size[k] == 1 ? 1u << k : 0u;
    if (collapsed > 0 && masks[collapsed - 1] == mask) {
      dims[collapsed - 1] *= o;
      continue;
    }
    if (collapsed == ew::kMaxBroadcastRank) {
      too_many = true;  // reported once the shapes are known to broadcast
      continue;
    }
    dims[collapsed] = o;
    masks[collapsed] = mask;
    ++collapsed;
  }
  if (too_many) {
    std::string list;
    for (int k = 0; k < N; ++k) list += (k > 0 ? ", " : "") + sdk::ShapeString(shapes[k]);
    throw sdk::KernelError(
        PX_CODE_UNIMPLEMENTED,
        sdk::Format("broadcasting %s needs more than %d dimensions after collapsing, the most "
                    "the CUDA kernels handle",
                    list.c_str(), ew::kMaxBroadcastRank));
  }
  plan->rank = collapsed;
  plan->num_elements = 1;
  for (int64_t o : *out_dims) plan->num_elements *= o;
  for (int k = 0; k < N; ++k) {
    int64_t stride = 1;
    for (int d = collapsed - 1; d >= 0; --d) {
      plan->dims[d] = dims[d];
      if (masks[d] & (1u << k)) {
        plan->strides[k][d] = 0;
      } else {
        plan->strides[k][d] = stride;
        stride *= dims[d];
      }
    }
  }
  return true;
}

Shape ShapeOf(const DLTensor& t) { return Shape(t.shape, t.shape + t.ndim); }

// ---------------------------------------------------------------------------
// Unary ops and activations
// ---------------------------------------------------------------------------

struct UnaryEntry {
  const char* op;
  ew::Unary code;
};
constexpr UnaryEntry kUnaryOps[] = {
    {"Neg", ew::Unary::kNeg},
    {"Abs", ew::Unary::kAbs},
    {"Exp", ew::Unary::kExp},
    {"Log", ew::Unary::kLog},
    {"Sqrt", ew::Unary::kSqrt},
    {"Rsqrt", ew::Unary::kRsqrt},
    {"Square", ew::Unary::kSquare},
    {"Relu", ew::Unary::kRelu},
    {"Relu6", ew::Unary::kRelu6},
    {"Sigmoid", ew::Unary::kSigmoid},
    {"Tanh", ew::Unary::kTanh},
    {"Sign", ew::Unary::kSign},
    {"Log1p", ew::Unary::kLog1p},
    {"Reciprocal", ew::Unary::kReciprocal},
    {"Inv", ew::Unary::kReciprocal},
    {"Erf", ew::Unary::kErf},
    {"Floor", ew::Unary::kFloor},
    {"Ceil", ew::Unary::kCeil},
    {"Round", ew::Unary::kRound},
    {"Elu", ew::Unary::kElu},
    {"Selu", ew::Unary::kSelu},
    {"LeakyRelu", ew::Unary::kLeakyRelu},
    {"Softplus", ew::Unary::kSoftplus},
    {"Gelu", ew::Unary::kGelu},
    {"LogicalNot", ew::Unary::kLogicalNot},
};

// Whether the integer kernels (unary_int.cu) have `op`.
bool IntegerUnary(ew::Unary op) {
  switch (op) {
    case ew::Unary::kNeg:
    case ew::Unary::kAbs:
    case ew::Unary::kSign:
    case ew::Unary::kSquare:
    case ew::Unary::kReciprocal:
    case ew::Unary::kRound:
    case ew::Unary::kRelu:
    case ew::Unary::kRelu6: return true;
    default: return false;
  }
}

class UnaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    attrs_.alpha = attrs.Float("alpha", 0.2f);
    attrs_.approximate = attrs.Bool("approximate", true);
    for (const UnaryEntry& e : kUnaryOps) {
      if (op_name_ == e.op) {
        op_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no CUDA unary kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const DLTensor& x = call.input(0);
    const PX_DataType dtype = call.input_dtype(0);
    const ew::Type type = ToEwType(dtype, op);
    const bool ok = op_ == ew::Unary::kLogicalNot ? type == ew::Type::kBool
                    : ew::IsFloatType(type)       ? true
                                                  : type != ew::Type::kBool && IntegerUnary(op_);
    if (!ok) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on CUDA does not support dtype %s",
                                                                op, sdk::DtypeName(dtype)));
    }
    PX_SDK_CHECK(call.output_dtype(0) == dtype, "%s: output is %s, input %s", op,
                 sdk::DtypeName(call.output_dtype(0)), sdk::DtypeName(dtype));
    CheckContiguous(call, op);
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    if (op_ == ew::Unary::kReciprocal && !ew::IsFloatType(type)) {
      CheckIntegers(stream, type, px_sdk_data(&x), n, /*negative=*/false, op);
    }
    ew::LaunchUnary(op_, type, px_sdk_data(&x), y, n, attrs_, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  std::string op_name_;
  ew::Unary op_ = ew::Unary::kNeg;
  ew::UnaryAttrs attrs_;
};

// ---------------------------------------------------------------------------
// Binary ops
// ---------------------------------------------------------------------------

struct BinaryEntry {
  const char* op;
  ew::Binary code;
};
constexpr BinaryEntry kBinaryOps[] = {
    {"Add", ew::Binary::kAdd},
    {"AddV2", ew::Binary::kAdd},
    {"Sub", ew::Binary::kSub},
    {"Mul", ew::Binary::kMul},
    {"Div", ew::Binary::kDiv},
    {"RealDiv", ew::Binary::kDiv},
    {"Maximum", ew::Binary::kMax},
    {"Minimum", ew::Binary::kMin},
    {"SquaredDifference", ew::Binary::kSquaredDifference},
    {"FloorDiv", ew::Binary::kFloorDiv},
    {"FloorMod", ew::Binary::kFloorMod},
    {"Pow", ew::Binary::kPow},
    {"DivNoNan", ew::Binary::kDivNoNan},
    {"MulNoNan", ew::Binary::kMulNoNan},
    {"Less", ew::Binary::kLess},
    {"LessEqual", ew::Binary::kLessEqual},
    {"Greater", ew::Binary::kGreater},
    {"GreaterEqual", ew::Binary::kGreaterEqual},
    {"Equal", ew::Binary::kEqual},
    {"NotEqual", ew::Binary::kNotEqual},
    {"LogicalAnd", ew::Binary::kLogicalAnd},
    {"LogicalOr", ew::Binary::kLogicalOr},
};

// Whether the device code has (op, type): bool only for Equal, NotEqual and
// the logical ops, which take nothing else; DivNoNan and MulNoNan only the
// floating types.
bool BinarySupports(ew::Binary op, ew::Type type) {
  const bool logical = op == ew::Binary::kLogicalAnd || op == ew::Binary::kLogicalOr;
  if (op == ew::Binary::kDivNoNan || op == ew::Binary::kMulNoNan) return ew::IsFloatType(type);
  if (type == ew::Type::kBool) {
    return logical || op == ew::Binary::kEqual || op == ew::Binary::kNotEqual;
  }
  return !logical;
}

class BinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    strict_shapes_ = attrs.Bool("incompatible_shape_error", true);
    for (const BinaryEntry& e : kBinaryOps) {
      if (op_name_ == e.op) {
        op_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no CUDA binary kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const DLTensor& a = call.input(0);
    const DLTensor& b = call.input(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "%s: inputs are %s and %s", op,
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const ew::Type type = ToEwType(dtype, op);
    if (!BinarySupports(op_, type)) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on CUDA does not support dtype %s",
                                                                op, sdk::DtypeName(dtype)));
    }
    const PX_DataType out_dtype = ew::IsComparison(op_) ? PX_DT_BOOL : dtype;
    PX_SDK_CHECK(call.output_dtype(0) == out_dtype, "%s: output is %s, expected %s", op,
                 sdk::DtypeName(call.output_dtype(0)), sdk::DtypeName(out_dtype));
    CheckContiguous(call, op);
    // The same kernel object may compute on several threads at once: the
    // scratch is per thread (and so allocates nothing in steady state).
    thread_local Shape shapes[2];
    thread_local std::vector<int64_t> out_dims;
    shapes[0] = ShapeOf(a);
    shapes[1] = ShapeOf(b);
    ew::BroadcastPlan plan;
    if (!MakePlan<2>(shapes, &out_dims, &plan)) {
      if (strict_shapes_ || (op_ != ew::Binary::kEqual && op_ != ew::Binary::kNotEqual)) {
        throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT,
                               "Incompatible shapes: " + sdk::ShapeString(shapes[0]) + " vs. " +
                                   sdk::ShapeString(shapes[1]));
      }
      // Equal / NotEqual with incompatible_shape_error = false: a scalar
      // (false for Equal, true for NotEqual).
      void* out = call.AllocateOutputRaw(0, Shape{});
      GpuStream& stream = StreamOf(call);
      PX_GPU_THROW_IF_FAILED(
          px_gpu::MemsetAsync(out, op_ == ew::Binary::kNotEqual ? 1 : 0, 1, stream.get()),
          "cudaMemsetAsync");
      CheckLaunch(stream, op);  // waits in synchronous debug mode
      return;
    }
    void* out = call.AllocateOutputRaw(0, out_dims.data(), out_dims.size());
    // Integer divisors and exponents are checked even for an empty output,
    // as on the cpu plugin.
    const bool check_zero = op_ == ew::Binary::kDiv || op_ == ew::Binary::kFloorDiv ||
                            op_ == ew::Binary::kFloorMod;
    const bool check_negative = op_ == ew::Binary::kPow && type != ew::Type::kUInt8;
    const bool integer = !ew::IsFloatType(type) && type != ew::Type::kBool;
    if (plan.num_elements == 0 && !(integer && (check_zero || check_negative))) return;
    GpuStream& stream = StreamOf(call);
    if (integer && (check_zero || check_negative)) {
      CheckIntegers(stream, type, px_sdk_data(&b), px_sdk_num_elements(&b), check_negative, op);
      if (plan.num_elements == 0) return;
    }
    ew::LaunchBinary(op_, type, px_sdk_data(&a), px_sdk_data(&b), out, plan, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  std::string op_name_;
  ew::Binary op_ = ew::Binary::kAdd;
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
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on CUDA does not support dtype %s",
                                                                op, sdk::DtypeName(dt)));
    }
    CheckContiguous(call, op);
    Shape shapes[3] = {call.input_shape(0), call.input_shape(1), call.input_shape(2)};
    if (!v2_) {
      // Select: the condition is a scalar, a vector along the first
      // dimension of 'then', or has the shape of 'then'; as a broadcast, the
      // vector gets trailing dimensions of 1.
      const Shape& c = shapes[0];
      PX_SDK_CHECK(shapes[1] == shapes[2],
                   "'then' and 'else' must have the same shape: %s vs. %s",
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
    thread_local std::vector<int64_t> out_dims;
    ew::SelectPlan plan;
    if (!MakePlan<3>(shapes, &out_dims, &plan)) {
      throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT,
                             "condition, 't' and 'e' must be broadcastable: " +
                                 sdk::ShapeString(shapes[0]) + ", " +
                                 sdk::ShapeString(shapes[1]) + ", " +
                                 sdk::ShapeString(shapes[2]));
    }
    void* out = call.AllocateOutputRaw(0, out_dims.data(), out_dims.size());
    if (plan.num_elements == 0) return;
    GpuStream& stream = StreamOf(call);
    ew::LaunchSelect(static_cast<int>(size), call.input_data(0), call.input_data(1),
                     call.input_data(2), out, plan, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  bool v2_ = false;
};

// The cpu plugin's dtype lists.
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

}  // namespace

PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  struct Entry {
    const sdk::OpSignature* op;
    const std::vector<PX_DataType>* types;
  };
  const Entry unary[] = {
      {&sdk::sig::kNeg, &kSigned},     {&sdk::sig::kAbs, &kSigned},
      {&sdk::sig::kSign, &kSigned},    {&sdk::sig::kExp, &kFloat},
      {&sdk::sig::kLog, &kFloat},      {&sdk::sig::kLog1p, &kFloat},
      {&sdk::sig::kSqrt, &kFloat},     {&sdk::sig::kRsqrt, &kFloat},
      {&sdk::sig::kSquare, &kReal},    {&sdk::sig::kReciprocal, &kSigned},
      {&sdk::sig::kInv, &kSigned},     {&sdk::sig::kTanh, &kFloat},
      {&sdk::sig::kSigmoid, &kFloat},  {&sdk::sig::kErf, &kFloat},
      {&sdk::sig::kFloor, &kFloat},    {&sdk::sig::kCeil, &kFloat},
      {&sdk::sig::kRound, &kSigned},   {&sdk::sig::kRelu, &kReal},
      {&sdk::sig::kRelu6, &kReal},     {&sdk::sig::kElu, &kFloat},
      {&sdk::sig::kSelu, &kFloat},     {&sdk::sig::kLeakyRelu, &kFloat},
      {&sdk::sig::kSoftplus, &kFloat}, {&sdk::sig::kGelu, &kFloat},
  };
  for (const Entry& e : unary) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<UnaryKernel>(info, registrar, *e.op, {*e.types}));
  }
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<UnaryKernel>(info, registrar, sdk::sig::kLogicalNot));
  const Entry binary[] = {
      {&sdk::sig::kAdd, &kReal},          {&sdk::sig::kAddV2, &kReal},
      {&sdk::sig::kSub, &kReal},          {&sdk::sig::kMul, &kReal},
      {&sdk::sig::kDiv, &kReal},          {&sdk::sig::kRealDiv, &kReal},
      {&sdk::sig::kFloorDiv, &kReal},     {&sdk::sig::kFloorMod, &kReal},
      {&sdk::sig::kMaximum, &kReal},      {&sdk::sig::kMinimum, &kReal},
      {&sdk::sig::kPow, &kSigned},        {&sdk::sig::kLess, &kReal},
      {&sdk::sig::kDivNoNan, &kFloat},    {&sdk::sig::kMulNoNan, &kFloat},
      {&sdk::sig::kLessEqual, &kReal},    {&sdk::sig::kGreater, &kReal},
      {&sdk::sig::kGreaterEqual, &kReal}, {&sdk::sig::kEqual, &kAll},
      {&sdk::sig::kNotEqual, &kAll},      {&sdk::sig::kSquaredDifference, &kSqDiff},
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

}  // namespace plexus::cuda
