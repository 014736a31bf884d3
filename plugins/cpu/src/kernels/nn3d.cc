// CPU kernels: 3-D convolution and pooling on NDHWC tensors (inference).
//
// Conv3D is im2col + GEMM: a block of output rows' patches
// [rows, kd*kh*kw*c] times the filter [kd*kh*kw*c, out] with the shared Gemm
// (oneDNN's sgemm for float when the plugin has it, linalg_gemm.h), the
// patches built in parallel. MaxPool3D and AvgPool3D loop over output
// positions in parallel with the channels innermost (contiguous); SAME
// padding's positions are skipped, AvgPool3D dividing by the positions
// inside the input, as TensorFlow's. The 16-bit floats pool in float.
//
// Conv3D's gradients are GEMMs over the same patches, block by block:
// Conv3DBackpropFilterV2 sums patches^T * dy, Conv3DBackpropInputV2 computes
// dy * filter^T (the patches' gradient) and adds every patch element back to
// the input position it came from. Both compute in float for the 16-bit
// floats (double for double), accumulating across blocks in that type.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/linalg_gemm.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/window3d.h"

namespace plexus::cpu {
namespace {

bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 14); }

// The patch matrix rows [r0, r0 + nr) of x: output position r's taps
// (zeros outside the input), each tap's c channels contiguous.
template <typename S, typename D>
void Patches3D(const S* x, const sdk::Geometry3D& g, const sdk::Window3D& w, int64_t r0,
               int64_t nr, D* patches) {
  const int64_t taps = g.k[0] * g.k[1] * g.k[2], depth = taps * g.c;
  const int64_t per_image = g.out[0] * g.out[1] * g.out[2];
#pragma omp parallel for schedule(static) if (Parallel(nr, nr * depth))
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const int64_t n = r / per_image, p = r % per_image;
    const int64_t oz = p / (g.out[1] * g.out[2]), oy = (p / g.out[2]) % g.out[1], ox = p % g.out[2];
    D* dst = patches + (r - r0) * depth;
    for (int64_t a = 0; a < g.k[0]; ++a) {
      const int64_t z = oz * w.s[0] - g.before[0] + a * w.d[0];
      for (int64_t b = 0; b < g.k[1]; ++b) {
        const int64_t y = oy * w.s[1] - g.before[1] + b * w.d[1];
        for (int64_t c = 0; c < g.k[2]; ++c, dst += g.c) {
          const int64_t xx = ox * w.s[2] - g.before[2] + c * w.d[2];
          if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1] || xx < 0 || xx >= g.in[2]) {
            std::fill(dst, dst + g.c, D(0));
            continue;
          }
          const S* src = x + (((n * g.in[0] + z) * g.in[1] + y) * g.in[2] + xx) * g.c;
          for (int64_t k = 0; k < g.c; ++k) dst[k] = static_cast<D>(src[k]);
        }
      }
    }
  }
}

class Conv3DKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, "Conv3D", false); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    PX_SDK_CHECK(fs.size() == 5, "Conv3D filter must be 5-D, got %s", sdk::ShapeString(fs).c_str());
    PX_SDK_CHECK(xs.size() == 5 && xs[4] == fs[3],
                 "Conv3D input and filter must have the same depth: input %s, filter %s",
                 sdk::ShapeString(xs).c_str(), sdk::ShapeString(fs).c_str());
    const int64_t taps[3] = {fs[0], fs[1], fs[2]};
    const sdk::Geometry3D g = sdk::Geometry3DOf("Conv3D", window_, xs, taps, fs[4]);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{g.n, g.out[0], g.out[1], g.out[2], g.out_c});
      const int64_t rows = g.n * g.out[0] * g.out[1] * g.out[2];
      const int64_t depth = fs[0] * fs[1] * fs[2] * g.c;
      if (rows == 0 || g.out_c == 0) return;
      // Blocks of at most 2^20 patch elements; the output never aliases x.
      const int64_t block = std::max<int64_t>(1, std::min(rows, (int64_t{1} << 20) / std::max<int64_t>(depth, 1)));
      std::vector<T> patches(static_cast<size_t>(block * depth));
      for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t nr = std::min(block, rows - r0);
        Patches3D(x, g, window_, r0, nr, patches.data());
        Gemm<T>(false, false, nr, g.out_c, depth, patches.data(), f, y + r0 * g.out_c);
      }
    });
  }

 private:
  sdk::Window3D window_;
};

