// CPU kernels: the convolution gradients.
//
// float goes first to oneDNN's backward primitives when the plugin is built
// with oneDNN (conv_grad_onednn.h; depthwise as one group per channel).
// Otherwise, for geometries oneDNN refuses, and for the other types (half
// and bfloat16 computed in float, double, int32 for Conv2DBackpropInput):
//
// - Conv2DBackpropInput is the transposed convolution: for a block of whole
//   images, cols[rows, kh*kw*c] = dy[rows, f_out] * filter[kh*kw*c, f_out]^T
//   with the shared Gemm, then col2im adds each row's patch back into dx
//   (images in parallel). A 1x1 convolution with stride 1 and no padding is
//   one GEMM, dx = dy * filter^T; an input of at most 4 channels (a first
//   layer) is gathered per input pixel instead, float included (faster
//   than both the GEMM and oneDNN there).
// - Conv2DBackpropFilter is im2col + GEMM: for a block of output rows,
//   df += patches[rows, kh*kw*c]^T * dy[rows, f_out] (a 1x1 one:
//   df = x^T * dy).
// - The depthwise ones are direct loops over the output pixels' taps,
//   vectorizable over the channels (contiguous in NHWC): images in parallel,
//   the filter gradient with one partial sum per thread.
//
// Grouped convolutions (filter input depth c / groups) go to oneDNN as one
// grouped primitive, else one group at a time through the GEMM paths above
// (conv_groups.h).
//
// NCHW tensors are transposed to NHWC and the result back (the filter
// gradient is HWIO in either format).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/conv_grad_onednn.h"
#include "kernels/conv_groups.h"
#include "kernels/conv_im2col.h"
#include "kernels/fused_epilogue.h"
#include "kernels/linalg_gemm.h"
#include "kernels/nn_window.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace plexus::cpu {
namespace {

// The number of elements of scratch (patches or columns) one block may use.
constexpr int64_t kBlockElements = int64_t{1} << 22;

// True when a loop of `work` multiply-adds is worth several threads.
bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 15); }

// The compute type: float for the 16-bit floats, T otherwise.
template <typename T>
using C = sdk::ComputeType<T>;

// p[0, n) in the compute type: p itself when T is it, else a converted copy
// in `storage`.
template <typename T>
const C<T>* AsCompute(const T* p, int64_t n, std::vector<C<T>>* storage) {
  if constexpr (std::is_same_v<T, C<T>>) {
    return p;
  } else {
    storage->resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) (*storage)[i] = static_cast<C<T>>(p[i]);
    return storage->data();
  }
}

// The 1x1, stride 1, unpadded geometry whose input is its own patch matrix.
bool IsPointwise(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.top == 0 && g.left == 0 &&
         g.oh == g.h && g.ow == g.w;
}

// Adds image b's columns (rows oh*ow of kh*kw*c) into dx (NHWC).
template <typename V>
void Col2ImImage(const V* cols, const ConvGeometry& g, V* dx_image) {
  const int64_t depth = g.kh * g.kw * g.c;
  for (int64_t i = 0; i < g.oh; ++i) {
    for (int64_t j = 0; j < g.ow; ++j) {
      const V* src = cols + (i * g.ow + j) * depth;
      for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t ih = i * g.sh - g.top + a * g.dh;
        if (ih < 0 || ih >= g.h) {
          src += g.kw * g.c;
          continue;
        }
        V* row = dx_image + ih * g.w * g.c;
        for (int64_t k = 0; k < g.kw; ++k, src += g.c) {
          const int64_t iw = j * g.sw - g.left + k * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          V* __restrict dst = row + iw * g.c;
          for (int64_t c = 0; c < g.c; ++c) dst[c] += src[c];
        }
      }
    }
  }
}

// Few input channels (a first layer): dx gathered per input pixel, each
// element a sum of (tap) dot products of an out_backprop pixel with a
// filter row (contiguous over the output channels in HWIO). The column
// matrix of the GEMM path would be as wide as the (narrow) input here.
constexpr int64_t kGatherMaxChannels = 4;

