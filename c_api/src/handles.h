// The C API's handles (the structs behind px_status, px_tensor, px_graph,
// px_session, px_saved_model, px_runtime) and the guards every entry point
// uses: status conversion, NULL checks, exceptions kept from crossing into C.
// Private to c_api/src/.
#ifndef PLEXUS_C_API_SRC_HANDLES_H_
#define PLEXUS_C_API_SRC_HANDLES_H_

#include "plexus/c_api.h"
#include "plexus/c_api_build.h"

#include <array>
#include <climits>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "plexus/device.h"
#include "plexus/dtype.h"
#include "plexus/eager.h"
#include "plexus/gradients.h"
#include "plexus/graph.h"
#include "plexus/graph_builder.h"
#include "plexus/graph_import.h"
#include "plexus/npy.h"
#include "plexus/plugin_host.h"
#include "plexus/runtime.h"
#include "plexus/saved_model.h"
#include "plexus/session.h"
#include "plexus/tensor_dlpack.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

// ---- Handles ---------------------------------------------------------------

struct px_status {
  px_code code = PX_STATUS_OK;
  std::string message;
};

struct px_tensor {
  plexus::Tensor tensor;
  // For a result of eager execution: the context whose streams may still
  // be writing it (a host copy waits for them first).
  std::shared_ptr<plexus::EagerContext> eager;
};

// Bytes handed out (c_api_build.h).
struct px_buffer {
  std::string bytes;
};

// Attribute values by name (c_api_build.h; setters in attrs.cc).
struct px_attrs {
  plexus::AttrMap map;
};

// An operation handle: the graph it belongs to and the node's name, which
// stays the same when the graph's nodes are copied into a builder.
struct px_operation {
  const px_graph* graph = nullptr;
  std::string name;
};

// A graph: imported (`graph`), or being built (`builder`), or both once an
// imported graph is extended. Defined in graph_state.cc.
struct px_graph {
  px_graph() = default;
  explicit px_graph(std::shared_ptr<const plexus::Graph> g) : graph(std::move(g)) {}

  // The nodes callers read: the builder's while there is one.
  const plexus::Graph& current() const { return builder ? builder->graph() : *graph; }
  // The node behind a handle of this graph, or null.
  const plexus::Node* Resolve(const px_operation* operation) const;
  // The handle of a node of current(), made on first use.
  px_operation* Handle(const plexus::Node* node) const;
  // A builder holding the graph's nodes, made on the first addition.
  absl::Status EnsureBuilder();
  // The checked graph for sessions, gradients and exports: the imported
  // one, or the builder's finished (and cached until the next addition).
  absl::StatusOr<std::shared_ptr<const plexus::Graph>> Finished() const;
  // After an addition: the finished graph is out of date.
  void Changed();

  mutable std::mutex mu;  // guards the caches below (Finished, Handle)
  mutable std::shared_ptr<const plexus::Graph> graph;
  std::unique_ptr<plexus::GraphBuilder> builder;
  // The imported graph a builder replaced: handles and strings callers
  // borrowed from it stay valid.
  std::shared_ptr<const plexus::Graph> retired;
  mutable std::deque<px_operation> operations;
  mutable std::map<std::string, px_operation*, std::less<>> by_name;
  // Made by px_graph_gradients: the gradient tensor of each x ("" = none).
  std::vector<std::string> gradient_names;
};

struct px_session {
  // Shared with the session's callables, which may outlive the handle.
  std::shared_ptr<plexus::Session> session;
  std::string device_name;
  bool fetch_to_host = true;     // px_session_options.fetch_to_host
  bool strict_placement = false; // px_session_options.placement
};

// A signature's input or output, with its dims kept for px_signature_tensor_info.
struct SignatureTensorEntry {
  const std::string* key = nullptr;         // borrowed from the SavedModel
  const plexus::SignatureTensor* tensor = nullptr;
  std::vector<int64_t> dims;
};

struct SignatureEntry {
  const std::string* key = nullptr;
  std::vector<SignatureTensorEntry> inputs, outputs;  // in key order
};

struct px_saved_model {
  std::unique_ptr<plexus::SavedModelSession> model;
  std::string device_name;
  std::vector<SignatureEntry> signatures;  // in key order

  const SignatureEntry* Find(absl::string_view key) const {
    for (const SignatureEntry& e : signatures) {
      if (*e.key == key) return &e;
    }
    return nullptr;
  }
};

struct PluginEntry {
  std::weak_ptr<plexus::Plugin> source;  // the core's plugin this describes
  std::string name, version, path, device_type;
  uint32_t abi_major = 0, abi_minor = 0;
  size_t num_kernels = 0;
};

