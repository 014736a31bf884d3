// The C API: status objects, data types and host tensors (npy, DLPack).
#include "plexus/c_api.h"

#include "handles.h"
#include "plexus/npy.h"
#include "plexus/tensor_dlpack.h"

namespace px_c {

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

px_code WriteResults(std::vector<plexus::Tensor>& results, px_tensor** out, px_status* status, bool to_host) {
  std::vector<std::unique_ptr<px_tensor>> handles;
  handles.reserve(results.size());
  for (plexus::Tensor& t : results) {
    if (to_host && !t.host_readable()) {
      auto host = plexus::CopyTensorTo(t, nullptr);
      if (!host.ok()) return FromAbsl(host.status(), status);
      t = *std::move(host);
    }
    handles.push_back(std::make_unique<px_tensor>(px_tensor{std::move(t), nullptr}));
  }
  for (size_t i = 0; i < handles.size(); ++i) out[i] = handles[i].release();
  return Ok(status);
}

}  // namespace px_c

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
    *out_tensor = new px_tensor{*std::move(tensor), nullptr};
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
    *out_tensor = new px_tensor{*std::move(tensor), nullptr};
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
    *out_tensor = new px_tensor{plexus::Tensor::FromStrings(std::move(shape), std::move(values)), nullptr};
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
    *out_tensor = new px_tensor{*std::move(tensor), nullptr};
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

}  // extern "C"
