// Assertions and printing (tf.debugging.assert_*, tf.print, and the checks
// tf.image and Keras put into their graphs): Assert, PrintV2 and Print.
// Host ops, with kernels in host_kernels/assert.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Fails the run with the data's summaries when `condition` is false.
PX_REGISTER_OP(OpDefBuilder("Assert")
                   .Input("condition: bool")
                   .Input("data: T")
                   .Attr("T: list(type)")
                   .Attr("summarize: int = 3")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(0).rank_known() && ctx.input(0).rank() != 0) {
                       return ctx.Error(absl::StrCat("condition must be a scalar, got shape ", ctx.input(0).ToString()));
                     }
                     return absl::OkStatus();
                   }));

// Writes a string scalar to stderr, stdout or the log.
PX_REGISTER_OP(OpDefBuilder("PrintV2")
                   .Input("input: string")
                   .Attr("output_stream: string = \"stderr\"")
                   .Attr("end: string = \"\n\"")  // a newline, as TensorFlow
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(0).rank_known() && ctx.input(0).rank() != 0) {
                       return ctx.Error(absl::StrCat("input must be a scalar, got shape ", ctx.input(0).ToString()));
                     }
                     return absl::OkStatus();
                   }));

// tf.compat.v1.Print: passes input through and prints the data.
PX_REGISTER_OP(OpDefBuilder("Print")
                   .Input("input: T")
                   .Input("data: U")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("U: list(type) >= 0")
                   .Attr("message: string = \"\"")
                   .Attr("first_n: int = -1")
                   .Attr("summarize: int = 3")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

}  // namespace
}  // namespace plexus
