// Shapes of a batched matrix product (BatchMatMul, V2, V3): validated the
// way TensorFlow does, shared by the cpu and reference kernels so both accept
// and refuse the same inputs with the same messages.
#ifndef PLEXUS_SDK_LINALG_SHAPES_H_
#define PLEXUS_SDK_LINALG_SHAPES_H_

#include <algorithm>
#include <cstdint>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

struct BatchMatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape batch;    // the output's batch dimensions
  Shape x_batch;  // x's batch dimensions, padded with leading 1s to batch's rank
  Shape y_batch;  // the same for y
  Shape out;      // batch + [m, n]
};

// out[batch..., m, n] = op(x)[..., m, k] * op(y)[..., k, n], op transposing
// when adj is set. Batch dimensions broadcast when `broadcast` (V2, V3),
// else they must be equal. Throws INVALID_ARGUMENT naming `op`.
inline BatchMatMulShape BatchMatMulShapes(const char* op, const Shape& xs, const Shape& ys,
                                          bool adj_x, bool adj_y, bool broadcast) {
  PX_SDK_CHECK(xs.size() >= 2 && ys.size() >= 2,
               "%s inputs must be at least rank 2, got %s and %s", op,
               ShapeString(xs).c_str(), ShapeString(ys).c_str());
  BatchMatMulShape g;
  const size_t xr = xs.size(), yr = ys.size();
  g.m = adj_x ? xs[xr - 1] : xs[xr - 2];
  g.k = adj_x ? xs[xr - 2] : xs[xr - 1];
  const int64_t ky = adj_y ? ys[yr - 1] : ys[yr - 2];
  g.n = adj_y ? ys[yr - 2] : ys[yr - 1];
  PX_SDK_CHECK(g.k == ky, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
               ShapeString(xs).c_str(), ShapeString(ys).c_str());
  if (!broadcast) {
    PX_SDK_CHECK(xr == yr && std::equal(xs.begin(), xs.end() - 2, ys.begin()),
                 "%s batch dimensions must be equal, got %s and %s", op,
                 ShapeString(xs).c_str(), ShapeString(ys).c_str());
  }
  const size_t br = std::max(xr, yr) - 2;
  g.batch.assign(br, 0);
  g.x_batch.assign(br, 1);
  g.y_batch.assign(br, 1);
  for (size_t i = 0; i < br; ++i) {
    if (i + (xr - 2) >= br) g.x_batch[i] = xs[i + (xr - 2) - br];
    if (i + (yr - 2) >= br) g.y_batch[i] = ys[i + (yr - 2) - br];
    PX_SDK_CHECK(g.x_batch[i] == g.y_batch[i] || g.x_batch[i] == 1 || g.y_batch[i] == 1,
                 "%s batch dimensions of %s and %s do not broadcast", op,
                 ShapeString(xs).c_str(), ShapeString(ys).c_str());
    g.batch[i] = g.x_batch[i] == 1 ? g.y_batch[i] : g.x_batch[i];
  }
  g.out = g.batch;
  g.out.push_back(g.m);
  g.out.push_back(g.n);
  return g;
}

// MatrixSolve: matrix [..., m, m] and rhs [..., m, k] with the same batch
// dimensions (no broadcasting, as TensorFlow's linear-algebra kernels).
// Returns the number of matrices; throws INVALID_ARGUMENT with TensorFlow's
// messages.
inline int64_t MatrixSolveShapes(const Shape& a, const Shape& b) {
  PX_SDK_CHECK(a.size() >= 2, "Input tensor 0 must have rank >= 2, got %s", ShapeString(a).c_str());
  PX_SDK_CHECK(a.size() == b.size(), "All input tensors must have the same rank.");
  PX_SDK_CHECK(std::equal(a.begin(), a.end() - 2, b.begin()),
               "All input tensors must have the same outer dimensions.");
  const size_t r = a.size();
  PX_SDK_CHECK(a[r - 2] == a[r - 1], "First input (lhs) must be a square matrix.");
  PX_SDK_CHECK(b[r - 2] == a[r - 2], "Input matrix and rhs are incompatible.");
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < r; ++i) batches *= a[i];
  return batches;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_LINALG_SHAPES_H_
