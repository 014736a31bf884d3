// The C API: thin wrappers over the core's C++ classes. Every entry point
// validates its pointers, converts absl::Status to px_code + message, and
// catches every C++ exception so none crosses into C.
#include "plexus/c_api.h"

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
#include "plexus/threads.h"

#include "handles.h"

namespace {


// Validates dtype + dims and returns the shape, or an error status.
// `element_size` 0 stands for strings: the element count must then fit.
px_code CheckShape(const char* function, size_t element_size, const int64_t* dims, int ndim,
                   plexus::Shape* shape, size_t* byte_size, px_status* status);

px_code MakeShape(const char* function, px_dtype dtype, const int64_t* dims, int ndim,
                  plexus::Shape* shape, size_t* byte_size, px_status* status) {
  auto type = static_cast<plexus::DataType>(dtype);
  if (dtype == PX_DTYPE_STRING) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(function, ": string tensors (PX_DTYPE_STRING) are made with "
                                  "px_tensor_create_strings; this function takes fixed-size "
                                  "dtypes only"));
  }
  size_t element_size = plexus::DataTypeSize(type);
  if (!plexus::IsKnownDataType(static_cast<int32_t>(dtype)) || element_size == 0 ||
      static_cast<int32_t>(dtype) >= plexus::kRefTypeOffset) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(function, ": dtype ", static_cast<int>(dtype), " (",
                                  plexus::DataTypeName(type),
                                  ") is not a fixed-size data type"));
  }
  return CheckShape(function, element_size, dims, ndim, shape, byte_size, status);
}

px_code CheckShape(const char* function, size_t element_size, const int64_t* dims, int ndim,
                   plexus::Shape* shape, size_t* byte_size, px_status* status) {
  if (element_size == 0) element_size = 1;  // count elements
  if (ndim < 0) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(function, ": ndim is ", ndim, "; it must be >= 0"));
  }
  if (ndim > 0 && dims == nullptr) return NullArgument(function, "dims", status);
  shape->assign(dims, dims + ndim);
  size_t bytes = element_size;
  for (int i = 0; i < ndim; ++i) {
    if (dims[i] < 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(function, ": dimension ", i, " of shape ",
                                    plexus::ShapeToString(*shape), " is negative"));
    }
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dims[i]), &bytes)) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(function, ": shape ", plexus::ShapeToString(*shape),
                                    " is too large"));
    }
  }
  *byte_size = bytes;
  return Ok(status);
}

// Turns run results into handles, copying device tensors to the host. Writes
// `out` all at once, or not at all on failure.
px_code WriteResults(std::vector<plexus::Tensor>& results, px_tensor** out, px_status* status) {
  std::vector<std::unique_ptr<px_tensor>> handles;
  handles.reserve(results.size());
  for (plexus::Tensor& t : results) {
    if (!t.host_readable()) {
      auto host = plexus::CopyTensorTo(t, nullptr);
      if (!host.ok()) return FromAbsl(host.status(), status);
      t = *std::move(host);
    }
    handles.push_back(std::make_unique<px_tensor>(px_tensor{std::move(t)}));
  }
  for (size_t i = 0; i < handles.size(); ++i) out[i] = handles[i].release();
  return Ok(status);
}

// The signature `key`, or NOT_FOUND listing the keys there are.
px_code FindSignature(const char* function, const px_saved_model* model, const char* key,
                      const SignatureEntry** out, px_status* status) {
  const SignatureEntry* entry = model->Find(key);
  if (entry == nullptr) {
    std::string keys;
    for (const SignatureEntry& e : model->signatures) {
      absl::StrAppend(&keys, keys.empty() ? "" : ", ", "'", *e.key, "'");
    }
    return SetStatus(status, PX_STATUS_NOT_FOUND,
                     absl::StrCat(function, ": the SavedModel '", model->model->model().dir(),
                                  "' has no signature '", key, "'; it has ",
                                  keys.empty() ? "none" : keys));
  }
  *out = entry;
  return Ok(status);
}

