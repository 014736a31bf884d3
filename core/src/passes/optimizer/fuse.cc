// Fusion, for the device the session runs on:
//   - TensorFlow 1's atrous pattern SpaceToBatchND -> convolution ->
//     BatchToSpaceND becomes one dilated convolution (atrous.cc);
//   - an Add of a constant channel vector after a MatMul or NHWC
//     convolution becomes the BiasAdd it is;
//   - a Pad of zeros before an NHWC convolution becomes its explicit padding;
//   - a product by a constant per-channel vector after a convolution or
//     MatMul with constant weights folds into the weights (Keras 3's
//     inference batch norm is such a Mul, then an AddV2);
//   - inference batch norm after a convolution (Conv2D or depthwise) with
//     constant weights folds into it: filter * s and a BiasAdd of offset - mean * s,
//     where s = scale / sqrt(variance + epsilon) (float and double);
//   - MatMul + BiasAdd (+ Relu, Relu6, Elu, LeakyRelu, Tanh or Sigmoid)
//     becomes one _FusedMatMul, Conv2D + BiasAdd (+ the same) one
//     _FusedConv2D, and DepthwiseConv2dNative + BiasAdd (+ the same) one
//     _FusedDepthwiseConv2dNative, TensorFlow's own fused ops, when the
//     device's plugin has a kernel for them in that dtype. A folded batch
//     norm is a BiasAdd by then, so it fuses the same way.
//   - a residual Add after such a _FusedConv2D (without an activation yet),
//     and the activation after the Add, join it as one _PlexusFusedConv2DAdd
//     when the device has a kernel for it (conv_add.cc).
// The fused node takes the name of the last node of the pattern, so its
// consumers and a fetch of it need no rewiring. Intermediate nodes must have
// no other consumer and must not be named by the signature.
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/fuse_util.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/device.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

// Conv2D (constant HWIO filter) -> FusedBatchNorm (inference, constant
// parameters): scale the filter, and turn the batch norm into a BiasAdd.
bool FoldBatchNorm(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& bn) {
  if (bn.op() != "FusedBatchNorm" && bn.op() != "FusedBatchNormV2" && bn.op() != "FusedBatchNormV3") return false;
  auto training = bn.attr().find("is_training");
  if (training != bn.attr().end() && training->second.b()) return false;
  std::vector<std::string> in = DataInputs(bn);
  if (in.size() != 5) return false;
  // Only output 0 may be read.
  for (const auto& [consumer, pos] : index.DataConsumers(bn.name())) {
    if (ParseInput(consumer->input(pos)).index != 0) return false;
  }
  if (ctx.fed.count(EndpointKey(bn.name(), 0)) > 0 || ctx.protected_nodes.count(bn.name()) > 0) return false;
  tf::NodeDef* conv = index.Find(ParseInput(in[0]).node);
  tf::NodeDef* consumer = nullptr;
  // A BiasAdd of a constant between the convolution and the batch norm
  // folds too: (conv + b - mean) * s + offset = conv * s + (b - mean) * s + offset.
  tf::NodeDef* between = nullptr;
  std::optional<Tensor> old_bias;
  if (conv != nullptr && conv->op() == "BiasAdd" && ParseInput(in[0]).index == 0 &&
      SoleConsumer(index, ctx, *conv, &consumer) && consumer == &bn &&
      ctx.fed.count(EndpointKey(conv->name(), 0)) == 0) {
    between = conv;
    std::string bias_format = "NHWC", bn_format = "NHWC";
    if (auto f = between->attr().find("data_format"); f != between->attr().end()) bias_format = f->second.s();
    if (auto f = bn.attr().find("data_format"); f != bn.attr().end()) bn_format = f->second.s();
    if (!ControlInputs(*between).empty() || bias_format != bn_format) return false;
    std::vector<std::string> bias_in = DataInputs(*between);
    if (bias_in.size() != 2 || ParseInput(bias_in[0]).index != 0) return false;
    old_bias = ConstOf(index, ctx, bias_in[1]);
    if (!old_bias) return false;
    conv = index.Find(ParseInput(bias_in[0]).node);
    if (conv == nullptr || !SoleConsumer(index, ctx, *conv, &consumer) || consumer != between) return false;
  } else if (conv == nullptr || ParseInput(in[0]).index != 0 || !SoleConsumer(index, ctx, *conv, &consumer) ||
             consumer != &bn) {
    return false;
  }
  if (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative") return false;
  if (ctx.fed.count(EndpointKey(conv->name(), 0)) > 0) return false;
  std::vector<std::string> conv_in = DataInputs(*conv);
  std::optional<Tensor> filter = ConstOf(index, ctx, conv_in[1]);
  std::optional<Tensor> scale = ConstOf(index, ctx, in[1]), offset = ConstOf(index, ctx, in[2]),
                        mean = ConstOf(index, ctx, in[3]), var = ConstOf(index, ctx, in[4]);
  if (!filter || !scale || !offset || !mean || !var) return false;
  DataType t = filter->dtype();
  if ((t != DataType::kFloat && t != DataType::kDouble) || scale->dtype() != t || filter->dims() != 4) return false;
  // Conv2D's filter is [kh, kw, in, out]; a depthwise filter [kh, kw, in,
  // multiplier] makes output channel c * multiplier + m: either way output
  // channel o scales the filter elements whose flat index is o modulo the
  // number of output channels.
  const bool depthwise = conv->op() == "DepthwiseConv2dNative";
  const int64_t out_channels = depthwise ? filter->shape()[2] * filter->shape()[3] : filter->shape()[3];
  for (const Tensor* p : {&*scale, &*offset, &*mean, &*var}) {
    if (p->dtype() != t || p->num_elements() != out_channels) return false;
  }
  if (old_bias && (old_bias->dtype() != t || old_bias->num_elements() != out_channels)) return false;
  auto eps_it = bn.attr().find("epsilon");
  double eps = eps_it == bn.attr().end() ? 1e-4 : eps_it->second.f();
  Tensor new_filter = Tensor::AllocateHost(t, filter->shape()).value();
  Tensor bias = Tensor::AllocateHost(t, {out_channels}).value();
  std::vector<double> s(out_channels);
  for (int64_t o = 0; o < out_channels; ++o) {
    s[o] = At(*scale, o) / std::sqrt(At(*var, o) + eps);
    const double b = old_bias ? At(*old_bias, o) : 0.0;
    Set(bias, o, At(*offset, o) + (b - At(*mean, o)) * s[o]);
  }
  for (int64_t i = 0; i < filter->num_elements(); ++i) Set(new_filter, i, At(*filter, i) * s[i % out_channels]);
  auto filter_node = MakeConst(names.Unique(absl::StrCat(conv->name(), "/folded_filter")), new_filter,
                               conv->device());
  auto bias_node = MakeConst(names.Unique(absl::StrCat(bn.name(), "/folded_bias")), bias, bn.device());
  if (!filter_node.ok() || !bias_node.ok()) return false;
  // Rewire the conv's filter, and make the batch norm a BiasAdd in place.
  for (int i = 0; i < conv->input_size(); ++i) {
    if (conv->input(i) == conv_in[1]) {
      index.SetInput(*conv, i, filter_node->name());
      break;
    }
  }
  std::string data_format = "NHWC";
  if (auto it = bn.attr().find("data_format"); it != bn.attr().end()) data_format = it->second.s();
  std::vector<std::string> controls = ControlInputs(bn);
  tf::NodeDef bias_add;
  bias_add.set_name(bn.name());
  bias_add.set_op("BiasAdd");
  bias_add.set_device(bn.device());
  bias_add.add_input(conv->name());
  bias_add.add_input(bias_node->name());
  for (const std::string& c : controls) bias_add.add_input(c);
  (*bias_add.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
  (*bias_add.mutable_attr())["data_format"].set_s(data_format == "NCHW" ? "NCHW" : "NHWC");
  index.ReplaceNode(bn, std::move(bias_add));
  index.AddNode(*std::move(filter_node));
  index.AddNode(*std::move(bias_node));
  return true;
}


// Add(x, b) where x is a MatMul or NHWC convolution read by nothing else
// and b a constant vector of its output channels is BiasAdd(x, b), exactly
// (TensorFlow graphs often write the bias as an Add): rewritten so that
// the fusions below apply.
bool BiasAddFromAdd(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& add) {
  if (add.op() != "Add" && add.op() != "AddV2") return false;
  std::vector<std::string> in = DataInputs(add);
  if (in.size() != 2 || ctx.protected_nodes.count(add.name()) > 0) return false;
  for (int side = 0; side < 2; ++side) {
    tf::NodeDef* producer = index.Find(ParseInput(in[side]).node);
    tf::NodeDef* consumer = nullptr;
    if (producer != nullptr && producer->op() == "BiasAdd" && ParseInput(in[side]).index == 0) {
      if (MergeIntoBiasAdd(ctx, index, names, add, *producer, in[1 - side])) return true;
      continue;
    }
    if (producer == nullptr || ParseInput(in[side]).index != 0 ||
        (producer->op() != "MatMul" && producer->op() != "Conv2D" && producer->op() != "DepthwiseConv2dNative") ||
        !SoleConsumer(index, ctx, *producer, &consumer) || consumer != &add ||
        ctx.fed.count(EndpointKey(producer->name(), 0)) > 0) {
      continue;
    }
    std::optional<Tensor> bias = ConstOf(index, ctx, in[1 - side]);
    const int64_t channels = OutputChannels(index, ctx, *producer);
    // [C], or [1, ..., 1, C] of no higher rank than the output (Keras
    // writes batch norm's offset that way for some layers).
    const int64_t out_rank = producer->op() == "MatMul" ? 2 : 4;
    if (!bias || bias->dims() < 1 || bias->dims() > out_rank || channels < 0 ||
        bias->num_elements() != channels || bias->shape().back() != channels ||
        bias->dtype() != TypeAttr(*producer, "T")) {
      continue;
    }
    std::string bias_input = in[1 - side];
    if (bias->dims() != 1) {
      Tensor flat = Tensor::AllocateHost(bias->dtype(), {channels}).value();
      std::memcpy(flat.raw_data(), bias->raw_data(), flat.nbytes());
      auto flat_node = MakeConst(names.Unique(absl::StrCat(add.name(), "/bias")), flat, add.device());
      if (!flat_node.ok()) return false;
      bias_input = flat_node->name();
      index.AddNode(*std::move(flat_node));
    }
    tf::NodeDef bias_add = add;
    bias_add.set_op("BiasAdd");
    bias_add.clear_input();
    bias_add.add_input(in[side]);
    bias_add.add_input(bias_input);
    for (const std::string& c : ControlInputs(add)) bias_add.add_input(c);
    (*bias_add.mutable_attr())["data_format"].set_s("NHWC");
    index.ReplaceNode(add, std::move(bias_add));
    return true;
  }
  return false;
}

// MatMul/Conv2D/DepthwiseConv2dNative -> BiasAdd (-> activation) into one
// fused node.
bool FuseBiasAdd(const PassContext& ctx, NodeIndex& index, tf::NodeDef& bias_add) {
  if (bias_add.op() != "BiasAdd") return false;
  std::vector<std::string> in = DataInputs(bias_add);
  if (in.size() != 2) return false;
  tf::NodeDef* producer = index.Find(ParseInput(in[0]).node);
  tf::NodeDef* consumer = nullptr;
  if (producer == nullptr || ParseInput(in[0]).index != 0 ||
      (producer->op() != "MatMul" && producer->op() != "Conv2D" &&
       producer->op() != "DepthwiseConv2dNative") ||
      !SoleConsumer(index, ctx, *producer, &consumer) || consumer != &bias_add) {
    return false;
  }
  DataType t = TypeAttr(bias_add, "T");
  const bool matmul = producer->op() == "MatMul";
  const std::string fused_op = matmul                        ? "_FusedMatMul"
                               : producer->op() == "Conv2D" ? "_FusedConv2D"
                                                            : "_FusedDepthwiseConv2dNative";
  if (!DeviceHasKernel(ctx, fused_op, t)) return false;
  std::string bias_format = "NHWC";
  if (auto it = bias_add.attr().find("data_format"); it != bias_add.attr().end()) bias_format = it->second.s();
  if (!matmul) {
    std::string conv_format = "NHWC";
    if (auto it = producer->attr().find("data_format"); it != producer->attr().end()) conv_format = it->second.s();
    if (conv_format != bias_format) return false;
  }
  // An activation that is the BiasAdd's only reader joins the fusion.
  tf::NodeDef* act = FusableActivationAfter(index, ctx, bias_add, t);
  tf::NodeDef* last = act != nullptr ? act : &bias_add;
  if (ctx.fed.count(EndpointKey(producer->name(), 0)) > 0) return false;

  tf::NodeDef fused;
  fused.set_name(last->name());
  fused.set_op(fused_op);
  fused.set_device(last->device());
  std::vector<std::string> producer_in = DataInputs(*producer);
  fused.add_input(producer_in[0]);
  fused.add_input(producer_in[1]);
  fused.add_input(in[1]);
  AddControlInputsOf({producer, &bias_add, act}, fused);
  auto& attr = *fused.mutable_attr();
  for (const auto& [name, value] : producer->attr()) attr[name] = value;
  attr["T"].set_type(static_cast<tf::DataType>(t));
  attr["num_args"].set_i(1);
  attr["fused_ops"].mutable_list()->add_s("BiasAdd");
  AddFusedActivation(act, fused);
  index.ReplaceNode(*last, std::move(fused));
  return true;
}

}  // namespace

// atrous.cc: SpaceToBatchND -> convolution -> BatchToSpaceND into one
// dilated convolution; returns how many were rewritten.
int RewriteAtrousConvolutions(tf::GraphDef& def, const PassContext& ctx, NodeIndex& index);
// conv_add.cc: residual Adds (and their activations) into the convolution
// before them; returns how many were fused.
int FuseConvAdds(tf::GraphDef& def, const PassContext& ctx, NodeIndex& index);

absl::StatusOr<bool> FuseOps(tf::GraphDef& def, const PassContext& ctx) {
  int folded = 0, fused = 0;
  // One index for the whole pass, kept current by every rewrite (no
  // rebuild per fusion). Batch norms first: each fold leaves a BiasAdd that
  // the next loop fuses.
  NodeIndex index(def);
  // Atrous convolutions first, so the dilated Conv2D fuses below.
  const int atrous = RewriteAtrousConvolutions(def, ctx, index);
  int pads = 0, scaled = 0;
  {
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) {
      if (FoldPadIntoConv(ctx, index, *def.mutable_node(i))) ++pads;
    }
  }
  {
    NameSet names(def);
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) {
      if (FoldChannelScale(ctx, index, names, *def.mutable_node(i))) ++scaled;
    }
  }
  {
    NameSet names(def);
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) BiasAddFromAdd(ctx, index, names, *def.mutable_node(i));
  }
  {
    NameSet names(def);
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) {
      if (FoldBatchNorm(ctx, index, names, *def.mutable_node(i))) ++folded;
    }
  }
  {
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) {
      if (FuseBiasAdd(ctx, index, *def.mutable_node(i))) ++fused;
    }
  }
  // After the fusions above, in this same pass: the elementwise fusion
  // that follows would otherwise take the Add and its activation.
  const int adds = FuseConvAdds(def, ctx, index);
  if (atrous + pads + scaled + folded + fused + adds == 0) return false;
  if (ctx.log) {
    ctx.log->push_back(absl::StrCat("fuse: ", atrous, " atrous convolutions made dilated, ", pads,
                                    " zero pads folded into convolutions, ", scaled,
                                    " per-channel products folded into filters, ", folded,
                                    " batch norms folded into convolutions, ", fused,
                                    " MatMul/Conv2D/DepthwiseConv2dNative + BiasAdd (+ activation) fused, ", adds,
                                    " residual adds fused into convolutions"));
  }
  return true;
}

}  // namespace plexus::opt
