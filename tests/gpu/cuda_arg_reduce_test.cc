// The CUDA plugin's ArgMax / ArgMin, All / Any (arg_reduce.cc) and
// FusedBatchNorm V1 / V2 / V3 inference (batchnorm.cc) on CUDA:0 against the
// cpu plugin: every dtype; ArgMax / ArgMin on every axis (negative too),
// long rows (the block-per-row kernel) and short ones (the column kernel),
// ties (the first index wins), NaN (skipped unless first), each
// output_type; All / Any over no, one, several, repeated and negative axes
// with keep_dims both ways, rank 0, zero-size and empty reductions, a large
// full reduction; FusedBatchNorm NHWC and NCHW, many channels (no shared
// memory), zero-size, and the refusals (is_training, bad shapes). Exact
// values are checked where obvious. Skipped, with the reason, where the
// plugin reports no CUDA device; label gpu.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attr_value.pb.h"
#include "cases.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "gpu/cuda_test_util.h"

namespace plexus {
namespace {

using conformance::DefaultTolerance;
using conformance::IntTensor;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;
using cuda_test::AttrMap;
using cuda_test::Exact;
using cuda_test::ExpectCudaMatchesCpu;
using cuda_test::RunOp;
using cuda_test::SetType;
using cuda_test::Values;

const std::vector<DataType> kArgTypes = {
    DataType::kFloat, DataType::kDouble, DataType::kHalf,  DataType::kBFloat16, DataType::kInt8,
    DataType::kInt16, DataType::kInt32,  DataType::kInt64, DataType::kUInt8,    DataType::kBool};

cuda_test::SetAttrs ArgAttrs(DataType t, DataType tidx, DataType out) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    SetType(a, "Tidx", tidx);
    SetType(a, "output_type", out);
  };
}

TEST(CudaArgReduce, MatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(51);
  const std::vector<Shape> shapes = {{7}, {5, 7, 9}, {3, 1000}, {1, 100003}, {4, 70, 3},
                                     {2, 0, 3}, {300, 5}};
  for (DataType t : kArgTypes) {
    for (const char* op : {"ArgMax", "ArgMin"}) {
      for (const Shape& shape : shapes) {
        const int64_t rank = static_cast<int64_t>(shape.size());
        for (int64_t axis = -rank; axis < rank; ++axis) {
          const int64_t a = axis < 0 ? axis + rank : axis;
          if (shape[a] == 0) continue;  // refused (below)
          // Few distinct values: ties are common and the first index wins.
          Tensor x = RandomTensor(t, shape, rng, -3, 3);
          ExpectCudaMatchesCpu(op, {x, IntTensor(DataType::kInt32, {}, {axis})},
                               ArgAttrs(t, DataType::kInt32, DataType::kInt64), Exact());
        }
      }
      // The other index and output types.
      Tensor x = RandomTensor(t, {6, 200}, rng, -3, 3);
      ExpectCudaMatchesCpu(op, {x, IntTensor(DataType::kInt64, {}, {1})},
                           ArgAttrs(t, DataType::kInt64, DataType::kInt32), Exact());
      ExpectCudaMatchesCpu(op, {x, IntTensor(DataType::kInt32, {}, {0})},
                           ArgAttrs(t, DataType::kInt32, DataType::kInt16), Exact());
    }
  }
}

TEST(CudaArgReduce, NaNAndExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Rows short (column kernel) and long (block-per-row kernel), NaN first,
  // NaN inside, all NaN, infinities.
  for (int64_t n : {5, 300}) {
    std::vector<double> v;
    for (int row = 0; row < 4; ++row) {
      for (int64_t k = 0; k < n; ++k) {
        double x = static_cast<double>((k * 7 + row) % 11);
        if (row == 0 && k == 0) x = nan;
        if (row == 1 && k % 3 == 1) x = nan;
        if (row == 2) x = nan;
        if (row == 3 && k == n - 1) x = -inf;
        v.push_back(x);
      }
    }
    for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16}) {
      for (const char* op : {"ArgMax", "ArgMin"}) {
        ExpectCudaMatchesCpu(op, {MakeTensor(t, {4, n}, v), IntTensor(DataType::kInt32, {}, {1})},
                             ArgAttrs(t, DataType::kInt32, DataType::kInt64), Exact());
      }
    }
  }
  auto y = RunOp("ArgMax",
                 {MakeTensor(DataType::kFloat, {2, 3}, {1, 5, 5, 9, 2, 9}),
                  IntTensor(DataType::kInt32, {}, {1})},
                 ArgAttrs(DataType::kFloat, DataType::kInt32, DataType::kInt64), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 0}));
  auto z = RunOp("ArgMin",
                 {MakeTensor(DataType::kInt32, {2, 3}, {1, 5, 5, 9, 2, 0}),
                  IntTensor(DataType::kInt32, {}, {0})},
                 ArgAttrs(DataType::kInt32, DataType::kInt32, DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(Values(*z), (std::vector<double>{0, 1, 1}));
}

TEST(CudaArgReduce, Refusals) {
  PX_SKIP_WITHOUT_CUDA();
  const auto attrs = ArgAttrs(DataType::kFloat, DataType::kInt32, DataType::kInt64);
  // Axis out of range; an empty axis.
  auto a = RunOp("ArgMax", {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                            IntTensor(DataType::kInt32, {}, {2})},
                 attrs, "CUDA:0");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << a.status();
  auto b = RunOp("ArgMax", {MakeTensor(DataType::kFloat, {2, 0}, {}), IntTensor(DataType::kInt32, {}, {1})},
                 attrs, "CUDA:0");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << b.status();
}

cuda_test::SetAttrs LogicalAttrs(DataType tidx, bool keep_dims) {
  return [=](AttrMap& a) {
    SetType(a, "Tidx", tidx);
    a["keep_dims"].set_b(keep_dims);
  };
}

TEST(CudaLogicalReduce, MatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(53);
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {{}, {}},          {{7}, {0}},         {{7}, {}},          {{4, 5}, {1}},
      {{4, 5}, {0}},     {{4, 5}, {0, 1}},   {{4, 5}, {-1}},     {{3, 4, 5}, {0, 2}},
      {{3, 4, 5}, {1}},  {{3, 4, 5}, {1, 1}}, {{2, 3, 4, 5}, {0, 2}}, {{3, 1, 5}, {1}},
      {{0, 4}, {0}},     {{0, 4}, {1}},      {{4, 0, 2}, {1}},   {{(1 << 20) + 3}, {0}},
      {{1000, 513}, {1}}, {{1000, 513}, {0}},
  };
  for (const char* op : {"All", "Any"}) {
    for (const Case& c : cases) {
      for (bool keep_dims : {false, true}) {
        // Mostly true for All and mostly false for Any, so that both
        // answers occur.
        for (double p_true : {0.5, 0.999, 0.001}) {
          std::bernoulli_distribution coin(p_true);
          int64_t n = 1;
          for (int64_t d : c.shape) n *= d;
          std::vector<double> v(static_cast<size_t>(n));
          for (double& x : v) x = coin(rng) ? 1 : 0;
          const Shape axes_shape = {static_cast<int64_t>(c.axes.size())};
          ExpectCudaMatchesCpu(op,
                               {MakeTensor(DataType::kBool, c.shape, v),
                                IntTensor(DataType::kInt32, axes_shape, c.axes)},
                               LogicalAttrs(DataType::kInt32, keep_dims), Exact());
        }
      }
    }
    // A scalar int64 axis.
    ExpectCudaMatchesCpu(op,
                         {RandomTensor(DataType::kBool, {6, 7}, rng),
                          IntTensor(DataType::kInt64, {}, {-2})},
                         LogicalAttrs(DataType::kInt64, false), Exact());
  }
  auto y = RunOp("All",
                 {MakeTensor(DataType::kBool, {2, 3}, {1, 1, 1, 1, 0, 1}),
                  IntTensor(DataType::kInt32, {1}, {1})},
                 LogicalAttrs(DataType::kInt32, false), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 0}));
  auto z = RunOp("Any",
                 {MakeTensor(DataType::kBool, {2, 3}, {0, 0, 0, 0, 1, 0}),
                  IntTensor(DataType::kInt32, {2}, {0, 1})},
                 LogicalAttrs(DataType::kInt32, true), "CUDA:0");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), (Shape{1, 1}));
  EXPECT_EQ(Values(*z), (std::vector<double>{1}));
  // Empty reductions: All true, Any false.
  auto e = RunOp("All", {MakeTensor(DataType::kBool, {0}, {}), IntTensor(DataType::kInt32, {1}, {0})},
                 LogicalAttrs(DataType::kInt32, false), "CUDA:0");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(Values(*e), (std::vector<double>{1}));
  auto bad = RunOp("Any", {MakeTensor(DataType::kBool, {2}, {0, 1}), IntTensor(DataType::kInt32, {1}, {3})},
                   LogicalAttrs(DataType::kInt32, false), "CUDA:0");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

// FusedBatchNorm: x, scale, offset, mean, variance; output 0 compared.
cuda_test::SetAttrs BnAttrs(const std::string& op, DataType t, const std::string& format,
                            bool training = false, float epsilon = 1e-3f) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    if (op != "FusedBatchNorm") SetType(a, "U", DataType::kFloat);
    a["data_format"].set_s(format);
    a["is_training"].set_b(training);
    a["epsilon"].set_f(epsilon);
  };
}

std::vector<Tensor> BnInputs(DataType t, const Shape& shape, int64_t channels, std::mt19937& rng) {
  return {RandomTensor(t, shape, rng, -3, 3), RandomTensor(DataType::kFloat, {channels}, rng, 0.5, 2),
          RandomTensor(DataType::kFloat, {channels}, rng, -1, 1),
          RandomTensor(DataType::kFloat, {channels}, rng, -1, 1),
          RandomTensor(DataType::kFloat, {channels}, rng, 0.1, 3)};
}

TEST(CudaBatchNorm, MatchesTheCpuPlugin) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(57);
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    const std::vector<DataType> types =
        std::string(op) == "FusedBatchNorm"
            ? std::vector<DataType>{DataType::kFloat}
            : std::vector<DataType>{DataType::kFloat, DataType::kHalf, DataType::kBFloat16};
    for (DataType t : types) {
      for (const std::string format : {"NHWC", "NCHW"}) {
        // [n, h, w, c] sizes; the last has more channels than fit in shared
        // memory.
        for (const std::vector<int64_t>& s : std::vector<std::vector<int64_t>>{
                 {2, 5, 7, 3}, {1, 1, 1, 1}, {3, 4, 4, 64}, {0, 4, 4, 8}, {2, 3, 3, 5000}}) {
          const int64_t n = s[0], h = s[1], w = s[2], c = s[3];
          const Shape shape = format == "NHWC" ? Shape{n, h, w, c} : Shape{n, c, h, w};
          ExpectCudaMatchesCpu(op, BnInputs(t, shape, c, rng), BnAttrs(op, t, format),
                               DefaultTolerance(t));
        }
      }
    }
  }
  // Exact: x = 3, mean 1, variance 4 - epsilon 0 -> (3 - 1) / 2 * scale 2 + offset 1 = 3.
  auto y = RunOp("FusedBatchNormV3",
                 {MakeTensor(DataType::kFloat, {1, 1, 2, 1}, {3, 1}),
                  MakeTensor(DataType::kFloat, {1}, {2}), MakeTensor(DataType::kFloat, {1}, {1}),
                  MakeTensor(DataType::kFloat, {1}, {1}), MakeTensor(DataType::kFloat, {1}, {4})},
                 BnAttrs("FusedBatchNormV3", DataType::kFloat, "NHWC", false, 0.0f), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{3, 1}));
}

TEST(CudaBatchNorm, Refusals) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(59);
  auto training = RunOp("FusedBatchNormV3", BnInputs(DataType::kFloat, {1, 2, 2, 3}, 3, rng),
                        BnAttrs("FusedBatchNormV3", DataType::kFloat, "NHWC", true), "CUDA:0");
  ASSERT_FALSE(training.ok());
  EXPECT_EQ(training.status().code(), absl::StatusCode::kUnimplemented) << training.status();
  EXPECT_NE(std::string(training.status().message()).find("is_training"), std::string::npos)
      << training.status();
  // Channel count mismatch.
  auto bad = RunOp("FusedBatchNormV2", BnInputs(DataType::kFloat, {1, 2, 2, 3}, 4, rng),
                   BnAttrs("FusedBatchNormV2", DataType::kFloat, "NHWC"), "CUDA:0");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

}  // namespace
}  // namespace plexus