// Fills a px_signature_tensor_info from entry `index` of `entries`.
px_code SignatureTensorInfo(const char* function, const char* which,
                            const SignatureEntry& signature,
                            const std::vector<SignatureTensorEntry>& entries, size_t index,
                            px_signature_tensor_info* out_info, px_status* status) {
  if (out_info->struct_size == 0) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(function, ": out_info->struct_size is 0; set it to "
                                  "sizeof(px_signature_tensor_info)"));
  }
  if (index >= entries.size()) {
    return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                     absl::StrCat(function, ": ", which, " index ", index,
                                  " is out of range (signature '", *signature.key, "' has ",
                                  entries.size(), " ", which, "s)"));
  }
  const SignatureTensorEntry& e = entries[index];
  if (PX_HAS_FIELD(out_info, key)) out_info->key = e.key->c_str();
  if (PX_HAS_FIELD(out_info, tensor_name)) out_info->tensor_name = e.tensor->tensor_name.c_str();
  if (PX_HAS_FIELD(out_info, dtype)) out_info->dtype = static_cast<px_dtype>(e.tensor->dtype);
  if (PX_HAS_FIELD(out_info, is_ref)) out_info->is_ref = e.tensor->is_ref ? 1 : 0;
  if (PX_HAS_FIELD(out_info, ndim)) {
    out_info->ndim = e.tensor->shape.rank_known() ? static_cast<int>(e.dims.size()) : -1;
  }
  if (PX_HAS_FIELD(out_info, dims)) out_info->dims = e.dims.empty() ? nullptr : e.dims.data();
  return Ok(status);
}

}  // namespace

extern "C" {

// ---- Status ------------------------------------------------------------------

px_status* px_status_create(void) { return new (std::nothrow) px_status(); }

void px_status_destroy(px_status* status) { delete status; }

// A NULL status reads as OK, like a NULL status everywhere in Plexus.
px_code px_status_code(const px_status* status) {
  return status == nullptr ? PX_STATUS_OK : status->code;
}

const char* px_status_message(const px_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

// ---- Data types ----------------------------------------------------------------

size_t px_dtype_size(px_dtype dtype) {
  return plexus::DataTypeSize(static_cast<plexus::DataType>(dtype));
}

const char* px_dtype_name(px_dtype dtype) {
  // The core's names, computed once, kept for the process' lifetime.
  static const auto* names = [] {
    auto* table = new std::array<std::string, PX_DTYPE_UINT64 + 1>();
    for (size_t i = 0; i < table->size(); ++i) {
      (*table)[i] = plexus::DataTypeName(static_cast<plexus::DataType>(i));
    }
    return table;
  }();
  int index = static_cast<int>(dtype);
  if (index < 0 || index >= static_cast<int>(names->size())) return "invalid";
  return (*names)[index].c_str();
}

// ---- Tensors ---------------------------------------------------------------------

px_code px_tensor_create(px_dtype dtype, const int64_t* dims, int ndim, px_tensor** out_tensor,
                         px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_tensor);
    plexus::Shape shape;
    size_t byte_size = 0;
    px_code code = MakeShape(fn, dtype, dims, ndim, &shape, &byte_size, status);
    if (code != PX_STATUS_OK) return code;
    auto tensor = plexus::Tensor::AllocateHost(static_cast<plexus::DataType>(dtype), shape);
    if (!tensor.ok()) return FromAbsl(tensor.status(), status);
    *out_tensor = new px_tensor{*std::move(tensor)};
    return Ok(status);
  });
}

