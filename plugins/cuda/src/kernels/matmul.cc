// The CUDA plugin's matrix products through cuBLASLt: MatMul, BatchMatMul,
// BatchMatMulV2/V3 (batch dimensions broadcast) and _FusedMatMul (BiasAdd
// and an optional activation).
//
// TensorFlow's tensors are row-major and cuBLASLt's default layout is
// column-major: a row-major [r, c] matrix is the column-major [c, r] one, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T, with B as cuBLASLt's
// first operand and the output's rows (n) as cuBLASLt's rows. The bias of
// _FusedMatMul ([n]) is then a per-row vector of that column-major output,
// which is what cuBLASLt's BIAS epilogues add.
//
// cuBLASLt itself is opened with dlopen on the first product
// (cublaslt_loader.h: every call is cublaslt::cublasLt...), so the plugin
// loads where libcublasLt is missing and MatMul alone fails, UNAVAILABLE.
// Per device: one cuBLASLt handle, created on the first product (so the
// plugin loads and registers where no GPU exists); per stream: a 32 MiB
// workspace (streams run concurrently, a shared workspace would race). Per
// problem (dtype, compute type, shapes, transposes, batch strides,
// epilogue, pointer alignments): the descriptors and the algorithm the
// heuristic chose, cached behind a mutex. None of these is ever freed: they
// live as long as the process (freeing them from static destructors would
// race the CUDA runtime's own teardown).
//
// float runs with FP32 compute (CUBLAS_COMPUTE_32F), or with TF32 tensor
// cores (CUBLAS_COMPUTE_32F_FAST_TF32) when the environment has
// PX_CUDA_ALLOW_TF32=1; half and bfloat16 on tensor cores with FP32
// accumulation; double in FP64.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cublaslt_loader.h"
#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/array_launch.h"
#include "kernels/elementwise_launch.h"
#include "kernels/matmul_launch.h"
#include "kernels/vendor_kernels.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

constexpr size_t kWorkspaceBytes = size_t{32} << 20;
// Cached plans kept at most; past that the cache starts over.
constexpr size_t kMaxPlans = 4096;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

PX_Code CublasCode(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return PX_CODE_OK;
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return PX_CODE_UNAVAILABLE;
    case CUBLAS_STATUS_ALLOC_FAILED: return PX_CODE_RESOURCE_EXHAUSTED;
    case CUBLAS_STATUS_NOT_SUPPORTED: return PX_CODE_UNIMPLEMENTED;
    case CUBLAS_STATUS_INVALID_VALUE: return PX_CODE_INVALID_ARGUMENT;
    default: return PX_CODE_INTERNAL;
  }
}

[[noreturn]] void ThrowCublas(cublasStatus_t s, const char* expr) {
  // The calls go through the loader's wrappers (cublaslt_loader.h): name the
  // cuBLASLt function itself.
  if (std::strncmp(expr, "cublaslt::", 10) == 0) expr += 10;
  const char* text = cublaslt::cublasLtGetStatusString(s);
  throw sdk::KernelError(CublasCode(s),
                         sdk::Format("cuBLASLt: %s failed: %s (%d)", expr,
                                     text != nullptr ? text : "unknown status",
                                     static_cast<int>(s)));
}

