// SmallDepthConv (conv_small_depth.h): the direct convolution for inputs of
// at most 4 channels, used for one (Prefer).
//
// The filter is packed once into blocks of 16 output channels,
// [block][tap][16] with a tap = (row, column, input channel) of the window
// and zeros past the last channel. A block of P output pixels (taken in
// order over batch x height x width, so a block may span output rows and
// images) keeps P x V vectors of 16 output channels in registers; each tap
// loads V filter vectors and broadcasts one input value per pixel. Every
// pixel reads its tap at the same offset from its own window's corner, so
// strides and dilations cost nothing; a padded convolution first copies the
// (small) input into a zero-bordered buffer. The per-channel step and the
// piecewise-linear activations run on the registers; the addend and the
// other activations (fused_epilogue.h) over each chunk of pixels while it
// is in cache.
//
// The loop is compiled three times (AVX-512: 24 accumulators, AVX2 + FMA:
// 6 vectors of 16, the baseline: 3) and chosen at run time by the CPU, as
// the direct depthwise kernel is (depthwise_conv.cc).
//
// kws_cnn_s's first layer (49x10x1 -> 40x7x28, 10x4) at batch 64, one
// thread: 672 us against oneDNN's brgconv 1307 (ONNX Runtime: 600);
// plugins/cpu/README.md has the other shapes, and those where oneDNN stays
// ahead (2 and 3 channels).
#include "kernels/conv_small_depth.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/vector16.h"
#include "threading.h"