px_code px_tensor_create_from_data(px_dtype dtype, const int64_t* dims, int ndim,
                                   const void* data, size_t byte_size, px_tensor** out_tensor,
                                   px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_tensor);
    plexus::Shape shape;
    size_t expected = 0;
    px_code code = MakeShape(fn, dtype, dims, ndim, &shape, &expected, status);
    if (code != PX_STATUS_OK) return code;
    if (byte_size != expected) {
      return SetStatus(
          status, PX_STATUS_INVALID_ARGUMENT,
          absl::StrCat(fn, ": byte_size is ", byte_size, ", but a ", px_dtype_name(dtype),
                       " tensor of shape ", plexus::ShapeToString(shape), " needs ", expected,
                       " bytes (", plexus::NumElements(shape), " elements of ",
                       px_dtype_size(dtype), " bytes)"));
    }
    if (expected > 0) PX_REQUIRE_ARG(data);
    auto tensor = plexus::Tensor::AllocateHost(static_cast<plexus::DataType>(dtype), shape);
    if (!tensor.ok()) return FromAbsl(tensor.status(), status);
    if (expected > 0) std::memcpy(tensor->raw_data(), data, expected);
    *out_tensor = new px_tensor{*std::move(tensor)};
    return Ok(status);
  });
}

void px_tensor_destroy(px_tensor* tensor) { delete tensor; }

px_dtype px_tensor_dtype(const px_tensor* tensor) {
  return tensor == nullptr ? PX_DTYPE_INVALID : static_cast<px_dtype>(tensor->tensor.dtype());
}

int px_tensor_ndim(const px_tensor* tensor) {
  return tensor == nullptr ? 0 : static_cast<int>(tensor->tensor.dims());
}

int64_t px_tensor_dim(const px_tensor* tensor, int i) {
  if (tensor == nullptr || i < 0 || i >= tensor->tensor.dims()) return -1;
  return tensor->tensor.shape()[i];
}

int64_t px_tensor_num_elements(const px_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.num_elements();
}

size_t px_tensor_byte_size(const px_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.nbytes();
}

void* px_tensor_data(px_tensor* tensor) {
  if (tensor == nullptr) return nullptr;
  // The caller may write through the pointer: a variable's value (shared,
  // not copied, by reads) is first replaced by a copy of its own.
  auto writable = tensor->tensor.ShareForWriting();
  if (!writable.ok()) return nullptr;
  tensor->tensor = *std::move(writable);
  return tensor->tensor.raw_data();
}

px_code px_tensor_create_strings(const int64_t* dims, int ndim, const char* const* strings,
                                 const size_t* lengths, size_t num_strings,
                                 px_tensor** out_tensor, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_tensor);
    plexus::Shape shape;
    size_t count = 0;
    px_code code = CheckShape(fn, 0, dims, ndim, &shape, &count, status);
    if (code != PX_STATUS_OK) return code;
    if (num_strings != count) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": num_strings is ", num_strings,
                                    ", but a string tensor of shape ",
                                    plexus::ShapeToString(shape), " has ", count, " elements"));
    }
    if (count > 0) {
      PX_REQUIRE_ARG(strings);
      PX_REQUIRE_ARG(lengths);
    }
    std::vector<std::string> values;
    values.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (strings[i] == nullptr && lengths[i] > 0) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": strings[", i, "] is NULL but lengths[", i,
                                      "] is ", lengths[i]));
      }
      values.emplace_back(strings[i] == nullptr ? "" : std::string(strings[i], lengths[i]));
    }
    *out_tensor = new px_tensor{plexus::Tensor::FromStrings(std::move(shape), std::move(values))};
    return Ok(status);
  });
}

px_code px_tensor_string(const px_tensor* tensor, int64_t index, const char** out_data,
                         size_t* out_length, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(tensor);
    PX_REQUIRE_ARG(out_data);
    PX_REQUIRE_ARG(out_length);
    const plexus::Tensor& t = tensor->tensor;
    if (t.dtype() != plexus::DataType::kString) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": the tensor has dtype ",
                                    plexus::DataTypeName(t.dtype()), ", not string"));
    }
    const std::vector<std::string>& values = t.strings();
    if (index < 0 || static_cast<uint64_t>(index) >= values.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": index ", index, " is out of range (the tensor has ",
                                    values.size(), " strings)"));
    }
    const std::string& value = values[static_cast<size_t>(index)];
    *out_data = value.c_str();
    *out_length = value.size();
    return Ok(status);
  });
}

px_code px_tensor_read_npy(const char* path, px_tensor** out_tensor, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(path);
    PX_REQUIRE_ARG(out_tensor);
    auto tensor = plexus::ReadNpy(path);
    if (!tensor.ok()) return FromAbsl(tensor.status(), status);
    *out_tensor = new px_tensor{*std::move(tensor)};
    return Ok(status);
  });
}

px_code px_tensor_write_npy(const px_tensor* tensor, const char* path, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(tensor);
    PX_REQUIRE_ARG(path);
    return FromAbsl(plexus::WriteNpy(path, tensor->tensor), status);
  });
}

px_code px_tensor_to_dlpack(const px_tensor* tensor, DLManagedTensor** out_managed,
                            px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(tensor);
    PX_REQUIRE_ARG(out_managed);
    const plexus::Tensor& t = tensor->tensor;
    if (!t.host_readable()) {
      return SetStatus(status, PX_STATUS_FAILED_PRECONDITION,
                       absl::StrCat(fn, ": the tensor is not in host memory"));
    }
    auto managed = plexus::ExportDLPack(t);
    if (!managed.ok()) return FromAbsl(plexus::Annotate(managed.status(), fn), status);
    *out_managed = *managed;
    return Ok(status);
  });
}

px_code px_tensor_from_dlpack(DLManagedTensor* managed, px_tensor** out_tensor,
                              px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(managed);
    PX_REQUIRE_ARG(out_tensor);
    // Host memory only: a handle has no runtime to find devices in.
    if (managed->dl_tensor.device.device_type != kDLCPU) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": only host (kDLCPU) tensors can be imported; this one has "
                                    "DLPack device type ",
                                    static_cast<int>(managed->dl_tensor.device.device_type)));
    }
    auto result = std::make_unique<px_tensor>();
    auto imported = plexus::ImportDLPack(managed, nullptr);
    if (!imported.ok()) return FromAbsl(plexus::Annotate(imported.status(), fn), status);
    result->tensor = *std::move(imported);
    *out_tensor = result.release();
    return Ok(status);
  });
}

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
    const PluginEntry& e = runtime->plugins[index];
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
    const DeviceEntry& e = runtime->devices[index];
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

// ---- Graphs --------------------------------------------------------------------

px_code px_graph_import(const void* data, size_t size, px_graph_format format,
                        px_graph** out_graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    if (size > 0) PX_REQUIRE_ARG(data);
    PX_REQUIRE_ARG(out_graph);
    absl::string_view bytes(static_cast<const char*>(data), size);
    const char* const kSource = "<memory>";
    absl::StatusOr<std::unique_ptr<plexus::Graph>> graph;
    switch (format) {
      case PX_GRAPH_FORMAT_AUTO:
        graph = plexus::ImportGraphDefBytes(bytes, kSource, plexus::GraphFormat::kAuto);
        break;
      case PX_GRAPH_FORMAT_TEXT:
        graph = plexus::ImportGraphDefBytes(bytes, kSource, plexus::GraphFormat::kText);
        break;
      case PX_GRAPH_FORMAT_BINARY:
        graph = plexus::ImportGraphDefBytes(bytes, kSource, plexus::GraphFormat::kBinary);
        break;
      default:
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": unknown graph format ",
                                      static_cast<int>(format)));
    }
    if (!graph.ok()) return FromAbsl(graph.status(), status);
    *out_graph = new px_graph{std::shared_ptr<const plexus::Graph>(*std::move(graph)), {}};
    return Ok(status);
  });
}

px_code px_graph_import_file(const char* path, px_graph** out_graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(path);
    PX_REQUIRE_ARG(out_graph);
    auto graph = plexus::ImportGraphDefFile(path);
    if (!graph.ok()) return FromAbsl(graph.status(), status);
    *out_graph = new px_graph{std::shared_ptr<const plexus::Graph>(*std::move(graph)), {}};
    return Ok(status);
  });
}

void px_graph_destroy(px_graph* graph) { delete graph; }

size_t px_graph_num_nodes(const px_graph* graph) {
  return graph == nullptr ? 0 : static_cast<size_t>(graph->graph->num_nodes());
}

