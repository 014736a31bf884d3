// CPU kernels: MatrixSolve, written with sdk::OpKernel: each matrix of the
// batch is factored with Eigen's PartialPivLU (as TensorFlow's kernel does)
// and the right-hand sides solved with the factors. A matrix is "not
// invertible" when the smallest pivot magnitude is not positive (an exact
// zero, or NaN), TensorFlow's test; empty matrices give empty results.
#include <cstdint>

#include <Eigen/Core>
#include <Eigen/LU>

#include "kernels/register_kernels.h"
#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class MatrixSolveKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { adjoint_ = attrs.Bool("adjoint", false); }

  void Compute(sdk::Call& call) override {
    const Shape as = call.input_shape(0), bs = call.input_shape(1);
    const int64_t batches = sdk::MatrixSolveShapes(as, bs);
    const int64_t m = as.back(), k = bs.back();
    const PX_DataType dt = call.input_dtype(0);
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* x = call.AllocateOutput<T>(0, bs);
      if (m == 0 || k == 0) return;
      Eigen::PartialPivLU<RowMatrix<T>> lu(m);
      for (int64_t n = 0; n < batches; ++n) {
        Eigen::Map<const RowMatrix<T>> A(a + n * m * m, m, m);
        Eigen::Map<const RowMatrix<T>> B(b + n * m * k, m, k);
        Eigen::Map<RowMatrix<T>> X(x + n * m * k, m, k);
        if (adjoint_) {
          lu.compute(A.adjoint());
        } else {
          lu.compute(A);
        }
        const T min_pivot = lu.matrixLU().diagonal().cwiseAbs().minCoeff();
        PX_SDK_CHECK(min_pivot > T(0), "Input matrix is not invertible.");
        X.noalias() = lu.solve(B);
      }
    };
    if (dt == PX_DT_DOUBLE) {
      run(sdk::TypeTag<double>{});
    } else if (dt == PX_DT_FLOAT) {
      run(sdk::TypeTag<float>{});
    } else {
      sdk::UnsupportedType(dt, "MatrixSolve");
    }
  }

 private:
  bool adjoint_ = false;
};

}  // namespace

PX_Status* RegisterMatrixSolveFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<MatrixSolveKernel>(info, registrar, sdk::sig::kMatrixSolve,
                                                {{PX_DT_FLOAT, PX_DT_DOUBLE}});
}

}  // namespace plexus::cpu
