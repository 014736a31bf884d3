// The sections of plexus-plugin-check. Each adds its results to the report;
// none throws or aborts on a misbehaving plugin it can detect.
#ifndef PLEXUS_SDK_CONFORMANCE_CHECKS_H_
#define PLEXUS_SDK_CONFORMANCE_CHECKS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cases.h"
#include "harness_host.h"
#include "report.h"

namespace plexus::conformance {

struct CheckOptions {
  std::string plugin_path;
  std::string reference_path;  // the reference plugin
  int device_ordinal = 0;
  uint32_t seed = 1;
  std::set<std::string> sections;  // empty: all
  std::set<std::string> ops;       // empty: every registered op
  int threads = 8;
  int load_cycles = 20;
  int timeout_seconds = 300;
  bool verbose = false;

  bool Wants(const std::string& section) const {
    return sections.empty() || sections.count(section) > 0;
  }
};

// Probe, entry symbols, version negotiation with older and newer hosts and
// a host of another major, struct sizes and guard bytes, required and
// optional slots, kernel registration. Loads and unloads the plugin itself.
void CheckAbi(const CheckOptions& options, Report& report);
// abi.kernel_signatures: the registered kernels against the SDK's
// op-signature table (checks_signatures.cc). Call after RegisterKernels.
void CheckKernelSignatures(const HarnessPlugin& plugin, Report& report);
// The required table slots the plugin left NULL.
std::vector<std::string> MissingRequiredSlots(const HarnessPlugin& plugin);

// Device enumeration and info, then memory: many sizes, 0 and huge,
// alignment, statistics, copies in every direction, synchronous and on
// streams, pinned host memory.
void CheckDevices(const CheckOptions& options, HarnessPlugin& plugin, Report& report);
void CheckMemory(const CheckOptions& options, HarnessDevice& device, Report& report);

// Streams and events: ordering, cross-stream waits, event status, errors
// carried by events and kept per stream, host callbacks.
void CheckStreams(const CheckOptions& options, HarnessDevice& device, Report& report);

// Every device the plugin reports, not only `device` (checks_async.cc).
// memory.every_device_open: each other ordinal opens, allocates and copies;
// a failure names the device. Called at the end of CheckMemory.
void CheckEveryDeviceOpens(const CheckOptions& options, HarnessDevice& device, Report& report);
// streams.events_every_device, async_copies_every_device and
// callback_every_device on each device: event_synchronize and
// stream_wait_event order real work, asynchronous copies of 0 B to 1 MiB at
// unaligned offsets move exactly their bytes, a host callback runs after
// earlier work and once. Called at the end of CheckStreams.
void CheckStreamsEveryDevice(const CheckOptions& options, HarnessDevice& device, Report& report);

// What the kernel section leaves for the robustness section: one passing
// case per op, to run again under fault injection and from many threads.
struct PassingCase {
  std::string op;
  std::string label;
  std::shared_ptr<Graph> graph;
  const KernelInfo* kernel = nullptr;
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;  // the reference's outputs
  std::optional<Tolerance> tolerance;  // the case's own, when it has one
};

struct KernelRun {
  std::vector<PassingCase> passing;  // the first passing case of each op
  int error_cases_run = 0;           // catalog cases the kernels must refuse
  int error_cases_passed = 0;
};

// Every registered kernel against the reference kernels for every dtype it
// claims; fills the coverage table.
KernelRun CheckKernels(const CheckOptions& options, HarnessDevice& device, HarnessDevice& reference,
                       Report& report);

// Fault injection (output allocation failure, kernel errors), many threads
// launching kernels at once, the synchronous debug mode, repeated load and
// unload, leaks of statuses and device memory.
void CheckRobustness(const CheckOptions& options, HarnessDevice& device, const KernelRun& run,
                     Report& report);
void CheckSynchronousDebug(const CheckOptions& options, const std::vector<PassingCase>& cases,
                           Report& report);
void CheckLoadUnload(const CheckOptions& options, Report& report);

// Small shared helpers.
std::string DescribeStatus(const absl::Status& s);  // "INVALID_ARGUMENT: message"
int64_t ResidentBytes();  // of this process, from /proc/self/statm

}  // namespace plexus::conformance

#endif  // PLEXUS_SDK_CONFORMANCE_CHECKS_H_