namespace {

// "node:k" or "node" as an endpoint of the builder's graph.
absl::StatusOr<plexus::Endpoint> FindEndpoint(const plexus::GraphBuilder& b, const char* name, const char* what) {
  if (name == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is NULL"));
  absl::string_view s(name);
  int index = 0;
  size_t colon = s.rfind(':');
  if (colon != absl::string_view::npos) {
    index = std::atoi(std::string(s.substr(colon + 1)).c_str());
    s = s.substr(0, colon);
  }
  plexus::Node* node = const_cast<plexus::Node*>(b.graph().FindNode(s));
  if (node == nullptr || index < 0 || index >= node->num_outputs()) {
    return absl::NotFoundError(absl::StrCat(what, " '", name, "' is not a tensor of the graph"));
  }
  return plexus::Endpoint{node, index};
}

}  // namespace

px_code px_graph_gradients(const px_graph* graph, const char* const* ys, size_t num_ys, const char* const* xs,
                           size_t num_xs, const char* const* grad_ys, px_graph** out_graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_graph);
    if (num_ys > 0) PX_REQUIRE_ARG(ys);
    if (num_xs > 0) PX_REQUIRE_ARG(xs);
    auto builder = plexus::GraphBuilder::FromGraph(*graph->graph);
    if (!builder.ok()) return FromAbsl(builder.status(), status);
    plexus::GraphBuilder& b = **builder;
    std::vector<plexus::Endpoint> y, x, dy;
    for (size_t i = 0; i < num_ys; ++i) {
      auto e = FindEndpoint(b, ys[i], "ys");
      if (!e.ok()) return FromAbsl(e.status(), status);
      y.push_back(*e);
      if (grad_ys != nullptr) {
        auto d = FindEndpoint(b, grad_ys[i], "grad_ys");
        if (!d.ok()) return FromAbsl(d.status(), status);
        dy.push_back(*d);
      }
    }
    for (size_t i = 0; i < num_xs; ++i) {
      auto e = FindEndpoint(b, xs[i], "xs");
      if (!e.ok()) return FromAbsl(e.status(), status);
      x.push_back(*e);
    }
    auto grads = plexus::AddGradients(b, y, x, dy);
    if (!grads.ok()) return FromAbsl(grads.status(), status);
    auto finished = b.Finish();
    if (!finished.ok()) return FromAbsl(finished.status(), status);
    auto* out = new px_graph{*std::move(finished), {}};
    for (const auto& g : *grads) {
      out->gradient_names.push_back(g.has_value() ? absl::StrCat(g->node->name, ":", g->index) : "");
    }
    *out_graph = out;
    return PX_STATUS_OK;
  });
}

const char* px_graph_gradient_name(const px_graph* graph, size_t j) {
  if (graph == nullptr || j >= graph->gradient_names.size() || graph->gradient_names[j].empty()) return nullptr;
  return graph->gradient_names[j].c_str();
}

// ---- Sessions ------------------------------------------------------------------

px_code px_session_create(px_runtime* runtime, const px_graph* graph, const char* device,
                          px_session** out_session, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_session);
    plexus::SessionOptions options;
    if (device != nullptr) options.device = device;
    auto session = plexus::Session::Create(runtime->runtime.get(), graph->graph, options);
    if (!session.ok()) return FromAbsl(session.status(), status);
    auto result = std::make_unique<px_session>();
    result->session = *std::move(session);
    result->device_name = result->session->device().name();
    *out_session = result.release();
    return Ok(status);
  });
}

void px_session_destroy(px_session* session) { delete session; }