#define PX_CUBLAS_THROW_IF_ERROR(expr)                          \
  do {                                                          \
    const cublasStatus_t px_cublas_status_ = (expr);            \
    if (px_cublas_status_ != CUBLAS_STATUS_SUCCESS) {           \
      ::plexus::cuda::ThrowCublas(px_cublas_status_, #expr);    \
    }                                                           \
  } while (0)


// ---------------------------------------------------------------------------
// Per-device state: the handle, the workspaces and the plan cache.
// ---------------------------------------------------------------------------

// One GEMM problem as cuBLASLt sees it (column-major, B first).
struct PlanKey {
  int dtype;         // PX_DataType
  int compute;       // cublasComputeType_t
  int epilogue;      // cublasLtEpilogue_t
  bool ta, tb;       // transposes of TensorFlow's a and b
  int64_t m, n, k;   // row-major C [m, n]
  int64_t batch;     // batch count of one launch
  int64_t stride_a, stride_b, stride_c;  // elements between batches (0: repeated)
  int align_a, align_b, align_c;         // pointer alignments in bytes (<= 256)
  auto Tie() const {
    return std::tie(dtype, compute, epilogue, ta, tb, m, n, k, batch, stride_a, stride_b,
                    stride_c, align_a, align_b, align_c);
  }
  bool operator<(const PlanKey& o) const { return Tie() < o.Tie(); }
};

struct Plan {
  std::mutex mu;  // the bias pointer is set on `desc` for each launch
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr, layout_b = nullptr, layout_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool supported = false;  // the heuristic found an algorithm
  ~Plan() {
    if (layout_c != nullptr) cublaslt::cublasLtMatrixLayoutDestroy(layout_c);
    if (layout_b != nullptr) cublaslt::cublasLtMatrixLayoutDestroy(layout_b);
    if (layout_a != nullptr) cublaslt::cublasLtMatrixLayoutDestroy(layout_a);
    if (desc != nullptr) cublaslt::cublasLtMatmulDescDestroy(desc);
  }
};

struct DeviceState {
  std::mutex mu;
  cublasLtHandle_t handle = nullptr;
  std::map<cudaStream_t, void*> workspaces;
  std::map<PlanKey, std::shared_ptr<Plan>> plans;
};

DeviceState& StateFor(int32_t ordinal) {
  static std::mutex mu;
  static auto* states = new std::map<int32_t, std::unique_ptr<DeviceState>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<DeviceState>& s = (*states)[ordinal];
  if (!s) s = std::make_unique<DeviceState>();
  return *s;
}

// The handle, created on first use (its device must be current).
cublasLtHandle_t HandleFor(DeviceState& state, int32_t ordinal) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.handle == nullptr) {
    cublasLtHandle_t h = nullptr;
    const cublasStatus_t s = cublaslt::cublasLtCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) {
      const char* text = cublaslt::cublasLtGetStatusString(s);
      const PX_Code code = CublasCode(s);
      throw sdk::KernelError(
          code == PX_CODE_UNAVAILABLE ? code : PX_CODE_INTERNAL,
          sdk::Format("cuBLASLt is unavailable on CUDA:%d: cublasLtCreate failed: %s (%d)",
                      static_cast<int>(ordinal), text != nullptr ? text : "unknown status",
                      static_cast<int>(s)));
    }
    state.handle = h;
  }
  return state.handle;
}

void* WorkspaceFor(DeviceState& state, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(state.mu);
  auto it = state.workspaces.find(stream);
  if (it != state.workspaces.end()) return it->second;
  void* p = nullptr;
  PX_GPU_THROW_IF_FAILED(cudaMalloc(&p, kWorkspaceBytes),
                          "cudaMalloc(cuBLASLt workspace, 32 MiB)");
  state.workspaces[stream] = p;
  return p;
}

int Alignment(const void* p, int64_t stride_bytes) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (stride_bytes != 0) a |= static_cast<uintptr_t>(stride_bytes);
  int align = 256;
  while (align > 1 && (a & static_cast<uintptr_t>(align - 1)) != 0) align /= 2;
  return align;
}

struct TypeInfo {
  cudaDataType_t data;
  cudaDataType_t scale;
  cublasComputeType_t compute;
  ew::Dtype ew;
  size_t size;
};

TypeInfo TypeInfoFor(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT:
      return {CUDA_R_32F, CUDA_R_32F,
              AllowTf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, ew::Dtype::kFloat,
              4};
    case PX_DT_HALF: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, ew::Dtype::kHalf, 2};
    case PX_DT_BFLOAT16:
      return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, ew::Dtype::kBFloat16, 2};
    case PX_DT_DOUBLE: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, ew::Dtype::kDouble, 8};
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on CUDA does not support dtype %s", op,
                                         sdk::DtypeName(t)));
  }
}

