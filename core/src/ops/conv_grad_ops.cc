// Convolution gradient ops: Conv2DBackpropInput, Conv2DBackpropFilter,
// DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter.
//
// Each takes the shape of what it differentiates with respect to as a
// host-memory int32 [4] input (input_sizes or filter_sizes). The output is
// that shape when its value is known (at run time always; at import time when
// it comes from a Const), else an unknown 4-D shape. Whatever is known of the
// input, filter and out_backprop shapes is checked against the forward
// convolution: out_backprop must be the forward op's output shape.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/conv_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {

// The value of the int32 sizes input i when known: the run-time value, or
// at import time the value of a Const node feeding it.
bool KnownSizes(const InferenceContext& ctx, int i, std::vector<int64_t>* out) {
  Tensor storage;
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr) {
    const Node& node = ctx.node();
    if (i >= node.num_inputs()) return false;
    const Node* producer = node.inputs[i].node;
    if (producer == nullptr || producer->op != "Const") return false;
    const tf::AttrValue* value = producer->FindAttr("value");
    if (value == nullptr || !value->has_tensor()) return false;
    auto parsed = TensorFromProto(value->tensor());
    if (!parsed.ok()) return false;
    storage = *std::move(parsed);
    t = &storage;
  }
  out->clear();
  for (int64_t k = 0; k < t->num_elements(); ++k) {
    switch (t->dtype()) {
      case DataType::kInt32: out->push_back(t->data<int32_t>()[k]); break;
      case DataType::kInt64: out->push_back(t->data<int64_t>()[k]); break;
      default: return false;
    }
  }
  return true;
}

std::string DimsString(const std::vector<int64_t>& dims) {
  return PartialShape(dims).ToString();
}

// kFilterGrad: input 1 is filter_sizes (the output is the filter's
// gradient); otherwise input 0 is input_sizes.
absl::Status ConvGradShape(InferenceContext& ctx, bool filter_grad, bool depthwise) {
  Window2D w;
  PX_RETURN_IF_ERROR(ReadWindow2D(ctx, /*allow_explicit=*/true, &w));
  const int sizes_index = filter_grad ? 1 : 0;
  const char* sizes_name = filter_grad ? "filter_sizes" : "input_sizes";
  const PartialShape& sizes_shape = ctx.input(sizes_index);
  if (sizes_shape.rank_known() &&
      (sizes_shape.rank() != 1 || (sizes_shape.dim(0) >= 0 && sizes_shape.dim(0) != 4))) {
    return ctx.Error(absl::StrCat(sizes_name, " must be a vector of 4 elements, got shape ",
                                  sizes_shape.ToString()));
  }
  std::vector<int64_t> sizes;
  const bool sizes_known = KnownSizes(ctx, sizes_index, &sizes);
  if (sizes_known) {
    if (sizes.size() != 4) {
      return ctx.Error(absl::StrCat(sizes_name, " must have 4 elements, got ", sizes.size()));
    }
    for (int64_t d : sizes) {
      if (d < 0) {
        return ctx.Error(absl::StrCat(sizes_name, " must be non-negative, got ",
                                      DimsString(sizes)));
      }
    }
  }
  // The three shapes of the forward convolution, as far as they are known.
  std::vector<int64_t> input(4, -1), filter(4, -1), out_backprop(4, -1);
  const PartialShape& other = ctx.input(filter_grad ? 0 : 1);
  const char* other_name = filter_grad ? "input" : "filter";
  if (other.rank_known() && other.rank() != 4) {
    return ctx.Error(absl::StrCat(other_name, " must be 4-D, got shape ", other.ToString()));
  }
  const PartialShape& dy = ctx.input(2);
  if (dy.rank_known() && dy.rank() != 4) {
    return ctx.Error(absl::StrCat("out_backprop must be 4-D, got shape ", dy.ToString()));
  }
  if (dy.rank_known()) out_backprop = dy.dim_vector();
  if (filter_grad) {
    if (other.rank_known()) input = other.dim_vector();
    if (sizes_known) filter = sizes;
  } else {
    if (other.rank_known()) filter = other.dim_vector();
    if (sizes_known) input = sizes;
  }
  const int h = w.nchw ? 2 : 1, wd = w.nchw ? 3 : 2, c = w.nchw ? 1 : 3;
  const int64_t in_c = input[c], f_in = filter[2], f_out = filter[3];
  if (depthwise) {
    if (in_c >= 0 && f_in >= 0 && in_c != f_in) {
      return ctx.Error(absl::StrCat("input depth ", in_c, " must equal the filter depth ", f_in,
                                    " (input ", DimsString(input), ", filter ",
                                    DimsString(filter), ")"));
    }
  } else if (in_c >= 0 && f_in >= 0 && (f_in == 0 ? in_c != 0 : in_c % f_in != 0)) {
    return ctx.Error(absl::StrCat("input depth ", in_c,
                                  " must be a multiple of the filter input depth ", f_in,
                                  " (input ", DimsString(input), ", filter ", DimsString(filter),
                                  ")"));
  }
  if (!depthwise && in_c >= 0 && f_in > 0) {
    PX_RETURN_IF_ERROR(CheckConvGroups(ctx, in_c, f_in, f_out));
  }
  int64_t out_c = -1;
  if (depthwise) {
    const int64_t channels = in_c >= 0 ? in_c : f_in;
    if (channels >= 0 && f_out >= 0) {
      PX_RETURN_IF_ERROR(CheckedMul(ctx, channels, f_out, "the output depth", &out_c));
    }
  } else {
    out_c = f_out;
  }
  int64_t out_h, out_w;
  PX_RETURN_IF_ERROR(
      OutputSize(ctx, w, input[h], filter[0], w.dilation_h, w.stride_h, w.pad_top, w.pad_bottom, &out_h));
  PX_RETURN_IF_ERROR(
      OutputSize(ctx, w, input[wd], filter[1], w.dilation_w, w.stride_w, w.pad_left, w.pad_right, &out_w));
  std::vector<int64_t> expected(4);
  expected[0] = input[0];
  expected[h] = out_h;
  expected[wd] = out_w;
  expected[c] = out_c;
  for (int i = 0; i < 4; ++i) {
    if (expected[i] >= 0 && out_backprop[i] >= 0 && expected[i] != out_backprop[i]) {
      return ctx.Error(absl::StrCat(
          "out_backprop must have shape ", DimsString(expected),
          " (the output of the forward convolution of input ", DimsString(input),
          " with filter ", DimsString(filter), "), got ", DimsString(out_backprop)));
    }
  }
  ctx.set_output(0, sizes_known ? PartialShape(sizes) : PartialShape::UnknownOfRank(4));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Conv2DBackpropInput")
                   .Input("input_sizes: int32")
                   .Input("filter: T")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double, int32}")
                   .Attr("strides: list(int)")
                   .Attr("use_cudnn_on_gpu: bool = true")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ConvGradShape(ctx, /*filter_grad=*/false, /*depthwise=*/false);
                   }));

PX_REGISTER_OP(OpDefBuilder("Conv2DBackpropFilter")
                   .Input("input: T")
                   .Input("filter_sizes: int32")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int)")
                   .Attr("use_cudnn_on_gpu: bool = true")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ConvGradShape(ctx, /*filter_grad=*/true, /*depthwise=*/false);
                   }));

PX_REGISTER_OP(OpDefBuilder("DepthwiseConv2dNativeBackpropInput")
                   .Input("input_sizes: int32")
                   .Input("filter: T")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int)")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ConvGradShape(ctx, /*filter_grad=*/false, /*depthwise=*/true);
                   }));

PX_REGISTER_OP(OpDefBuilder("DepthwiseConv2dNativeBackpropFilter")
                   .Input("input: T")
                   .Input("filter_sizes: int32")
                   .Input("out_backprop: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int)")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ConvGradShape(ctx, /*filter_grad=*/true, /*depthwise=*/true);
                   }));

}  // namespace
}  // namespace plexus
