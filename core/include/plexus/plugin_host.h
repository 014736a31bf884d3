// Loading device plugins: dlopen, probe, version negotiation, validation of
// the table the plugin fills, kernel registration, and unload. A plugin that
// cannot be used is refused with a message naming its file and the reason;
// the process carries on.
#ifndef PLEXUS_PLUGIN_HOST_H_
#define PLEXUS_PLUGIN_HOST_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/kernel_registry.h"
#include "plexus/plugin_api.h"

struct PX_KernelRegistrar;

namespace plexus {

// The ABI range this core speaks.
inline constexpr uint32_t kHostAbiMajor = PX_ABI_VERSION_MAJOR;
inline constexpr uint32_t kHostAbiMinMinor = 0;
inline constexpr uint32_t kHostAbiMaxMinor = PX_ABI_VERSION_MINOR;

// The validation layer (sdk/validation/): off, on (a breach fails the call
// with an error naming the plugin, call and argument), or warn (a breach is
// only logged).
enum class ValidationMode { kOff, kError, kWarn };
// PLEXUS_VALIDATE: unset, "", 0, off, false or no: off; "warn": warn;
// anything else (1, on, error): on.
ValidationMode ValidationModeFromEnvironment();

class Plugin {
 public:
  ~Plugin();  // plugin_shutdown, then dlclose
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& path() const { return path_; }
  // The file's canonical path (symlinks and relative parts resolved).
  const std::string& real_path() const { return real_path_; }
  const std::string& name() const { return name_; }
  std::string version() const;
  uint32_t abi_major() const { return abi_major_; }
  uint32_t abi_minor() const { return table_.abi_minor; }
  int32_t score() const { return score_; }
  std::string device_type() const;
  const PX_PluginTable& table() const { return table_; }
  // The collectives extension (ABI 0.7, PX_PluginTable.collectives), or null
  // when the plugin offers none, speaks a minor below 7, or offers an
  // unusable one (too short, or without comm_create, comm_destroy or
  // comm_abort; a warning said so at load). Static while the plugin is
  // loaded; the collective slots may each be NULL (UNIMPLEMENTED).
  const PX_CollectivesExt* collectives() const { return collectives_; }
  const KernelRegistry& kernels() const { return kernels_; }
  KernelRegistry& mutable_kernels() { return kernels_; }
  // Per-plugin host context (logging attribution).
  const std::string& log_prefix() const { return log_prefix_; }
  // Serializes device open and close across the plugin's devices (the ABI's
  // threading contract).
  std::mutex& device_mutex() { return device_mu_; }
  // The validation layer wraps this plugin's table (table() is the layer's).
  bool validated() const { return validated_; }

 private:
  friend class PluginLoader;
  Plugin() = default;

  std::string path_;
  std::string real_path_;
  bool registered_in_process_ = false;
  std::string name_;
  std::string log_prefix_;
  uint32_t abi_major_ = 0;
  int32_t score_ = 0;
  void* handle_ = nullptr;
  bool initialized_ = false;
  bool validated_ = false;
  PX_HostServices services_{};
  PX_PluginTable table_{};
  const PX_CollectivesExt* collectives_ = nullptr;  // validated at load
  KernelRegistry kernels_;
  // Valid during register_kernels only; cleared afterwards so a plugin that
  // keeps it gets an error instead of writing into a live registry.
  std::unique_ptr<PX_KernelRegistrar> registrar_;
  std::mutex device_mu_;
};

class PluginLoader {
 public:
  // Loads, negotiates, validates and registers kernels. Errors name `path`.
  // A plugin file is initialized once per process: loading a file that
  // another runtime of this process holds is refused.
  static absl::StatusOr<std::shared_ptr<Plugin>> Load(const std::string& path,
                                                      bool synchronous_debug);
  // The same, with the plugin wrapped by the validation layer unless
  // `validation` is kOff (the layer is PLEXUS_VALIDATION_LAYER, or
  // libplexus_validation_layer.so in DefaultPluginDir(); a layer that cannot
  // be loaded refuses the plugin, saying why).
  static absl::StatusOr<std::shared_ptr<Plugin>> Load(const std::string& path, bool synchronous_debug,
                                                      ValidationMode validation);
  // The name a plugin file's probe reports (the file is opened and closed
  // again; nothing is initialized). Remembered per file (path and identity),
  // so each file is opened for its name once per process.
  static absl::StatusOr<std::string> ProbeName(const std::string& path);
  // Plugin files in the search path, in order: each entry of
  // PLEXUS_PLUGIN_PATH (a file, or a folder scanned for *.so), then the
  // plexus-plugins folder beside the core library.
  static std::vector<std::string> DiscoverFiles();
  // The plexus-plugins folder beside the core library.
  static std::string DefaultPluginDir();
  // `path` with symbolic links and relative parts resolved (unchanged when
  // the file does not exist).
  static std::string CanonicalPath(const std::string& path);

 private:
  // PX_PluginInitialize, through the validation layer unless it is off.
  static absl::Status Initialize(Plugin* plugin, PX_PluginInitializeFn initialize,
                                 const std::string& path, bool synchronous_debug,
                                 ValidationMode validation);
};

}  // namespace plexus

#endif  // PLEXUS_PLUGIN_HOST_H_
