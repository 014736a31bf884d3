// Marks the weights a kernel may prepare once: for the ops whose kernels
// convert a weight into their own layout (convolutions and products), the
// positions of the data inputs that a Const node produces and no feed
// replaces are listed in the attribute `_plexus_const_inputs` (list(int)).
// Such an input has the same contents on every run of the executor built
// from this graph, so a kernel may reorder it once and keep the result
// instead of checking on every run that it is unchanged (the cpu plugin's
// oneDNN convolutions compared the whole filter with memcmp each run, which
// read ResNet50's 94 MB of filters twice per inference). The attribute is
// a promise about this graph only: each run signature is optimized and
// marked on its own, and a kernel that ignores it loses nothing.
#include <set>
#include <string>
#include <vector>

#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"

namespace plexus::opt {
namespace {

const std::set<std::string>& WeightOps() {
  static const std::set<std::string> kOps = {
      "Conv2D", "_FusedConv2D", "_PlexusFusedConv2DAdd", "DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative",
      "Conv3D", "MatMul", "_FusedMatMul"};
  return kOps;
}

bool IsConstantInput(const NodeIndex& index, const PassContext& ctx, const std::string& input) {
  const InputRef ref = ParseInput(input);
  if (ref.control || ref.index != 0) return false;
  const tf::NodeDef* n = index.Find(ref.node);
  return n != nullptr && n->op() == "Const" && ctx.fed.count(EndpointKey(n->name(), 0)) == 0;
}

}  // namespace

absl::StatusOr<bool> MarkConstantInputs(tf::GraphDef& def, const PassContext& ctx) {
  NodeIndex index(def);
  int marked = 0;
  for (tf::NodeDef& node : *def.mutable_node()) {
    if (WeightOps().count(node.op()) == 0) continue;
    std::vector<int64_t> positions;
    int data_position = 0;
    for (const std::string& input : node.input()) {
      if (ParseInput(input).control) continue;
      if (IsConstantInput(index, ctx, input)) positions.push_back(data_position);
      ++data_position;
    }
    auto& attrs = *node.mutable_attr();
    auto it = attrs.find("_plexus_const_inputs");
    std::vector<int64_t> old;
    if (it != attrs.end()) old.assign(it->second.list().i().begin(), it->second.list().i().end());
    if (old == positions) continue;
    if (positions.empty()) {
      attrs.erase("_plexus_const_inputs");
    } else {
      auto* list = attrs["_plexus_const_inputs"].mutable_list();
      list->clear_i();
      for (int64_t p : positions) list->add_i(p);
    }
    ++marked;
  }
  if (marked > 0 && ctx.log != nullptr) {
    ctx.log->push_back(std::to_string(marked) + " convolutions and products told which weights are constant");
  }
  return marked > 0;
}

}  // namespace plexus::opt
