// CPU kernels: DepthwiseConv2dNative and _FusedDepthwiseConv2dNative
// (the depthwise convolution + BiasAdd or inference FusedBatchNorm
// [+ activation], created by the graph optimizer).
//
// float goes first to oneDNN when the plugin is built with it
// (conv_onednn.h: a convolution with one group per input channel, the
// epilogue as post-ops), which was faster on every shape measured; the
// kernels below are for builds without oneDNN, geometries it refuses, and
// PX_CPU_DWCONV=direct.
//
// Otherwise float, channel multiplier 1: a direct NHWC kernel that
// vectorizes over channels (contiguous in NHWC) in 16-lane blocks, with the
// filter taps as the outer loops and a block of up to 8 output pixels of a
// row accumulated in registers. Each tap of each pixel reads through a
// pointer table built once per pixel block; taps that fall into the padding
// read a zero row, so borders, strides and dilations take the same loop. The
// epilogue (bias or batch norm, then Relu, Relu6 or LeakyRelu) runs on the
// registers before the store; Elu, Tanh and Sigmoid follow over the output
// row while it is in cache. The loop is compiled three times (AVX-512,
// AVX2 + FMA, and the build's baseline) and chosen at run time by the CPU.
//
// Everything else (double, the 16-bit floats computed in float, and float
// with channel multiplier > 1 when oneDNN does not take it): plain loops
// over a row's channels in the compute type, then the epilogue over the row.
//
// Output rows (batch x output height) run in parallel with OpenMP, as the
// rest of the plugin's own loops. NCHW inputs are transposed to NHWC and the
// result back.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/conv_im2col.h"
#include "kernels/conv_onednn.h"
#include "kernels/fused_epilogue.h"
#include "kernels/nn_window.h"
#include "kernels/vector16.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

#define PX_DW_INLINE inline __attribute__((always_inline))

// One float convolution with its epilogue, for the direct kernel.
struct DwArgs {
  const float* x;
  const float* f;  // [kh, kw, c]
  float* y;
  const float* zeros;  // c zeros: what padding taps read
  ConvGeometry g;
  RegisterEpilogue epilogue;  // vector16.h; the other activations run over the rows afterwards
};

// P output pixels of one row: ptrs[t * P + p] is where tap taps[t] of pixel
// p reads its c channels; y points at the first pixel's output.
template <int P>
PX_DW_INLINE void DwBlock(const DwArgs& a, const float* const* ptrs, const int64_t* taps,
                          int64_t ntaps, float* y) {
  const int64_t c = a.g.c;
  int64_t cb = 0;
  for (; cb + 16 <= c; cb += 16) {
    V16 acc[P];
    for (int p = 0; p < P; ++p) acc[p] = V16{};
    for (int64_t t = 0; t < ntaps; ++t) {
      const V16 fv = LoadV16(a.f + taps[t] * c + cb);
      const float* const* pp = ptrs + t * P;
      for (int p = 0; p < P; ++p) acc[p] += LoadV16(pp[p] + cb) * fv;
    }
    a.epilogue.ApplyEach<P, 1>(acc, cb);
    for (int p = 0; p < P; ++p) StoreV16(y + p * c + cb, acc[p]);
  }
  for (; cb < c; ++cb) {  // the channels after the last whole vector
    for (int p = 0; p < P; ++p) {
      float s = 0.f;
      for (int64_t t = 0; t < ntaps; ++t) s += ptrs[t * P + p][cb] * a.f[taps[t] * c + cb];
      y[p * c + cb] = a.epilogue.Apply(s, cb);
    }
  }
}

// The pixels [j, j + np) of output row (b, i), np <= P: builds the pointer
// table (taps entirely in the padding for every pixel are left out) and runs
// the block of exactly np pixels.
template <int P>
PX_DW_INLINE void DwPixels(const DwArgs& a, int64_t b, int64_t i, int64_t j, int np,
                           const float** ptrs, int64_t* taps) {
  if constexpr (P > 1) {
    if (np < P) {
      DwPixels<P - 1>(a, b, i, j, np, ptrs, taps);
      return;
    }
  }
  const ConvGeometry& g = a.g;
  int64_t ntaps = 0;
  for (int64_t r = 0; r < g.kh; ++r) {
    const int64_t ih = i * g.sh - g.top + r * g.dh;
    if (ih < 0 || ih >= g.h) continue;
    const float* row = a.x + (b * g.h + ih) * g.w * g.c;
    for (int64_t k = 0; k < g.kw; ++k) {
      bool any = false;
      const float** tp = ptrs + ntaps * P;
      for (int p = 0; p < P; ++p) {
        const int64_t iw = (j + p) * g.sw - g.left + k * g.dw;
        const bool inside = iw >= 0 && iw < g.w;
        tp[p] = inside ? row + iw * g.c : a.zeros;
        any |= inside;
      }
      if (any) taps[ntaps++] = r * g.kw + k;
    }
  }
  DwBlock<P>(a, ptrs, taps, ntaps, a.y + ((b * g.oh + i) * g.ow + j) * g.c);
}