// Input rows [r0, r1) of batch x height.
template <typename V>
inline __attribute__((always_inline)) void GatherRows(const V* f, const V* dy,
                                                      const ConvGeometry& g, V* dx, int64_t r0,
                                                      int64_t r1) {
  // columns[iw * kw + k]: the output column whose tap k reads input column
  // iw, or -1 (no divisions in the loop).
  std::vector<int64_t> columns(static_cast<size_t>(g.w * g.kw));
  for (int64_t iw = 0; iw < g.w; ++iw) {
    for (int64_t k = 0; k < g.kw; ++k) {
      const int64_t tj = iw + g.left - k * g.dw;
      columns[iw * g.kw + k] = tj < 0 || tj % g.sw != 0 || tj / g.sw >= g.ow ? -1 : tj / g.sw;
    }
  }
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / g.h, ih = row % g.h;
    V* out = dx + row * g.w * g.c;
    // The products summed elementwise over the taps for the whole row
    // (tap outer, pixel inner: consecutive updates are independent), then
    // one reduction over the output channels per input element.
    const int64_t per_pixel = g.c * g.f_out;
    std::vector<V> acc_storage(static_cast<size_t>(g.w * per_pixel));
    V* __restrict acc = acc_storage.data();
    std::fill(acc, acc + g.w * per_pixel, V(0));
    for (int64_t a = 0; a < g.kh; ++a) {
      const int64_t ti = ih + g.top - a * g.dh;
      if (ti < 0 || ti % g.sh != 0 || ti / g.sh >= g.oh) continue;
      const V* dy_row = dy + (b * g.oh + ti / g.sh) * g.ow * g.f_out;
      for (int64_t k = 0; k < g.kw; ++k) {
        const V* __restrict fp = f + (a * g.kw + k) * per_pixel;
        for (int64_t iw = 0; iw < g.w; ++iw) {
          const int64_t j = columns[iw * g.kw + k];
          if (j < 0) continue;
          const V* __restrict d = dy_row + j * g.f_out;
          V* __restrict ac = acc + iw * per_pixel;
          for (int64_t c = 0; c < g.c; ++c) {
            for (int64_t o = 0; o < g.f_out; ++o) ac[c * g.f_out + o] += d[o] * fp[c * g.f_out + o];
          }
        }
      }
    }
    for (int64_t e = 0; e < g.w * g.c; ++e) {
      const V* ac = acc + e * g.f_out;
      V s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t o = 0; o < g.f_out; ++o) s += ac[o];
      out[e] = s;
    }
  }
}

// float's loop compiled for AVX-512 and AVX2 too (the plugin's baseline is
// SSE2), chosen at run time by the CPU, as depthwise_conv.cc does.
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void GatherRowsAvx512(
    const float* f, const float* dy, const ConvGeometry& g, float* dx, int64_t r0, int64_t r1) {
  GatherRows(f, dy, g, dx, r0, r1);
}
__attribute__((target("avx2,fma"))) void GatherRowsAvx2(const float* f, const float* dy,
                                                        const ConvGeometry& g, float* dx,
                                                        int64_t r0, int64_t r1) {
  GatherRows(f, dy, g, dx, r0, r1);
}
void GatherRowsBaseline(const float* f, const float* dy, const ConvGeometry& g, float* dx,
                        int64_t r0, int64_t r1) {
  GatherRows(f, dy, g, dx, r0, r1);
}
using GatherRowsFn = void (*)(const float*, const float*, const ConvGeometry&, float*, int64_t,
                              int64_t);
GatherRowsFn SelectGatherRows() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    return GatherRowsAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return GatherRowsAvx2;
  return GatherRowsBaseline;
}

template <typename V>
void BackpropInputGather(const V* f, const V* dy, const ConvGeometry& g, V* dx) {
  const int64_t rows = g.n * g.h;
  const int64_t chunk = 8;
  const int64_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) \
    if (Parallel(chunks, rows * g.w * g.c * g.kh * g.kw * g.f_out))
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t r0 = ci * chunk, r1 = std::min(rows, r0 + chunk);
    if constexpr (std::is_same_v<V, float>) {
      static const GatherRowsFn fn = SelectGatherRows();
      fn(f, dy, g, dx, r0, r1);
    } else {
      GatherRows(f, dy, g, dx, r0, r1);
    }
  }
}

