// The extension module: runtime, plugins and devices, dtypes, errors and the
// op registry as Python sees them.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/threads.h"

namespace plexus::python {
namespace {

Runtime* g_runtime = nullptr;
EagerContext* g_eager = nullptr;
thread_local std::shared_ptr<Device> t_scope_device;
thread_local std::shared_ptr<TraceState> t_trace;
// Python objects the module keeps for the life of the process are leaked on
// purpose: a static nb::object would drop its reference in exit(), after the
// interpreter has finalized, and freeing a Python object then crashes
// (Python 3.12 frees through the thread state, which is gone by then).
// plexus.errors classes by status code (set by the package at import).
std::array<nb::object, 17>& g_error_classes = *new std::array<nb::object, 17>();

struct DTypeInfo {
  DataType type;
  const char* name;
  const char* numpy;
};
constexpr DTypeInfo kDTypes[] = {
    {DataType::kFloat, "float32", "float32"},   {DataType::kDouble, "float64", "float64"},
    {DataType::kHalf, "float16", "float16"},    {DataType::kBFloat16, "bfloat16", ""},
    {DataType::kInt8, "int8", "int8"},          {DataType::kInt16, "int16", "int16"},
    {DataType::kInt32, "int32", "int32"},       {DataType::kInt64, "int64", "int64"},
    {DataType::kUInt8, "uint8", "uint8"},       {DataType::kUInt16, "uint16", "uint16"},
    {DataType::kUInt32, "uint32", "uint32"},    {DataType::kUInt64, "uint64", "uint64"},
    {DataType::kBool, "bool", "bool"},          {DataType::kString, "string", ""},
    {DataType::kComplex64, "complex64", "complex64"}, {DataType::kComplex128, "complex128", "complex128"},
    {DataType::kResource, "resource", ""},      {DataType::kVariant, "variant", ""},
};

const DTypeInfo* Info(DataType type) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.type == type) return &d;
  }
  return nullptr;
}

std::array<nb::object, 32>& g_dtype_objects = *new std::array<nb::object, 32>();  // leaked, see above

}  // namespace

absl::Status SynchronizeEagerWork() {
  absl::Status first;
  for (const auto& d : GetRuntime().devices()) {
    if (d->host_accessible()) continue;  // eager ops there finish before they return
    absl::Status s = GetEager().Synchronize(d.get());
    if (first.ok()) first = s;
  }
  return first;
}

namespace {

nb::dict DeviceDict(const Device& d) {
  nb::dict out;
  out["name"] = d.name();
  out["type"] = d.type();
  out["ordinal"] = d.ordinal();
  out["description"] = std::string(d.info().name);
  out["vendor"] = std::string(d.info().vendor);
  out["total_memory"] = d.info().total_memory_bytes;
  out["host_accessible"] = d.host_accessible();
  out["plugin"] = d.plugin().name();
  return out;
}

nb::dict PluginDict(const Plugin& p) {
  nb::dict out;
  out["name"] = p.name();
  out["path"] = p.path();
  out["version"] = p.version();
  out["abi_version"] = absl::StrCat(p.abi_major(), ".", p.abi_minor());
  out["device_type"] = p.device_type();
  out["score"] = p.score();
  out["num_kernels"] = p.kernels().size();
  int n = 0;
  for (const auto& d : GetRuntime().devices()) n += &d->plugin() == &p;
  out["num_devices"] = n;
  return out;
}

nb::object AttrDefault(const AttrSpec& spec) {
  if (!spec.has_default) return nb::none();
  const tf::AttrValue& v = spec.default_value;
  switch (v.value_case()) {
    case tf::AttrValue::kI: return nb::int_(v.i());
    case tf::AttrValue::kF: return nb::float_(v.f());
    case tf::AttrValue::kB: return nb::bool_(v.b());
    case tf::AttrValue::kS: return nb::str(v.s().c_str(), v.s().size());
    case tf::AttrValue::kType: return DTypeObject(BaseType(v.type()));
    case tf::AttrValue::kShape: {
      if (v.shape().unknown_rank()) return nb::none();
      nb::list dims;
      for (const auto& d : v.shape().dim()) dims.append(d.size() < 0 ? nb::object(nb::none()) : nb::object(nb::int_(d.size())));
      return nb::tuple(dims);
    }
    case tf::AttrValue::kList: {
      nb::list out;
      const auto& l = v.list();
      for (auto i : l.i()) out.append(nb::int_(i));
      for (auto f : l.f()) out.append(nb::float_(f));
      for (auto b : l.b()) out.append(nb::bool_(b));
      for (const auto& s : l.s()) out.append(nb::str(s.c_str(), s.size()));
      for (auto t : l.type()) out.append(DTypeObject(BaseType(t)));
      return out;
    }
    case tf::AttrValue::kFunc: return nb::str(v.func().name().c_str());
    default: return nb::none();
  }
}

nb::dict ArgDict(const ArgSpec& a) {
  nb::dict d;
  d["name"] = a.name;
  d["type_attr"] = a.type_attr;
  d["number_attr"] = a.number_attr;
  d["type_list_attr"] = a.type_list_attr;
  d["fixed_type"] = a.fixed_type == DataType::kInvalid ? nb::none() : DTypeObject(a.fixed_type);
  d["is_ref"] = a.is_ref;
  return d;
}

nb::list OpDefs() {
  nb::list out;
  const OpRegistry& reg = OpRegistry::Global();
  for (const std::string& name : reg.ListOps()) {
    const OpDef* def = reg.Find(name);
    nb::dict d;
    d["name"] = def->name;
    nb::list inputs, outputs, attrs;
    for (const ArgSpec& a : def->inputs) inputs.append(ArgDict(a));
    for (const ArgSpec& a : def->outputs) outputs.append(ArgDict(a));
    for (const AttrSpec& s : def->attrs) {
      nb::dict a;
      a["name"] = s.name;
      a["type"] = s.type;
      a["has_default"] = s.has_default;
      a["default"] = AttrDefault(s);
      nb::list allowed;
      for (DataType t : s.allowed_types) {
        if (Info(t) != nullptr) allowed.append(DTypeObject(t));
      }
      a["allowed_types"] = allowed;
      a["minimum"] = s.has_minimum ? nb::object(nb::int_(s.minimum)) : nb::object(nb::none());
      attrs.append(a);
    }
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    d["attrs"] = attrs;
    d["is_stateful"] = def->is_stateful;
    out.append(d);
  }
  return out;
}

}  // namespace

Runtime& GetRuntime() { return *g_runtime; }
EagerContext& GetEager() { return *g_eager; }
Device* ScopeDevice() { return t_scope_device.get(); }
std::shared_ptr<TraceState> ActiveTrace() { return t_trace; }
void SetActiveTrace(std::shared_ptr<TraceState> trace) { t_trace = std::move(trace); }

void Throw(const absl::Status& status) {
  const int code = static_cast<int>(status.code());
  nb::handle cls = (code >= 0 && code < 17 && g_error_classes[code].is_valid())
                       ? g_error_classes[code]
                       : nb::handle(PyExc_RuntimeError);
  std::string message(status.message());
  PyErr_SetString(cls.ptr(), message.c_str());
  throw nb::python_error();
}

nb::object DTypeObject(DataType type) {
  const int i = static_cast<int>(type);
  if (i >= 0 && i < 32 && g_dtype_objects[i].is_valid()) return g_dtype_objects[i];
  return nb::cast(PyDType{type});
}

const char* NumpyName(DataType type) {
  const DTypeInfo* info = Info(type);
  return info == nullptr ? "" : info->numpy;
}

DataType ToDataType(nb::handle obj) {
  if (nb::isinstance<PyDType>(obj)) return nb::cast<PyDType&>(obj).type;
  std::string name;
  if (nb::isinstance<nb::str>(obj)) {
    name = nb::cast<std::string>(obj);
  } else if (nb::hasattr(obj, "dtype") && !nb::isinstance<nb::type_object>(obj)) {
    return ToDataType(obj.attr("dtype"));
  } else {
    // A numpy dtype or scalar type (numpy.float32): its name.
    nb::object np = nb::module_::import_("numpy");
    nb::object dt;
    try {
      dt = np.attr("dtype")(obj);
    } catch (const nb::python_error&) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("cannot interpret ", nb::cast<std::string>(nb::repr(obj)), " as a dtype")));
    }
    name = nb::cast<std::string>(dt.attr("name"));
  }
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.name) return d.type;
  }
  auto parsed = DataTypeFromName(name == "bool_" ? "bool" : name);
  if (parsed.ok()) return *parsed;
  Throw(absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'")));
}

}  // namespace plexus::python

