#include "plexus/graph_import.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "plexus/tensor_proto.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::DataPath;

using ::plexus::testing::Contains;

TEST(GraphImport, RealBinaryGraphs) {
  auto add = ImportGraphDefFile(DataPath("tf_graphs/addition_tf2/model.pb"));
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ((*add)->num_nodes(), 3);
  EXPECT_EQ((*add)->producer_version, 1882);  // newer than most consumers: accepted
  Node* z = (*add)->FindNode("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->op, "AddV2");
  EXPECT_EQ(z->output_types[0], DataType::kInt32);
  EXPECT_EQ(z->output_shapes[0].ToString(), "[]");

  auto reg = ImportGraphDefFile(DataPath("tf_graphs/regression_frozen/frozen.pb"));
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ((*reg)->num_nodes(), 8);
  EXPECT_EQ((*reg)->producer_version, 0);  // no versions field
  // The placeholder has unknown rank, so everything downstream does too.
  EXPECT_FALSE((*reg)->FindNode("pred")->output_shapes[0].rank_known());
  // `_class` colocation attrs are tolerated and kept.
  EXPECT_NE((*reg)->FindNode("W/read")->FindAttr("_class"), nullptr);

  auto mlp = ImportGraphDefFile(DataPath("tf_graphs/mlp_fc_layers/frozen.pb"));
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  const Node* out = (*mlp)->FindNode("output");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->output_shapes[0].ToString(), "[?,10]");
  // Defaults are filled in from the op registry.
  for (const auto& node : (*mlp)->nodes()) {
    if (node->op == "MatMul") EXPECT_NE(node->FindAttr("transpose_a"), nullptr);
  }
}

constexpr char kSmallGraph[] = R"pb(
  node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 4 } } float_val: 1 } } } }
  node { name: "m" op: "MatMul" input: "a" input: "b:0" input: "^b"
         attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST(GraphImport, TextGraphWithShapesAndControlInputs) {
  auto g = ImportGraphDefBytes(kSmallGraph, "small.pbtxt", GraphFormat::kText);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* m = (*g)->FindNode("m");
  EXPECT_EQ(m->num_inputs(), 2);
  ASSERT_EQ(m->control_inputs.size(), 1u);
  EXPECT_EQ(m->control_inputs[0]->name, "b");
  EXPECT_EQ(m->output_shapes[0].ToString(), "[2,4]");
  // Binary-or-text detection picks text when the bytes are not binary.
  EXPECT_TRUE(ImportGraphDefBytes(kSmallGraph, "auto").ok());
}

TEST(GraphImport, ErrorsNameTheFileAndTheNode) {
  auto garbage = ImportGraphDefBytes(std::string("\xff\xff\xff\x07garbage", 11), "junk.pb");
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(Contains(garbage.status(), "junk.pb")) << garbage.status();

  auto missing = ImportGraphDefFile("/nonexistent/graph.pb");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "/nonexistent/graph.pb"));

  auto unknown_op = ImportGraphDefBytes("node { name: 'n' op: 'Frobnicate' }", "g.pbtxt", GraphFormat::kText);
  ASSERT_FALSE(unknown_op.ok());
  EXPECT_TRUE(Contains(unknown_op.status(), "g.pbtxt"));
  EXPECT_TRUE(Contains(unknown_op.status(), "Frobnicate (node 'n')")) << unknown_op.status();

  auto dangling = ImportGraphDefBytes(
      "node { name: 'i' op: 'Identity' input: 'ghost' attr { key: 'T' value { type: DT_FLOAT } } }",
      "g", GraphFormat::kText);
  ASSERT_FALSE(dangling.ok());
  EXPECT_TRUE(Contains(dangling.status(), "'ghost' names no node")) << dangling.status();

  auto missing_attr = ImportGraphDefBytes("node { name: 'p' op: 'Placeholder' }", "g", GraphFormat::kText);
  ASSERT_FALSE(missing_attr.ok());
  EXPECT_TRUE(Contains(missing_attr.status(), "required attribute 'dtype'")) << missing_attr.status();

  auto wrong_type = ImportGraphDefBytes(R"pb(
    node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }
    node { name: 'r' op: 'Relu' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } })pb",
                                        "g", GraphFormat::kText);
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_TRUE(Contains(wrong_type.status(), "node 'r' (op Relu): input 0")) << wrong_type.status();

  auto bad_shape = ImportGraphDefBytes(R"pb(
    node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'shape' value { shape { dim { size: 2 } dim { size: 3 } } } } }
    node { name: 'm' op: 'MatMul' input: 'a' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } })pb",
                                       "g", GraphFormat::kText);
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_TRUE(Contains(bad_shape.status(), "node 'm' (op MatMul)")) << bad_shape.status();
  EXPECT_TRUE(Contains(bad_shape.status(), "[2,3]")) << bad_shape.status();

  auto cycle = ImportGraphDefBytes(R"pb(
    node { name: 'x' op: 'Identity' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'y' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } })pb",
                                   "g", GraphFormat::kText);
  ASSERT_FALSE(cycle.ok());
  EXPECT_TRUE(Contains(cycle.status(), "cycle")) << cycle.status();

  auto duplicate = ImportGraphDefBytes("node { name: 'n' op: 'NoOp' } node { name: 'n' op: 'NoOp' }",
                                       "g", GraphFormat::kText);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_TRUE(Contains(duplicate.status(), "used twice"));

  auto too_new = ImportGraphDefBytes("versions { producer: 5000 min_consumer: 4000 }", "g", GraphFormat::kText);
  ASSERT_FALSE(too_new.ok());
  EXPECT_TRUE(Contains(too_new.status(), "4000"));
}

TEST(GraphImport, TruncatedBinaryGraphIsRejected) {
  std::string bytes;
  {
    std::ifstream f(DataPath("tf_graphs/mlp_fc_layers/frozen.pb"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_GT(bytes.size(), 1000u);
  // Every cut must give an error (or a smaller valid graph), never a crash.
  for (size_t cut : {size_t{1}, size_t{17}, size_t{500}, bytes.size() / 2, bytes.size() - 3}) {
    auto g = ImportGraphDefBytes(absl::string_view(bytes).substr(0, cut), "cut.pb");
    if (!g.ok()) EXPECT_TRUE(Contains(g.status(), "cut.pb")) << g.status();
  }
}

TEST(GraphImport, HostileSizesAreErrorsNotCrashes) {
  // 2^62 x 4 elements wrap a 64-bit element count to zero.
  auto wrap = ImportGraphDefBytes(R"pb(
    node { name: 'a' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT
             tensor_shape { dim { size: 4611686018427387904 } dim { size: 4 } } } } } })pb",
                                  "wrap.pbtxt", GraphFormat::kText);
  // The import refuses the shape where it is made, naming the node
  // (InferShapes checks every shape's element count, issue 27) ...
  ASSERT_FALSE(wrap.ok());
  EXPECT_TRUE(Contains(wrap.status(), "node 'a' (op Const)")) << wrap.status();
  EXPECT_TRUE(Contains(wrap.status(), "overflows int64")) << wrap.status();
  // ... and the tensor itself cannot be made either.
  tf::TensorProto wrapping;
  wrapping.set_dtype(tf::DT_FLOAT);
  wrapping.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 62);
  wrapping.mutable_tensor_shape()->add_dim()->set_size(4);
  auto value = TensorFromProto(wrapping);
  ASSERT_FALSE(value.ok());
  EXPECT_TRUE(Contains(value.status(), "invalid tensor shape") ||
              Contains(value.status(), "too large")) << value.status();

  // A few bytes of *_val must not expand into many gigabytes.
  tf::TensorProto big;
  big.set_dtype(tf::DT_FLOAT);
  big.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 34);
  big.add_float_val(1.0f);
  auto expanded = TensorFromProto(big);
  ASSERT_FALSE(expanded.ok());
  EXPECT_TRUE(Contains(expanded.status(), "limited to")) << expanded.status();
  big.set_dtype(tf::DT_STRING);
  EXPECT_FALSE(TensorFromProto(big).ok());

  auto many = ImportGraphDefBytes(R"pb(
    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'bad' op: 'Identity' input: 'x:zz' attr { key: 'T' value { type: DT_FLOAT } } })pb",
                                  "g", GraphFormat::kText);
  ASSERT_FALSE(many.ok());
  EXPECT_TRUE(Contains(many.status(), "node 'bad' (op Identity): input 'x:zz'")) << many.status();
}

// Text graphs nested thousands deep (an attribute's function inside its
// own attributes, unknown fields inside unknown fields) once overflowed the
// parser's stack; they are errors now, as binary ones always were.
TEST(GraphImport, DeeplyNestedTextGraphsAreErrorsNotCrashes) {
  std::string attrs;
  for (int i = 0; i < 5000; ++i) attrs += "func { name: 'f' attr { key: 'a' value { ";
  attrs += "i: 1";
  for (int i = 0; i < 5000; ++i) attrs += " } } }";
  auto nested = ImportGraphDefBytes("node { name: 'n' op: 'NoOp' attr { key: 'k' value { " + attrs + " } } }",
                                    "deep.pbtxt", GraphFormat::kText);
  ASSERT_FALSE(nested.ok());
  EXPECT_TRUE(Contains(nested.status(), "deep.pbtxt")) << nested.status();
  EXPECT_TRUE(Contains(nested.status(), "recursion limit")) << nested.status();
  std::string unknown = "node { name: 'n' op: 'NoOp' ";
  for (int i = 0; i < 20000; ++i) unknown += "zz { ";
  for (int i = 0; i < 20000; ++i) unknown += "} ";
  unknown += "}";
  auto skipped = ImportGraphDefBytes(unknown, "deep_unknown.pbtxt", GraphFormat::kText);
  ASSERT_FALSE(skipped.ok());
  EXPECT_TRUE(Contains(skipped.status(), "recursion limit")) << skipped.status();
  // Ordinary nesting (a function attribute with attributes) still imports.
  EXPECT_TRUE(ImportGraphDefBytes("node { name: 'n' op: 'NoOp' attr { key: 'k' value { func { name: 'f' "
                                  "attr { key: 'a' value { i: 1 } } } } } }",
                                  "ok.pbtxt", GraphFormat::kText)
                  .ok());
}

// protobuf's own report of a malformed file goes through Plexus's log
// levels (info), not straight to stderr: the status says it all.
TEST(GraphImport, ProtobufsParseReportsAreNotPrinted) {
  ::testing::internal::CaptureStderr();
  auto bad = ImportGraphDefBytes(std::string("\x0a\x03\x0a\x01\xff", 5), "bad_utf8.pb", GraphFormat::kBinary);
  std::string printed = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status(), "bad_utf8.pb")) << bad.status();
  EXPECT_EQ(printed.find("UTF-8"), std::string::npos) << printed;
}

TEST(GraphImport, ADirectoryIsNotAGraphFile) {
  auto dir = ImportGraphDefFile(DataPath("tf_graphs"));
  ASSERT_FALSE(dir.ok());
  EXPECT_TRUE(Contains(dir.status(), "is a directory, not a graph file")) << dir.status();
}

TEST(GraphImport, WideFanInIsLinear) {
  // 50k control inputs into one node: quadratic work here would take minutes.
  std::string text;
  constexpr int kNodes = 50000;
  for (int i = 0; i < kNodes; ++i) absl::StrAppend(&text, "node { name: 'n", i, "' op: 'NoOp' }\n");
  absl::StrAppend(&text, "node { name: 'sink' op: 'NoOp'");
  for (int i = 0; i < kNodes; ++i) absl::StrAppend(&text, " input: '^n", i, "'");
  absl::StrAppend(&text, " }\n");
  auto g = ImportGraphDefBytes(text, "fan.pbtxt", GraphFormat::kText);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("sink")->control_inputs.size(), static_cast<size_t>(kNodes));
}

TEST(GraphImport, ResolveTensorNames) {
  auto g = ImportGraphDefBytes(kSmallGraph, "small", GraphFormat::kText);
  ASSERT_TRUE(g.ok());
  auto e = (*g)->ResolveTensor("m:0");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->node->name, "m");
  EXPECT_FALSE((*g)->ResolveTensor("m:1").ok());
  EXPECT_FALSE((*g)->ResolveTensor("nope").ok());
  EXPECT_FALSE((*g)->ResolveTensor("m:x").ok());
}

}  // namespace
}  // namespace plexus
