// The C API: eager execution over plexus::EagerContext, and tensors on
// devices (c_api_eager.h).
#include "handles.h"

struct px_eager_context {
  px_runtime* runtime = nullptr;
  // Shared with the tensors it makes, which may still be written by its
  // streams when the context is destroyed.
  std::shared_ptr<plexus::EagerContext> eager;
  std::shared_ptr<plexus::Device> device;  // the default; null: see the header
};

namespace {

// The device `name` names (NULL or "": `fallback`).
px_code FindDevice(const char* fn, px_runtime* runtime, const char* name, std::shared_ptr<plexus::Device> fallback,
                   std::shared_ptr<plexus::Device>* out, px_status* status) {
  if (name == nullptr || *name == '\0') {
    *out = std::move(fallback);
    return PX_STATUS_OK;
  }
  auto device = runtime->runtime->FindDevice(name);
  if (!device.ok()) {
    return SetStatus(status, static_cast<px_code>(device.status().code()),
                     absl::StrCat(fn, ": ", device.status().message()));
  }
  *out = *std::move(device);
  return PX_STATUS_OK;
}

// Checks the common arguments of an op call and gathers its inputs.
px_code GatherInputs(const char* fn, const px_tensor* const* inputs, size_t num_inputs,
                     std::vector<plexus::Tensor>* out, px_status* status) {
  if (num_inputs > 0 && inputs == nullptr) return NullArgument(fn, "inputs", status);
  out->reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": inputs[", i, "] is NULL"));
    }
    out->push_back(inputs[i]->tensor);
  }
  return PX_STATUS_OK;
}

px_code PrefixError(const char* fn, const absl::Status& s, px_status* status) {
  return SetStatus(status, static_cast<px_code>(s.code()), absl::StrCat(fn, ": ", s.message()));
}

}  // namespace

extern "C" {

// ---- Tensors on devices ----------------------------------------------------------

const char* px_tensor_device_name(const px_tensor* tensor) {
  if (tensor == nullptr || tensor->tensor.device() == nullptr) return "";
  return tensor->tensor.device()->name().c_str();
}

int px_tensor_is_host_readable(const px_tensor* tensor) {
  return tensor != nullptr && tensor->tensor.host_readable() ? 1 : 0;
}

px_code px_tensor_copy_to_host(const px_tensor* tensor, px_tensor** out_tensor, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(tensor);
    PX_REQUIRE_ARG(out_tensor);
    absl::Status s = WaitForEagerWriters(*tensor);
    if (!s.ok()) return PrefixError(fn, s, status);
    auto host = plexus::CopyTensorTo(tensor->tensor, nullptr);
    if (!host.ok()) return PrefixError(fn, host.status(), status);
    *out_tensor = new px_tensor{*std::move(host), nullptr};
    return Ok(status);
  });
}

// ---- Eager contexts ----------------------------------------------------------------

px_code px_eager_context_create(px_runtime* runtime, const px_eager_options* options,
                                px_eager_context** out_context, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(out_context);
    auto context = std::make_unique<px_eager_context>();
    context->runtime = runtime;
    if (options != nullptr) {
      if (options->struct_size == 0) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": options->struct_size is 0; set it to sizeof(px_eager_options)"));
      }
      if (PX_HAS_FIELD(options, device)) {
        px_code code = FindDevice(fn, runtime, options->device, nullptr, &context->device, status);
        if (code != PX_STATUS_OK) return code;
      }
    }
    context->eager = std::make_shared<plexus::EagerContext>(runtime->runtime.get());
    *out_context = context.release();
    return Ok(status);
  });
}

void px_eager_context_destroy(px_eager_context* context) { delete context; }

px_code px_eager_execute(px_eager_context* context, const char* op_type, const px_tensor* const* inputs,
                         size_t num_inputs, const px_attrs* attrs, const char* device, px_tensor** out_outputs,
                         size_t max_outputs, size_t* out_num_outputs, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(context);
    PX_REQUIRE_ARG(op_type);
    PX_REQUIRE_ARG(out_num_outputs);
    if (max_outputs > 0) PX_REQUIRE_ARG(out_outputs);
    std::vector<plexus::Tensor> values;
    px_code code = GatherInputs(fn, inputs, num_inputs, &values, status);
    if (code != PX_STATUS_OK) return code;
    std::shared_ptr<plexus::Device> target;
    code = FindDevice(fn, context->runtime, device, context->device, &target, status);
    if (code != PX_STATUS_OK) return code;
    std::vector<plexus::DataType> types;
    for (const plexus::Tensor& t : values) types.push_back(t.dtype());
    static const plexus::AttrMap kNoAttrs;
    auto op = context->eager->Prepare(op_type, types, attrs == nullptr ? kNoAttrs : attrs->map,
                                      plexus::EagerContext::DeviceFor(values, target.get()));
    if (!op.ok()) return PrefixError(fn, op.status(), status);
    const size_t n = static_cast<size_t>((*op)->node().num_outputs());
    if (n > max_outputs) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": op ", op_type, " has ", n, " output(s) but out_outputs has room for ",
                                    max_outputs, "; nothing ran"));
    }
    auto results = (*op)->Run(values);
    if (!results.ok()) return PrefixError(fn, results.status(), status);
    std::vector<std::unique_ptr<px_tensor>> handles;
    for (plexus::Tensor& t : *results) handles.push_back(std::make_unique<px_tensor>(px_tensor{std::move(t), context->eager}));
    for (size_t i = 0; i < handles.size(); ++i) out_outputs[i] = handles[i].release();
    *out_num_outputs = handles.size();
    return Ok(status);
  });
}

px_code px_eager_num_outputs(px_eager_context* context, const char* op_type, const px_dtype* input_dtypes,
                             size_t num_inputs, const px_attrs* attrs, const char* device,
                             size_t* out_num_outputs, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(context);
    PX_REQUIRE_ARG(op_type);
    PX_REQUIRE_ARG(out_num_outputs);
    if (num_inputs > 0) PX_REQUIRE_ARG(input_dtypes);
    std::vector<plexus::DataType> types;
    for (size_t i = 0; i < num_inputs; ++i) {
      if (!plexus::IsKnownDataType(static_cast<int32_t>(input_dtypes[i])) || input_dtypes[i] <= 0) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": input_dtypes[", i, "] is ", static_cast<int>(input_dtypes[i]),
                                      ", not a data type"));
      }
      types.push_back(static_cast<plexus::DataType>(input_dtypes[i]));
    }
    std::shared_ptr<plexus::Device> target;
    px_code code = FindDevice(fn, context->runtime, device, context->device, &target, status);
    if (code != PX_STATUS_OK) return code;
    if (target == nullptr) target = context->runtime->runtime->HostDevice();
    static const plexus::AttrMap kNoAttrs;
    auto op = context->eager->Prepare(op_type, types, attrs == nullptr ? kNoAttrs : attrs->map, target.get());
    if (!op.ok()) return PrefixError(fn, op.status(), status);
    *out_num_outputs = static_cast<size_t>((*op)->node().num_outputs());
    return Ok(status);
  });
}

px_code px_eager_copy_to_device(px_eager_context* context, const px_tensor* tensor, const char* device,
                                px_tensor** out_tensor, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(context);
    PX_REQUIRE_ARG(tensor);
    PX_REQUIRE_ARG(out_tensor);
    std::shared_ptr<plexus::Device> target;
    px_code code = FindDevice(fn, context->runtime, device, nullptr, &target, status);
    if (code != PX_STATUS_OK) return code;
    absl::Status s = WaitForEagerWriters(*tensor);
    if (s.ok() && target != nullptr && !target->host_accessible()) s = context->eager->Synchronize(target.get());
    if (!s.ok()) return PrefixError(fn, s, status);
    plexus::Device* where = target == nullptr || target->host_accessible() ? nullptr : target.get();
    auto copy = plexus::CopyTensorTo(tensor->tensor, where);
    if (!copy.ok()) return PrefixError(fn, copy.status(), status);
    *out_tensor = new px_tensor{*std::move(copy), context->eager};
    return Ok(status);
  });
}

px_code px_eager_synchronize(px_eager_context* context, const char* device, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(context);
    std::vector<std::shared_ptr<plexus::Device>> devices;
    if (device == nullptr) {
      devices = context->runtime->runtime->devices();
    } else {
      std::shared_ptr<plexus::Device> d;
      px_code code = FindDevice(fn, context->runtime, device, nullptr, &d, status);
      if (code != PX_STATUS_OK) return code;
      if (d != nullptr) devices.push_back(d);
    }
    for (const auto& d : devices) {
      absl::Status s = context->eager->Synchronize(d.get());
      if (!s.ok()) return PrefixError(fn, s, status);
    }
    return Ok(status);
  });
}

size_t px_eager_cache_size(const px_eager_context* context) {
  if (context == nullptr) return 0;
  try {
    return context->eager->cache_size();
  } catch (...) {
    return 0;
  }
}

void px_eager_clear_cache(px_eager_context* context) {
  if (context == nullptr) return;
  try {
    context->eager->ClearCache();
  } catch (...) {
  }
}

}  // extern "C"
