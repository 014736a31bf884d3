#include "plexus/dtype.h"

#include <array>

#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "plexus/plugin_api.h"

namespace plexus {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;
  size_t size;
  uint8_t dl_code;  // 255: not expressible in DLPack
  uint8_t dl_bits;
};

constexpr uint8_t kNoDl = 255;

constexpr TypeInfo kTypes[] = {
    {DataType::kFloat, "float", 4, kDLFloat, 32},
    {DataType::kDouble, "double", 8, kDLFloat, 64},
    {DataType::kInt32, "int32", 4, kDLInt, 32},
    {DataType::kUInt8, "uint8", 1, kDLUInt, 8},
    {DataType::kInt16, "int16", 2, kDLInt, 16},
    {DataType::kInt8, "int8", 1, kDLInt, 8},
    {DataType::kString, "string", 0, kNoDl, 0},
    {DataType::kComplex64, "complex64", 8, kDLComplex, 64},
    {DataType::kInt64, "int64", 8, kDLInt, 64},
    {DataType::kBool, "bool", 1, PX_DL_BOOL, 8},
    {DataType::kBFloat16, "bfloat16", 2, kDLBfloat, 16},
    {DataType::kUInt16, "uint16", 2, kDLUInt, 16},
    {DataType::kComplex128, "complex128", 16, kDLComplex, 128},
    {DataType::kHalf, "half", 2, kDLFloat, 16},
    {DataType::kResource, "resource", 0, kNoDl, 0},
    {DataType::kVariant, "variant", 0, kNoDl, 0},
    {DataType::kUInt32, "uint32", 4, kDLUInt, 32},
    {DataType::kUInt64, "uint64", 8, kDLUInt, 64},
};

// By enum value, built once: the executor looks types up per tensor.
const TypeInfo* Lookup(DataType type) {
  constexpr int kSlots = 32;
  static const auto* table = [] {
    auto* t = new std::array<const TypeInfo*, kSlots>{};
    for (const TypeInfo& info : kTypes) {
      const int v = static_cast<int>(info.type);
      if (v >= 0 && v < kSlots) (*t)[v] = &info;
    }
    return t;
  }();
  const int v = static_cast<int>(type);
  return v >= 0 && v < kSlots ? (*table)[v] : nullptr;
}

}  // namespace

size_t DataTypeSize(DataType type) {
  const TypeInfo* info = Lookup(type);
  return info ? info->size : 0;
}

std::string DataTypeName(DataType type) {
  const TypeInfo* info = Lookup(type);
  if (info) return info->name;
  return absl::StrCat("invalid(", static_cast<int>(type), ")");
}

absl::StatusOr<DataType> DataTypeFromName(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower.rfind("dt_", 0) == 0) lower = lower.substr(3);
  if (lower == "float32") lower = "float";
  if (lower == "float64") lower = "double";
  if (lower == "float16") lower = "half";
  for (const TypeInfo& info : kTypes) {
    if (lower == info.name) return info.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown data type '", name, "'"));
}

bool IsKnownDataType(int32_t value) {
  if (value > kRefTypeOffset) value -= kRefTypeOffset;
  return Lookup(static_cast<DataType>(value)) != nullptr;
}

DataType BaseType(int32_t value) {
  if (value > kRefTypeOffset) value -= kRefTypeOffset;
  return static_cast<DataType>(value);
}

absl::StatusOr<DLDataType> ToDLDataType(DataType type) {
  const TypeInfo* info = Lookup(type);
  if (info == nullptr || info->dl_code == kNoDl) {
    return absl::InvalidArgumentError(
        absl::StrCat("data type ", DataTypeName(type), " has no DLPack equivalent"));
  }
  DLDataType dl;
  dl.code = info->dl_code;
  dl.bits = info->dl_bits;
  dl.lanes = 1;
  return dl;
}

absl::StatusOr<DataType> FromDLDataType(DLDataType dl) {
  if (dl.lanes == 1) {
    for (const TypeInfo& info : kTypes) {
      if (info.dl_code == dl.code && info.dl_bits == dl.bits) return info.type;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported DLPack data type (code ", dl.code, ", bits ",
                   dl.bits, ", lanes ", dl.lanes, ")"));
}

}  // namespace plexus
