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

// ---------------------------------------------------------------------------
// The wider elementwise family: more unary ops and activations, integer
// dtypes, FloorDiv / FloorMod / Pow, comparisons, logical ops, Select.
// ---------------------------------------------------------------------------

using conformance::Tolerance;
using cuda_test::Exact;
using cuda_test::SetAttrs;
using cuda_test::Values;

const std::vector<DataType> kIntTypes = {DataType::kInt8, DataType::kInt16, DataType::kInt32,
                                         DataType::kInt64, DataType::kUInt8};
const std::vector<DataType> kSignedIntTypes = {DataType::kInt8, DataType::kInt16,
                                               DataType::kInt32, DataType::kInt64};
const std::vector<DataType> kRealTypes = {DataType::kFloat, DataType::kDouble, DataType::kHalf,
                                          DataType::kBFloat16, DataType::kInt8, DataType::kInt16,
                                          DataType::kInt32, DataType::kInt64, DataType::kUInt8};

bool IsInt(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64 || t == DataType::kUInt8;
}

// T = t, plus `more`.
SetAttrs WithT(DataType t, std::function<void(cuda_test::AttrMap&)> more = nullptr) {
  return [t, more](cuda_test::AttrMap& a) {
    cuda_test::SetType(a, "T", t);
    if (more) more(a);
  };
}
const SetAttrs kNoAttrs = [](cuda_test::AttrMap&) {};

Tolerance TolFor(DataType t) { return IsInt(t) || t == DataType::kBool ? Exact() : DefaultTolerance(t); }

// Transcendental ops differ in the last bits between the CUDA math library
// and the cpu plugin's (Eigen, libm): a few float ulps more than the default.
Tolerance MathTol(DataType t) {
  Tolerance tol = TolFor(t);
  if (t == DataType::kFloat) tol = {1e-6, 4e-5};
  if (t == DataType::kDouble) tol = {1e-13, 1e-11};
  return tol;
}

// The smallest value of a signed integer type, as a double.
double MinOf(DataType t) {
  switch (t) {
    case DataType::kInt8: return -128;
    case DataType::kInt16: return -32768;
    case DataType::kInt32: return -2147483648.0;
    case DataType::kInt64: return -9223372036854775808.0;
    default: return 0;
  }
}
double MaxOf(DataType t) {
  switch (t) {
    case DataType::kInt8: return 127;
    case DataType::kInt16: return 32767;
    case DataType::kInt32: return 2147483647.0;
    case DataType::kInt64: return 9223372036854774784.0;  // the largest double below 2^63
    case DataType::kUInt8: return 255;
    default: return 0;
  }
}

// Integers in [lo, hi] without 0 (divisors).
Tensor NonZeroInts(DataType t, const Shape& shape, std::mt19937& rng, int lo, int hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    do {
      x = dist(rng);
    } while (x == 0);
  }
  return MakeTensor(t, shape, v);
}

const char* const kNewFloatUnaryOps[] = {"Sign", "Log1p", "Reciprocal", "Inv", "Erf",
                                         "Floor", "Ceil", "Round", "Elu", "Selu",
                                         "LeakyRelu", "Softplus", "Gelu"};

Tensor NewUnaryInput(const std::string& op, DataType t, const Shape& shape, std::mt19937& rng) {
  if (op == "Log1p") return RandomTensor(t, shape, rng, -0.9, 4);
  if (op == "Reciprocal" || op == "Inv") return RandomTensor(t, shape, rng, 0.1, 4);
  return RandomTensor(t, shape, rng, -5, 5);
}

TEST(CudaKernels, NewUnaryOpsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(21);
  const std::vector<Shape> shapes = {{}, {1}, {7}, {17}, {4, 33}, {0}, {3, 0, 2}, {1 << 18 | 5}};
  for (const char* op : kNewFloatUnaryOps) {
    for (DataType t : kFloatTypes) {
      for (const Shape& shape : shapes) {
        cuda_test::ExpectCudaMatchesCpu(op, {NewUnaryInput(op, t, shape, rng)}, WithT(t),
                                        MathTol(t));
      }
    }
  }
  // Attribute variants: LeakyRelu's alpha, Gelu's exact form.
  for (DataType t : kFloatTypes) {
    Tensor x = RandomTensor(t, {5, 13}, rng, -4, 4);
    for (float alpha : {0.0f, 0.05f, 1.5f}) {
      cuda_test::ExpectCudaMatchesCpu(
          "LeakyRelu", {x}, WithT(t, [alpha](cuda_test::AttrMap& a) { a["alpha"].set_f(alpha); }),
          MathTol(t));
    }
    for (bool approximate : {true, false}) {
      cuda_test::ExpectCudaMatchesCpu(
          "Gelu", {x},
          WithT(t, [approximate](cuda_test::AttrMap& a) { a["approximate"].set_b(approximate); }),
          MathTol(t));
    }
  }
}

