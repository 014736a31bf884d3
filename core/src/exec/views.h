// The metadata ops the core runs itself, with no kernel and no device work
// (docs/architecture.md, "Placement"):
//   - views (OpDef::output_is_view: Reshape, ExpandDims, Squeeze): output 0
//     shares input 0's memory under its new shape;
//   - shape values (OpDef::outputs_from_shapes: Shape, ShapeN, Size, Rank):
//     host tensors made from the inputs' shapes; input data is never read.
// The executor (execute.cc) and eager execution (eager.cc) both run them
// here. Tensors are never written in place, so sharing memory is safe.
#ifndef PLEXUS_SRC_EXEC_VIEWS_H_
#define PLEXUS_SRC_EXEC_VIEWS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "plexus/device.h"
#include "plexus/graph.h"
#include "plexus/tensor.h"

namespace plexus {

// Runs a metadata op. For a view whose shape depends on the values of
// inputs 1.. (Reshape's shape, ExpandDims's axis), those inputs must be
// host-readable unless `static_shapes` (the node's output shapes in the
// graph are exact). Errors start with where(node, *device), as a kernel's
// would: "node 'x' (op Y) on CPU:0" in graphs, "op Y on CPU:0" eagerly.
absl::Status RunMetadataOp(const Node& node, absl::Span<const Tensor* const> inputs, bool static_shapes,
                           const Device& device,
                           std::string (*where)(const Node& node, const Device& device),
                           std::vector<Tensor>* outputs);

}  // namespace plexus

#endif  // PLEXUS_SRC_EXEC_VIEWS_H_
