// Host kernels of UnicodeDecode, UnicodeDecodeWithOffsets and UnicodeEncode (schemas in
// ops/string_ops.cc): strings to code points and back (tf.strings.
// unicode_split, Keras's TextVectorization(split="character")). Decoding
// reads UTF-8 and, like TensorFlow (ICU), treats each maximal ill-formed
// subsequence (Unicode's "maximal subpart") as one error: replaced by
// replacement_char, ignored, or refused, as `errors` says.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

enum class OnError { kStrict, kReplace, kIgnore };

absl::StatusOr<OnError> ErrorsAttr(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string errors, GetAttrString(ctx.node(), "errors"));
  if (errors == "strict") return OnError::kStrict;
  if (errors == "replace") return OnError::kReplace;
  if (errors == "ignore") return OnError::kIgnore;
  return ctx.InvalidArgument(absl::StrCat("errors must be strict, replace or ignore, got '", errors, "'"));
}

bool IsUtf8(std::string encoding) {
  absl::AsciiStrToUpper(&encoding);
  return encoding == "UTF-8" || encoding == "UTF8";
}

// The code point at s[0, n) (n >= 1) and the bytes it takes; -1 for an
// ill-formed sequence, which then takes its maximal subpart (at least 1).
int DecodeOne(const unsigned char* s, size_t n, int32_t* cp) {
  const unsigned char lead = s[0];
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  }
  int length;
  int32_t c;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (Unicode table 3-7)
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    c = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    c = lead & 0x0F;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    c = lead & 0x07;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    *cp = -1;
    return 1;
  }
  for (int k = 1; k < length; ++k) {
    if (static_cast<size_t>(k) >= n || s[k] < lo || s[k] > hi) {
      *cp = -1;
      return k;
    }
    lo = 0x80;
    hi = 0xBF;
    c = (c << 6) | (s[k] & 0x3F);
  }
  *cp = c;
  return length;
}

absl::Status SetSplits(HostOpContext& ctx, int output, DataType dtype, const std::vector<int64_t>& splits) {
  const int64_t n = static_cast<int64_t>(splits.size());
  PX_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(dtype, {n}));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DataType::kInt64) t.data<int64_t>()[i] = splits[i];
    else t.data<int32_t>()[i] = static_cast<int32_t>(splits[i]);
  }
  ctx.set_output(output, std::move(t));
  return absl::OkStatus();
}

absl::Status UnicodeDecode(HostOpContext& ctx) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(std::string encoding, GetAttrString(node, "input_encoding"));
  if (!IsUtf8(encoding)) {
    return ctx.Error(absl::StatusCode::kUnimplemented,
                     absl::StrCat("input_encoding '", encoding, "' is not supported; only UTF-8 is"));
  }
  PX_ASSIGN_OR_RETURN(OnError on_error, ErrorsAttr(ctx));
  PX_ASSIGN_OR_RETURN(int64_t replacement, GetAttrInt(node, "replacement_char"));
  PX_ASSIGN_OR_RETURN(bool replace_control, GetAttrBool(node, "replace_control_characters"));
  PX_ASSIGN_OR_RETURN(DataType splits_dtype, GetAttrType(node, "Tsplits"));
  const Tensor& input = ctx.input(0);
  if (input.dtype() != DataType::kString) return ctx.InvalidArgument("input must be string");
  std::vector<int64_t> splits{0};
  std::vector<int32_t> chars;
  std::vector<int64_t> starts;  // UnicodeDecodeWithOffsets: each character's first byte
  for (const std::string& s : input.strings()) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < s.size();) {
      int32_t cp;
      const size_t start = i;
      i += DecodeOne(bytes + i, s.size() - i, &cp);
      if (cp < 0) {
        if (on_error == OnError::kStrict) return ctx.InvalidArgument("Invalid formatting on input string");
        if (on_error == OnError::kIgnore) continue;
        cp = static_cast<int32_t>(replacement);
      } else if (replace_control && cp <= 0x1F) {
        cp = static_cast<int32_t>(replacement);
      }
      chars.push_back(cp);
      starts.push_back(static_cast<int64_t>(start));
    }
    splits.push_back(static_cast<int64_t>(chars.size()));
  }
  PX_RETURN_IF_ERROR(SetSplits(ctx, 0, splits_dtype, splits));
  PX_ASSIGN_OR_RETURN(Tensor values, Tensor::AllocateHost(DataType::kInt32, {static_cast<int64_t>(chars.size())}));
  for (size_t i = 0; i < chars.size(); ++i) values.data<int32_t>()[i] = chars[i];
  ctx.set_output(1, std::move(values));
  if (node.num_outputs() == 3) {
    PX_ASSIGN_OR_RETURN(Tensor offsets, Tensor::AllocateHost(DataType::kInt64, {static_cast<int64_t>(starts.size())}));
    for (size_t i = 0; i < starts.size(); ++i) offsets.data<int64_t>()[i] = starts[i];
    ctx.set_output(2, std::move(offsets));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("UnicodeDecode", UnicodeDecode);
PX_REGISTER_HOST_OP("UnicodeDecodeWithOffsets", UnicodeDecode);

bool IsScalarValue(int64_t cp) { return cp >= 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF); }

