// Which data inputs of a node the host promises are constants.
//
// The core's optimizer (the `const_inputs` pass) lists, in the internal
// attribute `_plexus_const_inputs` (list(int)), the data inputs of
// convolutions and products (Conv2D, DepthwiseConv2dNative, Conv3D, MatMul
// and their fused forms) that a Const node produces and no feed replaces.
// Such an input has the same contents, at the same address, on every run of
// the executor that created the kernel instance, so the kernel may convert
// it once into its own layout and keep the result (the cpu plugin's oneDNN
// filters, the cuda plugin's cuDNN filters). The host never sets it on an
// eager op. A kernel that ignores it loses nothing.
#ifndef PLEXUS_SDK_CONST_INPUTS_H_
#define PLEXUS_SDK_CONST_INPUTS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// The name of the attribute, for hosts and tests.
constexpr const char* kConstInputsAttr = "_plexus_const_inputs";

// Whether the host promises that data input `input` of the kernel's node is
// a constant of the graph.
inline bool ConstantInput(const Attrs& attrs, int64_t input) {
  const std::vector<int64_t> inputs = attrs.IntList(kConstInputsAttr, {});
  return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_CONST_INPUTS_H_