TEST(CudaKernels, NewUnaryOpsOnSpecialValues) {
  PX_SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {nan,  inf,  -inf, 0.0,  -0.0, 0.5,  1.5, 2.5,  -0.5,
                                      -1.5, -2.5, 1.0,  -1.0, 7.5,  1e-3, -100, 100, -30};
  for (const char* op : kNewFloatUnaryOps) {
    for (DataType t : kFloatTypes) {
      cuda_test::ExpectCudaMatchesCpu(
          op, {MakeTensor(t, {static_cast<int64_t>(values.size())}, values)}, WithT(t), MathTol(t));
    }
  }
}

TEST(CudaKernels, NewUnaryOpsExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  auto run = [](const char* op, DataType t, const std::vector<double>& x) {
    auto y = cuda_test::RunOp(op, {MakeTensor(t, {static_cast<int64_t>(x.size())}, x)}, WithT(t),
                              "CUDA:0");
    EXPECT_TRUE(y.ok()) << op << ": " << y.status();
    return y.ok() ? Values(*y) : std::vector<double>{};
  };
  // Round: half to even, as TensorFlow.
  EXPECT_EQ(run("Round", DataType::kFloat, {0.5, 1.5, 2.5, -0.5, -2.5, 2.4}),
            (std::vector<double>{0, 2, 2, -0.0, -2, 2}));
  EXPECT_EQ(run("Floor", DataType::kDouble, {-1.5, 1.5}), (std::vector<double>{-2, 1}));
  EXPECT_EQ(run("Ceil", DataType::kHalf, {-1.5, 1.5}), (std::vector<double>{-1, 2}));
  EXPECT_EQ(run("Sign", DataType::kBFloat16, {-3, 0, 2}), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(run("Reciprocal", DataType::kFloat, {4, -0.5}), (std::vector<double>{0.25, -2}));
  EXPECT_EQ(run("Elu", DataType::kFloat, {0, 2}), (std::vector<double>{0, 2}));
  EXPECT_EQ(run("LeakyRelu", DataType::kFloat, {-10, 3}), (std::vector<double>{-2, 3}));
  EXPECT_EQ(run("Gelu", DataType::kFloat, {0}), (std::vector<double>{0}));
  // Integers.
  EXPECT_EQ(run("Neg", DataType::kInt8, {-128, 5}), (std::vector<double>{-128, -5}));
  EXPECT_EQ(run("Abs", DataType::kInt32, {-2147483648.0, -7}),
            (std::vector<double>{-2147483648.0, 7}));
  EXPECT_EQ(run("Sign", DataType::kInt16, {-9, 0, 4}), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(run("Reciprocal", DataType::kInt32, {1, -1, 2, -3}),
            (std::vector<double>{1, -1, 0, 0}));
  EXPECT_EQ(run("Square", DataType::kUInt8, {16, 3}), (std::vector<double>{0, 9}));
  EXPECT_EQ(run("Relu6", DataType::kInt64, {-4, 3, 9}), (std::vector<double>{0, 3, 6}));
}

TEST(CudaKernels, IntegerUnaryOpsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(23);
  const std::vector<Shape> shapes = {{}, {1}, {7}, {17}, {4, 33}, {0}, {(1 << 18) + 3}};
  for (const char* op : {"Neg", "Abs", "Sign", "Square", "Round", "Relu", "Relu6"}) {
    const std::string name = op;
    const bool unsigned_ok = name == "Square" || name == "Relu" || name == "Relu6";
    for (DataType t : kIntTypes) {
      if (t == DataType::kUInt8 && !unsigned_ok) continue;
      for (const Shape& shape : shapes) {
        cuda_test::ExpectCudaMatchesCpu(op, {RandomTensor(t, shape, rng, -100, 100)}, WithT(t),
                                        Exact());
      }
      // The corners: min, max, -1, 0, 1.
      const std::vector<double> corners = {MinOf(t), MaxOf(t), -1, 0, 1, 6, 7};
      std::vector<double> v;
      for (double c : corners) v.push_back(t == DataType::kUInt8 && c < 0 ? 200 : c);
      cuda_test::ExpectCudaMatchesCpu(op, {MakeTensor(t, {static_cast<int64_t>(v.size())}, v)},
                                      WithT(t), Exact());
    }
  }
  for (const char* op : {"Reciprocal", "Inv"}) {
    for (DataType t : kSignedIntTypes) {
      cuda_test::ExpectCudaMatchesCpu(op, {NonZeroInts(t, {37}, rng, -3, 3)}, WithT(t), Exact());
      cuda_test::ExpectCudaMatchesCpu(op, {MakeTensor(t, {3}, {MinOf(t), MaxOf(t), -1})}, WithT(t),
                                      Exact());
      // Zero is refused, like the cpu plugin does.
      for (const char* device : {"CPU:0", "CUDA:0"}) {
        auto y = cuda_test::RunOp(op, {MakeTensor(t, {4}, {1, 2, 0, 3})}, WithT(t), device);
        ASSERT_FALSE(y.ok()) << device;
        EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
        EXPECT_NE(std::string(y.status().message()).find("Integer division by zero"),
                  std::string::npos)
            << y.status();
      }
    }
  }
}

const std::vector<std::pair<Shape, Shape>> kBroadcastShapes = {
    {{}, {}},
    {{13}, {13}},
    {{4, 33}, {4, 33}},
    {{3, 4}, {}},
    {{}, {3, 5}},
    {{1}, {37}},
    {{2, 3, 4}, {4}},
    {{2, 3, 4}, {3, 1}},
    {{5, 1, 3}, {1, 4, 1}},
    {{2, 1, 3, 1}, {1, 4, 1, 5}},
    {{0, 3}, {3}},
    {{4, 0}, {1}},
    {{(1 << 18) + 3}, {(1 << 18) + 3}},
    {{(1 << 18) + 3}, {}},
    {{515, 257}, {257}},
};

TEST(CudaKernels, FloorDivFloorModPowOnFloatsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(29);
  for (const char* op : {"FloorDiv", "FloorMod", "Pow"}) {
    const bool pow = std::string(op) == "Pow";
    for (DataType t : kFloatTypes) {
      for (const auto& [sa, sb] : kBroadcastShapes) {
        Tensor a = pow ? RandomTensor(t, sa, rng, 0.1, 3) : RandomTensor(t, sa, rng, -10, 10);
        Tensor b = pow ? RandomTensor(t, sb, rng, -3, 3) : RandomTensor(t, sb, rng, 0.5, 4);
        if (!pow && t != DataType::kHalf) {
          // Negative divisors too (the remainder takes the divisor's sign).
          b = RandomTensor(t, sb, rng, -4, 4);
        }
        cuda_test::ExpectCudaMatchesCpu(op, {a, b}, WithT(t), MathTol(t));
      }
      const double inf = std::numeric_limits<double>::infinity();
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const std::vector<double> a = {7, -7, 7, -7, 0, 1, nan, inf, -2, 2, 5, -0.0};
      const std::vector<double> b = {2, 2, -2, -2, 3, 0, 1, 2, 0.5, -3, inf, 1};
      cuda_test::ExpectCudaMatchesCpu(op, {MakeTensor(t, {12}, a), MakeTensor(t, {12}, b)},
                                      WithT(t), MathTol(t));
    }
  }
  // Exact: TensorFlow's sign conventions.
  auto y = cuda_test::RunOp("FloorMod",
                            {MakeTensor(DataType::kFloat, {4}, {7, -7, 7, -7}),
                             MakeTensor(DataType::kFloat, {4}, {3, 3, -3, -3})},
                            WithT(DataType::kFloat), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, -2, -1}));
}

