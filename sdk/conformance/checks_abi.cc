// The abi section: what a host learns before it trusts a plugin.
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks.h"
#include "plexus/op_def.h"

namespace plexus::conformance {

std::string DescribeStatus(const absl::Status& s) {
  return absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message());
}

namespace {

constexpr const char* kSection = "abi";

struct Slot {
  const char* name;
  size_t offset;
  bool required;
};

#define PX_SLOT(field, required) {#field, offsetof(PX_PluginTable, field), required}
const Slot kSlots[] = {
    PX_SLOT(plugin_shutdown, false),   PX_SLOT(register_kernels, true),
    PX_SLOT(device_count, true),       PX_SLOT(device_get_info, true),
    PX_SLOT(device_open, true),        PX_SLOT(device_close, true),
    PX_SLOT(allocate, true),           PX_SLOT(deallocate, true),
    PX_SLOT(host_allocate, false),     PX_SLOT(host_deallocate, false),
    PX_SLOT(memory_stats, false),      PX_SLOT(memcpy_h2d, true),
    PX_SLOT(memcpy_d2h, true),         PX_SLOT(memcpy_d2d, true),
    PX_SLOT(stream_create, true),      PX_SLOT(stream_destroy, true),
    PX_SLOT(stream_synchronize, true), PX_SLOT(stream_get_status, true),
    PX_SLOT(memcpy_h2d_async, false),  PX_SLOT(memcpy_d2h_async, false),
    PX_SLOT(memcpy_d2d_async, false),  PX_SLOT(event_create, true),
    PX_SLOT(event_destroy, true),      PX_SLOT(event_record, true),
    PX_SLOT(event_synchronize, true),  PX_SLOT(stream_wait_event, true),
    PX_SLOT(stream_add_callback, false),
    // ABI 0.5: stream capture, all four or none.
    PX_SLOT(stream_capture_begin, false), PX_SLOT(stream_capture_end, false),
    PX_SLOT(graph_launch, false),      PX_SLOT(graph_destroy, false),
    // ABI 0.8: stream interop, both or neither.
    PX_SLOT(stream_native_handle, false), PX_SLOT(native_stream_wait, false),
};
#undef PX_SLOT

// Optional slots that a plugin fills all together or not at all.
const std::vector<std::vector<const char*>> kSlotGroups = {
    {"stream_capture_begin", "stream_capture_end", "graph_launch", "graph_destroy"},
    {"stream_native_handle", "native_stream_wait"},
};

bool SlotSet(const HarnessPlugin& p, const Slot& slot) {
  if (p.table().struct_size < slot.offset + sizeof(void*)) return false;
  void* fn = nullptr;
  std::memcpy(&fn, p.raw_table().data() + slot.offset, sizeof(fn));
  return fn != nullptr;
}

// Bytes at and past `from` in the table buffer still hold the harness's
// guard pattern (or zero where the struct was zero-filled).
bool GuardIntact(const HarnessPlugin& p, size_t from) {
  const std::vector<unsigned char>& raw = p.raw_table();
  size_t host_size = p.options().table_size;
  for (size_t i = from; i < raw.size(); ++i) {
    unsigned char expected = i < host_size ? 0 : 0xA5;
    if (raw[i] != expected) return false;
  }
  return true;
}

void CheckProbe(const CheckOptions& options, Report& report, PX_PluginProbeInfo* out) {
  void* handle = dlopen(options.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    report.Fail(kSection, "load", absl::StrCat("dlopen failed: ", err ? err : "unknown error"));
    return;
  }
  report.Pass(kSection, "load", "dlopen succeeded; every symbol the plugin needs resolved");
  auto probe = reinterpret_cast<PX_PluginProbeFn>(dlsym(handle, PX_PLUGIN_PROBE_SYMBOL));
  auto init = dlsym(handle, PX_PLUGIN_INITIALIZE_SYMBOL);
  if (probe == nullptr || init == nullptr) {
    std::vector<std::string> missing;
    if (probe == nullptr) missing.push_back(PX_PLUGIN_PROBE_SYMBOL);
    if (init == nullptr) missing.push_back(PX_PLUGIN_INITIALIZE_SYMBOL);
    report.Fail(kSection, "entry_symbols",
                absl::StrCat("not exported: ", absl::StrJoin(missing, ", "),
                             " (mark them PX_PLUGIN_EXPORT, with C linkage)"));
    dlclose(handle);
    return;
  }
  report.Pass(kSection, "entry_symbols", "PX_PluginProbe and PX_PluginInitialize exported");

  // The probe struct is frozen: fill it twice, once with guard bytes behind a
  // full struct and once with a struct too small to hold anything.
  struct {
    PX_PluginProbeInfo info;
    unsigned char guard[32];
  } buf;
  std::memset(&buf, 0, sizeof(buf));
  std::memset(buf.guard, 0xA5, sizeof(buf.guard));
  buf.info.struct_size = sizeof(PX_PluginProbeInfo);
  probe(&buf.info);
  bool guard_ok = true;
  for (unsigned char c : buf.guard) guard_ok &= c == 0xA5;
  PX_PluginProbeInfo info = buf.info;
  *out = info;
  std::vector<std::string> problems;
  if (!guard_ok) problems.push_back("wrote past the end of PX_PluginProbeInfo");
  if (info.struct_size != sizeof(PX_PluginProbeInfo)) problems.push_back("changed struct_size");
  if (info.plugin_name == nullptr || info.plugin_name[0] == '\0') problems.push_back("no plugin_name");
  if (info.abi_major != PX_ABI_VERSION_MAJOR) {
    problems.push_back(absl::StrCat("speaks ABI major ", info.abi_major, ", this host ",
                                    PX_ABI_VERSION_MAJOR));
  }
  if (info.abi_min_minor > info.abi_max_minor) problems.push_back("abi_min_minor > abi_max_minor");
  struct {
    size_t struct_size;
    unsigned char guard[sizeof(PX_PluginProbeInfo)];
  } tiny;
  std::memset(&tiny, 0xA5, sizeof(tiny));
  tiny.struct_size = sizeof(size_t);
  probe(reinterpret_cast<PX_PluginProbeInfo*>(&tiny));
  for (unsigned char c : tiny.guard) {
    if (c != 0xA5) {
      problems.push_back("wrote into a probe struct whose struct_size says it has no fields");
      break;
    }
  }
  if (problems.empty()) {
    report.Pass(kSection, "probe",
                absl::StrCat("'", info.plugin_name ? info.plugin_name : "", "' speaks ABI ", info.abi_major, ".",
                             info.abi_min_minor, "-", info.abi_major, ".", info.abi_max_minor,
                             ", score ", info.score, "; respects struct_size"));
  } else {
    report.Fail(kSection, "probe", absl::StrJoin(problems, "; "));
  }
  dlclose(handle);
}

// Loads with `options` and returns the result; the caller checks it.
absl::StatusOr<std::unique_ptr<HarnessPlugin>> LoadWith(const CheckOptions& options,
                                                        const HostOptions& host) {
  return HarnessPlugin::Load(options.plugin_path, host);
}

void CheckNegotiation(const CheckOptions& options, const PX_PluginProbeInfo& probe,
                      Report& report) {
  const uint32_t ours = PX_ABI_VERSION_MINOR;
  // 1. This host: the newest minor both speak.
  {
    auto p = LoadWith(options, HostOptions{});
    if (!p.ok()) {
      report.Fail(kSection, "negotiation.current_host",
                  absl::StrCat("refused a host speaking 0.0-0.", ours, ": ", DescribeStatus(p.status())));
    } else {
      uint32_t want = std::min(ours, probe.abi_max_minor);
      uint32_t got = (*p)->table().abi_minor;
      if (got != want) {
        report.Fail(kSection, "negotiation.current_host",
                    absl::StrCat("chose minor ", got, "; the newest both speak is ", want));
      } else {
        report.Pass(kSection, "negotiation.current_host",
                    absl::StrCat("host 0.0-0.", ours, ": chose 0.", got));
      }
    }
  }
  // 2. An older host: speaks only minor 0, with a table that ends before
  // the last slot (as a host built before that slot existed would have).
  {
    HostOptions older;
    older.abi_min_minor = 0;
    older.abi_max_minor = 0;
    older.table_size = offsetof(PX_PluginTable, stream_add_callback);
    auto p = LoadWith(options, older);
    if (probe.abi_min_minor > 0) {
      if (p.ok()) {
        report.Fail(kSection, "negotiation.older_host",
                    absl::StrCat("accepted a host speaking only 0.0 though it probes as 0.",
                                 probe.abi_min_minor, "+"));
      } else {
        report.Pass(kSection, "negotiation.older_host",
                    absl::StrCat("refused a 0.0-only host as it should: ", p.status().message()));
      }
    } else if (!p.ok()) {
      report.Fail(kSection, "negotiation.older_host",
                  absl::StrCat("refused a 0.0-only host though it probes as 0.0+: ",
                               DescribeStatus(p.status())));
    } else {
      std::vector<std::string> problems;
      if ((*p)->table().abi_minor != 0) problems.push_back("did not choose minor 0");
      if ((*p)->table().struct_size > older.table_size) problems.push_back("raised struct_size");
      if (!GuardIntact(**p, older.table_size)) {
        problems.push_back("wrote past the struct_size of the host's table");
      }
      if (problems.empty()) {
        report.Pass(kSection, "negotiation.older_host",
                    "a 0.0-only host with a shorter table: chose 0.0, wrote nothing past it");
      } else {
        report.Fail(kSection, "negotiation.older_host", absl::StrJoin(problems, "; "));
      }
    }
  }
  // 3. A newer host: speaks minors up to ours + 5 with a longer table.
  {
    HostOptions newer;
    newer.abi_max_minor = ours + 5;
    newer.table_size = sizeof(PX_PluginTable) + 64;
    auto p = LoadWith(options, newer);
    if (!p.ok()) {
      report.Fail(kSection, "negotiation.newer_host",
                  absl::StrCat("refused a host speaking 0.0-0.", ours + 5, ": ",
                               DescribeStatus(p.status())));
    } else {
      std::vector<std::string> problems;
      const PX_PluginTable& t = (*p)->table();
      if (t.abi_minor > probe.abi_max_minor) problems.push_back("chose a minor it does not speak");
      if (t.struct_size > sizeof(PX_PluginTable)) {
        problems.push_back(absl::StrCat("left struct_size at ", t.struct_size,
                                        "; a plugin lowers it to its own sizeof (at most ",
                                        sizeof(PX_PluginTable), ")"));
      }
      if (!GuardIntact(**p, sizeof(PX_PluginTable))) {
        problems.push_back("wrote into the part of the table it does not know");
      }
      if (problems.empty()) {
        report.Pass(kSection, "negotiation.newer_host",
                    absl::StrCat("host 0.0-0.", ours + 5, " with a longer table: chose 0.", t.abi_minor,
                                 ", struct_size ", t.struct_size));
      } else {
        report.Fail(kSection, "negotiation.newer_host", absl::StrJoin(problems, "; "));
      }
    }
  }
  // 4. No common version: another major, and minors the plugin lacks.
  {
    HostOptions other;
    other.abi_major = PX_ABI_VERSION_MAJOR + 1;
    auto p = LoadWith(options, other);
    if (p.ok()) {
      report.Fail(kSection, "negotiation.other_major",
                  absl::StrCat("accepted a host of ABI major ", other.abi_major));
    } else if (p.status().message().empty()) {
      report.Fail(kSection, "negotiation.other_major", "refused, but with an empty message");
    } else {
      report.Pass(kSection, "negotiation.other_major",
                  absl::StrCat("refused major ", other.abi_major, ": ", p.status().message()));
    }
    HostOptions future;
    future.abi_min_minor = probe.abi_max_minor + 1;
    future.abi_max_minor = probe.abi_max_minor + 3;
    p = LoadWith(options, future);
    if (p.ok()) {
      report.Fail(kSection, "negotiation.no_common_minor",
                  absl::StrCat("accepted a host speaking only 0.", future.abi_min_minor, "-0.",
                               future.abi_max_minor));
    } else {
      report.Pass(kSection, "negotiation.no_common_minor",
                  absl::StrCat("refused a host speaking only 0.", future.abi_min_minor, "-0.",
                               future.abi_max_minor, ": ", p.status().message()));
    }
  }
}

void CheckTable(const CheckOptions& options, Report& report) {
  auto loaded = LoadWith(options, HostOptions{});
  if (!loaded.ok()) return;  // reported by the negotiation checks
  HarnessPlugin& p = **loaded;
  const PX_PluginTable& t = p.table();
  std::vector<std::string> missing, optional_set, optional_unset;
  for (const Slot& slot : kSlots) {
    bool set = SlotSet(p, slot);
    if (slot.required && !set) missing.push_back(slot.name);
    if (!slot.required) (set ? optional_set : optional_unset).push_back(slot.name);
  }
  if (missing.empty()) {
    report.Pass(kSection, "required_slots", "every required slot is set");
  } else {
    report.Fail(kSection, "required_slots",
                absl::StrCat("NULL required slots: ", absl::StrJoin(missing, ", "),
                             " (a host refuses the plugin)"));
  }
  report.Pass(kSection, "optional_slots",
              absl::StrCat("implemented: ", optional_set.empty() ? "none" : absl::StrJoin(optional_set, ", "),
                           "; not implemented (the host reports UNIMPLEMENTED): ",
                           optional_unset.empty() ? "none" : absl::StrJoin(optional_unset, ", ")));
  std::vector<std::string> problems;
  auto empty = [](const char* s) { return s == nullptr || s[0] == '\0'; };
  if (empty(t.plugin_name)) problems.push_back("plugin_name is empty");
  if (empty(t.plugin_version)) problems.push_back("plugin_version is empty");
  if (empty(t.platform_name)) problems.push_back("platform_name is empty");
  if (empty(t.device_type)) {
    problems.push_back("device_type is empty");
  } else {
    for (const char* c = t.device_type; *c; ++c) {
      if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) {
        problems.push_back(absl::StrCat("device_type '", t.device_type,
                                        "' is not upper-case letters, digits and _"));
        break;
      }
    }
  }
  for (const std::vector<const char*>& group : kSlotGroups) {
    std::vector<std::string> set, unset;
    for (const char* name : group) {
      for (const Slot& slot : kSlots) {
        if (std::strcmp(slot.name, name) == 0) (SlotSet(p, slot) ? set : unset).push_back(name);
      }
    }
    if (!set.empty() && !unset.empty()) {
      problems.push_back(absl::StrCat("fills ", absl::StrJoin(set, ", "), " but not ", absl::StrJoin(unset, ", "),
                                      " (these slots go together: a host uses none of them)"));
    }
  }
  if (t.struct_size < offsetof(PX_PluginTable, stream_wait_event) + sizeof(void*)) {
    problems.push_back(absl::StrCat("struct_size ", t.struct_size, " is too small to hold the required slots"));
  }
  if (problems.empty()) {
    report.Pass(kSection, "table",
                absl::StrCat("'", t.plugin_name, "' ", t.plugin_version, ", platform ", t.platform_name,
                             ", device type ", t.device_type, ", DLPack device type ",
                             t.dlpack_device_type, ", struct_size ", t.struct_size));
    report.SetInfo("plugin", absl::StrCat(t.plugin_name, " ", t.plugin_version, " (platform ",
                                          t.platform_name, ", device type ", t.device_type, ")"));
  } else {
    report.Fail(kSection, "table", absl::StrJoin(problems, "; "));
  }

