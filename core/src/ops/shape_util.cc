#include "ops/shape_util.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plexus/status.h"

namespace plexus {

absl::Status UnchangedShape(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status BroadcastShape(InferenceContext& ctx) {
  auto out = BroadcastShapes(ctx.input(0), ctx.input(1));
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, *out);
  return absl::OkStatus();
}

absl::Status ReadWindow2D(InferenceContext& ctx, bool allow_explicit, Window2D* w) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(node, "data_format"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error(absl::StrCat("data_format must be NHWC or NCHW, got '", format, "'"));
  }
  w->nchw = format == "NCHW";
  const int h = w->nchw ? 2 : 1, wd = w->nchw ? 3 : 2, c = w->nchw ? 1 : 3;
  PX_ASSIGN_OR_RETURN(w->padding, GetAttrString(node, "padding"));
  const bool explicit_ok = allow_explicit && node.FindAttr("explicit_paddings") != nullptr;
  if (w->padding != "SAME" && w->padding != "VALID" &&
      !(explicit_ok && w->padding == "EXPLICIT")) {
    return ctx.Error(absl::StrCat("padding must be SAME, VALID", explicit_ok ? " or EXPLICIT" : "",
                                  ", got '", w->padding, "'"));
  }
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, GetAttrIntList(node, "strides"));
  if (strides.size() != 4) {
    return ctx.Error(absl::StrCat("strides must have 4 elements, got ", strides.size()));
  }
  if (strides[0] != 1 || strides[c] != 1) {
    return ctx.Error("strides in the batch and depth dimensions must be 1");
  }
  w->stride_h = strides[h];
  w->stride_w = strides[wd];
  if (w->stride_h < 1 || w->stride_w < 1) {
    return ctx.Error("strides must be positive");
  }
  if (node.FindAttr("dilations") != nullptr) {
    PX_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, GetAttrIntList(node, "dilations"));
    if (dilations.size() != 4) {
      return ctx.Error(absl::StrCat("dilations must have 4 elements, got ", dilations.size()));
    }
    if (dilations[0] != 1 || dilations[c] != 1) {
      return ctx.Error("dilations in the batch and depth dimensions must be 1");
    }
    w->dilation_h = dilations[h];
    w->dilation_w = dilations[wd];
    if (w->dilation_h < 1 || w->dilation_w < 1) {
      return ctx.Error("dilations must be positive");
    }
  }
  if (explicit_ok) {
    PX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, GetAttrIntList(node, "explicit_paddings"));
    if (w->padding == "EXPLICIT") {
      if (pads.size() != 8) {
        return ctx.Error(absl::StrCat(
            "explicit_paddings must have 8 elements with padding EXPLICIT, got ", pads.size()));
      }
      for (int64_t p : pads) {
        if (p < 0) return ctx.Error("explicit_paddings must be non-negative");
      }
      if (pads[0] || pads[1] || pads[2 * c] || pads[2 * c + 1]) {
        return ctx.Error("explicit_paddings in the batch and depth dimensions must be 0");
      }
      w->pad_top = pads[2 * h];
      w->pad_bottom = pads[2 * h + 1];
      w->pad_left = pads[2 * wd];
      w->pad_right = pads[2 * wd + 1];
    } else if (!pads.empty()) {
      return ctx.Error("explicit_paddings must be empty unless padding is EXPLICIT");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckedMul(const InferenceContext& ctx, int64_t a, int64_t b, absl::string_view what, int64_t* out) {
  if (__builtin_mul_overflow(a, b, out)) {
    return ctx.Error(absl::StrCat(what, " (", a, " * ", b, ") overflows int64"));
  }
  return absl::OkStatus();
}

absl::Status CheckedAdd(const InferenceContext& ctx, int64_t a, int64_t b, absl::string_view what, int64_t* out) {
  if (__builtin_add_overflow(a, b, out)) {
    return ctx.Error(absl::StrCat(what, " (", a, " + ", b, ") overflows int64"));
  }
  return absl::OkStatus();
}

absl::Status CheckedNumElements(const InferenceContext& ctx, const Shape& dims, absl::string_view what,
                                int64_t* out) {
  *out = 1;
  for (int64_t d : dims) PX_RETURN_IF_ERROR(CheckedMul(ctx, *out, d, what, out));
  return absl::OkStatus();
}

absl::Status DilatedWindow(const InferenceContext& ctx, int64_t k, int64_t dilation, int64_t* out) {
  PX_RETURN_IF_ERROR(CheckedMul(ctx, k - 1, dilation, "the dilated window size", out));
  return CheckedAdd(ctx, *out, 1, "the dilated window size", out);
}

absl::Status OutputSize(InferenceContext& ctx, const Window2D& w, int64_t in, int64_t k,
                        int64_t dilation, int64_t stride, int64_t pad_before,
                        int64_t pad_after, int64_t* out) {
  if (in < 0 || k < 0) {
    *out = -1;
    return absl::OkStatus();
  }
  int64_t effective = 0;
  PX_RETURN_IF_ERROR(DilatedWindow(ctx, k, dilation, &effective));
  if (w.padding == "SAME") {
    *out = CeilDiv(in, stride);
  } else {
    int64_t padded = in;
    if (w.padding == "EXPLICIT") {
      PX_RETURN_IF_ERROR(CheckedAdd(ctx, padded, pad_before, "the padded input size", &padded));
      PX_RETURN_IF_ERROR(CheckedAdd(ctx, padded, pad_after, "the padded input size", &padded));
    }
    if (padded < effective) {
      return ctx.Error(absl::StrCat("Computed output size would be negative: input size ", in,
                                    ", window size ", effective, ", padding ", w.padding));
    }
    *out = (padded - effective) / stride + 1;
  }
  return absl::OkStatus();
}

// Reads an integer host tensor (int16, int32 or int64) as int64s.
bool ReadIntValues(const Tensor* t, std::vector<int64_t>* values) {
  if (t == nullptr || !t->host_readable()) return false;
  const int64_t n = t->num_elements();
  values->resize(static_cast<size_t>(n));
  switch (t->dtype()) {
    case DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) (*values)[i] = t->data<int32_t>()[i];
      return true;
    case DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) (*values)[i] = t->data<int64_t>()[i];
      return true;
    case DataType::kInt16:
      for (int64_t i = 0; i < n; ++i) (*values)[i] = t->data<int16_t>()[i];
      return true;
    default:
      return false;
  }
}

// Input 0 reduced over the axes in input 1 (keep_dims keeps them as 1s).
absl::Status ReductionShape(InferenceContext& ctx) {
  const PartialShape& input = ctx.input(0);
  PX_ASSIGN_OR_RETURN(bool keep_dims, GetAttrBool(ctx.node(), "keep_dims"));
  std::vector<int64_t> axes;
  if (!ReadIntValues(ctx.input_value(1), &axes)) {
    // Axes unknown: with keep_dims the rank survives.
    if (keep_dims && input.rank_known()) {
      ctx.set_output(0, PartialShape::UnknownOfRank(input.rank()));
    } else {
      ctx.set_output(0, PartialShape::Unknown());
    }
    return absl::OkStatus();
  }
  if (!input.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t rank = input.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return ctx.Error(absl::StrCat("Invalid reduction dimension (", axis, " for input with ",
                                    rank, " dimension(s)"));
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back(input.dim(d));
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

}  // namespace plexus
