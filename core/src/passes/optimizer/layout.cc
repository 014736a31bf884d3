// Layout: rewrites 4-D image ops to the data layout the session device's
// plugin prefers (PX_DeviceInfo.preferred_layout, NHWC or NCHW; nothing is
// done for PX_LAYOUT_ANY). A graph exported for GPUs is often NCHW
// throughout, while the cpu plugin's kernels work channels-last and would
// transpose inside every kernel.
//
// 1. Every Conv2D, DepthwiseConv2dNative, _FusedConv2D, MaxPool, AvgPool,
//    BiasAdd (of a known 4-D input) and inference FusedBatchNorm (V1-V3) in
//    the other layout gets its data_format flipped, its per-dimension
//    attributes (strides, dilations, ksize, explicit_paddings) permuted, a
//    Transpose on its image input and a Transpose back on its image output
//    when anything reads it. Filters need none: Conv2D's and the depthwise
//    filter are HWIO-style in both layouts, and biases, batch-norm
//    parameters and statistics are 1-D.
// 2. A Transpose that reads a Transpose this pass made, when the two undo
//    each other, is bypassed (the inner one is not left for arithmetic:
//    "fuse" runs next and needs Conv2D -> BiasAdd adjacent).
// 3. A Transpose this pass made is moved below the elementwise op reading
//    it (unary ops such as Relu or Tanh, and binary ops whose other operand
//    has one element or is a Transpose by the same permutation), so that
//    Conv -> Relu -> MaxPool keeps one Transpose at the entry and one at
//    the exit. Then step 2 runs again, until nothing changes.
// Transposes only move values, so results are exactly those of the graph
// as written. Nodes named by the signature, nodes with a fed output, nodes
// inside TensorFlow 1 control flow and nodes pinned to another existing
// device are left alone (a pinned node keeps its layout: its device may
// prefer it).
#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/device.h"
#include "plexus/runtime.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

// The device's declared layout: PX_LAYOUT_NHWC, PX_LAYOUT_NCHW, or
// PX_LAYOUT_ANY (no device, a struct too short to hold the field, or a value
// this host does not know).
int32_t PreferredLayout(const Device* device) {
  if (device == nullptr) return PX_LAYOUT_ANY;
  const PX_DeviceInfo& info = device->info();
  if (!PX_STRUCT_HAS(&info, PX_DeviceInfo, preferred_layout)) return PX_LAYOUT_ANY;
  const int32_t layout = info.preferred_layout;
  return layout == PX_LAYOUT_NHWC || layout == PX_LAYOUT_NCHW ? layout : PX_LAYOUT_ANY;
}

bool IsLayoutOp(const std::string& op) {
  static const std::set<std::string> kOps = {"Conv2D",  "DepthwiseConv2dNative", "_FusedConv2D",
                                             "MaxPool", "AvgPool",               "BiasAdd",
                                             "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"};
  return kOps.count(op) > 0;
}

// Elementwise ops whose output element i depends only on input element i,
// so they commute with a Transpose. Each has one type attribute "T" that is
// also its output type.
bool IsUnaryElementwise(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Sigmoid", "Tanh", "Identity", "Neg", "Abs", "Exp", "Log",
      "Log1p", "Expm1", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Softplus", "Softsign", "Sign", "Floor",
      "Ceil", "Round", "Erf", "Sin", "Cos"};
  return kOps.count(op) > 0;
}
bool IsBinaryElementwise(const std::string& op) {
  static const std::set<std::string> kOps = {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum",
                                             "Minimum", "SquaredDifference", "Pow"};
  return kOps.count(op) > 0;
}

std::string DataFormat(const tf::NodeDef& n) {
  auto it = n.attr().find("data_format");
  return it == n.attr().end() ? "NHWC" : it->second.s();
}

std::vector<std::string> DataInputs(const tf::NodeDef& n) {
  std::vector<std::string> v;
  for (const std::string& in : n.input()) {
    if (!ParseInput(in).control) v.push_back(in);
  }
  return v;
}

bool AnyOutputFed(const tf::NodeDef& n, const PassContext& ctx) {
  const std::string prefix = absl::StrCat(n.name(), ":");
  auto it = ctx.fed.lower_bound(prefix);
  return it != ctx.fed.end() && absl::StartsWith(*it, prefix);
}

