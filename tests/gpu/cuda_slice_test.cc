// The CUDA plugin's Slice and StridedSlice on CUDA:0 against the cpu plugin,
// exactly: every dtype; Slice with -1 sizes and zero-size results;
// StridedSlice with negative strides, begin/end masks, ellipsis, new_axis,
// shrink_axis and empty results; plus exact values and refusals. Skipped,
// with the reason, where the plugin reports no CUDA device; label gpu.
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

Tensor Ints(DataType t, const std::vector<int64_t>& v) {
  return IntTensor(t, {static_cast<int64_t>(v.size())}, v);
}

// ---------------------------------------------------------------------------
// Slice
// ---------------------------------------------------------------------------

Tensor ExpectSlice(const Tensor& x, const std::vector<int64_t>& begin,
                   const std::vector<int64_t>& size, DataType index) {
  return ExpectCudaMatchesCpu("Slice", {x, Ints(index, begin), Ints(index, size)},
                              [&](AttrMap& a) {
                                SetType(a, "T", x.dtype());
                                SetType(a, "Index", index);
                              });
}

TEST(CudaSlice, SliceEveryDtype) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(1);
  for (DataType t : kAllTypes) {
    const DataType index = t == DataType::kInt8 ? DataType::kInt64 : DataType::kInt32;
    const Tensor x = RandomTensor(t, {4, 5, 6}, rng);
    ExpectSlice(x, {1, 2, 3}, {2, 2, 2}, index);
    ExpectSlice(x, {0, 0, 0}, {-1, -1, -1}, index);      // the whole input: a copy
    ExpectSlice(x, {1, 0, 0}, {2, -1, -1}, index);       // contiguous rows
    ExpectSlice(x, {3, 4, 5}, {1, 1, 1}, index);         // one element
    ExpectSlice(x, {0, 1, 2}, {-1, 3, -1}, index);
    ExpectSlice(x, {2, 5, 0}, {1, 0, -1}, index);        // zero-size
    ExpectSlice(x, {4, 0, 0}, {-1, -1, -1}, index);      // zero-size through -1
    ExpectSlice(RandomTensor(t, {}, rng), {}, {}, index);  // rank 0
    ExpectSlice(RandomTensor(t, {33, 70}, rng), {3, 5}, {29, 64}, index);  // wide words
    ExpectSlice(RandomTensor(t, {2, 1, 3, 1, 4, 1, 5, 1, 6, 2}, rng),
                {1, 0, 1, 0, 1, 0, 1, 0, 1, 1}, {1, 1, 2, 1, 2, 1, 3, 1, 4, 1}, index);  // rank 10
  }
}

TEST(CudaSlice, SliceLargeAndExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  ExpectSlice(RandomTensor(DataType::kFloat, {1000, 1003}, rng), {1, 2}, {997, -1},
              DataType::kInt64);
  ExpectSlice(RandomTensor(DataType::kHalf, {7, 9, 11, 13}, rng), {1, 2, 3, 4}, {5, 6, 7, 8},
              DataType::kInt32);
  auto y = RunOp("Slice",
                 {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                  Ints(DataType::kInt32, {0, 1}), Ints(DataType::kInt32, {-1, 2})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "Index", DataType::kInt32);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{2, 2}));
  EXPECT_EQ(Values(*y), (std::vector<double>{2, 3, 5, 6}));
}

TEST(CudaSlice, SliceOutOfRangeIsRefused) {
  PX_SKIP_WITHOUT_CUDA();
  auto bad = RunOp("Slice",
                   {MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                    Ints(DataType::kInt32, {1, 1}), Ints(DataType::kInt32, {2, 1})},
                   [](AttrMap& a) {
                     SetType(a, "T", DataType::kFloat);
                     SetType(a, "Index", DataType::kInt32);
                   },
                   "CUDA:0");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("size[0]"), absl::string_view::npos) << bad.status();
}

// ---------------------------------------------------------------------------
// StridedSlice
// ---------------------------------------------------------------------------

struct Masks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

SetAttrs StridedAttrs(DataType t, DataType index, const Masks& m) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    SetType(a, "Index", index);
    a["begin_mask"].set_i(m.begin);
    a["end_mask"].set_i(m.end);
    a["ellipsis_mask"].set_i(m.ellipsis);
    a["new_axis_mask"].set_i(m.new_axis);
    a["shrink_axis_mask"].set_i(m.shrink);
  };
}

Tensor ExpectStridedSlice(const Tensor& x, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                          const Masks& m, DataType index = DataType::kInt32) {
  return ExpectCudaMatchesCpu(
      "StridedSlice", {x, Ints(index, begin), Ints(index, end), Ints(index, strides)},
      StridedAttrs(x.dtype(), index, m));
}

