// CPU kernels: neural-network gradients and losses.
//
// BiasAddGrad, MaxPoolGrad, MaxPoolGradV2, AvgPoolGrad,
// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, L2Loss
// and FusedBatchNormGrad (V1, V2, V3).
//
// The loops run over the contiguous dimension: NHWC pooling gradients work
// on all channels of a pixel at once, NCHW ones on one channel plane at a
// time; reductions sum rows of channels (channels last) or contiguous planes
// (channels first). Large inputs are split over threads (OpenMP) by image,
// plane or fixed row chunks; a chunk's partial sums are combined in a fixed
// order, so results do not depend on the thread count. Sums of float data
// accumulate in double (sums of many elements cancel: float sums would lose
// digits the reference keeps).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/nn_window.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/xent.h"

namespace plexus::cpu {
namespace {

// True when `work` elements are worth running on several threads.
bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 15); }

// Fixed row chunks for partial sums (independent of the thread count).
constexpr int64_t kChunks = 16;

std::vector<PX_DataType> RealTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,
          PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64, PX_DT_UINT8};
}

// Arithmetic types: Arith for elementwise work and the pooling gradients'
// accumulators (float for the 16-bit floats), Total for reductions (double
// for every float type). Integers add in uint64, which wraps as a sum in
// the integer type does (TensorFlow's result) where int64 would overflow.
template <typename T>
using Arith = std::conditional_t<std::is_integral_v<T>, uint64_t, sdk::ComputeType<T>>;
template <typename T>
using Total = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T>
Arith<T> ToC(T v) {
  return static_cast<Arith<T>>(v);
}
template <typename T, typename A>
T FromC(A v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(v));  // wraps like a sum in T
  } else {
    return static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
  }
}

// Writes `n` accumulated values to `out`, converted to T.
template <typename T, typename A>
void Store(const A* acc, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FromC<T>(acc[i]);
}

// ---------------------------------------------------------------------------
// BiasAddGrad
// ---------------------------------------------------------------------------

// Adds the column sums of rows [r0, r1) of a [rows, cols] matrix to `total`
// (a vector loop over the columns of each row).
template <typename T>
void AddColumnSums(const T* m, int64_t r0, int64_t r1, int64_t cols, Total<T>* total) {
  Total<T>* __restrict t = total;
  for (int64_t q = r0; q < r1; ++q) {
    const T* __restrict row = m + q * cols;
    for (int64_t k = 0; k < cols; ++k) t[k] += static_cast<Total<T>>(ToC(row[k]));
  }
}

// The sum of f(p[i]) over n contiguous values, with four independent
// accumulators of type A.
template <typename A, typename T, typename F>
A SumOf(const T* p, int64_t n, F&& f) {
  A s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += f(p[i]);
    s1 += f(p[i + 1]);
    s2 += f(p[i + 2]);
    s3 += f(p[i + 3]);
  }
  for (; i < n; ++i) s0 += f(p[i]);
  return (s0 + s1) + (s2 + s3);
}

template <typename T>
Total<T> SumRange(const T* p, int64_t n) {
  return SumOf<Total<T>>(p, n, [](T v) { return static_cast<Total<T>>(ToC(v)); });
}

// Column sums of a [rows, cols] matrix, over row chunks in parallel.
template <typename T>
std::vector<Total<T>> ColumnSums(const T* m, int64_t rows, int64_t cols) {
  const bool parallel = Parallel(rows, rows * cols);
  const int64_t chunks = parallel ? std::min<int64_t>(kChunks, rows) : 1;
  const int64_t per = chunks ? (rows + chunks - 1) / chunks : 0;
  std::vector<Total<T>> partial(static_cast<size_t>(chunks * cols), 0);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t r0 = ch * per, r1 = std::min(rows, r0 + per);
    if (r0 < r1) AddColumnSums(m, r0, r1, cols, partial.data() + ch * cols);
  }
  std::vector<Total<T>> sum(static_cast<size_t>(cols), 0);
  for (int64_t ch = 0; ch < chunks; ++ch) {
    for (int64_t k = 0; k < cols; ++k) sum[k] += partial[ch * cols + k];
  }
  return sum;
}

