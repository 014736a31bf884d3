// Per-op tests of the array family: cpu kernels against the reference kernels,
// exact expected values, error cases, and static shape inference.
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph.pb.h"
#include "op_test_util.h"
#include "plexus/graph_import.h"

namespace plexus::testing {
namespace {

using V = std::vector<double>;
using absl::StatusCode;

// Every dtype the family supports.
std::vector<DataType> AllTypes() {
  std::vector<DataType> v = RealTypes();
  v.push_back(DataType::kBool);
  return v;
}

Tensor I32(const Shape& shape, const V& v) { return MakeTensor(DataType::kInt32, shape, v); }
Tensor I64(const Shape& shape, const V& v) { return MakeTensor(DataType::kInt64, shape, v); }
Tensor Idx(DataType t, const Shape& shape, const V& v) { return MakeTensor(t, shape, v); }
Tensor F32(const Shape& shape, const V& v) { return MakeTensor(DataType::kFloat, shape, v); }

// 0, 1, 2, ... as a float tensor.
Tensor Iota(const Shape& shape, DataType t = DataType::kFloat) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  V v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return MakeTensor(t, shape, v);
}

V Values(const Tensor& t) {
  V v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

// Runs `c` on both devices, expects them to agree, and returns the cpu's
// output `k`.
Tensor RunBoth(const OpCase& c, int k = 0) {
  ExpectCpuMatchesReference(c);
  auto r = c.Run("CPU:0");
  EXPECT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  if (!r.ok() || static_cast<int>(r->size()) <= k) return Tensor();
  return (*r)[k];
}

// Runs on both devices and checks output k against an exact shape and
// values (on each device, not only cpu against reference).
void ExpectOutput(const OpCase& c, const Shape& shape, const V& values, int k = 0) {
  for (const char* device : {"REF:0", "CPU:0"}) {
    auto r = c.Run(device);
    ASSERT_TRUE(r.ok()) << c.Describe() << " on " << device << ": " << r.status();
    ASSERT_GT(static_cast<int>(r->size()), k);
    const Tensor& t = (*r)[k];
    EXPECT_EQ(t.shape(), shape) << c.Describe() << " on " << device;
    EXPECT_EQ(Values(t), values) << c.Describe() << " on " << device;
  }
}

// ---------------------------------------------------------------------------
// Reshape, ExpandDims, Squeeze
// ---------------------------------------------------------------------------

TEST(ArrayTest, ReshapeAllTypes) {
  std::mt19937 rng(1);
  for (DataType t : AllTypes()) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      Tensor x = RandomTensor(t, {2, 3, 4}, rng);
      OpCase c("Reshape");
      c.Input(x).Input(Idx(it, {2}, {4, -1})).Attr("T", t).Attr("Tshape", it);
      Tensor y = RunBoth(c);
      EXPECT_EQ(y.shape(), (Shape{4, 6}));
      EXPECT_EQ(Values(y), Values(x));
    }
  }
}

TEST(ArrayTest, ReshapeEdges) {
  // Scalar to [1,1] and back, zero-size with -1 forbidden, zero-size explicit.
  OpCase a("Reshape");
  a.Input(F32({}, {7})).Input(I32({2}, {1, 1})).Attr("T", DataType::kFloat);
  ExpectOutput(a, {1, 1}, {7});
  OpCase b("Reshape");
  b.Input(F32({1, 1}, {7})).Input(I32({0}, {})).Attr("T", DataType::kFloat);
  ExpectOutput(b, {}, {7});
  OpCase z("Reshape");
  z.Input(F32({0, 3}, {})).Input(I32({3}, {3, 0, 5})).Attr("T", DataType::kFloat);
  ExpectOutput(z, {3, 0, 5}, {});
}

TEST(ArrayTest, ReshapeErrors) {
  OpCase two("Reshape");
  two.Input(Iota({6})).Input(I32({2}, {-1, -1})).Attr("T", DataType::kFloat);
  ExpectBothFail(two, StatusCode::kInvalidArgument, "only one input size may be -1");
  OpCase count("Reshape");
  count.Input(Iota({6})).Input(I32({2}, {4, 2})).Attr("T", DataType::kFloat);
  ExpectBothFail(count, StatusCode::kInvalidArgument,
                 "Input to reshape is a tensor with 6 values, but the requested shape has 8");
  OpCase multiple("Reshape");
  multiple.Input(Iota({6})).Input(I32({2}, {4, -1})).Attr("T", DataType::kFloat);
  ExpectBothFail(multiple, StatusCode::kInvalidArgument, "requires a multiple of 4");
  OpCase empty("Reshape");
  empty.Input(Iota({0})).Input(I32({2}, {0, -1})).Attr("T", DataType::kFloat);
  ExpectBothFail(empty, StatusCode::kInvalidArgument, "cannot infer the missing input size");
  OpCase negative("Reshape");
  negative.Input(Iota({6})).Input(I32({2}, {-2, 3})).Attr("T", DataType::kFloat);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "must be non-negative");
}

TEST(ArrayTest, ExpandDimsAndSqueeze) {
  std::mt19937 rng(2);
  for (DataType t : AllTypes()) {
    Tensor x = RandomTensor(t, {2, 3}, rng);
    for (int64_t d : {0, 1, 2, -1, -3}) {
      OpCase c("ExpandDims");
      c.Input(x).Input(I32({}, {double(d)})).Attr("T", t);
      Tensor y = RunBoth(c);
      Shape want = {2, 3};
      want.insert(want.begin() + (d < 0 ? d + 3 : d), 1);
      EXPECT_EQ(y.shape(), want) << d;
      EXPECT_EQ(Values(y), Values(x));
    }
    Tensor s = RandomTensor(t, {1, 2, 1, 3, 1}, rng);
    OpCase all("Squeeze");
    all.Input(s).Attr("T", t);
    EXPECT_EQ(RunBoth(all).shape(), (Shape{2, 3}));
    OpCase some("Squeeze");
    some.Input(s).Attr("T", t).Attr("squeeze_dims", std::vector<int64_t>{0, -1});
    Tensor y = RunBoth(some);
    EXPECT_EQ(y.shape(), (Shape{2, 1, 3}));
    EXPECT_EQ(Values(y), Values(s));
  }
  OpCase scalar("ExpandDims");
  scalar.Input(F32({}, {5})).Input(I64({1}, {0})).Attr("T", DataType::kFloat).Attr("Tdim", DataType::kInt64);
  ExpectOutput(scalar, {1}, {5});

  OpCase bad_dim("ExpandDims");
  bad_dim.Input(Iota({2, 3})).Input(I32({}, {3})).Attr("T", DataType::kFloat);
  ExpectBothFail(bad_dim, StatusCode::kInvalidArgument,
                 "Tried to expand dim index 3 for tensor with 2 dimensions.");
  OpCase not_one("Squeeze");
  not_one.Input(Iota({1, 2})).Attr("T", DataType::kFloat).Attr("squeeze_dims", std::vector<int64_t>{1});
  ExpectBothFail(not_one, StatusCode::kInvalidArgument,
                 "Can not squeeze dim[1], expected a dimension of 1, got 2");
  OpCase out_of_range("Squeeze");
  out_of_range.Input(Iota({1, 2})).Attr("T", DataType::kFloat).Attr("squeeze_dims", std::vector<int64_t>{2});
  ExpectBothFail(out_of_range, StatusCode::kInvalidArgument, "Tried to squeeze dim index 2");
}

// ---------------------------------------------------------------------------
// Transpose
// ---------------------------------------------------------------------------

