// Plexus's own matrix products on the GPU (gemm.cu; no vendor BLAS):
// MatMul, BatchMatMul, BatchMatMulV2/V3 (batch dimensions broadcast) and
// _FusedMatMul (BiasAdd and an optional activation), for float, double, half
// and bfloat16, with the ops, attributes and shape rules of matmul.cc.
//
// Every product is one launch of the strided, batched GEMM: transposes are
// strides, a broadcast batch dimension has stride 0 (any broadcasting
// pattern: neighbouring batch dimensions that broadcast alike are merged, at
// most gemm::kMaxBatchRank remain), and _FusedMatMul's bias and activation
// run in the GEMM's epilogue, before the one rounding to the output type.
// k == 0 gives zeros (plus bias and activation when fused) from the same
// kernel. BatchMatMulV3 with mixed types converts the inputs of another type
// than Tout first (array.cu's Cast, into stream-ordered scratch memory).
//
// Host code shared by the CUDA and ROCm plugins: only the px_gpu names of
// gpu_runtime.h, never cuda* or hip*.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/array_launch.h"
#include "kernels/dtype_map.h"
#include "kernels/elementwise_launch.h"
#include "kernels/gemm_launch.h"
#include "kernels/native_kernels.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

// Queues the product and checks the launch.
void RunGemm(GpuStream& stream, PX_DataType dtype, const void* a, const void* b, void* c,
             const gemm::GemmPlan& plan, const gemm::Epilogue& epilogue, const char* op) {
  gemm::LaunchGemm(ToDtype(dtype, op), a, b, c, plan, epilogue, stream.get());
  CheckLaunch(stream, op);
}

// The strides of op(A) [m, k] stored row-major as [m, k], or as [k, m] when
// transposed; likewise op(B) [k, n].
void SetMatrixStrides(gemm::GemmPlan& p, bool ta, bool tb) {
  p.a_sm = ta ? 1 : p.k;
  p.a_sk = ta ? p.m : 1;
  p.b_sk = tb ? 1 : p.n;
  p.b_sn = tb ? p.k : 1;
  p.c_sm = p.n;
  p.c_sb = p.m * p.n;
}

// ---------------------------------------------------------------------------
// MatMul and _FusedMatMul
// ---------------------------------------------------------------------------

class PlexusMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    fused_ = op_ == "_FusedMatMul";
    if (fused_) {
      const sdk::FusedSpec spec = sdk::ReadFusedSpec(attrs, "_FusedMatMul", false);
      act_ = static_cast<gemm::Activation>(static_cast<int>(spec.activation));
      alpha_ = spec.leakyrelu_alpha;
    }
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape as = call.input_shape(0), bs = call.input_shape(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype && call.output_dtype(0) == dtype,
                 "%s: inputs %s and %s, output %s", op, sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(call.output_dtype(0)));
    (void)ToDtype(dtype, op);
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2, "%s needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 op, sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    const int64_t m = ta_ ? as[1] : as[0], k = ta_ ? as[0] : as[1];
    const int64_t kb = tb_ ? bs[1] : bs[0], n = tb_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    gemm::Epilogue epilogue;
    if (fused_) {
      PX_SDK_CHECK(call.num_inputs() == 3, "_FusedMatMul with BiasAdd needs one bias input");
      const Shape bias_shape = call.input_shape(2);
      PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == n,
                   "_FusedMatMul bias %s must be 1-D with the product's %lld columns",
                   sdk::ShapeString(bias_shape).c_str(), static_cast<long long>(n));
      PX_SDK_CHECK(call.input_dtype(2) == dtype, "_FusedMatMul bias is %s, expected %s",
                   sdk::DtypeName(call.input_dtype(2)), sdk::DtypeName(dtype));
      epilogue.bias = true;
      epilogue.args[0] = call.input_data(2);
      epilogue.act = act_;
      epilogue.alpha = alpha_;
    }
    CheckContiguous(call, op);
    void* c = call.AllocateOutputRaw(0, Shape{m, n});
    if (m == 0 || n == 0) return;
    GpuStream& stream = StreamOf(call);
    gemm::GemmPlan plan;
    plan.m = m;
    plan.n = n;
    plan.k = k;
    SetMatrixStrides(plan, ta_, tb_);
    RunGemm(stream, dtype, call.input_data(0), call.input_data(1), c, plan, epilogue, op);
  }

 private:
  std::string op_;
  bool fused_ = false;
  bool ta_ = false, tb_ = false;
  gemm::Activation act_ = gemm::Activation::kNone;
  float alpha_ = 0.2f;
};

// ---------------------------------------------------------------------------
// BatchMatMul, V2, V3
// ---------------------------------------------------------------------------

// Converted copies of inputs, in memory from the stream-ordered allocator,
// given back on the stream when the product has been queued.
class ScratchCasts {
 public:
  explicit ScratchCasts(GpuStream& stream) : stream_(stream) {}

