// Folds that turn the layer patterns Keras exports into the shapes the
// fusions of fuse.cc take (declared in fuse_util.h):
//   - a Pad of zeros before an NHWC convolution becomes its explicit padding
//     (ZeroPadding2D before a strided convolution);
//   - a product by a constant per-channel vector after a convolution or
//     MatMul with constant weights (through a constant BiasAdd, if any)
//     folds into the weights: Keras 3 exports inference batch norm as such
//     a Mul, then an AddV2;
//   - an Add of a constant channel vector after a BiasAdd of a constant
//     merges into that BiasAdd.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/fuse_util.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {

// Add(BiasAdd(x, b), c), the BiasAdd read by nothing else, b a constant
// vector and c a constant of the same channels ([C] or [1, ..., 1, C]),
// is BiasAdd(x, b + c): the Add's node becomes that BiasAdd.
bool MergeIntoBiasAdd(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& add,
                      tf::NodeDef& bias_add, const std::string& addend) {
  tf::NodeDef* consumer = nullptr;
  if (!SoleConsumer(index, ctx, bias_add, &consumer) || consumer != &add ||
      ctx.fed.count(EndpointKey(bias_add.name(), 0)) > 0 || !ControlInputs(bias_add).empty()) {
    return false;
  }
  auto format = bias_add.attr().find("data_format");
  if (format != bias_add.attr().end() && format->second.s() != "NHWC") return false;
  std::vector<std::string> bias_in = DataInputs(bias_add);
  if (bias_in.size() != 2) return false;
  std::optional<Tensor> b = ConstOf(index, ctx, bias_in[1]);
  std::optional<Tensor> c = ConstOf(index, ctx, addend);
  if (!b || !c || b->dims() != 1 || b->dtype() != c->dtype() ||
      (b->dtype() != DataType::kFloat && b->dtype() != DataType::kDouble)) {
    return false;
  }
  const int64_t channels = b->num_elements();
  // The Add must not broadcast to more dimensions than BiasAdd's input has
  // (at least 2); rank 4 covers the layers this is for.
  if (c->dims() < 1 || c->dims() > 4 || c->num_elements() != channels || c->shape().back() != channels) {
    return false;
  }
  Tensor sum = Tensor::AllocateHost(b->dtype(), {channels}).value();
  for (int64_t o = 0; o < channels; ++o) Set(sum, o, At(*b, o) + At(*c, o));
  auto sum_node = MakeConst(names.Unique(absl::StrCat(add.name(), "/bias")), sum, add.device());
  if (!sum_node.ok()) return false;
  tf::NodeDef merged = bias_add;
  merged.set_name(add.name());
  merged.clear_input();
  merged.add_input(bias_in[0]);
  merged.add_input(sum_node->name());
  for (const std::string& ctl : ControlInputs(add)) merged.add_input(ctl);
  index.AddNode(*std::move(sum_node));
  index.ReplaceNode(add, std::move(merged));
  // The old BiasAdd has no reader left: it becomes a NoOp without inputs
  // (dead_nodes removes it), so that its input has the merged node as its
  // only reader and fuses in this same pass.
  tf::NodeDef orphan;
  orphan.set_name(bias_add.name());
  orphan.set_op("NoOp");
  orphan.set_device(bias_add.device());
  index.ReplaceNode(bias_add, std::move(orphan));
  return true;
}