namespace plexus::cpu {
namespace {

#define PX_SD_INLINE inline __attribute__((always_inline))

constexpr int64_t kLanes = 16;

struct SdArgs {
  const float* x;          // NHWC input, zero-bordered when the convolution pads
  int64_t img_stride = 0;  // floats per image of x
  int64_t row_stride = 0;  // floats per row of x
  const float* wp;         // packed filter [blocks][taps][16]
  const int64_t* tap_off;  // taps offsets from a window's corner in x
  int64_t taps = 0;
  float* y;  // NHWC output
  int64_t f_out = 0, blocks = 0;
  int64_t ow = 0, oh = 0, sh = 0, sw = 0, c = 0;
  // The epilogue's part done on the registers (its arrays padded to whole
  // blocks); the rest runs over the output afterwards.
  RegisterEpilogue epilogue;
};

// P pixels (window corners at bases[p], outputs from y0 on, f_out apart)
// times V channel blocks from block b0 on.
template <int P, int V>
PX_SD_INLINE void SdBlock(const SdArgs& a, const float* const* bases, int64_t b0, float* y0) {
  V16 acc[P][V];
  for (int p = 0; p < P; ++p) {
    for (int v = 0; v < V; ++v) acc[p][v] = V16{};
  }
  const float* w0 = a.wp + b0 * a.taps * kLanes;
  const int64_t wstride = a.taps * kLanes;
  for (int64_t t = 0; t < a.taps; ++t) {
    const int64_t off = a.tap_off[t];
    V16 wv[V];
    for (int v = 0; v < V; ++v) wv[v] = LoadV16(w0 + v * wstride + t * kLanes);
    for (int p = 0; p < P; ++p) {
      const V16 xb = bases[p][off] - V16{};  // a broadcast (x - 0 is x, even for -0)
      for (int v = 0; v < V; ++v) acc[p][v] += xb * wv[v];
    }
  }
  for (int v = 0; v < V; ++v) a.epilogue.ApplyEach<P, V>(&acc[0][v], (b0 + v) * kLanes);
  // A partial last block is stored whole when the next pixel's stores, in
  // this same block and later, cover what it spills over: only when these
  // V blocks are all of the pixel's channels. The block's last pixel stores
  // its tail lane by lane.
  const bool spill_ok = b0 == 0 && V == a.blocks;
  for (int p = 0; p < P; ++p) {
    float* yp = y0 + p * a.f_out;
    for (int v = 0; v < V; ++v) {
      const int64_t ch = (b0 + v) * kLanes;
      const int64_t valid = a.f_out - ch;
      if (valid >= kLanes || (spill_ok && p + 1 < P)) {
        StoreV16(yp + ch, acc[p][v]);
      } else {
        for (int64_t l = 0; l < valid; ++l) yp[ch + l] = acc[p][v][l];
      }
    }
  }
}

// np <= P pixels from bases, blocks [b0, b0 + V).
template <int P, int V>
PX_SD_INLINE void SdPixels(const SdArgs& a, const float* const* bases, int np, int64_t b0, float* y0) {
  if constexpr (P > 1) {
    if (np < P) {
      SdPixels<P - 1, V>(a, bases, np, b0, y0);
      return;
    }
  }
  SdBlock<P, V>(a, bases, b0, y0);
}

// Output pixels [q0, q1) of batch x height x width; P1..P4: the pixels per
// block for 1..4 channel blocks at once.
template <int P1, int P2, int P3, int P4>
PX_SD_INLINE void SdRange(const SdArgs& a, int64_t q0, int64_t q1) {
  constexpr int kMaxP = P1 > P2 ? P1 : P2;
  const float* bases[kMaxP];
  // The next pixel's coordinates, advanced one by one (no divisions in the
  // loop: a pixel's window is only a few dozen multiply-adds per channel block).
  const int64_t plane = a.oh * a.ow;
  int64_t n = q0 / plane, i = (q0 % plane) / a.ow, j = q0 % a.ow;
  const float* row = a.x + n * a.img_stride + i * a.sh * a.row_stride;
  for (int64_t q = q0; q < q1;) {
    const int64_t left = q1 - q;
    int np = static_cast<int>(left < kMaxP ? left : kMaxP);
    // Fewer channel blocks take longer pixel blocks: the pixel count is
    // that of the widest group the row needs.
    const int64_t widest = a.blocks >= 4 ? 4 : a.blocks;
    const int cap = widest == 1 ? P1 : widest == 2 ? P2 : widest == 3 ? P3 : P4;
    if (np > cap) np = cap;
    for (int p = 0; p < np; ++p) {
      bases[p] = row + j * a.sw * a.c;
      if (++j == a.ow) {
        j = 0;
        if (++i == a.oh) {
          i = 0;
          ++n;
        }
        row = a.x + n * a.img_stride + i * a.sh * a.row_stride;
      }
    }
    float* y0 = a.y + q * a.f_out;
    for (int64_t b = 0; b < a.blocks; b += 4) {
      switch (a.blocks - b >= 4 ? 4 : a.blocks - b) {
        case 1: SdPixels<P1, 1>(a, bases, np, b, y0); break;
        case 2: SdPixels<P2, 2>(a, bases, np, b, y0); break;
        case 3: SdPixels<P3, 3>(a, bases, np, b, y0); break;
        default: SdPixels<P4, 4>(a, bases, np, b, y0); break;
      }
    }
    q += np;
  }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void SdRangeAvx512(const SdArgs& a, int64_t q0,
                                                                       int64_t q1) {
  SdRange<12, 12, 8, 6>(a, q0, q1);
}
__attribute__((target("avx2,fma"))) void SdRangeAvx2(const SdArgs& a, int64_t q0, int64_t q1) {
  SdRange<6, 3, 2, 1>(a, q0, q1);
}
void SdRangeBaseline(const SdArgs& a, int64_t q0, int64_t q1) { SdRange<3, 1, 1, 1>(a, q0, q1); }

using SdRangeFn = void (*)(const SdArgs&, int64_t, int64_t);

SdRangeFn SelectSdRange() {
  switch (WidestVectorIsa()) {
    case VectorIsa::kAvx512: return SdRangeAvx512;
    case VectorIsa::kAvx2: return SdRangeAvx2;
    default: return SdRangeBaseline;
  }
}

// PX_CPU_CONV set to a path other than this kernel's own name turns it off
// (im2col, onednn, direct, matmul: for measurements); =small forces it for
// every geometry it can take.
enum class Forced { kNone, kOff, kOn };
Forced ForcedSmallDepth() {
  static const Forced forced = [] {
    const char* v = std::getenv("PX_CPU_CONV");
    if (v == nullptr || *v == '\0') return Forced::kNone;
    return std::strcmp(v, "small") == 0 ? Forced::kOn : Forced::kOff;
  }();
  return forced;
}

// [blocks][taps][16] from the HWIO filter, zeros past f_out.
void PackFilter(const ConvGeometry& g, const float* f, std::vector<float>* out) {
  const int64_t taps = g.kh * g.kw * g.c;
  const int64_t blocks = (g.f_out + kLanes - 1) / kLanes;
  out->assign(static_cast<size_t>(blocks * taps * kLanes), 0.f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t n = std::min(kLanes, g.f_out - b * kLanes);
    for (int64_t t = 0; t < taps; ++t) {
      std::memcpy(out->data() + (b * taps + t) * kLanes, f + t * g.f_out + b * kLanes,
                  static_cast<size_t>(n) * sizeof(float));
    }
  }
}

}  // namespace

bool SmallDepthConv::Suits(const ConvGeometry& g) {
  return g.groups == 1 && g.c >= 1 && g.c <= 4 && g.f_out >= 8 && g.n * g.oh * g.ow > 0;
}

bool SmallDepthConv::Prefer(const ConvGeometry& g) {
  const Forced forced = ForcedSmallDepth();
  if (forced == Forced::kOff || !Suits(g)) return false;
  return forced == Forced::kOn || g.c == 1;
}

bool SmallDepthConv::Run(const ConvGeometry& g, const float* x, const float* f,
                         const Epilogue<float>* epilogue, float* y) {
  if (!Prefer(g)) return false;
  const int64_t out_size = g.n * g.oh * g.ow * g.f_out;
  // The addend is read after the convolution stored y.
  if (epilogue != nullptr && epilogue->addend != nullptr &&
      BuffersOverlap(epilogue->addend, out_size, y, out_size)) {
    return false;
  }

  // The filter, packed.
  std::vector<float> local;
  std::shared_ptr<const std::vector<float>> packed;
  const float* wp = nullptr;
  if (constant_filter_) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t shape[4] = {g.kh, g.kw, g.c, g.f_out};
    if (packed_ == nullptr || packed_for_ != f || !std::equal(shape, shape + 4, packed_shape_)) {
      auto fresh = std::make_shared<std::vector<float>>();
      PackFilter(g, f, fresh.get());
      packed_ = std::move(fresh);
      packed_for_ = f;
      std::copy(shape, shape + 4, packed_shape_);
    }
    packed = packed_;
    wp = packed->data();
  } else {
    PackFilter(g, f, &local);
    wp = local.data();
  }

