// The CUDA plugin's elementwise kernels on CUDA:0 against the cpu plugin's:
// every registered op and dtype (float, double, half, bfloat16) on random
// inputs, odd sizes (the vectorized loops' tails), rank-0 and zero-size
// tensors, large tensors (the grid-stride loops), special values (NaN, inf,
// signed zero) and the broadcasting corners (scalars either side, rows,
// columns, both inputs broadcasting, dims of 1 in the middle). Values are
// also checked directly where the answer is obvious. Skipped, with the
// reason, where the plugin reports no CUDA device; label gpu.
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attr_value.pb.h"
#include "cases.h"
#include "graph.pb.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "gpu/cuda_test_util.h"
#include "test_util.h"

namespace plexus {
namespace {

using conformance::CompareTensors;
using conformance::DefaultTolerance;
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;

// The cpu and cuda plugins, once per process (a plugin file is initialized
// once per process).
using cuda_test::kFloatTypes;
using cuda_test::NoCudaDeviceReason;
using cuda_test::TheRuntime;


// Runs one node of `op` (attribute T = the inputs' dtype) on `device`; fails
// when the node did not run there.
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const std::string& device) {
  tf::GraphDef def;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    tf::NodeDef* p = def.add_node();
    p->set_name(absl::StrCat("in", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"].set_type(static_cast<tf::DataType>(inputs[i].dtype()));
    feeds.emplace_back(absl::StrCat("in", i, ":0"), inputs[i]);
  }
  tf::NodeDef* node = def.add_node();
  node->set_name("op");
  node->set_op(op);
  for (size_t i = 0; i < inputs.size(); ++i) node->add_input(absl::StrCat("in", i));
  (*node->mutable_attr())["T"].set_type(static_cast<tf::DataType>(inputs[0].dtype()));
  auto graph = ImportGraphDef(def, "<cuda kernel test>");
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&TheRuntime(), shared, options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run(feeds, {"op:0"});
  // Copies of the feeds to the device are expected; any other note means
  // the node went elsewhere.
  std::vector<std::string> notes;
  for (const std::string& note : (*session)->placement_notes()) {
    if (note.rfind("copy of ", 0) != 0) notes.push_back(note);
  }
  if (!notes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the node did not run on ", device, ": ", absl::StrJoin(notes, "; ")));
  }
  if (!out.ok()) return out.status();
  return (*out)[0];
}

std::string Describe(const std::string& op, const std::vector<Tensor>& inputs) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    parts.push_back(absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape())));
  }
  return absl::StrCat(op, "(", absl::StrJoin(parts, ", "), ")");
}

// Runs on CUDA:0 and CPU:0 and compares; returns the CUDA result.
Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs) {
  SCOPED_TRACE(Describe(op, inputs));
  auto want = RunOp(op, inputs, "CPU:0");
  auto got = RunOp(op, inputs, "CUDA:0");
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return Tensor();
  absl::Status same = CompareTensors(*got, *want, DefaultTolerance(want->dtype()));
  EXPECT_TRUE(same.ok()) << same;
  return *got;
}

// Random values where the op is defined for them (logarithms and roots:
// positive).
Tensor InputFor(const std::string& op, DataType t, const Shape& shape, std::mt19937& rng) {
  if (op == "Log" || op == "Sqrt" || op == "Rsqrt") return RandomTensor(t, shape, rng, 0.05, 4);
  if (op == "Relu6") return RandomTensor(t, shape, rng, -4, 10);
  return RandomTensor(t, shape, rng);
}

const char* const kUnaryOps[] = {"Neg",  "Abs",   "Exp",   "Log",     "Sqrt", "Rsqrt",
                                 "Square", "Relu", "Relu6", "Sigmoid", "Tanh"};
const char* const kBinaryOps[] = {"Add",     "AddV2",   "Sub",    "Mul",
                                  "Div",     "RealDiv", "Maximum", "Minimum",
                                  "SquaredDifference"};

TEST(CudaKernels, UnaryOpsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(7);
  // Rank 0, one element, a vector tail of every length, 2-D, and a large
  // odd size (many grid-stride rounds plus a tail).
  const std::vector<Shape> shapes = {{}, {1}, {7}, {9}, {17}, {4, 33}, {0}, {3, 0, 2}, {1 << 20 | 5}};
  for (const char* op : kUnaryOps) {
    for (DataType t : kFloatTypes) {
      for (const Shape& shape : shapes) ExpectCudaMatchesCpu(op, {InputFor(op, t, shape, rng)});
    }
  }
}

TEST(CudaKernels, UnaryOpsOnSpecialValues) {
  PX_SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 7.5, 1e-3, -100, 100};
  for (const char* op : kUnaryOps) {
    for (DataType t : kFloatTypes) {
      ExpectCudaMatchesCpu(op, {MakeTensor(t, {static_cast<int64_t>(values.size())}, values)});
    }
  }
}

TEST(CudaKernels, UnaryOpsExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  const std::vector<double> x = {-2, -0.5, 0, 3, 8};
  auto run = [&](const char* op) {
    auto y = RunOp(op, {MakeTensor(DataType::kFloat, {5}, x)}, "CUDA:0");
    EXPECT_TRUE(y.ok()) << op << ": " << y.status();
    std::vector<double> v;
    if (y.ok()) {
      for (int64_t i = 0; i < y->num_elements(); ++i) v.push_back(ElementAsDouble(*y, i));
    }
    return v;
  };
  EXPECT_EQ(run("Neg"), (std::vector<double>{2, 0.5, 0, -3, -8}));
  EXPECT_EQ(run("Abs"), (std::vector<double>{2, 0.5, 0, 3, 8}));
  EXPECT_EQ(run("Square"), (std::vector<double>{4, 0.25, 0, 9, 64}));
  EXPECT_EQ(run("Relu"), (std::vector<double>{0, 0, 0, 3, 8}));
  EXPECT_EQ(run("Relu6"), (std::vector<double>{0, 0, 0, 3, 6}));
  std::vector<double> sigmoid = run("Sigmoid");
  ASSERT_EQ(sigmoid.size(), 5u);
  EXPECT_EQ(sigmoid[2], 0.5);
}

TEST(CudaKernels, BinaryOpsMatchTheCpuPluginWithBroadcasting) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(11);
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{}, {}},                      // rank 0
      {{13}, {13}},                  // same shape, vector tail
      {{4, 33}, {4, 33}},            // same shape, 2-D (collapses to 1-D)
      {{3, 4}, {}},                  // scalar on the right
      {{}, {3, 5}},                  // scalar on the left
      {{1}, {37}},                   // one-element operand
      {{2, 3, 4}, {4}},              // row
      {{2, 3, 4}, {3, 1}},           // column, inner dims
      {{5, 1, 3}, {1, 4, 1}},        // both broadcast
      {{2, 1, 3, 1}, {1, 4, 1, 5}},  // alternating
      {{6, 1, 1, 7}, {6, 1, 1, 7}},  // ones in the middle
      {{0, 3}, {3}},                 // zero-size output
      {{4, 0}, {1}},
      {{1 << 20 | 3}, {1 << 20 | 3}},  // large, same shape
      {{1 << 20 | 3}, {}},             // large, scalar
      {{1025, 1031}, {1031}},          // large, broadcast
  };
  for (const char* op : kBinaryOps) {
    for (DataType t : kFloatTypes) {
      for (const auto& [sa, sb] : shapes) {
        Tensor a = RandomTensor(t, sa, rng), b = RandomTensor(t, sb, rng);
        ExpectCudaMatchesCpu(op, {a, b});
      }
    }
  }
}

TEST(CudaKernels, BinaryOpsOnSpecialValues) {
  PX_SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {nan, 1, nan, inf, -inf, 0.0, -0.0, 2, 5, 0};
  const std::vector<double> b = {1, nan, nan, inf, inf, -0.0, 0.0, 0, -3, 0};
  for (const char* op : kBinaryOps) {
    for (DataType t : kFloatTypes) {
      ExpectCudaMatchesCpu(op, {MakeTensor(t, {10}, a), MakeTensor(t, {10}, b)});
    }
  }
}

TEST(CudaKernels, BinaryOpsExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  // [2,1] + [3] -> [2,3]
  auto y = RunOp("AddV2", {MakeTensor(DataType::kFloat, {2, 1}, {10, 20}),
                           MakeTensor(DataType::kFloat, {3}, {1, 2, 3})},
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->shape(), (Shape{2, 3}));
  const std::vector<double> want = {11, 12, 13, 21, 22, 23};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(ElementAsDouble(*y, i), want[i]) << i;
  auto m = RunOp("Maximum", {MakeTensor(DataType::kHalf, {3}, {1, -2, 3}),
                             MakeTensor(DataType::kHalf, {}, {0})},
                 "CUDA:0");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(ElementAsDouble(*m, 0), 1);
  EXPECT_EQ(ElementAsDouble(*m, 1), 0);
  EXPECT_EQ(ElementAsDouble(*m, 2), 3);
}

TEST(CudaKernels, IncompatibleShapesAreInvalidArgument) {
  PX_SKIP_WITHOUT_CUDA();
  auto y = RunOp("AddV2", {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                           MakeTensor(DataType::kFloat, {4}, {1, 2, 3, 4})},
                 "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
}

}  // namespace
}  // namespace plexus