TEST(ArrayTest, TransposeAllTypes) {
  std::mt19937 rng(3);
  for (DataType t : AllTypes()) {
    OpCase c("Transpose");
    c.Input(RandomTensor(t, {2, 3, 4}, rng)).Input(I32({3}, {2, 0, 1})).Attr("T", t);
    EXPECT_EQ(RunBoth(c).shape(), (Shape{4, 2, 3}));
    // Large enough for the tiled path of the cpu copy.
    OpCase big("Transpose");
    big.Input(RandomTensor(t, {67, 45}, rng)).Input(I64({2}, {1, 0})).Attr("T", t).Attr("Tperm", DataType::kInt64);
    EXPECT_EQ(RunBoth(big).shape(), (Shape{45, 67}));
  }
  OpCase small("Transpose");
  small.Input(Iota({2, 3})).Input(I32({2}, {1, 0})).Attr("T", DataType::kFloat);
  ExpectOutput(small, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(ArrayTest, TransposeShapes) {
  std::mt19937 rng(4);
  std::vector<std::pair<Shape, V>> cases = {
      {{}, {}},
      {{0, 3}, {1, 0}},
      {{2, 3, 4, 5, 2}, {4, 2, 0, 3, 1}},
      {{3, 1, 4, 1}, {3, 2, 1, 0}},
      {{40, 3, 50}, {2, 1, 0}},
      {{2, 33, 17, 3}, {0, 2, 1, 3}},
      {{5, 6}, {0, 1}},
  };
  for (const auto& [shape, perm] : cases) {
    OpCase c("Transpose");
    c.Input(RandomTensor(DataType::kFloat, shape, rng))
        .Input(I32({static_cast<int64_t>(perm.size())}, perm))
        .Attr("T", DataType::kFloat);
    RunBoth(c);
  }
}

TEST(ArrayTest, TransposeErrors) {
  OpCase range("Transpose");
  range.Input(Iota({2, 3})).Input(I32({2}, {0, 2})).Attr("T", DataType::kFloat);
  ExpectBothFail(range, StatusCode::kInvalidArgument, "2 is out of range [0 .. 2)");
  OpCase dup("Transpose");
  dup.Input(Iota({2, 3})).Input(I32({2}, {1, 1})).Attr("T", DataType::kFloat);
  ExpectBothFail(dup, StatusCode::kInvalidArgument, "appears more than once");
  OpCase size("Transpose");
  size.Input(Iota({2, 3})).Input(I32({3}, {0, 1, 2})).Attr("T", DataType::kFloat);
  ExpectBothFail(size, StatusCode::kInvalidArgument, "transpose expects a vector of size 2");
}

// ---------------------------------------------------------------------------
// Concat, Split, Pack, Unpack
// ---------------------------------------------------------------------------

TEST(ArrayTest, ConcatV2AllTypes) {
  std::mt19937 rng(5);
  for (DataType t : AllTypes()) {
    for (int64_t axis : {0, 1, 2, -1}) {
      Shape a = {2, 3, 4}, b = a, c3 = a;
      int64_t ax = axis < 0 ? axis + 3 : axis;
      b[ax] = 1;
      c3[ax] = 0;
      OpCase c("ConcatV2");
      c.Input(RandomTensor(t, a, rng)).Input(RandomTensor(t, b, rng)).Input(RandomTensor(t, c3, rng))
          .Input(I32({}, {double(axis)})).Attr("T", t).Attr("N", 3);
      Shape want = a;
      want[ax] += 1;
      EXPECT_EQ(RunBoth(c).shape(), want);
    }
  }
  OpCase exact("ConcatV2");
  exact.Input(Iota({2, 2})).Input(F32({2, 1}, {9, 8})).Input(I64({}, {1}))
      .Attr("T", DataType::kFloat).Attr("N", 2).Attr("Tidx", DataType::kInt64);
  ExpectOutput(exact, {2, 3}, {0, 1, 9, 2, 3, 8});
  OpCase v1("Concat");
  v1.Input(I32({}, {0})).Input(Iota({1, 2})).Input(F32({2, 2}, {5, 6, 7, 8}))
      .Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectOutput(v1, {3, 2}, {0, 1, 5, 6, 7, 8});
}

TEST(ArrayTest, ConcatErrors) {
  OpCase rank("ConcatV2");
  rank.Input(Iota({2, 2})).Input(Iota({2})).Input(I32({}, {0})).Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectBothFail(rank, StatusCode::kInvalidArgument, "Ranks of all input tensors should match");
  OpCase dim("ConcatV2");
  dim.Input(Iota({2, 2})).Input(Iota({2, 3})).Input(I32({}, {0})).Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectBothFail(dim, StatusCode::kInvalidArgument, "Dimension 1 in both shapes must be equal");
  OpCase axis("ConcatV2");
  axis.Input(Iota({2, 2})).Input(Iota({2, 2})).Input(I32({}, {2})).Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectBothFail(axis, StatusCode::kInvalidArgument, "in the range [-2, 2), but got 2");
  OpCase scalars("ConcatV2");
  scalars.Input(F32({}, {1})).Input(F32({}, {2})).Input(I32({}, {0})).Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectBothFail(scalars, StatusCode::kInvalidArgument, "Can't concatenate scalars");
}

TEST(ArrayTest, SplitAllTypes) {
  std::mt19937 rng(6);
  for (DataType t : AllTypes()) {
    for (int64_t axis : {0, 1, -1}) {
      OpCase c("Split");
      c.Input(I32({}, {double(axis)})).Input(RandomTensor(t, {3, 6, 3}, rng)).Attr("T", t).Attr("num_split", 3);
      RunBoth(c, 2);
    }
    OpCase v("SplitV");
    v.Input(RandomTensor(t, {2, 7}, rng)).Input(I64({3}, {2, -1, 4})).Input(I32({}, {1}))
        .Attr("T", t).Attr("num_split", 3);
    EXPECT_EQ(RunBoth(v, 1).shape(), (Shape{2, 1}));
  }
  OpCase exact("Split");
  exact.Input(I32({}, {1})).Input(Iota({2, 4})).Attr("T", DataType::kFloat).Attr("num_split", 2);
  ExpectOutput(exact, {2, 2}, {0, 1, 4, 5}, 0);
  ExpectOutput(exact, {2, 2}, {2, 3, 6, 7}, 1);
  OpCase sv("SplitV");
  sv.Input(Iota({5})).Input(I32({3}, {1, 0, 4})).Input(I32({}, {0}))
      .Attr("T", DataType::kFloat).Attr("num_split", 3).Attr("Tlen", DataType::kInt32);
  ExpectOutput(sv, {1}, {0}, 0);
  ExpectOutput(sv, {0}, {}, 1);
  ExpectOutput(sv, {4}, {1, 2, 3, 4}, 2);

  OpCase uneven("Split");
  uneven.Input(I32({}, {0})).Input(Iota({5})).Attr("T", DataType::kFloat).Attr("num_split", 2);
  ExpectBothFail(uneven, StatusCode::kInvalidArgument, "should evenly divide the split dimension");
  OpCase bad_axis("Split");
  bad_axis.Input(I32({}, {2})).Input(Iota({4, 2})).Attr("T", DataType::kFloat).Attr("num_split", 2);
  ExpectBothFail(bad_axis, StatusCode::kInvalidArgument, "split_dim < input rank");
  OpCase sum("SplitV");
  sum.Input(Iota({5})).Input(I64({2}, {1, 2})).Input(I32({}, {0})).Attr("T", DataType::kFloat).Attr("num_split", 2);
  ExpectBothFail(sum, StatusCode::kInvalidArgument, "Determined shape must either match");
  OpCase two("SplitV");
  two.Input(Iota({5})).Input(I64({2}, {-1, -1})).Input(I32({}, {0})).Attr("T", DataType::kFloat).Attr("num_split", 2);
  ExpectBothFail(two, StatusCode::kInvalidArgument, "There can only be one -1");
}

TEST(ArrayTest, PackUnpackAllTypes) {
  std::mt19937 rng(7);
  for (DataType t : AllTypes()) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      OpCase c("Pack");
      c.Input(RandomTensor(t, {2, 3}, rng)).Input(RandomTensor(t, {2, 3}, rng))
          .Attr("T", t).Attr("N", 2).Attr("axis", axis);
      Tensor y = RunBoth(c);
      Shape want = {2, 3};
      want.insert(want.begin() + (axis < 0 ? axis + 3 : axis), 2);
      EXPECT_EQ(y.shape(), want);
      OpCase u("Unpack");
      u.Input(y).Attr("T", t).Attr("num", 2).Attr("axis", axis);
      Tensor first = RunBoth(u, 0);
      EXPECT_EQ(Values(first), Values(c.inputs()[0]));
    }
  }
  // Scalars pack into a vector (the wake-word paddings pattern).
  OpCase scalars("Pack");
  scalars.Input(I32({}, {3})).Input(I32({}, {5})).Attr("T", DataType::kInt32).Attr("N", 2);
  ExpectOutput(scalars, {2}, {3, 5});
  OpCase one("Pack");
  one.Input(Iota({0, 2})).Attr("T", DataType::kFloat).Attr("N", 1).Attr("axis", 1);
  ExpectOutput(one, {0, 1, 2}, {});
  OpCase exact("Unpack");
  exact.Input(Iota({2, 3})).Attr("T", DataType::kFloat).Attr("num", 3).Attr("axis", 1);
  ExpectOutput(exact, {2}, {1, 4}, 1);

  OpCase mismatch("Pack");
  mismatch.Input(Iota({2})).Input(Iota({3})).Attr("T", DataType::kFloat).Attr("N", 2);
  ExpectBothFail(mismatch, StatusCode::kInvalidArgument, "Shapes of all inputs must match");
  OpCase axis("Pack");
  axis.Input(Iota({2})).Input(Iota({2})).Attr("T", DataType::kFloat).Attr("N", 2).Attr("axis", 2);
  ExpectBothFail(axis, StatusCode::kInvalidArgument, "axis = 2 not in [-2, 2)");
  OpCase num("Unpack");
  num.Input(Iota({2, 3})).Attr("T", DataType::kFloat).Attr("num", 3);
  ExpectBothFail(num, StatusCode::kInvalidArgument, "Input shape axis 0 must equal 3");
}

// ---------------------------------------------------------------------------
// Slice and StridedSlice
// ---------------------------------------------------------------------------

TEST(ArrayTest, SliceAllTypes) {
  std::mt19937 rng(8);
  for (DataType t : AllTypes()) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      OpCase c("Slice");
      c.Input(RandomTensor(t, {4, 5, 6}, rng)).Input(Idx(it, {3}, {1, 0, 2}))
          .Input(Idx(it, {3}, {2, -1, 3})).Attr("T", t).Attr("Index", it);
      EXPECT_EQ(RunBoth(c).shape(), (Shape{2, 5, 3}));
    }
  }
  OpCase exact("Slice");
  exact.Input(Iota({3, 4})).Input(I32({2}, {1, 1})).Input(I32({2}, {2, 2}))
      .Attr("T", DataType::kFloat).Attr("Index", DataType::kInt32);
  ExpectOutput(exact, {2, 2}, {5, 6, 9, 10});
  OpCase empty("Slice");
  empty.Input(Iota({3, 4})).Input(I32({2}, {3, 0})).Input(I32({2}, {0, -1}))
      .Attr("T", DataType::kFloat).Attr("Index", DataType::kInt32);
  ExpectOutput(empty, {0, 4}, {});
  OpCase scalar("Slice");
  scalar.Input(F32({}, {4})).Input(I32({0}, {})).Input(I32({0}, {}))
      .Attr("T", DataType::kFloat).Attr("Index", DataType::kInt32);
  ExpectOutput(scalar, {}, {4});

  OpCase begin("Slice");
  begin.Input(Iota({3, 4})).Input(I32({2}, {4, 0})).Input(I32({2}, {0, 1}))
      .Attr("T", DataType::kFloat).Attr("Index", DataType::kInt32);
  ExpectBothFail(begin, StatusCode::kInvalidArgument, "Expected begin[0] in [0, 3], but got 4");
  OpCase size("Slice");
  size.Input(Iota({3, 4})).Input(I32({2}, {1, 1})).Input(I32({2}, {1, 4}))
      .Attr("T", DataType::kFloat).Attr("Index", DataType::kInt32);
  ExpectBothFail(size, StatusCode::kInvalidArgument, "Expected size[1] in [0, 3], but got 4");
}

OpCase StridedSlice(const Tensor& x, const V& begin, const V& end, const V& strides,
                    int64_t begin_mask = 0, int64_t end_mask = 0, int64_t ellipsis_mask = 0,
                    int64_t new_axis_mask = 0, int64_t shrink_axis_mask = 0,
                    DataType index = DataType::kInt32) {
  const int64_t n = static_cast<int64_t>(strides.size());
  OpCase c("StridedSlice");
  c.Input(x).Input(Idx(index, {n}, begin)).Input(Idx(index, {n}, end)).Input(Idx(index, {n}, strides))
      .Attr("T", x.dtype()).Attr("Index", index)
      .Attr("begin_mask", begin_mask).Attr("end_mask", end_mask)
      .Attr("ellipsis_mask", ellipsis_mask).Attr("new_axis_mask", new_axis_mask)
      .Attr("shrink_axis_mask", shrink_axis_mask);
  return c;
}

TEST(ArrayTest, StridedSliceExactValues) {
  const Tensor x = Iota({2, 3, 4});
  // x[1]
  V second(12);
  std::iota(second.begin(), second.end(), 12.0);
  ExpectOutput(StridedSlice(x, {1}, {2}, {1}, 0, 0, 0, 0, 1), {3, 4}, second);
  // x[:, ::-1, 0]
  ExpectOutput(StridedSlice(x, {0, 0, 0}, {0, 0, 1}, {1, -1, 1}, 3, 3, 0, 0, 4), {2, 3},
               {8, 4, 0, 20, 16, 12});
  // x[..., 1]
  ExpectOutput(StridedSlice(x, {0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2), {2, 3},
               {1, 5, 9, 13, 17, 21});
  // x[:, tf.newaxis, 1:3, -1]
  ExpectOutput(StridedSlice(x, {0, 0, 1, -1}, {0, 0, 3, 0}, {1, 1, 1, 1}, 1, 1, 0, 2, 8),
               {2, 1, 2}, {7, 11, 19, 23});
  // x[-1, -2:, ::-2]
  ExpectOutput(StridedSlice(x, {-1, -2, 0}, {0, 0, 0}, {1, 1, -2}, 4, 6, 0, 0, 1), {2, 2},
               {19, 17, 23, 21});
  // x[..., tf.newaxis]
  Tensor y = RunBoth(StridedSlice(x, {0, 0}, {0, 0}, {1, 1}, 0, 0, 1, 2, 0));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(Values(y), Values(x));
  // x[tf.newaxis, ..., tf.newaxis, 2] with int64 indices
  ExpectOutput(StridedSlice(x, {0, 0, 0, 2}, {0, 0, 0, 3}, {1, 1, 1, 1}, 0, 0, 2, 5, 8,
                            DataType::kInt64),
               {1, 2, 3, 1}, {2, 6, 10, 14, 18, 22});
  // Empty and clamped ranges: x[1:0], x[5:10], x[-10:1], x[3:0:-1] on dim 1.
  ExpectOutput(StridedSlice(x, {1}, {0}, {1}), {0, 3, 4}, {});
  ExpectOutput(StridedSlice(x, {5}, {10}, {1}), {0, 3, 4}, {});
  EXPECT_EQ(RunBoth(StridedSlice(x, {-10}, {1}, {1})).shape(), (Shape{1, 3, 4}));
  ExpectOutput(StridedSlice(x, {0, 3, 0}, {1, 0, 1}, {1, -1, 1}, 0, 0, 0, 0, 5), {2},
               {8, 4});
  // Reversed whole axis with masks: x[::-1]
  Tensor r = RunBoth(StridedSlice(x, {0}, {0}, {-1}, 1, 1));
  EXPECT_EQ(r.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(ElementAsDouble(r, 0), 12);
  // The wake-word pattern: Shape -> StridedSlice(shrink) -> a scalar.
  ExpectOutput(StridedSlice(I32({3}, {2, 3, 4}), {1}, {2}, {1}, 0, 0, 0, 0, 1), {}, {3});
}

TEST(ArrayTest, StridedSliceAllTypes) {
  std::mt19937 rng(9);
  for (DataType t : AllTypes()) {
    RunBoth(StridedSlice(RandomTensor(t, {4, 5, 6}, rng), {1, -1, 0}, {4, 0, 6}, {2, -2, 1}, 0, 0,
                         0, 0, 0));
    RunBoth(StridedSlice(RandomTensor(t, {4, 5, 6}, rng), {0, 2}, {0, 3}, {1, 1}, 0, 0, 1, 0, 2,
                         DataType::kInt64));
  }
}

// Random masks, bounds and strides on a rank-4 input: cpu and reference
// must agree (or fail alike) on every combination.
TEST(ArrayTest, StridedSliceMaskFuzz) {
  std::mt19937 rng(10);
  const Tensor x = RandomTensor(DataType::kInt32, {3, 4, 1, 5}, rng, -100, 100);
  std::uniform_int_distribution<int> len(1, 5), mask(0, 31), idx(-7, 7), stride(-3, 3),
      coin(0, 3);
  int valid = 0;
  for (int iter = 0; iter < 300; ++iter) {
    int n = len(rng);
    V begin, end, strides;
    for (int i = 0; i < n; ++i) {
      begin.push_back(idx(rng));
      end.push_back(idx(rng));
      int s = stride(rng);
      strides.push_back(s == 0 ? 1 : s);
    }
    int64_t ellipsis = 0;
    if (coin(rng) == 0) ellipsis = int64_t{1} << (rng() % n);
    int64_t shrink = coin(rng) == 0 ? mask(rng) & ((1 << n) - 1) : 0;
    for (int i = 0; i < n; ++i) {
      // Shrunk axes take a small, usually valid index with stride 1.
      if (shrink & (1 << i)) {
        strides[i] = 1;
        begin[i] = static_cast<int>(rng() % 3) - 1;
      }
    }
    OpCase c = StridedSlice(x, begin, end, strides, mask(rng), mask(rng), ellipsis,
                            coin(rng) == 0 ? mask(rng) : 0, shrink);
    ExpectCpuAgreesWithReference(c);
    if (c.Run("REF:0").ok()) ++valid;
  }
  // Most combinations must be valid slices, not errors.
  EXPECT_GT(valid, 150);
}

TEST(ArrayTest, StridedSliceErrors) {
  const Tensor x = Iota({2, 3});
  ExpectBothFail(StridedSlice(x, {5}, {6}, {1}, 0, 0, 0, 0, 1), StatusCode::kInvalidArgument,
                 "slice index 5 of dimension 0 out of bounds.");
  ExpectBothFail(StridedSlice(x, {0}, {1}, {0}), StatusCode::kInvalidArgument,
                 "strides[0] must be non-zero");
  ExpectBothFail(StridedSlice(x, {0, 0}, {1, 1}, {1, 1}, 0, 0, 3), StatusCode::kInvalidArgument,
                 "Multiple ellipses in slice spec not allowed");
  ExpectBothFail(StridedSlice(x, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}), StatusCode::kInvalidArgument,
                 "Index out of range using input dim 2");
  ExpectBothFail(StridedSlice(x, {0}, {1}, {-1}, 0, 0, 0, 0, 1), StatusCode::kInvalidArgument,
                 "only stride 1 allowed on non-range indexing.");
}

// ---------------------------------------------------------------------------
// Gather, GatherV2, GatherNd
// ---------------------------------------------------------------------------

TEST(ArrayTest, GatherAllTypes) {
  std::mt19937 rng(11);
  for (DataType t : AllTypes()) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      Tensor params = RandomTensor(t, {5, 3, 4}, rng);
      Tensor indices = RandomTensor(it, {2, 3}, rng, 0, 4);
      OpCase g("Gather");
      g.Input(params).Input(indices).Attr("Tparams", t).Attr("Tindices", it);
      EXPECT_EQ(RunBoth(g).shape(), (Shape{2, 3, 3, 4}));
      OpCase v2("GatherV2");
      v2.Input(params).Input(RandomTensor(it, {6}, rng, 0, 3)).Input(I32({}, {2}))
          .Attr("Tparams", t).Attr("Tindices", it).Attr("Taxis", DataType::kInt32);
      EXPECT_EQ(RunBoth(v2).shape(), (Shape{5, 3, 6}));
      OpCase batch("GatherV2");
      batch.Input(params).Input(RandomTensor(it, {5, 2}, rng, 0, 2)).Input(I64({}, {1}))
          .Attr("Tparams", t).Attr("Tindices", it).Attr("Taxis", DataType::kInt64)
          .Attr("batch_dims", 1);
      EXPECT_EQ(RunBoth(batch).shape(), (Shape{5, 2, 4}));
      OpCase nd("GatherNd");
      nd.Input(params).Input(Idx(it, {2, 2}, {4, 2, 0, 1})).Attr("Tparams", t).Attr("Tindices", it);
      EXPECT_EQ(RunBoth(nd).shape(), (Shape{2, 4}));
    }
  }
}

TEST(ArrayTest, GatherExactValues) {
  OpCase g("GatherV2");
  g.Input(Iota({3, 2})).Input(I32({2, 2}, {2, 0, 1, 1})).Input(I32({}, {0}))
      .Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt32).Attr("Taxis", DataType::kInt32);
  ExpectOutput(g, {2, 2, 2}, {4, 5, 0, 1, 2, 3, 2, 3});
  OpCase axis1("GatherV2");
  axis1.Input(Iota({2, 3})).Input(I32({}, {2})).Input(I32({}, {-1}))
      .Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt32).Attr("Taxis", DataType::kInt32);
  ExpectOutput(axis1, {2}, {2, 5});
  // batch_dims 1: out[b, j] = params[b, indices[b, j]].
  OpCase batch("GatherV2");
  batch.Input(Iota({2, 3})).Input(I32({2, 2}, {2, 0, 1, 1})).Input(I32({}, {1}))
      .Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt32).Attr("Taxis", DataType::kInt32)
      .Attr("batch_dims", -1);
  ExpectOutput(batch, {2, 2}, {2, 0, 4, 4});
  OpCase nd("GatherNd");
  nd.Input(Iota({2, 3})).Input(I64({3, 2}, {1, 2, 0, 0, 1, 0})).Attr("Tparams", DataType::kFloat)
      .Attr("Tindices", DataType::kInt64);
  ExpectOutput(nd, {3}, {5, 0, 3});
  OpCase rows("GatherNd");
  rows.Input(Iota({2, 3})).Input(I32({1, 1}, {1})).Attr("Tparams", DataType::kFloat)
      .Attr("Tindices", DataType::kInt32);
  ExpectOutput(rows, {1, 3}, {3, 4, 5});
  OpCase empty("Gather");
  empty.Input(Iota({0, 3})).Input(I32({0}, {})).Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt32);
  ExpectOutput(empty, {0, 3}, {});
}

