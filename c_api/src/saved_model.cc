// The C API: TensorFlow SavedModels: loading, signatures, running.
#include "plexus/c_api.h"

#include "handles.h"

namespace {

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
