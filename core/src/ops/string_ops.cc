// String ops of text preprocessing (tf.strings): case mapping, regular
// expression replacement, splitting into tokens, n-grams, hashing into
// buckets, number formatting, lengths, and UTF-8 to code points and back.
// stripping whitespace, regular-expression matching, joining by segment and
// formatting tensors as text (tf.strings.format, tf.print). Their schemas
// and shape functions; they are host ops, with kernels in
// host_kernels/strings.cc, string_split.cc, string_hash.cc, unicode.cc,
// string_reduce_join.cc and string_format.cc. (StringJoin and
// StaticRegexFullMatch live with the parsing ops.)
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The splitting ops: a vector of strings and a scalar separator in, a
// sparse matrix (indices [n, 2], values [n], dense shape [2]) out.
absl::Status SplitShape(InferenceContext& ctx, absl::string_view separator) {
  if (ctx.input(0).rank_known() && ctx.input(0).rank() != 1) {
    return ctx.Error(absl::StrCat("input must be a vector, got shape ", ctx.input(0).ToString()));
  }
  if (ctx.input(1).rank_known() && ctx.input(1).rank() != 0) {
    return ctx.Error(absl::StrCat(separator, " must be a scalar, got shape ", ctx.input(1).ToString()));
  }
  ctx.set_output(0, PartialShape(Shape{-1, 2}));
  ctx.set_output(1, PartialShape(Shape{-1}));
  ctx.set_output(2, PartialShape(Shape{2}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("StringLower")
                   .Input("input: string")
                   .Output("output: string")
                   .Attr("encoding: string = \"\"")
                   .SetShapeFn(UnchangedShape));
PX_REGISTER_OP(OpDefBuilder("StringUpper")
                   .Input("input: string")
                   .Output("output: string")
                   .Attr("encoding: string = \"\"")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("StaticRegexReplace")
                   .Input("input: string")
                   .Output("output: string")
                   .Attr("pattern: string")
                   .Attr("rewrite: string")
                   .Attr("replace_global: bool = true")
                   .SetShapeFn(UnchangedShape));
PX_REGISTER_OP(OpDefBuilder("RegexReplace")
                   .Input("input: string")
                   .Input("pattern: string")
                   .Input("rewrite: string")
                   .Output("output: string")
                   .Attr("replace_global: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     for (int i = 1; i <= 2; ++i) {
                       if (ctx.input(i).rank_known() && ctx.input(i).rank() != 0) {
                         return ctx.Error(absl::StrCat(i == 1 ? "pattern" : "rewrite", " must be a scalar, got shape ",
                                                       ctx.input(i).ToString()));
                       }
                     }
                     return UnchangedShape(ctx);
                   }));

PX_REGISTER_OP(OpDefBuilder("StringSplitV2")
                   .Input("input: string")
                   .Input("sep: string")
                   .Output("indices: int64")
                   .Output("values: string")
                   .Output("shape: int64")
                   .Attr("maxsplit: int = -1")
                   .SetShapeFn([](InferenceContext& ctx) { return SplitShape(ctx, "sep"); }));

// tf.compat.v1.string_split: splits on any byte of `delimiter`.
PX_REGISTER_OP(OpDefBuilder("StringSplit")
                   .Input("input: string")
                   .Input("delimiter: string")
                   .Output("indices: int64")
                   .Output("values: string")
                   .Output("shape: int64")
                   .Attr("skip_empty: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) { return SplitShape(ctx, "delimiter"); }));

PX_REGISTER_OP(OpDefBuilder("StringNGrams")
                   .Input("data: string")
                   .Input("data_splits: Tsplits")
                   .Output("ngrams: string")
                   .Output("ngrams_splits: Tsplits")
                   .Attr("separator: string")
                   .Attr("ngram_widths: list(int) >= 0")
                   .Attr("left_pad: string")
                   .Attr("right_pad: string")
                   .Attr("pad_width: int")
                   .Attr("preserve_short_sequences: bool")
                   .Attr("Tsplits: {int32, int64} = DT_INT64")
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(0).rank_known() && ctx.input(0).rank() != 1) {
                       return ctx.Error(absl::StrCat("data must be a vector, got shape ", ctx.input(0).ToString()));
                     }
                     if (ctx.input(1).rank_known() && ctx.input(1).rank() != 1) {
                       return ctx.Error(absl::StrCat("data_splits must be a vector, got shape ",
                                                     ctx.input(1).ToString()));
                     }
                     ctx.set_output(0, PartialShape(Shape{-1}));
                     ctx.set_output(1, ctx.input(1).rank_known() ? ctx.input(1) : PartialShape(Shape{-1}));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("StringToHashBucketFast")
                   .Input("input: string")
                   .Output("output: int64")
                   .Attr("num_buckets: int >= 1")
                   .SetShapeFn(UnchangedShape));
PX_REGISTER_OP(OpDefBuilder("StringToHashBucketStrong")
                   .Input("input: string")
                   .Output("output: int64")
                   .Attr("num_buckets: int >= 1")
                   .Attr("key: list(int)")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("AsString")
                   .Input("input: T")
                   .Output("output: string")
                   .Attr("T: {float, double, int32, uint8, uint16, int16, int8, int64, uint32, uint64, bool, "
                         "half, bfloat16, string, complex64, complex128}")
                   .Attr("precision: int = -1")
                   .Attr("scientific: bool = false")
                   .Attr("shortest: bool = false")
                   .Attr("width: int = -1")
                   .Attr("fill: string = \"\"")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("StringLength")
                   .Input("input: string")
                   .Output("output: int32")
                   .Attr("unit: string = \"BYTE\"")  // BYTE or UTF8_CHAR (the kernel checks)
                   .SetShapeFn(UnchangedShape));

// Substrings at `pos` of length `len` (bytes or UTF-8 characters); pos
// and len broadcast against input.
PX_REGISTER_OP(OpDefBuilder("Substr")
                   .Input("input: string")
                   .Input("pos: T")
                   .Input("len: T")
                   .Output("output: string")
                   .Attr("T: {int32, int64}")
                   .Attr("unit: string = \"BYTE\"")  // BYTE or UTF8_CHAR (the kernel checks)
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(1).rank_known() && ctx.input(2).rank_known() &&
                         ctx.input(1).rank() != ctx.input(2).rank()) {
                       return ctx.Error(absl::StrCat("pos and len must have the same rank, got ",
                                                     ctx.input(1).ToString(), " and ", ctx.input(2).ToString()));
                     }
                     return BroadcastShape(ctx);
                   }));

// Joins the strings along the given axes (the first axis listed varies
// fastest); no axes means no reduction.
PX_REGISTER_OP(OpDefBuilder("ReduceJoin")
                   .Input("inputs: string")
                   .Input("reduction_indices: int32")
                   .Output("output: string")
                   .Attr("keep_dims: bool = false")
                   .Attr("separator: string = \"\"")
                   .SetShapeFn(ReductionShape));

PX_REGISTER_OP(OpDefBuilder("StringToNumber")
                   .Input("string_tensor: string")
                   .Output("output: out_type")
                   .Attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
                   .SetShapeFn(UnchangedShape));

// UTF-8 only (the kernels refuse other encodings); errors is strict,
// replace or ignore (the kernels check).
PX_REGISTER_OP(OpDefBuilder("UnicodeDecode")
                   .Input("input: string")
                   .Output("row_splits: Tsplits")
                   .Output("char_values: int32")
                   .Attr("input_encoding: string")
                   .Attr("errors: string = \"replace\"")
                   .Attr("replacement_char: int = 65533")
                   .Attr("replace_control_characters: bool = false")
                   .Attr("Tsplits: {int32, int64} = DT_INT64")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     int64_t splits = -1;  // one more than the strings
                     if (in.fully_defined()) {
                       PX_RETURN_IF_ERROR(CheckedNumElements(ctx, in.dims(), "the number of strings", &splits));
                       PX_RETURN_IF_ERROR(CheckedAdd(ctx, splits, 1, "the number of row splits", &splits));
                     }
                     ctx.set_output(0, PartialShape(Shape{splits}));
                     ctx.set_output(1, PartialShape(Shape{-1}));
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("UnicodeDecodeWithOffsets")
                   .Input("input: string")
                   .Output("row_splits: Tsplits")
                   .Output("char_values: int32")
                   .Output("char_to_byte_starts: int64")
                   .Attr("input_encoding: string")
                   .Attr("errors: string = \"replace\"")
                   .Attr("replacement_char: int = 65533")
                   .Attr("replace_control_characters: bool = false")
                   .Attr("Tsplits: {int32, int64} = DT_INT64")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     int64_t splits = -1;  // one more than the strings
                     if (in.fully_defined()) {
                       PX_RETURN_IF_ERROR(CheckedNumElements(ctx, in.dims(), "the number of strings", &splits));
                       PX_RETURN_IF_ERROR(CheckedAdd(ctx, splits, 1, "the number of row splits", &splits));
                     }
                     ctx.set_output(0, PartialShape(Shape{splits}));
                     ctx.set_output(1, PartialShape(Shape{-1}));
                     ctx.set_output(2, PartialShape(Shape{-1}));
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("UnicodeEncode")
                   .Input("input_values: int32")
                   .Input("input_splits: Tsplits")
                   .Output("output: string")
                   .Attr("errors: string = \"replace\"")
                   .Attr("output_encoding: string")
                   .Attr("replacement_char: int = 65533")
                   .Attr("Tsplits: {int32, int64} = DT_INT64")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& splits = ctx.input(1);
                     const int64_t rows = splits.rank_known() && splits.rank() == 1 && splits.dim(0) > 0
                                              ? splits.dim(0) - 1
                                              : -1;
                     ctx.set_output(0, PartialShape(Shape{rows}));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("StringStrip")
                   .Input("input: string")
                   .Output("output: string")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("RegexFullMatch")
                   .Input("input: string")
                   .Input("pattern: string")
                   .Output("output: bool")
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(1).rank_known() && ctx.input(1).rank() != 0) {
                       return ctx.Error(absl::StrCat("Pattern must be scalar, but received ", ctx.input(1).ToString()));
                     }
                     return UnchangedShape(ctx);
                   }));

// [num_segments] followed by the inputs' shape past segment_ids' rank.
PX_REGISTER_OP(OpDefBuilder("UnsortedSegmentJoin")
                   .Input("inputs: string")
                   .Input("segment_ids: Tindices")
                   .Input("num_segments: Tnumsegments")
                   .Output("output: string")
                   .Attr("separator: string = \"\"")
                   .Attr("Tindices: {int32, int64}")
                   .Attr("Tnumsegments: {int32, int64} = DT_INT32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     const PartialShape& ids = ctx.input(1);
                     if (ctx.input(2).rank_known() && ctx.input(2).rank() != 0) {
                       return ctx.Error("Number of segments must be a scalar");
                     }
                     if (!in.rank_known() || !ids.rank_known()) {
                       ctx.set_output(0, PartialShape::Unknown());
                       return absl::OkStatus();
                     }
                     if (ids.rank() > in.rank()) {
                       return ctx.Error(absl::StrCat("segment_ids of shape ", ids.ToString(),
                                                     " must be a prefix of the inputs' shape ", in.ToString()));
                     }
                     std::vector<int64_t> num;
                     Shape s{ReadIntValues(ctx.input_value(2), &num) && num.size() == 1 ? num[0] : -1};
                     for (int64_t d = ids.rank(); d < in.rank(); ++d) s.push_back(in.dim(d));
                     ctx.set_output(0, PartialShape(s));
                     return absl::OkStatus();
                   }));

// One string: the template with each placeholder replaced by an input.
PX_REGISTER_OP(OpDefBuilder("StringFormat")
                   .Input("inputs: T")
                   .Output("output: string")
                   .Attr("T: list(type) >= 0")
                   .Attr("template: string = \"%s\"")
                   .Attr("placeholder: string = \"%s\"")
                   .Attr("summarize: int = 3")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_ASSIGN_OR_RETURN(std::string templ, GetAttrString(ctx.node(), "template"));
                     PX_ASSIGN_OR_RETURN(std::string placeholder, GetAttrString(ctx.node(), "placeholder"));
                     const std::vector<std::string> parts = absl::StrSplit(templ, placeholder);
                     const int64_t holes = static_cast<int64_t>(parts.size()) - 1;
                     if (holes != ctx.num_inputs()) {
                       return ctx.Error(absl::StrCat("num placeholders in template and num inputs must match: ",
                                                     holes, " vs. ", ctx.num_inputs()));
                     }
                     ctx.set_output(0, PartialShape(Shape{}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus
