// The CUDA plugin's data-movement kernels (Transpose, ConcatV2, Concat, Cast,
// Gather, GatherV2, Pad, PadV2) on CUDA:0 against the cpu plugin, exactly:
// every dtype; every permutation of rank 3 and some of rank 5 (tiled and
// general paths, size-1 dimensions, zero-size); ConcatV2 on every axis
// including negative ones, with empty inputs; Cast between every pair of
// dtypes (saturation, Truncate); Gather on every axis with int32 and int64
// indices and batch_dims, out-of-range indices refused; Pad and PadV2 with
// zero-size and rank 0. Skipped, with the reason, where the plugin reports
// no CUDA device; label gpu.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
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
using conformance::IntTensor;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

using cuda_test::AttrMap;
using cuda_test::Describe;
using cuda_test::kAllTypes;
using cuda_test::kFloatTypes;
using cuda_test::NoCudaDeviceReason;
using cuda_test::RunOp;
using cuda_test::SetAttrs;
using cuda_test::SetType;
using cuda_test::TheRuntime;
using cuda_test::Values;

// Data movement is exact: both plugins follow the same rules.
Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const SetAttrs& set_attrs) {
  return cuda_test::ExpectCudaMatchesCpu(op, inputs, set_attrs, cuda_test::Exact());
}

// ---------------------------------------------------------------------------
// Transpose
// ---------------------------------------------------------------------------

void ExpectTranspose(const Tensor& x, const std::vector<int64_t>& perm, DataType tperm) {
  const Tensor p = IntTensor(tperm, {static_cast<int64_t>(perm.size())}, perm);
  ExpectCudaMatchesCpu("Transpose", {x, p}, [&](AttrMap& a) {
    SetType(a, "T", x.dtype());
    SetType(a, "Tperm", tperm);
  });
}

TEST(CudaArray, TransposeEveryPermutationOfRank3) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(1);
  const std::vector<Shape> shapes = {{2, 3, 4}, {5, 1, 7}, {40, 33, 17}, {3, 64, 48},
                                     {1, 1, 1}, {4, 0, 3}};
  for (DataType t : kAllTypes) {
    for (const Shape& shape : shapes) {
      std::vector<int64_t> perm = {0, 1, 2};
      do {
        ExpectTranspose(RandomTensor(t, shape, rng), perm,
                        t == DataType::kInt8 ? DataType::kInt64 : DataType::kInt32);
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
}

TEST(CudaArray, TransposeOtherRanks) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  for (DataType t : {DataType::kFloat, DataType::kHalf, DataType::kInt64, DataType::kUInt8}) {
    ExpectTranspose(RandomTensor(t, {}, rng), {}, DataType::kInt32);              // rank 0
    ExpectTranspose(RandomTensor(t, {9}, rng), {0}, DataType::kInt32);           // rank 1
    ExpectTranspose(RandomTensor(t, {1000, 999}, rng), {1, 0}, DataType::kInt32);  // tiled, large
    ExpectTranspose(RandomTensor(t, {3, 2000}, rng), {1, 0}, DataType::kInt32);  // short: general
    ExpectTranspose(RandomTensor(t, {0, 5}, rng), {1, 0}, DataType::kInt32);
    const Shape shape5 = {2, 3, 4, 5, 6};
    const std::vector<std::vector<int64_t>> perms5 = {
        {0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {0, 1, 2, 4, 3}, {1, 0, 2, 3, 4}, {2, 3, 4, 0, 1},
        {0, 3, 1, 4, 2}, {3, 4, 0, 1, 2}, {0, 2, 1, 3, 4}};
    for (const auto& perm : perms5) ExpectTranspose(RandomTensor(t, shape5, rng), perm, DataType::kInt64);
    // NHWC <-> NCHW with the innermost dimension moved or kept.
    ExpectTranspose(RandomTensor(t, {2, 17, 19, 40}, rng), {0, 3, 1, 2}, DataType::kInt32);
    ExpectTranspose(RandomTensor(t, {2, 40, 17, 19}, rng), {0, 2, 3, 1}, DataType::kInt32);
    ExpectTranspose(RandomTensor(t, {6, 5, 8}, rng), {1, 0, 2}, DataType::kInt32);
  }
  // Exact values.
  const Tensor x = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = RunOp("Transpose", {x, IntTensor(DataType::kInt32, {2}, {1, 0})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "Tperm", DataType::kInt32);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(CudaArray, TransposeBadPermIsRefused) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  auto y = RunOp("Transpose",
                 {RandomTensor(DataType::kFloat, {2, 3}, rng),
                  IntTensor(DataType::kInt32, {2}, {0, 0})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "Tperm", DataType::kInt32);
                 },
                 "CUDA:0");
  EXPECT_FALSE(y.ok());
}

// ---------------------------------------------------------------------------
// ConcatV2, Concat
// ---------------------------------------------------------------------------

void ExpectConcatV2(const std::vector<Tensor>& xs, int64_t axis, DataType tidx) {
  std::vector<Tensor> inputs = xs;
  inputs.push_back(IntTensor(tidx, {}, {axis}));
  ExpectCudaMatchesCpu("ConcatV2", inputs, [&](AttrMap& a) {
    SetType(a, "T", xs[0].dtype());
    SetType(a, "Tidx", tidx);
    a["N"].set_i(static_cast<int64_t>(xs.size()));
  });
}

TEST(CudaArray, ConcatV2EveryAxis) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  for (DataType t : kAllTypes) {
    for (int64_t axis : {0, 1, 2, -1, -2, -3}) {
      const int64_t a = axis < 0 ? axis + 3 : axis;
      Shape s0 = {4, 5, 6}, s1 = {4, 5, 6}, s2 = {4, 5, 6};
      s1[a] = 3;
      s2[a] = 0;  // an empty input
      ExpectConcatV2({RandomTensor(t, s0, rng), RandomTensor(t, s1, rng), RandomTensor(t, s2, rng)},
                     axis, axis < 0 ? DataType::kInt64 : DataType::kInt32);
    }
    // N = 2 is ConcatV2's minimum; one of them empty.
    ExpectConcatV2({RandomTensor(t, {7}, rng), RandomTensor(t, {0}, rng)}, 0, DataType::kInt32);
    ExpectConcatV2({RandomTensor(t, {0, 3}, rng), RandomTensor(t, {0, 2}, rng)}, 1,
                   DataType::kInt32);  // zero-size output
  }
  // Large: many rows, many inputs.
  std::vector<Tensor> many;
  for (int k = 0; k < 12; ++k) many.push_back(RandomTensor(DataType::kFloat, {3000, 1 + k}, rng));
  ExpectConcatV2(many, 1, DataType::kInt32);
  ExpectConcatV2({RandomTensor(DataType::kFloat, {1 << 20}, rng),
                  RandomTensor(DataType::kFloat, {12345}, rng)},
                 0, DataType::kInt32);
  // Concat (axis first).
  const Tensor x = MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  const Tensor z = MakeTensor(DataType::kFloat, {2, 1}, {5, 6});
  auto y = RunOp("Concat", {IntTensor(DataType::kInt32, {}, {1}), x, z},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   a["N"].set_i(2);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{2, 3}));
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, 5, 3, 4, 6}));
}

TEST(CudaArray, ConcatV2BadAxisIsRefused) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  auto y = RunOp("ConcatV2",
                 {RandomTensor(DataType::kFloat, {2, 3}, rng),
                  RandomTensor(DataType::kFloat, {2, 3}, rng), IntTensor(DataType::kInt32, {}, {2})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "Tidx", DataType::kInt32);
                   a["N"].set_i(2);
                 },
                 "CUDA:0");
  EXPECT_FALSE(y.ok());
}

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------

bool IsFloating(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kHalf ||
         t == DataType::kBFloat16;
}

TEST(CudaArray, CastEveryPair) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(6);
  for (DataType src : kAllTypes) {
    for (DataType dst : kAllTypes) {
      for (bool truncate : {false, true}) {
        if (truncate && !(IsFloating(src) && IsFloating(dst))) continue;
        auto attrs = [&](AttrMap& a) {
          SetType(a, "SrcT", src);
          SetType(a, "DstT", dst);
          a["Truncate"].set_b(truncate);
        };
        ExpectCudaMatchesCpu("Cast", {RandomTensor(src, {1001}, rng)}, attrs);
        // Wide floats: saturation of the integer types, rounding, infinity.
        if (IsFloating(src) && src != DataType::kHalf) {
          ExpectCudaMatchesCpu("Cast", {RandomTensor(src, {257}, rng, -1e12, 1e12)}, attrs);
        }
        ExpectCudaMatchesCpu("Cast", {RandomTensor(src, {}, rng)}, attrs);      // rank 0
        ExpectCudaMatchesCpu("Cast", {RandomTensor(src, {3, 0}, rng)}, attrs);  // zero-size
      }
    }
  }
  ExpectCudaMatchesCpu("Cast", {RandomTensor(DataType::kFloat, {1 << 20}, rng)}, [](AttrMap& a) {
    SetType(a, "SrcT", DataType::kFloat);
    SetType(a, "DstT", DataType::kHalf);
  });
  // Exact values: NaN to int is 0, saturation, bool.
  const Tensor x = MakeTensor(DataType::kFloat, {5}, {std::nan(""), 1e10, -1e10, 2.7, 0});
  auto y = RunOp("Cast", {x},
                 [](AttrMap& a) {
                   SetType(a, "SrcT", DataType::kFloat);
                   SetType(a, "DstT", DataType::kInt32);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{0, 2147483647, -2147483648.0, 2, 0}));
  auto b = RunOp("Cast", {x},
                 [](AttrMap& a) {
                   SetType(a, "SrcT", DataType::kFloat);
                   SetType(a, "DstT", DataType::kBool);
                 },
                 "CUDA:0");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Values(*b), (std::vector<double>{1, 1, 1, 1, 0}));
}

// ---------------------------------------------------------------------------
// Gather, GatherV2
// ---------------------------------------------------------------------------

Tensor RandomIndices(DataType t, const Shape& shape, int64_t limit, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_int_distribution<int64_t> dist(0, limit > 0 ? limit - 1 : 0);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& e : v) e = dist(rng);
  return IntTensor(t, shape, v);
}

SetAttrs GatherAttrs(DataType t, DataType ti, DataType ta, int64_t batch_dims) {
  return [=](AttrMap& a) {
    SetType(a, "Tparams", t);
    SetType(a, "Tindices", ti);
    SetType(a, "Taxis", ta);
    a["batch_dims"].set_i(batch_dims);
  };
}

TEST(CudaArray, GatherV2EveryAxis) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(7);
  const Shape params = {4, 5, 6};
  for (DataType t : kAllTypes) {
    for (DataType ti : {DataType::kInt32, DataType::kInt64}) {
      for (int64_t axis : {0, 1, 2, -1, -3}) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        for (const Shape& ishape : {Shape{}, Shape{7}, Shape{2, 3}, Shape{0}}) {
          ExpectCudaMatchesCpu("GatherV2",
                               {RandomTensor(t, params, rng),
                                RandomIndices(ti, ishape, params[a], rng),
                                IntTensor(ti, {}, {axis})},
                               GatherAttrs(t, ti, ti, 0));
        }
      }
    }
  }
  // batch_dims 1: params [3, 4, 5], indices [3, 6] on axis 1.
  ExpectCudaMatchesCpu("GatherV2",
                       {RandomTensor(DataType::kFloat, {3, 4, 5}, rng),
                        RandomIndices(DataType::kInt32, {3, 6}, 4, rng),
                        IntTensor(DataType::kInt32, {}, {1})},
                       GatherAttrs(DataType::kFloat, DataType::kInt32, DataType::kInt32, 1));
  // Large: an embedding lookup with wide rows (16-byte words), odd rows.
  ExpectCudaMatchesCpu("GatherV2",
                       {RandomTensor(DataType::kFloat, {5000, 256}, rng),
                        RandomIndices(DataType::kInt64, {3000}, 5000, rng),
                        IntTensor(DataType::kInt32, {}, {0})},
                       GatherAttrs(DataType::kFloat, DataType::kInt64, DataType::kInt32, 0));
  ExpectCudaMatchesCpu("GatherV2",
                       {RandomTensor(DataType::kHalf, {1000, 3}, rng),
                        RandomIndices(DataType::kInt32, {200000}, 1000, rng),
                        IntTensor(DataType::kInt32, {}, {0})},
                       GatherAttrs(DataType::kHalf, DataType::kInt32, DataType::kInt32, 0));
  // Gather (V1): axis 0.
  const Tensor p = MakeTensor(DataType::kFloat, {3, 2}, {1, 2, 3, 4, 5, 6});
  auto y = RunOp("Gather", {p, IntTensor(DataType::kInt32, {2}, {2, 0})},
                 [](AttrMap& a) {
                   SetType(a, "Tparams", DataType::kFloat);
                   SetType(a, "Tindices", DataType::kInt32);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{5, 6, 1, 2}));
}

TEST(CudaArray, GatherOutOfRangeIndicesAreRefused) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(8);
  for (DataType ti : {DataType::kInt32, DataType::kInt64}) {
    for (int64_t bad : {5, -1}) {
      auto y = RunOp("GatherV2",
                     {RandomTensor(DataType::kFloat, {5, 3}, rng),
                      IntTensor(ti, {2, 2}, {0, 4, bad, 1}), IntTensor(ti, {}, {0})},
                     GatherAttrs(DataType::kFloat, ti, ti, 0), "CUDA:0");
      ASSERT_FALSE(y.ok());
      EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
      EXPECT_NE(std::string(y.status().message()).find(absl::StrCat("indices[1,0] = ", bad,
                                                                    " is not in [0, 5)")),
                std::string::npos)
          << y.status();
    }
  }
}

// ---------------------------------------------------------------------------
// Pad, PadV2
// ---------------------------------------------------------------------------

TEST(CudaArray, PadAndPadV2) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(9);
  struct Case {
    Shape shape;
    std::vector<int64_t> pad;
  };
  const std::vector<Case> cases = {
      {{}, {}},                                    // rank 0
      {{5}, {2, 3}},
      {{4, 5, 6}, {0, 0, 1, 2, 0, 0}},             // middle only: merged
      {{4, 5, 6}, {1, 0, 0, 0, 0, 3}},
      {{2, 3, 4, 5}, {1, 1, 2, 2, 0, 1, 3, 0}},
      {{4, 1, 6}, {0, 0, 0, 0, 0, 0}},             // nothing padded: a copy
      {{0, 3}, {1, 1, 0, 2}},                      // empty input, padded output
      {{0, 3}, {0, 0, 1, 1}},                      // zero-size output
      {{300, 301}, {7, 9, 11, 13}},                // large
  };
  for (DataType t : kAllTypes) {
    for (DataType tp : {DataType::kInt32, DataType::kInt64}) {
      for (const Case& c : cases) {
        const Tensor x = RandomTensor(t, c.shape, rng);
        const Tensor pad = IntTensor(tp, {static_cast<int64_t>(c.shape.size()), 2}, c.pad);
        auto attrs = [&](AttrMap& a) {
          SetType(a, "T", t);
          SetType(a, "Tpaddings", tp);
        };
        ExpectCudaMatchesCpu("Pad", {x, pad}, attrs);
        ExpectCudaMatchesCpu("PadV2", {x, pad, RandomTensor(t, {}, rng)}, attrs);
      }
    }
  }
  auto y = RunOp("PadV2",
                 {MakeTensor(DataType::kFloat, {2}, {1, 2}), IntTensor(DataType::kInt32, {1, 2}, {1, 2}),
                  MakeTensor(DataType::kFloat, {}, {9})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "Tpaddings", DataType::kInt32);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{9, 1, 2, 9, 9}));
  auto bad = RunOp("Pad",
                   {MakeTensor(DataType::kFloat, {2}, {1, 2}),
                    IntTensor(DataType::kInt32, {1, 2}, {-1, 0})},
                   [](AttrMap& a) {
                     SetType(a, "T", DataType::kFloat);
                     SetType(a, "Tpaddings", DataType::kInt32);
                   },
                   "CUDA:0");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace plexus
