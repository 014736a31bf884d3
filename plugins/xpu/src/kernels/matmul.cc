// The XPU plugin's matrix products: MatMul, _FusedMatMul (BiasAdd and an
// optional activation), BatchMatMul and BatchMatMulV2/V3 (batch dimensions
// broadcast), for float, half and bfloat16. One tiled GEMM kernel
// (kernels/linalg.cl: px_gemm_<dtype>) does them all: transposes are strides,
// a broadcast side repeats its matrix with batch stride 0, and the epilogue
// (bias, activation) runs in the kernel. Batch dimensions broadcasting both
// ways ([2, 1] with [1, 3]) take one launch per output matrix.
//
// double is not registered: not every Intel GPU has fp64 (Arc has none).
// BatchMatMulV3 with mixed input types is not registered either (Ta, Tb and
// Tout must agree).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/families.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "xpu_stream.h"

namespace plexus::xpu {
namespace {

using sdk::Shape;

constexpr size_t kTile = 16;  // linalg.cl's PX_TILE

const char* GemmKernelFor(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return "px_gemm_f32";
    case PX_DT_HALF: return "px_gemm_f16";
    case PX_DT_BFLOAT16: return "px_gemm_bf16";
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on XPU does not support dtype %s", op,
                                         sdk::DtypeName(t)));
  }
}

// One launch: `batch` products of op(a) [m, k] and op(b) [k, n] into dense c
// [m, n]; a_batch / b_batch are the elements between batches (0 repeats).
struct Gemm {
  int64_t m, n, k, batch;
  bool ta, tb;
  int64_t a_batch, b_batch;
};

void RunGemm(XpuStream& stream, const char* kernel, const Gemm& g, const void* a, const void* b,
             void* c, const void* bias, sdk::FusedActivation act, float alpha) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  // Element (i, p) of op(a): a stored [m, k] (or [k, m] transposed).
  const int64_t a_rs = g.ta ? 1 : g.k, a_cs = g.ta ? g.m : 1;
  const int64_t b_rs = g.tb ? 1 : g.n, b_cs = g.tb ? g.k : 1;
  const int64_t c_batch = g.m * g.n;
  const size_t global[3] = {static_cast<size_t>(g.n), static_cast<size_t>(g.m),
                            static_cast<size_t>(g.batch)};
  const size_t local[3] = {kTile, kTile, 1};
  const int32_t has_bias = bias != nullptr ? 1 : 0;
  const int32_t act_code = static_cast<int32_t>(act);
  // Without a bias the kernel never reads its bias argument: pass a.
  const void* bias_arg = bias != nullptr ? bias : a;
  Launch(stream, kernel, 3, global, local,
         {Arg(a), Arg(b), Arg(c), Arg(bias_arg), Arg(g.m), Arg(g.n), Arg(g.k), Arg(g.a_batch),
          Arg(a_rs), Arg(a_cs), Arg(g.b_batch), Arg(b_rs), Arg(b_cs), Arg(c_batch),
          Arg(has_bias), Arg(act_code), Arg(alpha)});
}

// ---------------------------------------------------------------------------
// MatMul and _FusedMatMul
// ---------------------------------------------------------------------------

class MatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    fused_ = op_ == "_FusedMatMul";
    if (fused_) {
      const sdk::FusedSpec spec = sdk::ReadFusedSpec(attrs, "_FusedMatMul", false);
      act_ = spec.activation;
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
    const char* kernel = GemmKernelFor(dtype, op);
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2,
                 "%s needs rank-2 inputs, got In[0]: %s, In[1]: %s", op,
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)) && px_sdk_is_contiguous(&call.input(1)),
                 "%s: an input is not contiguous", op);
    const int64_t m = ta_ ? as[1] : as[0], k = ta_ ? as[0] : as[1];
    const int64_t kb = tb_ ? bs[1] : bs[0], n = tb_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    const void* bias = nullptr;
    if (fused_) {
      PX_SDK_CHECK(call.num_inputs() == 3, "_FusedMatMul with BiasAdd needs one bias input");
      const Shape bias_shape = call.input_shape(2);
      PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == n,
                   "_FusedMatMul bias %s must be 1-D with the product's %lld columns",
                   sdk::ShapeString(bias_shape).c_str(), static_cast<long long>(n));
      PX_SDK_CHECK(call.input_dtype(2) == dtype, "_FusedMatMul bias is %s, expected %s",
                   sdk::DtypeName(call.input_dtype(2)), sdk::DtypeName(dtype));
      bias = call.input_data(2);
    }
    void* c = call.AllocateOutputRaw(0, Shape{m, n});
    if (m == 0 || n == 0) return;
    XpuStream& stream = StreamOf(call);
    // k == 0 needs no special case: the kernel's empty sum is 0, then the
    // epilogue.
    RunGemm(stream, kernel, Gemm{m, n, k, 1, ta_, tb_, 0, 0}, call.input_data(0),
            call.input_data(1), c, bias, act_, alpha_);
  }

 private:
  std::string op_;
  bool fused_ = false;
  bool ta_ = false, tb_ = false;
  sdk::FusedActivation act_ = sdk::FusedActivation::kNone;
  float alpha_ = 0.2f;
};

