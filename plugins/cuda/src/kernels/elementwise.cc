// The CUDA plugin's elementwise kernels: unary math and activations, binary
// arithmetic with NumPy broadcasting. The classes here check dtypes and
// shapes, build the collapsed broadcast plan and call the launch functions
// of unary.cu and binary.cu on the call's CUDA stream.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_stream.h"
#include "kernels/elementwise_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

ew::Dtype ToEwDtype(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return ew::Dtype::kFloat;
    case PX_DT_DOUBLE: return ew::Dtype::kDouble;
    case PX_DT_HALF: return ew::Dtype::kHalf;
    case PX_DT_BFLOAT16: return ew::Dtype::kBFloat16;
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on CUDA does not support dtype %s", op,
                                         sdk::DtypeName(t)));
  }
}

CudaStream& StreamOf(sdk::Call& call) {
  PX_SDK_CHECK(call.stream() != nullptr, "the CUDA kernels need a stream");
  CudaStream& stream = *sdk::HandleCast<CudaStream>(call.stream());
  const cudaError_t error = stream.EnterDevice();
  if (error != cudaSuccess) {
    throw sdk::KernelError(PX_CODE_INTERNAL,
                           sdk::Format("cudaSetDevice(%d) failed: %s", static_cast<int>(stream.ordinal),
                                       cudaGetErrorString(error)));
  }
  return stream;
}

// ---------------------------------------------------------------------------
// Unary
// ---------------------------------------------------------------------------

struct UnaryEntry {
  const char* op;
  ew::Unary code;
};
constexpr UnaryEntry kUnaryOps[] = {
    {"Neg", ew::Unary::kNeg},         {"Abs", ew::Unary::kAbs},     {"Exp", ew::Unary::kExp},
    {"Log", ew::Unary::kLog},         {"Sqrt", ew::Unary::kSqrt},   {"Rsqrt", ew::Unary::kRsqrt},
    {"Square", ew::Unary::kSquare},   {"Relu", ew::Unary::kRelu},   {"Relu6", ew::Unary::kRelu6},
    {"Sigmoid", ew::Unary::kSigmoid}, {"Tanh", ew::Unary::kTanh},
};

class UnaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    for (const UnaryEntry& e : kUnaryOps) {
      if (op_name_ == e.op) {
        op_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no CUDA unary kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const DLTensor& x = call.input(0);
    const PX_DataType dtype = call.input_dtype(0);
    const ew::Dtype ew_dtype = ToEwDtype(dtype, op_name_.c_str());
    PX_SDK_CHECK(call.output_dtype(0) == dtype, "%s: output is %s, input %s", op_name_.c_str(),
                 sdk::DtypeName(call.output_dtype(0)), sdk::DtypeName(dtype));
    PX_SDK_CHECK(px_sdk_is_contiguous(&x), "%s: input 0 is not contiguous", op_name_.c_str());
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    CudaStream& stream = StreamOf(call);
    ew::LaunchUnary(op_, ew_dtype, px_sdk_data(&x), y, n, stream.get());
    CheckLaunch(stream, op_name_.c_str());
  }

 private:
  std::string op_name_;
  ew::Unary op_ = ew::Unary::kNeg;
};

// ---------------------------------------------------------------------------
// Binary
// ---------------------------------------------------------------------------

struct BinaryEntry {
  const char* op;
  ew::Binary code;
};
constexpr BinaryEntry kBinaryOps[] = {
    {"Add", ew::Binary::kAdd},     {"AddV2", ew::Binary::kAdd},   {"Sub", ew::Binary::kSub},
    {"Mul", ew::Binary::kMul},     {"Div", ew::Binary::kDiv},     {"RealDiv", ew::Binary::kDiv},
    {"Maximum", ew::Binary::kMax}, {"Minimum", ew::Binary::kMin},
    {"SquaredDifference", ew::Binary::kSquaredDifference},
};

std::string DimsString(const DLTensor& t) {
  return sdk::ShapeString(Shape(t.shape, t.shape + t.ndim));
}

