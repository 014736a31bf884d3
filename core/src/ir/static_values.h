// The hook through which graph import learns the values of small integer
// tensors that are known statically (Shape of a static shape, small integer
// Consts, and the few ops Keras builds target shapes with), so that shape
// functions reading their inputs' values (Reshape's shape, Mean's axes,
// Pad's paddings...) give static shapes. Tensors belong to a layer above
// this one, so the evaluator lives in ops/shape_values.cc and installs
// itself here when the library loads; import only holds the results.
#ifndef PLEXUS_SRC_IR_STATIC_VALUES_H_
#define PLEXUS_SRC_IR_STATIC_VALUES_H_

#include <memory>
#include <vector>

#include "plexus/graph.h"

namespace plexus {

class Tensor;

// The value of output 0 of `node`, given its inputs' static shapes and the
// known values of its inputs (null where unknown), or null.
using StaticValueFn = std::shared_ptr<const Tensor> (*)(const Node& node,
                                                        const std::vector<PartialShape>& input_shapes,
                                                        const std::vector<const Tensor*>& input_values);

void SetStaticValueFn(StaticValueFn fn);
// The installed evaluator, or null (then no values are known at import).
StaticValueFn GetStaticValueFn();

}  // namespace plexus

#endif  // PLEXUS_SRC_IR_STATIC_VALUES_H_
