// Helpers shared by every CPU kernel: instance state, input and output checks,
// attribute reading and registration. No Eigen here: every kernel TU includes
// this header, and Eigen stays in the few TUs that do heavy math.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_KERNEL_UTIL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_KERNEL_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::cpu {

using Shape = std::vector<int64_t>;

// Every kernel instance is a KernelState (or derives from one), so compute
// reaches the host services through its instance instead of a global: the
// same loaded plugin may be initialized by more than one host.
struct KernelState {
  explicit KernelState(const PX_HostServices* services) : host(services) {}
  virtual ~KernelState() = default;
  const PX_HostServices* host;
};

inline const PX_HostServices* HostOf(void* kernel) {
  return static_cast<const KernelState*>(kernel)->host;
}

// create / destroy for kernels without attributes. user_data is the host
// services table (RegisterKernel passes it).
PX_Status* CreateStatelessKernel(void* user_data, const PX_NodeView* node,
                                 void** out_kernel);
void DestroyKernel(void* kernel);

// Runs body() and turns an escaping exception into a status: nothing may
// throw across the plugin boundary.
template <typename Body>
PX_Status* GuardCall(const PX_HostServices* host, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory in the cpu plugin");
  } catch (const std::exception& e) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "unexpected exception in the cpu plugin: %s", e.what());
  } catch (...) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "unexpected exception in the cpu plugin");
  }
}

// DLPack dtype of a C++ element type.
template <typename T>
DLDataType DlTypeOf();
inline DLDataType MakeDlType(uint8_t code, uint8_t bits) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = 1;
  return t;
}
template <>
inline DLDataType DlTypeOf<float>() { return MakeDlType(kDLFloat, 32); }
template <>
inline DLDataType DlTypeOf<double>() { return MakeDlType(kDLFloat, 64); }
template <>
inline DLDataType DlTypeOf<int32_t>() { return MakeDlType(kDLInt, 32); }
template <>
inline DLDataType DlTypeOf<int64_t>() { return MakeDlType(kDLInt, 64); }

bool SameDtype(DLDataType a, DLDataType b);
std::string DtypeString(DLDataType t);  // e.g. "float32"
std::string ShapeString(const Shape& shape);  // e.g. "[2,3]"
Shape ShapeOf(const DLTensor& t);
int64_t NumElements(const Shape& shape);

// INVALID_ARGUMENT unless the launch has exactly the given arity.
PX_Status* CheckArity(const PX_HostServices* host, size_t num_inputs,
                      size_t want_inputs, size_t num_outputs,
                      size_t want_outputs);

// INVALID_ARGUMENT unless input `index` has dtype `want` and is dense.
PX_Status* CheckInput(const PX_HostServices* host, const DLTensor& input,
                      size_t index, DLDataType want);

// The output allocation rule of PX_KernelComputeFn: an output the host has
// allocated must already have `shape` (INTERNAL otherwise: the host inferred
// a different shape than the kernel computes); an unallocated one (data NULL,
// ndim -1) is allocated through the host. Either way checks the dtype and
// stores the writable address (byte_offset applied) in *out_data.
PX_Status* PrepareOutput(const PX_HostServices* host, PX_KernelContext* ctx,
                         DLTensor* outputs, size_t index, const Shape& shape,
                         DLDataType dtype, void** out_data);

// Optional attributes: an absent one (NOT_FOUND) gives `fallback`; any other
// error is returned.
PX_Status* ReadBoolAttr(const PX_HostServices* host, const PX_NodeView* node,
                        const char* name, bool fallback, bool* out_value);
PX_Status* ReadStringAttr(const PX_HostServices* host, const PX_NodeView* node,
                          const char* name, const char* fallback,
                          std::string* out_value);

// Registers one kernel for `op`, restricting `type_attr` to `types` (no
// constraint when type_attr is NULL). user_data is the host services and
// destroy is DestroyKernel: every create must store a KernelState.
PX_Status* RegisterKernel(const PX_HostServices* host,
                          PX_KernelRegistrar* registrar, const char* op,
                          const char* type_attr,
                          std::initializer_list<PX_DataType> types,
                          PX_KernelCreateFn create, PX_KernelComputeFn compute);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_KERNEL_UTIL_H_
