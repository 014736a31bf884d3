// The op-signature table: for every op an in-tree plugin implements, the
// op's name, its type attributes (in the order kernels list dtypes for them)
// and the arguments its kernels take in host memory. Header-only C++17 over
// the C ABI, so out-of-tree plugins use it as in-tree ones do.
//
// Why a table: these facts belong to the op, not to a plugin. Reshape's
// shape (input 1) is read on the host to size the output on every device;
// Shape's output is a host tensor wherever the input lives. Before the table
// every plugin repeated them in its own registration calls, and a slip in
// one (a missing host-memory index) broke only that plugin. Now a kernel is
// registered with the signature and one dtype list per type attribute:
//
//   #include "plexus/sdk/op_signatures.h"
//   namespace sig = plexus::sdk::sig;
//   sdk::RegisterKernel<ReshapeKernel>(info, registrar, sig::kReshape,
//                                      {sdk::AllTypes(), {PX_DT_INT32, PX_DT_INT64}});
//
// The dtype lists follow the signature's type_attrs order (for Reshape: T,
// then Tshape); a count that does not match is refused with
// INVALID_ARGUMENT naming the op and its attributes. plexus-plugin-check's
// abi.kernel_signatures check holds every registered kernel of an op in the
// table to it, and tests/sdk/op_signatures_test.cc holds the table to the
// core's op definitions.
//
// Conventions and decisions:
// - A constant is named after its op, a leading underscore dropped
//   (_FusedMatMul: sig::kFusedMatMul).
// - Host-memory indices are argument positions of the node's flat input or
//   output list. An argument whose position depends on a count attribute
//   (ConcatV2's axis is input N) cannot be listed: kernels read it where it
//   lies, so it is absent here.
// - A plugin that needs more in host memory than the op's contract (the xpu
//   plugin reads PadV2's fill value on the host) registers
//   sig::kPadV2.WithHostInputs({1, 2}) and says why where it does. The
//   conformance check accepts such extras and names them; it fails a kernel
//   that leaves out what the table lists, or declares other type attributes.
// - Ops outside the table stay registered through the string overload of
//   sdk::RegisterKernel (kernel.h), which remains public API.
#ifndef PLEXUS_SDK_OP_SIGNATURES_H_
#define PLEXUS_SDK_OP_SIGNATURES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::sdk {

// A list of at most Capacity values held in place, so that signatures are
// constexpr and cost no static initialization. Building one from more than
// Capacity values does not compile (in a constant expression) or throws.
template <typename T, size_t Capacity>
class FixedList {
 public:
  constexpr FixedList() = default;
  constexpr FixedList(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  constexpr void push_back(const T& v) {
    if (size_ == Capacity) throw "sdk::FixedList: more values than its capacity";
    items_[size_++] = v;
  }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return items_; }
  constexpr const T* end() const { return items_ + size_; }
  constexpr const T& operator[](size_t i) const { return items_[i]; }
  constexpr bool contains(const T& v) const {
    for (size_t i = 0; i < size_; ++i) {
      if (items_[i] == v) return true;
    }
    return false;
  }

 private:
  T items_[Capacity] = {};
  size_t size_ = 0;
};

// ShapeN has N outputs, all host memory as Shape's one; a kernel def lists
// indices, not arguments, so the first kShapeNHostOutputs are listed and a
// kernel writes any output past them to device memory.
inline constexpr int32_t kShapeNHostOutputs = 32;

struct OpSignature {
  using TypeAttrs = FixedList<const char*, 4>;
  using HostInputs = FixedList<int32_t, 8>;
  using HostOutputs = FixedList<int32_t, kShapeNHostOutputs>;

  constexpr OpSignature(const char* op_name, TypeAttrs types, HostInputs inputs = {},
                        HostOutputs outputs = {})
      : op(op_name), type_attrs(types), host_inputs(inputs), host_outputs(outputs) {}

  const char* op;
  TypeAttrs type_attrs;      // the attributes kernels constrain, in order
  HostInputs host_inputs;    // input positions read on the host
  HostOutputs host_outputs;  // output positions written on the host

  // The same signature with other host-memory inputs: for a plugin that
  // reads more on the host than the op requires (say why where you use it).
  constexpr OpSignature WithHostInputs(HostInputs inputs) const {
    OpSignature s = *this;
    s.host_inputs = inputs;
    return s;
  }
};

// Outputs 0 .. n-1.
constexpr OpSignature::HostOutputs HostOutputRange(int32_t n) {
  OpSignature::HostOutputs list;
  for (int32_t i = 0; i < n; ++i) list.push_back(i);
  return list;
}

namespace sig {

// Graph plumbing
inline constexpr OpSignature kConst{"Const", {"dtype"}};
inline constexpr OpSignature kPlaceholder{"Placeholder", {"dtype"}};
inline constexpr OpSignature kNoOp{"NoOp", {}};

// Elementwise
inline constexpr OpSignature kAdd{"Add", {"T"}};
inline constexpr OpSignature kAddV2{"AddV2", {"T"}};
inline constexpr OpSignature kSub{"Sub", {"T"}};
inline constexpr OpSignature kMul{"Mul", {"T"}};
inline constexpr OpSignature kDiv{"Div", {"T"}};
inline constexpr OpSignature kRealDiv{"RealDiv", {"T"}};
inline constexpr OpSignature kFloorDiv{"FloorDiv", {"T"}};
inline constexpr OpSignature kFloorMod{"FloorMod", {"T"}};
inline constexpr OpSignature kMaximum{"Maximum", {"T"}};
inline constexpr OpSignature kMinimum{"Minimum", {"T"}};
inline constexpr OpSignature kPow{"Pow", {"T"}};
inline constexpr OpSignature kLess{"Less", {"T"}};
inline constexpr OpSignature kLessEqual{"LessEqual", {"T"}};
inline constexpr OpSignature kGreater{"Greater", {"T"}};
inline constexpr OpSignature kGreaterEqual{"GreaterEqual", {"T"}};
inline constexpr OpSignature kEqual{"Equal", {"T"}};
inline constexpr OpSignature kNotEqual{"NotEqual", {"T"}};
inline constexpr OpSignature kSquaredDifference{"SquaredDifference", {"T"}};
inline constexpr OpSignature kLogicalAnd{"LogicalAnd", {}};
inline constexpr OpSignature kLogicalOr{"LogicalOr", {}};
inline constexpr OpSignature kNeg{"Neg", {"T"}};
inline constexpr OpSignature kAbs{"Abs", {"T"}};
inline constexpr OpSignature kSign{"Sign", {"T"}};
inline constexpr OpSignature kExp{"Exp", {"T"}};
inline constexpr OpSignature kLog{"Log", {"T"}};
inline constexpr OpSignature kLog1p{"Log1p", {"T"}};
inline constexpr OpSignature kSqrt{"Sqrt", {"T"}};
inline constexpr OpSignature kRsqrt{"Rsqrt", {"T"}};
inline constexpr OpSignature kSquare{"Square", {"T"}};
inline constexpr OpSignature kReciprocal{"Reciprocal", {"T"}};
inline constexpr OpSignature kInv{"Inv", {"T"}};
inline constexpr OpSignature kTanh{"Tanh", {"T"}};
inline constexpr OpSignature kSigmoid{"Sigmoid", {"T"}};
inline constexpr OpSignature kErf{"Erf", {"T"}};
inline constexpr OpSignature kErfc{"Erfc", {"T"}};
inline constexpr OpSignature kSin{"Sin", {"T"}};
inline constexpr OpSignature kCos{"Cos", {"T"}};
inline constexpr OpSignature kTan{"Tan", {"T"}};
inline constexpr OpSignature kSinh{"Sinh", {"T"}};
inline constexpr OpSignature kCosh{"Cosh", {"T"}};
inline constexpr OpSignature kAsin{"Asin", {"T"}};
inline constexpr OpSignature kAcos{"Acos", {"T"}};
inline constexpr OpSignature kAtan{"Atan", {"T"}};
inline constexpr OpSignature kAsinh{"Asinh", {"T"}};
inline constexpr OpSignature kAcosh{"Acosh", {"T"}};
inline constexpr OpSignature kAtanh{"Atanh", {"T"}};
inline constexpr OpSignature kExpm1{"Expm1", {"T"}};
inline constexpr OpSignature kAtan2{"Atan2", {"T"}};
inline constexpr OpSignature kDivNoNan{"DivNoNan", {"T"}};
inline constexpr OpSignature kMulNoNan{"MulNoNan", {"T"}};
inline constexpr OpSignature kTruncateDiv{"TruncateDiv", {"T"}};
inline constexpr OpSignature kTruncateMod{"TruncateMod", {"T"}};
inline constexpr OpSignature kRint{"Rint", {"T"}};
inline constexpr OpSignature kLgamma{"Lgamma", {"T"}};
inline constexpr OpSignature kDigamma{"Digamma", {"T"}};
inline constexpr OpSignature kIsFinite{"IsFinite", {"T"}};
inline constexpr OpSignature kIsNan{"IsNan", {"T"}};
inline constexpr OpSignature kIsInf{"IsInf", {"T"}};
inline constexpr OpSignature kFloor{"Floor", {"T"}};
inline constexpr OpSignature kCeil{"Ceil", {"T"}};
inline constexpr OpSignature kRound{"Round", {"T"}};
inline constexpr OpSignature kLogicalNot{"LogicalNot", {}};
inline constexpr OpSignature kSelect{"Select", {"T"}};
inline constexpr OpSignature kSelectV2{"SelectV2", {"T"}};
inline constexpr OpSignature kCast{"Cast", {"SrcT", "DstT"}};

// Bitwise (integers)
inline constexpr OpSignature kBitwiseAnd{"BitwiseAnd", {"T"}};
inline constexpr OpSignature kBitwiseOr{"BitwiseOr", {"T"}};
inline constexpr OpSignature kBitwiseXor{"BitwiseXor", {"T"}};
inline constexpr OpSignature kLeftShift{"LeftShift", {"T"}};
inline constexpr OpSignature kRightShift{"RightShift", {"T"}};
inline constexpr OpSignature kInvert{"Invert", {"T"}};
inline constexpr OpSignature kPopulationCount{"PopulationCount", {"T"}};

// Activations
inline constexpr OpSignature kRelu{"Relu", {"T"}};
inline constexpr OpSignature kRelu6{"Relu6", {"T"}};
inline constexpr OpSignature kElu{"Elu", {"T"}};
inline constexpr OpSignature kSelu{"Selu", {"T"}};
inline constexpr OpSignature kLeakyRelu{"LeakyRelu", {"T"}};
inline constexpr OpSignature kSoftplus{"Softplus", {"T"}};
inline constexpr OpSignature kGelu{"Gelu", {"T"}};
inline constexpr OpSignature kSoftsign{"Softsign", {"T"}};

// Softmax and reductions
inline constexpr OpSignature kSoftmax{"Softmax", {"T"}};
inline constexpr OpSignature kLogSoftmax{"LogSoftmax", {"T"}};
inline constexpr OpSignature kSum{"Sum", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kMean{"Mean", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kMax{"Max", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kMin{"Min", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kProd{"Prod", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kAll{"All", {"Tidx"}, {1}};
inline constexpr OpSignature kAny{"Any", {"Tidx"}, {1}};
inline constexpr OpSignature kArgMax{"ArgMax", {"T", "Tidx", "output_type"}, {1}};
inline constexpr OpSignature kArgMin{"ArgMin", {"T", "Tidx", "output_type"}, {1}};

// Cumulative sums and products
inline constexpr OpSignature kCumsum{"Cumsum", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kCumprod{"Cumprod", {"T", "Tidx"}, {1}};

// Matrix products
inline constexpr OpSignature kMatMul{"MatMul", {"T"}};
inline constexpr OpSignature kBatchMatMul{"BatchMatMul", {"T"}};
inline constexpr OpSignature kBatchMatMulV2{"BatchMatMulV2", {"T"}};
inline constexpr OpSignature kBatchMatMulV3{"BatchMatMulV3", {"Ta", "Tb", "Tout"}};
inline constexpr OpSignature kEinsum{"Einsum", {"T"}};
inline constexpr OpSignature kMatrixBandPart{"MatrixBandPart", {"T", "Tindex"}, {1, 2}};
inline constexpr OpSignature kMatrixSolve{"MatrixSolve", {"T"}};

// Matrix diagonals: k, num_rows, num_cols and padding_value are read on the
// host.
inline constexpr OpSignature kMatrixDiag{"MatrixDiag", {"T"}};
inline constexpr OpSignature kMatrixDiagV2{"MatrixDiagV2", {"T"}, {1, 2, 3, 4}};
inline constexpr OpSignature kMatrixDiagV3{"MatrixDiagV3", {"T"}, {1, 2, 3, 4}};
inline constexpr OpSignature kMatrixDiagPart{"MatrixDiagPart", {"T"}};
inline constexpr OpSignature kMatrixDiagPartV2{"MatrixDiagPartV2", {"T"}, {1, 2}};
inline constexpr OpSignature kMatrixDiagPartV3{"MatrixDiagPartV3", {"T"}, {1, 2}};
inline constexpr OpSignature kMatrixSetDiag{"MatrixSetDiag", {"T"}};
inline constexpr OpSignature kMatrixSetDiagV2{"MatrixSetDiagV2", {"T"}, {2}};
inline constexpr OpSignature kMatrixSetDiagV3{"MatrixSetDiagV3", {"T"}, {2}};

// Neural-network layers
inline constexpr OpSignature kBiasAdd{"BiasAdd", {"T"}};
inline constexpr OpSignature kConv2D{"Conv2D", {"T"}};
inline constexpr OpSignature kDepthwiseConv2dNative{"DepthwiseConv2dNative", {"T"}};
inline constexpr OpSignature kFusedDepthwiseConv2dNative{"_FusedDepthwiseConv2dNative", {"T"}};
inline constexpr OpSignature kMaxPool{"MaxPool", {"T"}};
inline constexpr OpSignature kAvgPool{"AvgPool", {"T"}};
inline constexpr OpSignature kFusedBatchNorm{"FusedBatchNorm", {"T"}};
inline constexpr OpSignature kFusedBatchNormV2{"FusedBatchNormV2", {"T", "U"}};
inline constexpr OpSignature kFusedBatchNormV3{"FusedBatchNormV3", {"T", "U"}};

// Array and data movement
inline constexpr OpSignature kReshape{"Reshape", {"T", "Tshape"}, {1}};
inline constexpr OpSignature kTranspose{"Transpose", {"T", "Tperm"}, {1}};
inline constexpr OpSignature kConcatV2{"ConcatV2", {"T", "Tidx"}};
inline constexpr OpSignature kConcat{"Concat", {"T"}, {0}};
inline constexpr OpSignature kSplit{"Split", {"T"}, {0}};
inline constexpr OpSignature kSplitV{"SplitV", {"T", "Tlen"}, {1, 2}};
inline constexpr OpSignature kSlice{"Slice", {"T", "Index"}, {1, 2}};
inline constexpr OpSignature kStridedSlice{"StridedSlice", {"T", "Index"}, {1, 2, 3}};
inline constexpr OpSignature kPack{"Pack", {"T"}};
inline constexpr OpSignature kUnpack{"Unpack", {"T"}};
inline constexpr OpSignature kGather{"Gather", {"Tparams", "Tindices"}};
inline constexpr OpSignature kGatherV2{"GatherV2", {"Tparams", "Tindices", "Taxis"}, {2}};
inline constexpr OpSignature kGatherNd{"GatherNd", {"Tparams", "Tindices"}};
inline constexpr OpSignature kPad{"Pad", {"T", "Tpaddings"}, {1}};
inline constexpr OpSignature kPadV2{"PadV2", {"T", "Tpaddings"}, {1}};
inline constexpr OpSignature kMirrorPad{"MirrorPad", {"T", "Tpaddings"}, {1}};
inline constexpr OpSignature kTile{"Tile", {"T", "Tmultiples"}, {1}};
inline constexpr OpSignature kReverseV2{"ReverseV2", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kExpandDims{"ExpandDims", {"T", "Tdim"}, {1}};
inline constexpr OpSignature kSqueeze{"Squeeze", {"T"}};
inline constexpr OpSignature kShape{"Shape", {"T", "out_type"}, {}, {0}};
inline constexpr OpSignature kShapeN{
    "ShapeN", {"T", "out_type"}, {}, HostOutputRange(kShapeNHostOutputs)};
inline constexpr OpSignature kSize{"Size", {"T", "out_type"}, {}, {0}};
inline constexpr OpSignature kRank{"Rank", {"T"}, {}, {0}};
inline constexpr OpSignature kFill{"Fill", {"T", "index_type"}, {0}};
inline constexpr OpSignature kZerosLike{"ZerosLike", {"T"}};
inline constexpr OpSignature kOnesLike{"OnesLike", {"T"}};
inline constexpr OpSignature kRange{"Range", {"Tidx"}, {0, 1, 2}};
inline constexpr OpSignature kOneHot{"OneHot", {"T", "TI"}, {1}};
inline constexpr OpSignature kBroadcastTo{"BroadcastTo", {"T", "Tidx"}, {1}};
inline constexpr OpSignature kSpaceToBatchND{
    "SpaceToBatchND", {"T", "Tblock_shape", "Tpaddings"}, {1, 2}};
inline constexpr OpSignature kBatchToSpaceND{
    "BatchToSpaceND", {"T", "Tblock_shape", "Tcrops"}, {1, 2}};

// Audio
inline constexpr OpSignature kDecodeWav{"DecodeWav", {}, {0}};
inline constexpr OpSignature kAudioSpectrogram{"AudioSpectrogram", {}};
inline constexpr OpSignature kMfcc{"Mfcc", {}, {1}};

// Fused ops (written by the core's optimizer)
inline constexpr OpSignature kFusedMatMul{"_FusedMatMul", {"T"}};
inline constexpr OpSignature kFusedConv2D{"_FusedConv2D", {"T"}};
inline constexpr OpSignature kPlexusFusedElementwise{"_PlexusFusedElementwise", {"T"}};
inline constexpr OpSignature kPlexusLayerNorm{"_PlexusLayerNorm", {"T"}};
inline constexpr OpSignature kPlexusFusedConv2DAdd{"_PlexusFusedConv2DAdd", {"T"}};

// Activation gradients
inline constexpr OpSignature kReluGrad{"ReluGrad", {"T"}};
inline constexpr OpSignature kRelu6Grad{"Relu6Grad", {"T"}};
inline constexpr OpSignature kEluGrad{"EluGrad", {"T"}};
inline constexpr OpSignature kSeluGrad{"SeluGrad", {"T"}};
inline constexpr OpSignature kLeakyReluGrad{"LeakyReluGrad", {"T"}};
inline constexpr OpSignature kSoftplusGrad{"SoftplusGrad", {"T"}};
inline constexpr OpSignature kSoftsignGrad{"SoftsignGrad", {"T"}};
inline constexpr OpSignature kSigmoidGrad{"SigmoidGrad", {"T"}};
inline constexpr OpSignature kTanhGrad{"TanhGrad", {"T"}};
inline constexpr OpSignature kRsqrtGrad{"RsqrtGrad", {"T"}};
inline constexpr OpSignature kSqrtGrad{"SqrtGrad", {"T"}};
inline constexpr OpSignature kReciprocalGrad{"ReciprocalGrad", {"T"}};
inline constexpr OpSignature kInvGrad{"InvGrad", {"T"}};

// Layer gradients
inline constexpr OpSignature kUnsortedSegmentSum{
    "UnsortedSegmentSum", {"T", "Tindices", "Tnumsegments"}, {2}};
inline constexpr OpSignature kConv2DBackpropInput{"Conv2DBackpropInput", {"T"}, {0}};
inline constexpr OpSignature kConv2DBackpropFilter{"Conv2DBackpropFilter", {"T"}, {1}};
inline constexpr OpSignature kDepthwiseConv2dNativeBackpropInput{
    "DepthwiseConv2dNativeBackpropInput", {"T"}, {0}};
inline constexpr OpSignature kDepthwiseConv2dNativeBackpropFilter{
    "DepthwiseConv2dNativeBackpropFilter", {"T"}, {1}};
inline constexpr OpSignature kBiasAddGrad{"BiasAddGrad", {"T"}};
inline constexpr OpSignature kMaxPoolGrad{"MaxPoolGrad", {"T"}};
inline constexpr OpSignature kMaxPoolGradV2{"MaxPoolGradV2", {"T"}, {3, 4}};
inline constexpr OpSignature kAvgPoolGrad{"AvgPoolGrad", {"T"}, {0}};
inline constexpr OpSignature kSoftmaxCrossEntropyWithLogits{"SoftmaxCrossEntropyWithLogits", {"T"}};
inline constexpr OpSignature kSparseSoftmaxCrossEntropyWithLogits{
    "SparseSoftmaxCrossEntropyWithLogits", {"T", "Tlabels"}};
inline constexpr OpSignature kL2Loss{"L2Loss", {"T"}};
inline constexpr OpSignature kFusedBatchNormGrad{"FusedBatchNormGrad", {"T"}};
inline constexpr OpSignature kFusedBatchNormGradV2{"FusedBatchNormGradV2", {"T", "U"}};
inline constexpr OpSignature kFusedBatchNormGradV3{"FusedBatchNormGradV3", {"T", "U"}};

// Optimizer updates (the core's training step). The hyperparameters are
// scalars in device memory, as in TensorFlow's GPU kernels: a training step
// computes beta1_power and beta2_power on the device every step, and a
// host-memory input would copy them back, waiting for the device, every
// step (a kernel whose device memory is the host's reads them as it is).
inline constexpr OpSignature kPlexusApplyGradientDescent{"_PlexusApplyGradientDescent", {"T"}};
inline constexpr OpSignature kPlexusApplyMomentum{"_PlexusApplyMomentum", {"T"}};
inline constexpr OpSignature kPlexusApplyAdam{"_PlexusApplyAdam", {"T"}};
inline constexpr OpSignature kPlexusApplyAdamW{"_PlexusApplyAdamW", {"T"}};
inline constexpr OpSignature kPlexusApplyRMSProp{"_PlexusApplyRMSProp", {"T"}};

// Array gradients
inline constexpr OpSignature kStridedSliceGrad{"StridedSliceGrad", {"T", "Index"}, {0, 1, 2, 3}};
inline constexpr OpSignature kMirrorPadGrad{"MirrorPadGrad", {"T", "Tpaddings"}, {1}};
inline constexpr OpSignature kScatterNd{"ScatterNd", {"T", "Tindices"}, {0, 2}};

// Selection: k and the scatter indices are read on the host; segment ids
// stay in device memory (a sorted op's output size is the last id plus one,
// which the core reads when the ids are host-readable, else the kernel
// allocates its output).
inline constexpr OpSignature kTopKV2{"TopKV2", {"T", "Tk", "index_type"}, {1}};
inline constexpr OpSignature kWhere{"Where", {"T"}};
inline constexpr OpSignature kSegmentSum{"SegmentSum", {"T", "Tindices"}};
inline constexpr OpSignature kSegmentMean{"SegmentMean", {"T", "Tindices"}};
inline constexpr OpSignature kSegmentMax{"SegmentMax", {"T", "Tindices"}};
inline constexpr OpSignature kSegmentMin{"SegmentMin", {"T", "Tindices"}};
inline constexpr OpSignature kSegmentProd{"SegmentProd", {"T", "Tindices"}};
inline constexpr OpSignature kUnsortedSegmentMax{
    "UnsortedSegmentMax", {"T", "Tindices", "Tnumsegments"}, {2}};
inline constexpr OpSignature kUnsortedSegmentMin{
    "UnsortedSegmentMin", {"T", "Tindices", "Tnumsegments"}, {2}};
inline constexpr OpSignature kUnsortedSegmentProd{
    "UnsortedSegmentProd", {"T", "Tindices", "Tnumsegments"}, {2}};
inline constexpr OpSignature kTensorScatterUpdate{"TensorScatterUpdate", {"T", "Tindices"}, {1}};
inline constexpr OpSignature kTensorScatterAdd{"TensorScatterAdd", {"T", "Tindices"}, {1}};
inline constexpr OpSignature kTensorScatterSub{"TensorScatterSub", {"T", "Tindices"}, {1}};
inline constexpr OpSignature kTensorScatterMax{"TensorScatterMax", {"T", "Tindices"}, {1}};
inline constexpr OpSignature kTensorScatterMin{"TensorScatterMin", {"T", "Tindices"}, {1}};
// Image resizing (the size input is read on the host)
inline constexpr OpSignature kResizeBilinear{"ResizeBilinear", {"T"}, {1}};
inline constexpr OpSignature kResizeNearestNeighbor{"ResizeNearestNeighbor", {"T"}, {1}};
inline constexpr OpSignature kResizeBicubic{"ResizeBicubic", {"T"}, {1}};
inline constexpr OpSignature kResizeBilinearGrad{"ResizeBilinearGrad", {"T"}};
inline constexpr OpSignature kResizeNearestNeighborGrad{"ResizeNearestNeighborGrad", {"T"}, {1}};

inline constexpr OpSignature kCropAndResize{"CropAndResize", {"T"}, {3}};
// Filtered resizes and projective transforms: sizes, scales, translations
// and fill values are read on the host; the transforms stay on the device.
inline constexpr OpSignature kResizeArea{"ResizeArea", {"T"}, {1}};
inline constexpr OpSignature kScaleAndTranslate{"ScaleAndTranslate", {"T"}, {1, 2, 3}};
inline constexpr OpSignature kScaleAndTranslateGrad{"ScaleAndTranslateGrad", {"T"}, {2, 3}};
inline constexpr OpSignature kImageProjectiveTransformV2{"ImageProjectiveTransformV2", {"dtype"},
                                                         {2}};
inline constexpr OpSignature kImageProjectiveTransformV3{"ImageProjectiveTransformV3", {"dtype"},
                                                         {2, 3}};
// Colour: the scalar factors are read on the host.
inline constexpr OpSignature kRGBToHSV{"RGBToHSV", {"T"}};
inline constexpr OpSignature kHSVToRGB{"HSVToRGB", {"T"}};
inline constexpr OpSignature kAdjustContrastv2{"AdjustContrastv2", {"T"}, {1}};
inline constexpr OpSignature kAdjustSaturation{"AdjustSaturation", {"T"}, {1}};
inline constexpr OpSignature kAdjustHue{"AdjustHue", {"T"}, {1}};
// Depth and space, local response normalization
inline constexpr OpSignature kDepthToSpace{"DepthToSpace", {"T"}};
inline constexpr OpSignature kSpaceToDepth{"SpaceToDepth", {"T"}};
inline constexpr OpSignature kLRN{"LRN", {"T"}};
inline constexpr OpSignature kLRNGrad{"LRNGrad", {"T"}};

// Non-max suppression: the scalar arguments are read on the host; the
// number of selected boxes (the outputs' size) is known only at run time.
inline constexpr OpSignature kNonMaxSuppressionV3{"NonMaxSuppressionV3", {"T", "T_threshold"},
                                                  {2, 3, 4}};
inline constexpr OpSignature kNonMaxSuppressionV4{"NonMaxSuppressionV4", {"T", "T_threshold"},
                                                  {2, 3, 4}};
inline constexpr OpSignature kNonMaxSuppressionV5{"NonMaxSuppressionV5", {"T"}, {2, 3, 4, 5}};

// 3-D convolution and pooling (NDHWC)
inline constexpr OpSignature kConv3D{"Conv3D", {"T"}};
inline constexpr OpSignature kMaxPool3D{"MaxPool3D", {"T"}};
inline constexpr OpSignature kAvgPool3D{"AvgPool3D", {"T"}};
inline constexpr OpSignature kConv3DBackpropInputV2{
    "Conv3DBackpropInputV2", {"T", "Tshape"}, {0}};
inline constexpr OpSignature kConv3DBackpropFilterV2{"Conv3DBackpropFilterV2", {"T"}, {1}};

// Every signature above, for tools and tests that walk the table.
inline constexpr const OpSignature* kAllSignatures[] = {
    &kConst, &kPlaceholder, &kNoOp, &kAdd, &kAddV2, &kSub, &kMul, &kDiv, &kRealDiv, &kFloorDiv,
    &kFloorMod, &kMaximum, &kMinimum, &kPow, &kLess, &kLessEqual, &kGreater, &kGreaterEqual,
    &kEqual, &kNotEqual, &kSquaredDifference, &kLogicalAnd, &kLogicalOr, &kNeg, &kAbs, &kSign,
    &kExp, &kLog, &kLog1p, &kSqrt, &kRsqrt, &kSquare, &kReciprocal, &kInv, &kTanh, &kSigmoid, &kErf,
    &kErfc, &kSin, &kCos, &kTan, &kSinh, &kCosh, &kAsin, &kAcos, &kAtan, &kAsinh, &kAcosh, &kAtanh,
    &kExpm1, &kAtan2, &kDivNoNan, &kIsFinite, &kIsNan, &kIsInf, &kFloor, &kCeil, &kRound, &kLogicalNot,
    &kSelect, &kSelectV2, &kCast, &kRelu, &kRelu6, &kElu, &kSelu, &kLeakyRelu, &kSoftplus, &kGelu,
    &kSoftmax, &kLogSoftmax, &kSum, &kMean, &kMax, &kMin, &kProd, &kAll, &kAny, &kArgMax, &kArgMin,
    &kCumsum, &kCumprod, &kMatMul, &kBatchMatMul, &kBatchMatMulV2, &kBatchMatMulV3, &kEinsum,
    &kMatrixBandPart, &kBiasAdd, &kConv2D, &kDepthwiseConv2dNative, &kFusedDepthwiseConv2dNative,
    &kMaxPool, &kAvgPool, &kFusedBatchNorm, &kFusedBatchNormV2, &kFusedBatchNormV3, &kReshape,
    &kTranspose, &kConcatV2, &kConcat, &kSplit, &kSplitV, &kSlice, &kStridedSlice, &kPack, &kUnpack,
    &kGather, &kGatherV2, &kGatherNd, &kPad, &kPadV2, &kMirrorPad, &kTile, &kReverseV2,
    &kExpandDims, &kSqueeze, &kShape, &kShapeN, &kSize, &kRank, &kFill, &kZerosLike, &kOnesLike,
    &kRange, &kOneHot, &kBroadcastTo, &kSpaceToBatchND, &kBatchToSpaceND, &kDecodeWav,
    &kAudioSpectrogram, &kMfcc, &kFusedMatMul, &kFusedConv2D, &kPlexusFusedElementwise, &kPlexusLayerNorm,
    &kPlexusFusedConv2DAdd, &kReluGrad,
    &kRelu6Grad, &kEluGrad, &kSeluGrad, &kLeakyReluGrad, &kSoftplusGrad, &kSigmoidGrad, &kTanhGrad,
    &kRsqrtGrad, &kSqrtGrad, &kReciprocalGrad, &kInvGrad, &kUnsortedSegmentSum,
    &kConv2DBackpropInput, &kConv2DBackpropFilter, &kDepthwiseConv2dNativeBackpropInput,
    &kDepthwiseConv2dNativeBackpropFilter, &kBiasAddGrad, &kMaxPoolGrad, &kMaxPoolGradV2,
    &kAvgPoolGrad, &kSoftmaxCrossEntropyWithLogits, &kSparseSoftmaxCrossEntropyWithLogits, &kL2Loss,
    &kFusedBatchNormGrad, &kFusedBatchNormGradV2, &kFusedBatchNormGradV3,
    &kPlexusApplyGradientDescent, &kPlexusApplyMomentum, &kPlexusApplyAdam, &kPlexusApplyAdamW,
    &kPlexusApplyRMSProp, &kStridedSliceGrad, &kMirrorPadGrad, &kScatterNd, &kTopKV2, &kWhere,
    &kSegmentSum, &kSegmentMean, &kSegmentMax, &kSegmentMin, &kSegmentProd, &kUnsortedSegmentMax,
    &kUnsortedSegmentMin, &kUnsortedSegmentProd, &kTensorScatterUpdate, &kTensorScatterAdd,
    &kTensorScatterSub, &kTensorScatterMax, &kTensorScatterMin,
    &kResizeBilinear,
    &kResizeNearestNeighbor, &kResizeBicubic, &kResizeBilinearGrad, &kResizeNearestNeighborGrad,
    &kCropAndResize, &kNonMaxSuppressionV3, &kNonMaxSuppressionV4, &kNonMaxSuppressionV5,
    &kConv3D, &kMaxPool3D, &kAvgPool3D,
    &kResizeArea, &kScaleAndTranslate, &kScaleAndTranslateGrad, &kImageProjectiveTransformV2,
    &kImageProjectiveTransformV3, &kRGBToHSV, &kHSVToRGB, &kAdjustContrastv2, &kAdjustSaturation,
    &kAdjustHue, &kDepthToSpace, &kSpaceToDepth, &kLRN, &kLRNGrad,
    &kMulNoNan, &kTruncateDiv, &kTruncateMod, &kRint, &kLgamma, &kDigamma, &kBitwiseAnd,
    &kBitwiseOr, &kBitwiseXor, &kLeftShift, &kRightShift, &kInvert, &kPopulationCount,
    &kSoftsign, &kSoftsignGrad, &kMatrixSolve, &kMatrixDiag, &kMatrixDiagV2, &kMatrixDiagV3,
    &kMatrixDiagPart, &kMatrixDiagPartV2, &kMatrixDiagPartV3, &kMatrixSetDiag, &kMatrixSetDiagV2,
    &kMatrixSetDiagV3, &kConv3DBackpropInputV2, &kConv3DBackpropFilterV2,
};

}  // namespace sig

// The table as a range: for (const OpSignature* s : AllOpSignatures()).
struct OpSignatureRange {
  const OpSignature* const* begin() const { return sig::kAllSignatures; }
  const OpSignature* const* end() const {
    return sig::kAllSignatures + sizeof(sig::kAllSignatures) / sizeof(sig::kAllSignatures[0]);
  }
  size_t size() const { return static_cast<size_t>(end() - begin()); }
};
inline OpSignatureRange AllOpSignatures() { return {}; }

// The signature of `op`, or null when the table does not hold it.
inline const OpSignature* FindOpSignature(const char* op) {
  for (const OpSignature* s : AllOpSignatures()) {
    if (std::strcmp(s->op, op) == 0) return s;
  }
  return nullptr;
}

// Registers K for the op of `sig` with one dtype list per type attribute, in
// the order of sig.type_attrs, and the signature's host-memory arguments.
// A list count other than the signature's attribute count is
// INVALID_ARGUMENT, naming the op and its attributes. `info` must outlive the
// registration (one static per plugin).
template <typename K>
PX_Status* RegisterKernel(RegistrationInfo* info, PX_KernelRegistrar* registrar,
                          const OpSignature& sig,
                          std::initializer_list<std::vector<PX_DataType>> types = {},
                          int32_t priority = 0) {
  if (types.size() != sig.type_attrs.size()) {
    std::string names;
    for (const char* a : sig.type_attrs) names += names.empty() ? a : std::string(", ") + a;
    return px_sdk_error(info->host, PX_CODE_INVALID_ARGUMENT,
                        "%s plugin: RegisterKernel for %s got %zu dtype lists, but the op "
                        "signature has %zu type attributes (%s), one list each in that order",
                        info->plugin_name.c_str(), sig.op, types.size(), sig.type_attrs.size(),
                        names.c_str());
  }
  std::vector<PX_TypeConstraint> constraints;
  const std::vector<PX_DataType>* list = types.begin();
  for (const char* attr : sig.type_attrs) {
    constraints.push_back(TypeConstraintFor(attr, *list++));
  }
  return internal::RegisterKernelDef<K>(info, registrar, sig.op, constraints, sig.host_inputs.begin(),
                                        sig.host_inputs.size(), sig.host_outputs.begin(),
                                        sig.host_outputs.size(), priority);
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_OP_SIGNATURES_H_