const char* px_session_device_name(const px_session* session) {
  return session == nullptr ? "" : session->device_name.c_str();
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

int32_t px_intra_op_threads_get(void) { return plexus::DefaultIntraOpThreads(); }

px_code px_session_run(px_session* session, const char* const* feed_names,
                       const px_tensor* const* feed_values, size_t num_feeds,
                       const char* const* fetch_names, size_t num_fetches,
                       const char* const* target_names, size_t num_targets,
                       px_tensor** out_fetches, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(session);
    if (num_feeds > 0) {
      PX_REQUIRE_ARG(feed_names);
      PX_REQUIRE_ARG(feed_values);
    }
    if (num_fetches > 0) {
      PX_REQUIRE_ARG(fetch_names);
      PX_REQUIRE_ARG(out_fetches);
    }
    if (num_targets > 0) PX_REQUIRE_ARG(target_names);
    auto null_entry = [&](const char* array, size_t i) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": ", array, "[", i, "] must not be NULL"));
    };

    std::vector<std::pair<std::string, plexus::Tensor>> feeds;
    feeds.reserve(num_feeds);
    for (size_t i = 0; i < num_feeds; ++i) {
      if (feed_names[i] == nullptr) return null_entry("feed_names", i);
      if (feed_values[i] == nullptr) return null_entry("feed_values", i);
      feeds.emplace_back(feed_names[i], feed_values[i]->tensor);
    }
    std::vector<std::string> fetches;
    fetches.reserve(num_fetches);
    for (size_t i = 0; i < num_fetches; ++i) {
      if (fetch_names[i] == nullptr) return null_entry("fetch_names", i);
      fetches.emplace_back(fetch_names[i]);
    }
    std::vector<std::string> targets;
    targets.reserve(num_targets);
    for (size_t i = 0; i < num_targets; ++i) {
      if (target_names[i] == nullptr) return null_entry("target_names", i);
      targets.emplace_back(target_names[i]);
    }

    auto results = session->session->Run(feeds, fetches, targets);
    if (!results.ok()) return FromAbsl(results.status(), status);
    if (results->size() != num_fetches) {
      return SetStatus(status, PX_STATUS_INTERNAL,
                       absl::StrCat(fn, ": the session returned ", results->size(),
                                    " tensors for ", num_fetches, " fetches"));
    }
    // out_fetches is written all at once or not at all.
    return WriteResults(*results, out_fetches, status);
  });
}

// ---- SavedModels -------------------------------------------------------------

px_code px_saved_model_load(px_runtime* runtime, const char* dir, const char* const* tags,
                            size_t num_tags, const char* device, px_saved_model** out_model,
                            px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(dir);
    PX_REQUIRE_ARG(out_model);
    if (num_tags > 0) PX_REQUIRE_ARG(tags);
    plexus::SavedModelOptions options;
    if (num_tags > 0) {
      options.tags.clear();
      for (size_t i = 0; i < num_tags; ++i) {
        if (tags[i] == nullptr) {
          return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                           absl::StrCat(fn, ": tags[", i, "] must not be NULL"));
        }
        options.tags.insert(tags[i]);
      }
    }
    if (device != nullptr) options.device = device;
    auto loaded = plexus::SavedModelSession::Load(runtime->runtime.get(), dir, options);
    if (!loaded.ok()) return FromAbsl(loaded.status(), status);
    auto result = std::make_unique<px_saved_model>();
    result->model = *std::move(loaded);
    result->device_name = result->model->session().device().name();
    auto index = [](const std::map<std::string, plexus::SignatureTensor>& tensors) {
      std::vector<SignatureTensorEntry> entries;
      for (const auto& [key, tensor] : tensors) {
        SignatureTensorEntry e;
        e.key = &key;
        e.tensor = &tensor;
        if (tensor.shape.rank_known()) e.dims.assign(tensor.shape.dims().begin(), tensor.shape.dims().end());
        entries.push_back(std::move(e));
      }
      return entries;
    };
    for (const auto& [key, signature] : result->model->model().signatures()) {
      SignatureEntry e;
      e.key = &key;
      e.inputs = index(signature.inputs);
      e.outputs = index(signature.outputs);
      result->signatures.push_back(std::move(e));
    }
    *out_model = result.release();
    return Ok(status);
  });
}

void px_saved_model_destroy(px_saved_model* model) { delete model; }

const char* px_saved_model_device_name(const px_saved_model* model) {
  return model == nullptr ? "" : model->device_name.c_str();
}

size_t px_saved_model_num_signatures(const px_saved_model* model) {
  return model == nullptr ? 0 : model->signatures.size();
}

