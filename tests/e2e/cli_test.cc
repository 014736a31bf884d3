// The plexus command-line tool, run as a user would.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/wait.h>

#include "gtest/gtest.h"
#include "plexus/op_def.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

Result RunCli(const std::string& args) {
  std::string command = std::string("PLEXUS_PLUGIN_PATH= '") + PX_CLI_PATH + "' " + args + " 2>&1";
  Result result{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string Data(const std::string& relative) { return testing::DataPath(relative); }

std::string TempDir() {
  std::string dir = ::testing::TempDir() + "/plexus_cli_test";
  std::system(("mkdir -p '" + dir + "'").c_str());
  return dir;
}

TEST(Cli, Devices) {
  Result r = RunCli("devices");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plugin cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ABI 0.8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device CPU:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("preferred layout NHWC"), std::string::npos) << r.output;
  Result broken = RunCli(std::string("devices --plugin ") + testing::TestPluginPath("wrong_major"));
  EXPECT_EQ(broken.exit_code, 0) << broken.output;
  EXPECT_NE(broken.output.find("refused:"), std::string::npos) << broken.output;
  EXPECT_NE(broken.output.find("major versions differ"), std::string::npos) << broken.output;
}

TEST(Cli, RunWritesNpyOutputs) {
  std::string dir = TempDir();
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3});
  PX_ASSERT_OK(WriteNpy(dir + "/x.npy", x));
  Result r = RunCli("run " + Data("tf_graphs/regression_frozen/frozen.pb") + " --input X=" + dir +
                    "/x.npy --output pred:0 --output W/read --device cpu:0 --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on CPU:0"), std::string::npos) << r.output;
  auto pred = ReadNpy(dir + "/pred_0.npy");
  ASSERT_TRUE(pred.ok()) << pred.status();
  EXPECT_NEAR(pred->data<float>()[2], 1.6914107f, 1e-6);
  auto w = ReadNpy(dir + "/W_read.npy");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_NEAR(w->data<float>()[0], 0.21396178f, 1e-7);
}

// The .npy files hold the same dtype, shape and bytes.
void ExpectSameNpy(const std::string& actual_path, const std::string& expected_path) {
  auto actual = ReadNpy(actual_path);
  auto expected = ReadNpy(expected_path);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(actual->dtype(), expected->dtype()) << actual_path;
  ASSERT_EQ(actual->shape(), expected->shape()) << actual_path;
  EXPECT_EQ(std::memcmp(actual->raw_data(), expected->raw_data(), expected->nbytes()), 0) << actual_path;
}

// tests/tf_zoo/make_text_models.py: Keras text preprocessing, whose
// StringLookup reads the SavedModel's vocabulary asset.
TEST(Cli, RunsAKerasTextSavedModelWithItsVocabularyAsset) {
  std::string dir = TempDir() + "/keras3_text_saved";
  const std::string base = Data("tf_graphs/keras3_text");
  Result r = RunCli("run " + base + "/saved_model --input inputs_1=" + base + "/text.npy --input inputs=" + base +
                    "/codes.npy --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"word_multi_hot", "hashed", "code_ids", "code_counts"}) {
    ExpectSameNpy(dir + "/" + name + ".npy", base + "/saved_model_" + name + ".npy");
  }
}

TEST(Cli, RunsAFrozenTextGraphAfterItsTableInitializer) {
  if (OpRegistry::Global().Find("Cumsum") == nullptr) GTEST_SKIP() << "the graph needs the Cumsum op";
  std::string dir = TempDir() + "/keras3_text_frozen";
  const std::string base = Data("tf_graphs/keras3_text");
  const std::string run = "run " + base + "/frozen.pb --input text=" + base + "/text.npy --input words=" + base +
                          "/words.npy --input codes=" + base + "/codes.npy --output tokens --output word_ids " +
                          "--output salted --output code_counts --out " + dir;
  Result r = RunCli(run + " --init init_all_tables");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"tokens", "word_ids", "salted", "code_counts"}) {
    ExpectSameNpy(dir + "/" + name + ".npy", base + "/frozen_" + name + ".npy");
  }
  Result uninitialized = RunCli(run);
  EXPECT_NE(uninitialized.exit_code, 0) << uninitialized.output;
  EXPECT_NE(uninitialized.output.find("Table not initialized"), std::string::npos) << uninitialized.output;
}

TEST(Cli, MemoryStatsShowTheSchedulerThePlanAndThePools) {
  std::string dir = TempDir();
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3});
  PX_ASSERT_OK(WriteNpy(dir + "/x.npy", x));
  Result r = RunCli("run " + Data("tf_graphs/regression_frozen/frozen.pb") + " --input X=" + dir +
                    "/x.npy --output pred:0 --device cpu:0 --memory-stats --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("executor: serial scheduler, 0 copy items"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("memory plan: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("memory pool CPU:0: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("threads: "), std::string::npos) << r.output;
}

TEST(Cli, ThreadsSetsEachKernelsBudget) {
  std::string dir = TempDir();
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3});
  PX_ASSERT_OK(WriteNpy(dir + "/x.npy", x));
  const std::string run = "run " + Data("tf_graphs/regression_frozen/frozen.pb") + " --input X=" + dir +
                          "/x.npy --output pred:0 --memory-stats";
  Result r = RunCli(run + " --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 1 per kernel in the last run"), std::string::npos) << r.output;
  Result bad = RunCli(run + " --threads 0");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--threads needs a count of 1 or more"), std::string::npos) << bad.output;
}

// A loop of two billion iterations (the functional While counting up to 10
// from -2e9) stops at --timeout with status 1, in about that time.
TEST(Cli, TimeoutStopsALongRun) {
  std::string dir = TempDir();
  PX_ASSERT_OK(WriteNpy(dir + "/start.npy", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {-2000000000})));
  const std::string run = "run " + Data("tf_graphs/pbtxt_graphs/functional_while.pbtxt") + " --input input=" +
                          dir + "/start.npy --output while:0";
  auto start = std::chrono::steady_clock::now();
  Result r = RunCli(run + " --timeout 0.5");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("took longer than --timeout 0.5 s and was stopped"), std::string::npos) << r.output;
  EXPECT_LT(seconds, 30);
  PX_ASSERT_OK(WriteNpy(dir + "/start.npy", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {3})));
  Result quick = RunCli(run + " --timeout 60");
  EXPECT_EQ(quick.exit_code, 0) << quick.output;
  Result bad = RunCli(run + " --timeout 0");
  EXPECT_NE(bad.output.find("--timeout needs a number of seconds above 0"), std::string::npos) << bad.output;
}

TEST(Cli, PlacementPrintsEveryNodeAndASummary) {
  std::string dir = TempDir();
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3});
  PX_ASSERT_OK(WriteNpy(dir + "/x.npy", x));
  Result r = RunCli("run " + Data("tf_graphs/regression_frozen/frozen.pb") + " --input X=" + dir +
                    "/x.npy --output pred:0 --device cpu:0 --placement");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(op "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CPU:0, kernel of plugin 'cpu'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nsummary: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("copies across devices"), std::string::npos) << r.output;
  // A SavedModel signature too.
  PX_ASSERT_OK(WriteNpy(dir + "/x_sm.npy", Tensor::FromVector<float>(DataType::kFloat, {3, 1}, {1, 2, 5})));
  Result sm = RunCli("run " + Data("tf_graphs/half_plus_two_tf1/00000123") + " --input x=" + dir +
                     "/x_sm.npy --output y --placement");
  ASSERT_EQ(sm.exit_code, 0) << sm.output;
  EXPECT_NE(sm.output.find("kernel of plugin 'cpu'"), std::string::npos) << sm.output;
  EXPECT_NE(sm.output.find("\nsummary: "), std::string::npos) << sm.output;
}

// String inputs from NumPy's 'S' files, and --out making its folder.
TEST(Cli, StringNpyInputsAndAnOutFolderItMakes) {
  std::string dir = TempDir();
  // Serialized tf.Example protos with feature x = 1 and 2 (the MANIFEST's).
  // NumPy's 'S' strings lose trailing NUL bytes (x = 0 would end in four),
  // as they do in NumPy itself.
  const std::string x1("\x0a\x0f\x0a\x0d\x0a\x01\x78\x12\x08\x12\x06\x0a\x04\x00\x00\x80\x3f", 17);
  const std::string x2("\x0a\x0f\x0a\x0d\x0a\x01\x78\x12\x08\x12\x06\x0a\x04\x00\x00\x00\x40", 17);
  PX_ASSERT_OK(WriteNpy(dir + "/examples.npy", Tensor::FromStrings({2}, {x1, x2})));
  const std::string out = dir + "/made/by/plexus";
  Result r = RunCli("run " + Data("tf_graphs/half_plus_two_tf1/00000123") +
                    " --signature regress_x_to_y --input inputs=" + dir + "/examples.npy --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto y = ReadNpy(out + "/outputs.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->num_elements(), 2);
  EXPECT_EQ(y->data<float>()[0], 2.5f);
  EXPECT_EQ(y->data<float>()[1], 3.0f);
}

// `plexus ops --missing`: what a graph needs that nothing here runs, found
// without importing the graph (which would refuse it).
TEST(Cli, OpsMissingListsWhatCannotRun) {
  std::string dir = TempDir();
  const std::string graph = dir + "/missing.pbtxt";
  {
    std::ofstream f(graph);
    f << R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
              node { name: "a" op: "NoSuchOpAnywhere" input: "x" }
              node { name: "b" op: "NoSuchOpAnywhere" input: "a" }
              node { name: "c" op: "Relu" input: "b" attr { key: "T" value { type: DT_FLOAT } } })pb";
  }
  Result r = RunCli("ops --missing " + graph);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("1 op(s) of " + graph + " cannot run here"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NoSuchOpAnywhere: Plexus has no such op (2 nodes, e.g. node 'a')"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Relu"), std::string::npos) << r.output;
  Result fine = RunCli("ops --missing " + Data("tf_graphs/regression_frozen/frozen.pb"));
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
  EXPECT_NE(fine.output.find("can run here"), std::string::npos) << fine.output;
  Result saved = RunCli("ops --missing " + Data("tf_graphs/half_plus_two_tf1/00000123"));
  EXPECT_EQ(saved.exit_code, 0) << saved.output;
  Result nothing = RunCli("ops --missing " + dir + "/no_such_graph.pb");
  EXPECT_NE(nothing.exit_code, 0);
  EXPECT_NE(nothing.output.find("no_such_graph.pb"), std::string::npos) << nothing.output;
}

TEST(Cli, RunsASavedModelSignature) {
  std::string dir = TempDir();
  PX_ASSERT_OK(WriteNpy(dir + "/x_sm.npy", Tensor::FromVector<float>(DataType::kFloat, {3, 1}, {1, 2, 5})));
  const std::string model = Data("tf_graphs/half_plus_two_tf1/00000123");
  // Defaults: tag serve, signature serving_default; keys, not tensor names.
  Result r = RunCli("run " + model + " --input x=" + dir + "/x_sm.npy --output y --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("signature 'serving_default'"), std::string::npos) << r.output;
  auto y = ReadNpy(dir + "/y.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->shape(), (Shape{3, 1}));
  EXPECT_EQ(y->data<float>()[0], 2.5f);  // exact: 0.5 * x + 2
  EXPECT_EQ(y->data<float>()[1], 3.0f);
  EXPECT_EQ(y->data<float>()[2], 4.5f);

  // Explicit signature and tag; no --output prints every output.
  Result y3 = RunCli("run " + model + " --signature regress_x2_to_y3 --tag serve --input inputs=" + dir +
                     "/x_sm.npy");
  ASSERT_EQ(y3.exit_code, 0) << y3.output;
  EXPECT_NE(y3.output.find("outputs: float [3,1] {3.5, 4, 5.5}"), std::string::npos) << y3.output;

  // Errors: an unknown signature lists them; a tag set that is not there.
  Result bad_sig = RunCli("run " + model + " --signature nope --input x=" + dir + "/x_sm.npy");
  EXPECT_EQ(bad_sig.exit_code, 1);
  EXPECT_NE(bad_sig.output.find("'nope'"), std::string::npos) << bad_sig.output;
  EXPECT_NE(bad_sig.output.find("regress_x_to_y"), std::string::npos) << bad_sig.output;
  Result bad_key = RunCli("run " + model + " --input z=" + dir + "/x_sm.npy --output y");
  EXPECT_EQ(bad_key.exit_code, 1);
  EXPECT_NE(bad_key.output.find("'z'"), std::string::npos) << bad_key.output;
  Result bad_tag = RunCli("run " + model + " --tag gpu --output y");
  EXPECT_EQ(bad_tag.exit_code, 1);
  EXPECT_NE(bad_tag.output.find("serve"), std::string::npos) << bad_tag.output;
  Result not_saved_model = RunCli("run " + Data("tf_graphs/addition_tf2/model.pb") + " --signature x --output z");
  EXPECT_EQ(not_saved_model.exit_code, 2);
  EXPECT_NE(not_saved_model.output.find("SavedModel"), std::string::npos) << not_saved_model.output;
}

TEST(Cli, FeedsAFileAsAStringScalar) {
  std::string dir = TempDir();
  // The full keyword-spotting pipeline: WAV bytes -> DecodeWav -> ... -> Softmax.
  Result r = RunCli("run " + Data("tf_graphs/kws_cnn/CNN_S.pb") + " --input wav_data:0=@" +
                    Data("tf_graphs/kws_cnn/silence.wav") + " --output labels_softmax:0 --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ReadNpy(dir + "/labels_softmax_0.npy");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->shape(), (Shape{1, 12}));
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += p->data<float>()[i];
  EXPECT_NEAR(sum, 1.0, 1e-5);

  Result missing = RunCli("run " + Data("tf_graphs/kws_cnn/CNN_S.pb") +
                          " --input wav_data:0=@/nonexistent/a.wav --output labels_softmax:0");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("/nonexistent/a.wav"), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find("input 'wav_data:0'"), std::string::npos) << missing.output;
}

TEST(Cli, ErrorsNameTheThing) {
  std::string dir = TempDir();
  Result missing_graph = RunCli("run /nonexistent/g.pb --output z");
  EXPECT_EQ(missing_graph.exit_code, 1);
  EXPECT_NE(missing_graph.output.find("/nonexistent/g.pb"), std::string::npos) << missing_graph.output;

  std::ofstream(dir + "/junk.pb") << "this is not a graph {";
  Result junk = RunCli("run " + dir + "/junk.pb --output z");
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_NE(junk.output.find("junk.pb"), std::string::npos) << junk.output;

  Result unknown_node = RunCli("run " + Data("tf_graphs/addition_tf2/model.pb") + " --output nope");
  EXPECT_EQ(unknown_node.exit_code, 1);
  EXPECT_NE(unknown_node.output.find("'nope'"), std::string::npos) << unknown_node.output;

  PX_ASSERT_OK(WriteNpy(dir + "/f.npy", Tensor::FromVector<float>(DataType::kFloat, {}, {2})));
  Result wrong_dtype = RunCli("run " + Data("tf_graphs/addition_tf2/model.pb") + " --input x=" + dir +
                              "/f.npy --input y=" + dir + "/f.npy --output z");
  EXPECT_EQ(wrong_dtype.exit_code, 1);
  EXPECT_NE(wrong_dtype.output.find("feed 'x:0' has dtype float"), std::string::npos) << wrong_dtype.output;

  PX_ASSERT_OK(WriteNpy(dir + "/wide.npy", *Tensor::AllocateHost(DataType::kFloat, {1, 5})));
  Result wrong_shape = RunCli("run " + Data("tf_graphs/mlp_fc_layers/frozen.pb") + " --input X=" + dir +
                              "/wide.npy --output output");
  EXPECT_EQ(wrong_shape.exit_code, 1);
  EXPECT_NE(wrong_shape.output.find("[1,5]"), std::string::npos) << wrong_shape.output;

  Result bad_input_file = RunCli("run " + Data("tf_graphs/addition_tf2/model.pb") +
                                 " --input x=/nonexistent/x.npy --output z");
  EXPECT_EQ(bad_input_file.exit_code, 1);
  EXPECT_NE(bad_input_file.output.find("input 'x'"), std::string::npos) << bad_input_file.output;

  Result usage = RunCli("run");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.output.find("usage"), std::string::npos);
}

}  // namespace
}  // namespace plexus
