// The fused ops the graph optimizer creates, _FusedMatMul, _FusedConv2D,
// _FusedDepthwiseConv2dNative and _PlexusFusedConv2DAdd:
// their fused_ops attribute read and validated the way TensorFlow does, and
// the activations of the epilogue. Shared by the cpu and reference plugins so
// both accept and refuse the same nodes with the same messages; a vendor's
// plugin can use it too.
//
// Supported fused_ops (anything else is UNIMPLEMENTED):
//   ["BiasAdd"] and ["BiasAdd", X], args = [bias];
//   _FusedConv2D and _FusedDepthwiseConv2dNative only: ["FusedBatchNorm"]
//   and ["FusedBatchNorm", X],
//   args = [scale, offset, mean, variance] (inference:
//   y = (conv - mean) * scale / sqrt(variance + epsilon) + offset);
// with X one of Relu, Relu6, Elu, LeakyRelu (leakyrelu_alpha), Tanh, Sigmoid.
#ifndef PLEXUS_SDK_FUSED_H_
#define PLEXUS_SDK_FUSED_H_

#include <cmath>
#include <string>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

enum class FusedActivation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

struct FusedSpec {
  bool batch_norm = false;  // FusedBatchNorm, else BiasAdd
  FusedActivation activation = FusedActivation::kNone;
  float epsilon = 1e-4f;
  float leakyrelu_alpha = 0.2f;
  int64_t num_args = 0;  // 1 (bias) or 4 (scale, offset, mean, variance)
};

// "[BiasAdd,Relu]".
inline std::string FusedOpsString(const std::vector<std::string>& ops) {
  std::string s = "[";
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? "," : "") + ops[i];
  return s + "]";
}

// Reads fused_ops, num_args, epsilon and leakyrelu_alpha of `op`
// ("_FusedMatMul", "_FusedConv2D" or "_FusedDepthwiseConv2dNative";
// FusedBatchNorm only for the convolutions).
// An unsupported combination is UNIMPLEMENTED, a num_args that does not fit
// the combination INVALID_ARGUMENT.
inline FusedSpec ReadFusedSpec(const Attrs& attrs, const char* op, bool allow_batch_norm) {
  const std::vector<std::string> ops = attrs.StringList("fused_ops");
  FusedSpec spec;
  bool ok = !ops.empty() && ops.size() <= 2;
  if (ok) {
    if (ops[0] == "BiasAdd") {
      spec.batch_norm = false;
    } else if (ops[0] == "FusedBatchNorm" && allow_batch_norm) {
      spec.batch_norm = true;
    } else {
      ok = false;
    }
  }
  if (ok && ops.size() == 2) {
    static const struct {
      const char* name;
      FusedActivation act;
    } kActivations[] = {
        {"Relu", FusedActivation::kRelu},   {"Relu6", FusedActivation::kRelu6},
        {"Elu", FusedActivation::kElu},     {"LeakyRelu", FusedActivation::kLeakyRelu},
        {"Tanh", FusedActivation::kTanh},   {"Sigmoid", FusedActivation::kSigmoid},
    };
    ok = false;
    for (const auto& a : kActivations) {
      if (ops[1] == a.name) {
        spec.activation = a.act;
        ok = true;
      }
    }
  }
  if (!ok) {
    throw KernelError(
        PX_CODE_UNIMPLEMENTED,
        Format("%s: fusion is not implemented: %s (supported: [BiasAdd]%s, each optionally "
               "followed by one of Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid)",
               op, FusedOpsString(ops).c_str(), allow_batch_norm ? ", [FusedBatchNorm]" : ""));
  }
  spec.num_args = attrs.Int("num_args");
  const int64_t want = spec.batch_norm ? 4 : 1;
  PX_SDK_CHECK(spec.num_args == want,
               "%s with fused_ops %s needs num_args = %lld (%s), got %lld", op,
               FusedOpsString(ops).c_str(), static_cast<long long>(want),
               spec.batch_norm ? "scale, offset, mean and variance" : "the bias",
               static_cast<long long>(spec.num_args));
  spec.epsilon = attrs.Float("epsilon", 1e-4f);
  spec.leakyrelu_alpha = attrs.Float("leakyrelu_alpha", 0.2f);
  return spec;
}

// _PlexusFusedConv2DAdd (a _FusedConv2D whose last input, the addend, is
// added before the activation; NHWC): the addend's input index, after
// checking that it is there and has the output's shape.
inline size_t FusedConvAddendInput(const Call& call, const FusedSpec& spec, const Shape& out_shape) {
  const size_t addend = static_cast<size_t>(2 + spec.num_args);
  PX_SDK_CHECK(call.num_inputs() == addend + 1, "_PlexusFusedConv2DAdd needs %zu inputs, got %zu", addend + 1,
               call.num_inputs());
  PX_SDK_CHECK(call.input_shape(addend) == out_shape, "_PlexusFusedConv2DAdd addend %s must have the output's shape %s",
               ShapeString(call.input_shape(addend)).c_str(), ShapeString(out_shape).c_str());
  return addend;
}

// The activation of one value in float or double; NaN passes through (the
// comparisons are false for NaN), as in the plain activation kernels.
template <typename C>
C ApplyFusedActivation(FusedActivation act, C x, C alpha) {
  switch (act) {
    case FusedActivation::kNone: return x;
    case FusedActivation::kRelu: return x < C(0) ? C(0) : x;
    case FusedActivation::kRelu6: return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
    case FusedActivation::kElu: return x < C(0) ? std::expm1(x) : x;
    case FusedActivation::kLeakyRelu: return x < C(0) ? alpha * x : x;
    case FusedActivation::kTanh: return std::tanh(x);
    case FusedActivation::kSigmoid: return C(1) / (C(1) + std::exp(-x));
  }
  return x;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_FUSED_H_
