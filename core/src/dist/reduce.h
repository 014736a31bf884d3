// Element-wise reductions of collectives, by element type: Gloo's all-reduce
// calls them with (out, a, b, n), and reduce-scatter reduces the slices it
// received with them. The 16-bit floats compute in float and round once per
// pairwise step, as TensorFlow's ring reducer does.
#ifndef PLEXUS_CORE_SRC_DIST_REDUCE_H_
#define PLEXUS_CORE_SRC_DIST_REDUCE_H_

#include <cstddef>
#include <functional>

#include "dist/communicator.h"
#include "plexus/dtype.h"
#include "plexus/tensor.h"

namespace plexus::dist {

using ReduceFn = std::function<void(void* out, const void* a, const void* b, size_t n)>;

// float16, bfloat16, float32, float64 and the integer types.
bool ReductionSupported(DataType dtype);
// The function for a supported dtype.
ReduceFn ReductionFunction(DataType dtype, ReduceOp op);
// Divides every element by n (integers truncate, as TensorFlow's Div).
void DivideInPlace(Tensor& t, int n);

}  // namespace plexus::dist

#endif  // PLEXUS_CORE_SRC_DIST_REDUCE_H_
