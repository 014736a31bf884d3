// Small helpers for gradient functions (core/src/passes/gradients/*.cc).
#ifndef PLEXUS_CORE_SRC_GRADIENTS_GRAD_UTIL_H_
#define PLEXUS_CORE_SRC_GRADIENTS_GRAD_UTIL_H_

#include <string>
#include <vector>

#include "plexus/gradients.h"

namespace plexus::grad {

inline bool AttrBool(const GradientOp& op, const std::string& name, bool fallback = false) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? fallback : it->second.b();
}
inline int64_t AttrInt(const GradientOp& op, const std::string& name, int64_t fallback = 0) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? fallback : it->second.i();
}
inline float AttrFloat(const GradientOp& op, const std::string& name, float fallback = 0) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? fallback : it->second.f();
}
inline std::string AttrString(const GradientOp& op, const std::string& name, const std::string& fallback = "") {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? fallback : it->second.s();
}
inline DataType AttrType(const GradientOp& op, const std::string& name) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? DataType::kInvalid : static_cast<DataType>(it->second.type());
}

// Attribute maps for the nodes gradient functions add.
inline AttrMap Attrs() { return {}; }
inline AttrMap With(AttrMap m, const std::string& name, bool v) {
  m[name].set_b(v);
  return m;
}
inline AttrMap WithType(AttrMap m, const std::string& name, DataType t) {
  m[name].set_type(static_cast<tf::DataType>(t));
  return m;
}
// Copies attribute `name` of the forward op, when it has it.
inline AttrMap Copy(AttrMap m, const GradientOp& op, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    auto it = op.attrs.find(name);
    if (it != op.attrs.end()) m[name] = it->second;
  }
  return m;
}

}  // namespace plexus::grad

#endif  // PLEXUS_CORE_SRC_GRADIENTS_GRAD_UTIL_H_