// dx = the transposed convolution of dy with f (NHWC, f HWIO), in V.
template <typename V>
void BackpropInputNhwc(const V* f, const V* dy, const ConvGeometry& g, V* dx) {
  const int64_t image = g.h * g.w * g.c;
  const int64_t pixels = g.oh * g.ow;
  const int64_t depth = g.kh * g.kw * g.c;
  if (IsPointwise(g)) {
    Gemm<V>(false, true, g.n * pixels, g.c, g.f_out, dy, f, dx);
    return;
  }
  if (g.c <= kGatherMaxChannels) {
    BackpropInputGather(f, dy, g, dx);
    return;
  }
  std::fill(dx, dx + g.n * image, V(0));
  if (pixels == 0 || depth == 0) return;
  const int64_t per_image = pixels * depth;
  const int64_t block = std::max<int64_t>(1, std::min(g.n, kBlockElements / per_image));
  std::vector<V> cols(static_cast<size_t>(block * per_image));
  for (int64_t b0 = 0; b0 < g.n; b0 += block) {
    const int64_t nb = std::min(block, g.n - b0);
    Gemm<V>(false, true, nb * pixels, depth, g.f_out, dy + b0 * pixels * g.f_out, f,
            cols.data());
#pragma omp parallel for schedule(static) if (Parallel(nb, nb * per_image))
    for (int64_t b = 0; b < nb; ++b) {
      Col2ImImage(cols.data() + b * per_image, g, dx + (b0 + b) * image);
    }
  }
}

// Rows [r0, r0 + nr) of the patch matrix of x (NHWC).
template <typename V>
void Im2ColRows(const V* x, const ConvGeometry& g, int64_t r0, int64_t nr, V* patches) {
  const int64_t depth = g.kh * g.kw * g.c;
#pragma omp parallel for schedule(static) if (Parallel(nr, nr * depth))
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const int64_t b = r / (g.oh * g.ow);
    const int64_t i = (r / g.ow) % g.oh;
    const int64_t j = r % g.ow;
    V* dst = patches + (r - r0) * depth;
    const int64_t w0 = j * g.sw - g.left;
    const bool row_inside = g.dw == 1 && w0 >= 0 && w0 + g.kw <= g.w;
    for (int64_t a = 0; a < g.kh; ++a) {
      const int64_t ih = i * g.sh - g.top + a * g.dh;
      if (ih < 0 || ih >= g.h) {
        std::fill(dst, dst + g.kw * g.c, V(0));
        dst += g.kw * g.c;
        continue;
      }
      const V* src_row = x + ((b * g.h + ih) * g.w) * g.c;
      if (row_inside) {
        std::copy(src_row + w0 * g.c, src_row + (w0 + g.kw) * g.c, dst);
        dst += g.kw * g.c;
        continue;
      }
      for (int64_t k = 0; k < g.kw; ++k, dst += g.c) {
        const int64_t iw = w0 + k * g.dw;
        if (iw < 0 || iw >= g.w) {
          std::fill(dst, dst + g.c, V(0));
        } else {
          std::copy(src_row + iw * g.c, src_row + (iw + 1) * g.c, dst);
        }
      }
    }
  }
}

// df[kh*kw*c, f_out] = patches(x)^T * dy, in V.
template <typename V>
void BackpropFilterNhwc(const V* x, const V* dy, const ConvGeometry& g, V* df) {
  const int64_t rows = g.n * g.oh * g.ow;
  const int64_t depth = g.kh * g.kw * g.c;
  if (IsPointwise(g)) {
    Gemm<V>(true, false, g.c, g.f_out, rows, x, dy, df);  // k == 0 gives zeros
    return;
  }
  if (rows == 0 || depth == 0) {
    std::fill(df, df + depth * g.f_out, V(0));
    return;
  }
  const int64_t block = std::max<int64_t>(1, std::min(rows, kBlockElements / depth));
  std::vector<V> patches(static_cast<size_t>(block * depth));
  std::vector<V> partial;
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t nr = std::min(block, rows - r0);
    Im2ColRows(x, g, r0, nr, patches.data());
    if (r0 == 0) {
      Gemm<V>(true, false, depth, g.f_out, nr, patches.data(), dy, df);
    } else {
      partial.resize(static_cast<size_t>(depth * g.f_out));
      Gemm<V>(true, false, depth, g.f_out, nr, patches.data(), dy + r0 * g.f_out,
              partial.data());
      for (int64_t e = 0; e < depth * g.f_out; ++e) df[e] += partial[e];
    }
  }
}

