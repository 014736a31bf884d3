// The C API: attribute sets, building graphs operation by operation, and
// exporting them as GraphDef bytes (c_api_build.h).
#include <cctype>

#include "handles.h"
#include "plexus/tensor_proto.h"

namespace {

// TensorFlow's node names: a letter, digit or '.' first, then those and _-/ .
bool IsValidName(absl::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool ok = std::isalnum(c) || c == '.' || (i > 0 && (c == '_' || c == '-' || c == '/'));
    if (!ok) return false;
  }
  return true;
}

// "px_graph_add_operation: op MatMul 'dense/MatMul'": the prefix of errors
// found before the builder names the node itself.
std::string Where(const char* fn, const px_operation_spec& spec) {
  return absl::StrCat(fn, ": op ", spec.op_type,
                      spec.name != nullptr && *spec.name != '\0' ? absl::StrCat(" '", spec.name, "'") : "");
}

// The endpoints of spec's inputs and the nodes of its control inputs.
px_code ResolveInputs(const char* fn, const px_graph& graph, const px_operation_spec& spec,
                      std::vector<plexus::Endpoint>* inputs, std::vector<plexus::Node*>* controls,
                      px_status* status) {
  for (size_t i = 0; i < spec.num_inputs; ++i) {
    const px_output& in = spec.inputs[i];
    const plexus::Node* node = graph.Resolve(in.operation);
    if (node == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(Where(fn, spec), ": input ", i,
                                    in.operation == nullptr ? " has a NULL operation"
                                                            : " is an operation of another graph"));
    }
    if (in.index < 0 || in.index >= node->num_outputs()) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(Where(fn, spec), ": input ", i, " reads output ", in.index, " of ",
                                    node->Describe(), ", which has ", node->num_outputs(), " output(s)"));
    }
    inputs->push_back({const_cast<plexus::Node*>(node), in.index});
  }
  for (size_t i = 0; i < spec.num_control_inputs; ++i) {
    const plexus::Node* node = graph.Resolve(spec.control_inputs[i]);
    if (node == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(Where(fn, spec), ": control input ", i,
                                    spec.control_inputs[i] == nullptr ? " is NULL"
                                                                      : " is an operation of another graph"));
    }
    controls->push_back(const_cast<plexus::Node*>(node));
  }
  return PX_STATUS_OK;
}

// Adds the node: a Const through AddConst, so that readers added later see
// its value in their shape functions (Reshape's shape, say).
absl::StatusOr<plexus::Node*> AddNode(plexus::GraphBuilder& b, const px_operation_spec& spec,
                                      const std::vector<plexus::Endpoint>& inputs, plexus::AttrMap attrs,
                                      const std::vector<plexus::Node*>& controls, absl::string_view name) {
  auto value = attrs.find("value");
  if (absl::string_view(spec.op_type) == "Const" && inputs.empty() && controls.empty() && value != attrs.end() &&
      value->second.has_tensor()) {
    auto dtype = attrs.find("dtype");
    PX_ASSIGN_OR_RETURN(plexus::Tensor t, plexus::TensorFromProto(value->second.tensor()));
    if (dtype != attrs.end() && static_cast<int>(dtype->second.type()) != static_cast<int>(t.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("Const: attr 'dtype' is ",
                                                     plexus::DataTypeName(static_cast<plexus::DataType>(dtype->second.type())),
                                                     " but its value is ", plexus::DataTypeName(t.dtype())));
    }
    return b.AddConst(t, name);
  }
  return b.AddNode(spec.op_type, inputs, std::move(attrs), name, controls);
}

}  // namespace

extern "C" {

// ---- Buffers -------------------------------------------------------------------

const void* px_buffer_data(const px_buffer* buffer) {
  return buffer == nullptr ? nullptr : buffer->bytes.data();
}

size_t px_buffer_size(const px_buffer* buffer) { return buffer == nullptr ? 0 : buffer->bytes.size(); }

void px_buffer_destroy(px_buffer* buffer) { delete buffer; }

// ---- Building graphs -------------------------------------------------------------

px_code px_graph_create(px_graph** out_graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_graph);
    auto graph = std::make_unique<px_graph>();
    absl::Status s = graph->EnsureBuilder();
    if (!s.ok()) return FromAbsl(s, status);
    *out_graph = graph.release();
    return Ok(status);
  });
}

px_code px_graph_add_operation(px_graph* graph, const px_operation_spec* spec, px_operation** out_operation,
                               px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(spec);
    if (spec->struct_size < offsetof(px_operation_spec, device) + sizeof(spec->device)) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": spec->struct_size is ", spec->struct_size,
                                    "; set it to sizeof(px_operation_spec)"));
    }
    if (spec->op_type == nullptr || *spec->op_type == '\0') {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": spec->op_type is NULL or empty"));
    }
    if (spec->num_inputs > 0 && spec->inputs == nullptr) return NullArgument(fn, "spec->inputs", status);
    if (spec->num_control_inputs > 0 && spec->control_inputs == nullptr) {
      return NullArgument(fn, "spec->control_inputs", status);
    }
    absl::string_view name = spec->name == nullptr ? "" : spec->name;
    if (!name.empty() && !IsValidName(name)) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(Where(fn, *spec), ": '", name,
                                    "' is not a valid operation name (letters, digits and '.' first, "
                                    "then also '_', '-' and '/')"));
    }
    absl::Status s = graph->EnsureBuilder();
    if (!s.ok()) return FromAbsl(s, status);
    if (!name.empty() && graph->current().FindNode(name) != nullptr) {
      return SetStatus(status, PX_STATUS_ALREADY_EXISTS,
                       absl::StrCat(Where(fn, *spec), ": the graph already has an operation named '", name, "'"));
    }
    std::vector<plexus::Endpoint> inputs;
    std::vector<plexus::Node*> controls;
    px_code code = ResolveInputs(fn, *graph, *spec, &inputs, &controls, status);
    if (code != PX_STATUS_OK) return code;
    plexus::AttrMap attrs;
    if (spec->attrs != nullptr) attrs = spec->attrs->map;
    auto node = AddNode(*graph->builder, *spec, inputs, std::move(attrs), controls, name);
    if (!node.ok()) {
      return SetStatus(status, static_cast<px_code>(node.status().code()),
                       absl::StrCat(fn, ": ", node.status().message()));
    }
    if (spec->device != nullptr) (*node)->requested_device = spec->device;
    graph->Changed();
    if (out_operation != nullptr) *out_operation = graph->Handle(*node);
    return Ok(status);
  });
}

px_code px_graph_finish(px_graph* graph, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(graph);
    auto finished = graph->Finished();
    if (!finished.ok()) return FromAbsl(finished.status(), status);
    return Ok(status);
  });
}

px_code px_graph_to_graphdef(px_graph* graph, px_buffer** out_buffer, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_buffer);
    auto finished = graph->Finished();
    if (!finished.ok()) return FromAbsl(finished.status(), status);
    std::string bytes;
    if (!plexus::GraphToGraphDef(**finished).SerializeToString(&bytes)) {
      return SetStatus(status, PX_STATUS_INTERNAL, absl::StrCat(fn, ": the GraphDef does not serialize"));
    }
    *out_buffer = new px_buffer{std::move(bytes)};
    return Ok(status);
  });
}

}  // extern "C"
