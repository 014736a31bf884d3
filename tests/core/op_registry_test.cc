#include "plexus/op_def.h"

#include "gtest/gtest.h"
#include "plexus/graph_import.h"
#include "test_util.h"

namespace plexus {
namespace {

TEST(OpRegistry, HasTheFoundationOps) {
  for (const char* op : {"Const", "Placeholder", "Identity", "Add", "AddV2", "Sub", "Mul",
                         "MatMul", "BiasAdd", "Relu", "Softmax", "NoOp"}) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << op;
  }
  EXPECT_EQ(OpRegistry::Global().Find("NoSuchOp"), nullptr);
}

TEST(OpRegistry, ParsesSpecs) {
  const OpDef* matmul = OpRegistry::Global().Find("MatMul");
  ASSERT_NE(matmul, nullptr);
  ASSERT_EQ(matmul->inputs.size(), 2u);
  EXPECT_EQ(matmul->inputs[0].type_attr, "T");
  const AttrSpec* ta = matmul->FindAttr("transpose_a");
  ASSERT_NE(ta, nullptr);
  EXPECT_TRUE(ta->has_default);
  EXPECT_FALSE(ta->default_value.b());
  const AttrSpec* t = matmul->FindAttr("T");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->allowed_types.empty());

  auto def = OpDefBuilder("Test")
                 .Input("xs: N * T")
                 .Input("flag: bool")
                 .Output("y: T")
                 .Attr("N: int >= 1")
                 .Attr("T: type = int32")
                 .Attr("name: string = \"abc\"")
                 .Attr("sizes: list(int) = [1, 2]")
                 .Build();
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->inputs[0].number_attr, "N");
  EXPECT_EQ(def->inputs[1].fixed_type, DataType::kBool);
  EXPECT_EQ(def->FindAttr("N")->minimum, 1);
  EXPECT_EQ(def->FindAttr("T")->default_value.type(), tf::DT_INT32);
  EXPECT_EQ(def->FindAttr("name")->default_value.s(), "abc");
  EXPECT_EQ(def->FindAttr("sizes")->default_value.list().i_size(), 2);
}

TEST(OpRegistry, BadSpecsAreErrorsNamingTheOp) {
  auto bad = OpDefBuilder("Broken").Input("x: Missing").Build();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("op Broken"), absl::string_view::npos);
  EXPECT_FALSE(OpDefBuilder("Broken").Attr("x: nonsense").Build().ok());
  EXPECT_FALSE(OpDefBuilder("Broken").Attr("x: bool = maybe").Build().ok());
  EXPECT_FALSE(OpDefBuilder("Broken").Input("no colon").Build().ok());
  OpRegistry registry;
  EXPECT_TRUE(registry.Register(*OpDefBuilder("A").Build()).ok());
  EXPECT_EQ(registry.Register(*OpDefBuilder("A").Build()).code(), absl::StatusCode::kAlreadyExists);
}

// Graphs fuzz_shape_fns built that once crashed a shape function
// (tests/fuzz/regressions, issue 27): each is now an import error naming
// the node.
absl::Status ImportFuzzRegression(const std::string& name) {
  return ImportGraphDefFile(testing::DataPath("../fuzz/regressions/" + name)).status();
}

TEST(ShapeFunctionFuzzRegressions, TileOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_tile_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'tile' (op Tile)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, ReshapeSizesOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_reshape_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'reshape' (op Reshape)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, ShapeWithTooManyElementsIsRefusedWhereMade) {
  absl::Status s = ImportFuzzRegression("shape_placeholder_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'x' (op Placeholder)")) << s;
  EXPECT_TRUE(testing::Contains(s, "number of elements overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, TileMultiplesLongerThanAnyRankIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_tile_multiples_length.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'tile' (op Tile)")) << s;
  EXPECT_TRUE(testing::Contains(s, "more dimensions than a tensor may have")) << s;
}

TEST(ShapeFunctionFuzzRegressions, FusedElementwiseShapeOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_fused_elementwise_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'fused' (op _PlexusFusedElementwise)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, ParseExampleV2CountsMustMatchTypeLists) {
  absl::Status s = ImportFuzzRegression("shape_parse_example_v2_num_sparse.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'parse' (op ParseExampleV2)")) << s;
  EXPECT_TRUE(testing::Contains(s, "attr 'num_sparse' is 0 but 'sparse_types' lists 2 types")) << s;
}

TEST(ShapeFunctionFuzzRegressions, SpaceToDepthOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_space_to_depth_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 's2d' (op SpaceToDepth)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, ConvDilatedWindowOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_conv_stride_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'conv' (op Conv2D)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

TEST(ShapeFunctionFuzzRegressions, SparseToDenseShapeLongerThanAnyRankIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_sparse_to_dense_rank.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'dense' (op SparseToDense)")) << s;
  EXPECT_TRUE(testing::Contains(s, "more dimensions than a tensor may have")) << s;
}

TEST(ShapeFunctionFuzzRegressions, ConcatOverflowIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_concat_overflow.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'concat' (op ConcatV2)")) << s;
  EXPECT_TRUE(testing::Contains(s, "overflows int64")) << s;
}

// The mask -2^63 has one bit set, past the slice's dimensions, where an
// ellipsis means nothing: it imports, as in TensorFlow.
TEST(ShapeFunctionFuzzRegressions, StridedSliceEllipsisMaskOfInt64MinImports) {
  absl::Status s = ImportFuzzRegression("shape_strided_slice_ellipsis_min.pbtxt");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ShapeFunctionFuzzRegressions, ShapeVectorLongerThanAnyRankIsAnError) {
  absl::Status s = ImportFuzzRegression("shape_scatter_nd_rank.pbtxt");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(testing::Contains(s, "node 'scatter' (op ScatterNd)")) << s;
  EXPECT_TRUE(testing::Contains(s, "more dimensions than a tensor may have (254)")) << s;
}

}  // namespace
}  // namespace plexus
