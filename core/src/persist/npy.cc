#include "plexus/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace plexus {
namespace {

struct Descr {
  const char* text;
  DataType type;
};

// '=' and '<' both mean little-endian here (all supported hosts are).
constexpr Descr kDescrs[] = {
    {"f4", DataType::kFloat}, {"f8", DataType::kDouble}, {"f2", DataType::kHalf},
    {"i4", DataType::kInt32}, {"i8", DataType::kInt64},  {"i2", DataType::kInt16},
    {"i1", DataType::kInt8},  {"u1", DataType::kUInt8},  {"u2", DataType::kUInt16},
    {"u4", DataType::kUInt32}, {"u8", DataType::kUInt64}, {"b1", DataType::kBool},
    {"c8", DataType::kComplex64}, {"c16", DataType::kComplex128},
};

absl::Status Bad(absl::string_view source, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": not a valid .npy file: ", why));
}

// Finds the value text after 'key': in the header dict.
bool FindValue(absl::string_view header, absl::string_view key, absl::string_view* value) {
  std::string quoted = absl::StrCat("'", key, "'");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos) return false;
  size_t colon = header.find(':', at + quoted.size());
  if (colon == absl::string_view::npos) return false;
  *value = absl::StripLeadingAsciiWhitespace(header.substr(colon + 1));
  return true;
}

// Strings: NumPy's fixed-width byte strings ('S<n>', n bytes each) and
// Unicode strings ('U<n>', n UTF-32 code points each), trailing NULs
// stripped as NumPy does. Returns 0 when `code` is not a string code.
size_t StringWidth(absl::string_view code, bool* unicode) {
  if (code.empty() || (code[0] != 'S' && code[0] != 'U')) return 0;
  size_t n = 0;
  if (!absl::SimpleAtoi(code.substr(1), &n)) return 0;
  *unicode = code[0] == 'U';
  return *unicode ? n * 4 : n;
}

void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Zero-width strings take no bytes in the file but a std::string each in
// memory: a few header bytes must not ask for billions of them.
constexpr int64_t kMaxEmptyStrings = int64_t{1} << 24;