// Output rows [r0, r1) of batch x output height, blocks of at most P pixels.
template <int P>
PX_DW_INLINE void DwRows(const DwArgs& a, int64_t r0, int64_t r1) {
  const ConvGeometry& g = a.g;
  std::vector<const float*> ptrs(static_cast<size_t>(g.kh * g.kw * P));
  std::vector<int64_t> taps(static_cast<size_t>(g.kh * g.kw));
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / g.oh, i = row % g.oh;
    for (int64_t j = 0; j < g.ow; j += P) {
      DwPixels<P>(a, b, i, j, static_cast<int>(std::min<int64_t>(P, g.ow - j)), ptrs.data(),
                  taps.data());
    }
  }
}

// The same loop for each instruction set: AVX-512 has 32 vector registers
// (8 pixels of 16 channels in 8 of them), AVX2 16 (4 pixels in 8 of them),
// the baseline SSE2 16 (2 pixels in 8 of them).
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void DwRowsAvx512(const DwArgs& a, int64_t r0,
                                                                      int64_t r1) {
  DwRows<8>(a, r0, r1);
}
__attribute__((target("avx2,fma"))) void DwRowsAvx2(const DwArgs& a, int64_t r0, int64_t r1) {
  DwRows<4>(a, r0, r1);
}
void DwRowsBaseline(const DwArgs& a, int64_t r0, int64_t r1) { DwRows<2>(a, r0, r1); }

using DwRowsFn = void (*)(const DwArgs&, int64_t, int64_t);

DwRowsFn SelectDwRows() {
  switch (WidestVectorIsa()) {
    case VectorIsa::kAvx512: return DwRowsAvx512;
    case VectorIsa::kAvx2: return DwRowsAvx2;
    default: return DwRowsBaseline;
  }
}

// True when the loop over `rows` rows of `per_row` multiply-adds is worth
// running on several threads.
bool Parallel(int64_t rows, int64_t per_row) { return rows > 1 && rows * per_row > (int64_t{1} << 15); }

// The direct float kernel (multiplier 1), rows in parallel.
void DepthwiseFloat(const DwArgs& a) {
  static const DwRowsFn rows_fn = SelectDwRows();
  const ConvGeometry& g = a.g;
  const int64_t rows = g.n * g.oh;
  const int64_t per_row = g.ow * g.c * g.kh * g.kw;
  const sdk::FusedActivation act = a.epilogue.act;
  const bool post = !RegisterEpilogue::IsPiecewiseLinear(act);
  const int64_t row_elements = g.ow * g.c;
  // Chunks of rows, a few per thread, so that a thread's output stays in
  // cache for the activations that run after the loop.
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(rows, 8192 / std::max<int64_t>(row_elements, 1)));
  const int64_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (Parallel(rows, per_row))
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t r0 = ci * chunk, r1 = std::min(rows, r0 + chunk);
    rows_fn(a, r0, r1);
    if (post) {
      float* y = a.y + r0 * row_elements;
      const int64_t n = (r1 - r0) * row_elements;
      switch (act) {
        case sdk::FusedActivation::kElu: ew::RunActivation(ew::Act::kElu, 0.f, false, y, y, n); break;
        case sdk::FusedActivation::kTanh: ew::RunUnary(ew::Un::kTanh, y, y, n); break;
        default: ew::RunUnary(ew::Un::kSigmoid, y, y, n); break;
      }
    }
  }
}

// The general kernel: y[n, i, j, c * m + q] = sum over the window of
// x[n, ih, iw, c] * f[a, b, c, q], a row at a time in the compute type, then
// the epilogue (when there is one) over the row.
template <typename T>
void DepthwiseGeneral(const T* x, const T* f, const ConvGeometry& g,
                      const Epilogue<sdk::ComputeType<T>>* epilogue, T* y) {
  using C = sdk::ComputeType<T>;
  const int64_t mult = g.f_out, out_c = g.c * g.f_out;
  const std::vector<C> filter(f, f + g.kh * g.kw * out_c);
  const int64_t rows = g.n * g.oh;
#pragma omp parallel for schedule(static) if (Parallel(rows, g.ow * out_c * g.kh * g.kw))
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / g.oh, i = row % g.oh;
    std::vector<C> acc_storage(static_cast<size_t>(g.ow * out_c));
    for (int64_t j = 0; j < g.ow; ++j) {
      C* __restrict acc = acc_storage.data() + j * out_c;
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
    }
    if (epilogue != nullptr) {
      // The 16-bit floats store the convolution in T before the epilogue
      // reads it, as the separate nodes (and _FusedConv2D) do.
      if constexpr (!std::is_same_v<T, C>) {
        for (C& v : acc_storage) v = static_cast<C>(static_cast<T>(v));
      }
      ApplyEpilogueChunk(*epilogue, acc_storage.data(), g.ow, out_c, static_cast<const C*>(nullptr));
    }
    T* dst = y + (b * g.oh + i) * g.ow * out_c;
    for (int64_t o = 0; o < g.ow * out_c; ++o) dst[o] = static_cast<T>(acc_storage[o]);
  }
}

