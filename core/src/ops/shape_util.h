// Shape-function building blocks shared by the op families, and the dtype
// lists TensorFlow's op definitions use.
#ifndef PLEXUS_CORE_SRC_OPS_SHAPE_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_SHAPE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "plexus/graph.h"
#include "plexus/tensor.h"

namespace plexus {

inline constexpr char kNumericTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
inline constexpr char kRealTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64}";
inline constexpr char kFloatTypes[] = "T: {half, bfloat16, float, double}";

// Output 0 has the shape of input 0.
absl::Status UnchangedShape(InferenceContext& ctx);
// Output 0 is the NumPy broadcast of inputs 0 and 1.
absl::Status BroadcastShape(InferenceContext& ctx);
// Input 0 reduced over the axes in input 1 (the keep_dims attribute keeps
// them as 1s), as far as the axes are known.
absl::Status ReductionShape(InferenceContext& ctx);

// Shape arithmetic on sizes taken from attributes and input shapes, which a
// graph file may set to anything: a * b, a + b, or an error naming `what`
// and the node when the result does not fit in int64.
absl::Status CheckedMul(const InferenceContext& ctx, int64_t a, int64_t b, absl::string_view what, int64_t* out);
absl::Status CheckedAdd(const InferenceContext& ctx, int64_t a, int64_t b, absl::string_view what, int64_t* out);
// The product of known, non-negative dims, checked as CheckedMul.
absl::Status CheckedNumElements(const InferenceContext& ctx, const Shape& dims, absl::string_view what,
                                int64_t* out);
// The extent of a dilated window, (k - 1) * dilation + 1, checked.
absl::Status DilatedWindow(const InferenceContext& ctx, int64_t k, int64_t dilation, int64_t* out);
// ceil(size / stride) for size >= 0 and stride > 0, without overflow.
inline int64_t CeilDiv(int64_t size, int64_t stride) { return size == 0 ? 0 : (size - 1) / stride + 1; }
// Reads an integer host tensor (int16, int32 or int64) as int64s; false when
// it is unknown or not an integer tensor.
bool ReadIntValues(const Tensor* t, std::vector<int64_t>* values);


// The attributes of a 2-D windowed op (convolution, pooling and their
// gradients), checked.
struct Window2D {
  bool nchw = false;
  std::string padding;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // EXPLICIT only
};

// Reads data_format, strides, padding, and where present dilations and
// explicit_paddings (EXPLICIT only with allow_explicit and that attribute).
absl::Status ReadWindow2D(InferenceContext& ctx, bool allow_explicit, Window2D* w);

// One spatial output size of the forward op (-1 when the input size is
// unknown); an error when the window does not fit.
absl::Status OutputSize(InferenceContext& ctx, const Window2D& w, int64_t in, int64_t k,
                        int64_t dilation, int64_t stride, int64_t pad_before,
                        int64_t pad_after, int64_t* out);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_SHAPE_UTIL_H_
