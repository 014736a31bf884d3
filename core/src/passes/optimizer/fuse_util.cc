// Helpers shared by the fusion passes (fuse_util.h).
#include "passes/optimizer/fuse_util.h"

#include <algorithm>

#include "plexus/device.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {

tf::NodeDef* FusableActivationAfter(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& n,
                                    DataType t) {
  static const std::set<std::string> kOps = {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
  tf::NodeDef* act = nullptr;
  if (!SoleConsumer(index, ctx, n, &act) || kOps.count(act->op()) == 0 || TypeAttr(*act, "T") != t ||
      DataInputs(*act).size() != 1 || ctx.fed.count(EndpointKey(n.name(), 0)) > 0) {
    return nullptr;
  }
  return act;
}

void AddControlInputsOf(std::initializer_list<const tf::NodeDef*> nodes, tf::NodeDef& fused) {
  std::set<std::string> controls;
  for (const tf::NodeDef* n : nodes) {
    if (n == nullptr) continue;
    for (const std::string& c : ControlInputs(*n)) controls.insert(c);
  }
  for (const std::string& c : controls) fused.add_input(c);
}

void AddFusedActivation(const tf::NodeDef* act, tf::NodeDef& fused) {
  if (act == nullptr) return;
  auto& attr = *fused.mutable_attr();
  attr["fused_ops"].mutable_list()->add_s(act->op());
  if (act->op() == "LeakyRelu") {
    auto alpha = act->attr().find("alpha");
    attr["leakyrelu_alpha"].set_f(alpha == act->attr().end() ? 0.2f : alpha->second.f());
  }
}

// True when the session's device has a kernel for `op` accepting `dtype`.
bool DeviceHasKernel(const PassContext& ctx, const std::string& op, DataType dtype) {
  if (ctx.device == nullptr || OpRegistry::Global().Find(op) == nullptr) return false;
  for (const KernelRegistration* k : ctx.device->plugin().kernels().ForOp(op)) {
    bool ok = true;
    for (const auto& [attr, allowed] : k->type_constraints) {
      if (attr == "T") ok &= std::find(allowed.begin(), allowed.end(), dtype) != allowed.end();
    }
    if (ok) return true;
  }
  return false;
}

const PartialShape* InferredShape(const Graph& graph, const std::set<std::string>& tainted, const std::string& input) {
  const InputRef ref = ParseInput(input);
  const Node* node = graph.FindNode(ref.node);
  if (node == nullptr || tainted.count(ref.node) > 0 || ref.index >= static_cast<int>(node->output_shapes.size())) {
    return nullptr;
  }
  return &node->output_shapes[ref.index];
}

std::vector<std::string> DataInputs(const tf::NodeDef& n) {
  std::vector<std::string> v;
  for (const std::string& in : n.input()) {
    if (!ParseInput(in).control) v.push_back(in);
  }
  return v;
}

std::vector<std::string> ControlInputs(const tf::NodeDef& n) {
  std::vector<std::string> v;
  for (const std::string& in : n.input()) {
    if (ParseInput(in).control) v.push_back(in);
  }
  return v;
}

// `n` feeds exactly one data input of one node and nothing else, and the
// signature does not name it.
bool SoleConsumer(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& n, tf::NodeDef** consumer) {
  if (ctx.protected_nodes.count(n.name()) > 0) return false;
  const auto& data = index.DataConsumers(n.name());
  if (data.size() != 1 || !index.ControlConsumers(n.name()).empty()) return false;
  if (ParseInput(data[0].first->input(data[0].second)).index != 0) return false;
  *consumer = data[0].first;
  return true;
}

std::optional<Tensor> ConstOf(const NodeIndex& index, const PassContext& ctx, const std::string& input) {
  InputRef ref = ParseInput(input);
  const tf::NodeDef* n = index.Find(ref.node);
  if (n == nullptr || n->op() != "Const" || ref.index != 0 || !ControlInputs(*n).empty()) return std::nullopt;
  if (ctx.fed.count(EndpointKey(n->name(), 0)) > 0) return std::nullopt;  // fed: not constant
  auto t = TensorFromProto(n->attr().at("value").tensor());
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

double At(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kDouble ? t.data<double>()[i] : t.data<float>()[i];
}
void Set(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DataType::kDouble) {
    t.data<double>()[i] = v;
  } else {
    t.data<float>()[i] = static_cast<float>(v);
  }
}

// Output channels of a MatMul or NHWC convolution, from its constant
// weights (-1 when they are not constant or the layout is not NHWC).
int64_t OutputChannels(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& producer) {
  std::vector<std::string> in = DataInputs(producer);
  if (in.size() != 2) return -1;
  std::optional<Tensor> w = ConstOf(index, ctx, in[1]);
  if (!w) return -1;
  const Shape& s = w->shape();
  auto attr = [&](const char* name) -> const tf::AttrValue* {
    auto it = producer.attr().find(name);
    return it == producer.attr().end() ? nullptr : &it->second;
  };
  if (producer.op() == "MatMul") {
    if (s.size() != 2) return -1;
    const tf::AttrValue* tb = attr("transpose_b");
    return tb != nullptr && tb->b() ? s[0] : s[1];
  }
  const tf::AttrValue* format = attr("data_format");
  if ((format != nullptr && format->s() != "NHWC") || s.size() != 4) return -1;
  return producer.op() == "Conv2D" ? s[3] : s[2] * s[3];
}

}  // namespace plexus::opt
