// The robustness section: fault injection, concurrency, the synchronous
// debug mode, and repeated load and unload.
#include <fstream>
#include <thread>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cases.h"
#include "checks.h"

namespace plexus::conformance {
namespace {

constexpr const char* kSection = "robustness";

// Compares a run's outputs with the reference's; "" when they match.
std::string Compare(const std::vector<Tensor>& got, const PassingCase& c) {
  const std::vector<Tensor>& want = c.expected;
  if (got.size() != want.size()) return absl::StrCat(got.size(), " outputs, expected ", want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    absl::Status s = CompareTensors(got[k], want[k], c.tolerance.value_or(DefaultTolerance(want[k].dtype())));
    if (!s.ok()) return absl::StrCat("output ", k, ": ", s.message());
  }
  return "";
}

// The cases worth running from many threads: the ones with the most input
// data (a kernel that keeps per-launch state in its instance shows there).
std::vector<const PassingCase*> Heaviest(const std::vector<PassingCase>& cases, size_t n) {
  std::vector<const PassingCase*> sorted;
  for (const PassingCase& c : cases) sorted.push_back(&c);
  auto weight = [](const PassingCase* c) {
    int64_t w = 0;
    for (const Tensor& t : c->inputs) w += t.num_elements();
    return w;
  };
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const PassingCase* a, const PassingCase* b) { return weight(a) > weight(b); });
  if (sorted.size() > n) sorted.resize(n);
  return sorted;
}

// AddressSanitizer keeps freed memory in a quarantine, so resident memory
// grows with every allocation whatever the plugin does; its LeakSanitizer
// checks for leaks instead.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

