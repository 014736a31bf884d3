// The validation layer's entry point, handle registry, breach reports, and
// the wrappers of the plugin-level, device and memory slots.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>

#include "layer.h"

namespace pxv {
namespace {

struct HandleInfo {
  Kind kind;
  bool alive;
  Layer* layer;
};

// Destroyed handles stay allocated (and recognizable) for this many more
// destructions.
constexpr size_t kQuarantine = 4096;

struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, HandleInfo> handles;
  std::deque<const void*> dead;
  std::vector<Layer*> layers;
};

Registry& Handles() {
  static Registry* registry = new Registry();  // never destroyed: used at exit
  return *registry;
}

void DeleteHandle(const void* handle, Kind kind) {
  switch (kind) {
    case Kind::kDevice: delete static_cast<const DeviceWrap*>(handle); break;
    case Kind::kStream: delete static_cast<const StreamWrap*>(handle); break;
    case Kind::kEvent: delete static_cast<const EventWrap*>(handle); break;
    case Kind::kKernel: delete static_cast<const InstanceWrap*>(handle); break;
    case Kind::kGraph:
    case Kind::kComm: break;  // the plugin's own handles
  }
}

const char* DestroyCall(Kind kind) {
  switch (kind) {
    case Kind::kDevice: return "device_close";
    case Kind::kStream: return "stream_destroy";
    case Kind::kEvent: return "event_destroy";
    case Kind::kGraph: return "graph_destroy";
    case Kind::kKernel: return "the kernel's destroy";
    case Kind::kComm: return "comm_destroy";
  }
  return "destroy";
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kDevice: return "device";
    case Kind::kStream: return "stream";
    case Kind::kEvent: return "event";
    case Kind::kGraph: return "graph";
    case Kind::kKernel: return "kernel instance";
    case Kind::kComm: return "communicator";
  }
  return "handle";
}

void AddHandle(const void* handle, Kind kind, Layer* layer) {
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  r.handles[handle] = HandleInfo{kind, true, layer};
}

void KillHandle(const void* handle) {
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.handles.find(handle);
  if (it == r.handles.end() || !it->second.alive) return;
  it->second.alive = false;
  if (it->second.kind == Kind::kGraph || it->second.kind == Kind::kComm) return;
  r.dead.push_back(handle);
  if (r.dead.size() > kQuarantine) {
    const void* oldest = r.dead.front();
    r.dead.pop_front();
    auto old = r.handles.find(oldest);
    if (old != r.handles.end() && !old->second.alive) {
      DeleteHandle(oldest, old->second.kind);
      r.handles.erase(old);
    }
  }
}

std::string CheckHandle(const void* handle, Kind kind, Layer** layer) {
  if (handle == nullptr) return "is NULL";
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.handles.find(handle);
  if (it == r.handles.end()) {
    return std::string("is not a ") + KindName(kind) + " this plugin made";
  }
  if (layer != nullptr) *layer = it->second.layer;
  if (it->second.kind != kind) {
    return std::string("is a ") + KindName(it->second.kind) + ", not a " + KindName(kind);
  }
  if (!it->second.alive) {
    return std::string("used after ") + DestroyCall(kind) + " (a destroyed " + KindName(kind) + ")";
  }
  return "";
}

void ForgetHandles(Layer* layer) {
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.handles.begin(); it != r.handles.end();) {
    if (it->second.layer != layer) {
      ++it;
      continue;
    }
    DeleteHandle(it->first, it->second.kind);
    r.dead.erase(std::remove(r.dead.begin(), r.dead.end(), it->first), r.dead.end());
    it = r.handles.erase(it);
  }
  r.layers.erase(std::remove(r.layers.begin(), r.layers.end(), layer), r.layers.end());
}

Layer* AnyLayer() {
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.layers.empty() ? nullptr : r.layers.front();
}

void Log(Layer* layer, PX_LogLevel level, const std::string& message) {
  if (layer != nullptr && layer->host != nullptr && layer->host->log != nullptr) {
    layer->host->log(layer->host->host_context, level, message.c_str());
  } else {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
}

PX_Status* MakeStatus(Layer* layer, PX_Code code, const std::string& message) {
  if (layer == nullptr || layer->host == nullptr || layer->host->status_create == nullptr) return nullptr;
  return layer->host->status_create(code, message.c_str());
}

void FreeStatus(Layer* layer, PX_Status* status) {
  if (status != nullptr && layer != nullptr && layer->host->status_destroy != nullptr) {
    layer->host->status_destroy(status);
  }
}

namespace {
std::string BreachText(Layer* layer, const char* call, const char* arg, const std::string& what) {
  std::string text = "validation layer: plugin '" + (layer ? layer->name : std::string("?")) + "': " + call;
  if (arg != nullptr && arg[0] != '\0') text += std::string(": argument '") + arg + "'";
  return text + ": " + what;
}
}  // namespace

PX_Status* Breach(Layer* layer, const char* call, const char* arg, const std::string& what,
                  PX_Code code) {
  const std::string text = BreachText(layer, call, arg, what);
  const bool warn = layer != nullptr && layer->mode == PX_VALIDATION_MODE_WARN;
  Log(layer, warn ? PX_LOG_WARNING : PX_LOG_ERROR, text);
  return warn ? nullptr : MakeStatus(layer, code, text);
}

void BreachLater(Layer* layer, const char* call, const char* arg, const std::string& what) {
  const std::string text = BreachText(layer, call, arg, what);
  const bool warn = layer != nullptr && layer->mode == PX_VALIDATION_MODE_WARN;
  Log(layer, warn ? PX_LOG_WARNING : PX_LOG_ERROR, text);
  if (warn || layer == nullptr) return;
  std::lock_guard<std::mutex> lock(layer->mu);
  if (layer->pending.empty()) layer->pending = text + " (found in an earlier call)";
}

PX_Status* TakePending(Layer* layer) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(layer->mu);
    text.swap(layer->pending);
  }
  return text.empty() ? nullptr : MakeStatus(layer, PX_CODE_FAILED_PRECONDITION, text);
}

PX_Status* EnterDevice(PX_Device* device, const char* call, DeviceWrap** out) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(device, Kind::kDevice, &layer);
  if (!why.empty()) {
    *out = nullptr;
    Layer* named = layer ? layer : AnyLayer();
    PX_Status* s = Breach(named, call, "device", why);
    // A handle the layer cannot resolve is never passed on, even in warn mode.
    return s ? s : MakeStatus(named, PX_CODE_FAILED_PRECONDITION, "validation layer: " + std::string(call) +
                                                                 ": unusable device handle");
  }
  *out = reinterpret_cast<DeviceWrap*>(device);
  return TakePending((*out)->layer);
}

std::string CheckGuards(const Allocation& a, const unsigned char* user) {
  if (a.front == 0) return "";
  for (size_t i = 0; i < a.front; ++i) {
    if (user[-1 - static_cast<ptrdiff_t>(i)] != kGuardByte) {
      return "memory written outside its buffer: " + std::to_string(i + 1) + " byte(s) before the start of a " +
             std::to_string(a.bytes) + "-byte allocation";
    }
  }
  size_t last = 0;
  bool bad = false;
  for (size_t i = 0; i < a.back; ++i) {
    if (user[a.bytes + i] != kGuardByte) {
      last = i;
      bad = true;
    }
  }
  if (!bad) return "";
  return "memory written outside its buffer: up to " + std::to_string(last + 1) +
         " byte(s) past the end of a " + std::to_string(a.bytes) + "-byte allocation";
}

}  // namespace pxv

namespace pxv {
void RegisterLayer(Layer* layer) {
  Registry& r = Handles();
  std::lock_guard<std::mutex> lock(r.mu);
  r.layers.push_back(layer);
}
}  // namespace pxv