// True when `n` asks for a device of this runtime other than the session's
// (the executor honours such a request; that device may want the layout
// as it is). A request naming no device here falls back to the session's
// device, so the node is rewritten like any other.
bool PinnedElsewhere(const tf::NodeDef& n, const NodeIndex& index, const PassContext& ctx) {
  std::string request = n.device();
  if (request.empty()) {
    // Colocated with another node ("loc:@NAME" in _class): that node's device.
    auto cls = n.attr().find("_class");
    if (cls != n.attr().end()) {
      for (const std::string& s : cls->second.list().s()) {
        if (!absl::StartsWith(s, "loc:@")) continue;
        const tf::NodeDef* other = index.Find(s.substr(5));
        if (other != nullptr && !other->device().empty()) request = other->device();
      }
    }
  }
  if (request.empty()) return false;
  auto spec = ParseDeviceSpec(request);
  if (!spec.ok()) return true;  // unreadable: leave it as it is
  if (spec->type.empty()) return false;
  if (ctx.device != nullptr && absl::AsciiStrToUpper(ctx.device->type()) == spec->type &&
      (spec->ordinal < 0 || spec->ordinal == ctx.device->ordinal())) {
    return false;
  }
  if (ctx.runtime == nullptr) return true;
  return ctx.runtime->FindDevice(*spec) != nullptr;
}

// list(int) attribute `name` given per dimension (4 values) or per
// dimension pair (8 values, explicit_paddings) in the old layout's order,
// rewritten in the new order: new dimension i is old dimension perm[i].
// False when the list has an unexpected length (the node is left alone).
bool PermuteDims(tf::NodeDef& n, const std::string& name, const std::vector<int>& perm, bool pairs, bool dry_run) {
  auto it = n.mutable_attr()->find(name);
  if (it == n.mutable_attr()->end()) return true;
  auto* list = it->second.mutable_list();
  const int size = list->i_size();
  if (size == 0 && (pairs || name == "dilations")) return true;  // the defaults: nothing given
  if (size != (pairs ? 8 : 4)) return false;
  if (dry_run) return true;
  std::vector<int64_t> old(list->i().begin(), list->i().end());
  for (int i = 0; i < 4; ++i) {
    if (pairs) {
      list->set_i(2 * i, old[2 * perm[i]]);
      list->set_i(2 * i + 1, old[2 * perm[i] + 1]);
    } else {
      list->set_i(i, old[perm[i]]);
    }
  }
  return true;
}

bool PermuteAttrs(tf::NodeDef& n, const std::vector<int>& perm, bool dry_run) {
  return PermuteDims(n, "strides", perm, false, dry_run) && PermuteDims(n, "dilations", perm, false, dry_run) &&
         PermuteDims(n, "ksize", perm, false, dry_run) && PermuteDims(n, "explicit_paddings", perm, true, dry_run);
}

// The permutation of a Transpose node whose perm is a Const, or nullopt.
std::optional<std::vector<int64_t>> PermOf(const tf::NodeDef& transpose, const NodeIndex& index,
                                           const PassContext& ctx) {
  if (transpose.op() != "Transpose") return std::nullopt;
  std::vector<std::string> in = DataInputs(transpose);
  if (in.size() != 2) return std::nullopt;
  InputRef ref = ParseInput(in[1]);
  const tf::NodeDef* c = index.Find(ref.node);
  if (c == nullptr || c->op() != "Const" || ref.index != 0 || ctx.fed.count(EndpointKey(c->name(), 0)) > 0) {
    return std::nullopt;
  }
  for (const std::string& i : c->input()) {
    if (ParseInput(i).control) return std::nullopt;
  }
  auto it = c->attr().find("value");
  if (it == c->attr().end()) return std::nullopt;
  auto t = TensorFromProto(it->second.tensor());
  if (!t.ok() || t->dims() != 1) return std::nullopt;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    if (t->dtype() == DataType::kInt32) {
      perm.push_back(t->data<int32_t>()[i]);
    } else if (t->dtype() == DataType::kInt64) {
      perm.push_back(t->data<int64_t>()[i]);
    } else {
      return std::nullopt;
    }
  }
  return perm;
}

