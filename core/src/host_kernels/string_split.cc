// Host kernels of the tokenizing string ops (schemas in ops/string_ops.cc):
// StringSplitV2 and StringSplit (sparse results: indices, values, dense
// shape) and StringNGrams (n-grams of the rows of a ragged string tensor),
// with TensorFlow's rules for whitespace, maxsplit, padding and short rows.
#include <algorithm>
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

// --- StringSplitV2 ------------------------------------------------------------

void RemoveLeadingWhitespace(absl::string_view* text) {
  size_t n = 0;
  while (n < text->size() && absl::ascii_isspace(static_cast<unsigned char>((*text)[n]))) ++n;
  text->remove_prefix(n);
}

// Python's str.split: on runs of whitespace when `sep` is empty, else on
// each occurrence of `sep`; after `maxsplit` splits (when positive) the
// rest of the text is the last token.
std::vector<absl::string_view> SplitV2(absl::string_view text, absl::string_view sep, int64_t maxsplit) {
  std::vector<absl::string_view> result;
  if (maxsplit == 0) {
    result.push_back(text);
    return result;
  }
  int64_t splits = 0;
  if (sep.empty()) {
    RemoveLeadingWhitespace(&text);
    while (!text.empty()) {
      size_t n = 0;
      while (n < text.size() && !absl::ascii_isspace(static_cast<unsigned char>(text[n]))) ++n;
      result.push_back(text.substr(0, n));
      text.remove_prefix(n);
      RemoveLeadingWhitespace(&text);
      if (maxsplit > 0 && ++splits == maxsplit) {
        result.push_back(text);
        return result;
      }
    }
    return result;
  }
  for (size_t p = text.find(sep); p != absl::string_view::npos; p = text.find(sep)) {
    result.push_back(text.substr(0, p));
    text.remove_prefix(p + sep.size());
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  result.push_back(text);
  return result;
}

// The tokens of each row as a sparse matrix: indices [n, 2] of (row,
// position), the tokens, and the dense shape [rows, longest row].
absl::Status SetSparseRows(HostOpContext& ctx, const std::vector<std::vector<std::string>>& rows) {
  int64_t n = 0, longest = 0;
  for (const auto& row : rows) {
    n += static_cast<int64_t>(row.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(row.size()));
  }
  PX_ASSIGN_OR_RETURN(Tensor indices, Tensor::AllocateHost(DataType::kInt64, {n, 2}));
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(n));
  int64_t* index = indices.data<int64_t>();
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t k = 0; k < rows[r].size(); ++k) {
      *index++ = static_cast<int64_t>(r);
      *index++ = static_cast<int64_t>(k);
      values.push_back(rows[r][k]);
    }
  }
  PX_ASSIGN_OR_RETURN(Tensor shape, Tensor::AllocateHost(DataType::kInt64, {2}));
  shape.data<int64_t>()[0] = static_cast<int64_t>(rows.size());
  shape.data<int64_t>()[1] = longest;
  ctx.set_output(0, std::move(indices));
  ctx.set_output(1, Tensor::FromStrings({n}, std::move(values)));
  ctx.set_output(2, std::move(shape));
  return absl::OkStatus();
}

absl::Status CheckSplitInputs(HostOpContext& ctx, absl::string_view sep_name) {
  const Tensor& input = ctx.input(0);
  const Tensor& sep = ctx.input(1);
  if (input.dtype() != DataType::kString || input.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("input must be a string vector, got ", input.DebugString(0)));
  }
  if (sep.dtype() != DataType::kString || sep.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(sep_name, " must be a string scalar, got ", sep.DebugString(0)));
  }
  return absl::OkStatus();
}

absl::Status StringSplitV2(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckSplitInputs(ctx, "sep"));
  PX_ASSIGN_OR_RETURN(int64_t maxsplit, GetAttrInt(ctx.node(), "maxsplit"));
  const std::string& sep = ctx.input(1).strings()[0];
  std::vector<std::vector<std::string>> rows;
  for (const std::string& text : ctx.input(0).strings()) {
    std::vector<absl::string_view> tokens = SplitV2(text, sep, maxsplit);
    rows.emplace_back(tokens.begin(), tokens.end());
  }
  return SetSparseRows(ctx, rows);
}
PX_REGISTER_HOST_OP("StringSplitV2", StringSplitV2);

// --- StringSplit (tf.compat.v1.string_split) ------------------------------------

// Splits on every byte that is one of `delimiters`; with no delimiters,
// into single bytes. Empty tokens are dropped when `skip_empty`; an empty
// text has no tokens either way, as in TensorFlow.
std::vector<std::string> SplitOnAnyOf(absl::string_view text, absl::string_view delimiters, bool skip_empty) {
  std::vector<std::string> tokens;
  if (text.empty()) return tokens;
  if (delimiters.empty()) {
    for (char c : text) tokens.emplace_back(1, c);
    return tokens;
  }
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && delimiters.find(text[i]) == absl::string_view::npos) continue;
    if (!skip_empty || i > begin) tokens.emplace_back(text.substr(begin, i - begin));
    begin = i + 1;
  }
  return tokens;
}

absl::Status StringSplit(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckSplitInputs(ctx, "delimiter"));
  bool skip_empty = true;  // graphs older than the attribute skip empty tokens
  if (auto attr = GetAttrBool(ctx.node(), "skip_empty"); attr.ok()) skip_empty = *attr;
  const std::string& delimiters = ctx.input(1).strings()[0];
  std::vector<std::vector<std::string>> rows;
  for (const std::string& text : ctx.input(0).strings()) rows.push_back(SplitOnAnyOf(text, delimiters, skip_empty));
  return SetSparseRows(ctx, rows);
}
PX_REGISTER_HOST_OP("StringSplit", StringSplit);

// --- StringNGrams -------------------------------------------------------------

struct NGramSpec {
  std::string separator, left_pad, right_pad;
  int64_t pad_width = 0;
  bool preserve_short = false;

  // Padding never wider than ngram_width - 1; a negative pad_width pads by
  // that much.
  int64_t PadWidth(int64_t width) const { return std::min(pad_width < 0 ? width - 1 : pad_width, width - 1); }
  int64_t NumNGrams(int64_t length, int64_t width) const {
    return std::max<int64_t>(0, length + 2 * PadWidth(width) - width + 1);
  }
  // The n-grams of width `width` of tokens data[0, ...), appended to `out`.
  void Append(const std::string* data, int64_t count, int64_t width, std::vector<std::string>* out) const {
    const int64_t pad = PadWidth(width);
    for (int64_t g = 0; g < count; ++g) {
      const int64_t left = std::max<int64_t>(0, pad - g);
      const int64_t right = std::max<int64_t>(0, pad - (count - (g + 1)));
      const int64_t tokens = width - (left + right);
      const int64_t start = left > 0 ? 0 : g - pad;
      std::string ngram;
      for (int64_t n = 0; n < left; ++n) absl::StrAppend(&ngram, left_pad, separator);
      for (int64_t n = 0; n < tokens - 1; ++n) absl::StrAppend(&ngram, data[start + n], separator);
      if (tokens > 0) {
        ngram += data[start + tokens - 1];
        for (int64_t n = 0; n < right; ++n) absl::StrAppend(&ngram, separator, right_pad);
      } else {
        for (int64_t n = 0; n < right - 1; ++n) absl::StrAppend(&ngram, right_pad, separator);
        ngram += right_pad;
      }
      out->push_back(std::move(ngram));
    }
  }
};

absl::StatusOr<std::vector<int64_t>> SplitsOf(HostOpContext& ctx, int64_t num_values) {
  const Tensor& t = ctx.input(1);
  if (t.dims() != 1 || (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kInt32)) {
    return ctx.InvalidArgument(absl::StrCat("data_splits must be an int32 or int64 vector, got ", t.DebugString(0)));
  }
  std::vector<int64_t> splits(t.num_elements());
  for (size_t i = 0; i < splits.size(); ++i) {
    splits[i] = t.dtype() == DataType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
  }
  if (splits.empty()) return splits;
  if (splits[0] != 0) return ctx.InvalidArgument(absl::StrCat("First split value must be 0, got ", splits[0]));
  for (size_t i = 1; i < splits.size(); ++i) {
    if (splits[i] < splits[i - 1] || splits[i] > num_values) {
      return ctx.InvalidArgument(absl::StrCat("Invalid split value ", splits[i], ", must be in [",
                                              splits[i - 1], ", ", num_values, "]"));
    }
  }
  if (splits.back() != num_values) {
    return ctx.InvalidArgument(absl::StrCat("Last split value must be data size. Expected ", num_values,
                                            ", got ", splits.back()));
  }
  return splits;
}

absl::Status StringNGrams(HostOpContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& data = ctx.input(0);
  if (data.dtype() != DataType::kString || data.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("data must be a string vector, got ", data.DebugString(0)));
  }
  NGramSpec spec;
  PX_ASSIGN_OR_RETURN(spec.separator, GetAttrString(node, "separator"));
  PX_ASSIGN_OR_RETURN(spec.left_pad, GetAttrString(node, "left_pad"));
  PX_ASSIGN_OR_RETURN(spec.right_pad, GetAttrString(node, "right_pad"));
  PX_ASSIGN_OR_RETURN(spec.pad_width, GetAttrInt(node, "pad_width"));
  PX_ASSIGN_OR_RETURN(spec.preserve_short, GetAttrBool(node, "preserve_short_sequences"));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> widths, GetAttrIntList(node, "ngram_widths"));
  for (int64_t w : widths) {
    if (w <= 0) return ctx.InvalidArgument("ngram_widths must contain positive values");
  }
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> splits, SplitsOf(ctx, data.num_elements()));
  const std::vector<std::string>& tokens = data.strings();
  std::vector<std::string> ngrams;
  std::vector<int64_t> out_splits{0};
  for (size_t row = 0; row + 1 < splits.size(); ++row) {
    const int64_t length = splits[row + 1] - splits[row];
    const std::string* start = tokens.data() + splits[row];
    const size_t before = ngrams.size();
    for (int64_t w : widths) spec.Append(start, spec.NumNGrams(length, w), w, &ngrams);
    // A row too short for any n-gram gives one n-gram of all its tokens.
    if (spec.preserve_short && ngrams.size() == before && length > 0) {
      spec.Append(start, 1, length + 2 * spec.pad_width, &ngrams);
    }
    out_splits.push_back(static_cast<int64_t>(ngrams.size()));
  }
  if (splits.empty()) out_splits.clear();
  const int64_t n = static_cast<int64_t>(ngrams.size());
  const int64_t rows = static_cast<int64_t>(out_splits.size());
  PX_ASSIGN_OR_RETURN(Tensor split_tensor, Tensor::AllocateHost(ctx.input(1).dtype(), {rows}));
  for (int64_t i = 0; i < rows; ++i) {
    if (split_tensor.dtype() == DataType::kInt64) split_tensor.data<int64_t>()[i] = out_splits[i];
    else split_tensor.data<int32_t>()[i] = static_cast<int32_t>(out_splits[i]);
  }
  ctx.set_output(0, Tensor::FromStrings({n}, std::move(ngrams)));
  ctx.set_output(1, std::move(split_tensor));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringNGrams", StringNGrams);

}  // namespace
}  // namespace plexus
