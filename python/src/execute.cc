// Running ops from Python: eager execution, and tracing into a graph.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common.h"
#include "plexus/op_def.h"
#include "plexus/tensor_proto.h"

namespace plexus::python {
namespace {

// Per op: its definition, and per flat input the argument it belongs to
// (computed per call for ops with list inputs).
}  // namespace

const OpInfo& FindOp(const std::string& name) {
  static std::mutex mu;
  static auto* ops = new absl::node_hash_map<std::string, OpInfo>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = ops->find(name);
  if (it != ops->end()) return it->second;
  const OpDef* def = OpRegistry::Global().Find(name);
  if (def == nullptr) Throw(absl::NotFoundError(absl::StrCat("op '", name, "' is not registered in Plexus")));
  auto& info = (*ops)[name];
  info.def = def;
  for (const ArgSpec& a : def->inputs) info.has_lists |= !a.number_attr.empty() || !a.type_list_attr.empty();
  return info;
}

namespace {

// Which argument each of `n` flat inputs belongs to.
std::vector<int> ArgOfInputs(const OpDef& def, size_t n, const AttrMap& attrs) {
  std::vector<int64_t> count(def.inputs.size(), 1);
  int open = -1;
  int64_t fixed = 0;
  for (size_t a = 0; a < def.inputs.size(); ++a) {
    const ArgSpec& arg = def.inputs[a];
    if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) {
      const std::string& attr = arg.number_attr.empty() ? arg.type_list_attr : arg.number_attr;
      auto it = attrs.find(attr);
      if (it != attrs.end()) {
        count[a] = arg.number_attr.empty() ? it->second.list().type_size() : it->second.i();
      } else if (open < 0) {
        open = static_cast<int>(a);
        continue;
      }
    }
    fixed += count[a];
  }
  if (open >= 0) count[open] = std::max<int64_t>(0, static_cast<int64_t>(n) - fixed);
  std::vector<int> out;
  for (size_t a = 0; a < def.inputs.size(); ++a) {
    for (int64_t k = 0; k < count[a]; ++k) out.push_back(static_cast<int>(a));
  }
  out.resize(n, -1);
  return out;
}

void SetShape(nb::handle v, tf::TensorShapeProto* shape) {
  if (v.is_none()) {
    shape->set_unknown_rank(true);
    return;
  }
  for (nb::handle d : v) {
    shape->add_dim()->set_size(d.is_none() ? -1 : nb::cast<int64_t>(d));
  }
}

void ToAttrValue(const AttrSpec& spec, nb::handle v, tf::AttrValue* out, const std::string& op) {
  const std::string what = absl::StrCat("op ", op, ": attribute '", spec.name, "'");
  try {
    const std::string& t = spec.type;
    if (t == "int") {
      if (PyBool_Check(v.ptr()) || !PyLong_Check(v.ptr())) throw nb::type_error();
      out->set_i(nb::cast<int64_t>(v));
    } else if (t == "float") {
      out->set_f(static_cast<float>(nb::cast<double>(v)));
    } else if (t == "bool") {
      if (!PyBool_Check(v.ptr())) throw nb::type_error();
      out->set_b(v.ptr() == Py_True);
    } else if (t == "type") {
      out->set_type(static_cast<tf::DataType>(ToDataType(v)));
    } else if (t == "string") {
      if (nb::isinstance<nb::bytes>(v)) {
        out->set_s(std::string(nb::cast<nb::bytes>(v).c_str(), nb::cast<nb::bytes>(v).size()));
      } else {
        out->set_s(nb::cast<std::string>(v));
      }
    } else if (t == "shape") {
      SetShape(v, out->mutable_shape());
    } else if (t == "tensor") {
      Tensor value = HostCopy(ToTensor(v, DataType::kInvalid, what));
      *out->mutable_tensor() = Unwrap(TensorToProto(value));
    } else if (t == "func") {
      out->mutable_func()->set_name(nb::cast<std::string>(v));
    } else if (t.rfind("list(", 0) == 0) {
      auto* list = out->mutable_list();
      const std::string inner = t.substr(5, t.size() - 6);
      for (nb::handle item : v) {
        if (inner == "int") list->add_i(nb::cast<int64_t>(item));
        else if (inner == "float") list->add_f(static_cast<float>(nb::cast<double>(item)));
        else if (inner == "bool") list->add_b(nb::cast<bool>(item));
        else if (inner == "type") list->add_type(static_cast<tf::DataType>(ToDataType(item)));
        else if (inner == "string") list->add_s(nb::cast<std::string>(item));
        else if (inner == "shape") SetShape(item, list->add_shape());
        else Throw(absl::UnimplementedError(absl::StrCat(what, " has type ", t, ", which Python cannot set yet")));
      }
    } else {
      Throw(absl::UnimplementedError(absl::StrCat(what, " has type ", t, ", which Python cannot set yet")));
    }
  } catch (const nb::python_error&) {
    throw;
  } catch (const std::exception&) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError,
                    absl::StrCat(what, " must be a ", spec.type, ", got ",
                                 nb::cast<std::string>(nb::repr(v)))
                        .c_str());
    throw nb::python_error();
  }
}

