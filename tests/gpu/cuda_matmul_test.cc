// The CUDA plugin's matrix products (plugins/cuda/src/kernels/matmul.cc,
// cuBLASLt) on CUDA:0 against the cpu plugin: MatMul with every
// transposition, BatchMatMul, BatchMatMulV2/V3 with broadcast batch
// dimensions (one side repeated, both sides broadcasting), _FusedMatMul with
// every activation, odd sizes (1, 7, 33, 130), each float dtype, zero-size
// products (and k == 0, whose product is zeros plus the bias), and values
// checked directly where the answer is obvious. Tolerances grow with the
// reduction length k. Skipped, with the reason, where the plugin reports no
// CUDA device; label gpu.
#include <cmath>
#include <cstdio>
#include <functional>
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
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

using cuda_test::kFloatTypes;
using cuda_test::NoCudaDeviceReason;
using cuda_test::TheRuntime;


using AttrFn = std::function<void(tf::NodeDef*)>;

// Runs one node of `op` on `device`; `attrs` sets its attributes (T is set
// to the first input's dtype unless `attrs` sets it). Fails when the node
// did not run there.
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const AttrFn& attrs, const std::string& device) {
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
  if (op != "BatchMatMulV3") {
    (*node->mutable_attr())["T"].set_type(static_cast<tf::DataType>(inputs[0].dtype()));
  }
  if (attrs) attrs(node);
  auto graph = ImportGraphDef(def, "<cuda matmul test>");
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&TheRuntime(), shared, options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run(feeds, {"op:0"});
  std::vector<std::string> notes;
  // Copies are expected, and so are constants on the CPU: the optimizer
  // writes a BatchMatMul with a matrix operand as Reshape, MatMul, Reshape,
  // whose shapes are Consts read from host memory.
  for (const std::string& note : (*session)->placement_notes()) {
    if (note.rfind("copy of ", 0) != 0 && note.find("(op Const)") == std::string::npos) {
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

// Tolerance for a product over k terms of values in [-1, 1]: the rounding
// of each sum grows with k; half and bfloat16 round the output to 11 and 8
// bits (both plugins accumulate in float).
Tolerance MatMulTolerance(DataType t, int64_t k) {
  const double kd = static_cast<double>(k);
  switch (t) {
    case DataType::kFloat: return {1e-5 + 2e-6 * kd, 1e-4};
    case DataType::kDouble: return {1e-12 * (1 + kd), 1e-10};
    case DataType::kHalf: return {4e-3 + 2e-4 * kd, 4e-3};
    case DataType::kBFloat16: return {3e-2 + 2e-3 * kd, 3e-2};
    default: return {0, 0};
  }
}

std::string Describe(const std::string& op, const std::vector<Tensor>& inputs,
                     const std::string& extra) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    parts.push_back(absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape())));
  }
  return absl::StrCat(op, "(", absl::StrJoin(parts, ", "), ") ", extra);
}

Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const AttrFn& attrs, int64_t k, const std::string& extra) {
  SCOPED_TRACE(Describe(op, inputs, extra));
  auto want = RunOp(op, inputs, attrs, "CPU:0");
  auto got = RunOp(op, inputs, attrs, "CUDA:0");
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return Tensor();
  EXPECT_EQ(got->shape(), want->shape());
  absl::Status same = CompareTensors(*got, *want, MatMulTolerance(want->dtype(), k));
  EXPECT_TRUE(same.ok()) << same;
  return *got;
}

AttrFn Transposes(const char* a_name, bool a, const char* b_name, bool b) {
  return [=](tf::NodeDef* n) {
    (*n->mutable_attr())[a_name].set_b(a);
    (*n->mutable_attr())[b_name].set_b(b);
  };
}

// [r, c] stored transposed when `t`.
Shape Stored(int64_t r, int64_t c, bool t) { return t ? Shape{c, r} : Shape{r, c}; }

TEST(CudaMatMul, EveryTranspositionAndOddSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  const std::vector<int64_t> sizes = {1, 7, 33, 130};
  for (DataType t : kFloatTypes) {
    for (int64_t m : sizes) {
      for (int64_t k : sizes) {
        for (int64_t n : sizes) {
          // Every transposition for a few shapes, the plain product for all.
          for (int tr = 0; tr < 4; ++tr) {
            const bool ta = tr & 1, tb = tr & 2;
            if (tr != 0 && !(m == 7 || k == 33 || n == 130)) continue;
            Tensor a = RandomTensor(t, Stored(m, k, ta), rng);
            Tensor b = RandomTensor(t, Stored(k, n, tb), rng);
            ExpectCudaMatchesCpu("MatMul", {a, b},
                                 Transposes("transpose_a", ta, "transpose_b", tb), k,
                                 absl::StrCat("ta=", ta, " tb=", tb));
          }
        }
      }
    }
  }
}