  // The input, zero-bordered when the windows reach past it.
  const int64_t need_h = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  const int64_t need_w = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  SdArgs a;
  std::vector<float> bordered;
  if (g.top == 0 && g.left == 0 && need_h <= g.h && need_w <= g.w) {
    a.x = x;
    a.row_stride = g.w * g.c;
    a.img_stride = g.h * g.w * g.c;
  } else {
    const int64_t hp = need_h, wpix = need_w;
    a.row_stride = wpix * g.c;
    a.img_stride = hp * a.row_stride;
    bordered.assign(static_cast<size_t>(g.n * a.img_stride), 0.f);
    const int64_t c0 = std::max<int64_t>(0, g.left), i0 = std::max<int64_t>(0, -g.left);
    const int64_t cols = std::min(g.w - i0, wpix - c0);
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t r = 0; r < hp; ++r) {
        const int64_t ih = r - g.top;
        if (ih < 0 || ih >= g.h || cols <= 0) continue;
        std::memcpy(bordered.data() + n * a.img_stride + r * a.row_stride + c0 * g.c,
                    x + ((n * g.h + ih) * g.w + i0) * g.c, static_cast<size_t>(cols * g.c) * sizeof(float));
      }
    }
    a.x = bordered.data();
  }

  std::vector<int64_t> tap_off(static_cast<size_t>(g.kh * g.kw * g.c));
  for (int64_t i = 0, t = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j) {
      for (int64_t ch = 0; ch < g.c; ++ch, ++t) tap_off[t] = i * g.dh * a.row_stride + j * g.dw * g.c + ch;
    }
  }
  a.wp = wp;
  a.tap_off = tap_off.data();
  a.taps = static_cast<int64_t>(tap_off.size());
  a.y = y;
  a.f_out = g.f_out;
  a.blocks = (g.f_out + kLanes - 1) / kLanes;
  a.ow = g.ow;
  a.oh = g.oh;
  a.sh = g.sh;
  a.sw = g.sw;
  a.c = g.c;

  // The epilogue: the per-channel step and Relu, Relu6 or LeakyRelu on the
  // registers when there is no addend (it comes before the activation);
  // otherwise, and for the other activations, over each chunk afterwards.
  const int64_t padded = a.blocks * kLanes;
  std::vector<float> shift, mean, factor;
  bool post = false;
  if (epilogue != nullptr) {
    if (epilogue->addend != nullptr || !RegisterEpilogue::IsPiecewiseLinear(epilogue->act)) {
      post = true;
    } else {
      auto pad = [&](const std::vector<float>& v, std::vector<float>* out) {
        out->assign(static_cast<size_t>(padded), 0.f);
        std::copy(v.begin(), v.begin() + std::min<int64_t>(g.f_out, static_cast<int64_t>(v.size())), out->begin());
        return out->data();
      };
      a.epilogue.shift = pad(epilogue->shift, &shift);
      if (epilogue->batch_norm) {
        a.epilogue.mean = pad(epilogue->mean, &mean);
        a.epilogue.factor = pad(epilogue->factor, &factor);
      }
      a.epilogue.act = epilogue->act;
      a.epilogue.alpha = epilogue->alpha;
    }
  }

  static const SdRangeFn range_fn = SelectSdRange();
  const int64_t pixels = g.n * g.oh * g.ow;
  // Chunks of at most 96 pixels (a multiple of every block length), as many
  // as a multiple of the team when they run in parallel, so that no thread
  // waits for another's extra chunk (kws_cnn_s's first layer at batch 1 has
  // 280 pixels: 4 chunks of at most 72, two per thread, not 96 + 96 on one
  // thread against 88 on the other).
  constexpr int64_t kChunk = 96;
  const int team = TeamSize();
  int64_t chunks = (pixels + kChunk - 1) / kChunk;
  const bool parallel = team > 1 && chunks > 1 && pixels * a.taps * a.blocks * kLanes > (int64_t{1} << 16);
  if (parallel) chunks = (chunks + team - 1) / team * team;
  const int64_t chunk = ((pixels + chunks - 1) / chunks + 11) / 12 * 12;
#pragma omp parallel for schedule(static) num_threads(team) if (parallel)
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t q0 = std::min(pixels, ci * chunk), q1 = std::min(pixels, q0 + chunk);
    if (q0 == q1) continue;
    range_fn(a, q0, q1);
    if (post) {
      ApplyEpilogueChunk(*epilogue, y + q0 * g.f_out, q1 - q0, g.f_out,
                         epilogue->addend != nullptr ? epilogue->addend + q0 * g.f_out : nullptr);
    }
  }
  return true;
}

}  // namespace plexus::cpu