std::shared_ptr<Plan> MakePlan(cublasLtHandle_t handle, const PlanKey& key, const TypeInfo& ti) {
  auto plan = std::make_shared<Plan>();
  PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulDescCreate(&plan->desc, ti.compute, ti.scale));
  // cuBLASLt's A is TensorFlow's b, its B TensorFlow's a (see the top).
  const cublasOperation_t op_a = key.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = key.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const cublasLtEpilogue_t epilogue = static_cast<cublasLtEpilogue_t>(key.epilogue);
  PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  // Stored shapes, column-major: b is [k, n] row-major (n x k column-major,
  // leading dimension n), or [n, k] when transposed; likewise a.
  const uint64_t a_rows = key.tb ? key.k : key.n, a_cols = key.tb ? key.n : key.k;
  const uint64_t b_rows = key.ta ? key.m : key.k, b_cols = key.ta ? key.k : key.m;
  PX_CUBLAS_THROW_IF_ERROR(
      cublaslt::cublasLtMatrixLayoutCreate(&plan->layout_a, ti.data, a_rows, a_cols, a_rows));
  PX_CUBLAS_THROW_IF_ERROR(
      cublaslt::cublasLtMatrixLayoutCreate(&plan->layout_b, ti.data, b_rows, b_cols, b_rows));
  PX_CUBLAS_THROW_IF_ERROR(
      cublaslt::cublasLtMatrixLayoutCreate(&plan->layout_c, ti.data, key.n, key.m, key.n));
  if (key.batch > 1) {
    const int32_t count = static_cast<int32_t>(key.batch);
    const struct {
      cublasLtMatrixLayout_t layout;
      int64_t stride;
    } batched[] = {{plan->layout_a, key.stride_b}, {plan->layout_b, key.stride_a},
                   {plan->layout_c, key.stride_c}};
    for (const auto& l : batched) {
      PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatrixLayoutSetAttribute(
          l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatrixLayoutSetAttribute(
          l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &l.stride, sizeof(l.stride)));
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t workspace = kWorkspaceBytes;
  const uint32_t align_a = static_cast<uint32_t>(key.align_b);  // cuBLASLt's A: our b
  const uint32_t align_b = static_cast<uint32_t>(key.align_a);
  const uint32_t align_c = static_cast<uint32_t>(key.align_c);
  cublasStatus_t s = cublaslt::cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublaslt::cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                             &align_a, sizeof(align_a));
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublaslt::cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                             &align_b, sizeof(align_b));
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublaslt::cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                             &align_c, sizeof(align_c));
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublaslt::cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                             &align_c, sizeof(align_c));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublaslt::cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->layout_a, plan->layout_b,
                                       plan->layout_c, plan->layout_c, pref, 1, &result, &found);
  }
  cublaslt::cublasLtMatmulPreferenceDestroy(pref);
  // No algorithm (NOT_SUPPORTED, or none returned) leaves the plan
  // unsupported: the caller then runs without the epilogue.
  if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED) {
    ThrowCublas(s, "cublasLtMatmulAlgoGetHeuristic");
  }
  if (s == CUBLAS_STATUS_SUCCESS && found > 0) {
    plan->algo = result.algo;
    plan->supported = true;
  }
  return plan;
}

std::shared_ptr<Plan> PlanFor(DeviceState& state, cublasLtHandle_t handle, const PlanKey& key,
                              const TypeInfo& ti) {
  std::lock_guard<std::mutex> lock(state.mu);
  auto it = state.plans.find(key);
  if (it != state.plans.end()) return it->second;
  if (state.plans.size() >= kMaxPlans) state.plans.clear();
  std::shared_ptr<Plan> plan = MakePlan(handle, key, ti);
  state.plans.emplace(key, plan);
  return plan;
}

// ---------------------------------------------------------------------------
// The product
// ---------------------------------------------------------------------------

// One strided-batched launch group: `batch` products at a + i * stride_a,
// b + i * stride_b, c + i * stride_c (elements).
struct Gemm {
  PX_DataType dtype;
  bool ta, tb;
  int64_t m, n, k;
  int64_t batch;
  int64_t stride_a, stride_b, stride_c;
};

