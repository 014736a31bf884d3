// CUDA C++ source for one _PlexusFusedElementwise program (see
// plexus/sdk/fused_elementwise.h), compiled at run time with NVRTC
// (fused_compiler.h). Plain C++: nothing here needs CUDA, so the generator is
// unit-tested on machines without a GPU or a CUDA compiler.
//
// The generated kernel is
//
//   extern "C" __global__ void px_fused(const T* in0, ..., const T* in{N-1},
//                                       T* out, long long n,
//                                       long long s0, ..., long long s{N-1})
//
// where T is float, double, or (half, bfloat16) unsigned short, and sK is
// input K's stride: 1 when it has n elements, 0 when it has one (repeated).
// A grid-stride loop runs the program on each element, one line per
// instruction, in float (float, half, bfloat16) or double. The expressions
// are the cpu and reference kernels' (NaN passes through Relu, Relu6,
// Maximum and Minimum; Rsqrt is 1 / sqrt), each result is rounded to T (for
// half and bfloat16 that is a rounding per instruction, as separate nodes
// would store it) and constants are T's exact value of the immediate.
// The source includes no header: half and bfloat16 are converted with
// inline PTX and bit operations.
#ifndef PLEXUS_PLUGINS_CUDA_FUSED_CODEGEN_H_
#define PLEXUS_PLUGINS_CUDA_FUSED_CODEGEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/fused_elementwise.h"

namespace plexus::cuda {

// The kernel's name in the generated source.
inline constexpr const char* kFusedKernelName = "px_fused";

// The source of the kernel for `program` (already parsed and checked against
// `num_inputs` by sdk::ParseFusedProgram) and element type `dtype` (float,
// double, half or bfloat16). Throws sdk::Error for another dtype, an empty
// program or an operand out of range.
std::string GenerateFusedSource(const std::vector<sdk::FusedInstruction>& program, int64_t num_inputs,
                                PX_DataType dtype);

// The C++ literal (an expression) of `value` rounded to `dtype`, in the
// compute type (float for float/half/bfloat16, double for double): a hex
// float when finite ("0x1.8p+1f", "-0x0p+0"), a bit cast otherwise. Exposed
// for tests.
std::string FusedConstantLiteral(double value, PX_DataType dtype);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_FUSED_CODEGEN_H_
