// plexus-plugin-check: the conformance tool for Plexus device plugins.
//
//   plexus-plugin-check [options] PLUGIN.so
//
// Loads the plugin through a strict host of its own, checks the ABI contract
// (plugin_api/include/plexus/plugin_api.h), memory, streams and events, runs
// every registered kernel against the reference kernels, and injects faults.
// Prints a report; exits 0 when nothing failed (skips, each with its reason,
// do not fail), 1 when something failed, 2 on bad usage.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "checks.h"
#include "validate.h"

namespace plexus::conformance {
namespace {

const char kUsage[] =
    "usage: plexus-plugin-check [options] PLUGIN.so\n"
    "\n"
    "Checks a Plexus device plugin against the plugin ABI and its kernels against the\n"
    "reference kernels, and prints a report. Exit status: 0 when nothing failed, 1 when\n"
    "a check failed, 2 on bad usage.\n"
    "\n"
    "options:\n"
    "  --json FILE        also write the report as JSON to FILE ('-': JSON on stdout,\n"
    "                     the human report on stderr)\n"
    "  --reference FILE   the reference plugin (default: $PLEXUS_REFERENCE_PLUGIN, or the\n"
    "                     one installed beside this tool)\n"
    "  --only SECTIONS    comma-separated: abi, memory, streams, kernels, robustness\n"
    "  --ops OPS          comma-separated ops: check only their kernels\n"
    "  --device N         the device ordinal to check (default 0)\n"
    "  --seed N           seed of the random inputs (default 1)\n"
    "  --threads N        threads of the concurrency check (default 8)\n"
    "  --timeout S        a check that makes no progress for S seconds fails as hung\n"
    "                     (default 300)\n"
    "  --verbose          list every kernel cell, not only failures and skips\n"
    "  --validate[=warn]  run the plugins under the validation layer (as PLEXUS_VALIDATE=1\n"
    "                     does): every ABI call is checked too, and a breach fails the\n"
    "                     check that made it (=warn: breaches are only logged)\n";

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// The reference plugin: --reference, $PLEXUS_REFERENCE_PLUGIN, the install
// layout (bin/ beside lib/plexus/) or the build tree (bin/ beside lib/sdk/).
std::string FindReference(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("PLEXUS_REFERENCE_PLUGIN"); env != nullptr && *env) return env;
  std::string dir = ExeDir();
  for (const char* rel : {"/../lib/plexus/libplexus_plugin_reference.so",
                          "/../lib/sdk/libplexus_plugin_reference.so"}) {
    if (Exists(dir + rel)) return dir + rel;
  }
  return "";
}

std::string RealPath(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

void SkipSections(const CheckOptions& options, Report& report, const std::string& reason) {
  for (const char* section : {"memory", "streams", "kernels", "robustness"}) {
    if (options.Wants(section)) report.Skip(section, "all", reason);
  }
}

// The device-dependent sections, with the plugin loaded once. Returns false
// when the plugin cannot be used at all (it did not load, or a host would
// refuse it).
bool CheckLoaded(const CheckOptions& options, Report& report, std::vector<PassingCase>* passing) {
  auto plugin = HarnessPlugin::Load(options.plugin_path, HostOptions{});
  if (!plugin.ok()) {
    if (!options.Wants("abi")) report.Fail("abi", "load", DescribeStatus(plugin.status()));
    SkipSections(options, report, "the plugin did not load (see abi)");
    return false;
  }
  std::vector<std::string> missing = MissingRequiredSlots(**plugin);
  if (!missing.empty()) {
    if (!options.Wants("abi")) {
      report.Fail("abi", "required_slots", absl::StrCat("NULL: ", absl::StrJoin(missing, ", ")));
    }
    SkipSections(options, report,
                 absl::StrCat("required slots are NULL (", absl::StrJoin(missing, ", "),
                              "), so a host refuses the plugin"));
    return false;
  }
  absl::Status s = (*plugin)->RegisterKernels();
  if (!s.ok() && !options.Wants("abi")) report.Fail("abi", "kernel_registration", DescribeStatus(s));
  CheckDevices(options, **plugin, report);
  const PX_PluginTable& t = (*plugin)->table();
  int32_t count = 0;
  s = TakeStatus((*plugin)->services(), t.device_count(t.plugin_state, &count));
  if (!s.ok() || count == 0) {
    SkipSections(options, report,
                 s.ok() ? "the plugin reports no devices (no hardware or driver here); nothing to run on"
                        : "device enumeration failed (see memory.device_count)");
    return true;
  }
  if (options.device_ordinal >= count) {
    report.Fail("memory", "device_open",
                absl::StrCat("--device ", options.device_ordinal, " but the plugin has ", count, " device(s)"));
    return true;
  }
  auto device = HarnessDevice::Open(plugin->get(), options.device_ordinal);
  if (!device.ok()) {
    report.Fail("memory", "device_open", DescribeStatus(device.status()));
    SkipSections(options, report, "device_open failed");
    return true;
  }
  report.Pass("memory", "device_open", absl::StrCat("opened device ", options.device_ordinal));
  if (options.Wants("memory")) CheckMemory(options, **device, report);
  if (options.Wants("streams")) CheckStreams(options, **device, report);

  if (!options.Wants("kernels") && !options.Wants("robustness")) return true;
  // Device memory in use before the kernels, to find kernels that leak.
  auto bytes_in_use = [&](uint64_t* out) {
    if (t.struct_size < offsetof(PX_PluginTable, memory_stats) + sizeof(void*) || t.memory_stats == nullptr) {
      return false;
    }
    PX_MemoryStats stats{};
    stats.struct_size = sizeof(stats);
    if (!(*device)->Check(t.memory_stats((*device)->handle(), &stats)).ok()) return false;
    *out = stats.bytes_in_use;
    return true;
  };
  uint64_t in_use_before = 0;
  bool have_stats = bytes_in_use(&in_use_before);

  KernelRun run;
  std::string reference_path = FindReference(options.reference_path);
  bool same = !reference_path.empty() && RealPath(reference_path) == RealPath(options.plugin_path);
  std::unique_ptr<HarnessPlugin> reference_plugin;
  std::unique_ptr<HarnessDevice> reference_device;
  if (reference_path.empty()) {
    report.Fail("kernels", "reference",
                "the reference plugin was not found: pass --reference FILE or set PLEXUS_REFERENCE_PLUGIN");
  } else if (!same) {
    auto ref = HarnessPlugin::Load(reference_path, HostOptions{});
    if (ref.ok()) s = (*ref)->RegisterKernels();
    auto ref_device = ref.ok() && s.ok() ? HarnessDevice::Open(ref->get(), 0)
                                         : absl::StatusOr<std::unique_ptr<HarnessDevice>>(
                                               ref.ok() ? s : ref.status());
    if (!ref_device.ok()) {
      report.Fail("kernels", "reference",
                  absl::StrCat("the reference plugin ", reference_path, " did not load: ",
                               DescribeStatus(ref_device.status())));
    } else {
      reference_plugin = *std::move(ref);
      reference_device = *std::move(ref_device);
    }
  }
  HarnessDevice* reference = same ? device->get() : reference_device.get();
  if (reference != nullptr) {
    report.SetInfo("reference", same ? "the plugin itself (checking the reference plugin)" : reference_path);
    if (options.Wants("kernels")) {
      run = CheckKernels(options, **device, *reference, report);
    } else {
      // Robustness alone still needs passing cases: run the kernels quietly.
      Report scratch;
      run = CheckKernels(options, **device, *reference, scratch);
    }
  }
  if (options.Wants("robustness")) {
    CheckRobustness(options, **device, run, report);
    uint64_t in_use_after = 0;
    if (have_stats && bytes_in_use(&in_use_after)) {
      if (in_use_after == in_use_before) {
        report.Pass("robustness", "device_memory_leaks",
                    "device bytes_in_use is unchanged after every kernel ran and was freed");
      } else {
        report.Fail("robustness", "device_memory_leaks",
                    absl::StrCat("device bytes_in_use was ", in_use_before, " before the kernels and ",
                                 in_use_after, " after; every launch's buffers were freed, so the "
                                               "plugin keeps ", static_cast<int64_t>(in_use_after - in_use_before),
                                 " bytes"));
      }
    } else {
      report.Skip("robustness", "device_memory_leaks", "memory_stats is not implemented (optional slot)");
    }
  }
  *passing = std::move(run.passing);
  // Kernel instances referenced the plugins' kernel tables: nothing of them
  // may outlive the unload below except graphs and tensors.
  for (PassingCase& c : *passing) c.kernel = nullptr;
  reference_device.reset();
  reference_plugin.reset();
  device->reset();
  return true;
}

// Everything that touches devices or runs kernels, in this process.
void RunDeviceChecks(const CheckOptions& options, Report& report) {
  std::vector<PassingCase> passing;
  bool usable = CheckLoaded(options, report, &passing);
  if (options.Wants("streams") && !passing.empty()) CheckSynchronousDebug(options, passing, report);
  if (options.Wants("robustness")) {
    if (usable) CheckLoadUnload(options, report);
    HostCounters& c = Counters();
    int64_t leaked = c.statuses_created - c.statuses_freed;
    if (leaked == 0) {
      report.Pass("robustness", "status_leaks",
                  absl::StrCat("all ", c.statuses_created.load(), " statuses created went back to the host or were destroyed"));
    } else {
      report.Fail("robustness", "status_leaks",
                  absl::StrCat(leaked, " of ", c.statuses_created.load(),
                               " statuses were neither returned to the host nor destroyed"));
    }
    if (c.bad_calls == 0) {
      report.Pass("robustness", "host_service_calls", "every host service call had valid arguments");
    } else {
      std::lock_guard<std::mutex> lock(c.mu);
      report.Fail("robustness", "host_service_calls",
                  absl::StrCat(c.bad_calls.load(), " calls with bad arguments, e.g. ",
                               absl::StrJoin(c.bad_call_messages, "; ")));
    }
  }

}

// Runs RunDeviceChecks in a child process that streams its results, so that
// a plugin that crashes or hangs ends with a report naming the check it died
// in instead of taking the tool down.
void RunIsolated(const CheckOptions& options, Report& report) {
  int fds[2];
  if (pipe(fds) != 0) {
    RunDeviceChecks(options, report);
    return;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    RunDeviceChecks(options, report);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    Report child;
    child.StreamTo(fds[1]);
    RunDeviceChecks(options, child);
    child.Begin("end", "end");  // the parent knows every check was reported
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string section = "memory", name = "start", pending;
  bool hung = false;
  char buf[65536];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, options.timeout_seconds * 1000);
    if (ready == 0) {
      hung = true;
      kill(pid, SIGKILL);
      break;
    }
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      report.ParseLine(pending.substr(0, newline), &section, &name);
      pending.erase(0, newline + 1);
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (hung) {
    report.Fail(section, name,
                absl::StrCat("no progress for ", options.timeout_seconds,
                             " s: the plugin hangs in this check (killed); the checks after it did not run"));
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    report.Fail(section, name,
                absl::StrCat("the plugin crashed in this check (signal ", sig, ", ", strsignal(sig),
                             "); the checks after it did not run"));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || section != "end") {
    report.Fail(section, name,
                "the checking process ended in this check before reporting everything (did the plugin call exit?)");
  }
}

int Main(int argc, char** argv) {
  CheckOptions options;
  std::string json_path;
  bool json_stdout = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "plexus-plugin-check: %s needs a value\n%s", name, kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](const char* name) {
      std::string v = value(name);
      int n = 0;
      if (!absl::SimpleAtoi(v, &n) || n < 0) {
        std::fprintf(stderr, "plexus-plugin-check: %s wants a number, not '%s'\n", name, v.c_str());
        std::exit(2);
      }
      return n;
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg == "--validate" || arg == "--validate=warn") {
      setenv("PLEXUS_VALIDATE", arg == "--validate" ? "1" : "warn", 1);
    } else if (arg == "--json") {
      json_path = value("--json");
      json_stdout = json_path == "-";
    } else if (arg == "--reference") {
      options.reference_path = value("--reference");
    } else if (arg == "--only") {
      for (absl::string_view s : absl::StrSplit(value("--only"), ',', absl::SkipEmpty())) {
        std::string section(s);
        if (section != "abi" && section != "memory" && section != "streams" && section != "kernels" &&
            section != "robustness") {
          std::fprintf(stderr, "plexus-plugin-check: unknown section '%s'\n%s", section.c_str(), kUsage);
          return 2;
        }
        options.sections.insert(section);
      }
    } else if (arg == "--ops") {
      for (absl::string_view s : absl::StrSplit(value("--ops"), ',', absl::SkipEmpty())) {
        options.ops.insert(std::string(s));
      }
    } else if (arg == "--device") {
      options.device_ordinal = number("--device");
    } else if (arg == "--seed") {
      options.seed = static_cast<uint32_t>(number("--seed"));
    } else if (arg == "--threads") {
      options.threads = std::max(1, number("--threads"));
    } else if (arg == "--timeout") {
      options.timeout_seconds = std::max(1, number("--timeout"));
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "plexus-plugin-check: unknown option %s\n%s", arg.c_str(), kUsage);
      return 2;
    } else if (options.plugin_path.empty()) {
      options.plugin_path = arg;
    } else {
      std::fprintf(stderr, "plexus-plugin-check: one plugin at a time\n%s", kUsage);
      return 2;
    }
  }
  if (options.plugin_path.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  if (!Exists(options.plugin_path)) {
    std::fprintf(stderr, "plexus-plugin-check: cannot read %s\n", options.plugin_path.c_str());
    return 2;
  }

  Report report;
  report.SetInfo("file", options.plugin_path);
  if (options.Wants("abi")) CheckAbi(options, report);
  if (options.Wants("memory") || options.Wants("streams") || options.Wants("kernels") ||
      options.Wants("robustness")) {
    RunIsolated(options, report);
  }

  std::FILE* human = json_stdout ? stderr : stdout;
  report.PrintHuman(human, options.verbose);
  if (!json_path.empty()) {
    std::string json = report.Json();
    if (json_stdout) {
      std::fwrite(json.data(), 1, json.size(), stdout);
    } else {
      std::ofstream out(json_path);
      out << json;
      if (!out) {
        std::fprintf(stderr, "plexus-plugin-check: cannot write %s\n", json_path.c_str());
        return 2;
      }
    }
  }
  return report.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace plexus::conformance

int main(int argc, char** argv) { return plexus::conformance::Main(argc, argv); }