void CheckRobustness(const CheckOptions& options, HarnessDevice& device, const KernelRun& run,
                     Report& report) {
  const PX_PluginTable& t = device.table();
  HarnessPlugin& plugin = device.plugin();
  PX_Stream* stream = nullptr;
  absl::Status s = device.Check(t.stream_create(device.handle(), &stream));
  if (!s.ok()) {
    report.Fail(kSection, "setup", absl::StrCat("stream_create: ", DescribeStatus(s)));
    return;
  }

  // Output allocation failure: every kernel must return the error, and the
  // device must work afterwards.
  report.Begin(kSection, "allocation_failure");
  if (run.passing.empty()) {
    report.Skip(kSection, "allocation_failure", "no kernel passed a case to inject failures into");
  } else {
    std::vector<std::string> problems;
    int checked = 0;
    for (const PassingCase& c : run.passing) {
      const Node* node = OpNode(*c.graph);
      if (node->num_outputs() == 0) continue;
      auto instance = KernelInstance::Create(&device, c.kernel, node);
      if (!instance.ok()) {
        problems.push_back(absl::StrCat(c.op, ": create: ", DescribeStatus(instance.status())));
        continue;
      }
      int64_t before = plugin.injected_failures();
      plugin.FailOutputAllocations(-1);
      auto failed = (*instance)->Run(c.inputs, stream, OutputMode::kKernelAllocated);
      plugin.FailOutputAllocations(0);
      bool injected = plugin.injected_failures() > before;
      if (failed.ok()) {
        problems.push_back(injected ? absl::StrCat(c.op, ": returned OK although output_allocate failed")
                                    : absl::StrCat(c.op, ": returned OK without calling output_allocate"));
        continue;
      }
      if (!injected) {
        problems.push_back(absl::StrCat(c.op, ": failed before allocating: ", DescribeStatus(failed.status())));
        continue;
      }
      absl::Status stream_status = device.Check(t.stream_get_status(device.handle(), stream));
      if (!stream_status.ok()) {
        problems.push_back(absl::StrCat(c.op, ": the failed launch left the stream failed: ",
                                        DescribeStatus(stream_status)));
        break;
      }
      auto again = (*instance)->Run(c.inputs, stream, OutputMode::kKernelAllocated);
      std::string mismatch = again.ok() ? Compare(*again, c) : DescribeStatus(again.status());
      if (!mismatch.empty()) {
        problems.push_back(absl::StrCat(c.op, ": after the failure the same instance gives: ", mismatch));
      }
      ++checked;
    }
    if (problems.empty()) {
      report.Pass(kSection, "allocation_failure",
                  absl::StrCat(checked, " ops: each returned the injected output_allocate failure and "
                                        "ran correctly right after"));
    } else {
      report.Fail(kSection, "allocation_failure",
                  absl::StrCat(problems.size(), " problems: ", absl::StrJoin(problems, "; ")));
    }
  }

  // Kernel errors: the catalog's error cases, refused with the reference's
  // code, leaving the stream usable (checked case by case in kernels).
  if (run.error_cases_run == 0) {
    report.Skip(kSection, "kernel_errors",
                "none of the plugin's ops has catalog cases that a kernel must refuse");
  } else if (run.error_cases_passed == run.error_cases_run) {
    report.Pass(kSection, "kernel_errors",
                absl::StrCat(run.error_cases_run, " bad-input cases refused with the reference's code; "
                                                  "streams stayed usable"));
  } else {
    report.Fail(kSection, "kernel_errors",
                absl::StrCat(run.error_cases_run - run.error_cases_passed, " of ", run.error_cases_run,
                             " bad-input cases mishandled (see the kernel details)"));
  }

  // Many threads launching the same kernel instances at once, each on its
  // own stream.
  report.Begin(kSection, "threads");
  std::vector<const PassingCase*> heavy = Heaviest(run.passing, 4);
  if (heavy.empty()) {
    report.Skip(kSection, "threads", "no kernel passed a case to run concurrently");
  } else {
    std::vector<std::unique_ptr<KernelInstance>> instances;
    std::string setup_failure;
    for (const PassingCase* c : heavy) {
      auto instance = KernelInstance::Create(&device, c->kernel, OpNode(*c->graph));
      if (!instance.ok()) {
        setup_failure = absl::StrCat(c->op, ": ", DescribeStatus(instance.status()));
        break;
      }
      instances.push_back(*std::move(instance));
    }
    std::mutex mu;
    std::vector<std::string> problems;
    if (setup_failure.empty()) {
      std::vector<std::thread> threads;
      for (int i = 0; i < options.threads; ++i) {
        threads.emplace_back([&, i] {
          PX_Stream* own = nullptr;
          absl::Status st = device.Check(t.stream_create(device.handle(), &own));
          if (!st.ok()) {
            std::lock_guard<std::mutex> lock(mu);
            problems.push_back(absl::StrCat("thread ", i, ": stream_create: ", DescribeStatus(st)));
            return;
          }
          for (int iter = 0; iter < 12; ++iter) {
            size_t which = static_cast<size_t>(i + iter) % heavy.size();
            OutputMode mode = (iter % 2) ? OutputMode::kKernelAllocated : OutputMode::kHostAllocated;
            auto got = instances[which]->Run(heavy[which]->inputs, own, mode);
            std::string mismatch = got.ok() ? Compare(*got, *heavy[which]) : DescribeStatus(got.status());
            if (!mismatch.empty()) {
              std::lock_guard<std::mutex> lock(mu);
              if (problems.size() < 5) {
                problems.push_back(absl::StrCat(heavy[which]->op, " on thread ", i, ": ", mismatch));
              }
            }
          }
          t.stream_destroy(device.handle(), own);
        });
      }
      for (std::thread& th : threads) th.join();
    } else {
      problems.push_back(setup_failure);
    }
    std::vector<std::string> names;
    for (const PassingCase* c : heavy) names.push_back(c->op);
    if (problems.empty()) {
      report.Pass(kSection, "threads",
                  absl::StrCat(options.threads, " threads x 12 launches of shared instances of ",
                               absl::StrJoin(names, ", "), ", each thread on its own stream: all correct"));
    } else {
      report.Fail(kSection, "threads", absl::StrJoin(problems, "; "));
    }
  }
  t.stream_destroy(device.handle(), stream);
}