// Depthwise, gradient with respect to the input: dx[n, ih, iw, c] = sum of
// dy[n, i, j, c * m + q] * f[a, k, c, q] over the pixels and taps reading it.
template <typename V>
void DepthwiseBackpropInputNhwc(const V* f, const V* dy, const ConvGeometry& g, V* dx) {
  const int64_t mult = g.f_out, out_c = g.c * mult;
  const int64_t image = g.h * g.w * g.c;
  std::fill(dx, dx + g.n * image, V(0));
#pragma omp parallel for schedule(static) \
    if (Parallel(g.n, g.n * g.oh * g.ow * g.kh * g.kw * out_c))
  for (int64_t b = 0; b < g.n; ++b) {
    V* dx_image = dx + b * image;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        const V* __restrict src = dy + ((b * g.oh + i) * g.ow + j) * out_c;
        for (int64_t a = 0; a < g.kh; ++a) {
          const int64_t ih = i * g.sh - g.top + a * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          for (int64_t k = 0; k < g.kw; ++k) {
            const int64_t iw = j * g.sw - g.left + k * g.dw;
            if (iw < 0 || iw >= g.w) continue;
            V* __restrict dst = dx_image + (ih * g.w + iw) * g.c;
            const V* __restrict fp = f + (a * g.kw + k) * out_c;
            if (mult == 1) {
              for (int64_t c = 0; c < g.c; ++c) dst[c] += src[c] * fp[c];
            } else {
              for (int64_t c = 0; c < g.c; ++c) {
                V s = 0;
                for (int64_t q = 0; q < mult; ++q) s += src[c * mult + q] * fp[c * mult + q];
                dst[c] += s;
              }
            }
          }
        }
      }
    }
  }
}

// Depthwise, gradient with respect to the filter: df[a, k, c, q] = sum of
// x[n, ih, iw, c] * dy[n, i, j, c * m + q]; each thread sums a share of the
// images into its own copy, then the copies are added.
template <typename V>
void DepthwiseBackpropFilterNhwc(const V* x, const V* dy, const ConvGeometry& g, V* df) {
  const int64_t mult = g.f_out, out_c = g.c * mult;
  const int64_t fsize = g.kh * g.kw * out_c;
  std::fill(df, df + fsize, V(0));
  int threads = 1;
#if defined(_OPENMP)
  if (Parallel(g.n, g.n * g.oh * g.ow * g.kh * g.kw * out_c)) threads = omp_get_max_threads();
#endif
  threads = static_cast<int>(std::min<int64_t>(threads, std::max<int64_t>(g.n, 1)));
  std::vector<V> sums(static_cast<size_t>(threads) * fsize, V(0));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int t = 0; t < threads; ++t) {
    V* acc = sums.data() + t * fsize;
    for (int64_t b = t; b < g.n; b += threads) {
      for (int64_t i = 0; i < g.oh; ++i) {
        for (int64_t j = 0; j < g.ow; ++j) {
          const V* __restrict d = dy + ((b * g.oh + i) * g.ow + j) * out_c;
          for (int64_t a = 0; a < g.kh; ++a) {
            const int64_t ih = i * g.sh - g.top + a * g.dh;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t k = 0; k < g.kw; ++k) {
              const int64_t iw = j * g.sw - g.left + k * g.dw;
              if (iw < 0 || iw >= g.w) continue;
              const V* __restrict src = x + ((b * g.h + ih) * g.w + iw) * g.c;
              V* __restrict dst = acc + (a * g.kw + k) * out_c;
              if (mult == 1) {
                for (int64_t c = 0; c < g.c; ++c) dst[c] += src[c] * d[c];
              } else {
                for (int64_t c = 0; c < g.c; ++c) {
                  for (int64_t q = 0; q < mult; ++q) dst[c * mult + q] += src[c] * d[c * mult + q];
                }
              }
            }
          }
        }
      }
    }
  }
  for (int t = 0; t < threads; ++t) {
    const V* acc = sums.data() + t * fsize;
    for (int64_t e = 0; e < fsize; ++e) df[e] += acc[e];
  }
}

