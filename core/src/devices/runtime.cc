#include "plexus/runtime.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "plexus/status.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "devices/host_services.h"
#include "plexus/logging.h"

namespace plexus {

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)) {}

Runtime::~Runtime() {
  // Devices first (they close through their plugin), then the plugins.
  devices_.clear();
  plugins_.clear();
}

namespace {

// PLEXUS_PLUGINS=cpu,cuda: the names of the plugins discovery may load
// (empty: every plugin).
std::vector<std::string> PluginAllowList() {
  const char* env = std::getenv("PLEXUS_PLUGINS");
  if (env == nullptr) return {};
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(env, ',', absl::SkipWhitespace())) {
    names.emplace_back(absl::StripAsciiWhitespace(name));
  }
  return names;
}

// Plugins loaded in this process, by canonical file path, so that a second
// runtime shares a plugin (and its device objects) instead of loading it
// again: a plugin is initialized once per process, and a device is opened
// by one Device object at a time. Entries hold weak references: a plugin
// unloads when its last runtime, tensor and session are gone.
struct SharedPlugin {
  std::weak_ptr<Plugin> plugin;
  struct Entry {
    int ordinal;
    PX_DeviceInfo info;
    std::weak_ptr<Device> device;
  };
  std::vector<Entry> devices;
};

// Held from looking a plugin up to registering it, so that two runtimes
// loading the same file at once share it instead of racing.
std::mutex& SharedPluginsLoadMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

std::mutex& SharedPluginsMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

std::map<std::string, SharedPlugin>& SharedPlugins() {
  static auto* plugins = new std::map<std::string, SharedPlugin>;
  return *plugins;
}

// The live plugin loaded from `canonical` with its devices (made again
// where every holder of one has let it go), or null.
std::shared_ptr<Plugin> AdoptShared(const std::string& canonical, std::vector<std::shared_ptr<Device>>* devices) {
  std::lock_guard<std::mutex> lock(SharedPluginsMutex());
  auto it = SharedPlugins().find(canonical);
  if (it == SharedPlugins().end()) return nullptr;
  std::shared_ptr<Plugin> plugin = it->second.plugin.lock();
  if (plugin == nullptr) {
    SharedPlugins().erase(it);
    return nullptr;
  }
  for (SharedPlugin::Entry& e : it->second.devices) {
    std::shared_ptr<Device> d = e.device.lock();
    if (d == nullptr) {
      d = std::make_shared<Device>(plugin, e.ordinal, e.info);
      e.device = d;
    }
    devices->push_back(std::move(d));
  }
  return plugin;
}

void RegisterShared(const std::string& canonical, const std::shared_ptr<Plugin>& plugin,
                    const std::vector<std::pair<int, PX_DeviceInfo>>& infos,
                    const std::vector<std::shared_ptr<Device>>& devices) {
  SharedPlugin shared;
  shared.plugin = plugin;
  for (size_t i = 0; i < devices.size(); ++i) {
    shared.devices.push_back({infos[i].first, infos[i].second, devices[i]});
  }
  std::lock_guard<std::mutex> lock(SharedPluginsMutex());
  SharedPlugins()[canonical] = std::move(shared);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  std::unique_ptr<Runtime> runtime(new Runtime(options));
  const std::vector<std::string> allowed = PluginAllowList();
  const std::string allowed_list = absl::StrJoin(allowed, ",");
  std::vector<std::string> files;
  if (options.discover_plugins) files = PluginLoader::DiscoverFiles();
  for (const std::string& path : files) {
    if (!allowed.empty()) {
      // A file whose probe fails is loaded anyway, so that its refusal is reported.
      absl::StatusOr<std::string> name = PluginLoader::ProbeName(path);
      if (name.ok() && std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
        std::string message = absl::StrCat("plugin file '", path, "' (plugin '", *name,
                                           "') skipped: not in PLEXUS_PLUGINS=", allowed_list);
        Log(LogLevel::kInfo, message);
        runtime->AddReport({path, false, message});
        continue;
      }
    }
    auto plugin = runtime->LoadPlugin(path);
    if (!plugin.ok()) Log(LogLevel::kWarning, plugin.status().message());
  }
  for (const std::string& path : options.plugin_paths) {
    auto plugin = runtime->LoadPlugin(path);
    if (!plugin.ok()) Log(LogLevel::kWarning, plugin.status().message());
  }
  for (const std::string& name : allowed) {
    const auto plugins = runtime->plugins();
    if (std::none_of(plugins.begin(), plugins.end(), [&](const auto& p) { return p->name() == name; })) {
      Log(LogLevel::kWarning, absl::StrCat("PLEXUS_PLUGINS names plugin '", name,
                                           "', but no plugin of that name was loaded (not on the "
                                           "search path, or refused: see the load reports)"));
    }
  }
  return runtime;
}