template <bool kMax>
class Pool3DKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp = kMax ? "MaxPool3D" : "AvgPool3D";
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, kOp, true); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(xs.size() == 5, "%s input must be 5-D, got %s", kOp, sdk::ShapeString(xs).c_str());
    const sdk::Geometry3D g = sdk::Geometry3DOf(kOp, window_, xs, window_.k, xs[4]);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{g.n, g.out[0], g.out[1], g.out[2], g.c});
      const int64_t positions = g.n * g.out[0] * g.out[1] * g.out[2];
      const int64_t per_image = g.out[0] * g.out[1] * g.out[2];
      const sdk::Window3D& w = window_;
#pragma omp parallel if (Parallel(positions, positions * g.c * w.k[0] * w.k[1] * w.k[2]))
      {
        std::vector<C> acc(static_cast<size_t>(g.c));  // one per thread
#pragma omp for schedule(static)
        for (int64_t r = 0; r < positions; ++r) {
          const int64_t n = r / per_image, p = r % per_image;
          const int64_t oz = p / (g.out[1] * g.out[2]), oy = (p / g.out[2]) % g.out[1];
          const int64_t ox = p % g.out[2];
          std::fill(acc.begin(), acc.end(), kMax ? -std::numeric_limits<C>::infinity() : C(0));
          int64_t count = 0;
          for (int64_t a = 0; a < w.k[0]; ++a) {
            const int64_t z = oz * w.s[0] - g.before[0] + a;
            if (z < 0 || z >= g.in[0]) continue;
            for (int64_t b = 0; b < w.k[1]; ++b) {
              const int64_t yy = oy * w.s[1] - g.before[1] + b;
              if (yy < 0 || yy >= g.in[1]) continue;
              for (int64_t c = 0; c < w.k[2]; ++c) {
                const int64_t xx = ox * w.s[2] - g.before[2] + c;
                if (xx < 0 || xx >= g.in[2]) continue;
                const T* src = x + (((n * g.in[0] + z) * g.in[1] + yy) * g.in[2] + xx) * g.c;
                ++count;
                for (int64_t k = 0; k < g.c; ++k) {
                  const C v = static_cast<C>(src[k]);
                  if constexpr (kMax) {
                    acc[k] = v > acc[k] || v != v ? v : acc[k];
                  } else {
                    acc[k] += v;
                  }
                }
              }
            }
          }
          T* out = y + r * g.c;
          for (int64_t k = 0; k < g.c; ++k) {
            out[k] = static_cast<T>(kMax ? acc[k] : acc[k] / static_cast<C>(count));
          }
        }
      }
    });
  }

 private:
  sdk::Window3D window_;
};

// The type the gradients compute in: float for the 16-bit floats.
template <typename T>
using GradType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Adds the patch rows [r0, r0 + nr) back to the input positions they were
// read from (the adjoint of Patches3D); positions outside the input drop.
template <typename C>
void AddPatches3D(const C* patches, const sdk::Geometry3D& g, const sdk::Window3D& w, int64_t r0,
                  int64_t nr, C* dx) {
  const int64_t per_image = g.out[0] * g.out[1] * g.out[2];
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const int64_t n = r / per_image, p = r % per_image;
    const int64_t oz = p / (g.out[1] * g.out[2]), oy = (p / g.out[2]) % g.out[1], ox = p % g.out[2];
    const C* src = patches + (r - r0) * g.k[0] * g.k[1] * g.k[2] * g.c;
    for (int64_t a = 0; a < g.k[0]; ++a) {
      const int64_t z = oz * w.s[0] - g.before[0] + a * w.d[0];
      for (int64_t b = 0; b < g.k[1]; ++b) {
        const int64_t y = oy * w.s[1] - g.before[1] + b * w.d[1];
        for (int64_t c = 0; c < g.k[2]; ++c, src += g.c) {
          const int64_t xx = ox * w.s[2] - g.before[2] + c * w.d[2];
          if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1] || xx < 0 || xx >= g.in[2]) continue;
          C* dst = dx + (((n * g.in[0] + z) * g.in[1] + y) * g.in[2] + xx) * g.c;
          for (int64_t k = 0; k < g.c; ++k) dst[k] += src[k];
        }
      }
    }
  }
}