TEST(CudaKernels, IntegerBinaryOpsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(31);
  const char* const ops[] = {"Add",      "AddV2",    "Sub",     "Mul",     "Div", "RealDiv",
                             "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow", "SquaredDifference"};
  for (const char* op : ops) {
    const std::string name = op;
    const bool division = name == "Div" || name == "RealDiv" || name == "FloorDiv" ||
                          name == "FloorMod";
    for (DataType t : kIntTypes) {
      if (name == "Pow" && t == DataType::kUInt8) continue;
      if (name == "SquaredDifference" && t != DataType::kInt32 && t != DataType::kInt64) continue;
      const bool is_unsigned = t == DataType::kUInt8;
      for (const auto& [sa, sb] : kBroadcastShapes) {
        Tensor a = RandomTensor(t, sa, rng, is_unsigned ? 0 : -100, 100);
        Tensor b = division ? NonZeroInts(t, sb, rng, is_unsigned ? 1 : -9, 9)
                   : name == "Pow" ? RandomTensor(t, sb, rng, 0, 5)
                                   : RandomTensor(t, sb, rng, is_unsigned ? 0 : -100, 100);
        cuda_test::ExpectCudaMatchesCpu(op, {a, b}, WithT(t), Exact());
      }
      // Wrapping and the min / -1 corners.
      const double lo = MinOf(t), hi = MaxOf(t);
      std::vector<double> a = {lo, lo, hi, hi, -7, 7, -7, 7, 0, 3};
      std::vector<double> b = {-1, 1, 2, -1, 2, -2, -2, 3, 5, 4};
      if (is_unsigned || name == "Pow") {
        for (double& x : b) x = x < 0 ? 3 : x;
      }
      if (is_unsigned) {
        for (double& x : a) x = x < 0 ? 250 : x;
      }
      cuda_test::ExpectCudaMatchesCpu(op, {MakeTensor(t, {10}, a), MakeTensor(t, {10}, b)},
                                      WithT(t), Exact());
    }
  }
  // Exact values: truncating Div, flooring FloorDiv / FloorMod, wrapping.
  auto run = [](const char* op, DataType t, const std::vector<double>& a,
                const std::vector<double>& b) {
    auto y = cuda_test::RunOp(op,
                              {MakeTensor(t, {static_cast<int64_t>(a.size())}, a),
                               MakeTensor(t, {static_cast<int64_t>(b.size())}, b)},
                              WithT(t), "CUDA:0");
    EXPECT_TRUE(y.ok()) << op << ": " << y.status();
    return y.ok() ? Values(*y) : std::vector<double>{};
  };
  EXPECT_EQ(run("Div", DataType::kInt32, {7, -7, 7, -7}, {2, 2, -2, -2}),
            (std::vector<double>{3, -3, -3, 3}));
  EXPECT_EQ(run("FloorDiv", DataType::kInt32, {7, -7, 7, -7}, {2, 2, -2, -2}),
            (std::vector<double>{3, -4, -4, 3}));
  EXPECT_EQ(run("FloorMod", DataType::kInt64, {7, -7, 7, -7}, {3, 3, -3, -3}),
            (std::vector<double>{1, 2, -2, -1}));
  EXPECT_EQ(run("Div", DataType::kInt8, {-128}, {-1}), (std::vector<double>{-128}));
  EXPECT_EQ(run("AddV2", DataType::kInt8, {127}, {1}), (std::vector<double>{-128}));
  EXPECT_EQ(run("Pow", DataType::kInt32, {3, -2, 5}, {4, 3, 0}), (std::vector<double>{81, -8, 1}));
  EXPECT_EQ(run("Mul", DataType::kUInt8, {16}, {17}), (std::vector<double>{16}));
}

