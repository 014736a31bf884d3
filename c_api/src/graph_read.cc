// The C API: reading a graph's operations back: names, op types, inputs,
// outputs with their dtypes and inferred shapes, attributes
// (c_api_build.h).
#include "handles.h"

namespace {

const plexus::Node* NodeOf(const px_operation* operation) {
  return operation == nullptr || operation->graph == nullptr ? nullptr : operation->graph->Resolve(operation);
}

// The attribute `name` of the operation, after the common checks.
px_code FindAttr(const char* fn, const px_operation* operation, const char* name,
                 const plexus::tf::AttrValue** out, px_status* status) {
  PX_REQUIRE_ARG(operation);
  PX_REQUIRE_ARG(name);
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": the operation is not in its graph"));
  }
  const plexus::tf::AttrValue* value = node->FindAttr(name);
  if (value == nullptr) {
    return SetStatus(status, PX_STATUS_NOT_FOUND,
                     absl::StrCat(fn, ": ", node->Describe(), " has no attribute '", name, "'"));
  }
  *out = value;
  return PX_STATUS_OK;
}

const char* KindName(plexus::tf::AttrValue::ValueCase c) {
  using V = plexus::tf::AttrValue;
  switch (c) {
    case V::kS: return "a string";
    case V::kI: return "an int";
    case V::kF: return "a float";
    case V::kB: return "a bool";
    case V::kType: return "a type";
    case V::kShape: return "a shape";
    case V::kTensor: return "a tensor";
    case V::kList: return "a list";
    case V::kFunc: return "a function";
    case V::kPlaceholder: return "a placeholder";
    default: return "no value";
  }
}

// Reads attribute `name` of kind `want` with `read`.
template <typename Read>
px_code ReadAttr(const char* fn, const px_operation* operation, const char* name, const char* want_name,
                 plexus::tf::AttrValue::ValueCase want, px_status* status, Read&& read) {
  return Guard(fn, status, [&]() -> px_code {
    const plexus::tf::AttrValue* value = nullptr;
    px_code code = FindAttr(fn, operation, name, &value, status);
    if (code != PX_STATUS_OK) return code;
    if (value->value_case() != want) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": ", NodeOf(operation)->Describe(), ": attribute '", name, "' holds ",
                                    KindName(value->value_case()), ", not ", want_name));
    }
    read(*value);
    return Ok(status);
  });
}

const char* Str(const std::string* s) { return s == nullptr ? "" : s->c_str(); }

}  // namespace

extern "C" {

size_t px_graph_num_operations(const px_graph* graph) {
  return graph == nullptr ? 0 : static_cast<size_t>(graph->current().num_nodes());
}

px_operation* px_graph_operation(const px_graph* graph, size_t index) {
  if (graph == nullptr || index >= static_cast<size_t>(graph->current().num_nodes())) return nullptr;
  try {
    return graph->Handle(graph->current().nodes()[index].get());
  } catch (...) {
    return nullptr;
  }
}

px_operation* px_graph_operation_by_name(const px_graph* graph, const char* name) {
  if (graph == nullptr || name == nullptr) return nullptr;
  try {
    return graph->Handle(graph->current().FindNode(name));
  } catch (...) {
    return nullptr;
  }
}

const char* px_operation_name(const px_operation* operation) {
  return operation == nullptr ? "" : operation->name.c_str();
}

const char* px_operation_op_type(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return Str(node == nullptr ? nullptr : &node->op);
}

const char* px_operation_device(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return Str(node == nullptr ? nullptr : &node->requested_device);
}

int px_operation_num_inputs(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return node == nullptr ? 0 : node->num_inputs();
}

px_output px_operation_input(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= node->num_inputs()) return px_output{nullptr, -1};
  try {
    const plexus::Endpoint& in = node->inputs[i];
    return px_output{operation->graph->Handle(in.node), in.index};
  } catch (...) {
    return px_output{nullptr, -1};
  }
}

px_dtype px_operation_input_dtype(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= static_cast<int>(node->input_types.size())) return PX_DTYPE_INVALID;
  return static_cast<px_dtype>(node->input_types[i]);
}

int px_operation_num_control_inputs(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return node == nullptr ? 0 : static_cast<int>(node->control_inputs.size());
}

px_operation* px_operation_control_input(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= static_cast<int>(node->control_inputs.size())) return nullptr;
  try {
    return operation->graph->Handle(node->control_inputs[i]);
  } catch (...) {
    return nullptr;
  }
}

int px_operation_num_outputs(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return node == nullptr ? 0 : node->num_outputs();
}

px_dtype px_operation_output_dtype(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= node->num_outputs()) return PX_DTYPE_INVALID;
  return static_cast<px_dtype>(node->output_types[i]);
}