void CheckSynchronousDebug(const CheckOptions& options, const std::vector<PassingCase>& cases,
                           Report& report) {
  report.Begin("streams", "synchronous_debug");
  HostOptions host;
  host.synchronous_debug = true;
  auto plugin = HarnessPlugin::Load(options.plugin_path, host);
  if (!plugin.ok()) {
    report.Fail("streams", "synchronous_debug",
                absl::StrCat("refused to load in synchronous debug mode: ", DescribeStatus(plugin.status())));
    return;
  }
  absl::Status s = (*plugin)->RegisterKernels();
  auto device = s.ok() ? HarnessDevice::Open(plugin->get(), options.device_ordinal)
                       : absl::StatusOr<std::unique_ptr<HarnessDevice>>(s);
  if (!device.ok()) {
    report.Fail("streams", "synchronous_debug", DescribeStatus(device.status()));
    return;
  }
  const PX_PluginTable& t = (*device)->table();
  PX_Stream* stream = nullptr;
  s = (*device)->Check(t.stream_create((*device)->handle(), &stream));
  if (!s.ok()) {
    report.Fail("streams", "synchronous_debug", DescribeStatus(s));
    return;
  }
  std::vector<std::string> problems;
  int checked = 0;
  for (const PassingCase& c : cases) {
    if (checked == 30) break;
    const Node* node = OpNode(*c.graph);
    const KernelInfo* kernel = (*plugin)->FindKernel(*node);
    if (kernel == nullptr) {
      problems.push_back(absl::StrCat(c.op, ": the kernel is not registered in synchronous debug mode"));
      continue;
    }
    auto instance = KernelInstance::Create(device->get(), kernel, node);
    if (!instance.ok()) {
      problems.push_back(absl::StrCat(c.op, ": ", DescribeStatus(instance.status())));
      continue;
    }
    // Read the outputs without synchronizing the stream: in debug mode the
    // launch is complete when compute returns.
    auto got = (*instance)->Run(c.inputs, stream, OutputMode::kHostAllocated, /*skip_sync=*/true);
    std::string mismatch = got.ok() ? Compare(*got, c) : DescribeStatus(got.status());
    if (!mismatch.empty()) problems.push_back(absl::StrCat(c.op, ": ", mismatch));
    ++checked;
  }
  t.stream_destroy((*device)->handle(), stream);
  if (cases.empty()) {
    report.Skip("streams", "synchronous_debug", "no kernel passed a case to rerun in debug mode");
  } else if (problems.empty()) {
    report.Pass("streams", "synchronous_debug",
                absl::StrCat(checked, " kernels loaded with synchronous_debug = 1: outputs complete "
                                      "when compute returns, without a stream synchronize"));
  } else {
    report.Fail("streams", "synchronous_debug", absl::StrJoin(problems, "; "));
  }
}

void CheckLoadUnload(const CheckOptions& options, Report& report) {
  report.Begin(kSection, "load_unload");
  int64_t rss_after_warmup = 0;
  const int warmup = 3;
  for (int cycle = 0; cycle < options.load_cycles; ++cycle) {
    auto plugin = HarnessPlugin::Load(options.plugin_path, HostOptions{});
    if (!plugin.ok()) {
      report.Fail(kSection, "load_unload",
                  absl::StrCat("load ", cycle + 1, " failed: ", DescribeStatus(plugin.status())));
      return;
    }
    absl::Status s = (*plugin)->RegisterKernels();
    int32_t count = 0;
    const PX_PluginTable& t = (*plugin)->table();
    // A failing device_count is reported by memory.device_count; here it
    // only means there is no device to open.
    if (s.ok() && !TakeStatus((*plugin)->services(), t.device_count(t.plugin_state, &count)).ok()) count = 0;
    if (s.ok() && count > 0) {
      auto device = HarnessDevice::Open(plugin->get(), options.device_ordinal);
      s = device.status();
      if (s.ok()) {
        void* p = nullptr;
        s = (*device)->Check(t.allocate((*device)->handle(), 1 << 20, 64, &p));
        if (s.ok()) t.deallocate((*device)->handle(), p);
        PX_Stream* stream = nullptr;
        if (s.ok()) s = (*device)->Check(t.stream_create((*device)->handle(), &stream));
        if (s.ok()) t.stream_destroy((*device)->handle(), stream);
      }
    }
    if (!s.ok()) {
      report.Fail(kSection, "load_unload", absl::StrCat("cycle ", cycle + 1, ": ", DescribeStatus(s)));
      return;
    }
    plugin->reset();
    if (cycle + 1 == warmup) rss_after_warmup = ResidentBytes();
  }
  int64_t growth = ResidentBytes() - rss_after_warmup;
  const int64_t kLimit = 8 << 20;
  int cycles = options.load_cycles - warmup;
  if (kUnderAddressSanitizer) {
    report.Pass(kSection, "load_unload",
                absl::StrCat(options.load_cycles, " cycles of load, initialize, register, open, allocate, "
                                                  "close, shutdown and unload; resident memory not checked "
                                                  "(this tool is built with AddressSanitizer, whose quarantine "
                                                  "keeps freed memory)"));
  } else if (growth > kLimit) {
    report.Fail(kSection, "load_unload",
                absl::StrCat("resident memory grew by ", growth >> 10, " KiB over ", cycles,
                             " load/initialize/register/open/close/shutdown/unload cycles (limit ",
                             kLimit >> 10, " KiB)"));
  } else {
    report.Pass(kSection, "load_unload",
                absl::StrCat(options.load_cycles, " cycles of load, initialize, register, open, allocate, "
                                                  "close, shutdown and unload; resident memory grew ",
                             growth >> 10, " KiB over the last ", cycles));
  }
}

}  // namespace plexus::conformance