TEST(ArrayTest, GatherIndexErrors) {
  OpCase high("Gather");
  high.Input(Iota({5, 2})).Input(I32({3}, {0, 7, 1})).Attr("Tparams", DataType::kFloat)
      .Attr("Tindices", DataType::kInt32);
  ExpectBothFail(high, StatusCode::kInvalidArgument, "indices[1] = 7 is not in [0, 5)");
  OpCase negative("GatherV2");
  negative.Input(Iota({2, 3})).Input(I64({2, 2}, {0, 1, -1, 2})).Input(I32({}, {1}))
      .Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt64).Attr("Taxis", DataType::kInt32);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "indices[1,0] = -1 is not in [0, 3)");
  OpCase nd("GatherNd");
  nd.Input(Iota({2, 3})).Input(I32({2, 2}, {0, 0, 1, 3})).Attr("Tparams", DataType::kFloat)
      .Attr("Tindices", DataType::kInt32);
  ExpectBothFail(nd, StatusCode::kInvalidArgument,
                 "indices[1] = [1,3] does not index into param shape [2,3]");
  OpCase axis("GatherV2");
  axis.Input(Iota({2, 3})).Input(I32({1}, {0})).Input(I32({}, {2}))
      .Attr("Tparams", DataType::kFloat).Attr("Tindices", DataType::kInt32).Attr("Taxis", DataType::kInt32);
  ExpectBothFail(axis, StatusCode::kInvalidArgument, "Expected axis in the range [-2, 2)");
  OpCase depth("GatherNd");
  depth.Input(Iota({2})).Input(I32({1, 2}, {0, 0})).Attr("Tparams", DataType::kFloat)
      .Attr("Tindices", DataType::kInt32);
  ExpectBothFail(depth, StatusCode::kInvalidArgument, "index innermost dimension length");
}

// ---------------------------------------------------------------------------
// Pad, PadV2, MirrorPad, Tile, BroadcastTo
// ---------------------------------------------------------------------------

TEST(ArrayTest, PadAllTypes) {
  std::mt19937 rng(12);
  for (DataType t : AllTypes()) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      Tensor x = RandomTensor(t, {2, 3, 4}, rng);
      Tensor pads = Idx(it, {3, 2}, {1, 0, 2, 1, 0, 3});
      OpCase p("Pad");
      p.Input(x).Input(pads).Attr("T", t).Attr("Tpaddings", it);
      EXPECT_EQ(RunBoth(p).shape(), (Shape{3, 6, 7}));
      OpCase v2("PadV2");
      v2.Input(x).Input(pads).Input(MakeTensor(t, {}, {1})).Attr("T", t).Attr("Tpaddings", it);
      RunBoth(v2);
      for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
        OpCase m("MirrorPad");
        m.Input(x).Input(Idx(it, {3, 2}, {1, 0, 2, 1, 0, 3})).Attr("T", t).Attr("Tpaddings", it)
            .Attr("mode", mode);
        EXPECT_EQ(RunBoth(m).shape(), (Shape{3, 6, 7}));
      }
    }
  }
}

TEST(ArrayTest, PadExactValues) {
  OpCase p("Pad");
  p.Input(F32({2}, {1, 2})).Input(I32({1, 2}, {1, 2})).Attr("T", DataType::kFloat);
  ExpectOutput(p, {5}, {0, 1, 2, 0, 0});
  OpCase v2("PadV2");
  v2.Input(F32({1, 2}, {1, 2})).Input(I32({2, 2}, {1, 0, 0, 1})).Input(F32({}, {9})).Attr("T", DataType::kFloat);
  ExpectOutput(v2, {2, 3}, {9, 9, 9, 1, 2, 9});
  OpCase reflect("MirrorPad");
  reflect.Input(F32({3}, {1, 2, 3})).Input(I32({1, 2}, {2, 2})).Attr("T", DataType::kFloat).Attr("mode", "REFLECT");
  ExpectOutput(reflect, {7}, {3, 2, 1, 2, 3, 2, 1});
  OpCase symmetric("MirrorPad");
  symmetric.Input(F32({3}, {1, 2, 3})).Input(I32({1, 2}, {3, 2})).Attr("T", DataType::kFloat).Attr("mode", "SYMMETRIC");
  ExpectOutput(symmetric, {8}, {3, 2, 1, 1, 2, 3, 3, 2});
  OpCase two_d("MirrorPad");
  two_d.Input(Iota({2, 3})).Input(I32({2, 2}, {1, 1, 2, 2})).Attr("T", DataType::kFloat).Attr("mode", "REFLECT");
  ExpectOutput(two_d, {4, 7}, {5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0,
                               5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0});
  OpCase scalar("Pad");
  scalar.Input(F32({}, {4})).Input(I32({0, 2}, {})).Attr("T", DataType::kFloat);
  ExpectOutput(scalar, {}, {4});
  OpCase empty("Pad");
  empty.Input(F32({0}, {})).Input(I32({1, 2}, {1, 1})).Attr("T", DataType::kFloat);
  ExpectOutput(empty, {2}, {0, 0});

  OpCase negative("Pad");
  negative.Input(Iota({2})).Input(I32({1, 2}, {-1, 0})).Attr("T", DataType::kFloat);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "Paddings must be non-negative");
  OpCase shape("Pad");
  shape.Input(Iota({2})).Input(I32({2, 2}, {0, 0, 0, 0})).Attr("T", DataType::kFloat);
  ExpectBothFail(shape, StatusCode::kInvalidArgument, "paddings must be a matrix of shape [1,2]");
  OpCase too_big("MirrorPad");
  too_big.Input(Iota({3})).Input(I32({1, 2}, {3, 0})).Attr("T", DataType::kFloat).Attr("mode", "REFLECT");
  ExpectBothFail(too_big, StatusCode::kInvalidArgument, "paddings must be less than the dimension size");
  OpCase sym_big("MirrorPad");
  sym_big.Input(Iota({3})).Input(I32({1, 2}, {0, 4})).Attr("T", DataType::kFloat).Attr("mode", "SYMMETRIC");
  ExpectBothFail(sym_big, StatusCode::kInvalidArgument, "no greater than the dimension size");
  OpCase mode("MirrorPad");
  mode.Input(Iota({3})).Input(I32({1, 2}, {0, 1})).Attr("T", DataType::kFloat).Attr("mode", "WRAP");
  ExpectBothFail(mode, StatusCode::kInvalidArgument, "mode must be REFLECT or SYMMETRIC");
}

