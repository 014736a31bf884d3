// SavedModel loading (metadata of the four TensorFlow SavedModels in
// tests/data/tf_graphs, text-format SavedModels, errors), the I/O and
// parsing host ops they use (ParseExample/V2, StringJoin, ShardedFilename,
// StaticRegexFullMatch, SaveV2/RestoreV2/MergeV2Checkpoints, string
// constants, the gradient helper BroadcastGradientArgs), and the SavedModels
// run end to end, training included.
#include "plexus/saved_model.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "example.pb.h"
#include "gtest/gtest.h"
#include "plexus/checkpoint.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::Contains;
using ::plexus::testing::CpuRuntime;
using ::plexus::testing::DataPath;
using ::plexus::testing::GraphFromText;
namespace fs = std::filesystem;

const char kTf1[] = "tf_graphs/half_plus_two_tf1/00000123";
const char kTf2[] = "tf_graphs/half_plus_two_tf2/00000123";
const char kCounter[] = "tf_graphs/counter_tf1/00000123";
const char kRegression[] = "tf_graphs/regression_tf2_train";

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// tf.Example bytes from the test data's MANIFEST (x = 0, 1, 2, 3).
std::vector<std::string> ExamplesX0To3() {
  return {Unhex("0a0f0a0d0a0178120812060a0400000000"), Unhex("0a0f0a0d0a0178120812060a040000803f"),
          Unhex("0a0f0a0d0a0178120812060a0400000040"), Unhex("0a0f0a0d0a0178120812060a0400004040")};
}
// x = 1 and x2 = 4.
std::string ExampleX1X2Is4() {
  return Unhex("0a1f0a0d0a0178120812060a040000803f0a0e0a027832120812060a0400008040");
}

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("plexus_sm_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::vector<float> Floats(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kFloat);
  if (t.dtype() != DataType::kFloat) return {};
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// --- Metadata ------------------------------------------------------------------------

TEST(SavedModelMeta, HalfPlusTwoTf1) {
  auto model = SavedModel::Read(DataPath(kTf1));
  ASSERT_TRUE(model.ok()) << model.status();
  const SavedModel& m = **model;
  EXPECT_EQ(m.tensorflow_version(), "1.14.0");
  std::vector<std::string> keys;
  for (const auto& [k, sig] : m.signatures()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y",
                                            "regress_x_to_y2", "serving_default"}));
  auto sig = m.FindSignature("serving_default");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ((*sig)->method_name, "tensorflow/serving/predict");
  ASSERT_EQ((*sig)->inputs.count("x"), 1u);
  const SignatureTensor& x = (*sig)->inputs.at("x");
  EXPECT_EQ(x.tensor_name, "x:0");
  EXPECT_EQ(x.dtype, DataType::kFloat);
  EXPECT_FALSE(x.is_ref);
  EXPECT_EQ(x.shape.dims(), (Shape{-1, 1}));
  EXPECT_EQ((*sig)->outputs.at("y").tensor_name, "y:0");
  auto regress = m.FindSignature("regress_x_to_y");
  ASSERT_TRUE(regress.ok());
  EXPECT_EQ((*regress)->method_name, "tensorflow/serving/regress");
  EXPECT_EQ((*regress)->inputs.at("inputs").tensor_name, "tf_example:0");
  EXPECT_EQ((*regress)->inputs.at("inputs").dtype, DataType::kString);
  EXPECT_FALSE((*regress)->inputs.at("inputs").shape.rank_known());

  ASSERT_TRUE(m.has_saver());
  EXPECT_EQ(m.saver().filename_tensor_name, "save/Const:0");
  EXPECT_EQ(m.saver().restore_op_name, "save/restore_all");
  EXPECT_TRUE(m.saver().sharded);
  EXPECT_EQ(m.saver().version, 2);
  EXPECT_TRUE(m.has_variables());
  EXPECT_EQ(m.variables_prefix(), m.dir() + "/variables/variables");
  // TensorFlow 1 keeps its assets in the collection "saved_model_assets".
  ASSERT_EQ(m.assets().size(), 1u);
  EXPECT_EQ(m.assets()[0].tensor_name, "Const:0");
  EXPECT_EQ(m.assets()[0].filename, "foo.txt");
  EXPECT_EQ(m.assets()[0].path, m.dir() + "/assets/foo.txt");
  EXPECT_TRUE(fs::exists(m.assets()[0].path));
  EXPECT_EQ(m.init_op(), "group_deps");
  EXPECT_EQ(m.meta_graph().graph_def().node_size(), 74);
}

TEST(SavedModelMeta, HalfPlusTwoTf2) {
  auto model = SavedModel::Read(DataPath(kTf2));
  ASSERT_TRUE(model.ok()) << model.status();
  const SavedModel& m = **model;
  EXPECT_EQ(m.signatures().size(), 6u);
  EXPECT_EQ(m.signatures().count(kSavedModelInitOpSignatureKey), 0u);
  const Signature& serving = m.signatures().at("serving_default");
  EXPECT_EQ(serving.inputs.at("x").tensor_name, "serving_default_x:0");
  EXPECT_EQ(serving.inputs.at("x").shape.dims(), Shape{1});
  EXPECT_EQ(serving.outputs.at("y").tensor_name, "StatefulPartitionedCall_5:0");
  EXPECT_EQ(m.signatures().at("regress_x_to_y").inputs.at("inputs").tensor_name, "regress_x_to_y_inputs:0");
  EXPECT_EQ(m.saver().filename_tensor_name, "saver_filename:0");
  EXPECT_EQ(m.saver().restore_op_name, "StatefulPartitionedCall_7");
  ASSERT_EQ(m.assets().size(), 1u);
  EXPECT_EQ(m.assets()[0].tensor_name, "asset_path_initializer:0");
  EXPECT_EQ(m.assets()[0].path, m.dir() + "/assets/foo.txt");
  EXPECT_EQ(m.init_op(), "NoOp");
  EXPECT_EQ(m.meta_graph().graph_def().library().function_size(), 14);
  EXPECT_EQ(m.meta_graph().object_graph_def().nodes_size(), 24);
  EXPECT_EQ(m.meta_graph().object_graph_def().concrete_functions_size(), 12);
}

TEST(SavedModelMeta, CounterTf1RefTypedOutputs) {
  auto model = SavedModel::Read(DataPath(kCounter));
  ASSERT_TRUE(model.ok()) << model.status();
  const SavedModel& m = **model;
  std::vector<std::string> keys;
  for (const auto& [k, sig] : m.signatures()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"get_counter", "incr_counter", "incr_counter_by", "reset_counter"}));
  const SignatureTensor& out = m.signatures().at("incr_counter").outputs.begin()->second;
  EXPECT_EQ(out.tensor_name, "incr_counter_op/AssignAdd:0");
  EXPECT_EQ(out.dtype, DataType::kFloat);  // DT_FLOAT_REF in the file
  EXPECT_TRUE(out.is_ref);
  EXPECT_EQ(m.signatures().at("incr_counter_by").inputs.at("delta").tensor_name, "delta:0");
  EXPECT_TRUE(m.assets().empty());
}

TEST(SavedModelMeta, RegressionTf2Train) {
  auto model = SavedModel::Read(DataPath(kRegression));
  ASSERT_TRUE(model.ok()) << model.status();
  const SavedModel& m = **model;
  const Signature& train = m.signatures().at("train");
  EXPECT_EQ(train.inputs.at("x").tensor_name, "train_x:0");
  EXPECT_EQ(train.inputs.at("y").tensor_name, "train_y:0");
  EXPECT_EQ(train.outputs.at("loss").tensor_name, "StatefulPartitionedCall_1:0");
  EXPECT_EQ(m.saver().restore_op_name, "StatefulPartitionedCall_4");
  EXPECT_EQ(m.init_op(), "NoOp");
  EXPECT_EQ(m.meta_graph().graph_def().library().function_size(), 18);
}

TEST(SavedModelMeta, WrongTagsListTheTagSets) {
  auto model = SavedModel::Read(DataPath(kTf1), {"train"});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(model.status(), "{train}")) << model.status();
  EXPECT_TRUE(Contains(model.status(), "{serve}")) << model.status();
  // Tag sets must match exactly.
  EXPECT_FALSE(SavedModel::Read(DataPath(kTf1), {"serve", "gpu"}).ok());
}

TEST(SavedModelMeta, MissingOrBrokenFiles) {
  auto missing = SavedModel::Read(DataPath("tf_graphs/no_such_model"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), "saved_model.pb")) << missing.status();

  TempDir dir;
  std::ofstream(dir.path("saved_model.pb")) << "\xff\xff\xff garbage";
  auto broken = SavedModel::Read(dir.path(""));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(broken.status(), "saved_model.pb")) << broken.status();
}

// A text-format SavedModel, with an Any written in expanded form naming
// TensorFlow's type, and an asset name escaping assets/.
TEST(SavedModelMeta, TextFormat) {
  TempDir dir;
  const std::string text = R"pb(
    saved_model_schema_version: 1
    meta_graphs {
      meta_info_def { tags: "serve" tags: "gpu" }
      graph_def {
        node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
        node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "vocab" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
      }
      collection_def {
        key: "saved_model_assets"
        value {
          any_list {
            value {
              [type.googleapis.com/tensorflow.AssetFileDef] {
                tensor_info { name: "vocab:0" }
                filename: "vocab.txt"
              }
            }
          }
        }
      }
      signature_def {
        key: "serving_default"
        value {
          inputs { key: "in" value { name: "x:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
          outputs { key: "out" value { name: "y:0" dtype: DT_FLOAT } }
          method_name: "tensorflow/serving/predict"
        }
      }
    }
  )pb";
  std::ofstream(dir.path("saved_model.pbtxt")) << text;
  auto model = SavedModel::Read(dir.path(""), {"gpu", "serve"});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->signatures().at("serving_default").inputs.at("in").shape.dims(), Shape{2});
  ASSERT_EQ((*model)->assets().size(), 1u);
  EXPECT_EQ((*model)->assets()[0].tensor_name, "vocab:0");
  EXPECT_EQ((*model)->assets()[0].filename, "vocab.txt");
  EXPECT_FALSE((*model)->has_saver());
  EXPECT_FALSE((*model)->has_variables());

  // Runs without variables: nothing to restore.
  auto runtime = CpuRuntime();
  ASSERT_NE(runtime, nullptr);
  SavedModelOptions options;
  options.tags = {"serve", "gpu"};
  auto session = SavedModelSession::Load(runtime.get(), dir.path(""), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run("serving_default", {{"in", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats(out->at("out")), (std::vector<float>{1, 2}));
  // Signature errors name the signature and the keys.
  auto bad_key = (*session)->Run("serving_default", {{"nope", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}});
  ASSERT_FALSE(bad_key.ok());
  EXPECT_TRUE(Contains(bad_key.status(), "'nope'")) << bad_key.status();
  EXPECT_TRUE(Contains(bad_key.status(), "'in'")) << bad_key.status();
  auto missing = (*session)->Run("serving_default", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "needs input 'in'")) << missing.status();
  auto bad_type = (*session)->Run("serving_default", {{"in", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {1, 2})}});
  ASSERT_FALSE(bad_type.ok());
  EXPECT_TRUE(Contains(bad_type.status(), "must be float")) << bad_type.status();
  auto no_sig = (*session)->Run("predict", {});
  ASSERT_FALSE(no_sig.ok());
  EXPECT_EQ(no_sig.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(no_sig.status(), "'serving_default'")) << no_sig.status();

  // An asset outside assets/ is refused.
  std::string escaping = text;
  escaping.replace(escaping.find("vocab.txt"), 9, "../../etc/passwd");
  std::ofstream(dir.path("saved_model.pbtxt"), std::ios::trunc) << escaping;
  auto refused = SavedModel::Read(dir.path(""), {"gpu", "serve"});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.status(), "assets/")) << refused.status();
}

// --- Host ops through small graphs ------------------------------------------------------

class HostOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = CpuRuntime(); }

  absl::StatusOr<std::vector<Tensor>> Run(const std::string& graph_text,
                                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets = {}) {
    auto graph = ImportGraphDefBytes(graph_text, "<test graph>", GraphFormat::kText);
    if (!graph.ok()) return graph.status();
    auto session = Session::Create(runtime_.get(), std::shared_ptr<const Graph>(*std::move(graph)));
    if (!session.ok()) return session.status();
    return (*session)->Run(feeds, fetches, targets);
  }

  std::unique_ptr<Runtime> runtime_;
};

std::string StringConst(const std::string& name, const std::vector<std::string>& values, bool scalar) {
  std::string t = "dtype: DT_STRING tensor_shape { ";
  if (!scalar) t += "dim { size: " + std::to_string(values.size()) + " } ";
  t += "} ";
  for (const auto& v : values) t += "string_val: \"" + v + "\" ";
  return "node { name: \"" + name + "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } } " +
         "attr { key: \"value\" value { tensor { " + t + "} } } }\n";
}

std::string Placeholder(const std::string& name, const std::string& dtype) {
  return "node { name: \"" + name + "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: " + dtype + " } } }\n";
}

std::string FloatConst(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  std::string t = "dtype: DT_FLOAT tensor_shape { ";
  for (int64_t d : shape) t += "dim { size: " + std::to_string(d) + " } ";
  t += "} ";
  for (float v : values) t += "float_val: " + std::to_string(v) + " ";
  return "node { name: \"" + name + "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } " +
         "attr { key: \"value\" value { tensor { " + t + "} } } }\n";
}

// As half_plus_two_tf1 builds it: x required, x2 defaulting to 0.
std::string ParseExampleV1Graph() {
  return Placeholder("serialized", "DT_STRING") + StringConst("names", {}, false) +
         StringConst("key_x", {"x"}, true) + StringConst("key_x2", {"x2"}, true) +
         FloatConst("default_x", {0}, {}) + FloatConst("default_x2", {1}, {0.0f}) + R"pb(
    node {
      name: "parse" op: "ParseExample"
      input: "serialized" input: "names" input: "key_x" input: "key_x2" input: "default_x" input: "default_x2"
      attr { key: "Nsparse" value { i: 0 } }
      attr { key: "Ndense" value { i: 2 } }
      attr { key: "sparse_types" value { list { } } }
      attr { key: "Tdense" value { list { type: DT_FLOAT type: DT_FLOAT } } }
      attr { key: "dense_shapes" value { list { shape { dim { size: 1 } } shape { dim { size: 1 } } } } }
    })pb";
}

std::string ParseExampleV2Graph() {
  return Placeholder("serialized", "DT_STRING") + StringConst("names", {}, false) +
         StringConst("sparse_keys", {}, false) + StringConst("dense_keys", {"x", "x2"}, false) +
         StringConst("ragged_keys", {}, false) + FloatConst("default_x", {0}, {}) +
         FloatConst("default_x2", {1}, {0.0f}) + R"pb(
    node {
      name: "parse" op: "ParseExampleV2"
      input: "serialized" input: "names" input: "sparse_keys" input: "dense_keys" input: "ragged_keys"
      input: "default_x" input: "default_x2"
      attr { key: "Tdense" value { list { type: DT_FLOAT type: DT_FLOAT } } }
      attr { key: "num_sparse" value { i: 0 } }
      attr { key: "sparse_types" value { list { } } }
      attr { key: "ragged_value_types" value { list { } } }
      attr { key: "ragged_split_types" value { list { } } }
      attr { key: "dense_shapes" value { list { shape { dim { size: 1 } } shape { dim { size: 1 } } } } }
    })pb";
}

TEST_F(HostOpsTest, ParseExampleDenseFloats) {
  for (const std::string& graph : {ParseExampleV1Graph(), ParseExampleV2Graph()}) {
    std::vector<std::string> examples = ExamplesX0To3();
    examples.push_back(ExampleX1X2Is4());
    auto out = Run(graph, {{"serialized", Tensor::FromStrings({5}, examples)}}, {"parse:0", "parse:1"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{5, 1}));
    EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{0, 1, 2, 3, 1}));
    EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{0, 0, 0, 0, 4}));  // x2 defaults to 0

    // An empty batch gives [0, 1].
    auto empty = Run(graph, {{"serialized", Tensor::FromStrings({0}, {})}}, {"parse:0"});
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_EQ((*empty)[0].shape(), (Shape{0, 1}));
  }
}

TEST_F(HostOpsTest, ParseExampleErrors) {
  const std::string graph = ParseExampleV1Graph();
  // x is required.
  auto missing = Run(graph, {{"serialized", Tensor::FromStrings({1}, {""})}}, {"parse:0"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(missing.status(), "'x'")) << missing.status();
  EXPECT_TRUE(Contains(missing.status(), "required")) << missing.status();

  auto garbage = Run(graph, {{"serialized", Tensor::FromStrings({1}, {"\xff\xff\xff"})}}, {"parse:0"});
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(Contains(garbage.status(), "tf.Example")) << garbage.status();

  tf::Example wrong_type;
  (*wrong_type.mutable_features()->mutable_feature())["x"].mutable_int64_list()->add_value(3);
  auto type = Run(graph, {{"serialized", Tensor::FromStrings({1}, {wrong_type.SerializeAsString()})}}, {"parse:0"});
  ASSERT_FALSE(type.ok());
  EXPECT_TRUE(Contains(type.status(), "int64_list")) << type.status();

  tf::Example two_values;
  auto* list = (*two_values.mutable_features()->mutable_feature())["x"].mutable_float_list();
  list->add_value(1);
  list->add_value(2);
  auto count = Run(graph, {{"serialized", Tensor::FromStrings({1}, {two_values.SerializeAsString()})}}, {"parse:0"});
  ASSERT_FALSE(count.ok());
  EXPECT_TRUE(Contains(count.status(), "has 2 values")) << count.status();

  // V1 takes a vector of records.
  auto scalar = Run(graph, {{"serialized", Tensor::FromStrings({}, {ExampleX1X2Is4()})}}, {"parse:0"});
  EXPECT_FALSE(scalar.ok());
}

TEST_F(HostOpsTest, ParseExampleInt64AndStringFeatures) {
  const std::string graph = Placeholder("serialized", "DT_STRING") + StringConst("names", {}, false) +
                            StringConst("sparse_keys", {}, false) + StringConst("dense_keys", {"ids", "label"}, false) +
                            StringConst("ragged_keys", {}, false) +
                            "node { name: \"default_ids\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT64 } } "
                            "attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 0 } } } } } }\n" +
                            StringConst("default_label", {"none"}, false) + R"pb(
    node {
      name: "parse" op: "ParseExampleV2"
      input: "serialized" input: "names" input: "sparse_keys" input: "dense_keys" input: "ragged_keys"
      input: "default_ids" input: "default_label"
      attr { key: "Tdense" value { list { type: DT_INT64 type: DT_STRING } } }
      attr { key: "num_sparse" value { i: 0 } }
      attr { key: "sparse_types" value { list { } } }
      attr { key: "ragged_value_types" value { list { } } }
      attr { key: "ragged_split_types" value { list { } } }
      attr { key: "dense_shapes" value { list { shape { dim { size: 2 } } shape { dim { size: 1 } } } } }
    })pb";
  tf::Example a, b;
  auto& fa = *a.mutable_features()->mutable_feature();
  fa["ids"].mutable_int64_list()->add_value(int64_t{1} << 40);
  fa["ids"].mutable_int64_list()->add_value(-5);
  fa["label"].mutable_bytes_list()->add_value("cat");
  auto& fb = *b.mutable_features()->mutable_feature();
  fb["ids"].mutable_int64_list()->add_value(7);
  fb["ids"].mutable_int64_list()->add_value(8);
  auto out = Run(graph, {{"serialized", Tensor::FromStrings({2}, {a.SerializeAsString(), b.SerializeAsString()})}},
                 {"parse:0", "parse:1"});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& ids = (*out)[0];
  ASSERT_EQ(ids.shape(), (Shape{2, 2}));
  EXPECT_EQ(ids.data<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ(ids.data<int64_t>()[1], -5);
  EXPECT_EQ(ids.data<int64_t>()[2], 7);
  EXPECT_EQ(ids.data<int64_t>()[3], 8);
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 1}));
  EXPECT_EQ((*out)[1].strings(), (std::vector<std::string>{"cat", "none"}));
}

TEST_F(HostOpsTest, ParseExampleSparseFeatureOfAnEmptyExample) {
  const std::string graph = Placeholder("serialized", "DT_STRING") + StringConst("names", {}, false) +
                            StringConst("sparse_keys", {"s"}, false) + StringConst("dense_keys", {}, false) +
                            StringConst("ragged_keys", {}, false) + R"pb(
    node {
      name: "parse" op: "ParseExampleV2"
      input: "serialized" input: "names" input: "sparse_keys" input: "dense_keys" input: "ragged_keys"
      attr { key: "Tdense" value { list { } } }
      attr { key: "num_sparse" value { i: 1 } }
      attr { key: "sparse_types" value { list { type: DT_INT64 } } }
      attr { key: "ragged_value_types" value { list { } } }
      attr { key: "ragged_split_types" value { list { } } }
      attr { key: "dense_shapes" value { list { } } }
    })pb";
  // Sparse features are parsed (VarLenFeature): an Example without the
  // feature gives no indices, no values and the dense shape [1, 0].
  auto out = Run(graph, {{"serialized", Tensor::FromStrings({1}, {""})}}, {"parse:0", "parse:1", "parse:2"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{0, 2}));
  EXPECT_EQ((*out)[1].shape(), (Shape{0}));
  EXPECT_EQ((*out)[2].shape(), (Shape{2}));
}

TEST_F(HostOpsTest, StringOps) {
  const std::string graph = StringConst("a", {"dir"}, true) + Placeholder("names", "DT_STRING") + R"pb(
    node { name: "join" op: "StringJoin" input: "a" input: "names" input: "a"
           attr { key: "N" value { i: 3 } } attr { key: "separator" value { s: "/" } } }
    node { name: "shard" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
    node { name: "num" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 10 } } } }
    node { name: "filename" op: "ShardedFilename" input: "a" input: "shard" input: "num" }
    node { name: "filespec" op: "ShardedFilespec" input: "a" input: "num" }
    node { name: "is_s3" op: "StaticRegexFullMatch" input: "names" attr { key: "pattern" value { s: "^s3://.*" } } }
  )pb";
  auto out = Run(graph, {{"names", Tensor::FromStrings({2}, {"s3://bucket/x", "tmp"})}},
                 {"join:0", "filename:0", "filespec:0", "is_s3:0", "a:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].strings(), (std::vector<std::string>{"dir/s3://bucket/x/dir", "dir/tmp/dir"}));
  EXPECT_EQ((*out)[1].strings(), (std::vector<std::string>{"dir-00003-of-00010"}));
  EXPECT_EQ((*out)[2].strings(), (std::vector<std::string>{"dir-\?\?\?\?\?-of-00010"}));
  ASSERT_EQ((*out)[3].dtype(), DataType::kBool);
  EXPECT_TRUE((*out)[3].data<bool>()[0]);
  EXPECT_FALSE((*out)[3].data<bool>()[1]);
  EXPECT_EQ((*out)[4].dims(), 0);
  EXPECT_EQ((*out)[4].strings(), (std::vector<std::string>{"dir"}));

  // Non-scalar StringJoin inputs must agree.
  const std::string mismatch = Placeholder("p", "DT_STRING") + Placeholder("q", "DT_STRING") + R"pb(
    node { name: "join" op: "StringJoin" input: "p" input: "q" attr { key: "N" value { i: 2 } } })pb";
  auto bad = Run(mismatch, {{"p", Tensor::FromStrings({2}, {"a", "b"})}, {"q", Tensor::FromStrings({3}, {"a", "b", "c"})}},
                 {"join:0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);

  const std::string bad_regex = Placeholder("p", "DT_STRING") + R"pb(
    node { name: "m" op: "StaticRegexFullMatch" input: "p" attr { key: "pattern" value { s: "(" } } })pb";
  auto regex = Run(bad_regex, {{"p", Tensor::FromStrings({}, {"x"})}}, {"m:0"});
  ASSERT_FALSE(regex.ok());
  EXPECT_TRUE(Contains(regex.status(), "invalid pattern")) << regex.status();
}

TEST_F(HostOpsTest, PackAndSelectOfStrings) {
  const std::string graph = Placeholder("p", "DT_STRING") + Placeholder("q", "DT_STRING") +
                            Placeholder("c", "DT_BOOL") + R"pb(
    node { name: "pack0" op: "Pack" input: "p" input: "q"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_STRING } } }
    node { name: "pack1" op: "Pack" input: "p" input: "q"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_STRING } } attr { key: "axis" value { i: -1 } } }
    node { name: "select" op: "Select" input: "c" input: "p" input: "q" attr { key: "T" value { type: DT_STRING } } }
  )pb";
  auto out = Run(graph,
                 {{"p", Tensor::FromStrings({2}, {"a", "b"})},
                  {"q", Tensor::FromStrings({2}, {"x", "y"})},
                  {"c", Tensor::FromVector<bool>(DataType::kBool, {2}, {false, true})}},
                 {"pack0:0", "pack1:0", "select:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ((*out)[0].strings(), (std::vector<std::string>{"a", "b", "x", "y"}));
  EXPECT_EQ((*out)[1].strings(), (std::vector<std::string>{"a", "x", "b", "y"}));
  EXPECT_EQ((*out)[2].strings(), (std::vector<std::string>{"x", "b"}));
}

TEST_F(HostOpsTest, SaveRestoreAndMergeThroughOps) {
  TempDir dir;
  // As a TensorFlow 1 sharded Saver does: SaveV2 into a temporary prefix,
  // then MergeV2Checkpoints into the final one.
  const std::string save_graph = Placeholder("tmp_prefix", "DT_STRING") + Placeholder("prefix", "DT_STRING") +
                                 Placeholder("sources", "DT_STRING") +
                                 StringConst("names", {"b", "a"}, false) + StringConst("slices", {"", ""}, false) +
                                 FloatConst("value_b", {2}, {1.5f, -2.0f}) + StringConst("value_a", {"hello"}, true) + R"pb(
    node { name: "save" op: "SaveV2" input: "tmp_prefix" input: "names" input: "slices" input: "value_b" input: "value_a"
           attr { key: "dtypes" value { list { type: DT_FLOAT type: DT_STRING } } } }
    node { name: "merge_all" op: "MergeV2Checkpoints" input: "sources" input: "prefix" input: "^save"
           attr { key: "delete_old_dirs" value { b: true } } }
  )pb";
  const std::string tmp = dir.path("model_temp/part-00000-of-00001");
  const std::string prefix = dir.path("model");
  auto saved = Run(save_graph,
                   {{"tmp_prefix", Tensor::FromStrings({}, {tmp})},
                    {"sources", Tensor::FromStrings({1}, {tmp})},
                    {"prefix", Tensor::FromStrings({}, {prefix})}},
                   {}, {"merge_all"});
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(CheckpointExists(prefix));
  EXPECT_FALSE(fs::exists(dir.path("model_temp")));

  const std::string restore_graph = Placeholder("prefix", "DT_STRING") + StringConst("names", {"a", "b"}, false) +
                                    StringConst("slices", {"", ""}, false) + R"pb(
    node { name: "restore" op: "RestoreV2" input: "prefix" input: "names" input: "slices"
           attr { key: "dtypes" value { list { type: DT_STRING type: DT_FLOAT } } } })pb";
  auto restored = Run(restore_graph, {{"prefix", Tensor::FromStrings({}, {prefix})}}, {"restore:0", "restore:1"});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ((*restored)[0].strings(), (std::vector<std::string>{"hello"}));
  EXPECT_EQ(Floats((*restored)[1]), (std::vector<float>{1.5f, -2.0f}));

  // A dtype that does not match the checkpoint.
  std::string wrong = restore_graph;
  wrong.replace(wrong.find("DT_STRING type: DT_FLOAT"), 24, "DT_FLOAT type: DT_FLOAT");
  auto mismatch = Run(wrong, {{"prefix", Tensor::FromStrings({}, {prefix})}}, {"restore:0"});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_TRUE(Contains(mismatch.status(), "'a'")) << mismatch.status();
  // A missing checkpoint names the prefix.
  auto gone = Run(restore_graph, {{"prefix", Tensor::FromStrings({}, {dir.path("nothing")})}}, {"restore:0"});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(gone.status(), "nothing.index")) << gone.status();
  // Slices are not supported.
  std::string sliced = restore_graph;
  sliced.replace(sliced.find("string_val: \"\" string_val: \"\""), 30, "string_val: \"2 0,1\" string_val: \"\"");
  auto slice = Run(sliced, {{"prefix", Tensor::FromStrings({}, {prefix})}}, {"restore:0"});
  ASSERT_FALSE(slice.ok());
  EXPECT_EQ(slice.status().code(), absl::StatusCode::kUnimplemented);
}

// BroadcastGradientArgs: TensorFlow's reduction indices of a broadcast's
// gradient (tensorflow/core/util/bcast.h).
TEST_F(HostOpsTest, BroadcastGradientArgs) {
  for (const char* dtype : {"DT_INT32", "DT_INT64"}) {
    const bool is64 = std::string(dtype) == "DT_INT64";
    const std::string graph = Placeholder("s0", dtype) + Placeholder("s1", dtype) +
                              "node { name: \"args\" op: \"BroadcastGradientArgs\" input: \"s0\" input: \"s1\" "
                              "attr { key: \"T\" value { type: " + dtype + " } } }\n";
    auto vec = [&](const std::vector<int64_t>& v) {
      const Shape shape{static_cast<int64_t>(v.size())};
      return is64 ? Tensor::FromVector<int64_t>(DataType::kInt64, shape, v)
                  : Tensor::FromVector<int32_t>(DataType::kInt32, shape, std::vector<int32_t>(v.begin(), v.end()));
    };
    auto values = [&](const Tensor& t) {
      EXPECT_EQ(t.dtype(), is64 ? DataType::kInt64 : DataType::kInt32);
      EXPECT_EQ(t.dims(), 1);
      std::vector<int64_t> out;
      for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(is64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
      return out;
    };
    struct Case {
      std::vector<int64_t> s0, s1, r0, r1;
    };
    const std::vector<Case> cases = {
        {{3}, {1}, {}, {0}},                  // the regression model's w * x gradient
        {{1}, {3}, {0}, {}},
        {{2, 3, 5}, {1}, {}, {0, 1, 2}},      // the shorter shape is padded with leading 1s
        {{2, 1, 5}, {3, 1}, {1}, {0, 2}},     // both sides broadcast
        {{}, {4, 2}, {0, 1}, {}},             // a scalar
        {{1, 1}, {1}, {0, 1}, {0, 1}},        // dimensions of 1 in both are reduced in both
        {{2, 1}, {2, 1}, {}, {}},             // identical shapes need no reduction
        {{1}, {1}, {}, {}},
        {{0, 3}, {1, 3}, {}, {0}},            // zero-size dimensions broadcast against 1
        {{}, {}, {}, {}},
    };
    for (const Case& c : cases) {
      auto out = Run(graph, {{"s0", vec(c.s0)}, {"s1", vec(c.s1)}}, {"args:0", "args:1"});
      ASSERT_TRUE(out.ok()) << dtype << ": " << out.status();
      EXPECT_EQ(values((*out)[0]), c.r0) << dtype << " case " << (&c - cases.data());
      EXPECT_EQ(values((*out)[1]), c.r1) << dtype << " case " << (&c - cases.data());
    }
    auto incompatible = Run(graph, {{"s0", vec({2, 3})}, {"s1", vec({4})}}, {"args:0"});
    ASSERT_FALSE(incompatible.ok());
    EXPECT_EQ(incompatible.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(incompatible.status(), "Incompatible shapes: [2,3] vs. [4]")) << incompatible.status();
    auto negative = Run(graph, {{"s0", vec({-1})}, {"s1", vec({4})}}, {"args:0"});
    ASSERT_FALSE(negative.ok());
    EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(negative.status(), "negative dimension")) << negative.status();
    const Tensor matrix = is64 ? Tensor::FromVector<int64_t>(DataType::kInt64, {1, 2}, {1, 2})
                               : Tensor::FromVector<int32_t>(DataType::kInt32, {1, 2}, {1, 2});
    auto not_vector = Run(graph, {{"s0", matrix}, {"s1", vec({2})}}, {"args:0"});
    ASSERT_FALSE(not_vector.ok());
    EXPECT_EQ(not_vector.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(not_vector.status(), "s0 must be a vector")) << not_vector.status();
  }
}

// --- SavedModels end to end ------------------------------------------------------------

class SavedModelRun : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = CpuRuntime(); }
  std::unique_ptr<SavedModelSession> Load(const char* dir) {
    auto loaded = SavedModelSession::Load(runtime_.get(), DataPath(dir));
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? *std::move(loaded) : nullptr;
  }
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(SavedModelRun, HalfPlusTwoTf1) {
  auto model = Load(kTf1);
  ASSERT_NE(model, nullptr);
  // x:0 is an Identity, fed like a placeholder.
  auto y = model->Run("serving_default", {{"x", Tensor::FromVector<float>(DataType::kFloat, {3, 1}, {1, 2, 5})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->at("y").shape(), (Shape{3, 1}));
  EXPECT_EQ(Floats(y->at("y")), (std::vector<float>{2.5f, 3.0f, 4.5f}));

  auto regress = model->Run("regress_x_to_y", {{"inputs", Tensor::FromStrings({4}, ExamplesX0To3())}});
  ASSERT_TRUE(regress.ok()) << regress.status();
  EXPECT_EQ(Floats(regress->at("outputs")), (std::vector<float>{2.0f, 2.5f, 3.0f, 3.5f}));
  auto classify = model->Run("classify_x_to_y", {{"inputs", Tensor::FromStrings({4}, ExamplesX0To3())}});
  ASSERT_TRUE(classify.ok()) << classify.status();
  EXPECT_EQ(Floats(classify->at("scores")), (std::vector<float>{2.0f, 2.5f, 3.0f, 3.5f}));
  auto y2 = model->Run("regress_x_to_y2", {{"inputs", Tensor::FromStrings({1}, {ExampleX1X2Is4()})}});
  ASSERT_TRUE(y2.ok()) << y2.status();
  EXPECT_EQ(Floats(y2->at("outputs")), (std::vector<float>{3.5f}));
  auto y3 = model->Run("regress_x2_to_y3", {{"inputs", Tensor::FromVector<float>(DataType::kFloat, {1, 1}, {4})}});
  ASSERT_TRUE(y3.ok()) << y3.status();
  EXPECT_EQ(Floats(y3->at("outputs")), (std::vector<float>{5.0f}));
}

TEST_F(SavedModelRun, CounterTf1KeepsStateAcrossRuns) {
  auto model = Load(kCounter);
  ASSERT_NE(model, nullptr);
  auto value = [&](const std::string& key, std::map<std::string, Tensor> inputs = {}) -> float {
    auto out = model->Run(key, inputs);
    EXPECT_TRUE(out.ok()) << key << ": " << out.status();
    if (!out.ok() || out->size() != 1) return -1;
    std::vector<float> v = Floats(out->begin()->second);
    return v.size() == 1 ? v[0] : -1;
  };
  EXPECT_EQ(value("get_counter"), 0.0f);
  EXPECT_EQ(value("incr_counter"), 1.0f);
  EXPECT_EQ(value("incr_counter"), 2.0f);
  EXPECT_EQ(value("incr_counter_by", {{"delta", Tensor::FromVector<float>(DataType::kFloat, {}, {3})}}), 5.0f);
  EXPECT_EQ(value("get_counter"), 5.0f);
  EXPECT_EQ(value("reset_counter"), 0.0f);
  EXPECT_EQ(value("get_counter"), 0.0f);
}

// Runs the SaverDef's save path (feed a prefix, fetch save_tensor_name) and
// reads the checkpoint it wrote.
std::unique_ptr<CheckpointReader> SaveThroughGraph(SavedModelSession& model, const std::string& prefix) {
  const SaverInfo& saver = model.model().saver();
  auto out = model.session().Run({{saver.filename_tensor_name, Tensor::FromStrings({}, {prefix})}},
                                 {saver.save_tensor_name});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return nullptr;
  auto reader = CheckpointReader::Open(prefix);
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? *std::move(reader) : nullptr;
}

float FloatAt(const CheckpointReader& reader, const std::string& key) {
  auto t = reader.Read(key);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() && t->dtype() == DataType::kFloat ? *t->data<float>() : NAN;
}

TEST_F(SavedModelRun, Tf1SaverWritesTheVariables) {
  TempDir dir;
  auto model = Load(kCounter);
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->Run("incr_counter_by", {{"delta", Tensor::FromVector<float>(DataType::kFloat, {}, {7})}}).ok());
  auto reader = SaveThroughGraph(*model, dir.path("counter"));
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(FloatAt(*reader, "counter"), 7.0f);

  auto half = Load(kTf1);
  ASSERT_NE(half, nullptr);
  reader = SaveThroughGraph(*half, dir.path("half/model"));
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(FloatAt(*reader, "a"), 0.5f);
  EXPECT_EQ(FloatAt(*reader, "b"), 2.0f);
  EXPECT_EQ(FloatAt(*reader, "c2"), 3.0f);
}

TEST_F(SavedModelRun, Tf2SaverWritesTheVariables) {
  TempDir dir;
  auto model = Load(kTf2);
  ASSERT_NE(model, nullptr);
  auto reader = SaveThroughGraph(*model, dir.path("model"));
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(FloatAt(*reader, "a/.ATTRIBUTES/VARIABLE_VALUE"), 0.5f);
  EXPECT_EQ(FloatAt(*reader, "b/.ATTRIBUTES/VARIABLE_VALUE"), 2.0f);
  EXPECT_EQ(FloatAt(*reader, "c/.ATTRIBUTES/VARIABLE_VALUE"), 3.0f);
  EXPECT_NE(reader->Find("_CHECKPOINTABLE_OBJECT_GRAPH"), nullptr);
}

TEST_F(SavedModelRun, HalfPlusTwoTf2) {
  auto model = Load(kTf2);
  ASSERT_NE(model, nullptr);
  auto y = model->Run("serving_default", {{"x", Tensor::FromVector<float>(DataType::kFloat, {1}, {3.0f})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Floats(y->at("y")), (std::vector<float>{3.5f}));
  auto y3 = model->Run("regress_x2_to_y3", {{"inputs", Tensor::FromVector<float>(DataType::kFloat, {1}, {4.0f})}});
  ASSERT_TRUE(y3.ok()) << y3.status();
  EXPECT_EQ(Floats(y3->at("outputs")), (std::vector<float>{5.0f}));
  auto regress = model->Run("regress_x_to_y", {{"inputs", Tensor::FromStrings({4}, ExamplesX0To3())}});
  ASSERT_TRUE(regress.ok()) << regress.status();
  EXPECT_EQ(Floats(regress->at("outputs")), (std::vector<float>{2.0f, 2.5f, 3.0f, 3.5f}));
}

// The value of SGD's int64 step counter, read from a checkpoint written
// through the model's own save path.
int64_t SgdIterations(SavedModelSession& model, const std::string& prefix) {
  auto reader = SaveThroughGraph(model, prefix);
  if (reader == nullptr) return -1;
  auto t = reader->Read("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return -1;
  EXPECT_EQ(t->dtype(), DataType::kInt64);
  EXPECT_EQ(t->num_elements(), 1);
  return t->dtype() == DataType::kInt64 && t->num_elements() == 1 ? *t->data<int64_t>() : -1;
}

// A Keras SGD step (learning rate 0.5) on y_hat = w*x + b with a mean squared
// error loss: the gradient functions inside the function library
// (BroadcastGradientArgs, Sum over its reduction indices, Reshape, ...) and
// ResourceApplyGradientDescent / AssignAddVariableOp on resource variables.
TEST_F(SavedModelRun, RegressionTf2Train) {
  TempDir dir;
  auto scalar = [](const Tensor& t) { return t.num_elements() == 1 ? Floats(t)[0] : NAN; };
  auto variable = [&](SavedModelSession& m, const std::string& key) -> float {
    auto out = m.Run(key, {});
    EXPECT_TRUE(out.ok()) << key << ": " << out.status();
    if (!out.ok() || out->size() != 1) return NAN;
    EXPECT_EQ(out->begin()->second.shape(), Shape{1});
    return scalar(out->begin()->second);
  };
  const std::map<std::string, Tensor> batch = {{"x", Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3})},
                                               {"y", Tensor::FromVector<float>(DataType::kFloat, {3}, {3, 5, 7})}};
  // Reference values in float32 (MANIFEST): {loss, w after, b after} for two
  // identical steps. Relative tolerance 1e-5: float32 with a summation order
  // that may differ from TensorFlow's.
  const float expected[2][3] = {{23.2306976f, 10.5842419f, 4.59140491f}, {480.099121f, -36.6583633f, -16.1684837f}};
  auto near = [](float got, float want) { return std::abs(got - want) <= 1e-5f * std::abs(want); };
  int saves = 0;
  // Runs the steps on `model`, its state as loaded.
  auto train = [&](SavedModelSession& model) {
    EXPECT_FLOAT_EQ(variable(model, "w"), 0.204297543f);  // checkpoint bytes 6033513e
    EXPECT_EQ(variable(model, "b"), 0.0f);
    EXPECT_EQ(SgdIterations(model, dir.path("iter" + std::to_string(saves++))), 0);
    for (int step = 0; step < 2; ++step) {
      const float* e = expected[step];
      auto out = model.Run("train", batch);
      ASSERT_TRUE(out.ok()) << "step " << step << ": " << out.status();
      ASSERT_EQ(out->count("loss"), 1u);
      EXPECT_EQ(out->at("loss").dims(), 0);
      const float loss = scalar(out->at("loss"));
      EXPECT_TRUE(near(loss, e[0])) << "step " << step << ": loss " << loss << ", expected " << e[0];
      const float w = variable(model, "w");
      const float b = variable(model, "b");
      EXPECT_TRUE(near(w, e[1])) << "step " << step << ": w " << w << ", expected " << e[1];
      EXPECT_TRUE(near(b, e[2])) << "step " << step << ": b " << b << ", expected " << e[2];
      EXPECT_EQ(SgdIterations(model, dir.path("iter" + std::to_string(saves++))), step + 1);
    }
  };

  auto model = Load(kRegression);
  ASSERT_NE(model, nullptr);
  train(*model);
  // A fresh load starts over from the checkpoint, while the first model keeps
  // its own, separate state.
  auto fresh = Load(kRegression);
  ASSERT_NE(fresh, nullptr);
  train(*fresh);
  EXPECT_TRUE(near(variable(*model, "w"), expected[1][1]));
  EXPECT_TRUE(near(variable(*model, "b"), expected[1][2]));
  EXPECT_EQ(SgdIterations(*model, dir.path("iter_first")), 2);

  // Wrong inputs are refused with the signature's key in the message.
  auto missing = model->Run("train", {{"x", batch.at("x")}});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "needs input 'y'")) << missing.status();
}

}  // namespace
}  // namespace plexus
