// A Keras 3 model saved with tf.saved_model.save (tests/tf_zoo/
// make_keras3_savedmodel.py): its checkpoint keys are nested object-graph
// paths and its restore op writes other variable handles than the serving
// signature reads, so the variables come through the object graph
// (core/src/persist/object_graph_restore.h). Compared with TensorFlow's own
// output for the same input.
#include <cmath>

#include <gtest/gtest.h>

#include "plexus/checkpoint.h"
#include "plexus/npy.h"
#include "plexus/saved_model.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;
using ::plexus::testing::DataPath;

constexpr char kDir[] = "tf_graphs/keras3_saved_model";

TEST(KerasSavedModel, NestedCheckpointKeysRestoreThroughTheObjectGraph) {
  const std::string dir = DataPath(kDir);
  // The data is what this test is about: nested keys, no variable names.
  auto reader = CheckpointReader::Open(dir + "/saved_model/variables/variables");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_NE((*reader)->Find("_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE"), nullptr);
  EXPECT_EQ((*reader)->Find("Conv1/kernel"), nullptr);

  auto runtime = CpuRuntime();
  auto model = SavedModelSession::Load(runtime.get(), dir + "/saved_model");
  ASSERT_TRUE(model.ok()) << model.status();
  auto image = ReadNpy(dir + "/image.npy");
  ASSERT_TRUE(image.ok()) << image.status();
  auto expected = ReadNpy(dir + "/expected.npy");
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto out = (*model)->Run("serving_default", {{"inputs", *image}});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& got = out->at("output_0");
  ASSERT_EQ(got.shape(), expected->shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    // Float32 convolution, batch norm and dense layers: within 1e-5 of
    // TensorFlow's CPU result.
    EXPECT_NEAR(got.data<float>()[i], expected->data<float>()[i], 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace plexus
