#include "cases.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/sdk/float16.h"

namespace plexus::conformance {
namespace {

std::map<std::string, CaseGenerator>& Generators() {
  static auto* generators = new std::map<std::string, CaseGenerator>();
  return *generators;
}

}  // namespace

const CaseGenerator* FindCaseGenerator(const std::string& op) {
  auto it = Generators().find(op);
  return it == Generators().end() ? nullptr : &it->second;
}

std::vector<std::string> CatalogOps() {
  std::vector<std::string> ops;
  for (const auto& entry : Generators()) ops.push_back(entry.first);
  return ops;
}

bool RegisterCaseGenerator(std::vector<std::string> ops, CaseGenerator fn) {
  for (std::string& op : ops) {
    if (!Generators().emplace(op, fn).second) {
      std::fprintf(stderr, "conformance catalog: two case generators for op %s\n", op.c_str());
      std::abort();
    }
  }
  return true;
}

Case& Case::Input(Tensor value) {
  inputs_.push_back(std::move(value));
  return *this;
}
Case& Case::Attr(const std::string& name, const tf::AttrValue& value) {
  for (auto& entry : attrs_) {
    if (entry.first == name) {
      entry.second = value;
      return *this;
    }
  }
  attrs_.emplace_back(name, value);
  return *this;
}
Case& Case::Attr(const std::string& name, DataType value) {
  tf::AttrValue v;
  v.set_type(static_cast<tf::DataType>(value));
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, int64_t value) {
  tf::AttrValue v;
  v.set_i(value);
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, float value) {
  tf::AttrValue v;
  v.set_f(value);
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, bool value) {
  tf::AttrValue v;
  v.set_b(value);
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, const std::string& value) {
  tf::AttrValue v;
  v.set_s(value);
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, const std::vector<int64_t>& value) {
  tf::AttrValue v;
  auto* list = v.mutable_list();
  for (int64_t x : value) list->add_i(x);
  return Attr(name, v);
}
Case& Case::Attr(const std::string& name, const std::vector<DataType>& value) {
  tf::AttrValue v;
  auto* list = v.mutable_list();
  for (DataType x : value) list->add_type(static_cast<tf::DataType>(x));
  return Attr(name, v);
}
Case& Case::WithTolerance(Tolerance tol) {
  tolerance_ = tol;
  return *this;
}
Case& Case::ExpectError(absl::StatusCode code) {
  expected_error_ = code;
  return *this;
}

std::string Case::Describe() const {
  std::vector<std::string> ins, attrs;
  for (const Tensor& t : inputs_) {
    ins.push_back(absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape())));
  }
  for (const auto& [name, value] : attrs_) {
    attrs.push_back(absl::StrCat(name, "=", value.ShortDebugString()));
  }
  return absl::StrCat(label_, ": ", op_, "(", absl::StrJoin(ins, ", "), ") ",
                      absl::StrJoin(attrs, " "));
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kHalf ||
         t == DataType::kBFloat16;
}
bool IsUnsignedType(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kUInt16 || t == DataType::kUInt32 ||
         t == DataType::kUInt64;
}
bool IsIntegerType(DataType t) {
  return IsUnsignedType(t) || t == DataType::kInt8 || t == DataType::kInt16 ||
         t == DataType::kInt32 || t == DataType::kInt64;
}


Tolerance DefaultTolerance(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return {1e-6, 1e-5};
    case DataType::kDouble: return {1e-12, 1e-12};
    case DataType::kHalf: return {2e-3, 1e-3};
    case DataType::kBFloat16: return {1.6e-2, 1e-2};
    default: return {0, 0};
  }
}

double ElementAsDouble(const Tensor& t, int64_t i) {
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case DataType::kFloat: return static_cast<const float*>(p)[i];
    case DataType::kDouble: return static_cast<const double*>(p)[i];
    case DataType::kHalf: return static_cast<float>(static_cast<const sdk::half*>(p)[i]);
    case DataType::kBFloat16: return static_cast<float>(static_cast<const sdk::bfloat16*>(p)[i]);
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kUInt32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] ? 1 : 0;
    default: return std::nan("");
  }
}

namespace {

void SetElement(Tensor& t, int64_t i, double v) {
  void* p = t.raw_data();
  switch (t.dtype()) {
    case DataType::kFloat: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::kDouble: static_cast<double*>(p)[i] = v; break;
    case DataType::kHalf: static_cast<sdk::half*>(p)[i] = sdk::half(static_cast<float>(v)); break;
    case DataType::kBFloat16: static_cast<sdk::bfloat16*>(p)[i] = sdk::bfloat16(static_cast<float>(v)); break;
    // Narrow integers go through int64 so that out-of-range values wrap
    // (a direct double-to-narrow conversion of such values is undefined).
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
    case DataType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(static_cast<int64_t>(v)); break;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); break;
    case DataType::kInt64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case DataType::kUInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
    case DataType::kUInt16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(static_cast<int64_t>(v)); break;
    case DataType::kUInt32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); break;
    case DataType::kUInt64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
    case DataType::kBool: static_cast<uint8_t*>(p)[i] = v != 0; break;
    default: break;
  }
}

std::pair<double, double> IntRange(DataType t) {
  switch (t) {
    case DataType::kInt8: return {-128, 127};
    case DataType::kInt16: return {-32768, 32767};
    case DataType::kUInt8: return {0, 255};
    case DataType::kUInt16: return {0, 65535};
    case DataType::kUInt32: case DataType::kUInt64: return {0, 1e9};
    default: return {-1e9, 1e9};
  }
}

}  // namespace

Tensor MakeTensor(DataType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::AllocateHost(dtype, shape).value();
  for (int64_t i = 0; i < t.num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
    SetElement(t, i, values[i]);
  }
  return t;
}

Tensor RandomTensor(DataType dtype, const Shape& shape, std::mt19937& rng, double lo, double hi) {
  Tensor t = Tensor::AllocateHost(dtype, shape).value();
  if (dtype == DataType::kBool) {
    std::bernoulli_distribution coin(0.5);
    for (int64_t i = 0; i < t.num_elements(); ++i) SetElement(t, i, coin(rng));
  } else if (IsFloatType(dtype)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.num_elements(); ++i) SetElement(t, i, dist(rng));
  } else {
    auto [tmin, tmax] = IntRange(dtype);
    int64_t a = static_cast<int64_t>(std::ceil(std::max(lo, tmin)));
    int64_t b = static_cast<int64_t>(std::floor(std::min(hi, tmax)));
    if (b < a) b = a;
    std::uniform_int_distribution<int64_t> dist(a, b);
    for (int64_t i = 0; i < t.num_elements(); ++i) SetElement(t, i, static_cast<double>(dist(rng)));
  }
  return t;
}

absl::Status CompareTensors(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.dtype() != want.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("dtype ", DataTypeName(got.dtype()), ", expected ",
                                                   DataTypeName(want.dtype())));
  }
  if (got.shape() != want.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeToString(got.shape()),
                                                   ", expected ", ShapeToString(want.shape())));
  }
  static const DataType kSupported[] = {
      DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16, DataType::kInt8,
      DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUInt8, DataType::kUInt16,
      DataType::kUInt32, DataType::kUInt64, DataType::kBool, DataType::kString};
  if (std::find(std::begin(kSupported), std::end(kSupported), got.dtype()) == std::end(kSupported)) {
    return absl::UnimplementedError(absl::StrCat("cannot compare ", DataTypeName(got.dtype()),
                                                 " tensors"));
  }
  if (got.dtype() == DataType::kInt64 || got.dtype() == DataType::kUInt64) {
    // Exactly, in the type itself (doubles would hide differences above 2^53).
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      if (got.data<int64_t>()[i] != want.data<int64_t>()[i]) {
        return absl::InvalidArgumentError(absl::StrCat("element ", i, " differs: ",
                                                       got.data<int64_t>()[i], " vs ",
                                                       want.data<int64_t>()[i]));
      }
    }
    return absl::OkStatus();
  }
  if (got.dtype() == DataType::kString) {
    if (got.strings() != want.strings()) return absl::InvalidArgumentError("strings differ");
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double g = ElementAsDouble(got, i), w = ElementAsDouble(want, i);
    bool ok;
    if (std::isnan(w)) {
      ok = std::isnan(g);
    } else if (std::isinf(w)) {
      ok = g == w;
    } else {
      ok = std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("element ", i, " is ", g, ", expected ", w,
                                                     " (atol ", tol.atol, ", rtol ", tol.rtol, ")"));
    }
  }
  return absl::OkStatus();
}

Tensor IntTensor(DataType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::AllocateHost(dtype, shape).value();
  for (int64_t i = 0; i < t.num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
    if (dtype == DataType::kInt64) {
      t.data<int64_t>()[i] = values[i];
    } else {
      SetElement(t, i, static_cast<double>(values[i]));
    }
  }
  return t;
}

}  // namespace plexus::conformance