TEST(ArrayTest, TileAndBroadcastTo) {
  std::mt19937 rng(13);
  for (DataType t : AllTypes()) {
    OpCase tile("Tile");
    tile.Input(RandomTensor(t, {2, 1, 3}, rng)).Input(I32({3}, {2, 5, 1})).Attr("T", t);
    EXPECT_EQ(RunBoth(tile).shape(), (Shape{4, 5, 3}));
    OpCase b("BroadcastTo");
    b.Input(RandomTensor(t, {3, 1}, rng)).Input(I64({3}, {2, 3, 4})).Attr("T", t).Attr("Tidx", DataType::kInt64);
    EXPECT_EQ(RunBoth(b).shape(), (Shape{2, 3, 4}));
  }
  OpCase tile("Tile");
  tile.Input(F32({2}, {1, 2})).Input(I32({1}, {3})).Attr("T", DataType::kFloat);
  ExpectOutput(tile, {6}, {1, 2, 1, 2, 1, 2});
  OpCase tile2("Tile");
  tile2.Input(Iota({2, 2})).Input(I64({2}, {2, 1})).Attr("T", DataType::kFloat).Attr("Tmultiples", DataType::kInt64);
  ExpectOutput(tile2, {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3});
  OpCase zero("Tile");
  zero.Input(Iota({2, 2})).Input(I32({2}, {0, 3})).Attr("T", DataType::kFloat);
  ExpectOutput(zero, {0, 6}, {});
  OpCase b("BroadcastTo");
  b.Input(F32({2, 1}, {1, 2})).Input(I32({2}, {2, 3})).Attr("T", DataType::kFloat);
  ExpectOutput(b, {2, 3}, {1, 1, 1, 2, 2, 2});
  OpCase scalar("BroadcastTo");
  scalar.Input(F32({}, {7})).Input(I32({2}, {1, 2})).Attr("T", DataType::kFloat);
  ExpectOutput(scalar, {1, 2}, {7, 7});

  OpCase bad_tile("Tile");
  bad_tile.Input(Iota({2})).Input(I32({2}, {1, 1})).Attr("T", DataType::kFloat);
  ExpectBothFail(bad_tile, StatusCode::kInvalidArgument, "Expected multiples argument to be a vector of length 1");
  OpCase negative("Tile");
  negative.Input(Iota({2})).Input(I32({1}, {-1})).Attr("T", DataType::kFloat);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "Expected multiples[0] >= 0");
  OpCase bad_b("BroadcastTo");
  bad_b.Input(Iota({3})).Input(I32({2}, {2, 4})).Attr("T", DataType::kFloat);
  ExpectBothFail(bad_b, StatusCode::kInvalidArgument, "Unable to broadcast tensor of shape [3]");
}

// ReverseV2: TensorFlow's values (tf.raw_ops.ReverseV2 of iota [2,3,4] along
// {-1, 0} starts 15 14 13 12 19 18 17 16) and messages.
TEST(ArrayTest, ReverseV2) {
  std::mt19937 rng(19);
  for (DataType t : AllTypes()) {
    OpCase r("ReverseV2");
    r.Input(RandomTensor(t, {2, 3, 4}, rng)).Input(I32({2}, {1, 2})).Attr("T", t);
    EXPECT_EQ(RunBoth(r).shape(), (Shape{2, 3, 4}));
  }
  OpCase both("ReverseV2");
  both.Input(Iota({2, 3, 4})).Input(I64({2}, {-1, 0})).Attr("T", DataType::kFloat).Attr("Tidx", DataType::kInt64);
  ExpectOutput(both, {2, 3, 4}, {15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20,
                                 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
  OpCase none("ReverseV2");
  none.Input(Iota({3})).Input(I32({0}, {})).Attr("T", DataType::kFloat);
  ExpectOutput(none, {3}, {0, 1, 2});
  OpCase empty("ReverseV2");
  empty.Input(Iota({0, 2})).Input(I32({1}, {1})).Attr("T", DataType::kFloat);
  ExpectOutput(empty, {0, 2}, {});

  OpCase range("ReverseV2");
  range.Input(Iota({2, 3})).Input(I32({1}, {2})).Attr("T", DataType::kFloat);
  ExpectBothFail(range, StatusCode::kInvalidArgument, "'axis'[0] = 2 is out of valid range [0, 1]");
  OpCase twice("ReverseV2");
  twice.Input(Iota({2, 3})).Input(I32({2}, {0, -2})).Attr("T", DataType::kFloat);
  ExpectBothFail(twice, StatusCode::kInvalidArgument, "axis 0 specified more than once.");
}

// ---------------------------------------------------------------------------
// Shape, ShapeN, Size, Rank, Fill, ZerosLike, OnesLike, Range, OneHot
// ---------------------------------------------------------------------------

TEST(ArrayTest, ShapeSizeRank) {
  std::mt19937 rng(14);
  for (DataType t : AllTypes()) {
    for (DataType out : {DataType::kInt32, DataType::kInt64}) {
      Tensor x = RandomTensor(t, {2, 0, 3}, rng);
      OpCase s("Shape");
      s.Input(x).Attr("T", t).Attr("out_type", out);
      ExpectOutput(s, {3}, {2, 0, 3});
      OpCase n("ShapeN");
      n.Input(x).Input(RandomTensor(t, {}, rng)).Attr("T", t).Attr("N", 2).Attr("out_type", out);
      ExpectOutput(n, {3}, {2, 0, 3}, 0);
      ExpectOutput(n, {0}, {}, 1);
      OpCase size("Size");
      size.Input(RandomTensor(t, {4, 5}, rng)).Attr("T", t).Attr("out_type", out);
      ExpectOutput(size, {}, {20});
    }
    OpCase rank("Rank");
    rank.Input(RandomTensor(t, {4, 5, 1}, rng)).Attr("T", t);
    ExpectOutput(rank, {}, {3});
  }
  OpCase scalar("Shape");
  scalar.Input(F32({}, {1})).Attr("T", DataType::kFloat);
  ExpectOutput(scalar, {0}, {});
}

TEST(ArrayTest, FillZerosOnes) {
  for (DataType t : AllTypes()) {
    const double v = t == DataType::kBool ? 1 : 3;
    OpCase f("Fill");
    f.Input(I32({2}, {2, 3})).Input(MakeTensor(t, {}, {v})).Attr("T", t);
    ExpectOutput(f, {2, 3}, V(6, v));
    std::mt19937 rng(15);
    Tensor x = RandomTensor(t, {3, 2}, rng);
    OpCase z("ZerosLike");
    z.Input(x).Attr("T", t);
    ExpectOutput(z, {3, 2}, V(6, 0));
    OpCase o("OnesLike");
    o.Input(x).Attr("T", t);
    ExpectOutput(o, {3, 2}, V(6, 1));
  }
  OpCase f64("Fill");
  f64.Input(I64({0}, {})).Input(F32({}, {2.5})).Attr("T", DataType::kFloat).Attr("index_type", DataType::kInt64);
  ExpectOutput(f64, {}, {2.5});
  OpCase empty("Fill");
  empty.Input(I32({2}, {0, 3})).Input(F32({}, {2.5})).Attr("T", DataType::kFloat);
  ExpectOutput(empty, {0, 3}, {});
  OpCase negative("Fill");
  negative.Input(I32({2}, {-1, 3})).Input(F32({}, {2.5})).Attr("T", DataType::kFloat);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "must be nonnegative");
  OpCase not_scalar("Fill");
  not_scalar.Input(I32({1}, {2})).Input(F32({1}, {2.5})).Attr("T", DataType::kFloat);
  ExpectBothFail(not_scalar, StatusCode::kInvalidArgument, "value must be a scalar");
}

OpCase Range(DataType t, double start, double limit, double delta) {
  OpCase c("Range");
  c.Input(MakeTensor(t, {}, {start})).Input(MakeTensor(t, {}, {limit}))
      .Input(MakeTensor(t, {}, {delta})).Attr("Tidx", t);
  return c;
}

TEST(ArrayTest, RangeAllTypes) {
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16,
                     DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64}) {
    ExpectOutput(Range(t, 1, 10, 3), {3}, {1, 4, 7});
    ExpectOutput(Range(t, 5, -1, -2), {3}, {5, 3, 1});
    ExpectOutput(Range(t, 2, 2, 1), {0}, {});
  }
  ExpectOutput(Range(DataType::kFloat, 0, 1, 0.25), {4}, {0, 0.25, 0.5, 0.75});
  ExpectOutput(Range(DataType::kDouble, 0.5, 2, 0.5), {3}, {0.5, 1, 1.5});
  ExpectOutput(Range(DataType::kInt32, -3, 4, 4), {2}, {-3, 1});
  RunBoth(Range(DataType::kFloat, -2.5, 7.3, 0.1));
  RunBoth(Range(DataType::kHalf, 0, 3, 0.1));

  ExpectBothFail(Range(DataType::kInt32, 0, 5, 0), StatusCode::kInvalidArgument,
                 "Requires delta != 0");
  ExpectBothFail(Range(DataType::kFloat, 5, 0, 1), StatusCode::kInvalidArgument,
                 "Requires start <= limit when delta > 0");
  ExpectBothFail(Range(DataType::kInt64, 0, 5, -1), StatusCode::kInvalidArgument,
                 "Requires start >= limit when delta < 0");
}