// Per-channel sums of [outer, channels, inner] (inner > 1): channels in
// parallel, each over its contiguous planes.
template <typename T>
std::vector<Total<T>> PlaneSums(const T* m, int64_t outer, int64_t channels, int64_t inner) {
  std::vector<Total<T>> sum(static_cast<size_t>(channels), 0);
#pragma omp parallel for schedule(static) if (Parallel(channels, outer * channels * inner))
  for (int64_t c = 0; c < channels; ++c) {
    Total<T> s = 0;
    for (int64_t o = 0; o < outer; ++o) s += SumRange(m + (o * channels + c) * inner, inner);
    sum[c] = s;
  }
  return sum;
}

class BiasAddGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = ReadNchw(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAddGrad out_backprop must be at least 2-D, got %s",
                 sdk::ShapeString(shape).c_str());
    const size_t channel_dim = nchw_ ? 1 : shape.size() - 1;
    const int64_t channels = shape[channel_dim];
    int64_t inner = 1, outer = 1;
    for (size_t d = channel_dim + 1; d < shape.size(); ++d) inner *= shape[d];
    for (size_t d = 0; d < channel_dim; ++d) outer *= shape[d];
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, {channels});
      const std::vector<Total<T>> sum = inner == 1 ? ColumnSums(g, outer, channels)
                                                   : PlaneSums(g, outer, channels, inner);
      Store(sum.data(), channels, out);
    }, "BiasAddGrad");
  }

 private:
  bool nchw_ = false;
};

// ---------------------------------------------------------------------------
// Pooling gradients
// ---------------------------------------------------------------------------

// The pooling window and the geometry of one launch.
using sdk::PoolGeometry;

// Runs body(image_or_plane, acc) over the `items` independent slices of
// `slice` elements of the gradient dx (images for NHWC, channel planes for
// NCHW), in parallel when large. acc is the slice's zeroed accumulator: dx
// itself when T is its own compute type, else a scratch buffer stored into
// dx afterwards.
template <typename T, typename Body>
void ForEachSlice(int64_t items, int64_t slice, int64_t work, T* dx, Body&& body) {
  using C = Arith<T>;
#pragma omp parallel for schedule(static) if (Parallel(items, work))
  for (int64_t s = 0; s < items; ++s) {
    T* out = dx + s * slice;
    if constexpr (std::is_same_v<C, T>) {
      std::fill(out, out + slice, T(0));
      body(s, out);
    } else {
      std::vector<C> acc(static_cast<size_t>(slice), C(0));
      body(s, acc.data());
      Store(acc.data(), slice, out);
    }
  }
}

// v when `take`, else 0, without a branch (so that loops of it vectorize
// on baseline x86-64, which has no blend instruction; an infinite or NaN v
// not taken still gives 0).
template <typename C>
C MaskedValue(C v, bool take) {
  if constexpr (std::is_integral_v<C>) {
    return v & -static_cast<C>(take);
  } else {
    using Bits = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
    Bits bits;
    std::memcpy(&bits, &v, sizeof(C));
    bits &= -static_cast<Bits>(take);
    std::memcpy(&v, &bits, sizeof(C));
    return v;
  }
}

