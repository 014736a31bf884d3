// Host kernels of the elementwise string ops (schemas in
// ops/string_ops.cc): StringLower and StringUpper (ASCII, TensorFlow's
// default encoding ""), StaticRegexReplace and RegexReplace (RE2, as
// TensorFlow), AsString (printf formats as TensorFlow builds them),
// StringLength, StringStrip (ASCII whitespace at both ends) and
// RegexFullMatch (RE2, a pattern input).
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/broadcast_index.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status CheckString(HostOpContext& ctx, int i, absl::string_view name) {
  if (ctx.input(i).dtype() == DataType::kString) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat(name, " is ", DataTypeName(ctx.input(i).dtype()), ", not string"));
}

// --- StringLower, StringUpper -------------------------------------------------

absl::Status ChangeCase(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  std::string encoding;
  if (auto e = GetAttrString(ctx.node(), "encoding"); e.ok()) encoding = *e;
  if (!encoding.empty()) {
    return ctx.Error(absl::StatusCode::kUnimplemented,
                     absl::StrCat("encoding '", encoding, "' is not supported; only \"\" (ASCII letters) is"));
  }
  const bool lower = ctx.node().op == "StringLower";
  std::vector<std::string> out = ctx.input(0).strings();
  for (std::string& s : out) {
    if (lower) absl::AsciiStrToLower(&s);
    else absl::AsciiStrToUpper(&s);
  }
  ctx.set_output(0, Tensor::FromStrings(ctx.input(0).shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringLower", ChangeCase);
PX_REGISTER_HOST_OP("StringUpper", ChangeCase);

// --- StaticRegexReplace, RegexReplace -----------------------------------------

absl::Status Replace(HostOpContext& ctx, const std::string& pattern, const std::string& rewrite) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  PX_ASSIGN_OR_RETURN(bool global, GetAttrBool(ctx.node(), "replace_global"));
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(pattern, options);
  if (!re.ok()) return ctx.InvalidArgument(absl::StrCat("Invalid pattern: ", pattern, ", error: ", re.error()));
  std::string error;
  if (!re.CheckRewriteString(rewrite, &error)) {
    return ctx.InvalidArgument(absl::StrCat("Invalid rewrite pattern: ", rewrite, ", error: ", error));
  }
  std::vector<std::string> out = ctx.input(0).strings();
  for (std::string& s : out) {
    if (global) RE2::GlobalReplace(&s, re, rewrite);
    else RE2::Replace(&s, re, rewrite);
  }
  ctx.set_output(0, Tensor::FromStrings(ctx.input(0).shape(), std::move(out)));
  return absl::OkStatus();
}

absl::Status StaticRegexReplace(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string pattern, GetAttrString(ctx.node(), "pattern"));
  PX_ASSIGN_OR_RETURN(std::string rewrite, GetAttrString(ctx.node(), "rewrite"));
  return Replace(ctx, pattern, rewrite);
}
PX_REGISTER_HOST_OP("StaticRegexReplace", StaticRegexReplace);

absl::Status RegexReplace(HostOpContext& ctx) {
  for (int i = 1; i <= 2; ++i) {
    PX_RETURN_IF_ERROR(CheckString(ctx, i, i == 1 ? "pattern" : "rewrite"));
    if (ctx.input(i).dims() != 0) {
      return ctx.InvalidArgument(absl::StrCat(i == 1 ? "Pattern" : "Rewrite", " must be scalar, but received ",
                                              ShapeToString(ctx.input(i).shape())));
    }
  }
  return Replace(ctx, ctx.input(1).strings()[0], ctx.input(2).strings()[0]);
}
PX_REGISTER_HOST_OP("RegexReplace", RegexReplace);

// --- StringStrip, RegexFullMatch -----------------------------------------------

absl::Status StringStrip(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  std::vector<std::string> out = ctx.input(0).strings();
  for (std::string& s : out) absl::StripAsciiWhitespace(&s);
  ctx.set_output(0, Tensor::FromStrings(ctx.input(0).shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringStrip", StringStrip);

absl::Status RegexFullMatch(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  PX_RETURN_IF_ERROR(CheckString(ctx, 1, "pattern"));
  const Tensor& pattern = ctx.input(1);
  if (pattern.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("Pattern must be scalar, but received ", ShapeToString(pattern.shape())));
  }
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(pattern.strings()[0], options);
  if (!re.ok()) {
    return ctx.InvalidArgument(absl::StrCat("Invalid pattern: ", pattern.strings()[0], ", error: ", re.error()));
  }
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, in.shape()));
  for (size_t i = 0; i < in.strings().size(); ++i) out.data<bool>()[i] = RE2::FullMatch(in.strings()[i], re);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("RegexFullMatch", RegexFullMatch);

// --- AsString -------------------------------------------------------------------

struct AsStringFormat {
  std::string spec;  // "%" with fill, width and precision, no conversion
  bool shortest = false, scientific = false;
};

absl::StatusOr<AsStringFormat> FormatOf(HostOpContext& ctx, DataType dtype) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(int64_t precision, GetAttrInt(node, "precision"));
  PX_ASSIGN_OR_RETURN(int64_t width, GetAttrInt(node, "width"));
  PX_ASSIGN_OR_RETURN(std::string fill, GetAttrString(node, "fill"));
  AsStringFormat f;
  PX_ASSIGN_OR_RETURN(f.scientific, GetAttrBool(node, "scientific"));
  PX_ASSIGN_OR_RETURN(f.shortest, GetAttrBool(node, "shortest"));
  const bool floating = dtype == DataType::kFloat || dtype == DataType::kDouble;
  if (fill.size() > 1) return ctx.InvalidArgument("Fill string must be one or fewer characters");
  if (f.scientific && f.shortest) return ctx.InvalidArgument("Cannot select both scientific and shortest notation");
  if (!floating && (f.scientific || f.shortest)) {
    return ctx.InvalidArgument(absl::StrCat("scientific and shortest format not supported for datatype ",
                                            DataTypeName(dtype)));
  }
  if (!floating && precision > -1) {
    return ctx.InvalidArgument(absl::StrCat("precision not supported for datatype ", DataTypeName(dtype)));
  }
  f.spec = "%";
  if (!fill.empty()) {
    if (fill != " " && fill != "+" && fill != "-" && fill != "0" && fill != "#") {
      return ctx.InvalidArgument(absl::StrCat("Fill argument not supported: \"", fill, "\""));
    }
    f.spec += fill;
  }
  if (width > -1) absl::StrAppend(&f.spec, width);
  if (precision > -1) absl::StrAppend(&f.spec, ".", precision);
  return f;
}

template <typename T>
std::string Format(const std::string& format, T value) {
  const int n = std::snprintf(nullptr, 0, format.c_str(), value);
  std::string out(n > 0 ? n : 0, '\0');
  if (n > 0) std::snprintf(out.data(), out.size() + 1, format.c_str(), value);
  return out;
}

absl::Status AsString(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(AsStringFormat f, FormatOf(ctx, in.dtype()));
  const int64_t n = in.num_elements();
  std::vector<std::string> out(n);
  const std::string real = f.spec + (f.shortest ? "g" : f.scientific ? "e" : "f");
  for (int64_t i = 0; i < n; ++i) {
    switch (in.dtype()) {
      case DataType::kInt8: out[i] = Format(f.spec + "d", int{in.data<int8_t>()[i]}); break;
      case DataType::kInt16: out[i] = Format(f.spec + "d", int{in.data<int16_t>()[i]}); break;
      case DataType::kInt32: out[i] = Format(f.spec + "d", in.data<int32_t>()[i]); break;
      case DataType::kInt64: out[i] = Format(f.spec + "lld", static_cast<long long>(in.data<int64_t>()[i])); break;
      case DataType::kUInt8: out[i] = Format(f.spec + "u", unsigned{in.data<uint8_t>()[i]}); break;
      case DataType::kUInt16: out[i] = Format(f.spec + "u", unsigned{in.data<uint16_t>()[i]}); break;
      case DataType::kUInt32: out[i] = Format(f.spec + "u", in.data<uint32_t>()[i]); break;
      case DataType::kUInt64:
        out[i] = Format(f.spec + "llu", static_cast<unsigned long long>(in.data<uint64_t>()[i]));
        break;
      case DataType::kFloat: out[i] = Format(real, double{in.data<float>()[i]}); break;
      case DataType::kDouble: out[i] = Format(real, in.data<double>()[i]); break;
      case DataType::kBool: out[i] = Format(f.spec + "s", in.data<bool>()[i] ? "true" : "false"); break;
      case DataType::kString: out[i] = Format(f.spec + "s", in.strings()[i].c_str()); break;
      default:
        return ctx.Error(absl::StatusCode::kUnimplemented,
                         absl::StrCat("AsString of ", DataTypeName(in.dtype()), " is not supported"));
    }
  }
  ctx.set_output(0, Tensor::FromStrings(in.shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("AsString", AsString);

// --- StringLength -----------------------------------------------------------------

absl::Status StringLength(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  PX_ASSIGN_OR_RETURN(std::string unit, GetAttrString(ctx.node(), "unit"));
  if (unit != "BYTE" && unit != "UTF8_CHAR") {
    return ctx.InvalidArgument(absl::StrCat("unit must be BYTE or UTF8_CHAR, got '", unit, "'"));
  }
  const auto& in = ctx.input(0).strings();
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt32, ctx.input(0).shape()));
  for (size_t i = 0; i < in.size(); ++i) {
    int32_t length = static_cast<int32_t>(in[i].size());
    if (unit == "UTF8_CHAR") {
      length = 0;
      for (unsigned char c : in[i]) length += (c & 0xC0) != 0x80;  // not a continuation byte
    }
    out.data<int32_t>()[i] = length;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringLength", StringLength);

// --- Substr ---------------------------------------------------------------------

bool IsTrailByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Moves *pos forward (or back) over n UTF-8 characters; false when the
// string ends first.
bool ForwardChars(absl::string_view s, int64_t n, int64_t* pos) {
  int64_t counted = 0;
  while (*pos < static_cast<int64_t>(s.size()) && counted < n) {
    do ++*pos;
    while (*pos < static_cast<int64_t>(s.size()) && IsTrailByte(s[*pos]));
    ++counted;
  }
  return counted == n || n < 0;
}
bool BackChars(absl::string_view s, int64_t n, int64_t* pos) {
  int64_t counted = 0;
  while (*pos > 0 && counted < n) {
    do --*pos;
    while (*pos > 0 && IsTrailByte(s[*pos]));
    ++counted;
  }
  return counted == n || n < 0;
}

// The byte range [*begin, *begin + *length) of the substring at character
// position pos of length len, as TensorFlow: a negative pos counts from
// the end, the length is cut at the end of the string, and a negative
// length means the rest of the string in bytes and nothing in characters.
bool SubstrRange(absl::string_view s, int64_t pos, int64_t len, bool utf8, int64_t* begin, int64_t* length) {
  const int64_t size = static_cast<int64_t>(s.size());
  if (!utf8) {
    *begin = pos < 0 ? size + pos : pos;
    if (*begin < 0 || *begin > size) return false;
    *length = len < 0 ? size - *begin : std::min(len, size - *begin);
    return true;
  }
  if (pos >= 0) {
    *begin = 0;
    if (!ForwardChars(s, pos, begin)) return false;
    int64_t end = *begin;
    if (len > 0) ForwardChars(s, len, &end);
    *length = end - *begin;
    return true;
  }
  int64_t end = size;
  const int64_t skip = std::max<int64_t>(0, -pos - len);
  if (!BackChars(s, skip, &end)) return false;
  *begin = end;
  if (!BackChars(s, -pos - skip, begin)) return false;
  *length = end - *begin;
  return true;
}

int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

absl::Status Substr(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "input"));
  const Tensor& in = ctx.input(0);
  const Tensor& pos = ctx.input(1);
  const Tensor& len = ctx.input(2);
  for (const Tensor* t : {&pos, &len}) {
    if (t->dtype() != DataType::kInt32 && t->dtype() != DataType::kInt64) {
      return ctx.InvalidArgument(absl::StrCat("pos and len must be int32 or int64, got ", DataTypeName(t->dtype())));
    }
  }
  if (pos.shape() != len.shape()) {
    return ctx.InvalidArgument(absl::StrCat("pos and len should have the same shape, got: ",
                                            ShapeToString(pos.shape()), " vs. ", ShapeToString(len.shape())));
  }
  if (pos.num_elements() == 0) return ctx.InvalidArgument("received empty tensors pos and len");
  PX_ASSIGN_OR_RETURN(std::string unit, GetAttrString(ctx.node(), "unit"));
  if (unit != "BYTE" && unit != "UTF8_CHAR") {
    return ctx.InvalidArgument(absl::StrCat("unit must be BYTE or UTF8_CHAR, got '", unit, "'"));
  }
  auto shape = BroadcastShapes(PartialShape(in.shape()), PartialShape(pos.shape()));
  if (!shape.ok()) {
    return ctx.InvalidArgument(absl::StrCat("Incompatible shapes: ", ShapeToString(in.shape()), " vs. ",
                                            ShapeToString(pos.shape())));
  }
  const Shape out_shape = shape->dims();
  const std::vector<int64_t> from_in = BroadcastIndex(in.shape(), out_shape);
  const std::vector<int64_t> from_pos = BroadcastIndex(pos.shape(), out_shape);
  std::vector<std::string> out(from_in.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& s = in.strings()[from_in[i]];
    const int64_t p = IntAt(pos, from_pos[i]);
    int64_t begin = 0, length = 0;
    if (!SubstrRange(s, p, IntAt(len, from_pos[i]), unit == "UTF8_CHAR", &begin, &length)) {
      return ctx.InvalidArgument(absl::StrCat("pos ", p, " out of range for string b'", s, "' at index ", i));
    }
    out[i] = s.substr(static_cast<size_t>(begin), static_cast<size_t>(length));
  }
  ctx.set_output(0, Tensor::FromStrings(out_shape, std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Substr", Substr);

// --- StringToNumber -----------------------------------------------------------------

// Parses decimal text (surrounding whitespace allowed, as TensorFlow's
// safe_strto* functions) into `out`; false when it is not a number of
// that type or does not fit.
template <typename T>
bool ParseNumber(absl::string_view text, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::is_same_v<T, float> ? absl::SimpleAtof(text, reinterpret_cast<float*>(out))
                                    : absl::SimpleAtod(text, reinterpret_cast<double*>(out));
  } else {
    return absl::SimpleAtoi(text, out);
  }
}

template <typename T>
absl::Status ToNumbers(HostOpContext& ctx, DataType dtype) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, in.shape()));
  const auto& strings = in.strings();
  for (size_t i = 0; i < strings.size(); ++i) {
    if (!ParseNumber<T>(strings[i], &out.data<T>()[i])) {
      return ctx.InvalidArgument(absl::StrCat("StringToNumberOp could not correctly convert string: ", strings[i]));
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status StringToNumber(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx, 0, "string_tensor"));
  PX_ASSIGN_OR_RETURN(DataType type, GetAttrType(ctx.node(), "out_type"));
  switch (type) {
    case DataType::kFloat: return ToNumbers<float>(ctx, type);
    case DataType::kDouble: return ToNumbers<double>(ctx, type);
    case DataType::kInt32: return ToNumbers<int32_t>(ctx, type);
    case DataType::kInt64: return ToNumbers<int64_t>(ctx, type);
    case DataType::kUInt32: return ToNumbers<uint32_t>(ctx, type);
    case DataType::kUInt64: return ToNumbers<uint64_t>(ctx, type);
    default:
      return ctx.InvalidArgument(absl::StrCat("out_type ", DataTypeName(type), " is not supported"));
  }
}
PX_REGISTER_HOST_OP("StringToNumber", StringToNumber);

}  // namespace
}  // namespace plexus