TEST(ArrayTest, OneHot) {
  for (DataType t : AllTypes()) {
    for (DataType ti : {DataType::kInt32, DataType::kInt64, DataType::kUInt8, DataType::kInt8}) {
      const bool has_negative = ti != DataType::kUInt8;
      OpCase c("OneHot");
      c.Input(Idx(ti, {3}, {0, 2, has_negative ? -1.0 : 3.0})).Input(I32({}, {3}))
          .Input(MakeTensor(t, {}, {1})).Input(MakeTensor(t, {}, {0}))
          .Attr("T", t).Attr("TI", ti);
      ExpectOutput(c, {3, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 0});
    }
  }
  OpCase axis0("OneHot");
  axis0.Input(I64({2}, {1, 0})).Input(I32({}, {3})).Input(F32({}, {5})).Input(F32({}, {-1}))
      .Attr("T", DataType::kFloat).Attr("axis", 0);
  ExpectOutput(axis0, {3, 2}, {-1, 5, 5, -1, -1, -1});
  std::mt19937 rng(16);
  OpCase middle("OneHot");
  middle.Input(RandomTensor(DataType::kInt32, {2, 3}, rng, -1, 4)).Input(I32({}, {4}))
      .Input(F32({}, {1})).Input(F32({}, {0})).Attr("T", DataType::kFloat)
      .Attr("TI", DataType::kInt32).Attr("axis", 1);
  EXPECT_EQ(RunBoth(middle).shape(), (Shape{2, 4, 3}));
  OpCase depth0("OneHot");
  depth0.Input(I32({2}, {0, 1})).Input(I32({}, {0})).Input(F32({}, {1})).Input(F32({}, {0}))
      .Attr("T", DataType::kFloat).Attr("TI", DataType::kInt32);
  ExpectOutput(depth0, {2, 0}, {});

  OpCase negative("OneHot");
  negative.Input(I32({2}, {0, 1})).Input(I32({}, {-1})).Input(F32({}, {1})).Input(F32({}, {0}))
      .Attr("T", DataType::kFloat).Attr("TI", DataType::kInt32);
  ExpectBothFail(negative, StatusCode::kInvalidArgument, "depth must be non-negative, got: -1");
  OpCase axis("OneHot");
  axis.Input(I32({2}, {0, 1})).Input(I32({}, {2})).Input(F32({}, {1})).Input(F32({}, {0}))
      .Attr("T", DataType::kFloat).Attr("TI", DataType::kInt32).Attr("axis", 2);
  ExpectBothFail(axis, StatusCode::kInvalidArgument, "Expected axis to be -1 or between [0, 2)");
}

// ---------------------------------------------------------------------------
// SpaceToBatchND and BatchToSpaceND
// ---------------------------------------------------------------------------

OpCase SpaceBatch(const std::string& op, const Tensor& x, const Shape& block_shape, const V& block,
                  const V& pads, DataType it = DataType::kInt32) {
  OpCase c(op);
  c.Input(x).Input(Idx(it, block_shape, block))
      .Input(Idx(it, {static_cast<int64_t>(block.size()), 2}, pads)).Attr("T", x.dtype())
      .Attr("Tblock_shape", it).Attr(op == "SpaceToBatchND" ? "Tpaddings" : "Tcrops", it);
  return c;
}

TEST(ArrayTest, SpaceToBatchExact) {
  // TensorFlow's documented examples.
  ExpectOutput(SpaceBatch("SpaceToBatchND", F32({1, 2, 2, 1}, {1, 2, 3, 4}), {2}, {2, 2}, {0, 0, 0, 0}),
               {4, 1, 1, 1}, {1, 2, 3, 4});
  ExpectOutput(SpaceBatch("SpaceToBatchND", Iota({1, 4, 4, 1}), {2}, {2, 2}, {0, 0, 0, 0}),
               {4, 2, 2, 1}, {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15});
  // Padding: [1, 3] padded to [0, 1, 3, 0] then split into 2 batches.
  ExpectOutput(SpaceBatch("SpaceToBatchND", F32({1, 2, 1}, {1, 3}), {1}, {2}, {1, 1}),
               {2, 2, 1}, {0, 3, 1, 0});
  ExpectOutput(SpaceBatch("BatchToSpaceND", F32({4, 1, 1, 1}, {1, 2, 3, 4}), {2}, {2, 2}, {0, 0, 0, 0}),
               {1, 2, 2, 1}, {1, 2, 3, 4});
  ExpectOutput(SpaceBatch("BatchToSpaceND", F32({2, 2, 1}, {0, 3, 1, 0}), {1}, {2}, {1, 1}),
               {1, 2, 1}, {1, 3});
}

TEST(ArrayTest, SpaceBatchRoundTripAllTypes) {
  std::mt19937 rng(17);
  for (DataType t : AllTypes()) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      // 2 spatial dims with padding, a trailing channel dimension.
      Tensor x = RandomTensor(t, {2, 5, 3, 2}, rng);
      OpCase s2b = SpaceBatch("SpaceToBatchND", x, {2}, {2, 3}, {1, 2, 0, 3}, it);
      Tensor y = RunBoth(s2b);
      ASSERT_EQ(y.shape(), (Shape{12, 4, 2, 2}));
      Tensor back = RunBoth(SpaceBatch("BatchToSpaceND", y, {2}, {2, 3}, {1, 2, 0, 3}, it));
      EXPECT_EQ(back.shape(), x.shape());
      EXPECT_EQ(Values(back), Values(x));
    }
  }
  // One spatial dim (the wake-word dilated convolution), three spatial dims,
  // and none.
  RunBoth(SpaceBatch("SpaceToBatchND", RandomTensor(DataType::kFloat, {1, 49, 8}, rng), {1}, {4}, {3, 4}));
  RunBoth(SpaceBatch("BatchToSpaceND", RandomTensor(DataType::kFloat, {4, 14, 8}, rng), {1}, {4}, {3, 4}));
  RunBoth(SpaceBatch("SpaceToBatchND", RandomTensor(DataType::kFloat, {2, 3, 4, 2, 3}, rng), {3},
                     {3, 2, 2}, {0, 0, 1, 1, 0, 0}));
  RunBoth(SpaceBatch("BatchToSpaceND", RandomTensor(DataType::kFloat, {24, 2, 3, 2, 1}, rng), {3},
                     {2, 3, 2}, {1, 0, 2, 1, 0, 1}));
  ExpectOutput(SpaceBatch("SpaceToBatchND", F32({2}, {1, 2}), {0}, {}, {}), {2}, {1, 2});
}

