// The runtime: the plugins loaded in this process and their devices. Create
// one per process (or per test); everything else hangs off it.
#ifndef PLEXUS_RUNTIME_H_
#define PLEXUS_RUNTIME_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/device.h"
#include "plexus/plugin_host.h"

namespace plexus {

struct RuntimeOptions {
  // Load every plugin found in PLEXUS_PLUGIN_PATH and beside the library.
  bool discover_plugins = true;
  // Further plugin files to load (errors are reported, not fatal).
  std::vector<std::string> plugin_paths;
  // Plugins complete and check every launch before compute returns.
  bool synchronous_debug = false;
  // Wrap every plugin in the validation layer (sdk/validation/). Unset: as
  // PLEXUS_VALIDATE says (ValidationModeFromEnvironment).
  std::optional<ValidationMode> validation;
};

// What happened to one plugin file: loaded, or refused and why.
struct PluginLoadReport {
  std::string path;
  bool loaded = false;
  std::string message;  // the refusal, or "loaded plugin 'cpu' ..."
};

// A device request as TensorFlow and Plexus write them: "/device:CPU:0",
// "/job:localhost/replica:0/task:0/device:GPU:1", the legacy "/cpu:0" and
// "/gpu:1", and Plexus's "CPU:0", "cpu:0" or "cpu". Job, replica and task
// are accepted and ignored (one process). `type` is upper case and empty
// when the request names no device type; `ordinal` is -1 for "any" ("*" or
// no index).
struct DeviceSpec {
  std::string type;
  int ordinal = -1;
};
absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view name);

class Runtime {
 public:
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(RuntimeOptions options = {});
  ~Runtime();

  // Loads one plugin file. A refusal returns the error (and is recorded in
  // load_reports()); the runtime is unchanged.
  absl::StatusOr<std::shared_ptr<Plugin>> LoadPlugin(const std::string& path);
  // Unloads a plugin by name. Refused while any of its devices is still in use
  // (a live tensor, session or kernel).
  absl::Status UnloadPlugin(const std::string& name);

  std::vector<std::shared_ptr<Plugin>> plugins() const;
  std::vector<PluginLoadReport> load_reports() const;
  std::vector<std::shared_ptr<Device>> devices() const;

  // Accepts "CPU:0", "cpu:0", "/device:CPU:0", "cpu" (ordinal 0). Errors
  // list the devices there are.
  absl::StatusOr<std::shared_ptr<Device>> FindDevice(absl::string_view name) const;
  // The device a parsed request names (the lowest ordinal of the type for
  // "any"), or null.
  std::shared_ptr<Device> FindDevice(const DeviceSpec& spec) const;
  // The best device present: the highest-scoring plugin's first device;
  // among equal scores, non-host devices first. Null when there are none.
  std::shared_ptr<Device> DefaultDevice() const;
  // The host-accessible device of the highest-scoring plugin (the cpu
  // plugin), or null.
  std::shared_ptr<Device> HostDevice() const;

 private:
  explicit Runtime(RuntimeOptions options);
  void AddReport(PluginLoadReport report);

  RuntimeOptions options_;
  std::mutex load_mu_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Plugin>> plugins_;
  std::vector<std::shared_ptr<Device>> devices_;
  std::vector<PluginLoadReport> reports_;
};

}  // namespace plexus

#endif  // PLEXUS_RUNTIME_H_