  // Kernel registration: every def valid, every op known to Plexus.
  absl::Status s = p.RegisterKernels();
  if (!s.ok()) {
    report.Fail(kSection, "kernel_registration", absl::StrCat("register_kernels failed: ", DescribeStatus(s)));
    return;
  }
  std::set<std::string> ops, unknown;
  std::vector<std::string> bad;
  for (const KernelInfo& k : p.kernels()) {
    ops.insert(k.op);
    const OpDef* def = OpRegistry::Global().Find(k.op);
    if (def == nullptr) {
      unknown.insert(k.op);
      continue;
    }
    for (const auto& [attr, allowed] : k.type_constraints) {
      const AttrSpec* spec = def->FindAttr(attr);
      if (spec == nullptr || (spec->type != "type" && spec->type != "list(type)")) {
        bad.push_back(absl::StrCat(k.op, ": constraint on '", attr, "', which is not a type attribute of the op"));
      }
    }
    for (int32_t i : k.host_memory_inputs) {
      if (i < 0) bad.push_back(absl::StrCat(k.op, ": negative host-memory input index ", i));
    }
  }
  if (!unknown.empty()) {
    bad.push_back(absl::StrCat("kernels for ops Plexus does not define (never called): ",
                               absl::StrJoin(unknown, ", ")));
  }
  if (bad.empty()) {
    report.Pass(kSection, "kernel_registration",
                absl::StrCat(p.kernels().size(), " kernels for ", ops.size(), " ops, all valid"));
  } else {
    report.Fail(kSection, "kernel_registration", absl::StrJoin(bad, "; "));
  }
  CheckKernelSignatures(p, report);
}

}  // namespace

std::vector<std::string> MissingRequiredSlots(const HarnessPlugin& plugin) {
  std::vector<std::string> missing;
  for (const Slot& slot : kSlots) {
    if (slot.required && !SlotSet(plugin, slot)) missing.push_back(slot.name);
  }
  return missing;
}

void CheckAbi(const CheckOptions& options, Report& report) {
  PX_PluginProbeInfo probe{};
  CheckProbe(options, report, &probe);
  if (probe.struct_size == 0) return;  // not loadable, or no entry symbols
  report.SetInfo("ABI", absl::StrCat("speaks ", probe.abi_major, ".", probe.abi_min_minor, "-",
                                     probe.abi_major, ".", probe.abi_max_minor, "; this host speaks ",
                                     PX_ABI_VERSION_MAJOR, ".0-", PX_ABI_VERSION_MAJOR, ".",
                                     PX_ABI_VERSION_MINOR));
  CheckNegotiation(options, probe, report);
  CheckTable(options, report);
}

}  // namespace plexus::conformance
