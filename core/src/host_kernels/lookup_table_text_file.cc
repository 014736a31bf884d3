// The host kernel of InitializeTableFromTextFileV2 (schema in
// ops/lookup_ops.cc): fills a lookup table from a text file, one entry a
// line, as TensorFlow's text-file initializer does. A key or value is a
// column of the line (key_index/value_index >= 0; columns split at any
// character of `delimiter`), the whole line (-2) or the line number plus
// `offset` (-1). A SavedModel's vocabulary files arrive as its asset
// paths (persist/saved_model.cc feeds them).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "host_kernels/lookup_table.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr int64_t kLineNumber = -1;
constexpr int64_t kWholeLine = -2;

struct TextFileSpec {
  std::string filename;
  int64_t key_index = kWholeLine, value_index = kLineNumber;
  int64_t vocab_size = -1, offset = 0;
  std::string delimiter;
};

// One field of a line as a key or value of `dtype`.
absl::StatusOr<TableValue> ParseField(const std::string& field, DataType dtype, int64_t line) {
  auto invalid = [&](const char* type) {
    return absl::InvalidArgumentError(absl::StrCat("Field ", field, " in line ", line, " is not a valid ", type, "."));
  };
  switch (dtype) {
    case DataType::kString: return TableValue(field);
    case DataType::kInt64: {
      int64_t v;
      if (!absl::SimpleAtoi(field, &v)) return invalid("int64");
      return TableValue(v);
    }
    case DataType::kInt32: {
      int32_t v;
      if (!absl::SimpleAtoi(field, &v)) return invalid("int32");
      return TableValue(int64_t{v});
    }
    case DataType::kFloat: {
      float v;
      if (!absl::SimpleAtof(field, &v)) return invalid("float");
      return TableValue(double{v});
    }
    case DataType::kDouble: {
      double v;
      if (!absl::SimpleAtod(field, &v)) return invalid("double");
      return TableValue(v);
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("Data type ", DataTypeName(dtype),
                                                     " not supported by text file initializers."));
  }
}

// The key or value of line `line` (number `line_number`) from column `index`.
absl::StatusOr<TableValue> Column(const std::string& line, const std::vector<std::string>& tokens, int64_t index,
                                  int64_t line_number, const TextFileSpec& spec, DataType dtype) {
  if (index == kLineNumber) {
    if (dtype != DataType::kInt64) {
      return absl::InvalidArgumentError(absl::StrCat("the line number column gives int64, the table holds ",
                                                     DataTypeName(dtype)));
    }
    return TableValue(line_number + spec.offset);
  }
  return ParseField(index == kWholeLine ? line : tokens[index], dtype, line_number);
}

absl::Status ReadEntries(const TextFileSpec& spec, DataType key_dtype, DataType value_dtype,
                         std::vector<TableKey>* keys, std::vector<TableValue>* values) {
  std::ifstream file(spec.filename, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(absl::StrCat(spec.filename, "; ", std::strerror(errno)));
  }
  const int64_t max_index = std::max(spec.key_index, spec.value_index);
  std::string line;
  int64_t line_number = 0;
  while ((spec.vocab_size < 0 || line_number < spec.vocab_size) && std::getline(file, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid content in ", spec.filename,
                                                     ": empty line found at position ",
                                                     static_cast<int64_t>(file.tellg()), "."));
    }
    std::vector<std::string> tokens;
    if (max_index >= 0) {
      tokens = absl::StrSplit(line, absl::ByAnyChar(spec.delimiter));
      if (max_index >= static_cast<int64_t>(tokens.size())) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid number of columns in ", spec.filename, " line ",
                                                       line_number, " (", line, ") : expected at least ",
                                                       max_index + 1, " got ", tokens.size()));
      }
    }
    PX_ASSIGN_OR_RETURN(TableValue key, Column(line, tokens, spec.key_index, line_number, spec, key_dtype));
    PX_ASSIGN_OR_RETURN(TableValue value, Column(line, tokens, spec.value_index, line_number, spec, value_dtype));
    if (const auto* s = std::get_if<std::string>(&key)) keys->emplace_back(*s);
    else keys->emplace_back(std::get<int64_t>(key));
    values->push_back(std::move(value));
    ++line_number;
  }
  if (spec.vocab_size >= 0 && line_number != spec.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid vocab_size in ", spec.filename, ": expected ",
                                                   spec.vocab_size, " but got ", line_number));
  }
  return absl::OkStatus();
}

absl::Status InitializeFromTextFile(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  const Tensor& filename = ctx.input(1);
  if (filename.dtype() != DataType::kString || filename.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("filename must be a string scalar, got ", filename.DebugString(0)));
  }
  // Filled already (TensorFlow skips a text-file initializer then).
  if (table->initialized()) return absl::OkStatus();
  const Node& node = ctx.node();
  TextFileSpec spec;
  spec.filename = filename.strings()[0];
  PX_ASSIGN_OR_RETURN(spec.key_index, GetAttrInt(node, "key_index"));
  PX_ASSIGN_OR_RETURN(spec.value_index, GetAttrInt(node, "value_index"));
  PX_ASSIGN_OR_RETURN(spec.vocab_size, GetAttrInt(node, "vocab_size"));
  PX_ASSIGN_OR_RETURN(spec.delimiter, GetAttrString(node, "delimiter"));
  if (auto offset = GetAttrInt(node, "offset"); offset.ok()) spec.offset = *offset;
  if (spec.key_index < kWholeLine || spec.value_index < kWholeLine || spec.vocab_size < -1) {
    return ctx.InvalidArgument(absl::StrCat("key_index ", spec.key_index, ", value_index ", spec.value_index,
                                            " and vocab_size ", spec.vocab_size, " must be at least -2, -2, -1"));
  }
  std::vector<TableKey> keys;
  std::vector<TableValue> values;
  absl::Status s = ReadEntries(spec, table->key_dtype(), table->value_dtype(), &keys, &values);
  if (s.ok()) s = table->Initialize(keys, values);
  if (!s.ok()) return ctx.Error(s.code(), s.message());
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("InitializeTableFromTextFileV2", InitializeFromTextFile);

}  // namespace
}  // namespace plexus
