// Reference kernels: MatrixSolve (see reference_kernels.h). For each matrix
// of the batch, A x = b (A^T x = b with adjoint) by Gaussian elimination
// with partial pivoting in double. As TensorFlow's kernel, a matrix is "not
// invertible" only when a pivot of its LU factors is exactly zero (or NaN);
// empty matrices and right-hand sides give empty results.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// Solves a (m x m, row-major, overwritten) times x = b (m x k, overwritten
// with x). False when a pivot is zero or NaN.
bool Solve(std::vector<double>& a, std::vector<double>& b, int64_t m, int64_t k) {
  bool invertible = true;
  for (int64_t c = 0; c < m; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::fabs(a[r * m + c]) > std::fabs(a[p * m + c])) p = r;
    }
    if (p != c) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[p * m + j]);
      for (int64_t j = 0; j < k; ++j) std::swap(b[c * k + j], b[p * k + j]);
    }
    const double pivot = a[c * m + c];
    if (!(std::fabs(pivot) > 0)) {
      invertible = false;
      continue;
    }
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / pivot;
      if (f == 0) continue;
      for (int64_t j = c; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
      for (int64_t j = 0; j < k; ++j) b[r * k + j] -= f * b[c * k + j];
    }
  }
  if (!invertible) return false;
  for (int64_t c = m - 1; c >= 0; --c) {
    for (int64_t j = 0; j < k; ++j) {
      double s = b[c * k + j];
      for (int64_t i = c + 1; i < m; ++i) s -= a[c * m + i] * b[i * k + j];
      b[c * k + j] = s / a[c * m + c];
    }
  }
  return true;
}

class MatrixSolveKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { adjoint_ = attrs.Bool("adjoint", false); }

  void Compute(sdk::Call& call) override {
    const Shape as = call.input_shape(0), bs = call.input_shape(1);
    const int64_t batches = sdk::MatrixSolveShapes(as, bs);
    const int64_t m = as.back(), k = bs.back();
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* x = call.AllocateOutput<T>(0, bs);
      if (m == 0 || k == 0) return;
      std::vector<double> lu(m * m), rhs(m * k);
      for (int64_t n = 0; n < batches; ++n) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < m; ++j) {
            const T v = adjoint_ ? a[n * m * m + j * m + i] : a[n * m * m + i * m + j];
            lu[i * m + j] = static_cast<double>(static_cast<C>(v));
          }
        }
        for (int64_t i = 0; i < m * k; ++i) rhs[i] = static_cast<double>(static_cast<C>(b[n * m * k + i]));
        PX_SDK_CHECK(Solve(lu, rhs, m, k), "Input matrix is not invertible.");
        for (int64_t i = 0; i < m * k; ++i) x[n * m * k + i] = static_cast<T>(static_cast<C>(rhs[i]));
      }
    });
  }

 private:
  bool adjoint_ = false;
};

}  // namespace

PX_Status* RegisterMatrixSolveKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<MatrixSolveKernel>(info, registrar, sdk::sig::kMatrixSolve,
                                                {{PX_DT_FLOAT, PX_DT_DOUBLE}});
}

}  // namespace plexus::reference
