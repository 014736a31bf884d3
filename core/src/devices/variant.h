// Variant tensors (DT_VARIANT): scalars in host memory whose buffer holds
// one C++ object instead of bytes, as a TensorFlow Variant does. The only
// kind so far is the TensorList (host_kernels/tensor_list.h).
//
// A variant is a value, never state: copies of the tensor share the object,
// so nothing may change it while another tensor holds it; an op that
// "changes" a variant makes a new one, unless it holds the only reference
// (UniqueVariant). The in-order executor moves a variant into its last
// reader, and function calls and While loops hand their arguments on, so
// that a loop's TensorListSetItem changes its list in place. Variant tensors never cross the plugin ABI:
// the placer runs every op with a variant input or output on the host, and
// copying one to a device is refused. Their byte size is zero, so the memory
// plan, DLPack and .npy writers leave them out, and constant folding keeps
// them computed (a variant cannot become a Const).
#ifndef PLEXUS_CORE_SRC_DEVICES_VARIANT_H_
#define PLEXUS_CORE_SRC_DEVICES_VARIANT_H_

#include <memory>
#include <string>

#include "plexus/tensor.h"

namespace plexus {

class VariantValue {
 public:
  virtual ~VariantValue() = default;
  virtual std::string DebugString() const = 0;
};

// A DT_VARIANT scalar holding `value`.
Tensor MakeVariantTensor(std::shared_ptr<const VariantValue> value);
// The object a DT_VARIANT tensor holds; null for any other tensor.
const VariantValue* GetVariant(const Tensor& t);
// The object `t` holds, to change in place, when `t` is its only holder
// (no other tensor shares its buffer); else null.
VariantValue* UniqueVariant(Tensor& t);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_DEVICES_VARIANT_H_