TEST(ArrayTest, SpaceBatchErrors) {
  ExpectBothFail(SpaceBatch("SpaceToBatchND", Iota({1, 3, 1}), {1}, {2}, {0, 0}),
                 StatusCode::kInvalidArgument, "padded_shape[0]=3 is not divisible by block_shape[0]=2");
  ExpectBothFail(SpaceBatch("SpaceToBatchND", Iota({1, 4, 1}), {1}, {0}, {0, 0}),
                 StatusCode::kInvalidArgument, "All values in block_shape must be positive");
  ExpectBothFail(SpaceBatch("SpaceToBatchND", Iota({1, 4, 1}), {1}, {2}, {-1, 1}),
                 StatusCode::kInvalidArgument, "All values in paddings must be non-negative");
  ExpectBothFail(SpaceBatch("BatchToSpaceND", Iota({3, 2, 1}), {1}, {2}, {0, 0}),
                 StatusCode::kInvalidArgument, "Input batch dimension (3) is not divisible");
  ExpectBothFail(SpaceBatch("BatchToSpaceND", Iota({2, 1, 1}), {1}, {2}, {2, 1}),
                 StatusCode::kInvalidArgument, "Negative output dimension size");
  ExpectBothFail(SpaceBatch("SpaceToBatchND", Iota({4}), {2}, {2, 2}, {0, 0, 0, 0}),
                 StatusCode::kInvalidArgument, "input rank should be >= 3");
}

// ---------------------------------------------------------------------------
// Forwarding ops (no kernel: the executor forwards the input)
// ---------------------------------------------------------------------------

TEST(ArrayTest, ForwardingOps) {
  std::mt19937 rng(18);
  for (DataType t : AllTypes()) {
    Tensor x = RandomTensor(t, {2, 3}, rng);
    for (const char* op : {"StopGradient", "PreventGradient", "Snapshot"}) {
      OpCase c(op);
      c.Input(x).Attr("T", t);
      ExpectOutput(c, {2, 3}, Values(x));
    }
    OpCase p("PlaceholderWithDefault");
    tf::AttrValue shape;
    shape.mutable_shape()->add_dim()->set_size(2);
    shape.mutable_shape()->add_dim()->set_size(-1);
    p.Input(x).Attr("dtype", t).Attr("shape", shape);
    ExpectOutput(p, {2, 3}, Values(x));
  }
  OpCase n("IdentityN");
  n.Input(Iota({2})).Input(I64({}, {7})).Attr("T", std::vector<DataType>{DataType::kFloat, DataType::kInt64});
  ExpectOutput(n, {2}, {0, 1}, 0);
  ExpectOutput(n, {}, {7}, 1);
}

// ---------------------------------------------------------------------------
// Static shapes at import time: constant inputs are read by the shape
// functions.
// ---------------------------------------------------------------------------

void AddConst(tf::GraphDef& def, const std::string& name, const std::vector<int>& values) {
  tf::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(tf::DT_INT32);
  tf::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tf::DT_INT32);
  t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (int v : values) t->add_int_val(v);
}

void AddNode(tf::GraphDef& def, const std::string& name, const std::string& op,
             const std::vector<std::string>& inputs) {
  tf::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  (*n->mutable_attr())["T"].set_type(tf::DT_FLOAT);
}

TEST(ArrayTest, StaticShapesFromConstants) {
  tf::GraphDef def;
  tf::NodeDef* x = def.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(tf::DT_FLOAT);
  auto* shape = (*x->mutable_attr())["shape"].mutable_shape();
  for (int d : {2, -1, 4}) shape->add_dim()->set_size(d);
  AddConst(def, "b", {0, 1, 0});
  AddConst(def, "e", {0, 3, 0});
  AddConst(def, "s", {1, 1, -1});
  AddNode(def, "ss", "StridedSlice", {"x", "b", "e", "s"});
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["Index"].set_type(tf::DT_INT32);
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["begin_mask"].set_i(5);
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["end_mask"].set_i(5);
  AddConst(def, "shape", {-1, 2});
  AddNode(def, "r", "Reshape", {"ss", "shape"});
  AddConst(def, "perm", {2, 0, 1});
  AddNode(def, "t", "Transpose", {"x", "perm"});
  AddNode(def, "shape_of", "Shape", {"x"});
  auto graph = ImportGraphDef(def, "<array test>");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->FindNode("ss")->output_shapes[0].ToString(), "[2,?,4]");
  EXPECT_EQ((*graph)->FindNode("r")->output_shapes[0].ToString(), "[?,2]");
  EXPECT_EQ((*graph)->FindNode("t")->output_shapes[0].ToString(), "[4,2,?]");
  EXPECT_EQ((*graph)->FindNode("shape_of")->output_shapes[0].ToString(), "[3]");
}

// The wake-word pattern at run time: paddings computed from the input's
// shape (Shape -> StridedSlice -> Pack -> ExpandDims) feed SpaceToBatchND;
// each shape function sees the host values produced before it.
TEST(ArrayTest, RunTimeShapeChain) {
  tf::GraphDef def;
  tf::NodeDef* x = def.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(tf::DT_FLOAT);
  AddNode(def, "shape", "Shape", {"x"});
  AddConst(def, "b", {2});
  AddConst(def, "e", {3});
  AddConst(def, "s", {1});
  AddNode(def, "channels", "StridedSlice", {"shape", "b", "e", "s"});
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["T"].set_type(tf::DT_INT32);
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["Index"].set_type(tf::DT_INT32);
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["shrink_axis_mask"].set_i(1);
  AddNode(def, "pair", "Pack", {"channels", "channels"});
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["T"].set_type(tf::DT_INT32);
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["N"].set_i(2);
  AddConst(def, "zero", {0});
  AddNode(def, "pads", "ExpandDims", {"pair", "zero"});
  (*def.mutable_node(def.node_size() - 1)->mutable_attr())["T"].set_type(tf::DT_INT32);
  AddConst(def, "block", {2});
  AddNode(def, "s2b", "SpaceToBatchND", {"x", "block", "pads"});
  auto graph = ImportGraphDef(def, "<array test>");
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  for (const char* device : {"CPU:0", "REF:0"}) {
    SessionOptions options;
    options.device = device;
    auto session = Session::Create(&OpTestRuntime(), shared, options);
    ASSERT_TRUE(session.ok()) << session.status();
    // x is [1, 6, 2]: paddings [[2, 2]], padded length 10, two batches of 5.
    Tensor input = Iota({1, 6, 2});
    auto result = (*session)->Run({{"x", input}}, {"s2b", "pads"});
    ASSERT_TRUE(result.ok()) << device << ": " << result.status();
    EXPECT_EQ((*result)[0].shape(), (Shape{2, 5, 2})) << device;
    EXPECT_EQ(Values((*result)[1]), (V{2, 2})) << device;
    EXPECT_EQ(Values((*result)[0]),
              (V{0, 0, 0, 1, 4, 5, 8, 9, 0, 0, 0, 0, 2, 3, 6, 7, 10, 11, 0, 0})) << device;
    // Only Const may fall back to another device (the reference plugin has
    // no kernel for it); every array op runs on the session's device.
    for (const std::string& note : (*session)->placement_notes()) {
      EXPECT_NE(note.find("(op Const)"), std::string::npos) << device << ": " << note;
    }
  }
}

}  // namespace
}  // namespace plexus::testing