class LayoutRewriter {
 public:
  LayoutRewriter(tf::GraphDef& def, const PassContext& ctx, int32_t layout)
      : def_(def), ctx_(ctx), target_(layout == PX_LAYOUT_NHWC ? "NHWC" : "NCHW"),
        source_(layout == PX_LAYOUT_NHWC ? "NCHW" : "NHWC") {
    // Transpose(x, p): output dimension i is input dimension p[i].
    to_target_ = layout == PX_LAYOUT_NHWC ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 3, 1, 2};
    to_source_ = layout == PX_LAYOUT_NHWC ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{0, 2, 3, 1};
    for (const tf::NodeDef& n : def_.node()) used_.insert(n.name());
  }

  absl::StatusOr<bool> Run() {
    bool any = false;
    for (const tf::NodeDef& n : def_.node()) any |= IsLayoutOp(n.op()) && DataFormat(n) == source_;
    if (!any) return false;  // the common case, cheaply
    auto graph = ImportGraphDef(def_, ctx_.source);
    if (!graph.ok()) return graph.status();
    graph_ = graph->get();
    const std::set<std::string> control_flow = UnderControlFlow(def_);

    // 1. Flip the layout ops.
    std::vector<tf::NodeDef*> convert;
    {
      NodeIndex index(def_);
      for (tf::NodeDef& n : *def_.mutable_node()) {
        if (Convertible(n, index, control_flow)) convert.push_back(&n);
      }
    }
    if (convert.empty()) return false;
    std::map<std::string, std::string> out_transpose;  // converted node -> its Transpose back
    {
      NodeIndex index(def_);
      for (tf::NodeDef* n : convert) {
        bool read = false;
        for (const auto& [consumer, pos] : index.DataConsumers(n->name())) {
          read |= ParseInput(consumer->input(pos)).index == 0;
        }
        if (read) out_transpose[n->name()] = "";
      }
    }
    for (tf::NodeDef* n : convert) {
      const DataType t = TypeAttr(*n, "T");
      const std::string device = n->device();
      const std::string name = n->name();
      const std::string input = n->input(0);
      PermuteAttrs(*n, to_target_, /*dry_run=*/false);
      (*n->mutable_attr())["data_format"].set_s(target_);
      std::string in_name = AddTranspose(absl::StrCat(name, "/to_", absl::AsciiStrToLower(target_)), input,
                                         to_target_, t, device);
      n->set_input(0, in_name);
      if (out_transpose.count(name) > 0) {
        out_transpose[name] = AddTranspose(absl::StrCat(name, "/to_", absl::AsciiStrToLower(source_)), name,
                                           to_source_, t, device);
      }
    }
    // Readers of a converted node's output 0 (including the new input
    // Transposes of converted nodes) read its Transpose back instead.
    std::set<std::string> outs;
    for (const auto& [node, transpose] : out_transpose) outs.insert(transpose);
    for (tf::NodeDef& n : *def_.mutable_node()) {
      if (outs.count(n.name()) > 0) continue;
      for (int i = 0; i < n.input_size(); ++i) {
        InputRef ref = ParseInput(n.input(i));
        if (ref.control || ref.index != 0) continue;
        auto it = out_transpose.find(ref.node);
        if (it != out_transpose.end()) n.set_input(i, it->second);
      }
    }

    // 2 and 3 until nothing changes (each step removes a Transpose or moves
    // one further down a DAG, so this ends; the bound is a safety net).
    int cancelled = 0, moved = 0;
    for (int round = 0; round < 4 * def_.node_size() + 16; ++round) {
      int c = CancelPairs();
      cancelled += c;
      int m = SinkThroughElementwise(control_flow);
      moved += m;
      if (c == 0 && m == 0) break;
    }
    RemoveUnused();
    int left = 0;
    for (const tf::NodeDef& n : def_.node()) left += created_.count(n.name()) > 0 && n.op() == "Transpose";
    if (ctx_.log) {
      ctx_.log->push_back(absl::StrCat("layout: ", convert.size(), " ops from ", source_, " to ", target_,
                                       " (the device's preferred layout); ", cancelled,
                                       " transpose pairs cancelled, ", moved,
                                       " moved through elementwise ops, ", left, " transposes added"));
    }
    return true;
  }

 private:
  bool Convertible(tf::NodeDef& n, const NodeIndex& index, const std::set<std::string>& control_flow) {
    if (!IsLayoutOp(n.op()) || DataFormat(n) != source_) return false;
    if (ctx_.protected_nodes.count(n.name()) > 0 || AnyOutputFed(n, ctx_)) return false;
    if (control_flow.count(n.name()) > 0 || PinnedElsewhere(n, index, ctx_)) return false;
    if (n.input_size() == 0 || ParseInput(n.input(0)).control) return false;
    if (TypeAttr(n, "T") == DataType::kInvalid) return false;
    const Node* node = graph_->FindNode(n.name());
    if (node == nullptr || node->inputs.empty()) return false;
    const PartialShape& x = node->inputs[0].node->output_shapes[node->inputs[0].index];
    if (x.rank_known() && x.rank() != 4) return false;
    if (n.op() == "BiasAdd" && !x.rank_known()) return false;  // NCHW BiasAdd of rank 3 means something else
    if (absl::StartsWith(n.op(), "FusedBatchNorm")) {
      auto training = n.attr().find("is_training");
      if (training == n.attr().end() || training->second.b()) return false;
    }
    if (n.op() == "_FusedConv2D") {
      // Only per-channel arguments (a bias, batch-norm parameters).
      for (size_t i = 2; i < node->inputs.size(); ++i) {
        const PartialShape& a = node->inputs[i].node->output_shapes[node->inputs[i].index];
        if (!a.rank_known() || a.rank() != 1) return false;
      }
    }
    return PermuteAttrs(n, to_target_, /*dry_run=*/true);
  }

  std::string Unique(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name) > 0; ++i) name = absl::StrCat(base, "_", i);
    used_.insert(name);
    return name;
  }

  // The Const holding `perm` (made once per run of the pass).
  std::string PermConst(const std::vector<int>& perm) {
    std::string& name = perm == to_target_ ? target_perm_ : source_perm_;
    if (!name.empty()) return name;
    name = Unique(absl::StrCat("layout/perm_to_", absl::AsciiStrToLower(perm == to_target_ ? target_ : source_)));
    Tensor value = Tensor::FromVector<int32_t>(DataType::kInt32, {4}, {perm[0], perm[1], perm[2], perm[3]});
    tf::NodeDef c = *MakeConst(name, value, "");
    *def_.add_node() = std::move(c);
    created_.insert(name);
    return name;
  }

  std::string AddTranspose(const std::string& base, const std::string& input, const std::vector<int>& perm,
                           DataType t, const std::string& device) {
    const std::string perm_name = PermConst(perm);
    tf::NodeDef n;
    n.set_name(Unique(base));
    n.set_op("Transpose");
    n.set_device(device);
    n.add_input(input);
    n.add_input(perm_name);
    (*n.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
    (*n.mutable_attr())["Tperm"].set_type(tf::DT_INT32);
    created_.insert(n.name());
    std::string name = n.name();
    *def_.add_node() = std::move(n);
    return name;
  }

  // A Transpose this pass made, read as output 0 through `input`, that may
  // be rewired or moved: no control edges, not named by the signature, not
  // fed.
  tf::NodeDef* OurTranspose(const std::string& input, const NodeIndex& index) const {
    InputRef ref = ParseInput(input);
    if (ref.control || ref.index != 0 || created_.count(ref.node) == 0) return nullptr;
    tf::NodeDef* n = index.Find(ref.node);
    if (n == nullptr || n->op() != "Transpose" || ctx_.protected_nodes.count(n->name()) > 0 ||
        ctx_.fed.count(EndpointKey(n->name(), 0)) > 0 || DataInputs(*n).size() != static_cast<size_t>(n->input_size())) {
      return nullptr;
    }
    return n;
  }

  // Transpose(Transpose(x, p), q) with q undoing p: readers of the outer one
  // read x. Returns how many outer Transposes were bypassed.
  int CancelPairs() {
    NodeIndex index(def_);  // kept current by its RewireOutputs
    int count = 0;
    std::set<std::string> bypassed;
    for (tf::NodeDef& outer : *def_.mutable_node()) {
      if (outer.op() != "Transpose" || bypassed.count(outer.name()) > 0) continue;
      std::vector<std::string> in = DataInputs(outer);
      if (in.size() != 2 || in.size() != static_cast<size_t>(outer.input_size())) continue;
      if (ctx_.protected_nodes.count(outer.name()) > 0 || ctx_.fed.count(EndpointKey(outer.name(), 0)) > 0) continue;
      tf::NodeDef* inner = OurTranspose(in[0], index);
      if (inner == nullptr && created_.count(outer.name()) == 0) continue;  // at least one is ours
      if (inner == nullptr) {
        InputRef ref = ParseInput(in[0]);
        inner = index.Find(ref.node);
        if (inner == nullptr || inner->op() != "Transpose" || ref.index != 0 ||
            ctx_.fed.count(EndpointKey(inner->name(), 0)) > 0) {
          continue;
        }
      }
      auto p = PermOf(*inner, index, ctx_), q = PermOf(outer, index, ctx_);
      if (!p || !q || p->size() != q->size()) continue;
      bool undone = true;
      for (size_t i = 0; i < q->size() && undone; ++i) {
        undone = (*q)[i] >= 0 && (*q)[i] < static_cast<int64_t>(p->size()) && (*p)[(*q)[i]] == static_cast<int64_t>(i);
      }
      if (!undone) continue;
      std::vector<std::string> inner_in = DataInputs(*inner);
      if (inner_in.size() != 2) continue;
      if (index.RewireOutputs(outer.name(), 0, inner_in[0]) > 0) {
        bypassed.insert(outer.name());
        ++count;
      }
    }
    return count;
  }

  // Elementwise U reading Transposes this pass made (all by the same
  // permutation p, each read by U alone) and otherwise only one-element
  // operands: U reads the Transposes' inputs, and one Transpose by p moves
  // to U's output. Returns how many ops were crossed.
  int SinkThroughElementwise(const std::set<std::string>& control_flow) {
    int count = 0;
    NodeIndex index(def_);
    for (int k = 0; k < def_.node_size(); ++k) {
      tf::NodeDef& u = *def_.mutable_node(k);
      const bool unary = IsUnaryElementwise(u.op()), binary = IsBinaryElementwise(u.op());
      if (!unary && !binary) continue;
      std::vector<std::string> in = DataInputs(u);
      if (in.size() != (unary ? 1u : 2u)) continue;
      if (ctx_.protected_nodes.count(u.name()) > 0 || AnyOutputFed(u, ctx_)) continue;
      if (control_flow.count(u.name()) > 0 || PinnedElsewhere(u, index, ctx_)) continue;
      if (TypeAttr(u, "T") == DataType::kInvalid || index.DataConsumers(u.name()).empty()) continue;
      std::vector<tf::NodeDef*> transposes;  // by data input position, or null
      std::optional<std::vector<int64_t>> perm;
      bool ok = true;
      for (const std::string& i : in) {
        tf::NodeDef* t = OurTranspose(i, index);
        if (t == nullptr) {
          ok &= OneElement(i);
          transposes.push_back(nullptr);
          continue;
        }
        auto p = PermOf(*t, index, ctx_);
        ok &= p.has_value() && (!perm || *perm == *p);
        if (p) perm = p;
        // Read by U alone.
        ok &= index.ControlConsumers(t->name()).empty();
        for (const auto& [consumer, pos] : index.DataConsumers(t->name())) ok &= consumer == &u;
        transposes.push_back(t);
      }
      if (!ok || !perm) continue;
      tf::NodeDef* keep = nullptr;
      for (size_t i = 0; i < in.size(); ++i) {
        if (transposes[i] == nullptr) continue;
        index.SetInput(u, static_cast<int>(i), DataInputs(*transposes[i])[0]);
        if (keep == nullptr) keep = transposes[i];
      }
      // U's readers read the kept Transpose, which now reads U.
      const std::set<std::string> skip = {keep->name()};
      index.RewireOutputs(u.name(), 0, keep->name(), &skip);
      index.SetInput(*keep, 0, u.name());
      keep->set_device(u.device());
      (*keep->mutable_attr())["T"] = u.attr().at("T");
      ++count;  // the index is current: no rebuild
    }
    return count;
  }

  // An operand with one element (any rank up to 4): broadcasting it gives
  // the same result in either layout.
  bool OneElement(const std::string& input) const {
    InputRef ref = ParseInput(input);
    const Node* producer = graph_->FindNode(ref.node);
    if (producer == nullptr || ref.index < 0 || ref.index >= static_cast<int>(producer->output_shapes.size())) {
      return false;
    }
    const PartialShape& s = producer->output_shapes[ref.index];
    if (!s.fully_defined() || s.rank() > 4) return false;
    for (int64_t d : s.dims()) {
      if (d != 1) return false;
    }
    return true;
  }

  // Removes what this pass made that nothing reads any more.
  void RemoveUnused() {
    for (;;) {
      NodeIndex index(def_);
      std::set<std::string> dead;
      for (const tf::NodeDef& n : def_.node()) {
        if (created_.count(n.name()) > 0 && !index.HasConsumers(n.name()) &&
            ctx_.protected_nodes.count(n.name()) == 0) {
          dead.insert(n.name());
        }
      }
      if (dead.empty()) return;
      RemoveNodes(def_, dead);
      for (const std::string& d : dead) created_.erase(d);
    }
  }

  tf::GraphDef& def_;
  const PassContext& ctx_;
  const std::string target_, source_;
  std::vector<int> to_target_, to_source_;
  std::string target_perm_, source_perm_;
  std::set<std::string> used_;
  std::set<std::string> created_;
  const Graph* graph_ = nullptr;
};

}  // namespace

absl::StatusOr<bool> OptimizeLayout(tf::GraphDef& def, const PassContext& ctx) {
  const int32_t layout = PreferredLayout(ctx.device.get());
  if (layout == PX_LAYOUT_ANY) return false;
  return LayoutRewriter(def, ctx, layout).Run();
}

}  // namespace plexus::opt