// Conv2D or DepthwiseConv2dNative (NHWC, VALID or EXPLICIT padding) whose
// input is a Pad of zeros over the spatial dimensions only, read by nothing
// else: the padding moves into the convolution's explicit_paddings (Keras'
// ZeroPadding2D before a strided convolution, as MobileNet and EfficientNet
// export it), so the padded copy of the input is never made.
bool FoldPadIntoConv(const PassContext& ctx, NodeIndex& index, tf::NodeDef& conv) {
  if (conv.op() != "Conv2D" && conv.op() != "DepthwiseConv2dNative") return false;
  auto attr = [&](const char* name) -> const tf::AttrValue* {
    auto it = conv.attr().find(name);
    return it == conv.attr().end() ? nullptr : &it->second;
  };
  const tf::AttrValue* format = attr("data_format");
  const tf::AttrValue* padding = attr("padding");
  if ((format != nullptr && format->s() != "NHWC") || padding == nullptr ||
      (padding->s() != "VALID" && padding->s() != "EXPLICIT")) {
    return false;
  }
  std::vector<std::string> in = DataInputs(conv);
  if (in.size() != 2) return false;
  const InputRef ref = ParseInput(in[0]);
  tf::NodeDef* pad = index.Find(ref.node);
  tf::NodeDef* consumer = nullptr;
  if (pad == nullptr || ref.index != 0 || (pad->op() != "Pad" && pad->op() != "PadV2") ||
      !SoleConsumer(index, ctx, *pad, &consumer) || consumer != &conv || !ControlInputs(*pad).empty() ||
      ctx.fed.count(EndpointKey(pad->name(), 0)) > 0) {
    return false;
  }
  std::vector<std::string> pad_in = DataInputs(*pad);
  if (pad_in.size() < 2) return false;
  if (pad->op() == "PadV2") {
    std::optional<Tensor> value = ConstOf(index, ctx, pad_in[2]);
    if (!value || value->num_elements() != 1 ||
        (value->dtype() != DataType::kFloat && value->dtype() != DataType::kDouble) || At(*value, 0) != 0.0) {
      return false;
    }
  }
  std::optional<Tensor> paddings = ConstOf(index, ctx, pad_in[1]);
  if (!paddings || paddings->num_elements() != 8 ||
      (paddings->dtype() != DataType::kInt32 && paddings->dtype() != DataType::kInt64)) {
    return false;
  }
  int64_t p[8];
  for (int i = 0; i < 8; ++i) {
    p[i] = paddings->dtype() == DataType::kInt32 ? paddings->data<int32_t>()[i] : paddings->data<int64_t>()[i];
    if (p[i] < 0) return false;
  }
  if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) return false;
  int64_t old[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (padding->s() == "EXPLICIT") {
    const tf::AttrValue* e = attr("explicit_paddings");
    if (e == nullptr || e->list().i_size() != 8) return false;
    for (int i = 0; i < 8; ++i) old[i] = e->list().i(i);
  }
  tf::NodeDef folded = conv;
  folded.set_input(0, pad_in[0]);
  auto& attrs = *folded.mutable_attr();
  attrs["padding"].set_s("EXPLICIT");
  auto* list = attrs["explicit_paddings"].mutable_list();
  list->clear_i();
  for (int i = 0; i < 8; ++i) list->add_i(old[i] + p[i]);
  index.ReplaceNode(conv, std::move(folded));
  return true;
}

