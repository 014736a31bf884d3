// TensorFlow's random-number ops: the stateless ones of seed inputs
// (StatelessRandomUniform, ...), their key/counter/algorithm successors
// (StatelessRandomUniformV2, ... and StatelessRandomGetKeyCounter, which
// turns a seed into a key and a counter), the gamma sampler behind Beta
// and Dirichlet draws (StatelessRandomGammaV2/V3), and TensorFlow 1's
// stateful ops of seed and seed2 attributes (RandomUniform, ...).
// Schemas and shape functions; the core runs them on the host
// (host_kernels/random_ops.cc, random_stateful.cc), the same bits on every
// device.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_util::CheckRank;
using array_util::ShapeFromInput;

constexpr char kFloatDtypes[] = "{half, bfloat16, float, double}";

// Output 0 has the shape that input `shape_input` (a shape vector) holds.
absl::Status OutputFromShapeInput(InferenceContext& ctx, int shape_input) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, shape_input, 1, "shape"));
  bool known = false;
  PX_ASSIGN_OR_RETURN(PartialShape out, ShapeFromInput(ctx, shape_input, &known));
  if (known) {
    for (int64_t i = 0; i < out.rank(); ++i) {
      if (out.dim(i) < 0) return ctx.Error(absl::StrCat("Dimension ", out.dim(i), " must be >= 0"));
    }
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

// A seed input: a vector of 2.
absl::Status CheckSeed(InferenceContext& ctx, int i) {
  const PartialShape& seed = ctx.input(i);
  if (seed.rank_known() && (seed.rank() != 1 || (seed.dim(0) >= 0 && seed.dim(0) != 2))) {
    return ctx.Error(absl::StrCat("seed must have shape [2], not ", seed.ToString()));
  }
  return absl::OkStatus();
}

// Key, counter and algorithm inputs at 1, 2, 3: [1], a vector, a scalar.
absl::Status CheckKeyCounterAlg(InferenceContext& ctx) {
  const PartialShape& key = ctx.input(1);
  if (key.rank_known() && (key.rank() != 1 || (key.dim(0) >= 0 && key.dim(0) != 1))) {
    return ctx.Error(absl::StrCat("key must have shape [1], not ", key.ToString()));
  }
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 1, "counter"));
  return CheckRank(ctx, 3, 0, "alg");
}

// StatelessRandomUniform(shape, seed) and its kin; `scalars` more scalar
// inputs follow (minval, maxval).
absl::Status SeedShape(InferenceContext& ctx, int scalars) {
  PX_RETURN_IF_ERROR(CheckSeed(ctx, 1));
  for (int i = 0; i < scalars; ++i) {
    PX_RETURN_IF_ERROR(CheckRank(ctx, 2 + i, 0, i == 0 ? "minval" : "maxval"));
  }
  return OutputFromShapeInput(ctx, 0);
}

// StatelessRandomUniformV2(shape, key, counter, alg) and its kin.
absl::Status KeyCounterShape(InferenceContext& ctx, int scalars) {
  PX_RETURN_IF_ERROR(CheckKeyCounterAlg(ctx));
  for (int i = 0; i < scalars; ++i) {
    PX_RETURN_IF_ERROR(CheckRank(ctx, 4 + i, 0, i == 0 ? "minval" : "maxval"));
  }
  return OutputFromShapeInput(ctx, 0);
}

// RandomUniformInt(shape, minval, maxval) and the other stateful ops.
absl::Status StatefulShape(InferenceContext& ctx, int scalars) {
  for (int i = 0; i < scalars; ++i) {
    PX_RETURN_IF_ERROR(CheckRank(ctx, 1 + i, 0, i == 0 ? "minval" : "maxval"));
  }
  return OutputFromShapeInput(ctx, 0);
}

absl::Status KeyCounterOutputs(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckSeed(ctx, 0));
  ctx.set_output(0, PartialShape(Shape{1}));
  ctx.set_output(1, PartialShape(Shape{2}));
  if (ctx.num_outputs() > 2) ctx.set_output(2, PartialShape(Shape{}));
  return absl::OkStatus();
}

// ---- Stateless, seed input -------------------------------------------------

#define PX_STATELESS_SEED_OP(NAME, DTYPES)                                         \
  PX_REGISTER_OP(OpDefBuilder(NAME)                                                \
                     .Input("shape: T")                                            \
                     .Input("seed: Tseed")                                         \
                     .Output("output: dtype")                                      \
                     .Attr(absl::StrCat("dtype: ", DTYPES))                        \
                     .Attr("T: {int32, int64} = int32")                            \
                     .Attr("Tseed: {int32, int64} = int64")                        \
                     .SetShapeFn([](InferenceContext& ctx) { return SeedShape(ctx, 0); }))

PX_STATELESS_SEED_OP("StatelessRandomUniform", absl::StrCat(kFloatDtypes, " = float"));
PX_STATELESS_SEED_OP("StatelessRandomNormal", absl::StrCat(kFloatDtypes, " = float"));
PX_STATELESS_SEED_OP("StatelessTruncatedNormal", absl::StrCat(kFloatDtypes, " = float"));

PX_REGISTER_OP(OpDefBuilder("StatelessRandomUniformInt")
                   .Input("shape: T")
                   .Input("seed: Tseed")
                   .Input("minval: dtype")
                   .Input("maxval: dtype")
                   .Output("output: dtype")
                   .Attr("dtype: {int32, int64}")
                   .Attr("T: {int32, int64}")
                   .Attr("Tseed: {int32, int64} = int64")
                   .SetShapeFn([](InferenceContext& ctx) { return SeedShape(ctx, 2); }));

PX_REGISTER_OP(OpDefBuilder("StatelessRandomUniformFullInt")
                   .Input("shape: T")
                   .Input("seed: Tseed")
                   .Output("output: dtype")
                   .Attr("dtype: {int32, int64, uint32, uint64} = uint64")
                   .Attr("T: {int32, int64} = int32")
                   .Attr("Tseed: {int32, int64, uint32, uint64} = int64")
                   .SetShapeFn([](InferenceContext& ctx) { return SeedShape(ctx, 0); }));

PX_REGISTER_OP(OpDefBuilder("StatelessRandomGammaV2")
                   .Input("shape: T")
                   .Input("seed: Tseed")
                   .Input("alpha: dtype")
                   .Output("output: dtype")
                   .Attr("dtype: {half, float, double}")
                   .Attr("T: {int32, int64}")
                   .Attr("Tseed: {int32, int64} = int64")
                   .SetShapeFn([](InferenceContext& ctx) { return SeedShape(ctx, 0); }));

#undef PX_STATELESS_SEED_OP

// ---- Stateless, key/counter/algorithm inputs -------------------------------

PX_REGISTER_OP(OpDefBuilder("StatelessRandomGetKeyCounter")
                   .Input("seed: Tseed")
                   .Output("key: uint64")
                   .Output("counter: uint64")
                   .Attr("Tseed: {int32, int64} = int64")
                   .SetShapeFn(KeyCounterOutputs));

PX_REGISTER_OP(OpDefBuilder("StatelessRandomGetKeyCounterAlg")
                   .Input("seed: Tseed")
                   .Output("key: uint64")
                   .Output("counter: uint64")
                   .Output("alg: int32")
                   .Attr("Tseed: {int32, int64} = int64")
                   .SetShapeFn(KeyCounterOutputs));

// Stateful in TensorFlow: the algorithm may depend on the device.
PX_REGISTER_OP(OpDefBuilder("StatelessRandomGetAlg")
                   .Output("alg: int32")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape(Shape{}));
                     return absl::OkStatus();
                   }));

#define PX_STATELESS_V2_OP(NAME, DTYPES)                                           \
  PX_REGISTER_OP(OpDefBuilder(NAME)                                                \
                     .Input("shape: Tshape")                                       \
                     .Input("key: uint64")                                         \
                     .Input("counter: uint64")                                     \
                     .Input("alg: int32")                                          \
                     .Output("output: dtype")                                      \
                     .Attr(absl::StrCat("dtype: ", DTYPES))                        \
                     .Attr("Tshape: {int32, int64} = int32")                       \
                     .SetShapeFn([](InferenceContext& ctx) { return KeyCounterShape(ctx, 0); }))

PX_STATELESS_V2_OP("StatelessRandomUniformV2", absl::StrCat(kFloatDtypes, " = float"));
PX_STATELESS_V2_OP("StatelessRandomNormalV2", absl::StrCat(kFloatDtypes, " = float"));
PX_STATELESS_V2_OP("StatelessTruncatedNormalV2", absl::StrCat(kFloatDtypes, " = float"));
PX_STATELESS_V2_OP("StatelessRandomUniformFullIntV2", "{int32, int64, uint32, uint64} = uint64");

#undef PX_STATELESS_V2_OP

PX_REGISTER_OP(OpDefBuilder("StatelessRandomUniformIntV2")
                   .Input("shape: Tshape")
                   .Input("key: uint64")
                   .Input("counter: uint64")
                   .Input("alg: int32")
                   .Input("minval: dtype")
                   .Input("maxval: dtype")
                   .Output("output: dtype")
                   .Attr("dtype: {int32, int64, uint32, uint64}")
                   .Attr("Tshape: {int32, int64} = int32")
                   .SetShapeFn([](InferenceContext& ctx) { return KeyCounterShape(ctx, 2); }));

PX_REGISTER_OP(OpDefBuilder("StatelessRandomGammaV3")
                   .Input("shape: shape_dtype")
                   .Input("key: uint64")
                   .Input("counter: uint64")
                   .Input("alg: int32")
                   .Input("alpha: dtype")
                   .Output("output: dtype")
                   .Attr("dtype: {half, float, double}")
                   .Attr("shape_dtype: {int32, int64} = int32")
                   .SetShapeFn([](InferenceContext& ctx) { return KeyCounterShape(ctx, 0); }));

// ---- Stateful, seed and seed2 attributes ------------------------------------

#define PX_STATEFUL_OP(NAME)                                                       \
  PX_REGISTER_OP(OpDefBuilder(NAME)                                                \
                     .Input("shape: T")                                            \
                     .Output("output: dtype")                                      \
                     .Attr("seed: int = 0")                                        \
                     .Attr("seed2: int = 0")                                       \
                     .Attr(absl::StrCat("dtype: ", kFloatDtypes))                  \
                     .Attr("T: {int32, int64}")                                    \
                     .SetIsStateful()                                              \
                     .SetShapeFn([](InferenceContext& ctx) { return StatefulShape(ctx, 0); }))

PX_STATEFUL_OP("RandomUniform");
PX_STATEFUL_OP("RandomStandardNormal");
PX_STATEFUL_OP("TruncatedNormal");

#undef PX_STATEFUL_OP

PX_REGISTER_OP(OpDefBuilder("RandomUniformInt")
                   .Input("shape: T")
                   .Input("minval: Tout")
                   .Input("maxval: Tout")
                   .Output("output: Tout")
                   .Attr("seed: int = 0")
                   .Attr("seed2: int = 0")
                   .Attr("Tout: {int32, int64}")
                   .Attr("T: {int32, int64}")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) { return StatefulShape(ctx, 2); }));

}  // namespace
}  // namespace plexus
