// C++ helpers for writing kernels over the C ABI (header-only; the ABI
// itself stays C). A kernel is a class derived from sdk::OpKernel:
//
//   class ReluKernel : public sdk::OpKernel {
//    public:
//     void Init(sdk::Attrs& attrs) override { alpha_ = attrs.Float("alpha", 0.2f); }
//     void Compute(sdk::Call& call) override {
//       sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
//         using T = typename decltype(tag)::type;
//         const T* x = call.input<T>(0);
//         T* y = call.AllocateOutput<T>(0, call.input_shape(0));
//         ...
//       });
//     }
//   };
//   // info: a static sdk::RegistrationInfo {host services, plugin name}.
//   sdk::RegisterKernel<ReluKernel>(info, registrar, "Relu",
//                                   {{"T", {PX_DT_FLOAT, PX_DT_HALF}}});
//
// Errors are thrown as sdk::KernelError (PX_SDK_CHECK does it) and turned
// into a PX_Status by the registered create/compute functions: no exception
// ever crosses the ABI.
#ifndef PLEXUS_SDK_KERNEL_H_
#define PLEXUS_SDK_KERNEL_H_

#include <cstdarg>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/error.h"
#include "plexus/sdk/float16.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::sdk {

using Shape = std::vector<int64_t>;

// A kernel failure (sdk::Error, alias KernelError, from error.h) is thrown
// inside Init/Compute, usually through PX_SDK_CHECK.

inline std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string Format(const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

// Throws INVALID_ARGUMENT with a printf-style message unless `cond` holds.
#define PX_SDK_CHECK(cond, ...)                                                 \
  do {                                                                          \
    if (!(cond)) {                                                              \
      throw ::plexus::sdk::KernelError(PX_CODE_INVALID_ARGUMENT,                \
                                       ::plexus::sdk::Format(__VA_ARGS__));     \
    }                                                                           \
  } while (0)

// Throws the status (taking ownership) when it is not OK.
inline void ThrowIfError(const PX_HostServices* host, PX_Status* status) {
  if (status == nullptr) return;
  KernelError error(host->status_code(status), host->status_message(status));
  host->status_destroy(status);
  throw error;
}

inline std::string ShapeString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline const char* DtypeName(PX_DataType t) {
  switch (t) {
    case PX_DT_FLOAT: return "float";
    case PX_DT_DOUBLE: return "double";
    case PX_DT_INT32: return "int32";
    case PX_DT_UINT8: return "uint8";
    case PX_DT_INT16: return "int16";
    case PX_DT_INT8: return "int8";
    case PX_DT_STRING: return "string";
    case PX_DT_INT64: return "int64";
    case PX_DT_BOOL: return "bool";
    case PX_DT_BFLOAT16: return "bfloat16";
    case PX_DT_UINT16: return "uint16";
    case PX_DT_HALF: return "half";
    case PX_DT_UINT32: return "uint32";
    case PX_DT_UINT64: return "uint64";
    default: return "unsupported";
  }
}

// The DLPack dtype of a PX_DataType.
inline DLDataType DlType(PX_DataType t) {
  DLDataType d;
  d.lanes = 1;
  switch (t) {
    case PX_DT_FLOAT: d.code = kDLFloat; d.bits = 32; break;
    case PX_DT_DOUBLE: d.code = kDLFloat; d.bits = 64; break;
    case PX_DT_HALF: d.code = kDLFloat; d.bits = 16; break;
    case PX_DT_BFLOAT16: d.code = kDLBfloat; d.bits = 16; break;
    case PX_DT_INT8: d.code = kDLInt; d.bits = 8; break;
    case PX_DT_INT16: d.code = kDLInt; d.bits = 16; break;
    case PX_DT_INT32: d.code = kDLInt; d.bits = 32; break;
    case PX_DT_INT64: d.code = kDLInt; d.bits = 64; break;
    case PX_DT_UINT8: d.code = kDLUInt; d.bits = 8; break;
    case PX_DT_UINT16: d.code = kDLUInt; d.bits = 16; break;
    case PX_DT_UINT32: d.code = kDLUInt; d.bits = 32; break;
    case PX_DT_UINT64: d.code = kDLUInt; d.bits = 64; break;
    case PX_DT_BOOL: d.code = PX_DL_BOOL; d.bits = 8; break;
    case PX_DT_STRING: d.code = PX_DL_STRING; d.bits = 8 * sizeof(PX_StringRef); break;
    default: d.code = 255; d.bits = 0; break;
  }
  return d;
}

inline PX_DataType DtypeOf(const DLTensor& t) {
  if (t.dtype.code == PX_DL_STRING && t.dtype.lanes == 1) return PX_DT_STRING;
  return px_sdk_dtype_from_dl(t.dtype);
}

// ---------------------------------------------------------------------------
// Element types and dispatch
// ---------------------------------------------------------------------------

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename T>
PX_DataType DtypeFor();
template <> inline PX_DataType DtypeFor<float>() { return PX_DT_FLOAT; }
template <> inline PX_DataType DtypeFor<double>() { return PX_DT_DOUBLE; }
template <> inline PX_DataType DtypeFor<half>() { return PX_DT_HALF; }
template <> inline PX_DataType DtypeFor<bfloat16>() { return PX_DT_BFLOAT16; }
template <> inline PX_DataType DtypeFor<int8_t>() { return PX_DT_INT8; }
template <> inline PX_DataType DtypeFor<int16_t>() { return PX_DT_INT16; }
template <> inline PX_DataType DtypeFor<int32_t>() { return PX_DT_INT32; }
template <> inline PX_DataType DtypeFor<int64_t>() { return PX_DT_INT64; }
template <> inline PX_DataType DtypeFor<uint8_t>() { return PX_DT_UINT8; }
template <> inline PX_DataType DtypeFor<uint16_t>() { return PX_DT_UINT16; }
template <> inline PX_DataType DtypeFor<uint32_t>() { return PX_DT_UINT32; }
template <> inline PX_DataType DtypeFor<uint64_t>() { return PX_DT_UINT64; }
template <> inline PX_DataType DtypeFor<bool>() { return PX_DT_BOOL; }

[[noreturn]] inline void UnsupportedType(PX_DataType t, const char* what) {
  throw KernelError(PX_CODE_UNIMPLEMENTED,
                    Format("dtype %s is not supported by this %s kernel", DtypeName(t), what));
}

// Calls f(TypeTag<T>{}) for the C++ type of `t` among the floating types
// (float, double, half, bfloat16).
template <typename F>
void VisitFloat(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_FLOAT: f(TypeTag<float>{}); return;
    case PX_DT_DOUBLE: f(TypeTag<double>{}); return;
    case PX_DT_HALF: f(TypeTag<half>{}); return;
    case PX_DT_BFLOAT16: f(TypeTag<bfloat16>{}); return;
    default: UnsupportedType(t, "floating-point");
  }
}

// The integer types (signed and unsigned, 8 to 64 bits).
template <typename F>
void VisitInteger(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_INT8: f(TypeTag<int8_t>{}); return;
    case PX_DT_INT16: f(TypeTag<int16_t>{}); return;
    case PX_DT_INT32: f(TypeTag<int32_t>{}); return;
    case PX_DT_INT64: f(TypeTag<int64_t>{}); return;
    case PX_DT_UINT8: f(TypeTag<uint8_t>{}); return;
    case PX_DT_UINT16: f(TypeTag<uint16_t>{}); return;
    case PX_DT_UINT32: f(TypeTag<uint32_t>{}); return;
    case PX_DT_UINT64: f(TypeTag<uint64_t>{}); return;
    default: UnsupportedType(t, "integer");
  }
}

// Floating and integer types.
template <typename F>
void VisitNumeric(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_FLOAT: case PX_DT_DOUBLE: case PX_DT_HALF: case PX_DT_BFLOAT16:
      VisitFloat(t, std::forward<F>(f));
      return;
    default:
      VisitInteger(t, std::forward<F>(f));
  }
}

// The dtypes most op families support: the four floating types, int8/16/32/64
// and uint8 (not the wider unsigned types). `what` names the kernel family
// in the error for any other dtype.
template <typename F>
void VisitReal(PX_DataType t, F&& f, const char* what = "real") {
  switch (t) {
    case PX_DT_FLOAT: f(TypeTag<float>{}); return;
    case PX_DT_DOUBLE: f(TypeTag<double>{}); return;
    case PX_DT_HALF: f(TypeTag<half>{}); return;
    case PX_DT_BFLOAT16: f(TypeTag<bfloat16>{}); return;
    case PX_DT_INT8: f(TypeTag<int8_t>{}); return;
    case PX_DT_INT16: f(TypeTag<int16_t>{}); return;
    case PX_DT_INT32: f(TypeTag<int32_t>{}); return;
    case PX_DT_INT64: f(TypeTag<int64_t>{}); return;
    case PX_DT_UINT8: f(TypeTag<uint8_t>{}); return;
    default: UnsupportedType(t, what);
  }
}

// VisitReal's dtypes and bool.
template <typename F>
void VisitRealOrBool(PX_DataType t, F&& f, const char* what = "real") {
  if (t == PX_DT_BOOL) {
    f(TypeTag<bool>{});
    return;
  }
  VisitReal(t, std::forward<F>(f), what);
}

// Every fixed-size type, bool included (for data movement).
template <typename F>
void VisitAll(PX_DataType t, F&& f) {
  if (t == PX_DT_BOOL) {
    f(TypeTag<bool>{});
    return;
  }
  VisitNumeric(t, std::forward<F>(f));
}

// Arithmetic type used to compute on T: float for the 16-bit floats, T
// otherwise.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<half> { using type = float; };
template <> struct ComputeTypeOf<bfloat16> { using type = float; };
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// Bytes per element of a fixed-size dtype (0 for others).
inline size_t DtypeSize(PX_DataType t) {
  switch (t) {
    case PX_DT_INT8: case PX_DT_UINT8: case PX_DT_BOOL: return 1;
    case PX_DT_INT16: case PX_DT_UINT16: case PX_DT_HALF: case PX_DT_BFLOAT16: return 2;
    case PX_DT_FLOAT: case PX_DT_INT32: case PX_DT_UINT32: return 4;
    case PX_DT_DOUBLE: case PX_DT_INT64: case PX_DT_UINT64: return 8;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------
// Attributes (read once, when the kernel is created)
// ---------------------------------------------------------------------------

class Attrs {
 public:
  Attrs(const PX_HostServices* host, const PX_NodeView* node) : host_(host), node_(node) {}

  const char* node_name() const { return host_->node_name(node_); }
  const char* op() const { return host_->node_op(node_); }
  size_t num_inputs() const { return host_->node_num_inputs(node_); }
  size_t num_outputs() const { return host_->node_num_outputs(node_); }
  PX_DataType input_type(size_t i) const { return host_->node_input_type(node_, i); }
  PX_DataType output_type(size_t i) const { return host_->node_output_type(node_, i); }

  // Required attributes throw when absent; the overloads with a fallback
  // return it when the attribute is absent.
  int64_t Int(const char* name) const {
    int64_t v = 0;
    ThrowIfError(host_, host_->node_attr_int(node_, name, &v));
    return v;
  }
  int64_t Int(const char* name, int64_t fallback) const {
    return Has(name) ? Int(name) : fallback;
  }
  float Float(const char* name) const {
    float v = 0;
    ThrowIfError(host_, host_->node_attr_float(node_, name, &v));
    return v;
  }
  float Float(const char* name, float fallback) const {
    return Has(name) ? Float(name) : fallback;
  }
  bool Bool(const char* name) const {
    int v = 0;
    ThrowIfError(host_, host_->node_attr_bool(node_, name, &v));
    return v != 0;
  }
  bool Bool(const char* name, bool fallback) const {
    return Has(name) ? Bool(name) : fallback;
  }
  PX_DataType Type(const char* name) const {
    PX_DataType v = PX_DT_INVALID;
    ThrowIfError(host_, host_->node_attr_type(node_, name, &v));
    return v;
  }
  std::string String(const char* name) const {
    const char* data = nullptr;
    size_t size = 0;
    ThrowIfError(host_, host_->node_attr_string(node_, name, &data, &size));
    return std::string(data, size);
  }
  std::string String(const char* name, const std::string& fallback) const {
    return Has(name) ? String(name) : fallback;
  }
  std::vector<int64_t> IntList(const char* name) const {
    size_t count = 0;
    ThrowIfError(host_, host_->node_attr_int_list(node_, name, nullptr, 0, &count));
    std::vector<int64_t> values(count);
    ThrowIfError(host_, host_->node_attr_int_list(node_, name, values.data(), count, &count));
    return values;
  }
  std::vector<int64_t> IntList(const char* name, std::vector<int64_t> fallback) const {
    return Has(name) ? IntList(name) : fallback;
  }
  // A list(string) attribute (host services of ABI 0.2 that have
  // node_attr_string_list; an older host gives UNIMPLEMENTED).
  std::vector<std::string> StringList(const char* name) const {
    if (!PX_STRUCT_HAS(host_, PX_HostServices, node_attr_string_list) ||
        host_->node_attr_string_list == nullptr) {
      throw KernelError(PX_CODE_UNIMPLEMENTED,
                        Format("the host cannot pass list(string) attribute '%s' to a plugin "
                               "(node_attr_string_list is missing)",
                               name));
    }
    size_t count = 0;
    ThrowIfError(host_, host_->node_attr_string_list(node_, name, nullptr, nullptr, 0, &count));
    std::vector<const char*> data(count);
    std::vector<size_t> sizes(count);
    ThrowIfError(host_, host_->node_attr_string_list(node_, name, data.data(), sizes.data(),
                                                     count, &count));
    std::vector<std::string> values;
    for (size_t i = 0; i < count && i < data.size(); ++i) values.emplace_back(data[i], sizes[i]);
    return values;
  }
  std::vector<std::string> StringList(const char* name, std::vector<std::string> fallback) const {
    return Has(name) ? StringList(name) : fallback;
  }
  // Borrowed for the duration of Init: copy what you need.
  const DLTensor& Tensor(const char* name) const {
    const DLTensor* t = nullptr;
    ThrowIfError(host_, host_->node_attr_tensor(node_, name, &t));
    return *t;
  }
  // True when the attribute is present (of any type).
  bool Has(const char* name) const;

  const PX_HostServices* host() const { return host_; }
  const PX_NodeView* node() const { return node_; }

 private:
  const PX_HostServices* host_;
  const PX_NodeView* node_;
};

// ---------------------------------------------------------------------------
// One launch
// ---------------------------------------------------------------------------

class Call {
 public:
  Call(const PX_HostServices* host, PX_KernelContext* ctx, const DLTensor* inputs,
       size_t num_inputs, DLTensor* outputs, size_t num_outputs, PX_Stream* stream)
      : host_(host), ctx_(ctx), inputs_(inputs), num_inputs_(num_inputs), outputs_(outputs),
        num_outputs_(num_outputs), stream_(stream) {}

  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }
  const DLTensor& input(size_t i) const {
    PX_SDK_CHECK(i < num_inputs_, "input %zu requested, the launch has %zu", i, num_inputs_);
    return inputs_[i];
  }
  PX_DataType input_dtype(size_t i) const { return DtypeOf(input(i)); }
  Shape input_shape(size_t i) const {
    const DLTensor& t = input(i);
    return Shape(t.shape, t.shape + t.ndim);
  }
  int64_t input_rank(size_t i) const { return input(i).ndim; }
  int64_t input_size(size_t i) const { return px_sdk_num_elements(&input(i)); }
  // Typed data of input i. Checks the dtype (and density) first.
  template <typename T>
  const T* input(size_t i) const {
    const DLTensor& t = input(i);
    CheckType(t, DtypeFor<T>(), "input", i);
    return static_cast<const T*>(px_sdk_data(&t));
  }
  const void* input_data(size_t i) const { return px_sdk_data(&input(i)); }
  // Strings of a DT_STRING input (always in host memory).
  const PX_StringRef* input_strings(size_t i) const {
    const DLTensor& t = input(i);
    PX_SDK_CHECK(DtypeOf(t) == PX_DT_STRING, "input %zu is %s, expected string", i,
                 DtypeName(DtypeOf(t)));
    return static_cast<const PX_StringRef*>(px_sdk_data(&t));
  }
  // Reads an integer input held in host memory (int32 or int64) as int64s:
  // for axis, shape, paddings and similar arguments.
  std::vector<int64_t> input_int_values(size_t i) const {
    const DLTensor& t = input(i);
    int64_t n = px_sdk_num_elements(&t);
    std::vector<int64_t> values(static_cast<size_t>(n));
    if (t.dtype.code == kDLInt && t.dtype.bits == 32) {
      const int32_t* p = static_cast<const int32_t*>(px_sdk_data(&t));
      for (int64_t k = 0; k < n; ++k) values[k] = p[k];
    } else if (t.dtype.code == kDLInt && t.dtype.bits == 64) {
      const int64_t* p = static_cast<const int64_t*>(px_sdk_data(&t));
      for (int64_t k = 0; k < n; ++k) values[k] = p[k];
    } else {
      PX_SDK_CHECK(false, "input %zu must be int32 or int64, got %s", i, DtypeName(DtypeOf(t)));
    }
    return values;
  }

  PX_DataType output_dtype(size_t i) const {
    PX_SDK_CHECK(i < num_outputs_, "output %zu requested, the launch has %zu", i, num_outputs_);
    return DtypeOf(outputs_[i]);
  }
  // Allocates output i with `shape` (or checks the host's preallocation has
  // that shape) and returns its data. The dtype is the node's output dtype.
  void* AllocateOutputRaw(size_t i, const Shape& shape) {
    return AllocateOutputRaw(i, shape.data(), shape.size());
  }
  // The same from `rank` dimensions at `dims` (no Shape to build).
  void* AllocateOutputRaw(size_t i, const int64_t* dims, size_t rank) {
    PX_SDK_CHECK(i < num_outputs_, "output %zu requested, the launch has %zu", i, num_outputs_);
    DLTensor& out = outputs_[i];
    if (out.ndim < 0) {
      ThrowIfError(host_, host_->output_allocate(ctx_, i, static_cast<int32_t>(rank), dims));
    } else if (static_cast<size_t>(out.ndim) != rank || !std::equal(dims, dims + rank, out.shape)) {
      // Compared in place: the common (matching) case must not allocate.
      throw KernelError(PX_CODE_INTERNAL,
                        Format("output %zu: the host allocated %s but the kernel computes %s", i,
                               ShapeString(Shape(out.shape, out.shape + out.ndim)).c_str(),
                               ShapeString(Shape(dims, dims + rank)).c_str()));
    }
    return px_sdk_data(&out);
  }
  template <typename T>
  T* AllocateOutput(size_t i, const Shape& shape) {
    PX_SDK_CHECK(DtypeFor<T>() == output_dtype(i), "output %zu is %s, the kernel writes %s", i,
                 DtypeName(output_dtype(i)), DtypeName(DtypeFor<T>()));
    return static_cast<T*>(AllocateOutputRaw(i, shape));
  }
  // Output i with the shape of input j.
  template <typename T>
  T* AllocateOutputLike(size_t i, size_t j) {
    PX_SDK_CHECK(DtypeFor<T>() == output_dtype(i), "output %zu is %s, the kernel writes %s", i,
                 DtypeName(output_dtype(i)), DtypeName(DtypeFor<T>()));
    const DLTensor& in = input(j);
    return static_cast<T*>(AllocateOutputRaw(i, in.shape, static_cast<size_t>(in.ndim)));
  }

  const char* node_name() const { return host_->kernel_node_name(ctx_); }
  PX_Stream* stream() const { return stream_; }
  const PX_HostServices* host() const { return host_; }

 private:
  void CheckType(const DLTensor& t, PX_DataType want, const char* what, size_t i) const {
    PX_DataType got = DtypeOf(t);
    PX_SDK_CHECK(got == want, "%s %zu is %s, expected %s", what, i, DtypeName(got),
                 DtypeName(want));
    PX_SDK_CHECK(px_sdk_is_contiguous(&t), "%s %zu is not contiguous", what, i);
  }

  const PX_HostServices* host_;
  PX_KernelContext* ctx_;
  const DLTensor* inputs_;
  size_t num_inputs_;
  DLTensor* outputs_;
  size_t num_outputs_;
  PX_Stream* stream_;
};

// ---------------------------------------------------------------------------
// Kernels and their registration
// ---------------------------------------------------------------------------

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Reads attributes; throw (PX_SDK_CHECK) to refuse the node.
  virtual void Init(Attrs& /*attrs*/) {}
  virtual void Compute(Call& call) = 0;

  const PX_HostServices* host = nullptr;
  std::string plugin_name = "plugin";
  // RegistrationInfo::before_compute, copied when the kernel is created.
  void (*before_compute)(const PX_HostServices* host) = nullptr;
};

// Runs body and converts exceptions into a status.
template <typename Body>
PX_Status* Guard(const PX_HostServices* host, const std::string& plugin_name, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const KernelError& e) {
    return host->status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED, "out of host memory in the %s plugin",
                        plugin_name.c_str());
  } catch (const std::exception& e) {
    return px_sdk_error(host, PX_CODE_INTERNAL, "unexpected exception in the %s plugin: %s",
                        plugin_name.c_str(), e.what());
  } catch (...) {
    return px_sdk_error(host, PX_CODE_INTERNAL, "unexpected exception in the %s plugin",
                        plugin_name.c_str());
  }
}

struct RegistrationInfo {
  const PX_HostServices* host;
  std::string plugin_name;
  // Optional: called on the computing thread before every compute of the
  // kernels registered with this info (the cpu plugin sizes its OpenMP team
  // to IntraOpThreads here). Must not throw.
  void (*before_compute)(const PX_HostServices* host) = nullptr;
};

// How many threads a kernel computing on this thread may use now, as the
// host says (PX_HostServices.intra_op_threads, ABI 0.6); 0 when the host has
// no such service (older hosts): keep the plugin's own default then.
inline int32_t IntraOpThreads(const PX_HostServices* host) {
  if (host == nullptr || !PX_STRUCT_HAS(host, PX_HostServices, intra_op_threads) ||
      host->intra_op_threads == nullptr) {
    return 0;
  }
  const int32_t n = host->intra_op_threads();
  return n > 0 ? n : 0;
}

template <typename K>
PX_Status* CreateKernel(void* user_data, const PX_NodeView* node, void** out_kernel) {
  auto* info = static_cast<RegistrationInfo*>(user_data);
  std::unique_ptr<K> kernel;
  PX_Status* status = Guard(info->host, info->plugin_name, [&] {
    kernel = std::make_unique<K>();
    kernel->host = info->host;
    kernel->plugin_name = info->plugin_name;
    kernel->before_compute = info->before_compute;
    Attrs attrs(info->host, node);
    kernel->Init(attrs);
  });
  if (status == nullptr) *out_kernel = static_cast<OpKernel*>(kernel.release());
  return status;
}

inline PX_Status* ComputeKernel(void* kernel, PX_KernelContext* ctx, const DLTensor* inputs,
                                size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                                PX_Stream* stream) {
  auto* k = static_cast<OpKernel*>(kernel);
  if (k->before_compute != nullptr) k->before_compute(k->host);
  return Guard(k->host, k->plugin_name, [&] {
    Call call(k->host, ctx, inputs, num_inputs, outputs, num_outputs, stream);
    k->Compute(call);
  });
}

inline void DestroyKernel(void* kernel) { delete static_cast<OpKernel*>(kernel); }

struct TypeConstraint {
  const char* attr;
  std::vector<PX_DataType> types;
};

inline PX_TypeConstraint TypeConstraintFor(const char* attr,
                                           const std::vector<PX_DataType>& types) {
  PX_TypeConstraint tc{};
  tc.struct_size = sizeof(tc);
  tc.attr_name = attr;
  tc.allowed = types.data();
  tc.num_allowed = types.size();
  return tc;
}

namespace internal {
// The one registration both RegisterKernel overloads make.
template <typename K>
PX_Status* RegisterKernelDef(RegistrationInfo* info, PX_KernelRegistrar* registrar,
                             const char* op, const std::vector<PX_TypeConstraint>& constraints,
                             const int32_t* host_inputs, size_t num_host_inputs,
                             const int32_t* host_outputs, size_t num_host_outputs,
                             int32_t priority) {
  PX_KernelDef def{};
  def.struct_size = sizeof(def);
  def.op_name = op;
  def.type_constraints = constraints.data();
  def.num_type_constraints = constraints.size();
  def.host_memory_inputs = host_inputs;
  def.num_host_memory_inputs = num_host_inputs;
  def.host_memory_outputs = host_outputs;
  def.num_host_memory_outputs = num_host_outputs;
  def.user_data = info;
  def.create = &CreateKernel<K>;
  def.compute = &ComputeKernel;
  def.destroy = &DestroyKernel;
  def.priority = priority;
  return info->host->kernel_register(registrar, &def);
}
}  // namespace internal

// Registers K for `op`. `constraints` restrict type attributes (a kernel per
// dtype set); host_inputs/host_outputs list the arguments the kernel wants in
// host memory (shape, axis and similar small integer inputs).
// `info` must outlive the registration (use one static per plugin).
// For the ops of the SDK's op-signature table, prefer the overload in
// plexus/sdk/op_signatures.h, which takes the attribute names and
// host-memory arguments from the table.
template <typename K>
PX_Status* RegisterKernel(RegistrationInfo* info, PX_KernelRegistrar* registrar, const char* op,
                          std::initializer_list<TypeConstraint> constraints,
                          std::initializer_list<int32_t> host_inputs = {},
                          std::initializer_list<int32_t> host_outputs = {}, int32_t priority = 0) {
  std::vector<PX_TypeConstraint> tcs;
  for (const TypeConstraint& c : constraints) tcs.push_back(TypeConstraintFor(c.attr, c.types));
  return internal::RegisterKernelDef<K>(info, registrar, op, tcs, host_inputs.begin(),
                                        host_inputs.size(), host_outputs.begin(),
                                        host_outputs.size(), priority);
}

inline bool Attrs::Has(const char* name) const {
  // Probe with the int accessor: NOT_FOUND means absent; any other answer
  // (OK, or INVALID_ARGUMENT for another type) means present.
  int64_t ignored = 0;
  PX_Status* s = host_->node_attr_int(node_, name, &ignored);
  if (s == nullptr) return true;
  bool absent = host_->status_code(s) == PX_CODE_NOT_FOUND;
  host_->status_destroy(s);
  return !absent;
}

// Type lists for registrations.
inline std::vector<PX_DataType> FloatTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
}
inline std::vector<PX_DataType> IntegerTypes() {
  return {PX_DT_INT8, PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT8, PX_DT_UINT16,
          PX_DT_UINT32, PX_DT_UINT64};
}
inline std::vector<PX_DataType> NumericTypes() {
  std::vector<PX_DataType> v = FloatTypes();
  for (PX_DataType t : IntegerTypes()) v.push_back(t);
  return v;
}
inline std::vector<PX_DataType> AllTypes() {
  std::vector<PX_DataType> v = NumericTypes();
  v.push_back(PX_DT_BOOL);
  return v;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_KERNEL_H_
