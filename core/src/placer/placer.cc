// The placer (placer.h): one order of preference for graphs, eager ops and
// graph dumps.
#include "placer/placer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/plugin_host.h"

namespace plexus {

bool IsControlFlowOp(absl::string_view op) {
  return op == "Switch" || op == "Merge" || op == "Enter" || op == "Exit" ||
         op == "NextIteration" || op == "RefSwitch" || op == "RefMerge" || op == "RefEnter" ||
         op == "RefExit" || op == "RefNextIteration";
}

bool OpRunsInCore(const std::string& op, const OpDef& def) {
  return IsControlFlowOp(op) || op == "LoopCond" || def.forwards_inputs || def.output_is_view ||
         def.outputs_from_shapes || FindHostOp(op) != nullptr;
}

bool IsMetadataOp(const Node& node) {
  if (node.def->outputs_from_shapes) return true;
  if (!node.def->output_is_view || node.input_types.empty()) return false;
  // Strings, resources and variants are not plain memory to view.
  const DataType t = node.input_types[0];
  return t != DataType::kString && t != DataType::kResource && t != DataType::kVariant;
}

bool RunsInCore(const Node& node) {
  return IsControlFlowOp(node.op) || node.def->forwards_inputs || node.op == "LoopCond" ||
         IsMetadataOp(node);
}

std::string RequestedDevice(const Graph& graph, const Node& node) {
  if (!node.requested_device.empty()) return node.requested_device;
  const tf::AttrValue* cls = node.FindAttr("_class");
  if (cls == nullptr || cls->value_case() != tf::AttrValue::kList) return "";
  for (const std::string& entry : cls->list().s()) {
    if (entry.rfind("loc:@", 0) != 0) continue;
    const Node* other = graph.FindNode(entry.substr(5));
    if (other != nullptr && !other->requested_device.empty()) return other->requested_device;
  }
  return "";
}

std::string DescribeKernelMismatch(const Node& node, const Plugin& plugin) {
  std::vector<std::string> types;
  for (const auto& [name, value] : node.attrs) {
    if (value.value_case() == tf::AttrValue::kType) {
      types.push_back(absl::StrCat(name, "=", DataTypeName(BaseType(value.type()))));
    }
  }
  std::vector<std::string> have;
  for (const KernelRegistration* reg : plugin.kernels().ForOp(node.op)) have.push_back(reg->Describe());
  return absl::StrCat("plugin '", plugin.name(), "' has no kernel for op ", node.op,
                      types.empty() ? "" : absl::StrCat(" with ", absl::StrJoin(types, ", ")),
                      have.empty() ? "" : absl::StrCat(" (it has: ", absl::StrJoin(have, "; "), ")"));
}

const KernelRegistration* Placer::KernelOn(const Device& device, const Node& node) {
  // String inputs reach only plugins that speak ABI 0.2 or newer.
  if (device.plugin().abi_minor() < 2 &&
      std::find(node.input_types.begin(), node.input_types.end(), DataType::kString) !=
          node.input_types.end()) {
    return nullptr;
  }
  return device.plugin().kernels().Find(node);
}

Placer::Placer(const Runtime& runtime, std::shared_ptr<Device> preferred, DescribeFn describe)
    : runtime_(runtime), preferred_(std::move(preferred)), describe_(describe) {
  if (preferred_ == nullptr) preferred_ = runtime.HostDevice();
  if (preferred_ == nullptr) preferred_ = runtime.DefaultDevice();
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& d : runtime.devices()) {
      if (d != preferred_ && d->host_accessible() == (pass == 0)) fallbacks_.push_back(d);
    }
  }
}

absl::StatusOr<PlacementChoice> Placer::Place(const Node& node, absl::string_view request) const {
  PlacementChoice choice;
  choice.device = preferred_;
  if (RunsInCore(node)) {
    choice.how = PlacedBy::kCore;
    return choice;
  }
  HostOpUse host_use = HostOpUse::kFallback;
  HostOpFn host_op = FindHostOp(node.op, &host_use);
  if (host_op != nullptr && host_use == HostOpUse::kAlways) {
    choice.how = PlacedBy::kHostOp;
    choice.host_op = host_op;
    return choice;
  }
  auto note = [&](LogLevel level, std::string reason) {
    choice.note = absl::StrCat(describe_(node), ": ", reason);
    choice.note_level = level;
    choice.reason = std::move(reason);
  };
  // A device the node asks for wins when it exists and has a kernel;
  // otherwise soft placement, with a note saying why.
  std::string refused;
  if (!request.empty()) {
    auto spec = ParseDeviceSpec(request);
    std::shared_ptr<Device> wanted =
        spec.ok() && !spec->type.empty() ? runtime_.FindDevice(*spec) : nullptr;
    if (!spec.ok()) {
      refused = std::string(spec.status().message());
    } else if (spec->type.empty()) {
      // "/job:worker" and the like name no device: nothing to honour.
    } else if (wanted == nullptr) {
      refused = "no such device here";
    } else if ((choice.kernel = KernelOn(*wanted, node)) == nullptr) {
      refused = absl::StrCat("no kernel on ", wanted->name());
    } else if (wanted != preferred_) {
      choice.device = wanted;
      note(LogLevel::kDebug, absl::StrCat("placed on ", wanted->name(), " as requested ('", request, "')"));
    }
  }
  if (choice.kernel == nullptr && preferred_ != nullptr) choice.kernel = KernelOn(*preferred_, node);
  if (!refused.empty() && choice.kernel != nullptr) {
    note(LogLevel::kInfo, absl::StrCat("requested '", request, "' (", refused, "), placed on ",
                                       preferred_->name()));
  }
  for (size_t f = 0; choice.kernel == nullptr && f < fallbacks_.size(); ++f) {
    choice.kernel = KernelOn(*fallbacks_[f], node);
    if (choice.kernel == nullptr) continue;
    choice.device = fallbacks_[f];
    note(LogLevel::kInfo, absl::StrCat("no kernel on ", preferred_ ? preferred_->name() : "any device",
                                       ", placed on ", fallbacks_[f]->name()));
  }
  if (choice.kernel != nullptr) return choice;
  if (host_op != nullptr) {
    choice.how = PlacedBy::kHostOp;
    choice.host_op = host_op;
    if (preferred_ != nullptr) {
      note(LogLevel::kDebug, absl::StrCat("no kernel on ", preferred_->name(), ", run by the core on the host"));
    }
    return choice;
  }
  if (preferred_ == nullptr) {
    return absl::NotFoundError(absl::StrCat(describe_(node), ": no device is loaded to run it on"));
  }
  return absl::NotFoundError(absl::StrCat(describe_(node), " on ", preferred_->name(), ": ",
                                          DescribeKernelMismatch(node, preferred_->plugin()),
                                          fallbacks_.empty() ? "" : ", nor does any other device"));
}

}  // namespace plexus