// Runs `g` on the stream; with a bias (not null) and `act`, also the
// epilogue. Products with m, n or batch 0 are not passed here; k == 0
// writes zeros (then the epilogue).
void RunGemm(GpuStream& stream, const Gemm& g, const void* a, const void* b, void* c,
             const void* bias, mm::Activation act, float alpha, const char* op) {
  const TypeInfo ti = TypeInfoFor(g.dtype, op);
  const bool fused = bias != nullptr;
  auto epilogue_kernel = [&](const void* with_bias, mm::Activation with_act) {
    if (with_bias == nullptr && with_act == mm::Activation::kNone) return;
    mm::LaunchBiasActivation(ti.ew, c, with_bias, g.m * g.batch, g.n, with_act, alpha,
                             stream.get());
    CheckLaunch(stream, op);
  };
  if (g.k == 0) {
    // The empty sum: zeros (all-zero bits in every float type).
    PX_GPU_THROW_IF_FAILED(
        cudaMemsetAsync(c, 0, static_cast<size_t>(g.m * g.n * g.batch) * ti.size, stream.get()),
        "cudaMemsetAsync(output, 0)");
    CheckLaunch(stream, op);  // waits in synchronous debug mode
    epilogue_kernel(bias, act);
    return;
  }
  const int32_t ordinal = stream.ordinal;
  DeviceState& state = StateFor(ordinal);
  cublasLtHandle_t handle = HandleFor(state, ordinal);
  void* workspace = WorkspaceFor(state, stream.get());

  PlanKey key{};
  key.dtype = static_cast<int>(g.dtype);
  key.compute = static_cast<int>(ti.compute);
  key.ta = g.ta;
  key.tb = g.tb;
  key.m = g.m;
  key.n = g.n;
  key.k = g.k;
  key.batch = g.batch;
  key.stride_a = g.batch > 1 ? g.stride_a : 0;
  key.stride_b = g.batch > 1 ? g.stride_b : 0;
  key.stride_c = g.batch > 1 ? g.stride_c : 0;
  const int64_t es = static_cast<int64_t>(ti.size);
  key.align_a = Alignment(a, key.stride_a * es);
  key.align_b = Alignment(b, key.stride_b * es);
  key.align_c = Alignment(c, key.stride_c * es);

  // cuBLASLt adds the bias (and Relu) itself where it can; double, and
  // problems without an algorithm for the epilogue, run the plain product
  // and the epilogue kernel.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (fused && g.dtype != PX_DT_DOUBLE) {
    epilogue = act == mm::Activation::kRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  }
  key.epilogue = static_cast<int>(epilogue);
  std::shared_ptr<Plan> plan = PlanFor(state, handle, key, ti);
  if (!plan->supported && epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    key.epilogue = static_cast<int>(epilogue);
    plan = PlanFor(state, handle, key, ti);
  }
  if (!plan->supported && g.batch > 1) {
    // No algorithm for the strided batch (a repeated side's stride 0, say):
    // one launch per matrix.
    const int64_t es = static_cast<int64_t>(ti.size);
    Gemm one = g;
    one.batch = 1;
    for (int64_t i = 0; i < g.batch; ++i) {
      RunGemm(stream, one, static_cast<const char*>(a) + i * g.stride_a * es,
              static_cast<const char*>(b) + i * g.stride_b * es,
              static_cast<char*>(c) + i * g.stride_c * es, nullptr, mm::Activation::kNone, 0.f,
              op);
    }
    return;
  }
  if (!plan->supported) {
    throw sdk::KernelError(
        PX_CODE_UNIMPLEMENTED,
        sdk::Format("%s: cuBLASLt has no algorithm for %s [%lld x %lld] x [%lld x %lld] "
                    "(batch %lld)",
                    op, sdk::DtypeName(g.dtype), static_cast<long long>(g.m),
                    static_cast<long long>(g.k), static_cast<long long>(g.k),
                    static_cast<long long>(g.n), static_cast<long long>(g.batch)));
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* one = ti.scale == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = ti.scale == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f;
  {
    std::lock_guard<std::mutex> lock(plan->mu);
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
      PX_CUBLAS_THROW_IF_ERROR(cublaslt::cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    const cublasStatus_t s = cublaslt::cublasLtMatmul(handle, plan->desc, one, b, plan->layout_a, a,
                                            plan->layout_b, zero, c, plan->layout_c, c,
                                            plan->layout_c, &plan->algo, workspace,
                                            kWorkspaceBytes, stream.get());
    if (s != CUBLAS_STATUS_SUCCESS) ThrowCublas(s, "cublasLtMatmul");
  }
  CheckLaunch(stream, op);
  if (!fused) return;
  if (epilogue == CUBLASLT_EPILOGUE_DEFAULT) {
    epilogue_kernel(bias, act);
  } else if (act != mm::Activation::kNone && act != mm::Activation::kRelu) {
    epilogue_kernel(nullptr, act);
  }
}

std::string ShapeOf(const Shape& s) { return sdk::ShapeString(s); }

arr::CastType CastTypeOf(PX_DataType t) {
  switch (t) {
    case PX_DT_FLOAT: return arr::CastType::kFloat;
    case PX_DT_DOUBLE: return arr::CastType::kDouble;
    case PX_DT_HALF: return arr::CastType::kHalf;
    case PX_DT_BFLOAT16: return arr::CastType::kBFloat16;
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("no CUDA matrix product for dtype %s", sdk::DtypeName(t)));
  }
}

// Converted copies of inputs, in memory from the stream-ordered allocator,
// given back on the stream when the product has been queued.
class ScratchCasts {
 public:
  explicit ScratchCasts(GpuStream& stream) : stream_(stream) {}

