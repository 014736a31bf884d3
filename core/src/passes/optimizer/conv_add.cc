// The fuse pass's last step (fuse.cc): a residual connection's Add after a
// convolution, and the activation after the Add, join the convolution:
//
//   _FusedConv2D(x, f, args) [fused_ops: BiasAdd or FusedBatchNorm, no activation]
//     -> Add/AddV2(., r) [r of exactly the convolution's output shape]
//     -> optionally Relu, Relu6, Elu, LeakyRelu, Tanh or Sigmoid
//   =>  _PlexusFusedConv2DAdd(x, f, args, r) [fused_ops: the first, then the activation]
//
// ResNet-style blocks end so (Keras exports the block's last batch norm,
// the Add and the Relu). Only for float and NHWC, when the session's device
// has a kernel for _PlexusFusedConv2DAdd; the Add must not broadcast (its
// operands' shapes, as the importer inferred them, are equal and static).
// When both operands are such convolutions, the first one takes the Add.
#include <set>
#include <string>
#include <vector>

#include "passes/optimizer/fuse_util.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/graph_import.h"

namespace plexus::opt {
namespace {

// A _FusedConv2D that may take an Add: a per-channel step and no
// activation yet, NHWC with an HWIO filter, read only by `add`.
bool TakesAnAdd(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& conv,
                const tf::NodeDef& add) {
  if (conv.op() != "_FusedConv2D" || ctx.fed.count(EndpointKey(conv.name(), 0)) > 0) return false;
  auto ops = conv.attr().find("fused_ops");
  if (ops == conv.attr().end() || ops->second.list().s_size() != 1) return false;
  auto format = conv.attr().find("data_format");
  if (format != conv.attr().end() && format->second.s() != "NHWC") return false;
  auto filter_format = conv.attr().find("filter_format");
  if (filter_format != conv.attr().end() && filter_format->second.s() != "HWIO") return false;
  tf::NodeDef* consumer = nullptr;
  return SoleConsumer(index, ctx, conv, &consumer) && consumer == &add;
}

bool SameStaticShape(const PartialShape* a, const PartialShape* b) {
  return a != nullptr && b != nullptr && a->fully_defined() && b->fully_defined() && a->dims() == b->dims();
}

}  // namespace

int FuseConvAdds(tf::GraphDef& def, const PassContext& ctx, NodeIndex& index) {
  if (ctx.device == nullptr || !DeviceHasKernel(ctx, "_PlexusFusedConv2DAdd", DataType::kFloat)) return 0;
  // Only import the graph (for its shapes) when there is a candidate.
  bool any = false;
  for (const tf::NodeDef& n : def.node()) {
    if ((n.op() == "Add" || n.op() == "AddV2") && TypeAttr(n, "T") == DataType::kFloat) {
      for (const std::string& in : DataInputs(n)) {
        const tf::NodeDef* p = index.Find(ParseInput(in).node);
        any = any || (p != nullptr && p->op() == "_FusedConv2D");
      }
    }
  }
  if (!any) return 0;
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return 0;  // the shapes are unknown: leave the graph as it is
  const std::set<std::string> tainted = FeedTainted(def, ctx.fed);
  int fused = 0;
  const int n = def.node_size();
  for (int i = 0; i < n; ++i) {
    tf::NodeDef& add = *def.mutable_node(i);
    // (A fetched Add stays fetchable: the fused node takes its name when no
    // activation joins, and SoleConsumer keeps the activation out then.)
    if ((add.op() != "Add" && add.op() != "AddV2") || TypeAttr(add, "T") != DataType::kFloat) continue;
    const std::vector<std::string> in = DataInputs(add);
    if (in.size() != 2 || in[0] == in[1]) continue;
    tf::NodeDef* conv = nullptr;
    int side = 0;
    for (; side < 2; ++side) {
      tf::NodeDef* p = index.Find(ParseInput(in[side]).node);
      if (p != nullptr && ParseInput(in[side]).index == 0 && TakesAnAdd(index, ctx, *p, add)) {
        conv = p;
        break;
      }
    }
    if (conv == nullptr) continue;
    const std::string& addend = in[1 - side];
    const PartialShape* out = InferredShape(**graph, tainted, conv->name());
    if (!SameStaticShape(out, InferredShape(**graph, tainted, addend)) ||
        !SameStaticShape(out, InferredShape(**graph, tainted, add.name()))) {
      continue;
    }
    if (ctx.fed.count(EndpointKey(add.name(), 0)) > 0) continue;
    // An activation that is the Add's only reader joins too.
    tf::NodeDef* act = FusableActivationAfter(index, ctx, add, DataType::kFloat);
    tf::NodeDef* last = act != nullptr ? act : &add;

    tf::NodeDef fusedn;
    fusedn.set_name(last->name());
    fusedn.set_op("_PlexusFusedConv2DAdd");
    fusedn.set_device(last->device());
    for (const std::string& input : DataInputs(*conv)) fusedn.add_input(input);
    fusedn.add_input(addend);
    AddControlInputsOf({conv, &add, act}, fusedn);
    auto& attr = *fusedn.mutable_attr();
    for (const auto& [name, value] : conv->attr()) {
      if (name != "use_cudnn_on_gpu") attr[name] = value;
    }
    AddFusedActivation(act, fusedn);
    // The fused node takes the last node's place; the convolution (and the
    // Add, when an activation was last) lose their only reader and go.
    index.ReplaceNode(*last, std::move(fusedn));
    ++fused;
  }
  return fused;
}

}  // namespace plexus::opt
