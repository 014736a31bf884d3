// The C API: importing graphs and symbolic gradients.
#include "plexus/c_api.h"

#include "handles.h"
#include "plexus/gradients.h"

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

extern "C" {

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
    *out_graph = new px_graph(std::shared_ptr<const plexus::Graph>(*std::move(graph)));
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
    *out_graph = new px_graph(std::shared_ptr<const plexus::Graph>(*std::move(graph)));
    return Ok(status);
  });
}

void px_graph_destroy(px_graph* graph) { delete graph; }

size_t px_graph_num_nodes(const px_graph* graph) {
  return graph == nullptr ? 0 : static_cast<size_t>(graph->current().num_nodes());
}


px_code px_graph_gradients(const px_graph* graph, const char* const* ys, size_t num_ys, const char* const* xs,
                           size_t num_xs, const char* const* grad_ys, px_graph** out_graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_graph);
    if (num_ys > 0) PX_REQUIRE_ARG(ys);
    if (num_xs > 0) PX_REQUIRE_ARG(xs);
    auto source = graph->Finished();
    if (!source.ok()) return FromAbsl(source.status(), status);
    auto builder = plexus::GraphBuilder::FromGraph(**source);
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
    auto* out = new px_graph(*std::move(finished));
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

}  // extern "C"