// Broadcasts a and b (NumPy rules) into out_dims (their rank) and the
// collapsed plan: output dimensions of 1 dropped, neighbours merged where
// each input broadcasts along both or neither. Throws INVALID_ARGUMENT for
// shapes that do not broadcast.
void MakePlan(const DLTensor& a, const DLTensor& b, std::vector<int64_t>* out_dims,
              ew::BroadcastPlan* plan) {
  const int rank = a.ndim > b.ndim ? a.ndim : b.ndim;
  out_dims->assign(static_cast<size_t>(rank), 1);
  int64_t dims[ew::kMaxBroadcastRank];
  unsigned masks[ew::kMaxBroadcastRank];  // bit k: input k repeats along the dim
  int collapsed = 0;
  for (int d = 0; d < rank; ++d) {
    const int da_index = d - (rank - a.ndim), db_index = d - (rank - b.ndim);
    const int64_t da = da_index >= 0 ? a.shape[da_index] : 1;
    const int64_t db = db_index >= 0 ? b.shape[db_index] : 1;
    int64_t o;
    if (da == db || db == 1) {
      o = da;
    } else if (da == 1) {
      o = db;
    } else {
      throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, "Incompatible shapes: " + DimsString(a) +
                                                           " vs. " + DimsString(b));
    }
    (*out_dims)[d] = o;
    if (o == 1) continue;
    const unsigned mask = (da == 1 ? 1u : 0u) | (db == 1 ? 2u : 0u);
    if (collapsed > 0 && masks[collapsed - 1] == mask) {
      dims[collapsed - 1] *= o;
      continue;
    }
    if (collapsed == ew::kMaxBroadcastRank) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("broadcasting %s with %s needs more than %d dimensions after collapsing, "
                      "the most the CUDA kernels handle",
                      DimsString(a).c_str(), DimsString(b).c_str(), ew::kMaxBroadcastRank));
    }
    dims[collapsed] = o;
    masks[collapsed] = mask;
    ++collapsed;
  }
  plan->rank = collapsed;
  plan->num_elements = 1;
  for (int64_t o : *out_dims) plan->num_elements *= o;
  for (int k = 0; k < 2; ++k) {
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
}

class BinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    for (const BinaryEntry& e : kBinaryOps) {
      if (op_name_ == e.op) {
        op_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no CUDA binary kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const DLTensor& a = call.input(0);
    const DLTensor& b = call.input(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "%s: inputs are %s and %s", op_name_.c_str(),
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const ew::Dtype ew_dtype = ToEwDtype(dtype, op_name_.c_str());
    PX_SDK_CHECK(call.output_dtype(0) == dtype, "%s: output is %s, inputs %s", op_name_.c_str(),
                 sdk::DtypeName(call.output_dtype(0)), sdk::DtypeName(dtype));
    PX_SDK_CHECK(px_sdk_is_contiguous(&a) && px_sdk_is_contiguous(&b),
                 "%s: the inputs must be contiguous", op_name_.c_str());
    // The same kernel object may compute on several threads at once: the
    // scratch is per thread (and so allocates nothing in steady state).
    thread_local std::vector<int64_t> out_dims;
    ew::BroadcastPlan plan;
    MakePlan(a, b, &out_dims, &plan);
    void* out = call.AllocateOutputRaw(0, out_dims.data(), out_dims.size());
    if (plan.num_elements == 0) return;
    CudaStream& stream = StreamOf(call);
    ew::LaunchBinary(op_, ew_dtype, px_sdk_data(&a), px_sdk_data(&b), out, plan, stream.get());
    CheckLaunch(stream, op_name_.c_str());
  }

 private:
  std::string op_name_;
  ew::Binary op_ = ew::Binary::kAdd;
};

const std::vector<PX_DataType> kFloatTypes = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                              PX_DT_BFLOAT16};

}  // namespace

PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  for (const UnaryEntry& e : kUnaryOps) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<UnaryKernel>(info, registrar, e.op, {{"T", kFloatTypes}}));
  }
  for (const BinaryEntry& e : kBinaryOps) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<BinaryKernel>(info, registrar, e.op, {{"T", kFloatTypes}}));
  }
  return nullptr;
}

}  // namespace plexus::cuda