// One NHWC depthwise convolution (+ epilogue) of T: float through oneDNN
// when `onednn` takes it, else the direct kernel.
template <typename T>
void DepthwiseNhwc(const T* x, const T* f, const ConvGeometry& g,
                   const Epilogue<sdk::ComputeType<T>>* epilogue, T* y, OneDnnConv* onednn) {
  if (g.n * g.oh * g.ow * g.c * g.f_out == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (onednn->RunDepthwise(g, x, f, epilogue, y)) return;
    if (g.f_out == 1) {
      const std::vector<float> zeros(static_cast<size_t>(g.c), 0.f);
      DwArgs a;
      a.x = x;
      a.f = f;
      a.y = y;
      a.zeros = zeros.data();
      a.g = g;
      if (epilogue != nullptr) {
        a.epilogue.shift = epilogue->shift.data();
        a.epilogue.mean = epilogue->batch_norm ? epilogue->mean.data() : nullptr;
        a.epilogue.factor = epilogue->batch_norm ? epilogue->factor.data() : nullptr;
        a.epilogue.act = epilogue->act;
        a.epilogue.alpha = epilogue->alpha;
      }
      DepthwiseFloat(a);
      return;
    }
  }
  DepthwiseGeneral<T>(x, f, g, epilogue, y);
}

// DepthwiseConv2dNative (kFused false) and _FusedDepthwiseConv2dNative.
template <bool kFused>
class DepthwiseKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp = kFused ? "_FusedDepthwiseConv2dNative" : "DepthwiseConv2dNative";

  void Init(sdk::Attrs& attrs) override {
    if (kFused) spec_ = sdk::ReadFusedSpec(attrs, kOp, /*allow_batch_norm=*/true);
    window_.Read(attrs, false);
    onednn_.set_constant_filter(sdk::ConstantInput(attrs, 1));
  }

  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const ConvGeometry g = ConvGeometryOf(kOp, xs, fs, window_, /*depthwise=*/true);
    const bool nchw = window_.nchw;
    const int64_t out_c = g.c * g.f_out;
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{g.n, out_c, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, out_c};
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      Epilogue<C> epilogue;
      if (kFused) epilogue = Epilogue<C>::template Make<T>(spec_, call, out_c, kOp);
      const Epilogue<C>* e = kFused ? &epilogue : nullptr;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      const int64_t out_size = sdk::NumElements(out_shape);
      // Rows of y are written while later rows still read x: an output that
      // shares memory with an input is computed in scratch.
      if (!nchw && !BuffersOverlap(x, sdk::NumElements(xs), y, out_size) &&
          !BuffersOverlap(f, sdk::NumElements(fs), y, out_size)) {
        DepthwiseNhwc<T>(x, f, g, e, y, &onednn_);
        return;
      }
      const std::vector<T> x_nhwc = nchw ? NchwToNhwc(x, g.n, g.c, g.h, g.w)
                                         : std::vector<T>(x, x + sdk::NumElements(xs));
      const std::vector<T> filter(f, f + sdk::NumElements(fs));
      std::vector<T> y_nhwc(static_cast<size_t>(out_size));
      DepthwiseNhwc<T>(x_nhwc.data(), filter.data(), g, e, y_nhwc.data(), &onednn_);
      if (nchw) {
        NhwcToNchw(y_nhwc.data(), g.n, g.oh, g.ow, out_c, y);
      } else {
        std::copy(y_nhwc.begin(), y_nhwc.end(), y);
      }
    });
  }

 private:
  sdk::FusedSpec spec_;
  Window window_;
  OneDnnConv onednn_;  // float: primitives per geometry
};

}  // namespace

PX_Status* RegisterDepthwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<DepthwiseKernel<false>>(
           info, registrar, sdk::sig::kDepthwiseConv2dNative, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<DepthwiseKernel<true>>(
           info, registrar, sdk::sig::kFusedDepthwiseConv2dNative, {sdk::FloatTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu
