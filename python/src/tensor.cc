// plexus.Tensor (eager) and plexus.GraphTensor (symbolic): properties,
// NumPy and DLPack exchange, Python operators.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common.h"
#include "plexus/device.h"
#include "plexus/tensor_dlpack.h"

namespace plexus::python {
namespace {

using namespace nb::literals;

bool IsInteger(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kUInt8: case DataType::kUInt16: case DataType::kUInt32: case DataType::kUInt64:
      return true;
    default:
      return false;
  }
}

DataType DTypeOf(nb::handle obj) {
  if (nb::isinstance<PyTensor>(obj)) return nb::inst_ptr<PyTensor>(obj)->tensor.dtype();
  if (nb::isinstance<PyGraphTensor>(obj)) return nb::inst_ptr<PyGraphTensor>(obj)->dtype();
  return DataType::kInvalid;
}

// Ops by name, looked up once per call site's name (string literals).
const OpInfo& Lookup(const char* op) {
  static std::mutex mu;
  static auto* cache = new absl::flat_hash_map<const char*, const OpInfo*>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(op);
    if (it != cache->end()) return *it->second;
  }
  const OpInfo& info = FindOp(op);
  std::lock_guard<std::mutex> lock(mu);
  cache->emplace(op, &info);
  return info;
}

nb::object Op1(const char* op, nb::handle a) {
  return ExecuteOp(Lookup(op), &a, 1, nb::handle())[0];
}

nb::object Op2(const char* op, nb::handle a, nb::handle b) {
  nb::handle in[2] = {a, b};
  return ExecuteOp(Lookup(op), in, 2, nb::handle())[0];
}

nb::object CastTo(nb::handle x, DataType to) {
  nb::list in;
  in.append(x);
  nb::dict attrs;
  attrs["DstT"] = DTypeObject(to);
  return Execute("Cast", in, attrs)[0];
}

// x / y as TensorFlow's __truediv__: integers are divided as floats.
nb::object TrueDiv(nb::handle a, nb::handle b) {
  DataType t = DTypeOf(a);
  if (t == DataType::kInvalid) t = DTypeOf(b);
  if (IsInteger(t)) {
    DataType f = (t == DataType::kInt32 || t == DataType::kInt64 || t == DataType::kUInt32 ||
                  t == DataType::kUInt64)
                     ? DataType::kDouble
                     : DataType::kFloat;
    nb::object fa = DTypeOf(a) != DataType::kInvalid ? CastTo(a, f) : nb::object(nb::borrow(a));
    nb::object fb = DTypeOf(b) != DataType::kInvalid ? CastTo(b, f) : nb::object(nb::borrow(b));
    return Op2("RealDiv", fa, fb);
  }
  return Op2("RealDiv", a, b);
}

int64_t RankOf(nb::handle obj) {
  if (nb::isinstance<PyTensor>(obj)) return nb::inst_ptr<PyTensor>(obj)->tensor.dims();
  if (nb::isinstance<PyGraphTensor>(obj)) return nb::inst_ptr<PyGraphTensor>(obj)->shape().rank();
  return -1;
}

nb::object MatMul(nb::handle a, nb::handle b) {
  if (RankOf(a) == 2 && RankOf(b) == 2) return Op2("MatMul", a, b);
  return Op2("BatchMatMulV2", a, b);
}

// Logical ops for bool, bitwise for integers.
nb::object Logic(const char* logical, const char* bitwise, nb::handle a, nb::handle b) {
  DataType t = DTypeOf(a);
  if (t == DataType::kInvalid) t = DTypeOf(b);
  return Op2(t == DataType::kBool ? logical : bitwise, a, b);
}

template <typename Class>
void BindOperators(Class& cls) {
  cls.def("__add__", [](nb::handle a, nb::handle b) { return Op2("AddV2", a, b); })
      .def("__radd__", [](nb::handle a, nb::handle b) { return Op2("AddV2", b, a); })
      .def("__sub__", [](nb::handle a, nb::handle b) { return Op2("Sub", a, b); })
      .def("__rsub__", [](nb::handle a, nb::handle b) { return Op2("Sub", b, a); })
      .def("__mul__", [](nb::handle a, nb::handle b) { return Op2("Mul", a, b); })
      .def("__rmul__", [](nb::handle a, nb::handle b) { return Op2("Mul", b, a); })
      .def("__truediv__", [](nb::handle a, nb::handle b) { return TrueDiv(a, b); })
      .def("__rtruediv__", [](nb::handle a, nb::handle b) { return TrueDiv(b, a); })
      .def("__floordiv__", [](nb::handle a, nb::handle b) { return Op2("FloorDiv", a, b); })
      .def("__rfloordiv__", [](nb::handle a, nb::handle b) { return Op2("FloorDiv", b, a); })
      .def("__mod__", [](nb::handle a, nb::handle b) { return Op2("FloorMod", a, b); })
      .def("__rmod__", [](nb::handle a, nb::handle b) { return Op2("FloorMod", b, a); })
      .def("__pow__", [](nb::handle a, nb::handle b) { return Op2("Pow", a, b); })
      .def("__rpow__", [](nb::handle a, nb::handle b) { return Op2("Pow", b, a); })
      .def("__matmul__", [](nb::handle a, nb::handle b) { return MatMul(a, b); })
      .def("__rmatmul__", [](nb::handle a, nb::handle b) { return MatMul(b, a); })
      .def("__neg__", [](nb::handle a) { return Op1("Neg", a); })
      .def("__pos__", [](nb::handle a) { return nb::borrow(a); })
      .def("__abs__", [](nb::handle a) { return Op1("Abs", a); })
      .def("__invert__", [](nb::handle a) {
        return Op1(DTypeOf(a) == DataType::kBool ? "LogicalNot" : "Invert", a);
      })
      .def("__lt__", [](nb::handle a, nb::handle b) { return Op2("Less", a, b); })
      .def("__le__", [](nb::handle a, nb::handle b) { return Op2("LessEqual", a, b); })
      .def("__gt__", [](nb::handle a, nb::handle b) { return Op2("Greater", a, b); })
      .def("__ge__", [](nb::handle a, nb::handle b) { return Op2("GreaterEqual", a, b); })
      .def("__eq__", [](nb::handle a, nb::handle b) -> nb::object {
        if (b.is_none()) return nb::bool_(false);
        return Op2("Equal", a, b);
      }, nb::arg("other").none())
      .def("__ne__", [](nb::handle a, nb::handle b) -> nb::object {
        if (b.is_none()) return nb::bool_(true);
        return Op2("NotEqual", a, b);
      }, nb::arg("other").none())
      .def("__and__", [](nb::handle a, nb::handle b) { return Logic("LogicalAnd", "BitwiseAnd", a, b); })
      .def("__rand__", [](nb::handle a, nb::handle b) { return Logic("LogicalAnd", "BitwiseAnd", b, a); })
      .def("__or__", [](nb::handle a, nb::handle b) { return Logic("LogicalOr", "BitwiseOr", a, b); })
      .def("__ror__", [](nb::handle a, nb::handle b) { return Logic("LogicalOr", "BitwiseOr", b, a); })
      .def("__xor__", [](nb::handle a, nb::handle b) { return Logic("NotEqual", "BitwiseXor", a, b); })
      .def("__rxor__", [](nb::handle a, nb::handle b) { return Logic("NotEqual", "BitwiseXor", b, a); })
      .def("__hash__", [](nb::handle a) -> Py_hash_t {
        PyErr_SetString(PyExc_TypeError,
                        "plexus tensors are unhashable (== compares elementwise); use id(tensor) as a key");
        throw nb::python_error();
      });
}

// Host data as a NumPy array (read-only view sharing the tensor's buffer).
nb::object ToNumpy(const Tensor& t_in) {
  Tensor t = HostCopy(t_in);
  if (t.dtype() == DataType::kString) {
    nb::list values;
    for (const std::string& s : t.strings()) values.append(nb::bytes(s.data(), s.size()));
    nb::object np = nb::module_::import_("numpy");
    nb::object arr = np.attr("array")(values, "dtype"_a = np.attr("object_"));
    nb::list shape;
    for (int64_t d : t.shape()) shape.append(d);
    return arr.attr("reshape")(nb::tuple(shape));
  }
  if (t.dtype() == DataType::kBFloat16) {
    // NumPy has no bfloat16: widen to float32 (exact).
    Tensor f = Unwrap(GetEager().Execute("Cast", {t}, [] {
      AttrMap a;
      a["DstT"].set_type(tf::DT_FLOAT);
      return a;
    }(), nullptr))[0];
    return ToNumpy(f);
  }
  if (*NumpyName(t.dtype()) == '\0') {
    Throw(absl::InvalidArgumentError(absl::StrCat("a ", DataTypeName(t.dtype()), " tensor has no NumPy form")));
  }
  DLDataType dl = Unwrap(ToDLDataType(t.dtype()));
  nb::dlpack::dtype dt{dl.code, dl.bits, dl.lanes};
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  auto* owner_tensor = new Tensor(t);
  nb::capsule owner(owner_tensor, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  void* data = t.raw_data();
  static char empty = 0;
  if (data == nullptr) data = &empty;  // zero-size tensors
  nb::ndarray<nb::numpy, nb::ro> arr(data, shape.size(), shape.data(), owner, nullptr, dt);
  return nb::cast(arr, nb::rv_policy::reference);
}

struct DlpackCapsule {
  static void Destroy(PyObject* capsule) noexcept {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
    }
  }
};

nb::object ToDlpack(const PyTensor& self, nb::handle stream) {
  const Tensor& t = self.tensor;
  Device* device = t.device();
  if (device != nullptr && !device->host_accessible()) {
    // The DLPack stream handshake: the consumer names the stream it will
    // use (an integer; -1 asks for no synchronization at all). Where the
    // plugin can order other streams, that stream waits on the device for
    // the eager work; otherwise (or with no stream named) the host waits.
    int64_t consumer = 0;
    const bool named = !stream.is_none();
    if (named) {
      if (!nb::isinstance<nb::int_>(stream)) {
        throw nb::type_error("__dlpack__: stream must be an integer or None");
      }
      consumer = nb::cast<int64_t>(stream);
      if (consumer < -1) {
        throw nb::value_error(
            absl::StrCat("__dlpack__: stream ", consumer, " is not a stream of ", device->name()).c_str());
      }
    }
    absl::Status s;
    {
      nb::gil_scoped_release release;
      if (named && consumer == -1) {
        // The consumer synchronizes itself.
      } else if (named && device->supports_stream_interop()) {
        s = GetEager().OrderNativeStream(device, static_cast<uint64_t>(consumer));
      } else {
        s = GetEager().Synchronize(device);
      }
    }
    Check(s);
  }
  DLManagedTensor* managed = Unwrap(ExportDLPack(t));
  PyObject* capsule = PyCapsule_New(managed, "dltensor", &DlpackCapsule::Destroy);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

Tensor FromCapsule(nb::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    Throw(absl::InvalidArgumentError("from_dlpack: expected an unused DLPack capsule ('dltensor')"));
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  Tensor t = Unwrap(ImportDLPack(managed, &GetRuntime()));
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  PyCapsule_SetDestructor(capsule.ptr(), nullptr);
  return t;
}

nb::object FromDlpack(nb::handle obj) {
  if (PyCapsule_CheckExact(obj.ptr())) return WrapTensor(FromCapsule(obj));
  if (nb::isinstance<PyTensor>(obj)) return nb::borrow(obj);
  if (!nb::hasattr(obj, "__dlpack__")) {
    Throw(absl::InvalidArgumentError(absl::StrCat(
        "from_dlpack: ", nb::cast<std::string>(nb::repr(obj.type())),
        " does not support DLPack (it has no __dlpack__)")));
  }
  nb::object capsule;
  nb::object dev = obj.attr("__dlpack_device__")();
  const int dev_type = nb::cast<int>(dev[0]);
  if (dev_type == kDLCPU) {
    capsule = obj.attr("__dlpack__")();
  } else {
    // The DLPack stream handshake: the producer orders its work before the
    // stream we name. Where the plugin has native stream handles that is a
    // stream of the device's own, which the device's eager stream then waits
    // for on the device (EagerContext::BeginNativeImport); everything that
    // reads the tensor later waits for the eager stream (eager ops queue on
    // it; traced functions wait for it). A plugin without stream interop
    // (ABI 0.7 and older) cannot name a stream: the producer then orders its
    // work before the platform's default stream (DLPack's meaning of no
    // stream), which such a plugin's own streams must follow by themselves.
    DLDevice dl{static_cast<DLDeviceType>(dev_type), nb::cast<int>(dev[1])};
    std::shared_ptr<Device> device = DeviceForDLPack(dl, &GetRuntime());
    if (device != nullptr && device->supports_stream_interop()) {
      absl::StatusOr<EagerContext::NativeImport> import;
      {
        nb::gil_scoped_release release;
        import = GetEager().BeginNativeImport(device.get());
      }
      const EagerContext::NativeImport started = Unwrap(std::move(import));
      auto finish = [&](bool ordered) {
        nb::gil_scoped_release release;
        return GetEager().FinishNativeImport(started, ordered);
      };
      try {
        capsule = obj.attr("__dlpack__")("stream"_a = static_cast<int64_t>(started.handle));
      } catch (...) {
        (void)finish(false);
        throw;
      }
      const absl::Status ordered = finish(true);
      if (!ordered.ok()) Throw(ordered);
    } else {
      capsule = obj.attr("__dlpack__")();
    }
  }
  return WrapTensor(FromCapsule(capsule));
}

nb::tuple ShapeTuple(const Shape& shape) {
  nb::list dims;
  for (int64_t d : shape) dims.append(d);
  return nb::tuple(dims);
}

}  // namespace

