// CTC decoding (tf.nn.ctc_greedy_decoder, Keras's ops.ctc_decode with the
// greedy strategy, the end of exported speech and OCR models). A host op,
// with its kernel in host_kernels/ctc_greedy.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

PX_REGISTER_OP(OpDefBuilder("CTCGreedyDecoder")
                   .Input("inputs: T")
                   .Input("sequence_length: int32")
                   .Output("decoded_indices: int64")
                   .Output("decoded_values: int64")
                   .Output("decoded_shape: int64")
                   .Output("log_probability: T")
                   .Attr("merge_repeated: bool = false")
                   .Attr("blank_index: int = -1")
                   .Attr("T: {float, double} = DT_FLOAT")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     if (in.rank_known() && in.rank() != 3) {
                       return ctx.Error(absl::StrCat("inputs must be [max_time, batch, num_classes], got shape ",
                                                     in.ToString()));
                     }
                     ctx.set_output(0, PartialShape(Shape{-1, 2}));
                     ctx.set_output(1, PartialShape(Shape{-1}));
                     ctx.set_output(2, PartialShape(Shape{2}));
                     ctx.set_output(3, PartialShape(Shape{in.rank_known() ? in.dim(1) : -1, 1}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus
