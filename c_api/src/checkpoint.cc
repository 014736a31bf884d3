// The C API: TensorFlow checkpoints (write, read, list) and saving or
// restoring a SavedModel's variables through its saver (c_api_run.h).
#include "handles.h"
#include "plexus/checkpoint.h"

namespace {

px_code Prefixed(const char* fn, const absl::Status& s, px_status* status) {
  return SetStatus(status, static_cast<px_code>(s.code()), absl::StrCat(fn, ": ", s.message()));
}

// Runs the model's saver: feeds the checkpoint prefix to its filename
// tensor and fetches its save tensor (save) or runs its restore op.
px_code RunSaver(const char* fn, px_saved_model* model, const char* prefix, bool save, px_status* status) {
  PX_REQUIRE_ARG(model);
  PX_REQUIRE_ARG(prefix);
  const plexus::SavedModel& m = model->model->model();
  if (!m.has_saver()) {
    return SetStatus(status, PX_STATUS_FAILED_PRECONDITION,
                     absl::StrCat(fn, ": the SavedModel '", m.dir(), "' has no saver (a TensorFlow 1 SaverDef)"));
  }
  const plexus::SaverInfo& saver = m.saver();
  std::vector<std::pair<std::string, plexus::Tensor>> feeds = model->model->AssetFeeds();
  feeds.emplace_back(saver.filename_tensor_name, plexus::Tensor::FromStrings({}, {std::string(prefix)}));
  absl::StatusOr<std::vector<plexus::Tensor>> out =
      save ? model->model->session().Run(feeds, {saver.save_tensor_name}, {})
           : model->model->session().Run(feeds, {}, {saver.restore_op_name});
  if (!out.ok()) return Prefixed(fn, out.status(), status);
  return Ok(status);
}

}  // namespace

extern "C" {

px_code px_checkpoint_write(const char* prefix, const char* const* keys, const px_tensor* const* values, size_t count,
                            px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(prefix);
    if (count > 0) {
      PX_REQUIRE_ARG(keys);
      PX_REQUIRE_ARG(values);
    }
    auto writer = plexus::CheckpointWriter::Create(prefix);
    if (!writer.ok()) return Prefixed(fn, writer.status(), status);
    for (size_t i = 0; i < count; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) {
        return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                         absl::StrCat(fn, ": ", keys[i] == nullptr ? "keys" : "values", "[", i, "] is NULL"));
      }
      absl::Status ready = WaitForEagerWriters(*values[i]);
      if (!ready.ok()) return Prefixed(fn, ready, status);
      auto host = plexus::CopyTensorTo(values[i]->tensor, nullptr);
      if (!host.ok()) return Prefixed(fn, host.status(), status);
      absl::Status s = (*writer)->Add(keys[i], *host);
      if (!s.ok()) return Prefixed(fn, s, status);
    }
    absl::Status s = (*writer)->Finish();
    if (!s.ok()) return Prefixed(fn, s, status);
    return Ok(status);
  });
}

px_code px_checkpoint_read(const char* prefix, const char* key, px_tensor** out_tensor, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(prefix);
    PX_REQUIRE_ARG(key);
    PX_REQUIRE_ARG(out_tensor);
    auto reader = plexus::CheckpointReader::Open(prefix);
    if (!reader.ok()) return Prefixed(fn, reader.status(), status);
    auto t = (*reader)->Read(key);
    if (!t.ok()) return Prefixed(fn, t.status(), status);
    *out_tensor = new px_tensor{*std::move(t), nullptr};
    return Ok(status);
  });
}

px_code px_checkpoint_keys(const char* prefix, px_buffer** out_keys, size_t* out_count, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(prefix);
    PX_REQUIRE_ARG(out_keys);
    PX_REQUIRE_ARG(out_count);
    auto reader = plexus::CheckpointReader::Open(prefix);
    if (!reader.ok()) return Prefixed(fn, reader.status(), status);
    auto buffer = std::make_unique<px_buffer>();
    for (const plexus::CheckpointEntryInfo& e : (*reader)->entries()) {
      buffer->bytes.append(e.key);
      buffer->bytes.push_back('\0');
    }
    *out_count = (*reader)->entries().size();
    *out_keys = buffer.release();
    return Ok(status);
  });
}

px_code px_saved_model_save(px_saved_model* model, const char* prefix, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code { return RunSaver(fn, model, prefix, true, status); });
}

px_code px_saved_model_restore(px_saved_model* model, const char* prefix, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code { return RunSaver(fn, model, prefix, false, status); });
}

}  // extern "C"