void Runtime::AddReport(PluginLoadReport report) {
  std::lock_guard<std::mutex> lock(mu_);
  reports_.push_back(std::move(report));
}

absl::StatusOr<std::shared_ptr<Plugin>> Runtime::LoadPlugin(const std::string& path) {
  std::lock_guard<std::mutex> load_lock(load_mu_);  // one load at a time
  {
    const std::string canonical = PluginLoader::CanonicalPath(path);
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& plugin : plugins_) {
      if (plugin->path() == path || plugin->real_path() == canonical) return plugin;
    }
  }
  const std::string canonical = PluginLoader::CanonicalPath(path);
  std::lock_guard<std::mutex> process_lock(SharedPluginsLoadMutex());
  std::vector<std::shared_ptr<Device>> devices;
  std::shared_ptr<Plugin> plugin = AdoptShared(canonical, &devices);
  const bool shared = plugin != nullptr;
  std::string note;
  std::vector<std::pair<int, PX_DeviceInfo>> infos;
  if (!shared) {
    auto loaded = PluginLoader::Load(path, options_.synchronous_debug,
                                     options_.validation.value_or(ValidationModeFromEnvironment()));
    if (!loaded.ok()) {
      AddReport({path, false, std::string(loaded.status().message())});
      return loaded.status();
    }
    plugin = *std::move(loaded);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Names and device types are unique: a second "CPU" would make two
    // devices named CPU:0. The first loaded keeps them (the search order is
    // in docs/plugin_guide.md); the refusal names both files.
    for (const auto& other : plugins_) {
      std::string clash;
      if (other->name() == plugin->name()) {
        clash = absl::StrCat("a plugin named '", plugin->name(), "'");
      } else if (absl::EqualsIgnoreCase(other->device_type(), plugin->device_type())) {
        clash = absl::StrCat("plugin '", other->name(), "' with the same device type '",
                             other->device_type(), "'");
      }
      if (!clash.empty()) {
        std::string message = absl::StrCat("plugin '", path, "' refused: ", clash,
                                           " is already loaded from '", other->path(), "'");
        reports_.push_back({path, false, message});
        return absl::AlreadyExistsError(message);
      }
    }
  }

  if (!shared) {
    // Enumerate devices. A plugin whose enumeration fails stays loaded (its
    // kernels and report remain visible) but contributes no device.
    const PX_PluginTable& t = plugin->table();
    int32_t count = 0;
    absl::Status status = TakePluginStatus(t.device_count(t.plugin_state, &count));
    if (!status.ok()) {
      note = absl::StrCat("; device enumeration failed: ", absl::StatusCodeToString(status.code()),
                          ": ", status.message());
      count = 0;
    }
    for (int32_t i = 0; i < count; ++i) {
      PX_DeviceInfo info;
      std::memset(&info, 0, sizeof(info));
      info.struct_size = sizeof(info);
      absl::Status s = TakePluginStatus(t.device_get_info(t.plugin_state, i, &info));
      if (!s.ok()) {
        absl::StrAppend(&note, "; device ", i, " skipped: ", s.message());
        continue;
      }
      info.name[sizeof(info.name) - 1] = '\0';
      info.vendor[sizeof(info.vendor) - 1] = '\0';
      devices.push_back(std::make_shared<Device>(plugin, i, info));
      infos.emplace_back(i, info);
    }
    RegisterShared(canonical, plugin, infos, devices);
  } else {
    note = "; shared with another runtime of this process, as that one loaded it";
  }
  std::string message = absl::StrCat("loaded plugin '", plugin->name(), "' ", plugin->version(),
                                     " (ABI ", plugin->abi_major(), ".", plugin->abi_minor(),
                                     ", ", plugin->kernels().size(), " kernels, ",
                                     devices.size(), " device(s)",
                                     plugin->validated() ? ", under the validation layer" : "", ")", note);
  Log(LogLevel::kInfo, message);
  {
    std::lock_guard<std::mutex> lock(mu_);
    plugins_.push_back(plugin);
    for (auto& d : devices) devices_.push_back(std::move(d));
    reports_.push_back({path, true, message});
  }
  return plugin;
}

absl::Status Runtime::UnloadPlugin(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(plugins_.begin(), plugins_.end(),
                         [&](const auto& p) { return p->name() == name; });
  if (it == plugins_.end()) {
    return absl::NotFoundError(absl::StrCat("no plugin named '", name, "' is loaded"));
  }
  long device_count = 0;
  for (const auto& device : devices_) {
    if (&device->plugin() != it->get()) continue;
    ++device_count;
    if (device.use_count() > 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "plugin '", name, "' cannot be unloaded: device ", device->name(),
          " is still in use (a live tensor, session or kernel holds it, or another runtime of "
          "this process shares the plugin)"));
    }
  }
  if (it->use_count() > 1 + device_count) {
    return absl::FailedPreconditionError(
        absl::StrCat("plugin '", name, "' cannot be unloaded: it is still in use (or another runtime "
                     "of this process shares it)"));
  }
  std::shared_ptr<Plugin> plugin = *it;
  plugins_.erase(it);
  devices_.erase(std::remove_if(devices_.begin(), devices_.end(),
                                [&](const auto& d) { return &d->plugin() == plugin.get(); }),
                 devices_.end());
  return absl::OkStatus();  // `plugin` dies here: shutdown, then dlclose
}