// ---------------------------------------------------------------------------
// BatchMatMul, V2, V3
// ---------------------------------------------------------------------------

class BatchMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    broadcast_ = op_ != "BatchMatMul";
    adj_x_ = attrs.Bool("adj_x", false);
    adj_y_ = attrs.Bool("adj_y", false);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape xs = call.input_shape(0), ys = call.input_shape(1);
    const PX_DataType dtype = call.output_dtype(0);
    PX_SDK_CHECK(call.input_dtype(0) == dtype && call.input_dtype(1) == dtype,
                 "%s: inputs %s and %s, output %s", op, sdk::DtypeName(call.input_dtype(0)),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(dtype));
    const char* kernel = GemmKernelFor(dtype, op);
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)) && px_sdk_is_contiguous(&call.input(1)),
                 "%s: an input is not contiguous", op);
    const sdk::BatchMatMulShape g =
        sdk::BatchMatMulShapes(op, xs, ys, adj_x_, adj_y_, broadcast_);
    void* c = call.AllocateOutputRaw(0, g.out);
    int64_t batch = 1, x_batch = 1, y_batch = 1;
    for (size_t i = 0; i < g.batch.size(); ++i) {
      batch *= g.batch[i];
      x_batch *= g.x_batch[i];
      y_batch *= g.y_batch[i];
    }
    if (batch == 0 || g.m == 0 || g.n == 0) return;
    XpuStream& stream = StreamOf(call);
    const char* a = static_cast<const char*>(call.input_data(0));
    const char* b = static_cast<const char*>(call.input_data(1));
    const int64_t sa = g.m * g.k, sb = g.k * g.n, sc = g.m * g.n;
    if ((x_batch == batch || x_batch == 1) && (y_batch == batch || y_batch == 1)) {
      // One launch; a side with one matrix repeats it (stride 0).
      const Gemm gemm{g.m, g.n, g.k, batch, adj_x_, adj_y_, x_batch == 1 ? 0 : sa,
                      y_batch == 1 ? 0 : sb};
      RunGemm(stream, kernel, gemm, a, b, c, nullptr, sdk::FusedActivation::kNone, 0.f);
      return;
    }
    // Batch dimensions broadcasting both ways: one launch per output matrix.
    const int64_t es = static_cast<int64_t>(sdk::DtypeSize(dtype));
    const size_t br = g.batch.size();
    const Gemm one{g.m, g.n, g.k, 1, adj_x_, adj_y_, 0, 0};
    std::vector<int64_t> index(br, 0);
    for (int64_t i = 0; i < batch; ++i) {
      int64_t xi = 0, yi = 0;
      for (size_t d = 0; d < br; ++d) {
        xi = xi * g.x_batch[d] + (g.x_batch[d] == 1 ? 0 : index[d]);
        yi = yi * g.y_batch[d] + (g.y_batch[d] == 1 ? 0 : index[d]);
      }
      RunGemm(stream, kernel, one, a + xi * sa * es, b + yi * sb * es,
              static_cast<char*>(c) + i * sc * es, nullptr, sdk::FusedActivation::kNone, 0.f);
      for (size_t d = br; d-- > 0;) {
        if (++index[d] < g.batch[d]) break;
        index[d] = 0;
      }
    }
  }

 private:
  std::string op_;
  bool broadcast_ = true;
  bool adj_x_ = false, adj_y_ = false;
};

}  // namespace

PX_Status* RegisterXpuMatMulKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kFusedMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BatchMatMulKernel>(info, registrar, sdk::sig::kBatchMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BatchMatMulKernel>(info, registrar, sdk::sig::kBatchMatMulV2, {types}));
  // V3 only where Ta, Tb and Tout agree (mixed types stay on other devices).
  for (PX_DataType t : types) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BatchMatMulKernel>(
        info, registrar, sdk::sig::kBatchMatMulV3, {{t}, {t}, {t}}));
  }
  return nullptr;
}

}  // namespace plexus::xpu
