// The CUDA plugin's reductions (Sum, Mean, Max, Min, Prod), Softmax /
// LogSoftmax and BiasAdd on CUDA:0 against the cpu plugin: every dtype
// (float, double, half, bfloat16); axes none, all, first, last, middle,
// negative, repeated and non-adjacent (the general layout); keep_dims both
// ways; rank 0; zero-size dimensions (empty reductions give the identity);
// long rows (1M elements) and many short rows; softmax with -inf and large
// values; BiasAdd NHWC and NCHW. Exact values are checked where obvious.
// Tolerances grow with the reduced length (the GPU sums in a different
// order and in float for the 16-bit types). Skipped, with the reason, where
// the plugin reports no CUDA device; label gpu.
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
using conformance::IntTensor;
using conformance::IsIntegerType;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

using cuda_test::kFloatTypes;
using cuda_test::NoCudaDeviceReason;
using cuda_test::TheRuntime;


struct Attrs {
  bool keep_dims = false;
  std::string data_format;  // BiasAdd; empty: the default
};

// Runs one node of `op` (T = the first input's dtype; Tidx = the second's
// for the reductions) on `device`; fails when the node did not run there.
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const Attrs& attrs, const std::string& device) {
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
  auto& attr = *node->mutable_attr();
  attr["T"].set_type(static_cast<tf::DataType>(inputs[0].dtype()));
  const bool reduction = op == "Sum" || op == "Mean" || op == "Max" || op == "Min" || op == "Prod";
  if (reduction) {
    attr["Tidx"].set_type(static_cast<tf::DataType>(inputs[1].dtype()));
    attr["keep_dims"].set_b(attrs.keep_dims);
  }
  if (!attrs.data_format.empty()) attr["data_format"].set_s(attrs.data_format);
  auto graph = ImportGraphDef(def, "<cuda reduce test>");
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&TheRuntime(), shared, options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run(feeds, {"op:0"});
  // Copies are expected (the axis stays in host memory); a note that moves
  // the op node itself means it did not run on `device`.
  std::vector<std::string> notes;
  for (const std::string& note : (*session)->placement_notes()) {
    if (note.rfind("copy of ", 0) != 0 && note.find("node 'op'") != std::string::npos) {
      notes.push_back(note);
    }
  }
  if (!notes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the node did not run on ", device, ": ", absl::StrJoin(notes, "; ")));
  }
  if (!out.ok()) return out.status();
  return (*out)[0];
}

std::string Describe(const std::string& op, const std::vector<Tensor>& inputs,
                     const Attrs& attrs) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    std::string s = absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape()));
    if (IsIntegerType(t.dtype()) && t.num_elements() <= 8) {
      std::vector<std::string> v;
      for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(absl::StrCat(ElementAsDouble(t, i)));
      absl::StrAppend(&s, " [", absl::StrJoin(v, ","), "]");
    }
    parts.push_back(s);
  }
  return absl::StrCat(op, "(", absl::StrJoin(parts, ", "), ")", attrs.keep_dims ? " keep_dims" : "",
                      attrs.data_format.empty() ? "" : " " + attrs.data_format);
}

// The default tolerance of the dtype, widened for sums over n elements:
// rounding errors of a sum grow about with sqrt(n) (different orders on the
// two devices), and the 16-bit results round once more at the end.
Tolerance ToleranceFor(DataType t, int64_t n) {
  Tolerance tol = DefaultTolerance(t);
  const double grow = std::sqrt(static_cast<double>(n < 1 ? 1 : n));
  const double eps = t == DataType::kDouble ? 1e-15 : 1e-6;
  tol.atol += eps * grow * 4;
  tol.rtol += eps * grow * 4;
  return tol;
}

Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const Attrs& attrs, int64_t reduced_length) {
  SCOPED_TRACE(Describe(op, inputs, attrs));
  auto want = RunOp(op, inputs, attrs, "CPU:0");
  auto got = RunOp(op, inputs, attrs, "CUDA:0");
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return Tensor();
  EXPECT_EQ(got->shape(), want->shape());
  absl::Status same = CompareTensors(*got, *want, ToleranceFor(want->dtype(), reduced_length));
  EXPECT_TRUE(same.ok()) << same;
  return *got;
}

const char* const kReductions[] = {"Sum", "Mean", "Max", "Min", "Prod"};

int64_t ReducedLength(const Shape& shape, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> r(shape.size(), false);
  for (int64_t a : axes) r[a < 0 ? a + rank : a] = true;
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= r[d] ? shape[d] : 1;
  return n;
}

// Prod of many random values under- or overflows: its inputs stay near 1.
Tensor InputFor(const std::string& op, DataType t, const Shape& shape, std::mt19937& rng) {
  if (op == "Prod") return RandomTensor(t, shape, rng, 0.9, 1.1);
  return RandomTensor(t, shape, rng);
}

TEST(CudaReduce, ReductionsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {{}, {}},                      // rank 0, nothing reduced
      {{7}, {}},                     // no axis: a copy
      {{7}, {0}},                    // all
      {{5, 6, 7}, {0, 1, 2}},        // all, rank 3
      {{5, 6, 7}, {0}},              // first: columns
      {{5, 6, 7}, {2}},              // last: rows
      {{5, 6, 7}, {1}},              // middle: [outer, r, inner]
      {{5, 6, 7}, {-1}},             // negative
      {{5, 6, 7}, {-3, -1}},         // non-adjacent: the general layout
      {{5, 6, 7}, {2, 2}},           // repeated (counts once, as on the cpu)
      {{2, 3, 4, 5, 6}, {0, 2, 4}},  // general, three groups
      {{2, 3, 4, 5, 6}, {1, 3}},     // general, kept groups either side
      {{4, 1, 5}, {1}},              // only a dimension of 1 reduced: a copy
      {{4, 1, 5}, {0, 1}},           // a dimension of 1 merged away
      {{3, 0, 2}, {1}},              // empty reduction: the identity
      {{3, 0, 2}, {0}},              // zero-size output
      {{0}, {0}},                    // empty to a scalar
      {{3, 700}, {1}},               // block per row
      {{3, 700}, {0}},               // short columns
      {{1 << 20}, {0}},              // one long row
      {{1 << 20, 3}, {0}},           // few long columns
      {{20000, 33}, {1}},            // many short rows (warp per row)
      {{20000, 33}, {0}},            // many columns
      {{5, 8192}, {0}},              // many columns in 16-byte vectors
      {{3, 7, 4096}, {1}},           // the same, [outer, r, inner]
      {{4, 17, 2056}, {1}},          // vectors, the last block partly used
      {{6, 8196}, {0}},              // whole vectors of float, not of 16-bit types
  };
  for (const char* op : kReductions) {
    for (DataType t : kFloatTypes) {
      for (const Case& c : cases) {
        for (bool keep_dims : {false, true}) {
          for (DataType idx : {DataType::kInt32, DataType::kInt64}) {
            if (idx == DataType::kInt64 && keep_dims) continue;  // enough to see both once
            const int64_t n = ReducedLength(c.shape, c.axes);
            // Long products of 16-bit values drift too far from 1 for a
            // meaningful comparison; sums cover the long cases.
            if (std::string(op) == "Prod" && n > 4096 && t != DataType::kDouble) continue;
            Tensor axes = IntTensor(idx, {static_cast<int64_t>(c.axes.size())}, c.axes);
            Attrs attrs;
            attrs.keep_dims = keep_dims;
            ExpectCudaMatchesCpu(op, {InputFor(op, t, c.shape, rng), axes}, attrs, n);
          }
        }
      }
    }
  }
}

TEST(CudaReduce, ScalarAxisAndExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  const Tensor x = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = [&](const char* op, const Tensor& axis, bool keep_dims, Shape* shape) {
    Attrs attrs;
    attrs.keep_dims = keep_dims;
    auto y = RunOp(op, {x, axis}, attrs, "CUDA:0");
    EXPECT_TRUE(y.ok()) << op << ": " << y.status();
    std::vector<double> v;
    if (y.ok()) {
      *shape = y->shape();
      for (int64_t i = 0; i < y->num_elements(); ++i) v.push_back(ElementAsDouble(*y, i));
    }
    return v;
  };
  Shape shape;
  const Tensor axis1 = IntTensor(DataType::kInt32, {}, {1});  // a scalar axis
  const Tensor axis0 = IntTensor(DataType::kInt32, {1}, {0});
  EXPECT_EQ(run("Sum", axis1, false, &shape), (std::vector<double>{6, 15}));
  EXPECT_EQ(shape, (Shape{2}));
  EXPECT_EQ(run("Sum", axis1, true, &shape), (std::vector<double>{6, 15}));
  EXPECT_EQ(shape, (Shape{2, 1}));
  EXPECT_EQ(run("Mean", axis0, false, &shape), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(run("Max", axis1, false, &shape), (std::vector<double>{3, 6}));
  EXPECT_EQ(run("Min", axis0, false, &shape), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(run("Prod", axis1, false, &shape), (std::vector<double>{6, 120}));
  // Empty reductions: Sum 0, Prod 1, Max -inf, Min +inf, Mean NaN.
  const Tensor empty = MakeTensor(DataType::kFloat, {2, 0}, {});
  const Tensor last = IntTensor(DataType::kInt32, {1}, {1});
  auto run_empty = [&](const char* op) {
    auto y = RunOp(op, {empty, last}, Attrs(), "CUDA:0");
    EXPECT_TRUE(y.ok()) << op << ": " << y.status();
    return y.ok() && y->num_elements() == 2 ? ElementAsDouble(*y, 0) : -12345.0;
  };
  EXPECT_EQ(run_empty("Sum"), 0);
  EXPECT_EQ(run_empty("Prod"), 1);
  EXPECT_EQ(run_empty("Max"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_empty("Min"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(run_empty("Mean")));
}

TEST(CudaReduce, BadAxesFailOnBoth) {
  PX_SKIP_WITHOUT_CUDA();
  const Tensor x = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  for (int64_t bad : {2, -3}) {
    const Tensor axis = IntTensor(DataType::kInt32, {1}, {bad});
    auto cpu = RunOp("Sum", {x, axis}, Attrs(), "CPU:0");
    auto gpu = RunOp("Sum", {x, axis}, Attrs(), "CUDA:0");
    EXPECT_FALSE(cpu.ok());
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), absl::StatusCode::kInvalidArgument) << gpu.status();
    EXPECT_NE(std::string(gpu.status().message()).find("Invalid reduction dimension"),
              std::string::npos)
        << gpu.status();
  }
}

TEST(CudaReduce, SoftmaxMatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  // Each way of softmax.cu: registers, a warp per row (cols a multiple of
  // the 16-byte vector, 1 to 8 vectors a lane) or a block per row (up to
  // 8192 float or 16384 half columns); shared memory; the uncached kernel.
  const std::vector<Shape> shapes = {{1},        {7},          {3, 5},        {4, 0},
                                     {0, 4},     {2, 3, 33},   {20000, 10},   {5, 512},
                                     {5, 513},   {3, 4000},    {1, 1 << 20},  {33, 8},
                                     {17, 128},  {9, 1024},    {6, 2048},     {4, 4096},
                                     {3, 8192},  {2, 16384},   {3, 16392},    {300, 1000}};
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (DataType t : kFloatTypes) {
      for (const Shape& shape : shapes) {
        ExpectCudaMatchesCpu(op, {RandomTensor(t, shape, rng, -8, 8)}, Attrs(), shape.back());
      }
    }
  }
}

TEST(CudaReduce, SoftmaxSpecialValues) {
  PX_SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  // Rows: a -inf among finite values, large values (exp would overflow
  // without the max-subtraction), all -inf (NaN on both devices), equal
  // values.
  const std::vector<double> v = {-inf, 1, 2, 3,  1000, 999, 998, 1001,
                                 -inf, -inf, -inf, -inf, 4, 4, 4, 4};
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (DataType t : kFloatTypes) {
      ExpectCudaMatchesCpu(op, {MakeTensor(t, {4, 4}, v)}, Attrs(), 4);
    }
  }
  auto y = RunOp("Softmax", {MakeTensor(DataType::kFloat, {4, 4}, v)}, Attrs(), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ElementAsDouble(*y, 0), 0.0);
  EXPECT_FLOAT_EQ(ElementAsDouble(*y, 12), 0.25);
  double sum = 0;
  for (int i = 4; i < 8; ++i) sum += ElementAsDouble(*y, i);
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_TRUE(std::isnan(ElementAsDouble(*y, 8)));
}

TEST(CudaReduce, BiasAddMatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(9);
  struct Case {
    Shape shape;
    const char* format;
  };
  const std::vector<Case> cases = {
      {{2, 3}, "NHWC"},         {{2, 4, 5, 3}, "NHWC"},  {{2, 3, 4, 5}, "NCHW"},
      {{2, 3}, "NCHW"},         {{0, 3}, "NHWC"},        {{2, 3, 0, 5}, "NCHW"},
      {{64, 7, 7, 129}, "NHWC"}, {{8, 129, 31, 9}, "NCHW"}, {{1 << 20, 3}, "NHWC"},
  };
  for (DataType t : kFloatTypes) {
    for (const Case& c : cases) {
      const int64_t channels = std::string(c.format) == "NCHW" ? c.shape[1] : c.shape.back();
      Attrs attrs;
      attrs.data_format = c.format;
      ExpectCudaMatchesCpu("BiasAdd",
                           {RandomTensor(t, c.shape, rng), RandomTensor(t, {channels}, rng)},
                           attrs, 1);
    }
  }
  auto y = RunOp("BiasAdd",
                 {MakeTensor(DataType::kFloat, {2, 2, 1, 1}, {1, 2, 3, 4}),
                  MakeTensor(DataType::kFloat, {2}, {10, 20})},
                 Attrs{false, "NCHW"}, "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> v;
  for (int64_t i = 0; i < 4; ++i) v.push_back(ElementAsDouble(*y, i));
  EXPECT_EQ(v, (std::vector<double>{11, 22, 13, 24}));
  auto bad = RunOp("BiasAdd",
                   {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                    MakeTensor(DataType::kFloat, {2}, {1, 2})},
                   Attrs(), "CUDA:0");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

}  // namespace
}  // namespace plexus