std::vector<std::shared_ptr<Plugin>> Runtime::plugins() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plugins_;
}

std::vector<PluginLoadReport> Runtime::load_reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}

std::vector<std::shared_ptr<Device>> Runtime::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_;
}

absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view name) {
  DeviceSpec spec;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad device name '", name, "': ", why));
  };
  auto set_type_and_index = [&](absl::string_view type, absl::string_view index) -> absl::Status {
    if (type.empty()) return bad("no device type");
    spec.type = absl::AsciiStrToUpper(type);
    if (index.empty() || index == "*") {
      spec.ordinal = -1;
    } else if (!absl::SimpleAtoi(index, &spec.ordinal) || spec.ordinal < 0) {
      return bad(absl::StrCat("'", index, "' is not a device index"));
    }
    return absl::OkStatus();
  };
  absl::string_view rest = absl::StripAsciiWhitespace(name);
  if (rest.empty()) return spec;
  if (rest[0] != '/') {
    // Plexus's own form: TYPE[:INDEX].
    std::vector<absl::string_view> parts = absl::StrSplit(rest, ':');
    if (parts.size() > 2) return bad("expected TYPE or TYPE:INDEX");
    PX_RETURN_IF_ERROR(set_type_and_index(parts[0], parts.size() == 2 ? parts[1] : ""));
    return spec;
  }
  for (absl::string_view part : absl::StrSplit(rest.substr(1), '/', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    std::string key = absl::AsciiStrToLower(kv[0]);
    if (key == "job" || key == "replica" || key == "task") {
      if (kv.size() != 2) return bad(absl::StrCat("'", part, "' should be ", key, ":VALUE"));
    } else if (key == "device") {
      if (kv.size() < 2 || kv.size() > 3) return bad(absl::StrCat("'", part, "' should be device:TYPE:INDEX"));
      PX_RETURN_IF_ERROR(set_type_and_index(kv[1], kv.size() == 3 ? kv[2] : ""));
    } else if (kv.size() <= 2 && (key == "cpu" || key == "gpu")) {
      PX_RETURN_IF_ERROR(set_type_and_index(kv[0], kv.size() == 2 ? kv[1] : ""));  // legacy /cpu:0
    } else {
      return bad(absl::StrCat("unknown part '", part, "'"));
    }
  }
  return spec;
}

std::shared_ptr<Device> Runtime::FindDevice(const DeviceSpec& spec) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Device> best;
  for (const auto& device : devices_) {
    if (absl::AsciiStrToUpper(device->type()) != spec.type) continue;
    if (spec.ordinal >= 0 ? device->ordinal() == spec.ordinal
                          : (best == nullptr || device->ordinal() < best->ordinal())) {
      best = device;
      if (spec.ordinal >= 0) break;
    }
  }
  return best;
}

absl::StatusOr<std::shared_ptr<Device>> Runtime::FindDevice(absl::string_view name) const {
  PX_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(name));
  if (spec.type.empty()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' names no device type"));
  if (spec.ordinal < 0) spec.ordinal = 0;
  std::shared_ptr<Device> found = FindDevice(spec);
  if (found != nullptr) return found;
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& device : devices_) names.push_back(device->name());
  }
  return absl::NotFoundError(absl::StrCat(
      "no device named '", name, "'; devices present: ",
      names.empty() ? std::string("none") : absl::StrJoin(names, ", ")));
}

std::shared_ptr<Device> Runtime::DefaultDevice() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Device> best;
  for (const auto& device : devices_) {
    if (best == nullptr) {
      best = device;
      continue;
    }
    int score = device->plugin().score(), best_score = best->plugin().score();
    if (score > best_score ||
        (score == best_score && best->host_accessible() && !device->host_accessible())) {
      best = device;
    }
  }
  return best;
}

std::shared_ptr<Device> Runtime::HostDevice() const {
  // The highest-scoring plugin's first host-accessible device, whatever the
  // load order (the reference plugin, say, must not stand in for cpu).
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Device> best;
  for (const auto& device : devices_) {
    if (device->host_accessible() && (best == nullptr || device->plugin().score() > best->plugin().score())) {
      best = device;
    }
  }
  return best;
}

}  // namespace plexus