TEST(CudaSlice, StridedSliceEveryDtype) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (DataType t : kAllTypes) {
    const DataType index = t == DataType::kInt16 ? DataType::kInt64 : DataType::kInt32;
    const Tensor x = RandomTensor(t, {6, 7, 8}, rng);
    ExpectStridedSlice(x, {1, 2, 3}, {5, 6, 7}, {1, 1, 1}, {}, index);
    ExpectStridedSlice(x, {0, 0, 0}, {6, 7, 8}, {2, 3, 2}, {}, index);
    ExpectStridedSlice(x, {-1, -1, -1}, {-7, -8, -9}, {-1, -1, -1}, {}, index);  // reversed
    ExpectStridedSlice(x, {5, 0, 7}, {0, 7, 0}, {-2, 1, -3}, {}, index);
    ExpectStridedSlice(x, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {7, 7, 0}, index);  // masks: whole
    ExpectStridedSlice(x, {2, 0, 0}, {0, 0, 0}, {1, -1, 1}, {2, 7, 4}, index);
    ExpectStridedSlice(x, {1}, {2}, {1}, {0, 0, 0, 0, 1}, index);  // shrink: x[1]
    ExpectStridedSlice(x, {0, 3}, {0, 4}, {1, 1}, {0, 0, 1, 0, 2}, index);  // x[..., 3]
    ExpectStridedSlice(x, {0, 1, 0}, {0, 5, 0}, {1, 2, 1}, {0, 0, 0, 5, 0}, index);  // new axes
    ExpectStridedSlice(x, {3, 2}, {1, 2}, {1, 1}, {}, index);   // empty: end before begin
    ExpectStridedSlice(x, {1, 2}, {3, 5}, {-1, 1}, {}, index);  // empty: negative stride
    ExpectStridedSlice(RandomTensor(t, {0, 4}, rng), {0, 1}, {0, 3}, {1, 1}, {1, 0, 0, 0, 0},
                       index);  // zero-size input
    ExpectStridedSlice(RandomTensor(t, {5}, rng), {2}, {3}, {1}, {0, 0, 0, 0, 1}, index);  // scalar
  }
}

TEST(CudaSlice, StridedSliceMasksAndEllipsis) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  const Tensor x = RandomTensor(DataType::kFloat, {3, 4, 5, 6}, rng);
  // x[1:, ..., ::-2]
  ExpectStridedSlice(x, {1, 0, 0}, {0, 0, 0}, {1, 1, -2}, {4, 1 | 4, 2, 0, 0});
  // x[..., tf.newaxis, 2]
  ExpectStridedSlice(x, {0, 0, 2}, {0, 0, 3}, {1, 1, 1}, {0, 0, 1, 2, 4});
  // x[tf.newaxis, 1, ..., 1:4, tf.newaxis]
  ExpectStridedSlice(x, {0, 1, 0, 1, 0}, {0, 2, 0, 4, 0}, {1, 1, 1, 1, 1}, {0, 0, 4, 1 | 16, 2});
  // x[::-1, 3, ::2, -1]
  ExpectStridedSlice(x, {0, 3, 0, -1}, {0, 4, 0, 0}, {-1, 1, 2, 1}, {1 | 4, 1 | 4, 0, 0, 2 | 8});
  // Everything masked with an ellipsis: the identity.
  ExpectStridedSlice(x, {0}, {0}, {1}, {0, 0, 1, 0, 0});
  // Large, contiguous rows and reversed rows.
  ExpectStridedSlice(RandomTensor(DataType::kDouble, {500, 2001}, rng), {3, 0}, {400, 0},
                     {1, 1}, {0, 2, 0, 0, 0}, DataType::kInt64);
  ExpectStridedSlice(RandomTensor(DataType::kBFloat16, {300, 1001}, rng), {299, 1000},
                     {0, 0}, {-3, -1}, {2, 2, 0, 0, 0});
  // Rank 9 with every other dimension shrunk.
  ExpectStridedSlice(RandomTensor(DataType::kInt32, {2, 3, 2, 3, 2, 3, 2, 3, 2}, rng),
                     {1, 1, 1, 0, 1, 2, 0, 1, 1}, {2, 3, 2, 3, 2, 0, 2, 3, 2},
                     {1, 1, 1, 2, 1, -1, 1, 1, 1}, {0, 0, 0, 0, 1 | 4 | 16 | 64 | 256});
}

TEST(CudaSlice, StridedSliceExactValuesAndRefusals) {
  PX_SKIP_WITHOUT_CUDA();
  const Tensor x = MakeTensor(DataType::kInt32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  // x[:, ::-2]
  auto y = RunOp("StridedSlice",
                 {x, Ints(DataType::kInt32, {0, -1}), Ints(DataType::kInt32, {0, 0}),
                  Ints(DataType::kInt32, {1, -2})},
                 StridedAttrs(DataType::kInt32, DataType::kInt32, {1 | 2, 1 | 2, 0, 0, 0}),
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{2, 2}));
  EXPECT_EQ(Values(*y), (std::vector<double>{3, 1, 7, 5}));
  // x[1, 2]: a scalar.
  auto s = RunOp("StridedSlice",
                 {x, Ints(DataType::kInt32, {1, 2}), Ints(DataType::kInt32, {2, 3}),
                  Ints(DataType::kInt32, {1, 1})},
                 StridedAttrs(DataType::kInt32, DataType::kInt32, {0, 0, 0, 0, 3}), "CUDA:0");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape(), (Shape{}));
  EXPECT_EQ(Values(*s), (std::vector<double>{6}));
  // A zero stride and two ellipses are refused.
  auto zero = RunOp("StridedSlice",
                    {x, Ints(DataType::kInt32, {0}), Ints(DataType::kInt32, {1}),
                     Ints(DataType::kInt32, {0})},
                    StridedAttrs(DataType::kInt32, DataType::kInt32, {}), "CUDA:0");
  EXPECT_FALSE(zero.ok());
  auto two = RunOp("StridedSlice",
                   {x, Ints(DataType::kInt32, {0, 0}), Ints(DataType::kInt32, {0, 0}),
                    Ints(DataType::kInt32, {1, 1})},
                   StridedAttrs(DataType::kInt32, DataType::kInt32, {0, 0, 3, 0, 0}), "CUDA:0");
  EXPECT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("Multiple ellipses"), absl::string_view::npos)
      << two.status();
}

}  // namespace
}  // namespace plexus