void Append(const std::string& encoding, uint32_t cp, std::string* out) {
  if (encoding == "UTF-32-BE") {
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((cp >> shift) & 0xFF));
  } else if (encoding == "UTF-16-BE") {
    auto unit = [out](uint32_t u) {
      out->push_back(static_cast<char>(u >> 8));
      out->push_back(static_cast<char>(u & 0xFF));
    };
    if (cp < 0x10000) {
      unit(cp);
    } else {
      unit(0xD800 + ((cp - 0x10000) >> 10));
      unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
    }
  } else if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

absl::Status UnicodeEncode(HostOpContext& ctx) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(std::string encoding, GetAttrString(node, "output_encoding"));
  if (encoding != "UTF-8" && encoding != "UTF-16-BE" && encoding != "UTF-32-BE") {
    return ctx.InvalidArgument(absl::StrCat("output_encoding must be UTF-8, UTF-16-BE or UTF-32-BE, got '",
                                            encoding, "'"));
  }
  PX_ASSIGN_OR_RETURN(OnError on_error, ErrorsAttr(ctx));
  PX_ASSIGN_OR_RETURN(int64_t replacement, GetAttrInt(node, "replacement_char"));
  const Tensor& values = ctx.input(0);
  const Tensor& split_tensor = ctx.input(1);
  if (values.dtype() != DataType::kInt32 || values.dims() != 1 || split_tensor.dims() != 1 ||
      split_tensor.num_elements() < 1) {
    return ctx.InvalidArgument(absl::StrCat("input_values must be an int32 vector and input_splits a non-empty ",
                                            "vector, got ", values.DebugString(0), " and ",
                                            split_tensor.DebugString(0)));
  }
  std::vector<int64_t> splits(split_tensor.num_elements());
  for (size_t i = 0; i < splits.size(); ++i) {
    splits[i] = split_tensor.dtype() == DataType::kInt64 ? split_tensor.data<int64_t>()[i]
                                                         : split_tensor.data<int32_t>()[i];
    if ((i == 0 && splits[i] != 0) || (i > 0 && splits[i] < splits[i - 1])) {
      return ctx.InvalidArgument("input_splits must start at 0 and be non-decreasing");
    }
  }
  if (splits.back() != values.num_elements()) {
    return ctx.InvalidArgument("Last value in input_splits must be equal to length of input_tensor.");
  }
  std::vector<std::string> out(splits.size() - 1);
  for (size_t row = 0; row + 1 < splits.size(); ++row) {
    for (int64_t i = splits[row]; i < splits[row + 1]; ++i) {
      int64_t cp = values.data<int32_t>()[i];
      if (!IsScalarValue(cp)) {
        if (on_error == OnError::kStrict) {
          return ctx.InvalidArgument("Code point is out of range for Unicode, or is a surrogate.");
        }
        if (on_error == OnError::kIgnore || !IsScalarValue(replacement)) continue;
        cp = replacement;
      }
      Append(encoding, static_cast<uint32_t>(cp), &out[row]);
    }
  }
  const int64_t rows = static_cast<int64_t>(out.size());
  ctx.set_output(0, Tensor::FromStrings({rows}, std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("UnicodeEncode", UnicodeEncode);

}  // namespace
}  // namespace plexus