// MaxPoolGrad: each grad element goes to the first maximum of its window
// (row-major window order) in orig_input, as TensorFlow's cpu kernel does.
template <typename T>
void MaxPoolGradImpl(const PoolGeometry& g, const T* x, const T* grad, T* dx) {
  using C = Arith<T>;
  using V = std::conditional_t<std::is_integral_v<T>, T, sdk::ComputeType<T>>;  // compared
  const int64_t work = g.n * g.oh * g.ow * g.c * g.kh * g.kw;
  if (!g.nchw) {
    const int64_t c = g.c;
    // Per output pixel, all channels at once: the window ordinal of each
    // channel's maximum, then a masked add of the gradient at every window
    // position. Both loops are branch-free selects the compiler vectorizes
    // (the ordinal has the compared type's width).
    using I = std::conditional_t<sizeof(V) == 8, int64_t, int32_t>;
    ForEachSlice(g.n, g.h * g.w * c, work, dx, [&](int64_t b, C* acc) {
      const T* xb = x + b * g.h * g.w * c;
      const T* gb = grad + b * g.oh * g.ow * c;
      std::vector<V> best_storage(static_cast<size_t>(c));
      std::vector<I> at_storage(static_cast<size_t>(c));
      std::vector<C> grad_storage(static_cast<size_t>(c));
      V* __restrict best = best_storage.data();
      I* __restrict at = at_storage.data();
      C* __restrict gv = grad_storage.data();
      for (int64_t i = 0; i < g.oh; ++i) {
        for (int64_t j = 0; j < g.ow; ++j) {
          int64_t h0, h1, w0, w1;
          g.Bounds(i, j, &h0, &h1, &w0, &w1);
          if (h0 >= h1 || w0 >= w1) continue;
          const T* src0 = xb + (h0 * g.w + w0) * c;
          for (int64_t k = 0; k < c; ++k) {
            best[k] = static_cast<V>(src0[k]);
            at[k] = 0;
          }
          I q = 0;
          for (int64_t ih = h0; ih < h1; ++ih) {
            for (int64_t iw = w0; iw < w1; ++iw, ++q) {
              if (q == 0) continue;
              const T* __restrict src = xb + (ih * g.w + iw) * c;
              for (int64_t k = 0; k < c; ++k) {
                const V v = static_cast<V>(src[k]), b = best[k];
                const I mask = -static_cast<I>(v > b);
                best[k] = v > b ? v : b;
                at[k] = (at[k] & ~mask) | (q & mask);
              }
            }
          }
          const T* gp = gb + (i * g.ow + j) * c;
          for (int64_t k = 0; k < c; ++k) gv[k] = ToC(gp[k]);
          q = 0;
          for (int64_t ih = h0; ih < h1; ++ih) {
            for (int64_t iw = w0; iw < w1; ++iw, ++q) {
              C* __restrict dst = acc + (ih * g.w + iw) * c;
              for (int64_t k = 0; k < c; ++k) dst[k] += MaskedValue(gv[k], at[k] == q);
            }
          }
        }
      }
    });
    return;
  }
  // NCHW: one channel plane at a time.
  ForEachSlice(g.n * g.c, g.h * g.w, work, dx, [&](int64_t p, C* acc) {
    const T* xp = x + p * g.h * g.w;
    const T* gp = grad + p * g.oh * g.ow;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        int64_t h0, h1, w0, w1;
        g.Bounds(i, j, &h0, &h1, &w0, &w1);
        if (h0 >= h1 || w0 >= w1) continue;
        int64_t at = h0 * g.w + w0;
        V best = static_cast<V>(xp[at]);
        for (int64_t ih = h0; ih < h1; ++ih) {
          const T* row = xp + ih * g.w;
          for (int64_t iw = ih == h0 ? w0 + 1 : w0; iw < w1; ++iw) {
            const V v = static_cast<V>(row[iw]);
            const bool greater = v > best;  // branch-free: maxima are random
            at = greater ? ih * g.w + iw : at;
            best = greater ? v : best;
          }
        }
        acc[at] += ToC(gp[i * g.ow + j]);
      }
    }
  });
}

