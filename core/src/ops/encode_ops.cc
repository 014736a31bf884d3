// Bytes in strings: web-safe base64 (tf.io.encode_base64/decode_base64) and
// raw bytes as numbers (tf.io.decode_raw). Host ops, with kernels in
// host_kernels/string_encode.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

PX_REGISTER_OP(OpDefBuilder("EncodeBase64")
                   .Input("input: string")
                   .Output("output: string")
                   .Attr("pad: bool = false")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("DecodeBase64")
                   .Input("input: string")
                   .Output("output: string")
                   .SetShapeFn(UnchangedShape));

constexpr char kRawTypes[] =
    "out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, bool, "
    "bfloat16}";

// The input's shape plus one dimension: the numbers in each string.
PX_REGISTER_OP(OpDefBuilder("DecodeRaw")
                   .Input("bytes: string")
                   .Output("output: out_type")
                   .Attr(kRawTypes)
                   .Attr("little_endian: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     if (!in.rank_known()) {
                       ctx.set_output(0, PartialShape::Unknown());
                       return absl::OkStatus();
                     }
                     Shape out;
                     for (int64_t d = 0; d < in.rank(); ++d) out.push_back(in.dim(d));
                     out.push_back(-1);
                     ctx.set_output(0, PartialShape(out));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus
