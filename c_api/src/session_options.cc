// The C API: sessions with options, their trace, and run metadata
// (c_api_run.h).
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "run_scope.h"

namespace {

// A tri-state int field: -1 keeps `value`, 0 and 1 set it, anything else is
// an error naming the field.
px_code ReadFlag(const char* fn, const char* field, int v, bool* value, px_status* status) {
  if (v == -1) return PX_STATUS_OK;
  if (v != 0 && v != 1) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(fn, ": options->", field, " is ", v, "; use -1 (default), 0 or 1"));
  }
  *value = v == 1;
  return PX_STATUS_OK;
}

// Fills core options and the handle's own settings from `o`.
px_code ReadOptions(const char* fn, const px_session_options& o, plexus::SessionOptions* core, px_session* handle,
                    px_status* status) {
  if (o.struct_size == 0) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(fn, ": options->struct_size is 0; set it to sizeof(px_session_options)"));
  }
  const px_session_options* p = &o;
  px_code code = PX_STATUS_OK;
  auto flag = [&](const char* field, int v, bool* value) {
    if (code == PX_STATUS_OK) code = ReadFlag(fn, field, v, value, status);
  };
  if (PX_HAS_FIELD(p, device) && o.device != nullptr) core->device = o.device;
  if (PX_HAS_FIELD(p, optimizer)) flag("optimizer", o.optimizer, &core->optimizer.enabled);
  if (PX_HAS_FIELD(p, disabled_passes) && o.disabled_passes != nullptr) {
    for (absl::string_view name : absl::StrSplit(o.disabled_passes, ',', absl::SkipWhitespace())) {
      core->optimizer.disabled_passes.emplace_back(absl::StripAsciiWhitespace(name));
    }
  }
  if (PX_HAS_FIELD(p, inter_op_parallelism)) {
    flag("inter_op_parallelism", o.inter_op_parallelism, &core->inter_op_parallelism);
  }
  if (PX_HAS_FIELD(p, intra_op_threads)) {
    if (o.intra_op_threads < 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": options->intra_op_threads is ", o.intra_op_threads,
                                    "; use 0 (the process budget) or more"));
    }
    core->intra_op_threads = o.intra_op_threads;
  }
  if (PX_HAS_FIELD(p, device_graphs)) flag("device_graphs", o.device_graphs, &core->device_graphs);
  if (PX_HAS_FIELD(p, memory_plan)) flag("memory_plan", o.memory_plan, &core->memory_plan);
  if (PX_HAS_FIELD(p, fetch_to_host)) flag("fetch_to_host", o.fetch_to_host, &core->fetch_to_host);
  if (PX_HAS_FIELD(p, trace)) flag("trace", o.trace, &core->trace);
  if (PX_HAS_FIELD(p, placement) && o.placement != -1) {
    if (o.placement != PX_PLACEMENT_SOFT && o.placement != PX_PLACEMENT_STRICT) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": options->placement is ", o.placement,
                                    "; use PX_PLACEMENT_SOFT or PX_PLACEMENT_STRICT"));
    }
    handle->strict_placement = o.placement == PX_PLACEMENT_STRICT;
  }
  if (PX_HAS_FIELD(p, max_shape_specializations) && o.max_shape_specializations != -1) {
    if (o.max_shape_specializations < 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": options->max_shape_specializations is ", o.max_shape_specializations,
                                    "; use -1 (default), 0 (off) or more"));
    }
    core->max_shape_specializations = o.max_shape_specializations;
  }
  handle->fetch_to_host = core->fetch_to_host;
  return code;
}

}  // namespace

