// Resource variables keep and share their values without copies, and no
// write from outside Plexus reaches a variable: reads share the variable's
// (pinned) buffer; a value handed out for writing (Tensor::ShareForWriting,
// as px_tensor_data and DLPack export do) is a copy when it is a variable's;
// an assigned value that someone outside may write (a DLPack import, or a
// buffer handed out for writing) is copied.
#include <cstring>
#include <memory>
#include <vector>

#include <google/protobuf/text_format.h>

#include "gtest/gtest.h"
#include "plexus/graph_import.h"
#include "plexus/session.h"
#include "plexus/tensor_dlpack.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;

// v = x (assign); read = v.
const char kGraph[] = R"(
node { name: "x" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 3 } } } } }
node { name: "v" op: "VarHandleOp"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 3 } } } }
  attr { key: "shared_name" value { s: "v" } }
  attr { key: "container" value { s: "" } } }
node { name: "assign" op: "AssignVariableOp" input: "v" input: "x"
  attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "read" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
)";

class VariableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = CpuRuntime();
    tf::GraphDef def;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kGraph, &def));
    auto graph = ImportGraphDef(def, "variable_test");
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto session = Session::Create(runtime_.get(), std::shared_ptr<const Graph>(std::move(*graph)));
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
  }
  void Assign(const Tensor& value) {
    auto out = session_->Run({{"x", value}}, {}, {"assign"});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  Tensor Read() {
    auto out = session_->Run({}, {"read"});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  }
  std::vector<float> Values() {
    Tensor t = Read();
    return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Session> session_;
};

TEST_F(VariableTest, ReadsShareTheValueWithoutACopy) {
  Assign(Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3}));
  Tensor a = Read(), b = Read();
  EXPECT_EQ(a.raw_data(), b.raw_data());
  ASSERT_NE(a.buffer(), nullptr);
  EXPECT_TRUE(a.buffer()->pinned());
  EXPECT_EQ(Values(), (std::vector<float>{1, 2, 3}));
}

TEST_F(VariableTest, WritesThroughAReadNeverReachTheVariable) {
  Assign(Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3}));
  Tensor read = Read();
  auto writable = read.ShareForWriting();
  ASSERT_TRUE(writable.ok()) << writable.status();
  EXPECT_NE(writable->raw_data(), read.raw_data());  // a copy of the pinned value
  EXPECT_TRUE(writable->buffer()->exposed());
  EXPECT_EQ(writable->data<float>()[1], 2);
  writable->data<float>()[1] = 99;
  EXPECT_EQ(Values(), (std::vector<float>{1, 2, 3}));

  // DLPack export of a read: the consumer gets a copy it may write.
  auto managed = ExportDLPack(read);
  ASSERT_TRUE(managed.ok()) << managed.status();
  EXPECT_NE((*managed)->dl_tensor.data, read.raw_data());
  static_cast<float*>((*managed)->dl_tensor.data)[0] = -5;
  (*managed)->deleter(*managed);
  EXPECT_EQ(Values(), (std::vector<float>{1, 2, 3}));
}

TEST_F(VariableTest, AssignedValueHandedOutForWritingIsCopied) {
  Tensor value = Tensor::FromVector<float>(DataType::kFloat, {3}, {4, 5, 6});
  auto writable = value.ShareForWriting();  // as px_tensor_data does
  ASSERT_TRUE(writable.ok());
  EXPECT_EQ(writable->raw_data(), value.raw_data());  // not pinned: shared, marked exposed
  Assign(value);
  value.data<float>()[0] = 40;  // the caller writes after the assignment
  EXPECT_EQ(Values(), (std::vector<float>{4, 5, 6}));
}

TEST_F(VariableTest, AssignedDlpackImportIsCopied) {
  std::vector<float> storage = {7, 8, 9};
  std::vector<int64_t> shape = {3};
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = storage.data();
  managed->dl_tensor.device = {kDLCPU, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = {kDLFloat, 32, 1};
  managed->dl_tensor.shape = shape.data();
  managed->deleter = [](DLManagedTensor* self) { delete self; };
  auto imported = ImportDLPack(managed, runtime_.get());
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->raw_data(), storage.data());
  Assign(*imported);
  storage[2] = 90;  // the producer still owns and writes its memory
  EXPECT_EQ(Values(), (std::vector<float>{7, 8, 9}));
}

}  // namespace
}  // namespace plexus