TEST(CudaMatMul, LargeProduct) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  for (DataType t : kFloatTypes) {
    Tensor a = RandomTensor(t, {257, 515}, rng), b = RandomTensor(t, {515, 1029}, rng);
    ExpectCudaMatchesCpu("MatMul", {a, b}, nullptr, 515, "");
  }
}

TEST(CudaMatMul, ZeroSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(9);
  for (DataType t : kFloatTypes) {
    ExpectCudaMatchesCpu("MatMul", {RandomTensor(t, {0, 4}, rng), RandomTensor(t, {4, 3}, rng)},
                         nullptr, 4, "m = 0");
    ExpectCudaMatchesCpu("MatMul", {RandomTensor(t, {5, 4}, rng), RandomTensor(t, {4, 0}, rng)},
                         nullptr, 4, "n = 0");
    // k == 0: the empty sum, zeros.
    Tensor y = ExpectCudaMatchesCpu(
        "MatMul", {RandomTensor(t, {5, 0}, rng), RandomTensor(t, {0, 3}, rng)}, nullptr, 0, "k = 0");
    ASSERT_EQ(y.shape(), (Shape{5, 3}));
    for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(ElementAsDouble(y, i), 0.0);
  }
}

TEST(CudaMatMul, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  for (DataType t : kFloatTypes) {
    // [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
    auto y = RunOp("MatMul",
                   {MakeTensor(t, {2, 3}, {1, 2, 3, 4, 5, 6}), MakeTensor(t, {3, 2}, {1, 0, 0, 1, 1, 1})},
                   nullptr, "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(y->shape(), (Shape{2, 2}));
    const std::vector<double> want = {4, 5, 10, 11};
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(ElementAsDouble(*y, i), want[i]) << i;
    // transpose_a: a^T = [[1, 3], [2, 4]] of a = [[1, 2], [3, 4]]; times I.
    auto z = RunOp("MatMul", {MakeTensor(t, {2, 2}, {1, 2, 3, 4}), MakeTensor(t, {2, 2}, {1, 0, 0, 1})},
                   Transposes("transpose_a", true, "transpose_b", false), "CUDA:0");
    ASSERT_TRUE(z.ok()) << z.status();
    const std::vector<double> want_t = {1, 3, 2, 4};
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(ElementAsDouble(*z, i), want_t[i]) << i;
  }
}

TEST(CudaMatMul, IncompatibleShapesAreInvalidArgument) {
  PX_SKIP_WITHOUT_CUDA();
  auto y = RunOp("MatMul",
                 {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                  MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4})},
                 nullptr, "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
}

struct BatchCase {
  Shape x_batch, y_batch;
};

TEST(CudaBatchMatMul, BroadcastingAndAdjoints) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(13);
  const std::vector<BatchCase> cases = {
      {{}, {}},              // plain matrices
      {{3}, {3}},            // equal batches
      {{2, 3}, {2, 3}},      // two batch dims
      {{4}, {1}},            // y repeated (stride 0)
      {{1}, {4}},            // x repeated
      {{5}, {}},             // y has no batch dims
      {{}, {2, 3}},          // x has none
      {{2, 1}, {1, 3}},      // both broadcast: one launch per output matrix
      {{2, 1, 4}, {3, 1}},   // mixed
      {{0}, {0}},            // zero batch
      {{0}, {1}},
  };
  const int64_t m = 7, k = 33, n = 5;
  for (const char* op : {"BatchMatMulV2", "BatchMatMulV3", "BatchMatMul"}) {
    for (DataType t : kFloatTypes) {
      for (const BatchCase& c : cases) {
        const bool broadcasting = c.x_batch != c.y_batch;
        if (std::string(op) == "BatchMatMul" && broadcasting) continue;
        for (int adj = 0; adj < 4; ++adj) {
          const bool ax = adj & 1, ay = adj & 2;
          Shape xs = c.x_batch, ys = c.y_batch;
          for (int64_t d : Stored(m, k, ax)) xs.push_back(d);
          for (int64_t d : Stored(k, n, ay)) ys.push_back(d);
          AttrFn attrs = [&, t, ax, ay](tf::NodeDef* node) {
            Transposes("adj_x", ax, "adj_y", ay)(node);
            if (std::string(op) == "BatchMatMulV3") {
              for (const char* name : {"Ta", "Tb", "Tout"}) {
                (*node->mutable_attr())[name].set_type(static_cast<tf::DataType>(t));
              }
            }
          };
          ExpectCudaMatchesCpu(op, {RandomTensor(t, xs, rng), RandomTensor(t, ys, rng)}, attrs, k,
                               absl::StrCat("adj_x=", ax, " adj_y=", ay));
        }
      }
    }
  }
}

TEST(CudaBatchMatMul, OddSizesAndZeroK) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(17);
  for (DataType t : kFloatTypes) {
    for (int64_t s : {1, 7, 33, 130}) {
      ExpectCudaMatchesCpu("BatchMatMulV2",
                           {RandomTensor(t, {3, s, s}, rng), RandomTensor(t, {1, s, 7}, rng)},
                           nullptr, s, "");
    }
    Tensor y = ExpectCudaMatchesCpu(
        "BatchMatMulV2", {RandomTensor(t, {2, 3, 0}, rng), RandomTensor(t, {2, 0, 4}, rng)}, nullptr,
        0, "k = 0");
    for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(ElementAsDouble(y, i), 0.0);
  }
}

AttrFn Fused(const std::string& activation, bool ta, bool tb) {
  return [=](tf::NodeDef* n) {
    auto& attr = *n->mutable_attr();
    attr["transpose_a"].set_b(ta);
    attr["transpose_b"].set_b(tb);
    attr["num_args"].set_i(1);
    attr["leakyrelu_alpha"].set_f(0.3f);
    auto* list = attr["fused_ops"].mutable_list();
    list->add_s("BiasAdd");
    if (!activation.empty()) list->add_s(activation);
  };
}

TEST(CudaFusedMatMul, EveryActivation) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(19);
  const std::vector<std::string> activations = {"",    "Relu", "Relu6",  "Elu",
                                                "LeakyRelu", "Tanh", "Sigmoid"};
  for (DataType t : kFloatTypes) {
    for (const std::string& act : activations) {
      for (int64_t s : {1, 7, 33, 130}) {
        for (int tr = 0; tr < 4; ++tr) {
          const bool ta = tr & 1, tb = tr & 2;
          const int64_t m = s, k = 33, n = s == 130 ? 7 : s + 2;
          // Larger values so that Relu6 clips.
          Tensor a = RandomTensor(t, Stored(m, k, ta), rng, -2, 2);
          Tensor b = RandomTensor(t, Stored(k, n, tb), rng, -1, 1);
          Tensor bias = RandomTensor(t, {n}, rng, -2, 2);
          ExpectCudaMatchesCpu("_FusedMatMul", {a, b, bias}, Fused(act, ta, tb), k,
                               absl::StrCat("[BiasAdd,", act, "] ta=", ta, " tb=", tb));
        }
      }
      // k == 0: activation(bias) in every row.
      ExpectCudaMatchesCpu("_FusedMatMul",
                           {RandomTensor(t, {3, 0}, rng), RandomTensor(t, {0, 5}, rng),
                            RandomTensor(t, {5}, rng)},
                           Fused(act, false, false), 0, "k = 0");
      // m == 0.
      ExpectCudaMatchesCpu("_FusedMatMul",
                           {RandomTensor(t, {0, 4}, rng), RandomTensor(t, {4, 5}, rng),
                            RandomTensor(t, {5}, rng)},
                           Fused(act, false, false), 4, "m = 0");
    }
  }
}

TEST(CudaFusedMatMul, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  // [[1, 2], [3, 4]] x I + [-2, 10] = [[-1, 12], [1, 14]]
  const Tensor a = MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  const Tensor eye = MakeTensor(DataType::kFloat, {2, 2}, {1, 0, 0, 1});
  const Tensor bias = MakeTensor(DataType::kFloat, {2}, {-2, 10});
  auto run = [&](const std::string& act) {
    auto y = RunOp("_FusedMatMul", {a, eye, bias}, Fused(act, false, false), "CUDA:0");
    EXPECT_TRUE(y.ok()) << act << ": " << y.status();
    std::vector<double> v;
    if (y.ok()) {
      for (int64_t i = 0; i < y->num_elements(); ++i) v.push_back(ElementAsDouble(*y, i));
    }
    return v;
  };
  EXPECT_EQ(run(""), (std::vector<double>{-1, 12, 1, 14}));
  EXPECT_EQ(run("Relu"), (std::vector<double>{0, 12, 1, 14}));
  EXPECT_EQ(run("Relu6"), (std::vector<double>{0, 6, 1, 6}));
  const std::vector<double> leaky = run("LeakyRelu");
  ASSERT_EQ(leaky.size(), 4u);
  EXPECT_NEAR(leaky[0], -0.3, 1e-7);
  EXPECT_EQ(leaky[1], 12);
}

}  // namespace
}  // namespace plexus
