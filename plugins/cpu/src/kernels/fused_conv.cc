// CPU kernels: _FusedConv2D (Conv2D + BiasAdd or inference FusedBatchNorm
// [+ activation], created by the graph optimizer).
//
// The convolution is Conv2D's (nn_conv.cc): NHWC im2col patches a block of
// output rows at a time, multiplied by the [kh*kw*c, f_out] filter with the
// shared Gemm (1x1, stride 1 and no padding skip the patches). The epilogue
// (fused_epilogue.h) follows each block's product while it is in cache.
// NCHW inputs are transposed to NHWC and the result back.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/fused_epilogue.h"
#include "kernels/linalg_gemm.h"
#include "kernels/nn_window.h"

namespace plexus::cpu {
namespace {

// Geometry of one NHWC convolution.
struct Geometry {
  int64_t n, h, w, c;     // input
  int64_t kh, kw, f_out;  // filter [kh, kw, c, f_out]
  int64_t oh, ow, top, left;
  int64_t sh, sw, dh, dw;
};

// y[n*oh*ow, f_out] = epilogue(patches[n*oh*ow, kh*kw*c] * filter), a block
// of output rows at a time.
template <typename T>
void FusedConvNhwc(const T* x, const T* f, const Geometry& g,
                   const Epilogue<sdk::ComputeType<T>>& epilogue, T* y) {
  const int64_t rows = g.n * g.oh * g.ow;
  const int64_t depth = g.kh * g.kw * g.c;
  if (rows == 0 || g.f_out == 0) return;
  // Output rows per block: the patches stay under 2^18 elements, and the
  // block's output is still in cache when the epilogue reads it.
  constexpr int64_t kScratchElements = int64_t{1} << 18;
  const int64_t block =
      std::max<int64_t>(1, std::min(rows, kScratchElements / std::max<int64_t>(depth, 1)));
  if (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.top == 0 && g.left == 0 &&
      g.oh == g.h && g.ow == g.w) {
    // 1x1, stride 1, no padding: the input already is the patch matrix.
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
      const int64_t nr = std::min(block, rows - r0);
      Gemm<T>(false, false, nr, g.f_out, g.c, x + r0 * g.c, f, y + r0 * g.f_out);
      ApplyEpilogue<T>(epilogue, y + r0 * g.f_out, nr, g.f_out);
    }
    return;
  }
  std::vector<T> patches(static_cast<size_t>(block * depth));
  const T zero = static_cast<T>(0);
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t nr = std::min(block, rows - r0);
    for (int64_t r = r0; r < r0 + nr; ++r) {
      const int64_t b = r / (g.oh * g.ow);
      const int64_t i = (r / g.ow) % g.oh;
      const int64_t j = r % g.ow;
      T* dst = patches.data() + (r - r0) * depth;
      const int64_t w0 = j * g.sw - g.left;
      const bool row_inside = g.dw == 1 && w0 >= 0 && w0 + g.kw <= g.w;
      for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t ih = i * g.sh - g.top + a * g.dh;
        if (ih < 0 || ih >= g.h) {
          std::fill(dst, dst + g.kw * g.c, zero);
          dst += g.kw * g.c;
          continue;
        }
        const T* src_row = x + ((b * g.h + ih) * g.w) * g.c;
        if (row_inside) {  // kw * c contiguous input elements
          std::copy(src_row + w0 * g.c, src_row + (w0 + g.kw) * g.c, dst);
          dst += g.kw * g.c;
          continue;
        }
        for (int64_t k = 0; k < g.kw; ++k) {
          const int64_t iw = w0 + k * g.dw;
          if (iw < 0 || iw >= g.w) {
            std::fill(dst, dst + g.c, zero);
          } else {
            std::copy(src_row + iw * g.c, src_row + (iw + 1) * g.c, dst);
          }
          dst += g.c;
        }
      }
    }
    T* y_block = y + r0 * g.f_out;
    Gemm<T>(false, false, nr, g.f_out, depth, patches.data(), f, y_block);
    ApplyEpilogue<T>(epilogue, y_block, nr, g.f_out);
  }
}

class FusedConv2DKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedConv2D", /*allow_batch_norm=*/true);
    const std::string filter_format = attrs.String("filter_format", "HWIO");
    if (filter_format != "HWIO") {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("_FusedConv2D supports filter_format HWIO only, got '%s'",
                      filter_format.c_str()));
    }
    window_.Read(attrs, false);
  }

  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    PX_SDK_CHECK(xs.size() == 4, "_FusedConv2D input must be 4-D, got %s",
                 sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "_FusedConv2D filter must be 4-D, got %s",
                 sdk::ShapeString(fs).c_str());
    const bool nchw = window_.nchw;
    Geometry g;
    g.n = xs[0];
    g.c = xs[nchw ? 1 : 3];
    g.h = xs[nchw ? 2 : 1];
    g.w = xs[nchw ? 3 : 2];
    g.kh = fs[0];
    g.kw = fs[1];
    g.f_out = fs[3];
    PX_SDK_CHECK(fs[2] > 0 && g.c % fs[2] == 0,
                 "input depth %lld must be a multiple of the filter input depth %lld",
                 static_cast<long long>(g.c), static_cast<long long>(fs[2]));
    if (g.c != fs[2]) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("_FusedConv2D does not support grouped convolutions: the input depth "
                      "%lld differs from the filter input depth %lld",
                      static_cast<long long>(g.c), static_cast<long long>(fs[2])));
    }
    g.sh = window_.sh;
    g.sw = window_.sw;
    g.dh = window_.dh;
    g.dw = window_.dw;
    window_.Output(g.h, g.kh, g.sh, g.dh, window_.pad_top, window_.pad_bottom, &g.oh, &g.top);
    window_.Output(g.w, g.kw, g.sw, g.dw, window_.pad_left, window_.pad_right, &g.ow, &g.left);
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{g.n, g.f_out, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, g.f_out};
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const auto epilogue = Epilogue<C>::template Make<T>(spec_, call, g.f_out, "_FusedConv2D");
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      const int64_t out_size = sdk::NumElements(out_shape);
      // Blocks write y while later blocks still read x: an output that
      // shares memory with the input is computed in scratch.
      if (!nchw && !BuffersOverlap(x, sdk::NumElements(xs), y, out_size) &&
          !BuffersOverlap(f, sdk::NumElements(fs), y, out_size)) {
        FusedConvNhwc<T>(x, f, g, epilogue, y);
        return;
      }
      std::vector<T> x_nhwc = nchw ? NchwToNhwc(x, g.n, g.c, g.h, g.w)
                                   : std::vector<T>(x, x + sdk::NumElements(xs));
      const std::vector<T> filter(f, f + sdk::NumElements(fs));
      std::vector<T> y_nhwc(static_cast<size_t>(out_size));
      FusedConvNhwc<T>(x_nhwc.data(), filter.data(), g, epilogue, y_nhwc.data());
      if (nchw) {
        NhwcToNchw(y_nhwc.data(), g.n, g.oh, g.ow, g.f_out, y);
      } else {
        std::copy(y_nhwc.begin(), y_nhwc.end(), y);
      }
    });
  }

 private:
  sdk::FusedSpec spec_;
  sdk::Window window_;
};

}  // namespace

PX_Status* RegisterFusedConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<FusedConv2DKernel>(info, registrar, "_FusedConv2D",
                                                {{"T", sdk::FloatTypes()}});
}

}  // namespace plexus::cpu