template <bool kV2>
class MaxPoolGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    if (!kV2) {
      window_.Read(attrs, true);
      return;
    }
    window_.ReadPoolingV2(attrs);  // ksize and strides: inputs 3 and 4
  }
  void Compute(sdk::Call& call) override {
    Window win = window_;
    if (kV2) win.SetPoolSizes(call.input_int_values(3), call.input_int_values(4));
    const sdk::Shape in_shape = call.input_shape(0);
    PX_SDK_CHECK(in_shape.size() == 4, "orig_input must be 4-D, got %s",
                 sdk::ShapeString(in_shape).c_str());
    const PoolGeometry g = win.Pool(in_shape);
    sdk::CheckPooledShape("orig_output", call.input_shape(1), sdk::PooledShape(g));
    sdk::CheckPooledShape("grad", call.input_shape(2), sdk::PooledShape(g));
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* grad = call.input<T>(2);
      T* dx = call.AllocateOutput<T>(0, in_shape);
      MaxPoolGradImpl(g, x, grad, dx);
    }, "MaxPoolGrad");
  }

 private:
  Window window_;
};

// AvgPoolGrad: each grad element spread evenly over the in-bounds part of
// its window.
template <typename T>
void AvgPoolGradImpl(const PoolGeometry& g, const T* grad, T* dx) {
  using C = Arith<T>;
  const int64_t work = g.n * g.oh * g.ow * g.c * g.kh * g.kw;
  if (!g.nchw) {
    const int64_t c = g.c;
    ForEachSlice(g.n, g.h * g.w * c, work, dx, [&](int64_t b, C* acc) {
      const T* gb = grad + b * g.oh * g.ow * c;
      std::vector<C> share(static_cast<size_t>(c));
      for (int64_t i = 0; i < g.oh; ++i) {
        for (int64_t j = 0; j < g.ow; ++j) {
          int64_t h0, h1, w0, w1;
          g.Bounds(i, j, &h0, &h1, &w0, &w1);
          const int64_t count = (h1 - h0) * (w1 - w0);
          if (h0 >= h1 || w0 >= w1) continue;
          const C scale = C(1) / static_cast<C>(count);
          const T* gp = gb + (i * g.ow + j) * c;
          for (int64_t k = 0; k < c; ++k) share[k] = ToC(gp[k]) * scale;
          const C* __restrict sp = share.data();
          for (int64_t ih = h0; ih < h1; ++ih) {
            for (int64_t iw = w0; iw < w1; ++iw) {
              C* __restrict dst = acc + (ih * g.w + iw) * c;
              for (int64_t k = 0; k < c; ++k) dst[k] += sp[k];
            }
          }
        }
      }
    });
    return;
  }
  // NCHW: one channel plane at a time, an output row at a time: the shares
  // of the row's windows, then added to each input row the windows cover.
  // The column ranges are the same for every row and plane.
  std::vector<int64_t> col_begin(static_cast<size_t>(g.ow)), col_end(static_cast<size_t>(g.ow));
  for (int64_t j = 0; j < g.ow; ++j) {
    int64_t h0, h1;
    g.Bounds(0, j, &h0, &h1, &col_begin[j], &col_end[j]);
  }
  ForEachSlice(g.n * g.c, g.h * g.w, work, dx, [&](int64_t p, C* acc) {
    const T* gp = grad + p * g.oh * g.ow;
    std::vector<C> share(static_cast<size_t>(g.ow));
    for (int64_t i = 0; i < g.oh; ++i) {
      int64_t h0, h1, w0, w1;
      g.Bounds(i, 0, &h0, &h1, &w0, &w1);
      if (h0 >= h1) continue;
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t cols = col_end[j] - col_begin[j];
        share[j] = cols > 0 ? ToC(gp[i * g.ow + j]) / static_cast<C>((h1 - h0) * cols) : C(0);
      }
      for (int64_t ih = h0; ih < h1; ++ih) {
        C* row = acc + ih * g.w;
        for (int64_t j = 0; j < g.ow; ++j) {
          const C sj = share[j];
          for (int64_t iw = col_begin[j]; iw < col_end[j]; ++iw) row[iw] += sj;
        }
      }
    }
  });
}

class AvgPoolGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }
  void Compute(sdk::Call& call) override {
    const std::vector<int64_t> dims = call.input_int_values(0);
    PX_SDK_CHECK(call.input_rank(0) == 1 && dims.size() == 4,
                 "orig_input_shape must be a 1-D tensor of 4 elements, got shape %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    for (int64_t d : dims) {
      PX_SDK_CHECK(d >= 0, "orig_input_shape must be non-negative, got %s",
                   sdk::ShapeString(dims).c_str());
    }
    const sdk::Shape in_shape(dims.begin(), dims.end());
    const sdk::Shape grad_shape = call.input_shape(1);
    PX_SDK_CHECK(grad_shape.size() == 4, "grad must be 4-D, got %s",
                 sdk::ShapeString(grad_shape).c_str());
    const PoolGeometry g = window_.Pool(in_shape);
    sdk::CheckPooledShape("grad", grad_shape, sdk::PooledShape(g));
    sdk::VisitFloat(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* grad = call.input<T>(1);
      T* dx = call.AllocateOutput<T>(0, in_shape);
      AvgPoolGradImpl(g, grad, dx);
    });
  }

 private:
  Window window_;
};

// ---------------------------------------------------------------------------
// Softmax cross entropy
// ---------------------------------------------------------------------------

// One row: loss = sum(labels * (log(sum(exp(f - max))) - (f - max))),
// backprop = softmax(f) - labels, in the compute type C. `f_step` and
// `l_step` are 0 for a broadcast operand (1 at compile time when
// kContiguous); `scratch` holds `classes` values.
template <bool kContiguous, typename T, typename C>
void XentRow(const T* f, int64_t f_step, const T* labels, int64_t l_step, int64_t classes,
             C* scratch, T* loss, T* backprop) {
  if (kContiguous) f_step = l_step = 1;
  C max = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < classes; ++k) max = std::max(max, static_cast<C>(f[k * f_step]));
  C sum = 0;
  for (int64_t k = 0; k < classes; ++k) {
    scratch[k] = static_cast<C>(f[k * f_step]) - max;
    sum += std::exp(scratch[k]);
  }
  const C log_sum = std::log(sum);
  C l = 0;
  for (int64_t k = 0; k < classes; ++k) {
    const C label = static_cast<C>(labels[k * l_step]);
    l += label * (log_sum - scratch[k]);
    backprop[k] = static_cast<T>(std::exp(scratch[k] - log_sum) - label);
  }
  *loss = static_cast<T>(l);
}

// The sparse form: the labelled class only.
template <typename T, typename C>
void SparseXentRow(const T* f, int64_t label, int64_t classes, C* scratch, T* loss,
                   T* backprop) {
  C max = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < classes; ++k) max = std::max(max, static_cast<C>(f[k]));
  C sum = 0;
  for (int64_t k = 0; k < classes; ++k) {
    scratch[k] = static_cast<C>(f[k]) - max;
    sum += std::exp(scratch[k]);
  }
  const C log_sum = std::log(sum);
  for (int64_t k = 0; k < classes; ++k) backprop[k] = static_cast<T>(std::exp(scratch[k] - log_sum));
  if (classes > 0) {
    backprop[label] = static_cast<T>(std::exp(scratch[label] - log_sum) - C(1));
    *loss = static_cast<T>(log_sum - scratch[label]);
  } else {
    *loss = static_cast<T>(C(0));
  }
}

// Runs row(r, scratch) for r in [0, rows), rows in parallel when large; the
// scratch holds `classes` compute-type values.
template <typename C, typename Row>
void ForEachRow(int64_t rows, int64_t classes, Row&& row) {
  const bool parallel = Parallel(rows, rows * classes * 8);
  const int64_t chunks = parallel ? std::min<int64_t>(kChunks, rows) : 1;
  const int64_t per = chunks ? (rows + chunks - 1) / chunks : 0;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    std::vector<C> scratch(static_cast<size_t>(classes));
    const int64_t r1 = std::min(rows, (ch + 1) * per);
    for (int64_t r = ch * per; r < r1; ++r) row(r, scratch.data());
  }
}

class SoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::Shape fs = call.input_shape(0), ls = call.input_shape(1);
    const sdk::XentShape x = sdk::DenseXentShape(fs, ls);
    const int64_t batch = x.batch, classes = x.classes;
    const bool contiguous = fs == ls;
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* f = call.input<T>(0);
      const T* l = call.input<T>(1);
      T* loss = call.AllocateOutput<T>(0, {batch});
      T* backprop = call.AllocateOutput<T>(1, {batch, classes});
      ForEachRow<C>(batch, classes, [&](int64_t r, C* scratch) {
        if (contiguous) {
          XentRow<true>(f + r * classes, 1, l + r * classes, 1, classes, scratch, loss + r,
                        backprop + r * classes);
        } else {
          XentRow<false>(f + r * x.f_row, x.f_col, l + r * x.l_row, x.l_col, classes,
                         scratch, loss + r, backprop + r * classes);
        }
      });
    });
  }
};

class SparseSoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::XentShape x = sdk::SparseXentShape(call.input_shape(0), call.input_shape(1));
    const int64_t batch = x.batch, classes = x.classes;
    const std::vector<int64_t> labels = call.input_int_values(1);
    sdk::CheckSparseLabels(labels, classes);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* f = call.input<T>(0);
      T* loss = call.AllocateOutput<T>(0, {batch});
      T* backprop = call.AllocateOutput<T>(1, {batch, classes});
      ForEachRow<C>(batch, classes, [&](int64_t r, C* scratch) {
        SparseXentRow(f + r * classes, labels[r], classes, scratch, loss + r,
                      backprop + r * classes);
      });
    });
  }
};

// ---------------------------------------------------------------------------
// L2Loss
// ---------------------------------------------------------------------------

template <typename T>
double SumSquares(const T* p, int64_t n) {
  return SumOf<double>(p, n, [](T v) {
    const double d = static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
    return d * d;
  });
}

class L2LossKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* t = call.input<T>(0);
      const int64_t n = call.input_size(0);
      const bool parallel = Parallel(n, n);
      const int64_t chunks = parallel ? kChunks : 1;
      const int64_t per = (n + chunks - 1) / chunks;
      std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t ch = 0; ch < chunks; ++ch) {
        const int64_t i0 = std::min(n, ch * per), i1 = std::min(n, i0 + per);
        partial[ch] = SumSquares(t + i0, i1 - i0);
      }
      double sum = 0;
      for (double p : partial) sum += p;
      *call.AllocateOutput<T>(0, {}) = FromC<T>(sum / 2);
    });
  }
};

// ---------------------------------------------------------------------------
// FusedBatchNormGrad
// ---------------------------------------------------------------------------

// Per-channel sums of dy and dy * (x - mean) over [outer, channels, inner],
// in double.
template <typename T>
void BatchNormSums(const T* dy, const T* x, const float* mean, int64_t outer, int64_t channels,
                   int64_t inner, double* sum_dy, double* sum_dy_xc) {
  using C = sdk::ComputeType<T>;
  if (inner == 1) {
    const int64_t rows = outer;
    const bool parallel = Parallel(rows, rows * channels);
    const int64_t chunks = parallel ? std::min<int64_t>(kChunks, rows) : 1;
    const int64_t per = chunks ? (rows + chunks - 1) / chunks : 0;
    std::vector<double> partial(static_cast<size_t>(2 * chunks * channels), 0.0);
    const std::vector<double> m(mean, mean + channels);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      double* __restrict p_dy = partial.data() + 2 * ch * channels;
      double* __restrict p_xc = p_dy + channels;
      const double* __restrict mc = m.data();
      const int64_t r1 = std::min(rows, (ch + 1) * per);
      for (int64_t q = ch * per; q < r1; ++q) {
        const T* __restrict g = dy + q * channels;
        const T* __restrict v = x + q * channels;
        for (int64_t k = 0; k < channels; ++k) {
          const double gk = static_cast<double>(static_cast<C>(g[k]));
          p_dy[k] += gk;
          p_xc[k] += gk * (static_cast<double>(static_cast<C>(v[k])) - mc[k]);
        }
      }
    }
    for (int64_t ch = 0; ch < chunks; ++ch) {
      for (int64_t k = 0; k < channels; ++k) {
        sum_dy[k] += partial[2 * ch * channels + k];
        sum_dy_xc[k] += partial[(2 * ch + 1) * channels + k];
      }
    }
    return;
  }
