// Helpers shared by the fusion passes (fuse.cc, conv_folds.cc): reading
// a node's inputs, whether a value has one reader, constants, and the
// output channels of a product or convolution. Internal to the optimizer.
#ifndef PLEXUS_SRC_PASSES_OPTIMIZER_FUSE_UTIL_H_
#define PLEXUS_SRC_PASSES_OPTIMIZER_FUSE_UTIL_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/tensor.h"

namespace plexus::opt {

// The shape the importer inferred for `input` ("node" or "node:k") of
// `graph` (imported from the pass's GraphDef), or null when there is no
// such output or its shape may not hold at run time (a node in `tainted`,
// FeedTainted's set).
const PartialShape* InferredShape(const Graph& graph, const std::set<std::string>& tainted, const std::string& input);
// The activation (Relu, Relu6, Elu, LeakyRelu, Tanh or Sigmoid of dtype
// `t`) that is the only reader of `n`'s output 0, when that output is not
// fed, so that it may join a fusion ending at `n`; else null.
tf::NodeDef* FusableActivationAfter(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& n,
                                    DataType t);
// What a fused node made of `nodes` (nulls skipped) takes from them: their
// control inputs, once each; and `act`'s name in fused_ops (with
// LeakyRelu's alpha) when there is an activation.
void AddControlInputsOf(std::initializer_list<const tf::NodeDef*> nodes, tf::NodeDef& fused);
void AddFusedActivation(const tf::NodeDef* act, tf::NodeDef& fused);
// True when the session's device has a kernel for `op` accepting `dtype`.
bool DeviceHasKernel(const PassContext& ctx, const std::string& op, DataType dtype);
std::vector<std::string> DataInputs(const tf::NodeDef& n);
std::vector<std::string> ControlInputs(const tf::NodeDef& n);
// `n` feeds exactly one data input of one node and nothing else, and the
// signature does not name it.
bool SoleConsumer(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& n, tf::NodeDef** consumer);
// The value of `input` when it is output 0 of a Const that nothing feeds.
std::optional<Tensor> ConstOf(const NodeIndex& index, const PassContext& ctx, const std::string& input);
// Element i of a float or double tensor, as double, and its setter.
double At(const Tensor& t, int64_t i);
void Set(Tensor& t, int64_t i, double v);
// Output channels of a MatMul or NHWC convolution, from its constant
// weights (-1 when they are not constant or the layout is not NHWC).
int64_t OutputChannels(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& producer);

// The folds of conv_folds.cc (each returns whether it rewrote the graph).
bool FoldPadIntoConv(const PassContext& ctx, NodeIndex& index, tf::NodeDef& conv);
bool FoldChannelScale(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& mul);
bool MergeIntoBiasAdd(const PassContext& ctx, NodeIndex& index, NameSet& names, tf::NodeDef& add,
                      tf::NodeDef& bias_add, const std::string& addend);

}  // namespace plexus::opt

#endif  // PLEXUS_SRC_PASSES_OPTIMIZER_FUSE_UTIL_H_