// Mul(conv, s) where conv is a Conv2D, DepthwiseConv2dNative or MatMul
// with a constant filter, read by nothing else, and s a constant holding
// one factor per output channel (shape [C], or [1, ..., 1, C]): the
// factors move into the filter, conv(x, f) * s = conv(x, f * s). This is
// how Keras 3 exports inference batch norm (x * (gamma * rsqrt(var + eps))
// + (beta - mean * ...), Mul then AddV2 of constants after constant
// folding), so the AddV2 after it becomes a BiasAdd and the whole layer one
// fused convolution. The Mul's node becomes the rescaled convolution (its
// readers need no rewiring); the old convolution is left to dead_nodes.
bool FoldChannelScale(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& mul) {
  if (mul.op() != "Mul" || ctx.protected_nodes.count(mul.name()) > 0 ||
      ctx.fed.count(EndpointKey(mul.name(), 0)) > 0) {
    return false;
  }
  std::vector<std::string> in = DataInputs(mul);
  if (in.size() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    const InputRef ref = ParseInput(in[side]);
    tf::NodeDef* conv = index.Find(ref.node);
    tf::NodeDef* consumer = nullptr;
    // A BiasAdd of a constant between them scales too:
    // (conv + b) * s = conv * s + b * s (ResNet's layers have a bias).
    tf::NodeDef* bias_add = nullptr;
    std::optional<Tensor> old_bias;
    if (conv != nullptr && ref.index == 0 && conv->op() == "BiasAdd" &&
        SoleConsumer(index, ctx, *conv, &consumer) && consumer == &mul &&
        ctx.fed.count(EndpointKey(conv->name(), 0)) == 0 && ControlInputs(*conv).empty()) {
      auto format = conv->attr().find("data_format");
      std::vector<std::string> bias_in = DataInputs(*conv);
      if ((format != conv->attr().end() && format->second.s() != "NHWC") || bias_in.size() != 2 ||
          ParseInput(bias_in[0]).index != 0) {
        continue;
      }
      old_bias = ConstOf(index, ctx, bias_in[1]);
      if (!old_bias || old_bias->dims() != 1) continue;
      bias_add = conv;
      conv = index.Find(ParseInput(bias_in[0]).node);
      if (conv == nullptr || !SoleConsumer(index, ctx, *conv, &consumer) || consumer != bias_add) continue;
      consumer = &mul;
    }
    if (conv == nullptr || ref.index != 0 ||
        (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative" && conv->op() != "MatMul") ||
        (bias_add == nullptr && (!SoleConsumer(index, ctx, *conv, &consumer) || consumer != &mul)) ||
        ctx.fed.count(EndpointKey(conv->name(), 0)) > 0 || !ControlInputs(*conv).empty()) {
      continue;
    }
    if (conv->op() == "MatMul") {
      auto tb = conv->attr().find("transpose_b");
      if (tb != conv->attr().end() && tb->second.b()) continue;
    }
    const int64_t channels = OutputChannels(index, ctx, *conv);
    std::optional<Tensor> scale = ConstOf(index, ctx, in[1 - side]);
    const DataType t = TypeAttr(*conv, "T");
    if (channels <= 0 || !scale || scale->dtype() != t || scale->num_elements() != channels ||
        scale->dims() < 1 || scale->shape().back() != channels ||
        (t != DataType::kFloat && t != DataType::kDouble)) {
      continue;
    }
    // The product must not broadcast the convolution's output to more
    // dimensions than it has.
    const int64_t out_rank = conv->op() == "MatMul" ? 2 : 4;
    if (scale->dims() > out_rank) continue;
    std::vector<std::string> conv_in = DataInputs(*conv);
    std::optional<Tensor> filter = ConstOf(index, ctx, conv_in[1]);
    if (!filter || filter->dtype() != t) continue;
    if (old_bias && (old_bias->dtype() != t || old_bias->num_elements() != channels)) continue;
    Tensor scaled = Tensor::AllocateHost(t, filter->shape()).value();
    for (int64_t i = 0; i < filter->num_elements(); ++i) {
      Set(scaled, i, At(*filter, i) * At(*scale, i % channels));
    }
    auto filter_node = MakeConst(names.Unique(absl::StrCat(mul.name(), "/scaled_filter")), scaled,
                                 conv->device());
    if (!filter_node.ok()) return false;
    tf::NodeDef rescaled = *conv;
    rescaled.set_name(bias_add == nullptr ? mul.name() : names.Unique(absl::StrCat(mul.name(), "/conv")));
    rescaled.clear_input();
    rescaled.add_input(conv_in[0]);
    rescaled.add_input(filter_node->name());
    index.AddNode(*std::move(filter_node));
    if (bias_add == nullptr) {
      for (const std::string& c : ControlInputs(mul)) rescaled.add_input(c);
      index.ReplaceNode(mul, std::move(rescaled));
      return true;
    }
    // The Mul becomes BiasAdd(rescaled conv, b * s).
    Tensor bias = Tensor::AllocateHost(t, {channels}).value();
    for (int64_t o = 0; o < channels; ++o) Set(bias, o, At(*old_bias, o) * At(*scale, o));
    auto bias_node = MakeConst(names.Unique(absl::StrCat(mul.name(), "/scaled_bias")), bias,
                               bias_add->device());
    if (!bias_node.ok()) return false;
    tf::NodeDef new_bias_add = *bias_add;
    new_bias_add.set_name(mul.name());
    new_bias_add.clear_input();
    new_bias_add.add_input(rescaled.name());
    new_bias_add.add_input(bias_node->name());
    for (const std::string& c : ControlInputs(mul)) new_bias_add.add_input(c);
    index.AddNode(std::move(rescaled));
    index.AddNode(*std::move(bias_node));
    index.ReplaceNode(mul, std::move(new_bias_add));
    return true;
  }
  return false;
}


}  // namespace plexus::opt