absl::StatusOr<Tensor> ParseStrings(absl::string_view data, size_t width, bool unicode, Shape shape,
                                    int64_t count, absl::string_view source) {
  uint64_t need = 0;
  const bool too_many = __builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(width), &need);
  if (too_many || (width == 0 ? !data.empty() : data.size() != need)) {
    return Bad(source, absl::StrCat("holds ", data.size(), " data bytes, but ", count, " strings of ",
                                    width, " bytes need ", too_many ? "more than 2^64" : absl::StrCat(need)));
  }
  if (width == 0 && count > kMaxEmptyStrings) {
    return Bad(source, absl::StrCat("holds ", count, " strings of 0 bytes; at most ", kMaxEmptyStrings,
                                    " are accepted"));
  }
  std::vector<std::string> values(count);
  for (int64_t i = 0; i < count; ++i) {
    absl::string_view cell = data.substr(static_cast<size_t>(i) * width, width);
    if (unicode) {
      for (size_t k = 0; k + 4 <= cell.size(); k += 4) {
        uint32_t c;
        std::memcpy(&c, cell.data() + k, 4);
        if (c > 0x10FFFF) return Bad(source, absl::StrCat("string ", i, " holds code point ", c));
        AppendUtf8(c, &values[i]);
      }
    } else {
      values[i] = std::string(cell);
    }
    while (!values[i].empty() && values[i].back() == '\0') values[i].pop_back();
  }
  return Tensor::FromStrings(std::move(shape), std::move(values));
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view source) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    return Bad(source, "missing the \\x93NUMPY magic");
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(source, "truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return Bad(source, absl::StrCat("unsupported format version ", major));
  }
  if (header_start + header_len > bytes.size()) return Bad(source, "truncated header");
  absl::string_view header = bytes.substr(header_start, header_len);

  absl::string_view descr_text, order_text, shape_text;
  if (!FindValue(header, "descr", &descr_text) || !FindValue(header, "fortran_order", &order_text) ||
      !FindValue(header, "shape", &shape_text)) {
    return Bad(source, "header lacks descr, fortran_order or shape");
  }
  if (descr_text.size() < 4 || descr_text[0] != '\'') return Bad(source, "bad descr");
  char endian = descr_text[1];
  size_t close = descr_text.find('\'', 1);
  if (close == absl::string_view::npos) return Bad(source, "bad descr");
  absl::string_view code = descr_text.substr(2, close - 2);
  if (endian == '>') return Bad(source, "big-endian data is not supported");
  DataType dtype = DataType::kInvalid;
  for (const Descr& d : kDescrs) {
    if (code == d.text) dtype = d.type;
  }
  bool unicode = false;
  const size_t string_width = StringWidth(code, &unicode);
  const bool strings = string_width > 0 || code == "S0" || code == "U0";
  if (dtype == DataType::kInvalid && !strings) {
    return Bad(source, absl::StrCat("unsupported dtype '", descr_text.substr(0, close + 1), "'"));
  }
  if (absl::StartsWith(order_text, "True")) return Bad(source, "Fortran order is not supported");

  if (shape_text.empty() || shape_text[0] != '(') return Bad(source, "bad shape");
  size_t end = shape_text.find(')');
  if (end == absl::string_view::npos) return Bad(source, "bad shape");
  Shape shape;
  for (absl::string_view dim : absl::StrSplit(shape_text.substr(1, end - 1), ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &d) || d < 0) return Bad(source, "bad shape");
    shape.push_back(d);
  }
  // The element count and the bytes it needs, checked against the file
  // before anything is allocated: a 100-byte file may claim any shape.
  int64_t count = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(count, d, &count)) {
      return Bad(source, absl::StrCat("shape ", ShapeToString(shape), " has more elements than int64 counts"));
    }
  }
  size_t data_start = header_start + header_len;
  if (strings) {
    return ParseStrings(bytes.substr(data_start), string_width, unicode, std::move(shape), count, source);
  }
  uint64_t need = 0;
  const bool too_many = __builtin_mul_overflow(static_cast<uint64_t>(count),
                                               static_cast<uint64_t>(DataTypeSize(dtype)), &need);
  if (too_many || bytes.size() - data_start != need) {
    return Bad(source, absl::StrCat("holds ", bytes.size() - data_start, " data bytes, but ",
                                    DataTypeName(dtype), " ", ShapeToString(shape), " needs ",
                                    too_many ? "more than 2^64" : absl::StrCat(need)));
  }
  auto tensor = Tensor::AllocateHost(dtype, shape);
  if (!tensor.ok()) return tensor.status();
  std::memcpy(tensor->raw_data(), bytes.data() + data_start, tensor->nbytes());
  return tensor;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  return ParseNpy(contents.str(), path);
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  if (!tensor.valid() || !tensor.host_readable()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path,
                                                   "': tensor is not in host memory"));
  }
  // Strings as NumPy's fixed-width bytes ('|S<longest>', NUL-padded).
  std::string string_code, string_data;
  if (tensor.dtype() == DataType::kString) {
    size_t width = 1;
    for (const std::string& v : tensor.strings()) width = std::max(width, v.size());
    string_code = absl::StrCat("S", width);
    for (const std::string& v : tensor.strings()) {
      string_data.append(v);
      string_data.append(width - v.size(), '\0');
    }
  }
  const char* code = string_code.empty() ? nullptr : string_code.c_str();
  for (const Descr& d : kDescrs) {
    if (code == nullptr && d.type == tensor.dtype()) code = d.text;
  }
  if (code == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': dtype ",
                                                   DataTypeName(tensor.dtype()), " has no .npy form"));
  }
  const char endian =
      code[0] == 'S' || ((code[0] == 'i' || code[0] == 'u' || code[0] == 'b') && code[1] == '1') ? '|' : '<';
  std::string shape;
  for (int64_t d : tensor.shape()) absl::StrAppend(&shape, d, ",");
  if (tensor.dims() > 1) shape.pop_back();
  std::string header = absl::StrCat("{'descr': '", std::string(1, endian), code,
                                    "', 'fortran_order': False, 'shape': (", shape, "), }");
  // Pad with spaces so the data starts on a 64-byte boundary, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream file(path, std::ios::binary);
  if (!file) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  const uint16_t len = static_cast<uint16_t>(header.size());
  file.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  file.write(len_bytes, 2);
  file.write(header.data(), header.size());
  if (tensor.dtype() == DataType::kString) {
    file.write(string_data.data(), string_data.size());
  } else {
    file.write(static_cast<const char*>(tensor.raw_data()), tensor.nbytes());
  }
  if (!file) return absl::DataLossError(absl::StrCat("failed writing '", path, "'"));
  return absl::OkStatus();
}

}  // namespace plexus