Node* GraphInput(TraceState& trace, nb::handle value, DataType want, const std::string& what) {
  if (nb::isinstance<PyGraphTensor>(value)) {
    auto* g = nb::inst_ptr<PyGraphTensor>(value);
    if (g->trace.get() != &trace) {
      Throw(absl::InvalidArgumentError(absl::StrCat(
          what, " ('", g->node->name, "') belongs to another traced function")));
    }
    return nullptr;  // the caller takes the endpoint
  }
  Tensor t = ToTensor(value, want, what);
  const bool eager = nb::isinstance<PyTensor>(value) && t.raw_data() != nullptr;
  std::string key;
  if (eager) {
    key = absl::StrCat(absl::Hex(reinterpret_cast<uintptr_t>(t.raw_data())), " ",
                       static_cast<int>(t.dtype()), " ", absl::StrJoin(t.shape(), ","));
    auto it = trace.captured.find(key);
    if (it != trace.captured.end()) return it->second.node;
  }
  // A device tensor's value once the eager work that makes it has finished.
  Node* node = Unwrap(trace.builder.AddConst(HostCopy(t), "Const"));
  if (eager) trace.captured[key] = TraceState::Captured{std::move(t), node};
  return node;
}

nb::list TraceOp(const std::shared_ptr<TraceState>& trace, const OpInfo& info, const std::string& op,
                 const nb::handle* inputs, size_t n, AttrMap attrs, const std::vector<DataType>& wanted) {
  std::vector<Endpoint> endpoints;
  size_t k = 0;
  for (; k < n;) {
    nb::handle v = inputs[k];
    const std::string what = absl::StrCat("op ", op, ": input ", k);
    Node* n = GraphInput(*trace, v, wanted[k], what);
    if (n == nullptr) {
      auto* g = nb::inst_ptr<PyGraphTensor>(v);
      endpoints.push_back(Endpoint{g->node, g->index});
    } else {
      endpoints.push_back(Endpoint{n, 0});
    }
    ++k;
  }
  // Stateful ops run in program order (TensorFlow 2's automatic control
  // dependencies): a read after an assignment sees the new value.
  std::vector<Node*> controls = trace->deps.ControlInputs(*info.def, endpoints);
  Node* node = Unwrap(trace->builder.AddNode(op, endpoints, std::move(attrs), {}, controls));
  trace->deps.Added(node);
  nb::list out;
  for (int i = 0; i < node->num_outputs(); ++i) out.append(nb::cast(PyGraphTensor{trace, node, i}));
  return out;
}

}  // namespace