  const void* Cast(const void* x, PX_DataType from, PX_DataType to, int64_t n, const char* op) {
    buffers_.push_back(std::make_unique<StreamBuffer>(
        stream_, static_cast<size_t>(n) * sdk::DtypeSize(to), "MallocAsync(converted input)"));
    void* y = buffers_.back()->get();
    if (n > 0) {
      arr::LaunchCast(ToCastType(from, op), ToCastType(to, op), false, x, y, n, stream_.get());
      CheckLaunch(stream_, op);
    }
    return y;
  }

 private:
  GpuStream& stream_;
  std::vector<std::unique_ptr<StreamBuffer>> buffers_;
};

class PlexusBatchMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    broadcast_ = op_ != "BatchMatMul";
    adj_x_ = attrs.Bool("adj_x", false);
    adj_y_ = attrs.Bool("adj_y", false);
    if (op_ == "BatchMatMulV3") {
      // Mixed types (half x float -> float, ...): an input of another type
      // than Tout is converted to Tout first.
      mixed_ = attrs.Type("Ta") != attrs.Type("Tout") || attrs.Type("Tb") != attrs.Type("Tout");
    }
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape xs = call.input_shape(0), ys = call.input_shape(1);
    const PX_DataType dtype = call.output_dtype(0);
    PX_SDK_CHECK(mixed_ || (call.input_dtype(0) == dtype && call.input_dtype(1) == dtype),
                 "%s: inputs %s and %s, output %s", op, sdk::DtypeName(call.input_dtype(0)),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(dtype));
    (void)ToDtype(dtype, op);
    const sdk::BatchMatMulShape g =
        sdk::BatchMatMulShapes(op, xs, ys, adj_x_, adj_y_, broadcast_);
    CheckContiguous(call, op);
    void* c = call.AllocateOutputRaw(0, g.out);
    const int64_t m = g.m, n = g.n, k = g.k;
    int64_t batch = 1;
    for (int64_t d : g.batch) batch *= d;
    if (batch == 0 || m == 0 || n == 0) return;

    gemm::GemmPlan plan;
    plan.m = m;
    plan.n = n;
    plan.k = k;
    SetMatrixStrides(plan, adj_x_, adj_y_);
    plan.batch = batch;
    // Batch dimensions innermost first: the strides of x's and y's matrices
    // (0 where broadcast); dimensions of 1 dropped, neighbours that continue
    // each other's strides merged.
    struct Dim {
      int64_t size, x_stride, y_stride;
    };
    std::vector<Dim> dims;
    int64_t x_stride = m * k, y_stride = k * n;
    for (size_t d = g.batch.size(); d-- > 0;) {
      const Dim dim{g.batch[d], g.x_batch[d] == 1 ? 0 : x_stride,
                    g.y_batch[d] == 1 ? 0 : y_stride};
      x_stride *= g.x_batch[d];
      y_stride *= g.y_batch[d];
      if (dim.size == 1) continue;
      if (!dims.empty()) {
        Dim& inner = dims.back();
        if (dim.x_stride == inner.x_stride * inner.size &&
            dim.y_stride == inner.y_stride * inner.size) {
          inner.size *= dim.size;
          continue;
        }
      }
      dims.push_back(dim);
    }
    if (dims.size() > static_cast<size_t>(gemm::kMaxBatchRank)) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("%s on the GPU: the batch dimensions of %s and %s broadcast in %zu "
                      "alternating groups, at most %d are supported",
                      op, sdk::ShapeString(xs).c_str(), sdk::ShapeString(ys).c_str(),
                      dims.size(), gemm::kMaxBatchRank));
    }
    plan.batch_rank = static_cast<int>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      // The plan lists dimensions outermost first.
      const Dim& dim = dims[dims.size() - 1 - i];
      plan.batch_dims[i] = dim.size;
      plan.a_batch_strides[i] = dim.x_stride;
      plan.b_batch_strides[i] = dim.y_stride;
    }

    GpuStream& stream = StreamOf(call);
    const void* a = call.input_data(0);
    const void* b = call.input_data(1);
    ScratchCasts scratch(stream);
    if (call.input_dtype(0) != dtype) {
      a = scratch.Cast(a, call.input_dtype(0), dtype, sdk::NumElements(xs), op);
    }
    if (call.input_dtype(1) != dtype) {
      b = scratch.Cast(b, call.input_dtype(1), dtype, sdk::NumElements(ys), op);
    }
    RunGemm(stream, dtype, a, b, c, plan, gemm::Epilogue(), op);
  }

 private:
  std::string op_;
  bool broadcast_ = true;
  bool mixed_ = false;
  bool adj_x_ = false, adj_y_ = false;
};

}  // namespace

PX_Status* RegisterNativeMatMulKernels(sdk::RegistrationInfo* info,
                                       PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PlexusMatMulKernel>(info, registrar, sdk::sig::kMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PlexusMatMulKernel>(info, registrar, sdk::sig::kFusedMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PlexusBatchMatMulKernel>(
      info, registrar, sdk::sig::kBatchMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PlexusBatchMatMulKernel>(
      info, registrar, sdk::sig::kBatchMatMulV2, {types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PlexusBatchMatMulKernel>(
      info, registrar, sdk::sig::kBatchMatMulV3, {types, types, types}));
  return nullptr;
}

}  // namespace plexus::cuda