#pragma omp parallel for schedule(static) if (Parallel(channels, outer * channels * inner))
  for (int64_t c = 0; c < channels; ++c) {
    const double m = mean[c];
    double s_dy = 0, s_xc = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const T* g = dy + (o * channels + c) * inner;
      const T* v = x + (o * channels + c) * inner;
      s_dy += SumOf<double>(g, inner, [](T e) { return static_cast<double>(static_cast<C>(e)); });
      // dy * (x - mean), four accumulators.
      double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      int64_t i = 0;
      auto term = [&](int64_t k) {
        return static_cast<double>(static_cast<C>(g[k])) *
               (static_cast<double>(static_cast<C>(v[k])) - m);
      };
      for (; i + 4 <= inner; i += 4) {
        a0 += term(i);
        a1 += term(i + 1);
        a2 += term(i + 2);
        a3 += term(i + 3);
      }
      for (; i < inner; ++i) a0 += term(i);
      s_xc += (a0 + a1) + (a2 + a3);
    }
    sum_dy[c] = s_dy;
    sum_dy_xc[c] = s_xc;
  }
}

class FusedBatchNormGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    format_ = attrs.String("data_format", "NHWC");
    PX_SDK_CHECK(format_ == "NHWC" || format_ == "NCHW" ||
                     (attrs.num_inputs() == 6 && (format_ == "NDHWC" || format_ == "NCDHW")),
                 "data_format must be NHWC or NCHW%s, got '%s'",
                 attrs.num_inputs() == 6 ? " (or NDHWC, NCDHW)" : "", format_.c_str());
    epsilon_ = attrs.Float("epsilon", 1e-4f);
    training_ = attrs.Bool("is_training", true);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(1);
    const size_t rank = format_.size();
    PX_SDK_CHECK(shape.size() == rank, "x must be %zu-D with data_format %s, got %s", rank,
                 format_.c_str(), sdk::ShapeString(shape).c_str());
    PX_SDK_CHECK(call.input_shape(0) == shape,
                 "y_backprop and x must have the same shape, got %s and %s",
                 sdk::ShapeString(call.input_shape(0)).c_str(), sdk::ShapeString(shape).c_str());
    const size_t cdim = format_[1] == 'C' ? 1 : rank - 1;
    const int64_t channels = shape[cdim];
    int64_t inner = 1, outer = 1;
    for (size_t d = cdim + 1; d < rank; ++d) inner *= shape[d];
    for (size_t d = 0; d < cdim; ++d) outer *= shape[d];
    static const char* kNames[] = {"", "", "scale", "reserve_space_1", "reserve_space_2"};
    for (size_t i = 2; i <= 4; ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
    }
    const float* scale = call.input<float>(2);
    const float* mean = call.input<float>(3);
    const float* variance = call.input<float>(4);
    const int64_t count = outer * inner;
    float* scale_backprop = call.AllocateOutput<float>(1, {channels});
    float* offset_backprop = call.AllocateOutput<float>(2, {channels});
    call.AllocateOutput<float>(3, {0});
    call.AllocateOutput<float>(4, {0});
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* dy = call.input<T>(0);
      const T* x = call.input<T>(1);
      T* dx = call.AllocateOutput<T>(0, shape);
      std::vector<double> sum_dy(static_cast<size_t>(channels), 0.0);
      std::vector<double> sum_dy_xc(static_cast<size_t>(channels), 0.0);
      BatchNormSums(dy, x, mean, outer, channels, inner, sum_dy.data(), sum_dy_xc.data());
      // dx = k_dy * dy + k_xc * (x - mean) + k_0 per channel.
      std::vector<C> k_dy(static_cast<size_t>(channels)), k_xc(static_cast<size_t>(channels)),
          k_0(static_cast<size_t>(channels)), m(mean, mean + channels);
      for (int64_t c = 0; c < channels; ++c) {
        const double inv = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon_);
        offset_backprop[c] = static_cast<float>(sum_dy[c]);
        scale_backprop[c] = static_cast<float>(sum_dy_xc[c] * inv);
        k_dy[c] = static_cast<C>(scale[c] * inv);
        if (training_ && count > 0) {
          k_0[c] = static_cast<C>(-scale[c] * inv * sum_dy[c] / count);
          k_xc[c] = static_cast<C>(-scale[c] * inv * inv * inv * sum_dy_xc[c] / count);
        } else {
          k_0[c] = k_xc[c] = C(0);
        }
      }
      const int64_t total = outer * channels * inner;
      if (inner == 1) {
#pragma omp parallel for schedule(static) if (Parallel(outer, total))
        for (int64_t r = 0; r < outer; ++r) {
          const T* __restrict g = dy + r * channels;
          const T* __restrict v = x + r * channels;
          T* __restrict out = dx + r * channels;
          for (int64_t k = 0; k < channels; ++k) {
            out[k] = static_cast<T>(k_dy[k] * static_cast<C>(g[k]) +
                                    k_xc[k] * (static_cast<C>(v[k]) - m[k]) + k_0[k]);
          }
        }
        return;
      }