extern "C" {

px_code px_session_create_with_options(px_runtime* runtime, const px_graph* graph,
                                       const px_session_options* options, px_session** out_session,
                                       px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_session);
    auto result = std::make_unique<px_session>();
    plexus::SessionOptions core;
    if (options != nullptr) {
      px_code code = ReadOptions(fn, *options, &core, result.get(), status);
      if (code != PX_STATUS_OK) return code;
    }
    auto finished = graph->Finished();
    if (!finished.ok()) return FromAbsl(finished.status(), status);
    auto session = plexus::Session::Create(runtime->runtime.get(), *std::move(finished), core);
    if (!session.ok()) {
      return SetStatus(status, static_cast<px_code>(session.status().code()),
                       absl::StrCat(fn, ": ", session.status().message()));
    }
    result->session = *std::move(session);
    result->device_name = result->session->device().name();
    *out_session = result.release();
    return Ok(status);
  });
}

px_code px_session_write_trace(const px_session* session, const char* path, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(session);
    PX_REQUIRE_ARG(path);
    absl::Status s = session->session->WriteTrace(path);
    if (!s.ok()) return SetStatus(status, static_cast<px_code>(s.code()), absl::StrCat(fn, ": ", s.message()));
    return Ok(status);
  });
}

// ---- Run metadata ------------------------------------------------------------------

px_code px_run_metadata_create(px_run_metadata** out_metadata, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_metadata);
    *out_metadata = new px_run_metadata();
    return Ok(status);
  });
}

void px_run_metadata_destroy(px_run_metadata* metadata) { delete metadata; }

int64_t px_run_metadata_wall_ns(const px_run_metadata* metadata) {
  return metadata == nullptr ? 0 : metadata->run.wall_ns;
}

int px_run_metadata_built_executor(const px_run_metadata* metadata) {
  return metadata != nullptr && metadata->run.built_executor ? 1 : 0;
}

size_t px_run_metadata_num_nodes(const px_run_metadata* metadata) {
  return metadata == nullptr ? 0 : metadata->run.nodes.size();
}

px_code px_run_metadata_node(const px_run_metadata* metadata, size_t index, const char** out_node,
                             const char** out_op, const char** out_device, int64_t* out_start_ns,
                             int64_t* out_duration_ns, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(metadata);
    if (index >= metadata->run.nodes.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": node index ", index, " is out of range (the run has ",
                                    metadata->run.nodes.size(), " nodes)"));
    }
    const plexus::NodeTiming& n = metadata->run.nodes[index];
    if (out_node != nullptr) *out_node = n.node.c_str();
    if (out_op != nullptr) *out_op = n.op.c_str();
    if (out_device != nullptr) *out_device = n.device.c_str();
    if (out_start_ns != nullptr) *out_start_ns = n.start_ns;
    if (out_duration_ns != nullptr) *out_duration_ns = n.duration_ns;
    return Ok(status);
  });
}

px_code px_run_metadata_memory(const px_run_metadata* metadata, px_memory_stats* out_stats, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(metadata);
    PX_REQUIRE_ARG(out_stats);
    if (out_stats->struct_size == 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": out_stats->struct_size is 0; set it to sizeof(px_memory_stats)"));
    }
    const plexus::ExecutionInfo& i = metadata->info;
    if (PX_HAS_FIELD(out_stats, planned_tensors)) out_stats->planned_tensors = i.planned_tensors;
    if (PX_HAS_FIELD(out_stats, planned_tensor_bytes)) out_stats->planned_tensor_bytes = i.planned_tensor_bytes;
    if (PX_HAS_FIELD(out_stats, arena_bytes)) out_stats->arena_bytes = i.arena_bytes;
    if (PX_HAS_FIELD(out_stats, copy_items)) out_stats->copy_items = i.copy_items;
    if (PX_HAS_FIELD(out_stats, intra_op_threads)) out_stats->intra_op_threads = i.intra_op_threads;
    if (PX_HAS_FIELD(out_stats, parallel)) out_stats->parallel = i.parallel ? 1 : 0;
    if (PX_HAS_FIELD(out_stats, copies_per_run)) out_stats->copies_per_run = i.copies_per_run;
    return Ok(status);
  });
}

}  // extern "C"
