// Host kernel of StringFormat (schema in ops/string_ops.cc), behind
// tf.strings.format and tf.print: the template with each placeholder
// replaced by the next input, written as TensorFlow's numpy-like summary
// (Tensor::SummarizeValue with print_v2): nested brackets, elements
// separated by spaces and rows by newlines, at most `summarize` elements at
// each end of every dimension with "..." between (negative: all). Floats
// are written with 6 significant digits when that reads back as the same
// float, else 9 (doubles: 15, else 17); half and bfloat16 as floats; bools
// as 1 and 0; strings quoted and C-escaped; complex numbers as "?".
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

std::string FloatText(float v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", FLT_DIG, v);
  char* end = nullptr;
  const float back = std::strtof(buf, &end);
  if (back != v) std::snprintf(buf, sizeof(buf), "%.*g", FLT_DIG + 3, v);
  return buf;
}

std::string DoubleText(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", DBL_DIG, v);
  char* end = nullptr;
  const double back = std::strtod(buf, &end);
  if (back != v) std::snprintf(buf, sizeof(buf), "%.*g", DBL_DIG + 2, v);
  return buf;
}

template <typename T>
std::string ElementText(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, std::string>) {
    return absl::StrCat("\"", absl::Utf8SafeCEscape(t.strings()[i]), "\"");
  } else if constexpr (std::is_same_v<T, double>) {
    return DoubleText(t.data<double>()[i]);
  } else if constexpr (host::kIsFloat<T>) {
    return FloatText(static_cast<float>(t.data<T>()[i]));
  } else if constexpr (std::is_same_v<T, bool>) {
    return t.data<bool>()[i] ? "1" : "0";
  } else {
    return absl::StrCat(+t.data<T>()[i]);
  }
}

// Between two elements of dimension `dim`: a space in the last dimension,
// else one newline per dimension below it and an indent of dim + 1.
void Spacing(int64_t dim, int64_t rank, std::string* out) {
  if (dim == rank - 1) {
    out->push_back(' ');
    return;
  }
  out->append(static_cast<size_t>(rank - dim - 1), '\n');
  out->append(static_cast<size_t>(dim + 1), ' ');
}

template <typename T>
void Dimension(const Tensor& t, int64_t dim, int64_t ends, int64_t offset, std::string* out) {
  const Shape& shape = t.shape();
  const int64_t rank = t.dims();
  if (dim == rank) {
    out->append(ElementText<T>(t, offset));
    return;
  }
  out->push_back('[');
  const int64_t count = shape[dim];
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < rank; ++d) stride *= shape[d];
  for (int64_t i = 0; i < ends && i < count; ++i) {
    if (i > 0) Spacing(dim, rank, out);
    Dimension<T>(t, dim + 1, ends, offset + stride * i, out);
  }
  if (count > 2 * ends) {
    Spacing(dim, rank, out);
    out->append("...");
  }
  for (int64_t i = std::max(ends, count - ends); i < count; ++i) {
    Spacing(dim, rank, out);
    Dimension<T>(t, dim + 1, ends, offset + stride * i, out);
  }
  out->push_back(']');
}

template <typename T>
std::string SummarizeAs(const Tensor& t, int64_t limit) {
  const int64_t n = t.num_elements();
  std::string out;
  if (t.dims() == 0) {
    for (int64_t i = 0; i < limit; ++i) {
      if (i > 0) out.push_back(' ');
      out.append(ElementText<T>(t, i));
    }
    if (n > limit) out.append("...");
    return out;
  }
  Dimension<T>(t, 0, limit, 0, &out);
  return out;
}

std::string Summarize(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.num_elements();
  if (max_entries < 0) max_entries = n;
  const int64_t limit = std::min(max_entries, n);
  if (t.dtype() == DataType::kString) return SummarizeAs<std::string>(t, limit);
  std::string out;
  if (host::Visit<host::kReals | host::kBool>(t.dtype(),
                  [&](auto v) { out = SummarizeAs<decltype(v)>(t, limit); })) {
    return out;
  }
  // Other types (complex numbers, variants) print as "?".
  if (t.dims() > 0) out.push_back('[');
  for (int64_t i = 0; i < limit; ++i) out.append(i > 0 ? " ?" : "?");
  if (max_entries < n) out.append("...");
  if (t.dims() > 0) out.push_back(']');
  return out;
}

absl::Status StringFormat(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string templ, GetAttrString(ctx.node(), "template"));
  PX_ASSIGN_OR_RETURN(std::string placeholder, GetAttrString(ctx.node(), "placeholder"));
  PX_ASSIGN_OR_RETURN(int64_t summarize, GetAttrInt(ctx.node(), "summarize"));
  const std::vector<std::string> parts = absl::StrSplit(templ, placeholder);
  const int64_t holes = static_cast<int64_t>(parts.size()) - 1;
  if (holes != ctx.num_inputs()) {
    return ctx.InvalidArgument(absl::StrCat("num placeholders in template and num inputs must match: ", holes,
                                            " vs. ", ctx.num_inputs()));
  }
  std::string out = parts[0];
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    absl::StrAppend(&out, Summarize(ctx.input(i), summarize), parts[i + 1]);
  }
  ctx.set_output(0, Tensor::FromStrings(Shape{}, {std::move(out)}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringFormat", StringFormat);

}  // namespace
}  // namespace plexus