AttrMap ToAttrs(const OpDef& def, nb::handle attrs) {
  AttrMap out;
  if (!attrs.is_valid() || attrs.is_none()) return out;
  for (auto [key, value] : nb::cast<nb::dict>(attrs)) {
    std::string name = nb::cast<std::string>(key);
    if (value.is_none()) continue;  // "use the default"
    const AttrSpec* spec = def.FindAttr(name);
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const AttrSpec& s : def.attrs) names.push_back(s.name);
      PyErr_SetString(PyExc_TypeError,
                      absl::StrCat("op ", def.name, " has no attribute '", name, "'",
                                   names.empty() ? " (it has none)" : absl::StrCat(" (it has: ", absl::StrJoin(names, ", "), ")"))
                          .c_str());
      throw nb::python_error();
    }
    ToAttrValue(*spec, value, &out[name], def.name);
  }
  return out;
}

namespace {

// ExecuteOp on the items of a Python sequence.
nb::list ExecuteSequence(const OpInfo& info, nb::handle inputs, nb::handle attrs) {
  nb::sequence seq = nb::borrow<nb::sequence>(inputs);
  const size_t n = nb::len(seq);
  absl::InlinedVector<nb::object, 4> keep(n);  // owns what the handles point at
  absl::InlinedVector<nb::handle, 4> handles(n);
  for (size_t k = 0; k < n; ++k) {
    keep[k] = seq[k];
    handles[k] = keep[k];
  }
  return ExecuteOp(info, handles.data(), n, attrs);
}

}  // namespace

nb::list Execute(const std::string& op, nb::handle inputs, nb::handle attrs) {
  return ExecuteSequence(FindOp(op), inputs, attrs);
}

