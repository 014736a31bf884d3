// Activations for float, half and bfloat16 (the 16-bit floats compute in
// float), in a TU of its own to keep Eigen compile times short.
#include <cmath>

#include "kernels/elementwise_eigen.h"
#include "kernels/vector_math.h"

namespace plexus::cpu::ew {

void RunActivation(Act act, float alpha, bool approximate, const float* x, float* y, int64_t n) {
  ActivationFloating<float>(act, alpha, approximate, x, y, n);
}
void RunActivation(Act act, float alpha, bool approximate, const sdk::half* x, sdk::half* y,
                   int64_t n) {
  ActivationHalfLike(act, alpha, approximate, x, y, n);
}
void RunActivation(Act act, float alpha, bool approximate, const sdk::bfloat16* x,
                   sdk::bfloat16* y, int64_t n) {
  ActivationHalfLike(act, alpha, approximate, x, y, n);
}

namespace {

// Max and sum of a row with 8 independent lanes, so the loops vectorize
// (a single accumulator is a chain of dependent additions: four times
// slower on a softmax over 64 columns). A NaN in the row is skipped by the
// max but still makes its own x - max, the sum and so every output NaN, as
// in the reference.
constexpr int kLanes = 8;

float RowMax(const float* x, int64_t n) {
  float lane[kLanes];
  for (int k = 0; k < kLanes; ++k) lane[k] = x[0];
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] = x[c + k] > lane[k] ? x[c + k] : lane[k];
  }
  float m = lane[0];
  for (int k = 1; k < kLanes; ++k) m = lane[k] > m ? lane[k] : m;
  for (; c < n; ++c) m = x[c] > m ? x[c] : m;
  return m;
}

float RowSum(const float* x, int64_t n) {
  float lane[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += x[c + k];
  }
  float s = 0;
  for (int k = 0; k < kLanes; ++k) s += lane[k];
  for (; c < n; ++c) s += x[c];
  return s;
}

}  // namespace

void RunSoftmax(bool log, const float* x, float* y, int64_t rows, int64_t cols) {
  if (!vmath::Available()) return SoftmaxRows(log, x, y, rows, cols);
  // Each row shifted by its max, exp through SLEEF (vector_math.h), then
  // normalized; log_softmax is (x - max) - log(sum).
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    if (cols == 0) continue;
    const float max = RowMax(xr, cols);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] - max;
    vmath::Apply(vmath::Fn::kExp, yr, yr, cols);
    const float sum = RowSum(yr, cols);
    if (log) {
      const float log_sum = std::log(sum);
      for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - max) - log_sum;
    } else {
      const float inv = 1.0f / sum;
      for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
  }
}
void RunSoftmax(bool log, const sdk::half* x, sdk::half* y, int64_t rows, int64_t cols) {
  SoftmaxRows(log, x, y, rows, cols);
}
void RunSoftmax(bool log, const sdk::bfloat16* x, sdk::bfloat16* y, int64_t rows, int64_t cols) {
  SoftmaxRows(log, x, y, rows, cols);
}

}  // namespace plexus::cpu::ew
