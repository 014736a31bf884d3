// Fault injection: environment knobs that make the wrapped plugin's
// allocations, streams, events and kernels fail or slow down on request
// (docs/plugin_guide.md, "Validation layer and fault injection"). Each knob
// is read at every call that it concerns, so a test can set and clear it
// between runs; counting starts again whenever a knob's value changes.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "layer.h"

namespace pxv {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

// PLEXUS_FAULT_PLUGIN limits every knob to the plugins it names.
bool Applies(Layer* layer) {
  const std::string only = Env("PLEXUS_FAULT_PLUGIN");
  if (only.empty()) return true;
  for (const std::string& name : Split(only, ',')) {
    if (name == layer->name) return true;
  }
  return false;
}

// Counts one call under `key` (reset when the knob's value changed) and
// returns the count.
long Count(Layer* layer, const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(layer->fault_mu);
  auto& [seen, count] = layer->fault_counters[key];
  if (seen != value) {
    seen = value;
    count = 0;
  }
  return ++count;
}

// "N" (the Nth only), "N+" (the Nth and every later one) or "" (every one).
bool Hits(const std::string& spec, long count) {
  if (spec.empty()) return true;
  const bool onward = spec.back() == '+';
  const long n = std::strtol(spec.c_str(), nullptr, 10);
  return onward ? count >= n : count == n;
}

}  // namespace

PX_Status* FaultAllocate(Layer* layer, size_t bytes) {
  const std::string at = Env("PLEXUS_FAULT_ALLOC_FAIL_AT");
  const std::string budget = Env("PLEXUS_FAULT_ALLOC_BUDGET");
  if ((at.empty() && budget.empty()) || !Applies(layer)) return nullptr;
  if (!at.empty()) {
    const long count = Count(layer, "alloc", at);
    if (Hits(at, count)) {
      return MakeStatus(layer, PX_CODE_RESOURCE_EXHAUSTED,
                        "fault injection (PLEXUS_FAULT_ALLOC_FAIL_AT=" + at + "): allocation " +
                            std::to_string(count) + " of plugin '" + layer->name + "' (" + std::to_string(bytes) +
                            " bytes) refused as out of memory");
    }
  }
  if (!budget.empty()) {
    const unsigned long long limit = std::strtoull(budget.c_str(), nullptr, 10);
    const uint64_t in_use = layer->bytes_in_use.load();
    if (in_use + bytes > limit) {
      return MakeStatus(layer, PX_CODE_RESOURCE_EXHAUSTED,
                        "fault injection (PLEXUS_FAULT_ALLOC_BUDGET=" + budget + "): plugin '" + layer->name +
                            "' cannot allocate " + std::to_string(bytes) + " bytes with " +
                            std::to_string(in_use) + " in use (out of memory)");
    }
  }
  return nullptr;
}

PX_Status* FaultCall(Layer* layer, const char* knob, const char* call) {
  const std::string value = Env(knob);
  if (value.empty() || !Applies(layer)) return nullptr;
  for (const std::string& entry : Split(value, ',')) {
    const size_t colon = entry.find(':');
    const std::string name = entry.substr(0, colon);
    if (name != call) continue;
    const std::string spec = colon == std::string::npos ? "" : entry.substr(colon + 1);
    const long count = Count(layer, std::string(knob) + "/" + call, value);
    if (!Hits(spec, count)) return nullptr;
    return MakeStatus(layer, PX_CODE_UNAVAILABLE, "fault injection (" + std::string(knob) + "=" + value + "): " +
                                                      call + " call " + std::to_string(count) + " of plugin '" +
                                                      layer->name + "' failed");
  }
  return nullptr;
}

PX_Status* FaultKernel(Layer* layer, const std::string& op, const std::string& node) {
  const std::string fail = Env("PLEXUS_FAULT_KERNEL_FAIL");
  const std::string delay = Env("PLEXUS_FAULT_KERNEL_DELAY_MS");
  if ((fail.empty() && delay.empty()) || !Applies(layer)) return nullptr;
  for (const std::string& entry : Split(delay, ',')) {
    const size_t colon = entry.rfind(':');
    const std::string name = colon == std::string::npos ? "" : entry.substr(0, colon);
    if (!name.empty() && name != op && name != node) continue;
    const long ms = std::strtol(entry.c_str() + (colon == std::string::npos ? 0 : colon + 1), nullptr, 10);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    break;
  }
  for (const std::string& name : Split(fail, ',')) {
    if (name == op || name == node || name == "*") {
      return MakeStatus(layer, PX_CODE_INTERNAL, "fault injection (PLEXUS_FAULT_KERNEL_FAIL=" + fail +
                                                     "): kernel of plugin '" + layer->name + "' for node '" +
                                                     node + "' (op " + op + ") failed");
    }
  }
  return nullptr;
}

}  // namespace pxv
