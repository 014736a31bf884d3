// Element types. DataType uses TensorFlow's DataType numbers, so values read
// from a GraphDef and values crossing the plugin ABI (PX_DataType) need no
// translation.
#ifndef PLEXUS_DTYPE_H_
#define PLEXUS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "dlpack/dlpack.h"

namespace plexus {

enum class DataType : int32_t {
  kInvalid = 0,
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kComplex64 = 8,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kUInt16 = 17,
  kComplex128 = 18,
  kHalf = 19,
  kResource = 20,
  kVariant = 21,
  kUInt32 = 22,
  kUInt64 = 23,
};

// Offset TensorFlow adds to a type to make its reference ("_REF") variant.
inline constexpr int32_t kRefTypeOffset = 100;

// Bytes per element; 0 for types without a fixed size (string, resource,
// variant) and for unknown types.
size_t DataTypeSize(DataType type);
// TensorFlow's lower-case name: "float", "int32", ... ("invalid" if unknown).
std::string DataTypeName(DataType type);
// Parses a TensorFlow name ("float", "int32", "DT_FLOAT" also accepted).
absl::StatusOr<DataType> DataTypeFromName(absl::string_view name);
// True for the numbers this build knows (after stripping _REF).
bool IsKnownDataType(int32_t value);
// Strips a TensorFlow reference type (DT_FLOAT_REF -> DT_FLOAT).
DataType BaseType(int32_t value);

// DLPack descriptors. Fails for types DLPack cannot describe (string, ...).
absl::StatusOr<DLDataType> ToDLDataType(DataType type);
absl::StatusOr<DataType> FromDLDataType(DLDataType type);

}  // namespace plexus

#endif  // PLEXUS_DTYPE_H_
