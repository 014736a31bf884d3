// Common-subexpression elimination: two nodes with the same op, attributes,
// requested device and inputs (in order, or either order for commutative
// ops), and the same control inputs, compute the same value. Consumers of
// the later one read the earlier one instead. Stateful, control-flow and
// input-less placeholder-like nodes are never merged; a node the signature
// names is never the one dropped.
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"

namespace plexus::opt {
namespace {

bool Commutative(const std::string& op) {
  static const std::set<std::string> kOps = {"Add", "AddV2", "Mul", "Maximum", "Minimum", "LogicalAnd",
                                             "LogicalOr", "Equal", "NotEqual", "SquaredDifference"};
  return kOps.count(op) > 0;
}

// Attribute values larger than this (in serialized bytes), such as the
// tensor of a big Const, enter a signature as their size and a hash of their
// bytes instead of as text; nodes whose signatures match compare them in
// full (LargeAttrsEqual), so a hash collision never merges different values.
constexpr size_t kLargeAttrBytes = 256;

bool IsLarge(const tf::AttrValue& value) { return value.ByteSizeLong() > kLargeAttrBytes; }

// The bytes of an attribute value, the same for equal values.
std::string Serialize(const tf::AttrValue& value) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    value.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string Signature(const tf::NodeDef& n) {
  std::vector<std::string> data, control;
  for (const std::string& in : n.input()) {
    InputRef ref = ParseInput(in);
    if (ref.control) {
      control.push_back(ref.node);
    } else {
      data.push_back(EndpointKey(ref.node, ref.index));
    }
  }
  // String Add concatenates: its operands do not commute.
  const bool strings = n.attr().count("T") > 0 && n.attr().at("T").type() == tf::DT_STRING;
  if (Commutative(n.op()) && !strings && data.size() == 2 && data[1] < data[0]) std::swap(data[0], data[1]);
  std::sort(control.begin(), control.end());
  std::map<std::string, std::string> attrs;  // sorted by name
  for (const auto& [name, value] : n.attr()) {
    if (IsLarge(value)) {
      // Text never starts with '#' (it starts with a field name).
      const std::string bytes = Serialize(value);
      attrs[name] = absl::StrCat("#", bytes.size(), ":", std::hash<std::string>()(bytes));
    } else {
      attrs[name] = value.ShortDebugString();
    }
  }
  std::string sig = absl::StrCat(n.op(), "|", n.device(), "|", absl::StrJoin(data, ","), "|^",
                                 absl::StrJoin(control, ","), "|");
  for (const auto& [name, value] : attrs) absl::StrAppend(&sig, name, "=", value, ";");
  return sig;
}

// The large attribute values of two nodes with the same signature (so the
// same attribute names, and the same sizes and hashes) are equal byte for
// byte.
bool LargeAttrsEqual(const tf::NodeDef& a, const tf::NodeDef& b) {
  for (const auto& [name, value] : a.attr()) {
    if (!IsLarge(value)) continue;
    auto other = b.attr().find(name);
    if (other == b.attr().end() || Serialize(value) != Serialize(other->second)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> EliminateCommonSubexpressions(tf::GraphDef& def, const PassContext& ctx) {
  NodeIndex index(def);
  // Signature -> the nodes kept with it (more than one only when large
  // attribute values differ under an equal hash).
  std::unordered_map<std::string, std::vector<std::string>> representatives;
  std::unordered_map<std::string, std::string> replaced;  // node -> the node it now reads
  std::set<std::string> fed_nodes;
  for (const std::string& f : ctx.fed) fed_nodes.insert(ParseInput(f).node);
  for (const std::string& name : index.TopologicalOrder()) {
    tf::NodeDef* n = index.Find(name);
    if (n == nullptr || IsStateful(*n) || IsControlFlow(*n) || n->op() == "Placeholder" ||
        n->op() == "PlaceholderWithDefault" || n->op() == "_Arg" || n->op() == "NoOp") {
      continue;
    }
    // Inputs already merged read their representative first, so chains of
    // duplicates collapse in one pass.
    for (int i = 0; i < n->input_size(); ++i) {
      InputRef ref = ParseInput(n->input(i));
      auto it = replaced.find(ref.node);
      if (it == replaced.end()) continue;
      n->set_input(i, ref.control ? absl::StrCat("^", it->second) : OutputName(it->second, ref.index));
    }
    if (fed_nodes.count(name) > 0) continue;
    std::vector<std::string>& candidates = representatives[Signature(*n)];
    const std::string* match = nullptr;
    for (const std::string& c : candidates) {
      if (LargeAttrsEqual(*index.Find(c), *n)) {
        match = &c;
        break;
      }
    }
    if (match == nullptr) {
      candidates.push_back(name);
      continue;
    }
    if (ctx.protected_nodes.count(name) > 0) continue;
    replaced[name] = *match;
  }
  if (replaced.empty()) return false;
  // Rewire every consumer of a replaced node, data and control.
  for (tf::NodeDef& n : *def.mutable_node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      InputRef ref = ParseInput(n.input(i));
      auto it = replaced.find(ref.node);
      if (it == replaced.end()) continue;
      n.set_input(i, ref.control ? absl::StrCat("^", it->second) : OutputName(it->second, ref.index));
    }
  }
  if (ctx.log) ctx.log->push_back(absl::StrCat("cse: ", replaced.size(), " duplicate nodes merged"));
  return true;
}

}  // namespace plexus::opt