TEST(CudaKernels, IntegerDivisionByZeroAndNegativePowersAreRefused) {
  PX_SKIP_WITHOUT_CUDA();
  for (const char* op : {"Div", "RealDiv", "FloorDiv", "FloorMod"}) {
    for (DataType t : kIntTypes) {
      for (const char* device : {"CPU:0", "CUDA:0"}) {
        auto y = cuda_test::RunOp(
            op, {MakeTensor(t, {2, 3}, {1, 2, 3, 4, 5, 6}), MakeTensor(t, {3}, {1, 0, 2})},
            WithT(t), device);
        ASSERT_FALSE(y.ok()) << op << " on " << device;
        EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
        EXPECT_NE(std::string(y.status().message()).find("Integer division by zero"),
                  std::string::npos)
            << y.status();
      }
    }
  }
  for (DataType t : kSignedIntTypes) {
    for (const char* device : {"CPU:0", "CUDA:0"}) {
      auto y = cuda_test::RunOp("Pow", {MakeTensor(t, {3}, {1, 2, 3}), MakeTensor(t, {}, {-1})},
                                WithT(t), device);
      ASSERT_FALSE(y.ok()) << device;
      EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
      EXPECT_NE(std::string(y.status().message()).find("negative integer powers"),
                std::string::npos)
          << y.status();
    }
  }
  // A zero divisor is refused even when the output is empty (the cpu
  // plugin checks every divisor).
  for (const char* device : {"CPU:0", "CUDA:0"}) {
    auto y = cuda_test::RunOp(
        "FloorDiv", {MakeTensor(DataType::kInt32, {0, 2}, {}), MakeTensor(DataType::kInt32, {2}, {0, 1})},
        WithT(DataType::kInt32), device);
    ASSERT_FALSE(y.ok()) << device;
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
  }
}

TEST(CudaKernels, ComparisonsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(37);
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
    for (DataType t : kRealTypes) {
      for (const auto& [sa, sb] : kBroadcastShapes) {
        // Few distinct values, so that equality happens often.
        Tensor a = RandomTensor(t, sa, rng, 0, 3), b = RandomTensor(t, sb, rng, 0, 3);
        cuda_test::ExpectCudaMatchesCpu(op, {a, b}, WithT(t), Exact());
      }
      if (!IsInt(t)) {
        const double inf = std::numeric_limits<double>::infinity();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::vector<double> a = {nan, 1, nan, inf, -inf, 0.0, 2};
        const std::vector<double> b = {1, nan, nan, inf, inf, -0.0, 2};
        cuda_test::ExpectCudaMatchesCpu(op, {MakeTensor(t, {7}, a), MakeTensor(t, {7}, b)},
                                        WithT(t), Exact());
      }
    }
  }
  for (const char* op : {"Equal", "NotEqual"}) {
    for (const auto& [sa, sb] : kBroadcastShapes) {
      Tensor a = RandomTensor(DataType::kBool, sa, rng), b = RandomTensor(DataType::kBool, sb, rng);
      cuda_test::ExpectCudaMatchesCpu(op, {a, b}, WithT(DataType::kBool), Exact());
    }
  }
  auto y = cuda_test::RunOp("Less",
                            {MakeTensor(DataType::kInt64, {2, 1}, {1, 5}),
                             MakeTensor(DataType::kInt64, {3}, {0, 1, 9})},
                            WithT(DataType::kInt64), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dtype(), DataType::kBool);
  EXPECT_EQ(Values(*y), (std::vector<double>{0, 0, 1, 0, 0, 1}));
  // incompatible_shape_error = false: a scalar (false for Equal, true for
  // NotEqual).
  for (const char* op : {"Equal", "NotEqual"}) {
    auto z = cuda_test::ExpectCudaMatchesCpu(
        op, {MakeTensor(DataType::kFloat, {2}, {1, 2}), MakeTensor(DataType::kFloat, {3}, {1, 2, 3})},
        WithT(DataType::kFloat,
              [](cuda_test::AttrMap& a) { a["incompatible_shape_error"].set_b(false); }),
        Exact());
    if (z.num_elements() == 1) EXPECT_EQ(Values(z)[0], std::string(op) == "NotEqual" ? 1 : 0);
  }
}

TEST(CudaKernels, LogicalOpsMatchTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(41);
  for (const char* op : {"LogicalAnd", "LogicalOr"}) {
    for (const auto& [sa, sb] : kBroadcastShapes) {
      Tensor a = RandomTensor(DataType::kBool, sa, rng), b = RandomTensor(DataType::kBool, sb, rng);
      cuda_test::ExpectCudaMatchesCpu(op, {a, b}, kNoAttrs, Exact());
    }
  }
  for (const Shape& shape : std::vector<Shape>{{}, {1}, {17}, {0}, {4, 33}, {(1 << 18) + 7}}) {
    cuda_test::ExpectCudaMatchesCpu("LogicalNot", {RandomTensor(DataType::kBool, shape, rng)},
                                    kNoAttrs, Exact());
  }
  const Tensor a = MakeTensor(DataType::kBool, {4}, {0, 0, 1, 1});
  const Tensor b = MakeTensor(DataType::kBool, {4}, {0, 1, 0, 1});
  auto y_and = cuda_test::RunOp("LogicalAnd", {a, b}, kNoAttrs, "CUDA:0");
  auto y_or = cuda_test::RunOp("LogicalOr", {a, b}, kNoAttrs, "CUDA:0");
  auto y_not = cuda_test::RunOp("LogicalNot", {a}, kNoAttrs, "CUDA:0");
  ASSERT_TRUE(y_and.ok() && y_or.ok() && y_not.ok());
  EXPECT_EQ(Values(*y_and), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(Values(*y_or), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(Values(*y_not), (std::vector<double>{1, 1, 0, 0}));
}

TEST(CudaKernels, SelectMatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(43);
  // SelectV2: NumPy broadcasting of all three.
  const std::vector<std::vector<Shape>> v2_shapes = {
      {{}, {}, {}},          {{7}, {7}, {7}},          {{}, {4, 5}, {4, 5}},
      {{4, 5}, {}, {4, 5}},  {{4, 1}, {1, 5}, {}},     {{2, 3, 1}, {1, 3, 4}, {4}},
      {{0, 3}, {3}, {1, 3}}, {{(1 << 18) + 1}, {(1 << 18) + 1}, {}},
  };
  // Select: scalar, vector along dimension 0, or the same shape.
  const std::vector<std::vector<Shape>> v1_shapes = {
      {{}, {4, 5}, {4, 5}}, {{4}, {4, 5}, {4, 5}}, {{4}, {4, 2, 3}, {4, 2, 3}},
      {{4, 5}, {4, 5}, {4, 5}}, {{6}, {6}, {6}}, {{0}, {0, 3}, {0, 3}}, {{}, {}, {}},
  };
  for (DataType t : cuda_test::kAllTypes) {
    if (t == DataType::kUInt16 || t == DataType::kUInt32 || t == DataType::kUInt64) continue;
    for (const auto& s : v2_shapes) {
      cuda_test::ExpectCudaMatchesCpu(
          "SelectV2",
          {RandomTensor(DataType::kBool, s[0], rng), RandomTensor(t, s[1], rng),
           RandomTensor(t, s[2], rng)},
          WithT(t), Exact());
    }
    for (const auto& s : v1_shapes) {
      cuda_test::ExpectCudaMatchesCpu(
          "Select",
          {RandomTensor(DataType::kBool, s[0], rng), RandomTensor(t, s[1], rng),
           RandomTensor(t, s[2], rng)},
          WithT(t), Exact());
    }
  }
  auto y = cuda_test::RunOp("Select",
                            {MakeTensor(DataType::kBool, {2}, {1, 0}),
                             MakeTensor(DataType::kInt32, {2, 2}, {1, 2, 3, 4}),
                             MakeTensor(DataType::kInt32, {2, 2}, {5, 6, 7, 8})},
                            WithT(DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, 7, 8}));
  // Refusals, like the cpu plugin.
  auto bad_v2 = cuda_test::RunOp("SelectV2",
                                 {MakeTensor(DataType::kBool, {3}, {1, 0, 1}),
                                  MakeTensor(DataType::kFloat, {2}, {1, 2}),
                                  MakeTensor(DataType::kFloat, {2}, {3, 4})},
                                 WithT(DataType::kFloat), "CUDA:0");
  ASSERT_FALSE(bad_v2.ok());
  EXPECT_EQ(bad_v2.status().code(), absl::StatusCode::kInvalidArgument) << bad_v2.status();
  auto bad_v1 = cuda_test::RunOp("Select",
                                 {MakeTensor(DataType::kBool, {3}, {1, 0, 1}),
                                  MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4}),
                                  MakeTensor(DataType::kFloat, {2, 2}, {5, 6, 7, 8})},
                                 WithT(DataType::kFloat), "CUDA:0");
  ASSERT_FALSE(bad_v1.ok());
  EXPECT_EQ(bad_v1.status().code(), absl::StatusCode::kInvalidArgument) << bad_v1.status();
}

}  // namespace
}  // namespace plexus
