// The epilogue of the cpu fused kernels (_FusedMatMul in fused_matmul.cc,
// _FusedConv2D in fused_conv.cc, _FusedDepthwiseConv2dNative in
// depthwise_conv.cc, whose float fast path has its own copy in registers): bias or inference batch norm per channel,
// then the activation, applied to a block of output rows right after the
// product wrote it, while it is still in cache. Rows are [channels] wide
// (matmul columns, or NHWC output channels).
//
// The per-channel step and the piecewise-linear activations (Relu, Relu6,
// LeakyRelu) are one loop over the block; Elu, Tanh and Sigmoid then run
// over the same (cache-hot) chunk with the vectorized Eigen code of the
// activation and elementwise families. The 16-bit floats convert each chunk
// to float and back, as the plain kernels do.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_FUSED_EPILOGUE_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_FUSED_EPILOGUE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cpu {

// _FusedConv2D's kernels (fused_conv.cc), registered by RegisterFusedFamily.
PX_Status* RegisterFusedConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// DepthwiseConv2dNative and _FusedDepthwiseConv2dNative (depthwise_conv.cc),
// registered by RegisterConvKernels (nn_conv.cc).
PX_Status* RegisterDepthwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// _PlexusFusedElementwise, in fused_elementwise.cc.
PX_Status* RegisterFusedElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// _PlexusLayerNorm, in layer_norm.cc.
PX_Status* RegisterLayerNormKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// True when [x, x + x_size) and [y, y + y_size) share memory.
template <typename A, typename B>
bool BuffersOverlap(const A* x, int64_t x_size, const B* y, int64_t y_size) {
  const auto xb = reinterpret_cast<uintptr_t>(x);
  const auto yb = reinterpret_cast<uintptr_t>(y);
  return x_size > 0 && y_size > 0 && xb < yb + y_size * sizeof(B) &&
         yb < xb + x_size * sizeof(A);
}

// The per-channel parameters, in the compute type C (float for the 16-bit
// floats), read from the kernel's args (inputs 2...).
template <typename C>
struct Epilogue {
  sdk::FusedActivation act = sdk::FusedActivation::kNone;
  C alpha = C(0.2);
  bool batch_norm = false;
  std::vector<C> shift;   // BiasAdd: the bias; batch norm: the offset
  std::vector<C> mean;    // batch norm only
  std::vector<C> factor;  // batch norm only: scale / sqrt(variance + epsilon)
  // _PlexusFusedConv2DAdd: a tensor of the output's shape (rows of
  // `channels`), added after the per-channel step, before the activation.
  const C* addend = nullptr;

  template <typename T>
  static Epilogue Make(const sdk::FusedSpec& spec, sdk::Call& call, int64_t channels,
                       const char* op) {
    static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
    for (int64_t i = 0; i < spec.num_args; ++i) {
      const sdk::Shape s = call.input_shape(2 + i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s %s must be 1-D with %lld elements, got %s", op,
                   spec.batch_norm ? kBnNames[i] : "bias", static_cast<long long>(channels),
                   sdk::ShapeString(s).c_str());
    }
    Epilogue e;
    e.act = spec.activation;
    e.alpha = static_cast<C>(spec.leakyrelu_alpha);
    e.batch_norm = spec.batch_norm;
    auto load = [&](size_t input) {
      const T* p = call.input<T>(input);
      std::vector<C> v(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) v[c] = static_cast<C>(p[c]);
      return v;
    };
    if (!spec.batch_norm) {
      e.shift = load(2);
      return e;
    }
    const std::vector<C> scale = load(2), variance = load(5);
    e.shift = load(3);
    e.mean = load(4);
    e.factor.resize(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      e.factor[c] = static_cast<C>(static_cast<double>(scale[c]) /
                                   std::sqrt(static_cast<double>(variance[c]) + spec.epsilon));
    }
    return e;
  }
};

// The per-channel step (and the addend's rows at `add`, when not null)
// fused with a piecewise-linear activation `kAct` (kNone for the others),
// over `rows` rows of `channels` values in place.
template <sdk::FusedActivation kAct, typename C>
void ChannelStep(const Epilogue<C>& e, C* y, int64_t rows, int64_t channels, const C* add) {
  const C* shift = e.shift.data();
  const C alpha = e.alpha;
  auto act = [alpha](C v) {
    if constexpr (kAct == sdk::FusedActivation::kRelu) return v < C(0) ? C(0) : v;
    if constexpr (kAct == sdk::FusedActivation::kRelu6) {
      return v < C(0) ? C(0) : (v > C(6) ? C(6) : v);
    }
    if constexpr (kAct == sdk::FusedActivation::kLeakyRelu) return v < C(0) ? alpha * v : v;
    return v;
  };
  if (e.batch_norm) {
    const C* mean = e.mean.data();
    const C* factor = e.factor.data();
    for (int64_t r = 0; r < rows; ++r) {
      C* yr = y + r * channels;
      if (add != nullptr) {
        const C* ar = add + r * channels;
        for (int64_t c = 0; c < channels; ++c) yr[c] = act((yr[c] - mean[c]) * factor[c] + shift[c] + ar[c]);
      } else {
        for (int64_t c = 0; c < channels; ++c) yr[c] = act((yr[c] - mean[c]) * factor[c] + shift[c]);
      }
    }
  } else if (add != nullptr) {
    for (int64_t r = 0; r < rows; ++r) {
      C* yr = y + r * channels;
      const C* ar = add + r * channels;
      for (int64_t c = 0; c < channels; ++c) yr[c] = act(yr[c] + shift[c] + ar[c]);
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      C* yr = y + r * channels;
      for (int64_t c = 0; c < channels; ++c) yr[c] = act(yr[c] + shift[c]);
    }
  }
}

// The whole epilogue over a chunk of rows of C values, in place; `add`:
// the addend's rows for this chunk, or null.
template <typename C>
void ApplyEpilogueChunk(const Epilogue<C>& e, C* y, int64_t rows, int64_t channels, const C* add) {
  using sdk::FusedActivation;
  switch (e.act) {
    case FusedActivation::kRelu:
      ChannelStep<FusedActivation::kRelu>(e, y, rows, channels, add);
      return;
    case FusedActivation::kRelu6:
      ChannelStep<FusedActivation::kRelu6>(e, y, rows, channels, add);
      return;
    case FusedActivation::kLeakyRelu:
      ChannelStep<FusedActivation::kLeakyRelu>(e, y, rows, channels, add);
      return;
    default:
      ChannelStep<FusedActivation::kNone>(e, y, rows, channels, add);
      break;
  }
  const int64_t n = rows * channels;
  switch (e.act) {
    case FusedActivation::kElu: ew::RunActivation(ew::Act::kElu, 0.f, false, y, y, n); return;
    case FusedActivation::kTanh: ew::RunUnary(ew::Un::kTanh, y, y, n); return;
    case FusedActivation::kSigmoid: ew::RunUnary(ew::Un::kSigmoid, y, y, n); return;
    default: return;
  }
}

// Applies the epilogue to `rows` rows of `channels` values of T in place,
// a cache-sized chunk of whole rows at a time. `first_row`: where the rows
// start in the whole output (the addend's row to add to the first).
template <typename T>
void ApplyEpilogue(const Epilogue<sdk::ComputeType<T>>& e, T* y, int64_t rows, int64_t channels,
                   int64_t first_row = 0) {
  using C = sdk::ComputeType<T>;
  if (rows == 0 || channels == 0) return;
  const C* add = e.addend != nullptr ? e.addend + first_row * channels : nullptr;
  constexpr int64_t kChunkElements = 4096;
  const int64_t chunk_rows = std::max<int64_t>(1, kChunkElements / channels);
  if constexpr (std::is_same_v<T, C>) {
    // Large blocks (the products' row blocks) on several threads (OpenMP,
    // as the depthwise convolution).
    const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
#pragma omp parallel for schedule(static) if (chunks > 1 && rows * channels > (int64_t{1} << 15))
    for (int64_t ci = 0; ci < chunks; ++ci) {
      const int64_t r0 = ci * chunk_rows;
      ApplyEpilogueChunk(e, y + r0 * channels, std::min(chunk_rows, rows - r0), channels,
                         add != nullptr ? add + r0 * channels : nullptr);
    }
  } else {
    PX_SDK_CHECK(add == nullptr, "an addend is for float outputs only");
    std::vector<C> buffer(static_cast<size_t>(std::min(chunk_rows, rows) * channels));
    for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
      const int64_t nr = std::min(chunk_rows, rows - r0);
      T* yc = y + r0 * channels;
      const int64_t n = nr * channels;
      for (int64_t i = 0; i < n; ++i) buffer[i] = static_cast<C>(yc[i]);
      ApplyEpilogueChunk(e, buffer.data(), nr, channels, static_cast<const C*>(nullptr));
      for (int64_t i = 0; i < n; ++i) yc[i] = static_cast<T>(buffer[i]);
    }
  }
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_FUSED_EPILOGUE_H_
