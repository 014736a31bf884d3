// The C API's placement reports (px_placement_*): snapshots of
// plexus::PlacementReport with strings the caller borrows.
#include <string>

#include "run_scope.h"
#include "plexus/placement.h"

struct px_placement {
  plexus::PlacementReport report;
  std::string text;
};

namespace {

px_code MakePlacement(plexus::PlacementReport report, px_placement** out, px_status* status) {
  auto* p = new px_placement();
  p->text = report.ToString();
  p->report = std::move(report);
  *out = p;
  return Ok(status);
}

void Set(const char** out, const std::string& value) {
  if (out != nullptr) *out = value.c_str();
}

}  // namespace

extern "C" {

px_code px_session_placement(const px_session* session, px_placement** out_placement,
                             px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(session);
    PX_REQUIRE_ARG(out_placement);
    return MakePlacement(session->session->placement(), out_placement, status);
  });
}

px_code px_run_metadata_placement(const px_run_metadata* metadata, px_placement** out_placement,
                                  px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(metadata);
    PX_REQUIRE_ARG(out_placement);
    return MakePlacement(metadata->placement, out_placement, status);
  });
}

px_code px_saved_model_placement(const px_saved_model* model, px_placement** out_placement,
                                 px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(model);
    PX_REQUIRE_ARG(out_placement);
    return MakePlacement(model->model->session().placement(), out_placement, status);
  });
}

void px_placement_destroy(px_placement* placement) { delete placement; }

size_t px_placement_num_nodes(const px_placement* placement) {
  return placement == nullptr ? 0 : placement->report.nodes.size();
}

px_code px_placement_node(const px_placement* placement, size_t index, const char** out_node,
                          const char** out_op, const char** out_how, const char** out_device,
                          const char** out_plugin, const char** out_reason, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(placement);
    if (index >= placement->report.nodes.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": node index ", index, " is out of range (",
                                    placement->report.nodes.size(), " nodes)"));
    }
    const plexus::NodePlacement& n = placement->report.nodes[index];
    Set(out_node, n.node);
    Set(out_op, n.op);
    if (out_how != nullptr) *out_how = plexus::PlacedByName(n.how);  // a static string
    Set(out_device, n.device);
    Set(out_plugin, n.plugin);
    Set(out_reason, n.reason);
    return Ok(status);
  });
}

size_t px_placement_num_copies(const px_placement* placement) {
  return placement == nullptr ? 0 : placement->report.copies.size();
}

px_code px_placement_copy(const px_placement* placement, size_t index, const char** out_tensor,
                          const char** out_from, const char** out_to, const char** out_reader,
                          px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(placement);
    if (index >= placement->report.copies.size()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": copy index ", index, " is out of range (",
                                    placement->report.copies.size(), " copies)"));
    }
    const plexus::CopyPlacement& c = placement->report.copies[index];
    Set(out_tensor, c.tensor);
    Set(out_from, c.from);
    Set(out_to, c.to);
    Set(out_reader, c.reader);
    return Ok(status);
  });
}

const char* px_placement_text(const px_placement* placement) {
  return placement == nullptr ? "" : placement->text.c_str();
}

}  // extern "C"
