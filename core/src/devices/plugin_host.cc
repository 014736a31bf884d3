#include "plexus/plugin_host.h"

#include <filesystem>
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "devices/host_services.h"
#include "plexus/graph.h"
#include "plexus/logging.h"
#include "plexus/status.h"

// The validation layer's entry point, as sdk/validation/validation_layer.h
// declares it (the core needs only these few names). The struct keeps the
// header's name, at global scope, so that the function the core calls
// through a pointer has exactly the type of the one the layer defines
// (UBSan's -fsanitize=function checks the call).
extern "C" {
struct PX_ValidationArgs {
  size_t struct_size;
  const char* plugin_name;
  PX_PluginInitializeFn plugin_initialize;
  int32_t mode;  // 1: breaches are errors, 2: breaches are logged
};
}

namespace plexus {
namespace {

constexpr char kPluginFilePrefix[] = "libplexus_plugin_";

std::string AbiRange(uint32_t major, uint32_t min_minor, uint32_t max_minor) {
  return absl::StrCat(major, ".", min_minor, "-", major, ".", max_minor);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Plugin files in a folder: libplexus_plugin_*.so, sorted by name.
std::vector<std::string> ScanDirectory(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (absl::StartsWith(name, kPluginFilePrefix) && absl::EndsWith(name, ".so")) {
      files.push_back(absl::StrCat(dir, "/", name));
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// Names the required slots of the table that the plugin left NULL.
std::vector<std::string> MissingRequiredSlots(const PX_PluginTable& t) {
  std::vector<std::string> missing;
  auto need = [&](const void* slot, const char* name) {
    if (slot == nullptr) missing.push_back(name);
  };
#define PX_NEED(field) need(reinterpret_cast<const void*>(t.field), #field)
  PX_NEED(register_kernels);
  PX_NEED(device_count);
  PX_NEED(device_get_info);
  PX_NEED(device_open);
  PX_NEED(device_close);
  PX_NEED(allocate);
  PX_NEED(deallocate);
  PX_NEED(memcpy_h2d);
  PX_NEED(memcpy_d2h);
  PX_NEED(memcpy_d2d);
  PX_NEED(stream_create);
  PX_NEED(stream_destroy);
  PX_NEED(stream_synchronize);
  PX_NEED(stream_get_status);
  PX_NEED(event_create);
  PX_NEED(event_destroy);
  PX_NEED(event_record);
  PX_NEED(event_synchronize);
  PX_NEED(stream_wait_event);
#undef PX_NEED
  return missing;
}

// The table's collectives extension (ABI 0.7), or null: read only from a
// plugin of minor 7 or more whose table reaches the field, and ignored (with
// a warning naming the plugin) when it is too short or lacks a required slot.
const PX_CollectivesExt* ReadCollectives(const PX_PluginTable& t, const std::string& plugin) {
  if (t.abi_minor < 7 || !PX_STRUCT_HAS(&t, PX_PluginTable, collectives)) return nullptr;
  const PX_CollectivesExt* ext = t.collectives;
  if (ext == nullptr) return nullptr;
  std::string problem;
  if (!PX_STRUCT_HAS(ext, PX_CollectivesExt, barrier)) {
    problem = absl::StrCat("its struct_size ", ext->struct_size, " does not reach barrier (",
                           offsetof(PX_CollectivesExt, barrier) + sizeof(ext->barrier), " bytes)");
  } else if (ext->comm_create == nullptr || ext->comm_destroy == nullptr ||
             ext->comm_abort == nullptr) {
    problem = "it lacks comm_create, comm_destroy or comm_abort";
  }
  if (problem.empty()) return ext;
  Log(LogLevel::kWarning,
      absl::StrCat(plugin, ": collectives extension ignored: ", problem));
  return nullptr;
}

// Canonical paths of the plugin files initialized in this process.
std::mutex& ProcessPluginsMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::set<std::string>& ProcessPlugins() {
  static std::set<std::string>* files = new std::set<std::string>();
  return *files;
}

}  // namespace

Plugin::~Plugin() {
  if (initialized_ && table_.plugin_shutdown != nullptr) {
    table_.plugin_shutdown(table_.plugin_state);
  }
  if (handle_ != nullptr) dlclose(handle_);
  if (registered_in_process_) {
    std::lock_guard<std::mutex> lock(ProcessPluginsMutex());
    ProcessPlugins().erase(real_path_);
  }
}

std::string Plugin::version() const {
  return table_.plugin_version ? table_.plugin_version : "";
}

std::string Plugin::device_type() const {
  return table_.device_type ? table_.device_type : "";
}

namespace {

// dlopen("") would open the main program, and a directory fails with a
// message about ELF headers: both are said plainly instead.
absl::Status CheckPluginPath(const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("plugin path is empty: give the path of a plugin's .so file");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("plugin '", path, "' refused: it is a directory, not a plugin's .so file"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

using ValidationArgs = ::PX_ValidationArgs;
using ValidationWrapFn = PX_Status* (*)(const ValidationArgs*, const PX_HostInitArgs*, PX_PluginTable*);
constexpr char kValidationLayerFile[] = "libplexus_validation_layer.so";
constexpr char kValidationWrapSymbol[] = "PX_ValidationWrap";

// Opens the validation layer once per path; it stays loaded (wrapped tables
// point into it).
absl::StatusOr<ValidationWrapFn> ValidationLayer() {
  const char* env = std::getenv("PLEXUS_VALIDATION_LAYER");
  const std::string path = env != nullptr && env[0] != '\0'
                               ? std::string(env)
                               : absl::StrCat(PluginLoader::DefaultPluginDir(), "/", kValidationLayerFile);
  static std::mutex* mu = new std::mutex();
  static auto* layers = new std::map<std::string, ValidationWrapFn>();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = layers->find(path);
  if (it != layers->end()) return it->second;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "PLEXUS_VALIDATE is set but the validation layer '", path, "' cannot be loaded: ",
        error ? error : "unknown dlopen error", " (set PLEXUS_VALIDATION_LAYER to its path)"));
  }
  auto wrap = reinterpret_cast<ValidationWrapFn>(dlsym(handle, kValidationWrapSymbol));
  if (wrap == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is not a Plexus validation layer (no ", kValidationWrapSymbol, ")"));
  }
  (*layers)[path] = wrap;
  return wrap;
}

}  // namespace

ValidationMode ValidationModeFromEnvironment() {
  const char* env = std::getenv("PLEXUS_VALIDATE");
  if (env == nullptr) return ValidationMode::kOff;
  const std::string v = absl::AsciiStrToLower(env);
  if (v.empty() || v == "0" || v == "off" || v == "false" || v == "no") return ValidationMode::kOff;
  return v == "warn" ? ValidationMode::kWarn : ValidationMode::kError;
}

absl::Status PluginLoader::Initialize(Plugin* plugin, PX_PluginInitializeFn initialize,
                                      const std::string& path, bool synchronous_debug,
                                      ValidationMode validation) {
  FillHostServices(&plugin->services_, plugin);
  PX_HostInitArgs args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.abi_major = kHostAbiMajor;
  args.abi_min_minor = kHostAbiMinMinor;
  args.abi_max_minor = kHostAbiMaxMinor;
  args.services = &plugin->services_;
  args.synchronous_debug = synchronous_debug ? 1 : 0;
  args.plugin_path = path.c_str();
  PX_PluginTable& table = plugin->table_;
  std::memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  if (validation == ValidationMode::kOff) return TakePluginStatus(initialize(&args, &table));
  PX_ASSIGN_OR_RETURN(ValidationWrapFn wrap, ValidationLayer());
  ValidationArgs v;
  std::memset(&v, 0, sizeof(v));
  v.struct_size = sizeof(v);
  v.plugin_name = plugin->name_.c_str();
  v.plugin_initialize = initialize;
  v.mode = validation == ValidationMode::kWarn ? 2 : 1;
  plugin->validated_ = true;
  return TakePluginStatus(wrap(&v, &args, &table));
}

absl::StatusOr<std::shared_ptr<Plugin>> PluginLoader::Load(const std::string& path,
                                                           bool synchronous_debug) {
  return Load(path, synchronous_debug, ValidationModeFromEnvironment());
}

absl::StatusOr<std::shared_ptr<Plugin>> PluginLoader::Load(const std::string& path, bool synchronous_debug,
                                                           ValidationMode validation) {
  auto refuse = [&](absl::StatusCode code, absl::string_view why) {
    return absl::Status(code, absl::StrCat("plugin '", path, "' refused: ", why));
  };
  absl::Status openable = CheckPluginPath(path);
  if (!openable.ok()) return openable;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return refuse(absl::StatusCode::kNotFound,
                  absl::StrCat("cannot be loaded: ", error ? error : "unknown dlopen error"));
  }
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->path_ = path;
  plugin->real_path_ = CanonicalPath(path);
  plugin->handle_ = handle;  // from here on the destructor closes it

  auto probe = reinterpret_cast<PX_PluginProbeFn>(dlsym(handle, PX_PLUGIN_PROBE_SYMBOL));
  if (probe == nullptr) {
    return refuse(absl::StatusCode::kInvalidArgument,
                  "it does not export " PX_PLUGIN_PROBE_SYMBOL " (not a Plexus plugin)");
  }
  PX_PluginProbeInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  probe(&info);
  if (info.plugin_name == nullptr || info.plugin_name[0] == '\0') {
    return refuse(absl::StatusCode::kInvalidArgument, "its probe reports no plugin name");
  }
  plugin->name_ = info.plugin_name;
  plugin->log_prefix_ = absl::StrCat("plugin '", plugin->name_, "'");
  plugin->abi_major_ = info.abi_major;
  plugin->score_ = info.score;
  const std::string host_range = AbiRange(kHostAbiMajor, kHostAbiMinMinor, kHostAbiMaxMinor);
  const std::string plugin_range = AbiRange(info.abi_major, info.abi_min_minor, info.abi_max_minor);
  if (info.abi_major != kHostAbiMajor) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("plugin '", plugin->name_, "' speaks ABI ", plugin_range,
                               ", this core speaks ABI ", host_range, " (major versions differ)"));
  }
  if (info.abi_min_minor > kHostAbiMaxMinor || info.abi_max_minor < kHostAbiMinMinor ||
      info.abi_min_minor > info.abi_max_minor) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("plugin '", plugin->name_, "' speaks ABI ", plugin_range,
                               ", this core speaks ABI ", host_range, " (no common version)"));
  }

  auto initialize =
      reinterpret_cast<PX_PluginInitializeFn>(dlsym(handle, PX_PLUGIN_INITIALIZE_SYMBOL));
  if (initialize == nullptr) {
    return refuse(absl::StatusCode::kInvalidArgument,
                  "it does not export " PX_PLUGIN_INITIALIZE_SYMBOL);
  }
  {
    std::lock_guard<std::mutex> lock(ProcessPluginsMutex());
    if (!ProcessPlugins().insert(plugin->real_path_).second) {
      return refuse(absl::StatusCode::kAlreadyExists,
                    "this file is already loaded by another runtime in this process "
                    "(a plugin is initialized once per process)");
    }
    plugin->registered_in_process_ = true;
  }
  absl::Status init = Initialize(plugin.get(), initialize, path, synchronous_debug, validation);
  if (!init.ok()) {
    return refuse(init.code(), absl::StrCat("plugin '", plugin->name_,
                                            "' failed to initialize: ", init.message()));
  }
  plugin->initialized_ = true;  // from here on the destructor shuts it down
  const PX_PluginTable& table = plugin->table_;

  if (table.struct_size < offsetof(PX_PluginTable, stream_add_callback) ||
      table.struct_size > sizeof(PX_PluginTable) * 4) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("its plugin table has an implausible struct_size ",
                               table.struct_size));
  }
  if (table.abi_minor < kHostAbiMinMinor || table.abi_minor > kHostAbiMaxMinor ||
      table.abi_minor < info.abi_min_minor || table.abi_minor > info.abi_max_minor) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("it chose ABI minor ", table.abi_minor,
                               ", outside the negotiated range (host ", host_range,
                               ", plugin ", plugin_range, ")"));
  }
  std::vector<std::string> missing = MissingRequiredSlots(table);
  if (!missing.empty()) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("required slot(s) missing from its table: ",
                               absl::StrJoin(missing, ", ")));
  }
  if (table.device_type == nullptr || table.device_type[0] == '\0') {
    return refuse(absl::StatusCode::kFailedPrecondition, "its table names no device_type");
  }
  if (table.plugin_name != nullptr && plugin->name_ != table.plugin_name) {
    return refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat("its probe says '", plugin->name_, "' but its table says '",
                               table.plugin_name, "'"));
  }
  plugin->collectives_ = ReadCollectives(table, plugin->log_prefix_);
  plugin->registrar_.reset(new PX_KernelRegistrar{plugin.get(), &plugin->kernels_});
  absl::Status kernels = TakePluginStatus(table.register_kernels(table.plugin_state, plugin->registrar_.get()));
  plugin->registrar_->registry = nullptr;
  if (!kernels.ok()) {
    return refuse(kernels.code(), absl::StrCat("kernel registration failed: ", kernels.message()));
  }
  return plugin;
}

namespace {

// The names probed so far, by file (its canonical path and identity: device,
// inode, size, modification time), so that each plugin file is opened for
// its name once per process. Opening runs the file's constructors, and some
// toolkits' do not give back what they take when the file is closed again
// (HIP 5.2 registers the rocm plugin's GPU code, about 19 KiB, for good):
// discovery with PLEXUS_PLUGINS probes every plugin on the path each time a
// runtime is made.
struct ProbedFile {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_ns;
  std::string name;
};

std::mutex& ProbeCacheMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, ProbedFile>& ProbeCache() {
  static auto* cache = new std::map<std::string, ProbedFile>();  // never destroyed: used at exit
  return *cache;
}

}  // namespace

absl::StatusOr<std::string> PluginLoader::ProbeName(const std::string& path) {
  PX_RETURN_IF_ERROR(CheckPluginPath(path));
  const std::string canonical = CanonicalPath(path);
  struct stat st;
  const bool have_stat = stat(canonical.c_str(), &st) == 0;
  const int64_t mtime_ns = have_stat ? int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec : 0;
  if (have_stat) {
    std::lock_guard<std::mutex> lock(ProbeCacheMutex());
    auto it = ProbeCache().find(canonical);
    if (it != ProbeCache().end() && it->second.dev == st.st_dev && it->second.ino == st.st_ino &&
        it->second.size == st.st_size && it->second.mtime_ns == mtime_ns) {
      return it->second.name;
    }
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(absl::StrCat("plugin '", path, "' cannot be loaded: ",
                                            error ? error : "unknown dlopen error"));
  }
  auto probe = reinterpret_cast<PX_PluginProbeFn>(dlsym(handle, PX_PLUGIN_PROBE_SYMBOL));
  std::string name;
  if (probe != nullptr) {
    PX_PluginProbeInfo info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    probe(&info);
    if (info.plugin_name != nullptr) name = info.plugin_name;
  }
  dlclose(handle);
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("plugin '", path, "' reports no plugin name"));
  }
  if (have_stat) {
    std::lock_guard<std::mutex> lock(ProbeCacheMutex());
    ProbeCache()[canonical] = ProbedFile{st.st_dev, st.st_ino, st.st_size, mtime_ns, name};
  }
  return name;
}

std::string PluginLoader::CanonicalPath(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  std::string result = real ? real : path;
  std::free(real);
  return result;
}

std::string PluginLoader::DefaultPluginDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PluginLoader::DefaultPluginDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string library = info.dli_fname;
  size_t slash = library.rfind('/');
  std::string dir = slash == std::string::npos ? "." : library.substr(0, slash);
  return absl::StrCat(dir, "/plexus-plugins");
}

std::vector<std::string> PluginLoader::DiscoverFiles() {
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string& file) {
    if (seen.insert(CanonicalPath(file)).second) files.push_back(file);
  };
  if (const char* env = std::getenv("PLEXUS_PLUGIN_PATH")) {
    for (absl::string_view entry : absl::StrSplit(env, ':', absl::SkipEmpty())) {
      std::string path(entry);
      if (IsDirectory(path)) {
        for (const std::string& file : ScanDirectory(path)) add(file);
      } else if (IsFile(path)) {
        add(path);
      } else {
        Log(LogLevel::kWarning, absl::StrCat("PLEXUS_PLUGIN_PATH entry '", path,
                                             "' is neither a file nor a folder"));
      }
    }
  }
  std::string dir = DefaultPluginDir();
  if (!dir.empty() && IsDirectory(dir)) {
    for (const std::string& file : ScanDirectory(dir)) add(file);
  }
  return files;
}

}  // namespace plexus
