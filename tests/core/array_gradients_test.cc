// Gradients of the array ops (core/src/passes/gradients/array_grad.cc) against
// finite differences in float64, over attribute variants; the run-time
// shape paths (inputs of unknown shape) against the static ones; and the
// registry: every op with a registered gradient exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gradient_check.h"
#include "plexus/gradients.h"
#include "plexus/graph_builder.h"
#include "plexus/op_def.h"
#include "plexus/session.h"
#include "test_util.h"

namespace plexus::testing {
namespace {

void SetInts(AttrMap& attrs, const std::string& name, const std::vector<int64_t>& values) {
  auto* list = attrs[name].mutable_list();
  list->clear_i();
  for (int64_t v : values) list->add_i(v);
}

GradientCheck Check(const std::string& op, std::vector<Tensor> inputs) { return GradientCheck{op, std::move(inputs)}; }

TEST(ArrayGradientTest, ReshapeExpandDimsSqueeze) {
  ExpectGradientsMatch(Check("Reshape", {RandomDouble({2, 3, 4}), IntTensor({2}, {6, 4})}));
  ExpectGradientsMatch(Check("Reshape", {RandomDouble({2, 3}), IntTensor({1}, {-1})}));
  ExpectGradientsMatch(Check("Reshape", {RandomDouble({1}), IntTensor({0}, {})}));
  ExpectGradientsMatch(Check("ExpandDims", {RandomDouble({2, 3}), IntTensor({}, {0})}));
  ExpectGradientsMatch(Check("ExpandDims", {RandomDouble({2, 3}), Int64Tensor({}, {-1})}));
  GradientCheck squeeze = Check("Squeeze", {RandomDouble({2, 1, 3, 1})});
  ExpectGradientsMatch(squeeze);
  SetInts(squeeze.attrs, "squeeze_dims", {-1});
  ExpectGradientsMatch(squeeze);
  GradientCheck with_default = Check("PlaceholderWithDefault", {RandomDouble({3})});
  with_default.attrs["shape"].mutable_shape()->add_dim()->set_size(3);
  ExpectGradientsMatch(with_default);
}

TEST(ArrayGradientTest, Transpose) {
  ExpectGradientsMatch(Check("Transpose", {RandomDouble({2, 3, 4}), IntTensor({3}, {2, 0, 1})}));
  ExpectGradientsMatch(Check("Transpose", {RandomDouble({2, 3, 4}), Int64Tensor({3}, {1, 2, 0})}));
  ExpectGradientsMatch(Check("Transpose", {RandomDouble({3, 2}), IntTensor({2}, {1, 0})}));
}

TEST(ArrayGradientTest, Concat) {
  for (int axis : {0, 1, -1}) {
    ExpectGradientsMatch(Check("ConcatV2", {RandomDouble({2, 3}), RandomDouble({2, 3}), IntTensor({}, {axis})}));
  }
  ExpectGradientsMatch(
      Check("ConcatV2", {RandomDouble({2, 1}), RandomDouble({2, 3}), RandomDouble({2, 2}), Int64Tensor({}, {1})}));
  ExpectGradientsMatch(Check("ConcatV2", {RandomDouble({2, 0}), RandomDouble({2, 3}), IntTensor({}, {-1})}));
  ExpectGradientsMatch(Check("Concat", {IntTensor({}, {0}), RandomDouble({1, 3}), RandomDouble({2, 3})}));
  ExpectGradientsMatch(Check("Concat", {IntTensor({}, {-2}), RandomDouble({2, 2}), RandomDouble({1, 2})}));
  // Only one input differentiated: the other is a constant.
  GradientCheck partial = Check("ConcatV2", {RandomDouble({2, 3}), RandomDouble({2, 1}), IntTensor({}, {1})});
  partial.wrt = {1};
  ExpectGradientsMatch(partial);
}

TEST(ArrayGradientTest, PackUnpack) {
  for (int axis : {0, 1, -1}) {
    GradientCheck pack = Check("Pack", {RandomDouble({2, 3}), RandomDouble({2, 3}), RandomDouble({2, 3})});
    pack.attrs["axis"].set_i(axis);
    ExpectGradientsMatch(pack);
  }
  ExpectGradientsMatch(Check("Pack", {RandomDouble({}), RandomDouble({})}));
  for (int axis : {0, 1, -1}) {
    GradientCheck unpack = Check("Unpack", {RandomDouble({2, 3})});
    unpack.attrs["axis"].set_i(axis);
    unpack.attrs["num"].set_i(axis == 0 ? 2 : 3);
    ExpectGradientsMatch(unpack);
  }
  // Only some outputs in the loss: the others get zero gradients.
  GradientCheck some = Check("Unpack", {RandomDouble({3, 2})});
  some.attrs["num"].set_i(3);
  some.outputs = {1};
  ExpectGradientsMatch(some);
}

TEST(ArrayGradientTest, Split) {
  for (int axis : {0, 1, -1}) {
    GradientCheck split = Check("Split", {IntTensor({}, {axis}), RandomDouble({6, 6})});
    split.attrs["num_split"].set_i(3);
    ExpectGradientsMatch(split);
  }
  GradientCheck one = Check("Split", {IntTensor({}, {0}), RandomDouble({2, 2})});
  one.attrs["num_split"].set_i(1);
  ExpectGradientsMatch(one);
  GradientCheck some = Check("Split", {IntTensor({}, {1}), RandomDouble({2, 4})});
  some.attrs["num_split"].set_i(2);
  some.outputs = {0};
  ExpectGradientsMatch(some);
  GradientCheck v = Check("SplitV", {RandomDouble({2, 6}), Int64Tensor({3}, {1, -1, 2}), IntTensor({}, {1})});
  v.attrs["num_split"].set_i(3);
  ExpectGradientsMatch(v);
  v.inputs = {RandomDouble({5, 2}), IntTensor({2}, {2, 3}), IntTensor({}, {-2})};
  v.attrs["num_split"].set_i(2);
  ExpectGradientsMatch(v);
  v.outputs = {1};
  ExpectGradientsMatch(v);
}

TEST(ArrayGradientTest, Slice) {
  ExpectGradientsMatch(Check("Slice", {RandomDouble({4, 5}), IntTensor({2}, {1, 2}), IntTensor({2}, {2, -1})}));
  ExpectGradientsMatch(Check("Slice", {RandomDouble({3, 4, 2}), Int64Tensor({3}, {0, 1, 1}), Int64Tensor({3}, {3, 2, 1})}));
  ExpectGradientsMatch(Check("Slice", {RandomDouble({3}), IntTensor({1}, {1}), IntTensor({1}, {0})}));
}

struct StridedCase {
  std::vector<int32_t> begin, end, strides;
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
};

TEST(ArrayGradientTest, StridedSlice) {
  const std::vector<StridedCase> cases = {
      {{1, 0, 0}, {3, 4, 5}, {1, 2, 1}},
      {{0, 3, 4}, {4, 0, 0}, {2, -1, -2}},                 // negative strides
      {{1, 0, 0}, {0, 0, 2}, {1, 1, 1}, 0b110, 0b011},     // begin / end masks
      {{-1, 1, 0}, {0, 3, 5}, {1, 1, 1}, 0, 0, 0, 0, 0b001},  // shrink the first axis
      {{0, 2, 3}, {0, 3, 4}, {1, 1, 1}, 0, 0, 0, 0, 0b110},   // shrink two axes
      {{0, 0, 1}, {0, 0, 4}, {1, 1, 2}, 0, 0, 0, 0b010, 0},   // new axis in the middle
      {{0, 1}, {0, 3}, {1, 1}, 0, 0, 0b01},                   // ellipsis then a range
      {{0, 2}, {0, 3}, {1, 1}, 0, 0, 0b01, 0, 0b10},          // ellipsis then an index
      {{1}, {3}, {1}},                                        // fewer specs than dims
      {{3, 0, 0}, {3, 4, 5}, {1, 1, 1}},                      // an empty slice
  };
  for (const StridedCase& s : cases) {
    for (DataType index : {DataType::kInt32, DataType::kInt64}) {
      SCOPED_TRACE(absl::StrCat("begin_mask ", s.begin_mask, " end_mask ", s.end_mask, " ellipsis ", s.ellipsis_mask,
                                " new_axis ", s.new_axis_mask, " shrink ", s.shrink_axis_mask));
      const Shape n{static_cast<int64_t>(s.begin.size())};
      auto ints = [&](const std::vector<int32_t>& v) {
        if (index == DataType::kInt32) return IntTensor(n, v);
        return Int64Tensor(n, std::vector<int64_t>(v.begin(), v.end()));
      };
      GradientCheck c = Check("StridedSlice", {RandomDouble({4, 4, 5}), ints(s.begin), ints(s.end), ints(s.strides)});
      c.attrs["begin_mask"].set_i(s.begin_mask);
      c.attrs["end_mask"].set_i(s.end_mask);
      c.attrs["ellipsis_mask"].set_i(s.ellipsis_mask);
      c.attrs["new_axis_mask"].set_i(s.new_axis_mask);
      c.attrs["shrink_axis_mask"].set_i(s.shrink_axis_mask);
      ExpectGradientsMatch(c);
    }
  }
}

TEST(ArrayGradientTest, StridedSliceGradIsLinearInDy) {
  GradientCheck c = Check("StridedSliceGrad", {IntTensor({2}, {4, 5}), IntTensor({2}, {1, 0}), IntTensor({2}, {4, 5}),
                                               IntTensor({2}, {2, 2}), RandomDouble({2, 3})});
  ExpectGradientsMatch(c);
  c.inputs = {IntTensor({2}, {4, 5}), IntTensor({2}, {2, 0}), IntTensor({2}, {3, 5}), IntTensor({2}, {1, 1}),
              RandomDouble({5})};
  c.attrs["shrink_axis_mask"].set_i(1);
  ExpectGradientsMatch(c);
}

TEST(ArrayGradientTest, Pad) {
  ExpectGradientsMatch(Check("Pad", {RandomDouble({2, 3}), IntTensor({2, 2}, {1, 0, 2, 1})}));
  ExpectGradientsMatch(Check("Pad", {RandomDouble({2, 1, 2}), Int64Tensor({3, 2}, {0, 0, 1, 1, 0, 3})}));
  ExpectGradientsMatch(Check("PadV2", {RandomDouble({2, 3}), IntTensor({2, 2}, {1, 1, 0, 2}), RandomDouble({})}));
  GradientCheck only_x = Check("PadV2", {RandomDouble({3}), IntTensor({1, 2}, {2, 0}), RandomDouble({})});
  only_x.wrt = {0};
  ExpectGradientsMatch(only_x);
}

TEST(ArrayGradientTest, MirrorPad) {
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    GradientCheck c = Check("MirrorPad", {RandomDouble({3, 4}), IntTensor({2, 2}, {1, 2, 2, 0})});
    c.attrs["mode"].set_s(mode);
    ExpectGradientsMatch(c);
    c.inputs = {RandomDouble({2, 3, 3}), Int64Tensor({3, 2}, {0, 1, 0, 0, 2, 2})};
    ExpectGradientsMatch(c);
    // MirrorPadGrad's own gradient is MirrorPad.
    GradientCheck back = Check("MirrorPadGrad", {RandomDouble({6, 6}), IntTensor({2, 2}, {1, 2, 2, 1})});
    back.attrs["mode"].set_s(mode);
    ExpectGradientsMatch(back);
  }
}

TEST(ArrayGradientTest, TileAndBroadcastTo) {
  ExpectGradientsMatch(Check("Tile", {RandomDouble({2, 3}), IntTensor({2}, {2, 1})}));
  ExpectGradientsMatch(Check("Tile", {RandomDouble({2, 1, 2}), Int64Tensor({3}, {1, 3, 2})}));
  ExpectGradientsMatch(Check("Tile", {RandomDouble({3}), IntTensor({1}, {1})}));
  ExpectGradientsMatch(Check("BroadcastTo", {RandomDouble({3}), IntTensor({2}, {2, 3})}));
  ExpectGradientsMatch(Check("BroadcastTo", {RandomDouble({2, 1}), IntTensor({3}, {2, 2, 3})}));
  ExpectGradientsMatch(Check("BroadcastTo", {RandomDouble({}), Int64Tensor({2}, {2, 2})}));
  ExpectGradientsMatch(Check("BroadcastTo", {RandomDouble({2, 2}), IntTensor({2}, {2, 2})}));
}

TEST(ArrayGradientTest, ReverseV2) {
  ExpectGradientsMatch(Check("ReverseV2", {RandomDouble({2, 3}), IntTensor({1}, {1})}));
  ExpectGradientsMatch(Check("ReverseV2", {RandomDouble({2, 3, 2}), Int64Tensor({2}, {0, -1})}));
}

TEST(ArrayGradientTest, Gather) {
  // Repeated indices: their gradients add up.
  ExpectGradientsMatch(Check("Gather", {RandomDouble({4, 3}), IntTensor({5}, {0, 2, 2, 3, 0})}));
  ExpectGradientsMatch(Check("Gather", {RandomDouble({4}), Int64Tensor({2, 2}, {1, 1, 3, 0})}));
  ExpectGradientsMatch(Check("GatherV2", {RandomDouble({4, 3}), IntTensor({3}, {3, 1, 3}), IntTensor({}, {0})}));
  ExpectGradientsMatch(Check("GatherV2", {RandomDouble({2, 4, 3}), IntTensor({2, 2}, {0, 3, 3, 1}), IntTensor({}, {1})}));
  ExpectGradientsMatch(Check("GatherV2", {RandomDouble({2, 3, 4}), Int64Tensor({3}, {3, 0, 3}), Int64Tensor({}, {-1})}));
  ExpectGradientsMatch(Check("GatherV2", {RandomDouble({3, 2}), IntTensor({}, {2}), IntTensor({}, {0})}));
}

TEST(ArrayGradientTest, GatherNdAndScatterNd) {
  // Full-element indices with a repeat, slice indices, and int64 indices.
  ExpectGradientsMatch(Check("GatherNd", {RandomDouble({3, 4}), IntTensor({3, 2}, {0, 1, 2, 3, 0, 1})}));
  ExpectGradientsMatch(Check("GatherNd", {RandomDouble({3, 2, 2}), Int64Tensor({2, 1}, {2, 0})}));
  ExpectGradientsMatch(Check("GatherNd", {RandomDouble({2, 3}), IntTensor({2, 2, 1}, {1, 1, 0, 1})}));
  GradientCheck scatter = Check("ScatterNd", {IntTensor({3, 1}, {1, 0, 1}), RandomDouble({3, 2}), IntTensor({2}, {3, 2})});
  ExpectGradientsMatch(scatter);
}

TEST(ArrayGradientTest, SpaceToBatchAndBack) {
  ExpectGradientsMatch(Check("SpaceToBatchND", {RandomDouble({1, 4, 4, 2}), IntTensor({2}, {2, 2}),
                                                IntTensor({2, 2}, {0, 0, 0, 0})}));
  ExpectGradientsMatch(Check("SpaceToBatchND", {RandomDouble({2, 3, 2, 1}), IntTensor({2}, {2, 2}),
                                                IntTensor({2, 2}, {1, 0, 1, 1})}));
  ExpectGradientsMatch(Check("BatchToSpaceND", {RandomDouble({4, 2, 2, 1}), IntTensor({2}, {2, 2}),
                                                IntTensor({2, 2}, {0, 1, 1, 0})}));
}

// ---- Run-time shapes ---------------------------------------------------------

// The first float64 input.
size_t FirstDouble(const GradientCheck& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].dtype() == DataType::kDouble) return i;
  }
  return 0;
}

// Builds op(inputs) with the first float64 input x and the inputs listed in
// `dynamic` as placeholders, of unknown shape (or only unknown dimensions
// when `keep_rank`) when `unknown`, the rest constants, and returns
// d(sum(y * w))/dx for output 0 and a fixed w. With unknown shapes the
// gradient functions take their run-time paths.
std::vector<double> GradientWithShapes(const GradientCheck& c, const std::vector<int>& dynamic, bool unknown,
                                       bool keep_rank, const Tensor& w) {
  GraphBuilder b("dynamic shapes");
  const size_t xi = FirstDouble(c);
  std::vector<Endpoint> inputs;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool placeholder = i == xi || std::find(dynamic.begin(), dynamic.end(), static_cast<int>(i)) != dynamic.end();
    PartialShape shape(c.inputs[i].shape());
    if (unknown && placeholder) {
      shape = keep_rank ? PartialShape::UnknownOfRank(c.inputs[i].dims()) : PartialShape::Unknown();
    }
    const std::string name = absl::StrCat("in", i);
    auto node = placeholder ? b.AddPlaceholder(c.inputs[i].dtype(), shape, name) : b.AddConst(c.inputs[i], name);
    EXPECT_TRUE(node.ok()) << node.status();
    if (!node.ok()) return {};
    inputs.push_back({*node, 0});
    if (placeholder) feeds.push_back({name, c.inputs[i]});
  }
  auto op = b.AddNode(c.op, inputs, c.attrs, "op");
  EXPECT_TRUE(op.ok()) << op.status();
  if (!op.ok()) return {};
  auto wn = b.AddPlaceholder(DataType::kDouble, PartialShape::Unknown(), "w");
  EXPECT_TRUE(wn.ok());
  feeds.push_back({"w", w});
  auto grads = AddGradients(b, {{*op, 0}}, {inputs[xi]}, {{*wn, 0}});
  EXPECT_TRUE(grads.ok()) << grads.status();
  if (!grads.ok() || !(*grads)[0].has_value()) return {};
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto session = Session::Create(GradientCheckRuntime(), *graph);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  const Endpoint& g = *(*grads)[0];
  auto out = (*session)->Run(feeds, {absl::StrCat(g.node->name, ":", g.index)});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), c.inputs[xi].shape());
  return std::vector<double>((*out)[0].data<double>(), (*out)[0].data<double>() + (*out)[0].num_elements());
}

// Checks the gradient with static shapes against finite differences, then
// the same gradient with run-time shapes against it. `unknown_rank`: also
// with inputs of unknown rank.
void ExpectDynamicMatchesStatic(const GradientCheck& c, const Shape& y_shape, const std::vector<int>& dynamic = {},
                                bool unknown_rank = true) {
  SCOPED_TRACE(absl::StrCat("run-time shapes of ", c.op));
  ExpectGradientsMatch(c);
  const Tensor w = RandomDouble(y_shape);
  const std::vector<double> expected = GradientWithShapes(c, dynamic, false, false, w);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), c.inputs[FirstDouble(c)].num_elements());
  for (bool keep_rank : {false, true}) {
    if (!keep_rank && !unknown_rank) continue;
    const std::vector<double> got = GradientWithShapes(c, dynamic, true, keep_rank, w);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << "element " << i;
  }
}

TEST(ArrayGradientTest, RunTimeShapes) {
  ExpectDynamicMatchesStatic(Check("Reshape", {RandomDouble({2, 3}), IntTensor({1}, {6})}), {6});
  ExpectDynamicMatchesStatic(Check("Transpose", {RandomDouble({2, 3}), IntTensor({2}, {1, 0})}), {3, 2}, {1});
  ExpectDynamicMatchesStatic(Check("ConcatV2", {RandomDouble({2, 3}), RandomDouble({2, 2}), IntTensor({}, {1})}),
                             {2, 5}, {1, 2});
  ExpectDynamicMatchesStatic(Check("Concat", {IntTensor({}, {0}), RandomDouble({1, 2}), RandomDouble({2, 2})}),
                             {3, 2}, {0, 2});
  ExpectDynamicMatchesStatic(Check("Slice", {RandomDouble({4, 3}), IntTensor({2}, {1, 1}), IntTensor({2}, {2, -1})}),
                             {2, 2}, {1, 2});
  ExpectDynamicMatchesStatic(Check("Slice", {RandomDouble({4, 3}), Int64Tensor({2}, {1, 0}), Int64Tensor({2}, {3, 2})}),
                             {3, 2}, {1});
  GradientCheck ss = Check("StridedSlice", {RandomDouble({4, 3}), IntTensor({2}, {0, 2}), IntTensor({2}, {4, 0}),
                                            IntTensor({2}, {2, -1})});
  ExpectDynamicMatchesStatic(ss, {2, 2}, {1, 2, 3});
  ExpectDynamicMatchesStatic(Check("Pad", {RandomDouble({2, 3}), IntTensor({2, 2}, {1, 0, 0, 2})}), {3, 5}, {1});
  ExpectDynamicMatchesStatic(Check("Pad", {RandomDouble({2, 3}), Int64Tensor({2, 2}, {1, 0, 0, 2})}), {3, 5}, {1});
  ExpectDynamicMatchesStatic(Check("Tile", {RandomDouble({2, 3}), IntTensor({2}, {2, 3})}), {4, 9}, {1});
  ExpectDynamicMatchesStatic(Check("Tile", {RandomDouble({2, 3}), Int64Tensor({2}, {1, 2})}), {2, 6});
  ExpectDynamicMatchesStatic(Check("BroadcastTo", {RandomDouble({3, 1}), IntTensor({3}, {2, 3, 4})}), {2, 3, 4}, {1});
  ExpectDynamicMatchesStatic(Check("Gather", {RandomDouble({4, 2}), IntTensor({3}, {1, 1, 0})}), {3, 2}, {1});
  ExpectDynamicMatchesStatic(
      Check("GatherV2", {RandomDouble({2, 4, 3}), IntTensor({2}, {3, 3}), IntTensor({}, {1})}), {2, 2, 3}, {1},
      /*unknown_rank=*/false);
  ExpectDynamicMatchesStatic(Check("GatherNd", {RandomDouble({3, 4}), IntTensor({2, 2}, {0, 1, 2, 2})}), {2}, {1});
  GradientCheck unpack = Check("Unpack", {RandomDouble({2, 3})});
  unpack.attrs["num"].set_i(2);
  ExpectDynamicMatchesStatic(unpack, {3});
  GradientCheck split = Check("Split", {IntTensor({}, {1}), RandomDouble({2, 4})});
  split.attrs["num_split"].set_i(2);
  ExpectDynamicMatchesStatic(split, {2, 2}, {0});
}

// ---- The registry --------------------------------------------------------------

TEST(ArrayGradientTest, EveryGradientIsForARegisteredOp) {
  for (const std::string& op : GradientOps()) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << "gradient registered for unknown op " << op;
  }
}

TEST(ArrayGradientTest, EveryArrayOpHasAGradientOrIsDeclaredNonDifferentiable) {
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze", "Transpose", "ConcatV2", "Concat", "Pack", "Unpack",
                         "Split", "SplitV", "Slice", "StridedSlice", "StridedSliceGrad", "Pad", "PadV2", "Tile", "ReverseV2",
                         "BroadcastTo", "Gather", "GatherV2", "SpaceToBatchND", "BatchToSpaceND", "MirrorPad", "MirrorPadGrad",
                         "GatherNd", "ScatterNd",
                         "PlaceholderWithDefault", "Shape", "ShapeN", "Size", "Rank", "OneHot", "InvertPermutation",
                         "ConcatOffset"}) {
    GradientFn fn = nullptr;
    EXPECT_TRUE(FindGradient(op, &fn)) << op;
  }
}

TEST(ArrayGradientTest, GatherV2NeedsAConstantAxis) {
  GraphBuilder b("test");
  Node* x = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{3, 2}), "x");
  Node* i = *b.AddConst(IntTensor({1}, {0}), "i");
  Node* axis = *b.AddPlaceholder(DataType::kInt32, PartialShape(Shape{}), "axis");
  Node* y = *b.AddNode("GatherV2", {{x, 0}, {i, 0}, {axis, 0}}, {}, "gather");
  auto grads = AddGradients(b, {{y, 0}}, {{x, 0}});
  ASSERT_FALSE(grads.ok());
  EXPECT_TRUE(Contains(grads.status(), "constant axis")) << grads.status();
}

}  // namespace
}  // namespace plexus::testing