// The sizes input (index i) as a shape.
sdk::Shape SizesInput(sdk::Call& call, size_t i, const char* name) {
  PX_SDK_CHECK(call.input_rank(i) == 1 && call.input_size(i) == 4,
               "%s must be a vector of 4 elements, got shape %s", name,
               sdk::ShapeString(call.input_shape(i)).c_str());
  return call.input_int_values(i);
}

// kFilter false: the gradient with respect to the input (inputs
// input_sizes, filter, out_backprop); true: with respect to the filter
// (inputs input, filter_sizes, out_backprop).
template <bool kFilter, bool kDepthwise>
class ConvGradKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp =
      kDepthwise ? (kFilter ? "DepthwiseConv2dNativeBackpropFilter"
                            : "DepthwiseConv2dNativeBackpropInput")
                 : (kFilter ? "Conv2DBackpropFilter" : "Conv2DBackpropInput");

  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, false); }

  void Compute(sdk::Call& call) override {
    const sdk::Shape sizes =
        SizesInput(call, kFilter ? 1 : 0, kFilter ? "filter_sizes" : "input_sizes");
    for (int64_t d : sizes) {
      PX_SDK_CHECK(d >= 0, "%s must be non-negative, got %s",
                   kFilter ? "filter_sizes" : "input_sizes", sdk::ShapeString(sizes).c_str());
    }
    const sdk::Shape xs = kFilter ? call.input_shape(0) : sizes;
    const sdk::Shape fs = kFilter ? sizes : call.input_shape(1);
    const sdk::Shape dys = call.input_shape(2);
    PX_SDK_CHECK(dys.size() == 4, "%s out_backprop must be 4-D, got %s", kOp,
                 sdk::ShapeString(dys).c_str());
    const ConvGeometry g = ConvGeometryOf(kOp, xs, fs, window_, kDepthwise);
    const bool nchw = window_.nchw;
    const int64_t out_c = kDepthwise ? g.c * g.f_out : g.f_out;
    const sdk::Shape expected =
        nchw ? sdk::Shape{g.n, out_c, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, out_c};
    PX_SDK_CHECK(dys == expected,
                 "out_backprop must have shape %s (the output of the forward convolution of "
                 "input %s with filter %s), got %s",
                 sdk::ShapeString(expected).c_str(), sdk::ShapeString(xs).c_str(),
                 sdk::ShapeString(fs).c_str(), sdk::ShapeString(dys).c_str());
    const PX_DataType t = call.input_dtype(2);
    if (t == PX_DT_INT32) {
      Run<int32_t>(call, g, xs, fs, dys);
    } else {
      sdk::VisitFloat(t, [&](auto tag) { Run<typename decltype(tag)::type>(call, g, xs, fs, dys); });
    }
  }

 private:
  template <typename T>
  void Run(sdk::Call& call, const ConvGeometry& g, const sdk::Shape& xs, const sdk::Shape& fs,
           const sdk::Shape& dys) {
    using V = C<T>;
    const bool nchw = window_.nchw;
    const int64_t out_c = kDepthwise ? g.c * g.f_out : g.f_out;
    const int64_t x_size = sdk::NumElements(xs), f_size = sdk::NumElements(fs);
    const int64_t dy_size = sdk::NumElements(dys);
    const T* other = call.input<T>(kFilter ? 0 : 1);  // x or the filter
    const T* dy_in = call.input<T>(2);
    T* out = call.AllocateOutput<T>(0, kFilter ? fs : xs);
    const int64_t out_size = kFilter ? f_size : x_size;
    if (out_size == 0) return;
    // NHWC inputs in the compute type (copies only where needed).
    std::vector<T> dy_t, x_t;
    const T* dy_nhwc = dy_in;
    if (nchw) {
      dy_t = NchwToNhwc(dy_in, g.n, out_c, g.oh, g.ow);
      dy_nhwc = dy_t.data();
    }
    const T* other_nhwc = other;
    if (kFilter && nchw) {
      x_t = NchwToNhwc(other, g.n, g.c, g.h, g.w);
      other_nhwc = x_t.data();
    }
    std::vector<V> dy_v, other_v;
    const V* dy = AsCompute(dy_nhwc, dy_size, &dy_v);
    const V* in = AsCompute(other_nhwc, kFilter ? x_size : f_size, &other_v);
    // The result, NHWC (or HWIO), in the compute type: straight into the
    // output when that is possible and does not overlap an input.
    const bool direct = std::is_same_v<T, V> && !(nchw && !kFilter) &&
                        !BuffersOverlap(other, kFilter ? x_size : f_size, out, out_size) &&
                        !BuffersOverlap(dy_in, dy_size, out, out_size);
    std::vector<V> result_storage;
    V* result;
    if (direct) {
      result = reinterpret_cast<V*>(out);
    } else {
      result_storage.resize(static_cast<size_t>(out_size));
      result = result_storage.data();
    }
    bool done = false;
    // oneDNN's backward data was slower than the gather kernel below on
    // inputs of few channels (a first layer: 1 -> 16 channels, 28x28).
    const bool gather = !kDepthwise && !kFilter && g.c <= kGatherMaxChannels && g.groups == 1;
    if constexpr (std::is_same_v<V, float> && std::is_same_v<T, float>) {
      if (!gather) done = kFilter ? onednn_.BackwardWeights(g, kDepthwise, in, dy, result)
                     : onednn_.BackwardData(g, kDepthwise, in, dy, result);
    }
    if (!done) {
      if (kDepthwise) {
        if (kFilter) {
          DepthwiseBackpropFilterNhwc(in, dy, g, result);
        } else {
          DepthwiseBackpropInputNhwc(in, dy, g, result);
        }
      } else {
        OwnBackprop(in, dy, g, result);
      }
    }
    if (direct) return;
    if (nchw && !kFilter) {
      if constexpr (std::is_same_v<T, V>) {
        NhwcToNchw(result, g.n, g.h, g.w, g.c, out);
      } else {
        std::vector<T> converted(result_storage.begin(), result_storage.end());
        NhwcToNchw(converted.data(), g.n, g.h, g.w, g.c, out);
      }
    } else {
      for (int64_t e = 0; e < out_size; ++e) out[e] = static_cast<T>(result[e]);
    }
  }

  // The plugin's own GEMM path for Conv2D's gradients, a group at a time
  // for a grouped convolution. in is the filter (kFilter false) or x.
  template <typename V>
  static void OwnBackprop(const V* in, const V* dy, const ConvGeometry& g, V* result) {
    if (g.groups > 1) {
      using Op = ConvOperand;
      ForEachGroup(g, kFilter ? Op::kInput : Op::kFilter, in, Op::kOutput, dy,
                   kFilter ? Op::kFilter : Op::kInput, result,
                   [](const ConvGeometry& sub, const V* in_g, const V* dy_g, V* result_g) {
                     OwnBackprop(in_g, dy_g, sub, result_g);
                   });
    } else if (kFilter) {
      BackpropFilterNhwc(in, dy, g, result);
    } else {
      BackpropInputNhwc(in, dy, g, result);
    }
  }

  Window window_;
  OneDnnConvGrad onednn_;  // float: primitives per geometry
};

}  // namespace

PX_Status* RegisterConvGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  std::vector<PX_DataType> input_types = sdk::FloatTypes();
  input_types.push_back(PX_DT_INT32);
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ConvGradKernel<false, false>>(
           info, registrar, sdk::sig::kConv2DBackpropInput, {input_types})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<true, false>>(
           info, registrar, sdk::sig::kConv2DBackpropFilter, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<false, true>>(
           info, registrar, sdk::sig::kDepthwiseConv2dNativeBackpropInput, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<true, true>>(
           info, registrar, sdk::sig::kDepthwiseConv2dNativeBackpropFilter, {sdk::FloatTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu
