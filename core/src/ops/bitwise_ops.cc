// Bitwise ops on integers: BitwiseAnd, BitwiseOr, BitwiseXor, LeftShift,
// RightShift (NumPy broadcasting), Invert and PopulationCount. Names,
// arguments and type sets follow TensorFlow's bitwise_ops.cc. Shift counts
// outside [0, bits - 1] are clamped into it by the kernels, as TensorFlow's
// are (a negative count shifts by 0, a count of 100 by bits - 1).
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kIntegerTypes[] =
    "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}";

#define PX_BITWISE_BINARY_OP(name)              \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Input("y: T")             \
                     .Output("z: T")            \
                     .Attr(kIntegerTypes)       \
                     .SetShapeFn(BroadcastShape))

PX_BITWISE_BINARY_OP("BitwiseAnd");
PX_BITWISE_BINARY_OP("BitwiseOr");
PX_BITWISE_BINARY_OP("BitwiseXor");
PX_BITWISE_BINARY_OP("LeftShift");
PX_BITWISE_BINARY_OP("RightShift");

// ~x.
PX_REGISTER_OP(OpDefBuilder("Invert")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr(kIntegerTypes)
                   .SetShapeFn(UnchangedShape));

// The number of bits set in each element, as uint8.
PX_REGISTER_OP(OpDefBuilder("PopulationCount")
                   .Input("x: T")
                   .Output("y: uint8")
                   .Attr(kIntegerTypes)
                   .SetShapeFn(UnchangedShape));

}  // namespace
}  // namespace plexus
