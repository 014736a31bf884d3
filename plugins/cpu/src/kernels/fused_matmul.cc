// CPU kernels: _FusedMatMul (MatMul + BiasAdd [+ activation], created by
// the graph optimizer), and the fused family's registration.
//
// float with constant weights (the optimizer's _plexus_const_inputs) runs
// as oneDNN's matmul with the weights packed once and the epilogue as
// post-ops (conv_onednn.h, RunProduct). Otherwise the product runs through
// the same Gemm as MatMul (linalg_gemm.h), a block of output rows at a time; the epilogue (fused_epilogue.h) follows each
// block while it is still in cache, instead of BiasAdd and the activation
// each making a full pass over the output in separate kernels.
#include <algorithm>
#include <vector>

#include "kernels/conv_onednn.h"
#include "kernels/fused_epilogue.h"
#include "kernels/linalg_gemm.h"
#include "kernels/linalg_transpose.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// Output rows per Gemm call: large enough that repacking b for each block
// costs little next to the block's product, small enough that a block of a
// wide output stays in the outer caches for the epilogue.
int64_t RowsPerBlock(int64_t n) {
  constexpr int64_t kMinRows = 256;
  constexpr int64_t kBlockElements = int64_t{1} << 16;
  return std::max(kMinRows, kBlockElements / std::max<int64_t>(n, 1));
}

class FusedMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedMatMul", /*allow_batch_norm=*/false);
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
    // Constant weights (the optimizer's _plexus_const_inputs) go to oneDNN's
    // matmul, packed once (conv_onednn.h's RunProduct).
    packed_ = sdk::ConstantInput(attrs, 1) && !ta_ && !tb_;
    onednn_.set_constant_filter(true);
  }

  void Compute(sdk::Call& call) override {
    const sdk::Shape as = call.input_shape(0), bs = call.input_shape(1);
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2,
                 "_FusedMatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    const int64_t m = ta_ ? as[1] : as[0], k = ta_ ? as[0] : as[1];
    const int64_t kb = tb_ ? bs[1] : bs[0], n = tb_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const auto epilogue = Epilogue<C>::template Make<T>(spec_, call, n, "_FusedMatMul");
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, {m, n});
      if (m == 0 || n == 0) return;
      if constexpr (std::is_same_v<T, float>) {
        if (packed_ && k > 0 && !BuffersOverlap(a, m * k, y, m * n) &&
            onednn_.RunProduct(m, k, n, a, b, &epilogue, y)) {
          return;
        }
      }
      int64_t block = std::min(m, RowsPerBlock(n));
      // Blocks write y while later blocks still read a and b: an output
      // that shares memory with an input is computed in one block (Gemm
      // copies the shared input first).
      if (BuffersOverlap(a, m * k, y, m * n) || BuffersOverlap(b, k * n, y, m * n)) block = m;
      bool transpose_a = ta_;
      std::vector<T> a_rows;
      if (transpose_a && block < m) {
        // Rows of op(a) are columns of a: make them contiguous once.
        a_rows.resize(static_cast<size_t>(m * k));
        Transpose(a, {k, m}, {1, 0}, a_rows.data());
        a = a_rows.data();
        transpose_a = false;
      }
      for (int64_t r0 = 0; r0 < m; r0 += block) {
        const int64_t rows = std::min(block, m - r0);
        T* y_block = y + r0 * n;
        Gemm<T>(transpose_a, tb_, rows, n, k, a + r0 * k, b, y_block);
        ApplyEpilogue<T>(epilogue, y_block, rows, n);
      }
    });
  }

 private:
  sdk::FusedSpec spec_;
  bool ta_ = false, tb_ = false;
  bool packed_ = false;
  OneDnnConv onednn_;
};

}  // namespace

PX_Status* RegisterFusedFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  if (PX_Status* s = sdk::RegisterKernel<FusedMatMulKernel>(info, registrar, sdk::sig::kFusedMatMul,
                                                            {sdk::FloatTypes()})) {
    return s;
  }
  if (PX_Status* s = RegisterFusedConvKernels(info, registrar)) return s;
  if (PX_Status* s = RegisterLayerNormKernels(info, registrar)) return s;
  return RegisterFusedElementwiseKernels(info, registrar);
}

}  // namespace plexus::cpu
