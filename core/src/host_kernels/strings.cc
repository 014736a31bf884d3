// Host kernels of the elementwise string ops (schemas in
// ops/string_ops.cc): StringLower and StringUpper (ASCII, TensorFlow's
// default encoding ""), StaticRegexReplace and RegexReplace (RE2, as
// TensorFlow), AsString (printf formats as TensorFlow builds them) and
// StringLength.
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
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

}  // namespace
}  // namespace plexus