using namespace plexus;
using namespace plexus::python;

NB_MODULE(_plexus, m) {
  m.doc() = "Plexus runtime extension (use the plexus package, not this module)";
  // The runtime, dtypes and error classes live for the whole process on
  // purpose (tensors may outlive the module), so nanobind's exit-time leak
  // report would only list them.
  nb::set_leak_warnings(false);
  {
    RuntimeOptions options;  // plugins beside the core library and on PLEXUS_PLUGIN_PATH
    auto runtime = Runtime::Create(options);
    if (!runtime.ok()) {
      throw std::runtime_error(absl::StrCat("plexus: cannot create the runtime: ", runtime.status().message()));
    }
    // Kept for the life of the process: tensors may outlive the module.
    g_runtime = runtime->release();
    g_eager = new EagerContext(g_runtime);
  }

  nb::class_<PyDType>(m, "DType")
      .def_prop_ro("name", [](const PyDType& d) {
        const DTypeInfo* info = Info(d.type);
        return info != nullptr ? std::string(info->name) : DataTypeName(d.type);
      })
      .def_prop_ro("enum", [](const PyDType& d) { return static_cast<int>(d.type); })
      .def_prop_ro("itemsize", [](const PyDType& d) { return DataTypeSize(d.type); })
      .def_prop_ro("is_floating", [](const PyDType& d) {
        return d.type == DataType::kFloat || d.type == DataType::kDouble || d.type == DataType::kHalf ||
               d.type == DataType::kBFloat16;
      })
      .def_prop_ro("is_integer", [](const PyDType& d) {
        switch (d.type) {
          case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
          case DataType::kUInt8: case DataType::kUInt16: case DataType::kUInt32: case DataType::kUInt64:
            return true;
          default: return false;
        }
      })
      .def_prop_ro("is_bool", [](const PyDType& d) { return d.type == DataType::kBool; })
      .def_prop_ro("is_complex", [](const PyDType& d) {
        return d.type == DataType::kComplex64 || d.type == DataType::kComplex128;
      })
      .def_prop_ro("as_numpy_dtype", [](const PyDType& d) -> nb::object {
        const char* np = NumpyName(d.type);
        if (*np == '\0') return nb::none();
        return nb::module_::import_("numpy").attr("dtype")(np);
      })
      .def("__eq__", [](const PyDType& a, nb::handle b) {
        if (nb::isinstance<PyDType>(b)) return a.type == nb::cast<PyDType&>(b).type;
        try {
          return a.type == ToDataType(b);
        } catch (const nb::python_error&) {
          return false;
        }
      })
      .def("__ne__", [](const PyDType& a, nb::handle b) {
        if (nb::isinstance<PyDType>(b)) return a.type != nb::cast<PyDType&>(b).type;
        return true;
      })
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.type); })
      .def("__repr__", [](const PyDType& d) {
        const DTypeInfo* info = Info(d.type);
        return absl::StrCat("plexus.", info != nullptr ? info->name : DataTypeName(d.type));
      })
      .def("__reduce__", [](const PyDType& d) {
        const DTypeInfo* info = Info(d.type);
        return nb::make_tuple(nb::module_::import_("plexus").attr("as_dtype"),
                              nb::make_tuple(info != nullptr ? info->name : DataTypeName(d.type)));
      });
  for (const DTypeInfo& d : kDTypes) {
    nb::object obj = nb::cast(PyDType{d.type});
    g_dtype_objects[static_cast<int>(d.type)] = obj;
    m.attr(std::string(d.name) == "bool" ? "bool_" : d.name) = obj;
  }
  m.def("as_dtype", [](nb::handle obj) { return DTypeObject(ToDataType(obj)); },
        "The plexus DType for a DType, NumPy dtype or name.");

  m.def("_set_error_classes", [](nb::dict classes) {
    for (auto [code, cls] : classes) {
      int c = nb::cast<int>(code);
      if (c >= 0 && c < 17) g_error_classes[c] = nb::borrow(cls);
    }
  });

  m.def("devices", []() {
    nb::list out;
    for (const auto& d : GetRuntime().devices()) out.append(DeviceDict(*d));
    return out;
  });
  m.def("plugins", []() {
    nb::list out;
    for (const auto& p : GetRuntime().plugins()) out.append(PluginDict(*p));
    return out;
  });
  m.def("load_reports", []() {
    nb::list out;
    for (const auto& r : GetRuntime().load_reports()) {
      nb::dict d;
      d["path"] = r.path;
      d["loaded"] = r.loaded;
      d["message"] = r.message;
      out.append(d);
    }
    return out;
  });
  m.def("load_plugin", [](const std::string& path) {
    std::shared_ptr<Plugin> plugin;
    {
      nb::gil_scoped_release release;
      auto loaded = GetRuntime().LoadPlugin(path);
      if (!loaded.ok()) {
        nb::gil_scoped_acquire acquire;
        Throw(loaded.status());
      }
      plugin = *loaded;
    }
    return PluginDict(*plugin);
  });
  m.def("default_device", []() -> nb::object {
    auto d = GetRuntime().DefaultDevice();
    if (d == nullptr) return nb::none();
    return nb::str(d->name().c_str());
  });
  m.def("find_device", [](const std::string& name) {
    return Unwrap(GetRuntime().FindDevice(name))->name();
  });
  m.def("_set_scope_device", [](nb::handle name) -> nb::object {
    nb::object previous = t_scope_device ? nb::object(nb::str(t_scope_device->name().c_str())) : nb::none();
    if (name.is_none()) {
      t_scope_device = nullptr;
    } else {
      t_scope_device = Unwrap(GetRuntime().FindDevice(nb::cast<std::string>(name)));
    }
    return previous;
  }, nb::arg("name").none());
  m.def("_scope_device", []() -> nb::object {
    return t_scope_device ? nb::object(nb::str(t_scope_device->name().c_str())) : nb::none();
  });
  m.def("op_defs", &OpDefs, "Every registered op: inputs, outputs and attributes.");
  // The package registers this with atexit, so it runs while the
  // interpreter is still whole: it waits for the work queued on every device
  // (nothing a queued kernel reads may be freed under it during exit) and
  // drops this thread's state that holds Python objects or tensors (active
  // tapes, an unfinished trace, the device scope), which would otherwise be
  // destroyed in exit(), after Python has finalized. The runtime, plugins
  // and devices themselves are never torn down: tensors may outlive the
  // module, and a plugin unloaded at exit could pull code from under threads
  // it started (docs/architecture.md, "Teardown").
  m.def("_at_exit", []() {
    ClearTapes();
    t_trace.reset();
    t_scope_device.reset();
    nb::gil_scoped_release release;
    (void)SynchronizeEagerWork();
  });
  m.def("synchronize", [](nb::handle device) {
    std::vector<Device*> devices;
    if (device.is_none()) {
      for (const auto& d : GetRuntime().devices()) devices.push_back(d.get());
    } else {
      devices.push_back(Unwrap(GetRuntime().FindDevice(nb::cast<std::string>(device))).get());
    }
    for (Device* d : devices) {
      absl::Status s;
      {
        nb::gil_scoped_release release;
        s = GetEager().Synchronize(d);
      }
      Check(s);
    }
  }, nb::arg("device") = nb::none());
  m.def("_eager_cache_size", []() { return GetEager().cache_size(); });
  m.def("_set_num_threads", [](int threads) {
    if (threads < 0) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("set_num_threads: ", threads, " threads; use 0 (automatic) or more")));
    }
    SetDefaultIntraOpThreads(threads);
  }, nb::arg("threads"));
  m.def("_num_threads", []() { return DefaultIntraOpThreads(); });
  m.def("_usable_cpus", []() { return UsableCpuCount(); });
  m.def("memory_stats", [](const std::string& name) {
    auto d = Unwrap(GetRuntime().FindDevice(name));
    MemoryPoolStats s = d->memory_stats();
    nb::dict out;
    out["bytes_in_use"] = s.bytes_in_use;
    out["peak_bytes_in_use"] = s.peak_bytes_in_use;
    out["bytes_reserved"] = s.bytes_reserved;
    out["num_allocations"] = s.num_allocations;
    return out;
  });

  BindTensor(m);
  BindExecute(m);
  BindGraph(m);
  BindCheckpoint(m);
  BindSummary(m);
  BindTFRecord(m);
  BindDistributed(m);
  BindGradients(m);
}