#pragma omp parallel for schedule(static) if (Parallel(outer * channels, total))
      for (int64_t p = 0; p < outer * channels; ++p) {
        const int64_t c = p % channels;
        const C a = k_dy[c], b = k_xc[c], z = k_0[c], mc = m[c];
        const T* __restrict g = dy + p * inner;
        const T* __restrict v = x + p * inner;
        T* __restrict out = dx + p * inner;
        for (int64_t i = 0; i < inner; ++i) {
          out[i] = static_cast<T>(a * static_cast<C>(g[i]) + b * (static_cast<C>(v[i]) - mc) + z);
        }
      }
    });
  }

 private:
  std::string format_;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterNnGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  const std::vector<PX_DataType> real = RealTypes();
  const std::vector<PX_DataType> bn_x = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  const std::vector<PX_DataType> labels = {PX_DT_INT32, PX_DT_INT64};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<BiasAddGradKernel>(info, registrar, sdk::sig::kBiasAddGrad,
                                                  {real})) ||
      (s = sdk::RegisterKernel<MaxPoolGradKernel<false>>(info, registrar, sdk::sig::kMaxPoolGrad,
                                                         {real})) ||
      (s = sdk::RegisterKernel<MaxPoolGradKernel<true>>(info, registrar, sdk::sig::kMaxPoolGradV2,
                                                        {real})) ||
      (s = sdk::RegisterKernel<AvgPoolGradKernel>(info, registrar, sdk::sig::kAvgPoolGrad,
                                                  {floats})) ||
      (s = sdk::RegisterKernel<SoftmaxXentKernel>(
           info, registrar, sdk::sig::kSoftmaxCrossEntropyWithLogits, {floats})) ||
      (s = sdk::RegisterKernel<SparseSoftmaxXentKernel>(
           info, registrar, sdk::sig::kSparseSoftmaxCrossEntropyWithLogits, {floats, labels})) ||
      (s = sdk::RegisterKernel<L2LossKernel>(info, registrar, sdk::sig::kL2Loss, {floats})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(info, registrar,
                                                         sdk::sig::kFusedBatchNormGrad, {f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(
           info, registrar, sdk::sig::kFusedBatchNormGradV2, {bn_x, f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(
           info, registrar, sdk::sig::kFusedBatchNormGradV3, {bn_x, f32}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu
