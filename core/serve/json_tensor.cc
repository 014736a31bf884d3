// Tensors in JSON: reading (a checked structure pass, then a fill pass into
// the allocated tensor) and writing.
#include "json_tensor.h"

#include <rapidjson/error/en.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
// Header-only float <-> half/bfloat16 conversions of the SDK (plexus::sdk is
// not among plexus_serve's link libraries, so it is included by path).
#include "plexus/sdk/float16.h"

namespace plexus::serve {
namespace {

using rapidjson::Value;

constexpr unsigned kParseFlags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseIterativeFlag;

// Numbers, booleans and strings; not complex, resource or variant.
bool JsonCarries(DataType dtype) {
  if (dtype == DataType::kString) return true;
  return DataTypeSize(dtype) != 0 && dtype != DataType::kComplex64 &&
         dtype != DataType::kComplex128;
}

// "a string \"abc\"", "the number 1.5", "a list", ... for error messages.
std::string Describe(const Value& v) {
  if (v.IsString()) {
    absl::string_view s(v.GetString(), v.GetStringLength());
    if (s.size() > 24) return absl::StrCat("a string \"", s.substr(0, 24), "...\"");
    return absl::StrCat("a string \"", s, "\"");
  }
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNull()) return "null";
  if (v.IsArray()) return "a list";
  if (v.IsObject()) return IsB64Object(v) ? "a {\"b64\": ...} object" : "an object";
  if (v.IsInt64()) return absl::StrCat("the number ", v.GetInt64());
  if (v.IsUint64()) return absl::StrCat("the number ", v.GetUint64());
  return absl::StrCat("the number ", v.GetDouble());
}

template <typename T>
std::string IntRange() {
  return absl::StrCat("an integer in [", +std::numeric_limits<T>::min(), ", ",
                      +std::numeric_limits<T>::max(), "]");
}

std::string Expected(DataType dtype) {
  std::string kind;
  switch (dtype) {
    case DataType::kInt8: kind = IntRange<int8_t>(); break;
    case DataType::kInt16: kind = IntRange<int16_t>(); break;
    case DataType::kInt32: kind = IntRange<int32_t>(); break;
    case DataType::kInt64: kind = IntRange<int64_t>(); break;
    case DataType::kUInt8: kind = IntRange<uint8_t>(); break;
    case DataType::kUInt16: kind = IntRange<uint16_t>(); break;
    case DataType::kUInt32: kind = IntRange<uint32_t>(); break;
    case DataType::kUInt64: kind = IntRange<uint64_t>(); break;
    case DataType::kBool: kind = "true or false"; break;
    case DataType::kString: kind = "a string or {\"b64\": ...}"; break;
    default: kind = "a number"; break;
  }
  return absl::StrCat(kind, " (", DataTypeName(dtype), ")");
}

// An integer of type T from a JSON number; false when it is not one or out
// of range. Integral decimals (2.0) are accepted.
template <typename T>
bool ToInt(const Value& v, T* out) {
  using L = std::numeric_limits<T>;
  if (v.IsInt64()) {
    const int64_t x = v.GetInt64();
    if constexpr (std::is_signed_v<T>) {
      if (x < L::min() || x > L::max()) return false;
    } else {
      if (x < 0 || static_cast<uint64_t>(x) > L::max()) return false;
    }
    *out = static_cast<T>(x);
    return true;
  }
  if (v.IsUint64()) {  // above int64's range
    const uint64_t x = v.GetUint64();
    if (x > static_cast<uint64_t>(L::max())) return false;
    *out = static_cast<T>(x);
    return true;
  }
  if (v.IsDouble()) {
    const double d = v.GetDouble();
    if (!std::isfinite(d) || d != std::floor(d)) return false;
    if (d < static_cast<double>(L::min()) || d >= static_cast<double>(L::max()) + 1.0) return false;
    *out = static_cast<T>(d);
    return true;
  }
  return false;
}

// Reads nested lists of one dtype: Walk(fill = false) checks the structure
// and counts the values, Allocate() makes the tensor, Walk(fill = true)
// converts the values into it.
class Decoder {
 public:
  Decoder(DataType dtype, const std::string& what) : dtype_(dtype), what_(what) {}

  // What the JSON nesting must be (a list of structure[0] lists of ...).
  void Expect(Shape structure) { structure_ = std::move(structure); }
  absl::Status Walk(const Value& v, size_t depth, bool fill);
  absl::Status Allocate(Shape shape);
  Tensor Finish();

  std::vector<int64_t> path;  // index of the value being read

 private:
  absl::Status Leaf(const Value& v);
  template <typename T>
  absl::Status Float(const Value& v);
  template <typename T>
  absl::Status Int(const Value& v);
  absl::Status String(const Value& v);
  absl::Status Mismatch(const Value& v) const;
  absl::Status OutOfRange(const Value& v) const;
  absl::Status Ragged(const std::string& found, const std::string& wanted) const;
  std::string Where() const;
  std::string Path() const;

  DataType dtype_;
  const std::string& what_;
  Shape structure_;
  Shape shape_;
  Tensor tensor_;
  std::vector<std::string> strings_;
  int64_t cursor_ = 0;
  int64_t count_ = 0;
};

std::string Decoder::Path() const {
  std::string out;
  for (int64_t i : path) absl::StrAppend(&out, "[", i, "]");
  return out;
}

std::string Decoder::Where() const {
  if (path.empty()) return what_;
  return absl::StrCat(what_, " element ", Path());
}

absl::Status Decoder::Mismatch(const Value& v) const {
  return absl::InvalidArgumentError(
      absl::StrCat(Where(), ": expected ", Expected(dtype_), ", got ", Describe(v)));
}

absl::Status Decoder::OutOfRange(const Value& v) const {
  return absl::InvalidArgumentError(absl::StrCat(Where(), ": ", Describe(v), " is out of range for ",
                                                 DataTypeName(dtype_)));
}

absl::Status Decoder::Ragged(const std::string& found, const std::string& wanted) const {
  return absl::InvalidArgumentError(
      absl::StrCat(what_, " is ragged: ", path.empty() ? "the value" : "element " + Path(), " is ",
                   found, " where ", wanted, " was expected"));
}

absl::Status Decoder::Walk(const Value& v, size_t depth, bool fill) {
  if (depth == structure_.size()) {
    if (v.IsArray()) return Ragged("a list", "a single value");
    if (fill) return Leaf(v);
    ++count_;
    return absl::OkStatus();
  }
  const int64_t want = structure_[depth];
  if (!v.IsArray()) return Ragged(Describe(v), absl::StrCat("a list of ", want));
  if (static_cast<int64_t>(v.Size()) != want) {
    return Ragged(absl::StrCat("a list of ", v.Size()), absl::StrCat("a list of ", want));
  }
  path.push_back(0);
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    path.back() = i;
    absl::Status s = Walk(v[i], depth + 1, fill);
    if (!s.ok()) return s;
  }
  path.pop_back();
  return absl::OkStatus();
}

absl::Status Decoder::Allocate(Shape shape) {
  shape_ = std::move(shape);
  cursor_ = 0;
  if (dtype_ == DataType::kString) {
    strings_.assign(static_cast<size_t>(count_), std::string());
    return absl::OkStatus();
  }
  auto t = Tensor::AllocateHost(dtype_, shape_);
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat(what_, ": ", t.status().message()));
  tensor_ = *std::move(t);
  return absl::OkStatus();
}

Tensor Decoder::Finish() {
  if (dtype_ == DataType::kString) return Tensor::FromStrings(shape_, std::move(strings_));
  return std::move(tensor_);
}

template <typename T>
absl::Status Decoder::Float(const Value& v) {
  if (!v.IsNumber()) return Mismatch(v);
  const double d = v.GetDouble();
  if constexpr (std::is_same_v<T, double>) {
    tensor_.data<double>()[cursor_++] = d;
  } else {
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) return OutOfRange(v);
    const T x = T(static_cast<float>(d));
    if (std::isfinite(d) && !std::isfinite(static_cast<float>(x))) return OutOfRange(v);
    tensor_.data<T>()[cursor_++] = x;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Decoder::Int(const Value& v) {
  T x;
  if (!ToInt(v, &x)) return Mismatch(v);
  tensor_.data<T>()[cursor_++] = x;
  return absl::OkStatus();
}

absl::Status Decoder::String(const Value& v) {
  if (v.IsString()) {
    strings_[cursor_++].assign(v.GetString(), v.GetStringLength());
    return absl::OkStatus();
  }
  if (!IsB64Object(v)) return Mismatch(v);
  const Value& b64 = v["b64"];
  auto bytes = DecodeBase64(std::string_view(b64.GetString(), b64.GetStringLength()), Where());
  if (!bytes.ok()) return bytes.status();
  strings_[cursor_++] = *std::move(bytes);
  return absl::OkStatus();
}

absl::Status Decoder::Leaf(const Value& v) {
  if (cursor_ >= count_) return absl::InternalError(absl::StrCat(what_, ": more values than counted"));
  switch (dtype_) {
    case DataType::kFloat: return Float<float>(v);
    case DataType::kDouble: return Float<double>(v);
    case DataType::kHalf: return Float<sdk::half>(v);
    case DataType::kBFloat16: return Float<sdk::bfloat16>(v);
    case DataType::kInt8: return Int<int8_t>(v);
    case DataType::kInt16: return Int<int16_t>(v);
    case DataType::kInt32: return Int<int32_t>(v);
    case DataType::kInt64: return Int<int64_t>(v);
    case DataType::kUInt8: return Int<uint8_t>(v);
    case DataType::kUInt16: return Int<uint16_t>(v);
    case DataType::kUInt32: return Int<uint32_t>(v);
    case DataType::kUInt64: return Int<uint64_t>(v);
    case DataType::kBool:
      if (!v.IsBool()) return Mismatch(v);
      tensor_.data<bool>()[cursor_++] = v.GetBool();
      return absl::OkStatus();
    case DataType::kString: return String(v);
    default: return Mismatch(v);
  }
}

absl::Status CheckDtype(DataType dtype, const std::string& what) {
  if (JsonCarries(dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype ", DataTypeName(dtype), ", which JSON cannot carry"));
}

// The shape the nesting suggests, from the first element at each depth.
absl::StatusOr<Shape> NestedShape(const Value& v, const std::string& what) {
  Shape shape;
  const Value* at = &v;
  while (at->IsArray()) {
    if (static_cast<int>(shape.size()) == kMaxJsonRank) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is nested more than ", kMaxJsonRank, " lists deep"));
    }
    shape.push_back(at->Size());
    if (at->Empty()) break;
    at = &(*at)[0];
  }
  return shape;
}

}  // namespace

absl::Status ParseJsonObject(std::string_view text, const std::string& what,
                             rapidjson::Document* doc) {
  doc->Parse<kParseFlags>(text.data(), text.size());
  if (doc->HasParseError()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not valid JSON: ",
                                                   rapidjson::GetParseError_En(doc->GetParseError()),
                                                   " (at byte ", doc->GetErrorOffset(), ")"));
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a JSON object, got ", Describe(*doc)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CheckedNumElements(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has shape ", ShapeToString(shape), " with a negative dimension"));
    }
    if (__builtin_mul_overflow(n, d, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has shape ", ShapeToString(shape), ", too many elements"));
    }
  }
  return n;
}

absl::StatusOr<Tensor> TensorFromJson(const Value& v, DataType dtype, const std::string& what) {
  if (absl::Status s = CheckDtype(dtype, what); !s.ok()) return s;
  auto shape = NestedShape(v, what);
  if (!shape.ok()) return shape.status();
  Decoder d(dtype, what);
  d.Expect(*shape);
  if (absl::Status s = d.Walk(v, 0, false); !s.ok()) return s;
  if (absl::Status s = d.Allocate(*shape); !s.ok()) return s;
  if (absl::Status s = d.Walk(v, 0, true); !s.ok()) return s;
  return d.Finish();
}

absl::StatusOr<Tensor> TensorFromJsonWithShape(const Value& data, DataType dtype,
                                               const Shape& shape, const std::string& what) {
  if (absl::Status s = CheckDtype(dtype, what); !s.ok()) return s;
  auto declared = CheckedNumElements(shape, what);
  if (!declared.ok()) return declared.status();
  auto nested = NestedShape(data, what);
  if (!nested.ok()) return nested.status();
  Decoder d(dtype, what);
  d.Expect(*nested);
  if (absl::Status s = d.Walk(data, 0, false); !s.ok()) return s;
  const int64_t count = NumElements(*nested);  // the values there are: bounded by the body
  if (count != *declared) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has ", count, " values but shape ",
                                                   ShapeToString(shape), " needs ", *declared));
  }
  if (absl::Status s = d.Allocate(shape); !s.ok()) return s;
  if (absl::Status s = d.Walk(data, 0, true); !s.ok()) return s;
  return d.Finish();
}

absl::StatusOr<Tensor> TensorFromJsonRows(const std::vector<const Value*>& rows, DataType dtype,
                                          const std::string& what) {
  if (absl::Status s = CheckDtype(dtype, what); !s.ok()) return s;
  Shape inner;
  if (!rows.empty()) {
    auto first = NestedShape(*rows[0], what);
    if (!first.ok()) return first.status();
    inner = *first;
  }
  Decoder d(dtype, what);
  d.Expect(inner);
  for (bool fill : {false, true}) {
    if (fill) {
      Shape shape = inner;
      shape.insert(shape.begin(), static_cast<int64_t>(rows.size()));
      if (absl::Status s = d.Allocate(std::move(shape)); !s.ok()) return s;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      d.path.assign(1, static_cast<int64_t>(r));
      if (absl::Status s = d.Walk(*rows[r], 0, fill); !s.ok()) return s;
    }
  }
  return d.Finish();
}

// --- Writing -------------------------------------------------------------

namespace {

// The shortest digits that read back to the same float; NaN and the
// infinities through the writer's kWriteNanAndInfFlag.
void WriteFloat(float f, JsonWriter& w) {
  if (!std::isfinite(f)) {
    w.Double(static_cast<double>(f));
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), f);
  w.RawValue(buf, static_cast<size_t>(r.ptr - buf), rapidjson::kNumberType);
}

void WriteElement(const Tensor& t, int64_t i, bool b64, JsonWriter& w) {
  switch (t.dtype()) {
    case DataType::kFloat: return WriteFloat(t.data<float>()[i], w);
    case DataType::kDouble: w.Double(t.data<double>()[i]); return;
    case DataType::kHalf: return WriteFloat(static_cast<float>(t.data<sdk::half>()[i]), w);
    case DataType::kBFloat16: return WriteFloat(static_cast<float>(t.data<sdk::bfloat16>()[i]), w);
    case DataType::kInt8: w.Int(t.data<int8_t>()[i]); return;
    case DataType::kInt16: w.Int(t.data<int16_t>()[i]); return;
    case DataType::kInt32: w.Int(t.data<int32_t>()[i]); return;
    case DataType::kInt64: w.Int64(t.data<int64_t>()[i]); return;
    case DataType::kUInt8: w.Uint(t.data<uint8_t>()[i]); return;
    case DataType::kUInt16: w.Uint(t.data<uint16_t>()[i]); return;
    case DataType::kUInt32: w.Uint(t.data<uint32_t>()[i]); return;
    case DataType::kUInt64: w.Uint64(t.data<uint64_t>()[i]); return;
    case DataType::kBool: w.Bool(t.data<uint8_t>()[i] != 0); return;
    case DataType::kString: return WriteJsonBytes(t.strings()[i], b64, w);
    default: w.Null(); return;
  }
}

// True when the elements can be read here (a host tensor of a dtype JSON
// carries); else writes null.
bool Readable(const Tensor& t, JsonWriter& w) {
  if (t.valid() && JsonCarries(t.dtype()) &&
      (t.dtype() == DataType::kString || t.host_readable())) {
    return true;
  }
  w.Null();
  return false;
}

void WriteNested(const Tensor& t, size_t depth, int64_t* offset, bool b64, JsonWriter& w) {
  if (depth == t.shape().size()) {
    WriteElement(t, (*offset)++, b64, w);
    return;
  }
  w.StartArray();
  for (int64_t i = 0; i < t.shape()[depth]; ++i) WriteNested(t, depth + 1, offset, b64, w);
  w.EndArray();
}

// Length of the UTF-8 sequence at s[i], or 0 when it is not valid there
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// `s` with each byte that does not start a valid sequence as U+FFFD.
std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  for (size_t i = 0, n; i < s.size(); i += n ? n : 1) {
    n = Utf8Length(s, i);
    n ? out.append(s.data() + i, n) : out.append("\xEF\xBF\xBD");
  }
  return out;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void WriteJsonBytes(std::string_view bytes, bool as_b64, JsonWriter& w) {
  if (!as_b64 && IsValidUtf8(bytes)) {
    w.String(bytes.data(), static_cast<rapidjson::SizeType>(bytes.size()));
    return;
  }
  std::string encoded;
  absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()), &encoded);
  w.StartObject();
  w.Key("b64");
  w.String(encoded.data(), static_cast<rapidjson::SizeType>(encoded.size()));
  w.EndObject();
}

bool IsB64Object(const Value& v) {
  if (!v.IsObject() || v.MemberCount() != 1) return false;
  auto it = v.FindMember("b64");
  return it != v.MemberEnd() && it->value.IsString();
}

absl::StatusOr<std::string> DecodeBase64(std::string_view text, const std::string& what) {
  std::string out;
  const absl::string_view in(text.data(), text.size());
  if (absl::Base64Unescape(in, &out) || absl::WebSafeBase64Unescape(in, &out)) return out;
  return absl::InvalidArgumentError(absl::StrCat(what, ": \"b64\" is not valid base64"));
}

void TensorElementToJson(const Tensor& t, int64_t index, bool strings_as_b64, JsonWriter& w) {
  if (!Readable(t, w)) return;
  if (index < 0 || index >= t.num_elements()) return (void)w.Null();
  WriteElement(t, index, strings_as_b64, w);
}

void TensorToJson(const Tensor& t, bool strings_as_b64, JsonWriter& w) {
  if (!Readable(t, w)) return;
  int64_t offset = 0;
  WriteNested(t, 0, &offset, strings_as_b64, w);
}

void TensorToJsonFlat(const Tensor& t, bool strings_as_b64, JsonWriter& w) {
  if (!Readable(t, w)) return;
  w.StartArray();
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) WriteElement(t, i, strings_as_b64, w);
  w.EndArray();
}

void TensorRowToJson(const Tensor& t, int64_t row, bool strings_as_b64, JsonWriter& w) {
  if (!Readable(t, w)) return;
  if (t.dims() == 0 || row < 0 || row >= t.shape()[0]) return (void)w.Null();
  int64_t offset = row * (t.num_elements() / t.shape()[0]);
  WriteNested(t, 1, &offset, strings_as_b64, w);
}

std::string ErrorJson(const absl::Status& s) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  const std::string message = SanitizeUtf8(std::string_view(s.message().data(), s.message().size()));
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace plexus::serve