px_code px_operation_output_shape(const px_operation* operation, int i, int* out_ndim, const int64_t** out_dims,
                                  px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(operation);
    PX_REQUIRE_ARG(out_ndim);
    PX_REQUIRE_ARG(out_dims);
    const plexus::Node* node = NodeOf(operation);
    if (node == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": the operation is not in its graph"));
    }
    if (i < 0 || i >= node->num_outputs() || i >= static_cast<int>(node->output_shapes.size())) {
      return SetStatus(status, PX_STATUS_OUT_OF_RANGE,
                       absl::StrCat(fn, ": output ", i, " is out of range (", node->Describe(), " has ",
                                    node->num_outputs(), " output(s))"));
    }
    const plexus::PartialShape& shape = node->output_shapes[i];
    if (!shape.rank_known()) {
      *out_ndim = -1;
      *out_dims = nullptr;
    } else {
      *out_ndim = static_cast<int>(shape.rank());
      *out_dims = shape.rank() == 0 ? nullptr : shape.dims().data();
    }
    return Ok(status);
  });
}

int px_operation_output_num_consumers(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= node->num_outputs()) return 0;
  int count = 0;
  for (const plexus::Node* c : node->consumers) {
    for (const plexus::Endpoint& in : c->inputs) count += in.node == node && in.index == i;
  }
  return count;
}

int px_operation_num_attrs(const px_operation* operation) {
  const plexus::Node* node = NodeOf(operation);
  return node == nullptr ? 0 : static_cast<int>(node->attrs.size());
}

const char* px_operation_attr_name(const px_operation* operation, int i) {
  const plexus::Node* node = NodeOf(operation);
  if (node == nullptr || i < 0 || i >= static_cast<int>(node->attrs.size())) return nullptr;
  auto it = node->attrs.begin();
  std::advance(it, i);
  return it->first.c_str();
}

px_code px_operation_attr_int(const px_operation* operation, const char* name, int64_t* out_value,
                              px_status* status) {
  if (out_value == nullptr) return NullArgument(__func__, "out_value", status);
  return ReadAttr(__func__, operation, name, "an int", plexus::tf::AttrValue::kI, status,
                  [&](const plexus::tf::AttrValue& v) { *out_value = v.i(); });
}

px_code px_operation_attr_float(const px_operation* operation, const char* name, float* out_value,
                                px_status* status) {
  if (out_value == nullptr) return NullArgument(__func__, "out_value", status);
  return ReadAttr(__func__, operation, name, "a float", plexus::tf::AttrValue::kF, status,
                  [&](const plexus::tf::AttrValue& v) { *out_value = v.f(); });
}

px_code px_operation_attr_bool(const px_operation* operation, const char* name, int* out_value,
                               px_status* status) {
  if (out_value == nullptr) return NullArgument(__func__, "out_value", status);
  return ReadAttr(__func__, operation, name, "a bool", plexus::tf::AttrValue::kB, status,
                  [&](const plexus::tf::AttrValue& v) { *out_value = v.b() ? 1 : 0; });
}

px_code px_operation_attr_type(const px_operation* operation, const char* name, px_dtype* out_value,
                               px_status* status) {
  if (out_value == nullptr) return NullArgument(__func__, "out_value", status);
  return ReadAttr(__func__, operation, name, "a type", plexus::tf::AttrValue::kType, status,
                  [&](const plexus::tf::AttrValue& v) { *out_value = static_cast<px_dtype>(v.type()); });
}

px_code px_operation_attr_string(const px_operation* operation, const char* name, const char** out_data,
                                 size_t* out_length, px_status* status) {
  if (out_data == nullptr) return NullArgument(__func__, "out_data", status);
  if (out_length == nullptr) return NullArgument(__func__, "out_length", status);
  return ReadAttr(__func__, operation, name, "a string", plexus::tf::AttrValue::kS, status,
                  [&](const plexus::tf::AttrValue& v) {
                    *out_data = v.s().data();
                    *out_length = v.s().size();
                  });
}

px_code px_operation_attr_value_proto(const px_operation* operation, const char* name, px_buffer** out_buffer,
                                      px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_buffer);
    const plexus::tf::AttrValue* value = nullptr;
    px_code code = FindAttr(fn, operation, name, &value, status);
    if (code != PX_STATUS_OK) return code;
    auto buffer = std::make_unique<px_buffer>();
    if (!value->SerializeToString(&buffer->bytes)) {
      return SetStatus(status, PX_STATUS_INTERNAL, absl::StrCat(fn, ": the attribute does not serialize"));
    }
    *out_buffer = buffer.release();
    return Ok(status);
  });
}

}  // extern "C"