  const char* Cast(const void* x, PX_DataType from, PX_DataType to, int64_t n, const char* op) {
    buffers_.push_back(std::make_unique<StreamBuffer>(
        stream_, static_cast<size_t>(n) * sdk::DtypeSize(to), "cudaMallocAsync(converted input)"));
    void* y = buffers_.back()->get();
    if (n > 0) {
      arr::LaunchCast(CastTypeOf(from), CastTypeOf(to), false, x, y, n, stream_.get());
      CheckLaunch(stream_, op);
    }
    return static_cast<const char*>(y);
  }

 private:
  GpuStream& stream_;
  std::vector<std::unique_ptr<StreamBuffer>> buffers_;
};

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
      act_ = static_cast<mm::Activation>(static_cast<int>(spec.activation));
      alpha_ = spec.leakyrelu_alpha;
    }
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
  }

  void Compute(sdk::Call& call) override {
    const Shape as = call.input_shape(0), bs = call.input_shape(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype && call.output_dtype(0) == dtype,
                 "%s: inputs %s and %s, output %s", op_.c_str(), sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(call.output_dtype(0)));
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2, "%s needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 op_.c_str(), ShapeOf(as).c_str(), ShapeOf(bs).c_str());
    const int64_t m = ta_ ? as[1] : as[0], k = ta_ ? as[0] : as[1];
    const int64_t kb = tb_ ? bs[1] : bs[0], n = tb_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s", ShapeOf(as).c_str(),
                 ShapeOf(bs).c_str());
    const void* bias = nullptr;
    if (fused_) {
      PX_SDK_CHECK(call.num_inputs() == 3, "_FusedMatMul with BiasAdd needs one bias input");
      const Shape bias_shape = call.input_shape(2);
      PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == n,
                   "_FusedMatMul bias %s must be 1-D with the product's %lld columns",
                   ShapeOf(bias_shape).c_str(), static_cast<long long>(n));
      PX_SDK_CHECK(call.input_dtype(2) == dtype, "_FusedMatMul bias is %s, expected %s",
                   sdk::DtypeName(call.input_dtype(2)), sdk::DtypeName(dtype));
      bias = call.input_data(2);
    }
    (void)TypeInfoFor(dtype, op_.c_str());
    void* c = call.AllocateOutputRaw(0, Shape{m, n});
    if (m == 0 || n == 0) return;
    GpuStream& stream = StreamOf(call);
    const Gemm g{dtype, ta_, tb_, m, n, k, 1, 0, 0, 0};
    // A fused node always has a bias pointer (a k == 0 product still adds it).
    RunGemm(stream, g, call.input_data(0), call.input_data(1), c, bias, act_, alpha_,
            op_.c_str());
  }

 private:
  std::string op_;
  bool fused_ = false;
  bool ta_ = false, tb_ = false;
  mm::Activation act_ = mm::Activation::kNone;
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
    if (op_ == "BatchMatMulV3") {
      // Mixed types (half x float -> float, bfloat16 x bfloat16 -> float):
      // an input of another type than Tout is converted to Tout first.
      mixed_ = attrs.Type("Ta") != attrs.Type("Tout") || attrs.Type("Tb") != attrs.Type("Tout");
    }
  }

  void Compute(sdk::Call& call) override {
    const Shape xs = call.input_shape(0), ys = call.input_shape(1);
    const PX_DataType dtype = call.output_dtype(0);
    PX_SDK_CHECK(mixed_ || (call.input_dtype(0) == dtype && call.input_dtype(1) == dtype),
                 "%s: inputs %s and %s, output %s", op_.c_str(), sdk::DtypeName(call.input_dtype(0)),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(dtype));
    PX_SDK_CHECK(xs.size() >= 2 && ys.size() >= 2,
                 "BatchMatMul inputs must be at least rank 2, got %s and %s", ShapeOf(xs).c_str(),
                 ShapeOf(ys).c_str());
    PX_SDK_CHECK(broadcast_ || xs.size() == ys.size(),
                 "BatchMatMul inputs must have the same rank, got %s and %s", ShapeOf(xs).c_str(),
                 ShapeOf(ys).c_str());
    const size_t xr = xs.size(), yr = ys.size();
    const int64_t m = adj_x_ ? xs[xr - 1] : xs[xr - 2], k = adj_x_ ? xs[xr - 2] : xs[xr - 1];
    const int64_t ky = adj_y_ ? ys[yr - 1] : ys[yr - 2], n = adj_y_ ? ys[yr - 2] : ys[yr - 1];
    PX_SDK_CHECK(k == ky, "Matrix size-incompatible: In[0]: %s, In[1]: %s", ShapeOf(xs).c_str(),
                 ShapeOf(ys).c_str());
    // Batch dimensions, right-aligned and broadcast.
    const size_t br = (xr > yr ? xr : yr) - 2;
    Shape xb(br, 1), yb(br, 1), ob(br, 1);
    for (size_t i = 0; i < br; ++i) {
      if (i + (xr - 2) >= br) xb[i] = xs[i + (xr - 2) - br];
      if (i + (yr - 2) >= br) yb[i] = ys[i + (yr - 2) - br];
      if (xb[i] == yb[i] || yb[i] == 1) {
        ob[i] = xb[i];
      } else if (xb[i] == 1) {
        ob[i] = yb[i];
      } else {
        ob[i] = -1;
      }
      PX_SDK_CHECK(ob[i] >= 0 && (broadcast_ || xb[i] == yb[i]),
                   broadcast_ ? "Incompatible batch dimensions (they do not broadcast): %s and %s"
                              : "Batch dimensions must be equal: %s and %s",
                   ShapeOf(xs).c_str(), ShapeOf(ys).c_str());
    }
    const int64_t es = static_cast<int64_t>(TypeInfoFor(dtype, op_.c_str()).size);
    Shape out = ob;
    out.push_back(m);
    out.push_back(n);
    void* c = call.AllocateOutputRaw(0, out);
    int64_t batch = 1, x_batch = 1, y_batch = 1;
    for (size_t i = 0; i < br; ++i) {
      batch *= ob[i];
      x_batch *= xb[i];
      y_batch *= yb[i];
    }
    if (batch == 0 || m == 0 || n == 0) return;
    GpuStream& stream = StreamOf(call);
    const char* a = static_cast<const char*>(call.input_data(0));
    const char* b = static_cast<const char*>(call.input_data(1));
    // Inputs of another type than the output's, converted on the stream into
    // stream-ordered scratch memory (freed in stream order after the product).
    ScratchCasts scratch(stream);
    if (call.input_dtype(0) != dtype) {
      a = scratch.Cast(a, call.input_dtype(0), dtype, sdk::NumElements(xs), op_.c_str());
    }
    if (call.input_dtype(1) != dtype) {
      b = scratch.Cast(b, call.input_dtype(1), dtype, sdk::NumElements(ys), op_.c_str());
    }
    const int64_t sa = m * k, sb = k * n, sc = m * n;
    if ((x_batch == batch || x_batch == 1) && (y_batch == batch || y_batch == 1)) {
      // One strided-batched launch; a side with one matrix repeats it (stride 0).
      const Gemm g{dtype, adj_x_, adj_y_, m, n, k, batch, x_batch == 1 ? 0 : sa,
                   y_batch == 1 ? 0 : sb, sc};
      RunGemm(stream, g, a, b, c, nullptr, mm::Activation::kNone, 0.f, op_.c_str());
      return;
    }
    // Batch dimensions broadcasting both ways ([2, 1] with [1, 3]): one
    // launch per output matrix.
    const Gemm g{dtype, adj_x_, adj_y_, m, n, k, 1, 0, 0, 0};
    std::vector<int64_t> index(br, 0);
    for (int64_t i = 0; i < batch; ++i) {
      int64_t xi = 0, yi = 0;
      for (size_t d = 0; d < br; ++d) {
        xi = xi * xb[d] + (xb[d] == 1 ? 0 : index[d]);
        yi = yi * yb[d] + (yb[d] == 1 ? 0 : index[d]);
      }
      RunGemm(stream, g, a + xi * sa * es, b + yi * sb * es, static_cast<char*>(c) + i * sc * es,
              nullptr, mm::Activation::kNone, 0.f, op_.c_str());
      for (size_t d = br; d-- > 0;) {
        if (++index[d] < ob[d]) break;
        index[d] = 0;
      }
    }
  }

 private:
  std::string op_;
  bool broadcast_ = true;
  bool mixed_ = false;
  bool adj_x_ = false, adj_y_ = false;
};

}  // namespace

PX_Status* RegisterMatMulKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kFusedMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BatchMatMulKernel>(info, registrar, sdk::sig::kBatchMatMul, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BatchMatMulKernel>(info, registrar, sdk::sig::kBatchMatMulV2, {types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BatchMatMulKernel>(
      info, registrar, sdk::sig::kBatchMatMulV3, {types, types, types}));
  return nullptr;
}

}  // namespace plexus::cuda
