// The C API: runtimes (plugins, devices, load reports) and the process's
// intra-op thread budget.
#include "plexus/c_api.h"

#include "handles.h"
#include "plexus/threads.h"

void px_runtime::RefreshCache() {
  std::vector<std::shared_ptr<plexus::Plugin>> core_plugins = runtime->plugins();
  std::vector<std::shared_ptr<plexus::Device>> core_devices = runtime->devices();
  std::vector<plexus::PluginLoadReport> core_reports = runtime->load_reports();
  std::lock_guard<std::mutex> lock(mu);
  plugins.clear();
  for (const auto& p : core_plugins) {
    const PluginEntry* entry = nullptr;
    for (const PluginEntry& e : plugin_store) {
      if (e.source.lock() == p) entry = &e;
    }
    if (entry == nullptr) {
      PluginEntry e;
      e.source = p;
      e.name = p->name();
      e.version = p->version();
      e.path = p->path();
      e.device_type = p->device_type();
      e.abi_major = p->abi_major();
      e.abi_minor = p->abi_minor();
      e.num_kernels = p->kernels().size();
      plugin_store.push_back(std::move(e));
      entry = &plugin_store.back();
    }
    plugins.push_back(entry);
  }
  devices.clear();
  for (const auto& d : core_devices) {
    const DeviceEntry* entry = nullptr;
    for (const DeviceEntry& e : device_store) {
      if (e.source.lock() == d) entry = &e;
    }
    if (entry == nullptr) {
      DeviceEntry e;
      e.source = d;
      e.name = d->name();
      e.type = d->type();
      e.description = d->info().name;
      e.vendor = d->info().vendor;
      e.plugin_name = d->plugin().name();
      e.total_memory_bytes = d->info().total_memory_bytes;
      e.free_memory_bytes = d->info().free_memory_bytes;
      device_store.push_back(std::move(e));
      entry = &device_store.back();
    }
    devices.push_back(entry);
  }
  for (size_t i = reports.size(); i < core_reports.size(); ++i) {
    reports.push_back({core_reports[i].loaded, core_reports[i].message});
  }
}

extern "C" {

// ---- Runtime -------------------------------------------------------------------

px_code px_runtime_create(const px_runtime_options* options, px_runtime** out_runtime,
                          px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_runtime);
    plexus::RuntimeOptions core_options;
    if (options != nullptr) {
      if (options->struct_size == 0) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": options->struct_size is 0; set it to "
                                      "sizeof(px_runtime_options)"));
      }
      if (PX_HAS_FIELD(options, discover_plugins)) {
        core_options.discover_plugins = options->discover_plugins != 0;
      }
      if (PX_HAS_FIELD(options, synchronous_debug)) {
        core_options.synchronous_debug = options->synchronous_debug != 0;
      }
    }
    auto runtime = plexus::Runtime::Create(std::move(core_options));
    if (!runtime.ok()) return FromAbsl(runtime.status(), status);
    auto result = std::make_unique<px_runtime>();
    result->runtime = *std::move(runtime);
    result->RefreshCache();
    *out_runtime = result.release();
    return Ok(status);
  });
}

void px_runtime_destroy(px_runtime* runtime) { delete runtime; }

px_code px_runtime_load_plugin(px_runtime* runtime, const char* path, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(path);
    auto plugin = runtime->runtime->LoadPlugin(path);
    runtime->RefreshCache();  // a refusal adds a load report too
    if (!plugin.ok()) return FromAbsl(plugin.status(), status);
    return Ok(status);
  });
}

size_t px_runtime_num_plugins(const px_runtime* runtime) {
  return runtime == nullptr ? 0 : runtime->CountOf(runtime->plugins);
}