px_code px_saved_model_signature_key(const px_saved_model* model, size_t index,
                                     const char** out_key, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(out_key);
    if (index >= model->signatures.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": signature index ", index, " is out of range (",
                                    model->signatures.size(), " signatures)"));
    }
    *out_key = model->signatures[index].key->c_str();
    return Ok(status);
  });
}

px_code px_saved_model_signature_arity(const px_saved_model* model, const char* key,
                                       size_t* out_num_inputs, size_t* out_num_outputs,
                                       px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(key);
    const SignatureEntry* signature = nullptr;
    px_code code = FindSignature(fn, model, key, &signature, status);
    if (code != PX_STATUS_OK) return code;
    if (out_num_inputs != nullptr) *out_num_inputs = signature->inputs.size();
    if (out_num_outputs != nullptr) *out_num_outputs = signature->outputs.size();
    return Ok(status);
  });
}

px_code px_saved_model_signature_input(const px_saved_model* model, const char* key,
                                       size_t index, px_signature_tensor_info* out_info,
                                       px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(key);
    PX_REQUIRE_ARG(out_info);
    const SignatureEntry* signature = nullptr;
    px_code code = FindSignature(fn, model, key, &signature, status);
    if (code != PX_STATUS_OK) return code;
    return SignatureTensorInfo(fn, "input", *signature, signature->inputs, index, out_info,
                               status);
  });
}

px_code px_saved_model_signature_output(const px_saved_model* model, const char* key,
                                        size_t index, px_signature_tensor_info* out_info,
                                        px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(key);
    PX_REQUIRE_ARG(out_info);
    const SignatureEntry* signature = nullptr;
    px_code code = FindSignature(fn, model, key, &signature, status);
    if (code != PX_STATUS_OK) return code;
    return SignatureTensorInfo(fn, "output", *signature, signature->outputs, index, out_info,
                               status);
  });
}

px_code px_saved_model_run(px_saved_model* model, const char* key, const char* const* input_keys,
                           const px_tensor* const* input_values, size_t num_inputs,
                           const char* const* output_keys, size_t num_outputs,
                           px_tensor** out_outputs, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(key);
    if (num_inputs > 0) {
      PX_REQUIRE_ARG(input_keys);
      PX_REQUIRE_ARG(input_values);
    }
    if (num_outputs > 0) {
      PX_REQUIRE_ARG(output_keys);
      PX_REQUIRE_ARG(out_outputs);
    }
    auto null_entry = [&](const char* array, size_t i) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": ", array, "[", i, "] must not be NULL"));
    };
    const SignatureEntry* signature = nullptr;
    px_code code = FindSignature(fn, model, key, &signature, status);
    if (code != PX_STATUS_OK) return code;

    std::map<std::string, plexus::Tensor> inputs;
    for (size_t i = 0; i < num_inputs; ++i) {
      if (input_keys[i] == nullptr) return null_entry("input_keys", i);
      if (input_values[i] == nullptr) return null_entry("input_values", i);
      if (!inputs.emplace(input_keys[i], input_values[i]->tensor).second) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": input '", input_keys[i], "' is given twice"));
      }
    }
    std::vector<std::string> outputs;
    outputs.reserve(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) {
      if (output_keys[i] == nullptr) return null_entry("output_keys", i);
      outputs.emplace_back(output_keys[i]);
    }
    auto results = model->model->Run(key, inputs, outputs);
    if (!results.ok()) return FromAbsl(results.status(), status);
    if (num_outputs == 0) return Ok(status);  // run for its effects
    std::vector<plexus::Tensor> ordered;
    ordered.reserve(num_outputs);
    for (const std::string& name : outputs) {
      auto it = results->find(name);
      if (it == results->end()) {
        return SetStatus(status, PX_STATUS_INTERNAL,
                         absl::StrCat(fn, ": signature '", key, "' returned no output '", name,
                                      "'"));
      }
      ordered.push_back(it->second);
    }
    return WriteResults(ordered, out_outputs, status);
  });
}

}  // extern "C"