nb::list ExecuteOp(const OpInfo& info, const nb::handle* inputs, size_t n, nb::handle attrs_obj) {
  const OpDef& def = *info.def;
  const std::string& op = def.name;
  AttrMap attrs = ToAttrs(def, attrs_obj);
  std::shared_ptr<TraceState> trace = ActiveTrace();

  // The fast path: every input an eager tensor.
  absl::InlinedVector<Tensor, 4> tensors;
  tensors.reserve(n);
  bool all_tensors = trace == nullptr;
  for (size_t k = 0; all_tensors && k < n; ++k) {
    nb::handle v = inputs[k];
    if (nb::isinstance<PyTensor>(v)) {
      tensors.push_back(nb::inst_ptr<PyTensor>(v)->tensor);
    } else {
      all_tensors = false;
    }
  }
  std::vector<DataType> wanted;
  // Objects that stand for a tensor (plexus.Variable) give their value.
  std::vector<nb::object> values;
  if (!all_tensors) {
    for (size_t k = 0; k < n; ++k) {
      nb::handle v = inputs[k];
      if (!nb::isinstance<PyTensor>(v) && !nb::isinstance<PyGraphTensor>(v) && nb::hasattr(v, "_as_tensor")) {
        if (values.empty()) {
          for (size_t j = 0; j < n; ++j) values.push_back(nb::borrow(inputs[j]));
        }
        values[k] = v.attr("_as_tensor")();
      }
    }
    if (!values.empty()) {
      static_assert(sizeof(nb::object) == sizeof(nb::handle), "nb::object is a handle");
      inputs = reinterpret_cast<const nb::handle*>(values.data());
    }
    // Dtypes for Python values: from another input with the same type
    // attribute, else the attribute given, else the argument's fixed type.
    std::vector<int> arg_of = ArgOfInputs(def, n, attrs);
    wanted.assign(n, DataType::kInvalid);
    std::map<std::string, DataType> by_attr;
    for (size_t k = 0; k < n; ++k) {
      nb::handle v = inputs[k];
      DataType t = nb::isinstance<PyTensor>(v) ? nb::inst_ptr<PyTensor>(v)->tensor.dtype()
                   : nb::isinstance<PyGraphTensor>(v) ? nb::inst_ptr<PyGraphTensor>(v)->dtype()
                                                     : DataType::kInvalid;
      if (t != DataType::kInvalid && arg_of[k] >= 0 && !def.inputs[arg_of[k]].type_attr.empty()) {
        by_attr.emplace(def.inputs[arg_of[k]].type_attr, t);
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if (arg_of[k] < 0) continue;
      const ArgSpec& arg = def.inputs[arg_of[k]];
      if (arg.fixed_type != DataType::kInvalid) {
        wanted[k] = arg.fixed_type;
      } else if (!arg.type_attr.empty()) {
        auto given = attrs.find(arg.type_attr);
        if (given != attrs.end() && given->second.value_case() == tf::AttrValue::kType) {
          wanted[k] = BaseType(given->second.type());
        } else if (auto it = by_attr.find(arg.type_attr); it != by_attr.end()) {
          wanted[k] = it->second;
        } else if (const AttrSpec* spec = def.FindAttr(arg.type_attr);
                   spec != nullptr && spec->has_default &&
                   spec->default_value.value_case() == tf::AttrValue::kType &&
                   !nb::hasattr(inputs[k], "dtype")) {
          // Nothing else decides it: the attribute's default, as TensorFlow
          // does (Reshape's shape [] is int32, not float). A value with a
          // dtype of its own (a NumPy array or scalar) keeps it, as in
          // TensorFlow, where the default is only a hint.
          wanted[k] = BaseType(spec->default_value.type());
        }
      } else if (!arg.type_list_attr.empty()) {
        auto given = attrs.find(arg.type_list_attr);
        if (given != attrs.end()) {
          int pos = 0;
          for (size_t j = 0; j < k; ++j) pos += arg_of[j] == arg_of[k];
          if (pos < given->second.list().type_size()) wanted[k] = BaseType(given->second.list().type(pos));
        }
      }
    }
    bool symbolic = trace != nullptr;
    for (size_t k = 0; k < n && !symbolic; ++k) {
      if (nb::isinstance<PyGraphTensor>(inputs[k])) {
        symbolic = true;
        trace = nb::inst_ptr<PyGraphTensor>(inputs[k])->trace;
      }
    }
    if (symbolic) return TraceOp(trace, info, op, inputs, n, std::move(attrs), wanted);
    tensors.clear();
    for (size_t k = 0; k < n; ++k) {
      tensors.push_back(ToTensor(inputs[k], wanted[k], absl::StrCat("op ", op, ": input ", k)));
    }
  }
  // Where: the scope's device, else the first input's device, else the host.
  Device* device = EagerContext::DeviceFor(tensors, ScopeDevice());
  int64_t elements = 0;
  absl::InlinedVector<DataType, 4> types;
  for (const Tensor& t : tensors) {
    types.push_back(t.dtype());
    elements += t.dtype() == DataType::kString ? 0 : t.num_elements();
  }
  std::shared_ptr<const EagerOp> prepared;
  const bool plain = attrs.empty() && !info.has_lists;
  if (plain) {
    std::lock_guard<std::mutex> lock(info.mu);
    for (const OpInfo::Prepared& p : info.prepared) {
      if (p.device == device && p.types == types) {
        prepared = p.op;
        break;
      }
    }
  }
  if (prepared == nullptr) {
    prepared = Unwrap(GetEager().Prepare(op, types, attrs, device));
    if (plain) {
      std::lock_guard<std::mutex> lock(info.mu);
      if (info.prepared.size() < 16) info.prepared.push_back({device, types, prepared});
    }
  }
  // Small ops run with the GIL held: releasing it would cost more than they
  // take. Anything sizeable lets other Python threads run meanwhile.
  constexpr int64_t kReleaseGilElements = 1 << 14;
  absl::StatusOr<std::vector<Tensor>> result;
  if (elements >= kReleaseGilElements || prepared->device() == nullptr ||
      !prepared->device()->host_accessible()) {
    nb::gil_scoped_release release;
    result = prepared->Run(tensors);
  } else {
    result = prepared->Run(tensors);
  }
  std::vector<Tensor> outputs = Unwrap(std::move(result));
  nb::list out;
  for (Tensor& t : outputs) out.append(WrapTensor(std::move(t)));
  if (TapesActive()) RecordOnTapes(*prepared, inputs, tensors, out);
  return out;
}

void BindExecute(nb::module_& m) {
  m.def("execute", [](nb::handle op, nb::handle inputs, nb::handle attrs) {
    // Generated wrappers pass the same (interned) name object on every
    // call: look the op up by that object, without building a string.
    static std::mutex mu;
    static auto* by_object = new absl::flat_hash_map<PyObject*, std::pair<nb::object, const OpInfo*>>();
    const OpInfo* info = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = by_object->find(op.ptr());
      if (it != by_object->end()) info = it->second.second;
    }
    if (info == nullptr) {
      if (!nb::isinstance<nb::str>(op)) {
        PyErr_SetString(PyExc_TypeError, "execute(): the op name must be a str");
        throw nb::python_error();
      }
      info = &FindOp(nb::cast<std::string>(op));
      std::lock_guard<std::mutex> lock(mu);
      if (by_object->size() < 8192) by_object->emplace(op.ptr(), std::make_pair(nb::borrow(op), info));
    }
    return ExecuteSequence(*info, inputs, attrs);
  }, nb::arg("op"), nb::arg("inputs"), nb::arg("attrs") = nb::none(),
  "Runs one op (or adds it to the function being traced); returns its outputs as a list.");

  struct PyTrace {
    std::shared_ptr<TraceState> state;
    std::shared_ptr<TraceState> previous;
  };
  nb::class_<PyTrace>(m, "Trace", "Builds the graph of a traced function.")
      .def("__init__", [](PyTrace* self, const std::string& name) {
        new (self) PyTrace{std::make_shared<TraceState>(absl::StrCat("function '", name, "'")), nullptr};
      })
      .def("placeholder", [](PyTrace& t, nb::handle dtype, nb::handle shape, const std::string& name) {
        PartialShape s;
        if (!shape.is_none()) {
          Shape dims;
          for (nb::handle d : shape) dims.push_back(d.is_none() ? -1 : nb::cast<int64_t>(d));
          s = PartialShape(dims);
        }
        Node* node = Unwrap(t.state->builder.AddPlaceholder(ToDataType(dtype), s, name));
        return nb::cast(PyGraphTensor{t.state, node, 0});
      }, nb::arg("dtype"), nb::arg("shape").none(), nb::arg("name"))
      .def("output", [](PyTrace& t, nb::handle value) -> std::string {
        // A function result: symbolic tensors as they are, anything else as a constant.
        if (nb::isinstance<PyGraphTensor>(value)) {
          auto* g = nb::inst_ptr<PyGraphTensor>(value);
          if (g->trace != t.state) Throw(absl::InvalidArgumentError("a result belongs to another traced function"));
          return absl::StrCat(g->node->name, ":", g->index);
        }
        Node* node = GraphInput(*t.state, value, DataType::kInvalid, "a result");
        return absl::StrCat(node->name, ":0");
      })
      .def("__enter__", [](PyTrace& t) {
        t.previous = ActiveTrace();
        SetActiveTrace(t.state);
      })
      .def("__exit__", [](PyTrace& t, nb::args) {
        SetActiveTrace(t.previous);
        t.previous = nullptr;
        // The captured tensors were kept only so that no other value could
        // take their memory while tracing; the graph holds their values.
        t.state->captured.clear();
      })
      .def("stateful_nodes", [](PyTrace& t) {
        std::vector<std::string> names;
        for (const auto& node : t.state->builder.graph().nodes()) {
          if (node->def != nullptr && node->def->is_stateful && node->op != "Placeholder") names.push_back(node->name);
        }
        return names;
      })
      .def("graph_def", [](PyTrace& t) {
        std::string bytes;
        t.state->builder.ToGraphDef().SerializeToString(&bytes);
        return nb::bytes(bytes.data(), bytes.size());
      })
      .def_prop_ro("num_nodes", [](PyTrace& t) { return t.state->builder.graph().num_nodes(); });
}

}  // namespace plexus::python