// Conv3DBackpropInputV2 (kFilter false: input 0 is input_sizes) and
// Conv3DBackpropFilterV2 (input 1 is filter_sizes).
template <bool kFilter>
class Conv3DBackpropKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp = kFilter ? "Conv3DBackpropFilterV2" : "Conv3DBackpropInputV2";
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, kOp, false); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape dys = call.input_shape(2);
    const sdk::Shape xs = kFilter ? call.input_shape(0) : SizesOf(call, 0, "input_sizes");
    const sdk::Shape fs = kFilter ? SizesOf(call, 1, "filter_sizes") : call.input_shape(1);
    const sdk::Geometry3D g = sdk::Conv3DBackpropGeometryOf(kOp, window_, xs, fs, dys);
    sdk::VisitFloat(call.input_dtype(2), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = GradType<T>;
      const T* data = call.input<T>(kFilter ? 0 : 1);  // x, or the filter
      const T* dy = call.input<T>(2);
      const sdk::Shape& out_shape = kFilter ? fs : xs;
      T* out = call.AllocateOutput<T>(0, out_shape);
      const int64_t out_n = sdk::NumElements(out_shape);
      const int64_t rows = g.n * g.out[0] * g.out[1] * g.out[2];
      const int64_t depth = g.k[0] * g.k[1] * g.k[2] * g.c;
      std::vector<C> acc(static_cast<size_t>(out_n), C(0));
      if (rows > 0 && depth > 0 && g.out_c > 0) {
        const int64_t block =
            std::max<int64_t>(1, std::min(rows, (int64_t{1} << 20) / std::max<int64_t>(depth, 1)));
        std::vector<C> patches(static_cast<size_t>(block * depth));
        std::vector<C> dy_block(static_cast<size_t>(block * g.out_c));
        // The filter as C (the input gradient's GEMM operand), or the
        // filter gradient of one block.
        std::vector<C> other(static_cast<size_t>(depth * g.out_c));
        if constexpr (!kFilter) {
          for (int64_t i = 0; i < depth * g.out_c; ++i) other[i] = static_cast<C>(data[i]);
        }
        for (int64_t r0 = 0; r0 < rows; r0 += block) {
          const int64_t nr = std::min(block, rows - r0);
          for (int64_t i = 0; i < nr * g.out_c; ++i) {
            dy_block[i] = static_cast<C>(dy[r0 * g.out_c + i]);
          }
          if constexpr (kFilter) {
            Patches3D(data, g, window_, r0, nr, patches.data());
            Gemm<C>(true, false, depth, g.out_c, nr, patches.data(), dy_block.data(), other.data());
            for (int64_t i = 0; i < depth * g.out_c; ++i) acc[i] += other[i];
          } else {
            Gemm<C>(false, true, nr, depth, g.out_c, dy_block.data(), other.data(), patches.data());
            AddPatches3D(patches.data(), g, window_, r0, nr, acc.data());
          }
        }
      }
      for (int64_t i = 0; i < out_n; ++i) out[i] = static_cast<T>(acc[i]);
    });
  }

 private:
  // The shape held by a sizes input (input_sizes, filter_sizes).
  static sdk::Shape SizesOf(sdk::Call& call, int index, const char* name) {
    const sdk::Shape s = call.input_shape(index);
    PX_SDK_CHECK(s.size() == 1 && s[0] == 5, "%s: %s must be a vector of 5 elements, got shape %s",
                 kOp, name, sdk::ShapeString(s).c_str());
    return call.input_int_values(index);
  }

  sdk::Window3D window_;
};

}  // namespace

PX_Status* RegisterNn3dGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = sdk::RegisterKernel<Conv3DBackpropKernel<false>>(
      info, registrar, sdk::sig::kConv3DBackpropInputV2,
      {sdk::FloatTypes(), {PX_DT_INT32, PX_DT_INT64}});
  if (s != nullptr) return s;
  return sdk::RegisterKernel<Conv3DBackpropKernel<true>>(
      info, registrar, sdk::sig::kConv3DBackpropFilterV2, {sdk::FloatTypes()});
}

PX_Status* RegisterNn3dFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> max_types = {PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<Conv3DKernel>(info, registrar, sdk::sig::kConv3D,
                                             {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<Pool3DKernel<true>>(info, registrar, sdk::sig::kMaxPool3D,
                                                   {max_types})) ||
      (s = sdk::RegisterKernel<Pool3DKernel<false>>(info, registrar, sdk::sig::kAvgPool3D,
                                                    {sdk::FloatTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu
