// 3-D convolution and pooling: Conv3D, MaxPool3D, AvgPool3D, and the
// gradients of Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2.
// Input [batch, depth, height, width, channels] (NDHWC; NCDHW is accepted
// here and refused by the kernels, as TensorFlow's CPU kernels refuse it),
// filter [kd, kh, kw, in_channels, out_channels], SAME or VALID padding.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// A 5-element window attribute (strides, ksize, dilations), checked: the
// batch and channel entries 1, the spatial ones positive. Fills spatial[3].
absl::Status ReadList5(InferenceContext& ctx, const char* name, bool ncdhw,
                       std::vector<int64_t> fallback, int64_t spatial[3]) {
  std::vector<int64_t> v = std::move(fallback);
  if (ctx.node().FindAttr(name) != nullptr || v.empty()) {
    PX_ASSIGN_OR_RETURN(v, GetAttrIntList(ctx.node(), name));
  }
  if (v.size() != 5) {
    return ctx.Error(absl::StrCat(name, " must have 5 elements, got ", v.size()));
  }
  const int c = ncdhw ? 1 : 4;
  if (v[0] != 1 || v[c] != 1) {
    return ctx.Error(absl::StrCat(name, " in the batch and depth dimensions must be 1"));
  }
  for (int i = 0; i < 3; ++i) {
    spatial[i] = v[(ncdhw ? 2 : 1) + i];
    if (spatial[i] < 1) return ctx.Error(absl::StrCat(name, " must be positive"));
  }
  return absl::OkStatus();
}

// Conv3D (pooling false: the window is the filter's, dilated) or a 3-D pool.
absl::Status Window3DShape(InferenceContext& ctx, bool pooling) {
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  if (format != "NDHWC" && format != "NCDHW") {
    return ctx.Error(absl::StrCat("data_format must be NDHWC or NCDHW, got '", format, "'"));
  }
  const bool ncdhw = format == "NCDHW";
  PX_ASSIGN_OR_RETURN(std::string padding, GetAttrString(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return ctx.Error(absl::StrCat("padding must be SAME or VALID, got '", padding, "'"));
  }
  int64_t strides[3], window[3] = {-1, -1, -1}, dilations[3] = {1, 1, 1};
  PX_RETURN_IF_ERROR(ReadList5(ctx, "strides", ncdhw, {}, strides));
  const PartialShape& input = ctx.input(0);
  if (input.rank_known() && input.rank() != 5) {
    return ctx.Error(absl::StrCat("input must be 5-D, got shape ", input.ToString()));
  }
  const int c = ncdhw ? 1 : 4, first = ncdhw ? 2 : 1;
  const int64_t in_c = input.rank_known() ? input.dim(c) : -1;
  int64_t out_c = in_c;
  if (pooling) {
    PX_RETURN_IF_ERROR(ReadList5(ctx, "ksize", ncdhw, {}, window));
  } else {
    PX_RETURN_IF_ERROR(ReadList5(ctx, "dilations", ncdhw, {1, 1, 1, 1, 1}, dilations));
    const PartialShape& filter = ctx.input(1);
    if (filter.rank_known() && filter.rank() != 5) {
      return ctx.Error(absl::StrCat("filter must be 5-D, got shape ", filter.ToString()));
    }
    if (filter.rank_known()) {
      for (int i = 0; i < 3; ++i) window[i] = filter.dim(i);
      const int64_t f_in = filter.dim(3);
      if (f_in == 0) return ctx.Error("filter input depth must be positive");
      if (in_c >= 0 && f_in > 0 && in_c % f_in != 0) {
        return ctx.Error(absl::StrCat("input depth ", in_c,
                                      " must be a multiple of the filter input depth ", f_in));
      }
      out_c = filter.dim(4);
    } else {
      out_c = -1;
    }
  }
  std::vector<int64_t> out(5, -1);
  out[0] = input.rank_known() ? input.dim(0) : -1;
  out[c] = out_c;
  for (int i = 0; i < 3; ++i) {
    const int64_t in = input.rank_known() ? input.dim(first + i) : -1;
    if (in < 0 || window[i] < 0) continue;
    int64_t effective = 0;
    PX_RETURN_IF_ERROR(DilatedWindow(ctx, window[i], dilations[i], &effective));
    if (padding == "SAME") {
      out[first + i] = CeilDiv(in, strides[i]);
    } else if (in < effective) {
      return ctx.Error(absl::StrCat("Computed output size would be negative: input size ", in,
                                    ", window size ", effective));
    } else {
      out[first + i] = (in - effective) / strides[i] + 1;
    }
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Conv3DBackpropInputV2 and Conv3DBackpropFilterV2: the output's shape is
// the value of the sizes input (`sizes`: input_sizes or filter_sizes), 5
// dimensions; the window attributes are checked as Conv3D's.
absl::Status Conv3DBackpropShape(InferenceContext& ctx, int sizes) {
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  if (format != "NDHWC" && format != "NCDHW") {
    return ctx.Error(absl::StrCat("data_format must be NDHWC or NCDHW, got '", format, "'"));
  }
  PX_ASSIGN_OR_RETURN(std::string padding, GetAttrString(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return ctx.Error(absl::StrCat("padding must be SAME or VALID, got '", padding, "'"));
  }
  int64_t strides[3], dilations[3];
  PX_RETURN_IF_ERROR(ReadList5(ctx, "strides", format == "NCDHW", {}, strides));
  PX_RETURN_IF_ERROR(ReadList5(ctx, "dilations", format == "NCDHW", {1, 1, 1, 1, 1}, dilations));
  const int tensor = sizes == 0 ? 1 : 0;  // the filter, or the input
  for (int i : {tensor, 2}) {
    const PartialShape& s = ctx.input(i);
    if (s.rank_known() && s.rank() != 5) {
      return ctx.Error(absl::StrCat(i == 2 ? "out_backprop" : sizes == 0 ? "filter" : "input",
                                    " must be 5-D, got shape ", s.ToString()));
    }
  }
  const PartialShape& sizes_shape = ctx.input(sizes);
  if (sizes_shape.rank_known() &&
      (sizes_shape.rank() != 1 || (sizes_shape.dim(0) >= 0 && sizes_shape.dim(0) != 5))) {
    return ctx.Error(absl::StrCat(sizes == 0 ? "input_sizes" : "filter_sizes",
                                  " must be a vector of 5 elements, got shape ",
                                  sizes_shape.ToString()));
  }
  array_util::Dims values;
  if (array_util::KnownInts(ctx, sizes, &values)) {
    for (int64_t v : values) {
      if (v < 0) return ctx.Error(absl::StrCat("the output sizes must not be negative, got ", v));
    }
    ctx.set_output(0, PartialShape(values));
  } else {
    ctx.set_output(0, PartialShape::UnknownOfRank(5));
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Conv3DBackpropInputV2")
                   .Input("input_sizes: Tshape")
                   .Input("filter: T")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int) >= 5")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NDHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
                   .Attr("Tshape: {int32, int64} = DT_INT32")
                   .SetShapeFn([](InferenceContext& ctx) { return Conv3DBackpropShape(ctx, 0); }));

PX_REGISTER_OP(OpDefBuilder("Conv3DBackpropFilterV2")
                   .Input("input: T")
                   .Input("filter_sizes: int32")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int) >= 5")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NDHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) { return Conv3DBackpropShape(ctx, 1); }));

PX_REGISTER_OP(OpDefBuilder("Conv3D")
                   .Input("input: T")
                   .Input("filter: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int) >= 5")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NDHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) { return Window3DShape(ctx, false); }));

PX_REGISTER_OP(OpDefBuilder("MaxPool3D")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("ksize: list(int) >= 5")
                   .Attr("strides: list(int) >= 5")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NDHWC\"")
                   .Attr("T: {half, bfloat16, float}")
                   .SetShapeFn([](InferenceContext& ctx) { return Window3DShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("AvgPool3D")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("ksize: list(int) >= 5")
                   .Attr("strides: list(int) >= 5")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NDHWC\"")
                   .Attr("T: {half, bfloat16, float, double}")
                   .SetShapeFn([](InferenceContext& ctx) { return Window3DShape(ctx, true); }));

}  // namespace
}  // namespace plexus
