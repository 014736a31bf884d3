// The im2col convolution shared by Conv2D (nn_conv.cc) and _FusedConv2D
// (fused_conv.cc): NHWC patches of a block of output rows at a time,
// multiplied by the [kh*kw*c, f_out] filter with the shared Gemm; 1x1
// convolutions with stride 1 and no padding skip the patches (one GEMM over
// the whole input). After each
// block's product, on_block(y_block, rows) runs while the block is still in
// cache (the fused kernels apply their epilogue there).
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_CONV_IM2COL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_CONV_IM2COL_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/linalg_gemm.h"
#include "plexus/sdk/kernel.h"
#include "threading.h"
#include "plexus/sdk/conv_grouping.h"
#include "plexus/sdk/window.h"

namespace plexus::cpu {

// Geometry of one NHWC convolution.
struct ConvGeometry {
  int64_t n, h, w, c;      // input
  int64_t kh, kw, f_out;   // filter [kh, kw, c / groups, f_out]
  int64_t oh, ow, top, left;
  int64_t sh, sw, dh, dw;
  // A grouped convolution (Keras' Conv2D(groups=...)): input channels
  // [k * c / groups, (k + 1) * c / groups) feed output channels
  // [k * f_out / groups, (k + 1) * f_out / groups) only. Depthwise
  // geometries keep 1 (their grouping is implied).
  int64_t groups = 1;
};

// The geometry of `op` on input shape `xs` and filter shape `fs` (4-D each;
// NCHW inputs are described as the NHWC they are transposed to). A depthwise
// filter's depth must equal the input's; a regular one's must divide it
// (the quotient is the number of groups, which must divide the filter's
// output depth, as TensorFlow checks).
inline ConvGeometry ConvGeometryOf(const char* op, const sdk::Shape& xs, const sdk::Shape& fs,
                                   const sdk::Window& window, bool depthwise) {
  PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op, sdk::ShapeString(xs).c_str());
  PX_SDK_CHECK(fs.size() == 4, "%s filter must be 4-D, got %s", op, sdk::ShapeString(fs).c_str());
  const bool nchw = window.nchw;
  ConvGeometry g;
  g.n = xs[0];
  g.c = xs[nchw ? 1 : 3];
  g.h = xs[nchw ? 2 : 1];
  g.w = xs[nchw ? 3 : 2];
  g.kh = fs[0];
  g.kw = fs[1];
  g.f_out = fs[3];
  if (depthwise) {
    PX_SDK_CHECK(g.c == fs[2], "input depth %lld must equal the filter depth %lld",
                 static_cast<long long>(g.c), static_cast<long long>(fs[2]));
  } else {
    g.groups = sdk::ConvGroups(op, g.c, fs[2], g.f_out);
  }
  g.sh = window.sh;
  g.sw = window.sw;
  g.dh = window.dh;
  g.dw = window.dw;
  window.Output(g.h, g.kh, g.sh, g.dh, window.pad_top, window.pad_bottom, &g.oh, &g.top);
  window.Output(g.w, g.kw, g.sw, g.dw, window.pad_left, window.pad_right, &g.ow, &g.left);
  return g;
}

// Whether g's input already is its patch matrix [n*h*w, c]: a 1x1 filter,
// stride 1, no padding.
inline bool InputIsPatchMatrix(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.top == 0 && g.left == 0 &&
         g.oh == g.h && g.ow == g.w;
}

// Rows [r0, r0 + nr) of g's patch matrix [n*oh*ow, kh*kw*c] (a row is one
// output pixel's receptive field in HWC order, zeros where it falls in the
// padding) into dst, row-major.
template <typename T>
void GatherPatches(const T* x, const ConvGeometry& g, int64_t r0, int64_t nr, T* dst) {
  const T zero = static_cast<T>(0);
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const int64_t b = r / (g.oh * g.ow);
    const int64_t i = (r / g.ow) % g.oh;
    const int64_t j = r % g.ow;
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
}

// y[n*oh*ow, f_out] = patches[n*oh*ow, kh*kw*c] * filter[kh*kw*c, f_out].
// `scratch_elements` bounds the patches of one block.
template <typename T, typename OnBlock>
void ConvNhwcBlocks(const T* x, const T* f, const ConvGeometry& g, T* y, int64_t scratch_elements,
                    OnBlock on_block) {
  const int64_t rows = g.n * g.oh * g.ow;
  const int64_t depth = g.kh * g.kw * g.c;
  if (rows == 0 || g.f_out == 0) return;
  const int64_t block = std::max<int64_t>(1, std::min(rows, scratch_elements / std::max<int64_t>(depth, 1)));
  if (InputIsPatchMatrix(g)) {
    // 1x1, stride 1, no padding: the input already is the patch matrix
    // [n*h*w, c], so one GEMM over every row (a single parallel region of
    // the library, no patch copies), then on_block over the whole output.
    Gemm<T>(false, false, rows, g.f_out, g.c, x, f, y);
    on_block(y, rows);
    return;
  }
  // Float with a team of several threads and enough work (1M multiply-adds;
  // kws_cnn_s's second layer at batch 1 has 2.1M: 58 -> 54 us on two
  // threads, 3.8 -> 3.0 ms at batch 64): the blocks are split among the
  // threads, each gathering its own patches and running its block's product
  // on itself (a GEMM called inside a parallel region runs on its calling
  // thread) and on_block after it. The gathering then runs in parallel too,
  // and narrow products (few output channels), which the library splits
  // poorly between threads, get whole blocks per thread.
  const int team = TeamSize();
  if constexpr (std::is_same_v<T, float>) {
    if (team > 1 && rows >= 2 * team && rows * depth * g.f_out >= (int64_t{1} << 20)) {
      // Blocks of at most 64K patch elements here (a quarter of the serial
      // path's): each thread's patches and product then stay in its core's
      // L2 cache.
      const int64_t small = std::max<int64_t>(1, std::min(block, (int64_t{1} << 16) / std::max<int64_t>(depth, 1)));
      const int64_t per_thread = (rows + small * team - 1) / (small * team);
      const int64_t blocks = per_thread * team;
      const int64_t pblock = (rows + blocks - 1) / blocks;
      std::vector<T> scratch(static_cast<size_t>(team * pblock * depth));
#pragma omp parallel for schedule(static) num_threads(team)
      for (int64_t bi = 0; bi < blocks; ++bi) {
        const int64_t r0 = bi * pblock;
        if (r0 >= rows) continue;
        const int64_t nr = std::min(pblock, rows - r0);
        T* patches = scratch.data() + static_cast<int64_t>(ThreadIndex()) * pblock * depth;
        GatherPatches(x, g, r0, nr, patches);
        Gemm<T>(false, false, nr, g.f_out, depth, patches, f, y + r0 * g.f_out);
        on_block(y + r0 * g.f_out, nr);
      }
      return;
    }
  }
  std::vector<T> patches(static_cast<size_t>(block * depth));
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t nr = std::min(block, rows - r0);
    GatherPatches(x, g, r0, nr, patches.data());
    Gemm<T>(false, false, nr, g.f_out, depth, patches.data(), f, y + r0 * g.f_out);
    on_block(y + r0 * g.f_out, nr);
  }
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_CONV_IM2COL_H_