px_code px_runtime_plugin_info(const px_runtime* runtime, size_t index, px_plugin_info* out_info,
                               px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(out_info);
    if (out_info->struct_size == 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": out_info->struct_size is 0; set it to "
                                    "sizeof(px_plugin_info)"));
    }
    std::lock_guard<std::mutex> lock(runtime->mu);
    if (index >= runtime->plugins.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": plugin index ", index, " is out of range (",
                                    runtime->plugins.size(), " plugins loaded)"));
    }
    const PluginEntry& e = *runtime->plugins[index];
    if (PX_HAS_FIELD(out_info, name)) out_info->name = e.name.c_str();
    if (PX_HAS_FIELD(out_info, version)) out_info->version = e.version.c_str();
    if (PX_HAS_FIELD(out_info, path)) out_info->path = e.path.c_str();
    if (PX_HAS_FIELD(out_info, device_type)) out_info->device_type = e.device_type.c_str();
    if (PX_HAS_FIELD(out_info, abi_major)) out_info->abi_major = e.abi_major;
    if (PX_HAS_FIELD(out_info, abi_minor)) out_info->abi_minor = e.abi_minor;
    if (PX_HAS_FIELD(out_info, num_kernels)) out_info->num_kernels = e.num_kernels;
    return Ok(status);
  });
}

size_t px_runtime_num_devices(const px_runtime* runtime) {
  return runtime == nullptr ? 0 : runtime->CountOf(runtime->devices);
}

px_code px_runtime_device_info(const px_runtime* runtime, size_t index, px_device_info* out_info,
                               px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(out_info);
    if (out_info->struct_size == 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": out_info->struct_size is 0; set it to "
                                    "sizeof(px_device_info)"));
    }
    std::lock_guard<std::mutex> lock(runtime->mu);
    if (index >= runtime->devices.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": device index ", index, " is out of range (",
                                    runtime->devices.size(), " devices present)"));
    }
    const DeviceEntry& e = *runtime->devices[index];
    if (PX_HAS_FIELD(out_info, name)) out_info->name = e.name.c_str();
    if (PX_HAS_FIELD(out_info, type)) out_info->type = e.type.c_str();
    if (PX_HAS_FIELD(out_info, description)) out_info->description = e.description.c_str();
    if (PX_HAS_FIELD(out_info, vendor)) out_info->vendor = e.vendor.c_str();
    if (PX_HAS_FIELD(out_info, plugin_name)) out_info->plugin_name = e.plugin_name.c_str();
    if (PX_HAS_FIELD(out_info, total_memory_bytes)) {
      out_info->total_memory_bytes = e.total_memory_bytes;
    }
    if (PX_HAS_FIELD(out_info, free_memory_bytes)) {
      out_info->free_memory_bytes = e.free_memory_bytes;
    }
    return Ok(status);
  });
}

size_t px_runtime_num_load_reports(const px_runtime* runtime) {
  return runtime == nullptr ? 0 : runtime->CountOf(runtime->reports);
}

px_code px_runtime_load_report(const px_runtime* runtime, size_t index, int* out_loaded,
                               const char** out_message, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(out_loaded);
    PX_REQUIRE_ARG(out_message);
    std::lock_guard<std::mutex> lock(runtime->mu);
    if (index >= runtime->reports.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": report index ", index, " is out of range (",
                                    runtime->reports.size(), " reports)"));
    }
    const ReportEntry& e = runtime->reports[index];
    *out_loaded = e.loaded ? 1 : 0;
    *out_message = e.message.c_str();
    return Ok(status);
  });
}


px_code px_intra_op_threads_set(int32_t threads, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    if (threads < 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": threads is ", threads, "; use 0 (automatic) or more"));
    }
    plexus::SetDefaultIntraOpThreads(threads);
    return Ok(status);
  });
}

px_code px_runtime_unload_plugin(px_runtime* runtime, const char* name, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(name);
    absl::Status s = runtime->runtime->UnloadPlugin(name);
    runtime->RefreshCache();
    if (!s.ok()) return SetStatus(status, static_cast<px_code>(s.code()), absl::StrCat(fn, ": ", s.message()));
    return Ok(status);
  });
}

int32_t px_intra_op_threads_get(void) { return plexus::DefaultIntraOpThreads(); }

}  // extern "C"
