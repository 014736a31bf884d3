// Function calls and functional control flow: PartitionedCall,
// StatefulPartitionedCall, If / StatelessIf, While / StatelessWhile, and the
// _Arg / _Retval nodes of function bodies. Their schemas and shape
// functions; they are host ops, with kernels in host_kernels/function.cc.
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Output shapes from the output_shapes attribute when present, else unknown.
absl::Status DeclaredShapes(InferenceContext& ctx) {
  const tf::AttrValue* shapes = ctx.node().FindAttr("output_shapes");
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    PartialShape shape = PartialShape::Unknown();
    if (shapes != nullptr && i < shapes->list().shape_size()) {
      const tf::TensorShapeProto& p = shapes->list().shape(i);
      if (!p.unknown_rank()) {
        Shape dims;
        for (const auto& d : p.dim()) dims.push_back(d.size() < 0 ? -1 : d.size());
        shape = PartialShape(dims);
      }
    }
    ctx.set_output(i, shape);
  }
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext&) { return absl::OkStatus(); }

#define PX_CALL_OP(name, stateful)                              \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("args: Tin")                        \
                     .Output("output: Tout")                    \
                     .Attr("Tin: list(type) >= 0")              \
                     .Attr("Tout: list(type) >= 0")             \
                     .Attr("f: func")                           \
                     .Attr("config: string = \"\"")             \
                     .Attr("config_proto: string = \"\"")       \
                     .Attr("executor_type: string = \"\"")      \
                     stateful                                   \
                     .SetShapeFn(DeclaredShapes))
PX_CALL_OP("PartitionedCall", );
PX_CALL_OP("StatefulPartitionedCall", .SetIsStateful());

#define PX_IF_OP(name, stateful)                                \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("cond: Tcond")                      \
                     .Input("input: Tin")                       \
                     .Output("output: Tout")                    \
                     .Attr("Tcond: type")                       \
                     .Attr("Tin: list(type) >= 0")              \
                     .Attr("Tout: list(type) >= 0")             \
                     .Attr("then_branch: func")                 \
                     .Attr("else_branch: func")                 \
                     .Attr("output_shapes: list(shape) = []")   \
                     stateful                                   \
                     .SetShapeFn(DeclaredShapes))
PX_IF_OP("If", .SetIsStateful());
PX_IF_OP("StatelessIf", );

#define PX_WHILE_OP(name, stateful)                             \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("input: T")                         \
                     .Output("output: T")                       \
                     .Attr("T: list(type) >= 0")                \
                     .Attr("cond: func")                        \
                     .Attr("body: func")                        \
                     .Attr("output_shapes: list(shape) = []")   \
                     .Attr("parallel_iterations: int = 10")     \
                     stateful                                   \
                     .SetShapeFn(DeclaredShapes))
PX_WHILE_OP("While", .SetIsStateful());
PX_WHILE_OP("StatelessWhile", );

PX_REGISTER_OP(OpDefBuilder("_Arg")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("index: int >= 0")
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape::Unknown());
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("_Retval")
                   .Input("input: T")
                   .Attr("T: type")
                   .Attr("index: int >= 0")
                   .SetShapeFn(NoOutputs));

}  // namespace
}  // namespace plexus