nb::object WrapTensor(Tensor t) { return nb::cast(PyTensor{std::move(t)}); }

Tensor HostCopy(const Tensor& t) {
  if (t.host_readable() || t.dtype() == DataType::kString) return t;
  absl::StatusOr<Tensor> host;
  {
    nb::gil_scoped_release release;
    absl::Status s = GetEager().Synchronize(t.device());
    host = s.ok() ? CopyTensorTo(t, nullptr) : absl::StatusOr<Tensor>(s);
  }
  return Unwrap(std::move(host));
}

Tensor ToTensor(nb::handle value, DataType want, const std::string& what) {
  if (nb::isinstance<PyTensor>(value)) {
    const Tensor& t = nb::inst_ptr<PyTensor>(value)->tensor;
    if (want != DataType::kInvalid && t.dtype() != want) {
      Throw(absl::InvalidArgumentError(absl::StrCat(what, " is a ", DataTypeName(t.dtype()),
                                                    " tensor, but ", DataTypeName(want), " is expected")));
    }
    return t;
  }
  if (nb::isinstance<PyGraphTensor>(value)) {
    Throw(absl::InvalidArgumentError(absl::StrCat(
        what, " is a symbolic tensor of a traced function; it has no value outside the trace")));
  }
  auto scalar = [&](DataType type, auto v) -> Tensor {
    Tensor t = Unwrap(Tensor::AllocateHost(type, Shape{}));
    switch (type) {
      case DataType::kFloat: *t.data<float>() = static_cast<float>(v); break;
      case DataType::kDouble: *t.data<double>() = static_cast<double>(v); break;
      case DataType::kInt32: *t.data<int32_t>() = static_cast<int32_t>(v); break;
      case DataType::kInt64: *t.data<int64_t>() = static_cast<int64_t>(v); break;
      case DataType::kBool: *t.data<bool>() = static_cast<bool>(v); break;
      default: return Tensor();
    }
    return t;
  };
  // Python scalars: the fast common cases.
  if (PyBool_Check(value.ptr())) {
    DataType type = want == DataType::kInvalid ? DataType::kBool : want;
    Tensor t = scalar(type, value.ptr() == Py_True);
    if (t.valid()) return t;
  } else if (PyLong_CheckExact(value.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    DataType type = want;
    if (type == DataType::kInvalid) {
      type = (overflow == 0 && v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
                 ? DataType::kInt32
                 : DataType::kInt64;
    }
    if (overflow == 0) {
      Tensor t = scalar(type, v);
      if (t.valid()) return t;
    }
  } else if (PyFloat_CheckExact(value.ptr())) {
    DataType type = want == DataType::kInvalid ? DataType::kFloat : want;
    if (IsInteger(type) || type == DataType::kBool) {
      Throw(absl::InvalidArgumentError(absl::StrCat(what, " is the float ", PyFloat_AsDouble(value.ptr()),
                                                    ", but ", DataTypeName(type), " is expected")));
    }
    Tensor t = scalar(type, PyFloat_AsDouble(value.ptr()));
    if (t.valid()) return t;
  }
  if (nb::isinstance<nb::str>(value) || nb::isinstance<nb::bytes>(value)) {
    std::string s = nb::isinstance<nb::str>(value) ? nb::cast<std::string>(value)
                                                  : std::string(nb::cast<nb::bytes>(value).c_str(),
                                                                nb::cast<nb::bytes>(value).size());
    return Tensor::FromStrings(Shape{}, {s});
  }
  // Flat lists and tuples of Python numbers (shapes, axes, small vectors):
  // without NumPy.
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    PyObject* seq = value.ptr();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject** items = PySequence_Fast_ITEMS(seq);
    bool ints = n > 0, numbers = n > 0;
    bool fits32 = true;
    for (Py_ssize_t i = 0; i < n && numbers; ++i) {
      PyObject* item = items[i];
      if (PyLong_CheckExact(item)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (overflow != 0) numbers = false;
        fits32 &= v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
      } else if (PyFloat_CheckExact(item)) {
        ints = false;
      } else {
        numbers = false;
      }
    }
    DataType type = want;
    if (type == DataType::kInvalid) type = ints ? (fits32 ? DataType::kInt32 : DataType::kInt64) : DataType::kFloat;
    if (numbers && !ints && (IsInteger(type) || type == DataType::kBool)) {
      Throw(absl::InvalidArgumentError(absl::StrCat(what, " holds floats, but ", DataTypeName(type), " is expected")));
    }
    if (numbers && (type == DataType::kInt32 || type == DataType::kInt64 || type == DataType::kFloat ||
                    type == DataType::kDouble)) {
      Tensor t = Unwrap(Tensor::AllocateHost(type, Shape{static_cast<int64_t>(n)}));
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = items[i];
        const double d = PyFloat_CheckExact(item) ? PyFloat_AS_DOUBLE(item) : 0.0;
        const long long v = PyFloat_CheckExact(item) ? 0 : PyLong_AsLongLong(item);
        switch (type) {
          case DataType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
          case DataType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
          case DataType::kFloat: t.data<float>()[i] = PyFloat_CheckExact(item) ? static_cast<float>(d) : static_cast<float>(v); break;
          default: t.data<double>()[i] = PyFloat_CheckExact(item) ? d : static_cast<double>(v); break;
        }
      }
      return t;
    }
  }
  // Everything else through NumPy.
  nb::object np = nb::module_::import_("numpy");
  const bool is_array = nb::isinstance(value, np.attr("ndarray")) || nb::hasattr(value, "__array_interface__");
  nb::object arr;
  try {
    // Lists of bytes through object arrays: NumPy's fixed-width 'S' dtype
    // would strip trailing NUL bytes.
    nb::object probe = nb::borrow(value);
    while ((PyList_Check(probe.ptr()) || PyTuple_Check(probe.ptr())) && nb::len(probe) > 0) probe = probe[0];
    const bool text = !is_array && (nb::isinstance<nb::bytes>(probe) || nb::isinstance<nb::str>(probe));
    arr = text ? np.attr("array")(value, "dtype"_a = np.attr("object_")) : np.attr("asarray")(value);
  } catch (const nb::python_error& e) {
    Throw(absl::InvalidArgumentError(absl::StrCat("cannot convert ", what, " to a tensor: ", e.what())));
  }
  const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
  if (kind == "U" || kind == "S" || kind == "O") {
    nb::object flat = arr.attr("reshape")(-1);
    std::vector<std::string> values;
    for (nb::handle item : flat) {
      if (nb::isinstance<nb::bytes>(item)) {
        values.emplace_back(nb::cast<nb::bytes>(item).c_str(), nb::cast<nb::bytes>(item).size());
      } else if (nb::isinstance<nb::str>(item)) {
        values.push_back(nb::cast<std::string>(item));
      } else {
        Throw(absl::InvalidArgumentError(absl::StrCat(
            "cannot convert ", what, " to a tensor: ",
            values.empty() ? "NumPy can hold it only as Python objects (an integer beyond int64, or None)"
                           : "it mixes strings and other values")));
      }
    }
    Shape shape;
    for (nb::handle d : arr.attr("shape")) shape.push_back(nb::cast<int64_t>(d));
    if (want != DataType::kInvalid && want != DataType::kString) {
      Throw(absl::InvalidArgumentError(absl::StrCat(what, " holds strings, but ", DataTypeName(want), " is expected")));
    }
    return Tensor::FromStrings(std::move(shape), std::move(values));
  }
  DataType type = want;
  if (type == DataType::kInvalid) {
    type = ToDataType(arr.attr("dtype"));
    if (!is_array) {
      // Python lists follow TensorFlow: float64 -> float32, int64 -> int32.
      if (type == DataType::kDouble) type = DataType::kFloat;
      if (type == DataType::kInt64) {
        nb::object lo = np.attr("min")(arr), hi = np.attr("max")(arr);
        if (nb::cast<int64_t>(arr.attr("size")) == 0 ||
            (nb::cast<int64_t>(lo) >= std::numeric_limits<int32_t>::min() &&
             nb::cast<int64_t>(hi) <= std::numeric_limits<int32_t>::max())) {
          type = DataType::kInt32;
        }
      }
    }
  }
  const char* np_name = NumpyName(type);
  const bool via_float = *np_name == '\0';  // bfloat16: through float32, then Cast
  if (via_float && type != DataType::kBFloat16) {
    Throw(absl::InvalidArgumentError(absl::StrCat("cannot make a ", DataTypeName(type), " tensor from ", what)));
  }
  if ((!is_array || want != DataType::kInvalid) && nb::cast<int64_t>(arr.attr("size")) > 0) {
    const std::string src_kind = kind;
    if ((IsInteger(type) || type == DataType::kBool) && src_kind == "f") {
      Throw(absl::InvalidArgumentError(absl::StrCat(what, " holds floats, but ", DataTypeName(type), " is expected")));
    }
  }
  // (asarray keeps rank 0; ascontiguousarray would make it rank 1.)
  arr = np.attr("asarray")(arr, "dtype"_a = via_float ? "float32" : np_name, "order"_a = "C");
  Shape shape;
  for (nb::handle d : arr.attr("shape")) shape.push_back(nb::cast<int64_t>(d));
  Tensor t = Unwrap(Tensor::AllocateHost(via_float ? DataType::kFloat : type, shape));
  auto view = nb::cast<nb::ndarray<nb::ro, nb::c_contig>>(arr);
  if (t.nbytes() > 0) std::memcpy(t.raw_data(), view.data(), t.nbytes());
  if (via_float) {
    AttrMap a;
    a["DstT"].set_type(static_cast<tf::DataType>(type));
    t = Unwrap(GetEager().Execute("Cast", {t}, a, nullptr))[0];
  }
  return t;
}

void BindTensor(nb::module_& m) {
  auto tensor = nb::class_<PyTensor>(m, "Tensor", "An eager tensor: a dtype, a shape and data on a device.");
  tensor.def_prop_ro("shape", [](const PyTensor& t) { return ShapeTuple(t.tensor.shape()); })
      .def_prop_ro("dtype", [](const PyTensor& t) { return DTypeObject(t.tensor.dtype()); })
      .def_prop_ro("device", [](const PyTensor& t) -> std::string {
        Device* d = t.tensor.device();
        if (d != nullptr) return d->name();
        auto host = GetRuntime().HostDevice();
        return host != nullptr ? host->name() : "CPU:0";
      })
      .def_prop_ro("ndim", [](const PyTensor& t) { return t.tensor.dims(); })
      .def_prop_ro("size", [](const PyTensor& t) { return t.tensor.num_elements(); })
      .def_prop_ro("nbytes", [](const PyTensor& t) { return t.tensor.nbytes(); })
      .def("numpy", [](const PyTensor& t) { return ToNumpy(t.tensor); },
           "The values as a NumPy array: a read-only view of host memory (no copy), or a copy "
           "from a device.")
      .def("__array__", [](const PyTensor& t, nb::handle dtype, nb::handle copy) {
        nb::object a = ToNumpy(t.tensor);
        if (!dtype.is_none()) a = a.attr("astype")(dtype);
        else if (!copy.is_none() && nb::cast<bool>(copy)) a = a.attr("copy")();
        return a;
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack__", [](const PyTensor& t, nb::handle stream, nb::handle max_version,
                            nb::handle dl_device, nb::handle copy) { return ToDlpack(t, stream); },
           nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
           nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const PyTensor& t) {
        Device* d = t.tensor.device();
        if (d == nullptr || d->host_accessible()) return nb::make_tuple(static_cast<int>(kDLCPU), 0);
        return nb::make_tuple(static_cast<int>(d->dl_device().device_type), d->dl_device().device_id);
      })
      .def("_to", [](const PyTensor& t, const std::string& name) {
        std::shared_ptr<Device> d = Unwrap(GetRuntime().FindDevice(name));
        absl::StatusOr<Tensor> out;
        {
          nb::gil_scoped_release release;
          Device* src = t.tensor.device();
          absl::Status s = GetEager().Synchronize(src);
          if (s.ok() && !d->host_accessible()) s = GetEager().Synchronize(d.get());
          out = s.ok() ? CopyTensorTo(t.tensor, d->host_accessible() ? nullptr : d.get())
                       : absl::StatusOr<Tensor>(s);
        }
        return WrapTensor(Unwrap(std::move(out)));
      }, "A copy on another device (the same tensor when it is already there).")
      .def("_debug_string", [](const PyTensor& t) { return t.tensor.DebugString(); });
  BindOperators(tensor);

  auto graph_tensor = nb::class_<PyGraphTensor>(m, "GraphTensor",
                                                "A symbolic tensor of a function being traced.");
  graph_tensor
      .def_prop_ro("shape", [](const PyGraphTensor& g) -> nb::object {
        const PartialShape& s = g.shape();
        if (!s.rank_known()) return nb::none();
        nb::list dims;
        for (int64_t i = 0; i < s.rank(); ++i) dims.append(s.dim(i) < 0 ? nb::object(nb::none()) : nb::object(nb::int_(s.dim(i))));
        return nb::tuple(dims);
      })
      .def_prop_ro("dtype", [](const PyGraphTensor& g) { return DTypeObject(g.dtype()); })
      .def_prop_ro("ndim", [](const PyGraphTensor& g) -> nb::object {
        return g.shape().rank_known() ? nb::object(nb::int_(g.shape().rank())) : nb::none();
      })
      .def_prop_ro("name", [](const PyGraphTensor& g) { return absl::StrCat(g.node->name, ":", g.index); })
      .def_prop_ro("op", [](const PyGraphTensor& g) { return g.node->op; })
      .def_prop_ro("device", [](const PyGraphTensor&) { return nb::none(); })
      .def("__repr__", [](const PyGraphTensor& g) {
        return absl::StrCat("<plexus.GraphTensor '", g.node->name, ":", g.index, "' shape=",
                            g.shape().ToString(), " dtype=", DataTypeName(g.dtype()), ">");
      })
      .def("__bool__", [](const PyGraphTensor& g) -> bool {
        Throw(absl::InvalidArgumentError(absl::StrCat(
            "the truth value of symbolic tensor '", g.node->name, "' is not known while tracing; "
            "Python control flow on tensor values cannot be traced")));
      });
  BindOperators(graph_tensor);

  m.def("constant", [](nb::handle value, nb::handle dtype, nb::handle device) {
    DataType want = dtype.is_none() ? DataType::kInvalid : ToDataType(dtype);
    Tensor t = ToTensor(value, want, "the value");
    Device* target = device.is_none() ? ScopeDevice() : Unwrap(GetRuntime().FindDevice(nb::cast<std::string>(device))).get();
    if (target != nullptr && !target->host_accessible()) {
      absl::StatusOr<Tensor> moved;
      {
        nb::gil_scoped_release release;
        absl::Status s = GetEager().Synchronize(target);
        // A tensor on another device may still be written by that device's
        // eager work (or, when imported, by its producer, ordered before
        // that eager stream): wait for it too.
        if (s.ok() && t.device() != nullptr && t.device() != target) s = GetEager().Synchronize(t.device());
        moved = s.ok() ? CopyTensorTo(t, target) : absl::StatusOr<Tensor>(s);
      }
      t = Unwrap(std::move(moved));
    } else if (nb::isinstance<PyTensor>(value) && t.device() != nullptr && !t.host_readable()) {
      t = HostCopy(t);
    }
    return WrapTensor(std::move(t));
  }, nb::arg("value"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
  "A tensor holding a copy of `value` (a Python scalar, nested list, NumPy array or tensor).");
  m.def("from_dlpack", &FromDlpack, nb::arg("obj"),
        "A tensor sharing the memory of a DLPack producer (NumPy, PyTorch, ...), without a copy.");
}

}  // namespace plexus::python
