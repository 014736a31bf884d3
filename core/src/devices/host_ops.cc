#include "devices/host_ops.h"

#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "plexus/device.h"

namespace plexus {
namespace {

struct Entry {
  HostOpFn fn;
  HostOpUse use;
};

std::map<std::string, Entry, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, Entry, std::less<>>();
  return *registry;
}

}  // namespace

absl::Status HostOpContext::InvalidArgument(absl::string_view message) const {
  return Error(absl::StatusCode::kInvalidArgument, message);
}

absl::Status HostOpContext::Error(absl::StatusCode code, absl::string_view message) const {
  return absl::Status(code, absl::StrCat(node_.Describe(), ": ", message));
}

void RegisterHostOp(const std::string& op, HostOpFn fn, HostOpUse use) {
  Registry()[op] = Entry{fn, use};
}

HostOpFn FindHostOp(absl::string_view op, HostOpUse* use) {
  auto it = Registry().find(op);
  if (it == Registry().end()) return nullptr;
  if (use != nullptr) *use = it->second.use;
  return it->second.fn;
}

std::vector<std::string> HostOpNames() {
  std::vector<std::string> names;
  for (const auto& entry : Registry()) names.push_back(entry.first);
  return names;
}

bool TakesInputOnDevice(absl::string_view op, int input) {
  return input == 1 && op == "AssignVariableOp";
}

bool RunsOnDeviceCollectives(absl::string_view op, const Device* device) {
  if (device == nullptr || device->collectives() == nullptr) return false;
  return op == "CollectiveReduceV2" || op == "CollectiveReduce" || op == "CollectiveGatherV2" ||
         op == "CollectiveGather" || op == "CollectiveReduceScatterV2" || op == "CollectiveAllToAllV2";
}

}  // namespace plexus