struct DeviceEntry {
  std::weak_ptr<plexus::Device> source;
  std::string name, type, description, vendor, plugin_name;
  uint64_t total_memory_bytes = 0, free_memory_bytes = 0;
};

struct ReportEntry {
  bool loaded = false;
  std::string message;
};

// The runtime and copies of what it reports, so that the strings handed out
// stay valid. Entries are kept in deques that only grow (refreshing never
// moves an entry a caller may still be reading); `plugins` and `devices`
// list the live ones, which shrink when a plugin is unloaded.
struct px_runtime {
  std::unique_ptr<plexus::Runtime> runtime;
  mutable std::mutex mu;
  std::deque<PluginEntry> plugin_store;
  std::deque<DeviceEntry> device_store;
  std::vector<const PluginEntry*> plugins;
  std::vector<const DeviceEntry*> devices;
  std::deque<ReportEntry> reports;

  template <typename Entries>
  size_t CountOf(const Entries& entries) const noexcept {
    try {
      std::lock_guard<std::mutex> lock(mu);
      return entries.size();
    } catch (...) {
      return 0;
    }
  }

  void RefreshCache();  // runtime.cc
};

namespace {

inline px_code SetStatus(px_status* status, px_code code, std::string message) {
  if (status != nullptr) {
    status->code = code;
    status->message = code == PX_STATUS_OK ? std::string() : std::move(message);
  }
  return code;
}

inline px_code Ok(px_status* status) { return SetStatus(status, PX_STATUS_OK, ""); }

inline px_code FromAbsl(const absl::Status& s, px_status* status) {
  if (s.ok()) return Ok(status);
  return SetStatus(status, static_cast<px_code>(s.code()), std::string(s.message()));
}

inline px_code NullArgument(const char* function, const char* argument, px_status* status) {
  return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                   absl::StrCat(function, ": argument '", argument, "' must not be NULL"));
}

// Runs `body` (returning px_code) and turns any escaping exception into a status.
template <typename Body>
inline px_code Guard(const char* function, px_status* status, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    try {
      return SetStatus(status, PX_STATUS_RESOURCE_EXHAUSTED,
                       absl::StrCat(function, ": out of memory"));
    } catch (...) {
      if (status != nullptr) status->code = PX_STATUS_RESOURCE_EXHAUSTED;
      return PX_STATUS_RESOURCE_EXHAUSTED;
    }
  } catch (const std::exception& e) {
    try {
      return SetStatus(status, PX_STATUS_INTERNAL,
                       absl::StrCat(function, ": internal error: ", e.what()));
    } catch (...) {
    }
  } catch (...) {
    try {
      return SetStatus(status, PX_STATUS_INTERNAL,
                       absl::StrCat(function, ": internal error (unknown exception)"));
    } catch (...) {
    }
  }
  if (status != nullptr) status->code = PX_STATUS_INTERNAL;
  return PX_STATUS_INTERNAL;
}

#define PX_REQUIRE_ARG(arg)                                              \
  do {                                                                   \
    if ((arg) == nullptr) return NullArgument(fn, #arg, status);         \
  } while (0)

// True when a caller-allocated struct (led by struct_size) holds `field`.
#define PX_HAS_FIELD(ptr, field)                                               \
  (offsetof(std::remove_cv_t<std::remove_pointer_t<decltype(ptr)>>, field) +   \
       sizeof((ptr)->field) <=                                                 \
   (ptr)->struct_size)

}  // namespace

// Waits for the eager work that may still write `t` (an eager result).
inline absl::Status WaitForEagerWriters(const px_tensor& t) {
  if (t.eager == nullptr || t.tensor.device() == nullptr) return absl::OkStatus();
  return t.eager->Synchronize(t.tensor.device());
}

// Helpers shared by the entry points (defined in tensor.cc).
namespace px_c {

// Checks dims (and that dtype is a fixed-size type) and gives the shape and
// its byte size, or an error status naming `function`.
px_code MakeShape(const char* function, px_dtype dtype, const int64_t* dims, int ndim,
                  plexus::Shape* shape, size_t* byte_size, px_status* status);
// The same for an element size; 0 stands for strings (the count must fit).
px_code CheckShape(const char* function, size_t element_size, const int64_t* dims, int ndim,
                   plexus::Shape* shape, size_t* byte_size, px_status* status);
// Turns run results into handles, copying device tensors to the host. Writes
// `out` all at once, or not at all on failure.
// `to_host` false leaves device tensors where they are.
px_code WriteResults(std::vector<plexus::Tensor>& results, px_tensor** out, px_status* status,
                     bool to_host = true);

}  // namespace px_c
using px_c::CheckShape;
using px_c::MakeShape;
using px_c::WriteResults;

#endif  // PLEXUS_C_API_SRC_HANDLES_H_
