// KServe's Open Inference Protocol (v2) names of the tensor dtypes: BOOL,
// UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BYTES, and Triton's BF16.
#ifndef PLEXUS_SERVE_V2_DATATYPE_H_
#define PLEXUS_SERVE_V2_DATATYPE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "plexus/dtype.h"

namespace plexus::serve {

// The v2 name of `dtype`, or "" when v2 has none (complex, resource).
inline const char* V2DatatypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return "BOOL";
    case DataType::kUInt8: return "UINT8";
    case DataType::kUInt16: return "UINT16";
    case DataType::kUInt32: return "UINT32";
    case DataType::kUInt64: return "UINT64";
    case DataType::kInt8: return "INT8";
    case DataType::kInt16: return "INT16";
    case DataType::kInt32: return "INT32";
    case DataType::kInt64: return "INT64";
    case DataType::kHalf: return "FP16";
    case DataType::kBFloat16: return "BF16";
    case DataType::kFloat: return "FP32";
    case DataType::kDouble: return "FP64";
    case DataType::kString: return "BYTES";
    default: return "";
  }
}

// The dtype of a v2 name (case-sensitive, as the protocol says).
inline absl::StatusOr<DataType> DataTypeFromV2(const std::string& name) {
  static const DataType kAll[] = {
      DataType::kBool,  DataType::kUInt8, DataType::kUInt16, DataType::kUInt32,
      DataType::kUInt64, DataType::kInt8, DataType::kInt16,  DataType::kInt32,
      DataType::kInt64, DataType::kHalf,  DataType::kBFloat16, DataType::kFloat,
      DataType::kDouble, DataType::kString};
  for (DataType d : kAll) {
    if (name == V2DatatypeName(d)) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown datatype '", name,
      "' (expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, "
      "FP16, BF16, FP32, FP64, BYTES)"));
}

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_V2_DATATYPE_H_
