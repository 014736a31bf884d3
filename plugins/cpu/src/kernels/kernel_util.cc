#include "kernels/kernel_util.h"

#include <cstring>

namespace plexus::cpu {

PX_Status* CreateStatelessKernel(void* user_data, const PX_NodeView* node,
                                 void** out_kernel) {
  const auto* host = static_cast<const PX_HostServices*>(user_data);
  auto* state = new (std::nothrow) KernelState(host);
  if (state == nullptr) {
    return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory creating a cpu kernel");
  }
  *out_kernel = state;
  return nullptr;
}

void DestroyKernel(void* kernel) { delete static_cast<KernelState*>(kernel); }

bool SameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

std::string DtypeString(DLDataType t) {
  const char* kind = "unknown";
  switch (t.code) {
    case kDLInt: kind = "int"; break;
    case kDLUInt: kind = "uint"; break;
    case kDLFloat: kind = "float"; break;
    case kDLBfloat: kind = "bfloat"; break;
    case kDLComplex: kind = "complex"; break;
    case PX_DL_BOOL: kind = "bool"; break;
    default: break;
  }
  std::string s = kind + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

std::string ShapeString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape ShapeOf(const DLTensor& t) {
  if (t.ndim <= 0) return Shape();
  return Shape(t.shape, t.shape + t.ndim);
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

PX_Status* CheckArity(const PX_HostServices* host, size_t num_inputs,
                      size_t want_inputs, size_t num_outputs,
                      size_t want_outputs) {
  if (num_inputs == want_inputs && num_outputs == want_outputs) return nullptr;
  return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                      "expected %zu inputs and %zu outputs, got %zu and %zu",
                      want_inputs, want_outputs, num_inputs, num_outputs);
}

PX_Status* CheckInput(const PX_HostServices* host, const DLTensor& input,
                      size_t index, DLDataType want) {
  if (!SameDtype(input.dtype, want)) {
    return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                        "input %zu has dtype %s, the kernel expects %s", index,
                        DtypeString(input.dtype).c_str(),
                        DtypeString(want).c_str());
  }
  if (input.ndim < 0 || !px_sdk_is_contiguous(&input)) {
    return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                        "input %zu is not a dense row-major tensor", index);
  }
  if (input.data == nullptr && px_sdk_num_elements(&input) != 0) {
    return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                        "input %zu has no data", index);
  }
  return nullptr;
}

PX_Status* PrepareOutput(const PX_HostServices* host, PX_KernelContext* ctx,
                         DLTensor* outputs, size_t index, const Shape& shape,
                         DLDataType dtype, void** out_data) {
  DLTensor& out = outputs[index];
  if (out.data == nullptr && out.ndim < 0) {
    PX_Status* status = host->output_allocate(
        ctx, index, static_cast<int32_t>(shape.size()), shape.data());
    if (status != nullptr) return status;
  } else if (ShapeOf(out) != shape) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "output %zu was allocated with shape %s but the kernel "
                        "computes %s",
                        index, ShapeString(ShapeOf(out)).c_str(),
                        ShapeString(shape).c_str());
  }
  if (!SameDtype(out.dtype, dtype)) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "output %zu has dtype %s, the kernel produces %s",
                        index, DtypeString(out.dtype).c_str(),
                        DtypeString(dtype).c_str());
  }
  if (!px_sdk_is_contiguous(&out) ||
      (out.data == nullptr && NumElements(shape) != 0)) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "output %zu is not a dense buffer", index);
  }
  *out_data = px_sdk_data(&out);
  return nullptr;
}

PX_Status* ReadBoolAttr(const PX_HostServices* host, const PX_NodeView* node,
                        const char* name, bool fallback, bool* out_value) {
  int value = 0;
  PX_Status* status = host->node_attr_bool(node, name, &value);
  if (status == nullptr) {
    *out_value = value != 0;
    return nullptr;
  }
  if (host->status_code(status) != PX_CODE_NOT_FOUND) return status;
  host->status_destroy(status);
  *out_value = fallback;
  return nullptr;
}

PX_Status* ReadStringAttr(const PX_HostServices* host, const PX_NodeView* node,
                          const char* name, const char* fallback,
                          std::string* out_value) {
  const char* data = nullptr;
  size_t size = 0;
  PX_Status* status = host->node_attr_string(node, name, &data, &size);
  if (status == nullptr) {
    out_value->assign(data, size);
    return nullptr;
  }
  if (host->status_code(status) != PX_CODE_NOT_FOUND) return status;
  host->status_destroy(status);
  *out_value = fallback;
  return nullptr;
}

PX_Status* RegisterKernel(const PX_HostServices* host,
                          PX_KernelRegistrar* registrar, const char* op,
                          const char* type_attr,
                          std::initializer_list<PX_DataType> types,
                          PX_KernelCreateFn create, PX_KernelComputeFn compute) {
  PX_TypeConstraint constraint;
  std::memset(&constraint, 0, sizeof(constraint));
  constraint.struct_size = sizeof(constraint);
  constraint.attr_name = type_attr;
  constraint.allowed = types.begin();
  constraint.num_allowed = types.size();

  PX_KernelDef def;
  std::memset(&def, 0, sizeof(def));
  def.struct_size = sizeof(def);
  def.op_name = op;
  def.type_constraints = type_attr != nullptr ? &constraint : nullptr;
  def.num_type_constraints = type_attr != nullptr ? 1 : 0;
  // The table is const, the ABI slot is not: the kernels only read it.
  def.user_data = const_cast<PX_HostServices*>(host);
  def.create = create;
  def.compute = compute;
  def.destroy = DestroyKernel;
  return host->kernel_register(registrar, &def);
}

}  // namespace plexus::cpu
