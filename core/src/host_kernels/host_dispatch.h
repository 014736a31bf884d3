// Element-type dispatch for host kernels that compute on numbers: calls a
// generic lambda with a value of the C++ type of a DataType (sdk::half and
// sdk::bfloat16 for the 16-bit floats, which convert to and from float, so
// arithmetic on them happens in float and rounds when stored), and small
// readers of integer host tensors.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_HOST_DISPATCH_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_HOST_DISPATCH_H_

#include <complex>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "plexus/dtype.h"
#include "plexus/sdk/float16.h"
#include "plexus/tensor.h"

namespace plexus::host {

using sdk::bfloat16;
using sdk::half;

enum TypeSet : unsigned {
  kFloats = 1,     // half, bfloat16, float, double
  kIntegers = 2,   // int8..int64, uint8..uint64
  kComplex = 4,    // complex64, complex128
  kBool = 8,
  kNumbers = kFloats | kIntegers | kComplex,
  kReals = kFloats | kIntegers,
};

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <typename T>
inline constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

// The type arithmetic on T happens in: float for the 16-bit floats.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

// a + b, a - b and a * b rounded to T. Integers in unsigned arithmetic at
// least as wide as unsigned int, which wraps as TensorFlow's integer
// arithmetic does (a signed overflow would be undefined behaviour); other
// types in Compute<T>.
template <typename T>
using Wrapping = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T, typename Op>
T Arith(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using W = Wrapping<T>;
    return static_cast<T>(static_cast<W>(op(static_cast<W>(a), static_cast<W>(b))));
  } else {
    return T(op(Compute<T>(a), Compute<T>(b)));
  }
}
template <typename T>
T Add(T a, T b) { return Arith(a, b, std::plus<>()); }
template <typename T>
T Sub(T a, T b) { return Arith(a, b, std::minus<>()); }
template <typename T>
T Mul(T a, T b) { return Arith(a, b, std::multiplies<>()); }

// Calls f(T{}) for `t` when it is in `Set` (only those types are
// instantiated); false otherwise.
template <unsigned Set, typename F>
bool Visit(DataType t, F&& f) {
#define PX_HOST_VISIT_CASE(dtype, set, type) \
  case DataType::dtype:                      \
    if constexpr ((Set & (set)) != 0) {      \
      f(type{});                             \
      return true;                           \
    }                                        \
    break;
  switch (t) {
    PX_HOST_VISIT_CASE(kFloat, kFloats, float)
    PX_HOST_VISIT_CASE(kDouble, kFloats, double)
    PX_HOST_VISIT_CASE(kHalf, kFloats, half)
    PX_HOST_VISIT_CASE(kBFloat16, kFloats, bfloat16)
    PX_HOST_VISIT_CASE(kInt8, kIntegers, int8_t)
    PX_HOST_VISIT_CASE(kInt16, kIntegers, int16_t)
    PX_HOST_VISIT_CASE(kInt32, kIntegers, int32_t)
    PX_HOST_VISIT_CASE(kInt64, kIntegers, int64_t)
    PX_HOST_VISIT_CASE(kUInt8, kIntegers, uint8_t)
    PX_HOST_VISIT_CASE(kUInt16, kIntegers, uint16_t)
    PX_HOST_VISIT_CASE(kUInt32, kIntegers, uint32_t)
    PX_HOST_VISIT_CASE(kUInt64, kIntegers, uint64_t)
    PX_HOST_VISIT_CASE(kComplex64, kComplex, std::complex<float>)
    PX_HOST_VISIT_CASE(kComplex128, kComplex, std::complex<double>)
    PX_HOST_VISIT_CASE(kBool, kBool, bool)
    default:
      break;
  }
#undef PX_HOST_VISIT_CASE
  return false;
}

// The values of an int32 or int64 host tensor; false for other types.
inline bool ReadInts(const Tensor& t, std::vector<int64_t>* out) {
  out->clear();
  const int64_t n = t.num_elements();
  if (t.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < n; ++i) out->push_back(t.data<int32_t>()[i]);
  } else if (t.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < n; ++i) out->push_back(t.data<int64_t>()[i]);
  } else {
    return false;
  }
  return true;
}

// Element i of an int32 or int64 host tensor.
inline int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

}  // namespace plexus::host

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_HOST_DISPATCH_H_
