// CPU kernels: Conv2D (im2col + Gemm, with a direct product for 1x1
// convolutions) and DepthwiseConv2dNative (direct loops over channels).
// NCHW inputs are transposed to NHWC and the result back.
#include <algorithm>
#include <vector>

#include "kernels/conv_im2col.h"
#include "kernels/linalg_gemm.h"
#include "kernels/nn_internal.h"
#include "kernels/nn_window.h"

namespace plexus::cpu {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// y[n*oh*ow, f_out] = patches * filter (conv_im2col.h), in blocks of at most
// 2^20 patch elements.
template <typename T>
void ConvNhwc(const T* x, const T* f, const ConvGeometry& g, T* y) {
  ConvNhwcBlocks(x, f, g, y, int64_t{1} << 20, [](T*, int64_t) {});
}

// y[n, i, j, c * m + q] = sum over the window of x[n, ih, iw, c] * f[a, b, c, q].
template <typename T>
void DepthwiseNhwc(const T* x, const T* f, const ConvGeometry& g, T* y) {
  using C = sdk::ComputeType<T>;
  const int64_t mult = g.f_out, out_c = g.c * g.f_out;
  const std::vector<C> filter(f, f + g.kh * g.kw * out_c);
  const int64_t rows = g.n * g.oh;
  // Output rows in parallel when there is enough work (OpenMP, the runtime
  // the GEMM library uses too; without it, one thread).
#pragma omp parallel for schedule(static) if (rows * g.ow * out_c * g.kh * g.kw > (int64_t{1} << 16))
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / g.oh, i = row % g.oh;
    std::vector<C> acc_storage(static_cast<size_t>(out_c));
    C* __restrict acc = acc_storage.data();
    for (int64_t j = 0; j < g.ow; ++j) {
      std::fill(acc, acc + out_c, C(0));
      for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t ih = i * g.sh - g.top + a * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (int64_t k = 0; k < g.kw; ++k) {
          const int64_t iw = j * g.sw - g.left + k * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          const T* __restrict src = x + ((b * g.h + ih) * g.w + iw) * g.c;
          const C* __restrict fp = filter.data() + (a * g.kw + k) * out_c;
          if (mult == 1) {
            for (int64_t c = 0; c < g.c; ++c) acc[c] += static_cast<C>(src[c]) * fp[c];
          } else {
            for (int64_t c = 0; c < g.c; ++c) {
              const C v = static_cast<C>(src[c]);
              for (int64_t q = 0; q < mult; ++q) acc[c * mult + q] += v * fp[c * mult + q];
            }
          }
        }
      }
      T* dst = y + ((b * g.oh + i) * g.ow + j) * out_c;
      for (int64_t o = 0; o < out_c; ++o) dst[o] = static_cast<T>(acc[o]);
    }
  }
}

template <bool kDepthwise>
class ConvKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, false); }
  void Compute(sdk::Call& call) override {
    const char* op = kDepthwise ? "DepthwiseConv2dNative" : "Conv2D";
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const ConvGeometry g = ConvGeometryOf(op, xs, fs, window_, kDepthwise);
    const bool nchw = window_.nchw;
    const int64_t out_c = kDepthwise ? g.c * g.f_out : g.f_out;
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{g.n, out_c, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, out_c};
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      auto conv = [&](const T* in, T* out) {
        if (kDepthwise) {
          DepthwiseNhwc<T>(in, f, g, out);
        } else {
          ConvNhwc<T>(in, f, g, out);
        }
      };
      if (!nchw) {
        conv(x, y);
        return;
      }
      const std::vector<T> x_nhwc = NchwToNhwc(x, g.n, g.c, g.h, g.w);
      std::vector<T> y_nhwc(static_cast<size_t>(sdk::NumElements(out_shape)));
      conv(x_nhwc.data(), y_nhwc.data());
      NhwcToNchw(y_nhwc.data(), g.n, g.oh, g.ow, out_c, y);
    };
    const PX_DataType t = call.input_dtype(0);
    if (!kDepthwise && t == PX_DT_INT32) {
      run(sdk::TypeTag<int32_t>{});
    } else {
      sdk::VisitFloat(t, run);
    }
  }

 private:
  Window window_;
};

}  // namespace

PX_Status* RegisterConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  std::vector<PX_DataType> conv = sdk::FloatTypes();
  conv.push_back(PX_DT_INT32);
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ConvKernel<false>>(info, registrar, "Conv2D", {{"T", conv}})) ||
      (s = sdk::RegisterKernel<ConvKernel<true>>(info, registrar, "DepthwiseConv2dNative",
                                                 {{"T", sdk::FloatTypes()}}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu
