// Eigen implementation of the floating-point unary ops and activations,
// included only by the per-dtype files elementwise_<float|double>.cc and
// activation_family_<float|double>.cc. The 16-bit floats convert blocks to
// float and reuse the float code.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_EIGEN_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_EIGEN_H_

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/elementwise_impl.h"

namespace plexus::cpu::ew {

// y = op(x) for float or double; x and y do not overlap.
template <typename C>
void UnaryFloating(Un op, const C* x, C* y, int64_t n) {
  using Array = Eigen::Array<C, Eigen::Dynamic, 1>;
  Eigen::Map<const Array> X(x, n);
  Eigen::Map<Array> Y(y, n);
  switch (op) {
    case Un::kNeg: Y = -X; return;
    case Un::kAbs: Y = X.abs(); return;
    case Un::kSign:
      for (int64_t i = 0; i < n; ++i) {
        y[i] = std::isnan(x[i]) ? x[i] : static_cast<C>((x[i] > 0) - (x[i] < 0));
      }
      return;
    case Un::kExp: Y = X.exp(); return;
    case Un::kLog: Y = X.log(); return;
    case Un::kLog1p: Y = X.log1p(); return;
    case Un::kSqrt:
      // Eigen's vectorized float sqrt gives NaN for +inf; keep +inf.
      Y = (X == std::numeric_limits<C>::infinity()).select(X, X.sqrt());
      return;
    case Un::kRsqrt: Y = X.rsqrt(); return;
    case Un::kSquare: Y = X.square(); return;
    case Un::kReciprocal: Y = X.inverse(); return;
    case Un::kTanh: Y = X.tanh(); return;
    case Un::kSigmoid: Y = X.logistic(); return;
    case Un::kErf:
      for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
      return;
    case Un::kErfc:
      for (int64_t i = 0; i < n; ++i) y[i] = std::erfc(x[i]);
      return;
    case Un::kSin: Y = X.sin(); return;
    case Un::kCos: Y = X.cos(); return;
    case Un::kTan: Y = X.tan(); return;
    case Un::kSinh: Y = X.sinh(); return;
    case Un::kCosh: Y = X.cosh(); return;
    case Un::kAsin: Y = X.asin(); return;
    case Un::kAcos: Y = X.acos(); return;
    case Un::kAtan: Y = X.atan(); return;
    case Un::kAsinh: Y = X.asinh(); return;
    case Un::kAcosh: Y = X.acosh(); return;
    case Un::kAtanh: Y = X.atanh(); return;
    case Un::kExpm1: Y = X.expm1(); return;
    case Un::kFloor: Y = X.floor(); return;
    case Un::kCeil: Y = X.ceil(); return;
    case Un::kRound: case Un::kRint:
      // Ties to even, as TensorFlow. (Eigen's vectorized rint loses the
      // sign of -0.0; rint keeps it, -0.4 rounding to -0.0 too.)
      for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i]);
      return;
    // Eigen's special functions, which TensorFlow's kernels use too.
    case Un::kLgamma: Y = X.lgamma(); return;
    case Un::kDigamma: Y = X.digamma(); return;
  }
}

// The 16-bit floats: blocks converted to float and back.
template <typename T>
void UnaryHalfLike(Un op, const T* x, T* y, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float in[kBlock], out[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) in[i] = static_cast<float>(x[start + i]);
    UnaryFloating<float>(op, in, out, m);
    for (int64_t i = 0; i < m; ++i) y[start + i] = T(out[i]);
  }
}

// ---------------------------------------------------------------------------
// Activations (activation_family_<dtype>.cc)
// ---------------------------------------------------------------------------

template <typename C>
void ActivationFloating(Act act, float alpha, bool approximate, const C* x, C* y, int64_t n) {
  using Array = Eigen::Array<C, Eigen::Dynamic, 1>;
  Eigen::Map<const Array> X(x, n);
  Eigen::Map<Array> Y(y, n);
  // The comparisons are written so that NaN passes through.
  switch (act) {
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < C(0) ? C(0) : x[i];
      return;
    case Act::kRelu6:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < C(0) ? C(0) : (x[i] > C(6) ? C(6) : x[i]);
      return;
    case Act::kLeakyRelu: {
      const C a = static_cast<C>(alpha);
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < C(0) ? a * x[i] : x[i];
      return;
    }
    case Act::kElu: Y = (X < C(0)).select(X.expm1(), X); return;
    case Act::kSelu: {
      const C scale = C(1.0507009873554804934193349852946);
      const C scale_alpha = C(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717);
      Y = (X < C(0)).select(scale_alpha * X.expm1(), scale * X);
      return;
    }
    case Act::kSoftplus:
      // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which cannot overflow.
      Y = X.max(C(0)) + (-X.abs()).exp().log1p();
      return;
    case Act::kSoftsign: Y = X / (X.abs() + C(1)); return;
    case Act::kGelu:
      if (approximate) {
        const C k = C(0.7978845608028654);  // sqrt(2 / pi)
        Y = C(0.5) * X * (C(1) + (k * (X + C(0.044715) * X.cube())).tanh());
      } else {
        for (int64_t i = 0; i < n; ++i) {
          y[i] = C(0.5) * x[i] * (C(1) + std::erf(x[i] * C(0.7071067811865476)));
        }
      }
      return;
  }
}

template <typename T>
void ActivationHalfLike(Act act, float alpha, bool approximate, const T* x, T* y, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float in[kBlock], out[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) in[i] = static_cast<float>(x[start + i]);
    ActivationFloating<float>(act, alpha, approximate, in, out, m);
    for (int64_t i = 0; i < m; ++i) y[start + i] = T(out[i]);
  }
}

// One row: y = softmax(x) or log_softmax(x), shifted by the max for range.
template <typename C>
void SoftmaxRow(bool log, const C* x, C* y, int64_t cols) {
  using Array = Eigen::Array<C, Eigen::Dynamic, 1>;
  Eigen::Map<const Array> X(x, cols);
  Eigen::Map<Array> Y(y, cols);
  const C max = X.maxCoeff();
  Y = (X - max).exp();
  const C sum = Y.sum();
  if (log) {
    Y = (X - max) - std::log(sum);
  } else {
    Y *= C(1) / sum;
  }
}

template <typename T>
void SoftmaxRows(bool log, const T* x, T* y, int64_t rows, int64_t cols) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    for (int64_t r = 0; r < rows; ++r) SoftmaxRow<T>(log, x + r * cols, y + r * cols, cols);
  } else {
    std::vector<float> in(cols), out(cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) in[c] = static_cast<float>(x[r * cols + c]);
      SoftmaxRow<float>(log, in.data(), out.data(), cols);
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = T(out[c]);
    }
  }
}

}  // namespace plexus::cpu::ew

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_ELEMENTWISE_EIGEN_H_
