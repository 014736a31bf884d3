// The CUDA plugin's movement.cc kernels on CUDA:0 against the cpu plugin,
// exactly: Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size, Rank, Fill,
// ZerosLike, OnesLike, Range, OneHot, Tile, BroadcastTo, MirrorPad, Split,
// SplitV, Unpack, Pack, GatherNd, SpaceToBatchND and BatchToSpaceND, for
// every dtype both plugins register; negative axes, rank 0, zero-size and
// large tensors; plus exact values and refusals. Skipped, with the reason,
// where the plugin reports no CUDA device; label gpu.
#include <cstdint>
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

namespace plexus {
namespace {

using conformance::CompareTensors;
using conformance::IntTensor;
using conformance::MakeTensor;
using conformance::RandomTensor;

using cuda_test::AttrMap;
using cuda_test::Describe;
using cuda_test::kAllTypes;
using cuda_test::RunOp;
using cuda_test::RunOpN;
using cuda_test::SetAttrs;
using cuda_test::SetType;
using cuda_test::TheRuntime;
using cuda_test::Values;

const std::vector<DataType> kIndexTypes = {DataType::kInt32, DataType::kInt64};

Tensor Ints(DataType t, const std::vector<int64_t>& v) {
  return IntTensor(t, {static_cast<int64_t>(v.size())}, v);
}

Tensor Scalar(DataType t, double v) { return MakeTensor(t, {}, {v}); }

// Data movement is exact: both plugins follow the same rules.
Tensor Expect(const std::string& op, const std::vector<Tensor>& inputs, const SetAttrs& attrs) {
  return cuda_test::ExpectCudaMatchesCpu(op, inputs, attrs, cuda_test::Exact());
}

std::vector<Tensor> ExpectN(const std::string& op, const std::vector<Tensor>& inputs,
                            const SetAttrs& attrs, int num_outputs) {
  SCOPED_TRACE(Describe(op, inputs));
  auto want = RunOpN(op, inputs, attrs, "CPU:0", num_outputs);
  auto got = RunOpN(op, inputs, attrs, "CUDA:0", num_outputs);
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return {};
  EXPECT_EQ(got->size(), want->size());
  for (size_t k = 0; k < got->size() && k < want->size(); ++k) {
    SCOPED_TRACE(absl::StrCat("output ", k));
    EXPECT_EQ((*got)[k].shape(), (*want)[k].shape());
    absl::Status same = CompareTensors((*got)[k], (*want)[k], cuda_test::Exact());
    EXPECT_TRUE(same.ok()) << same;
  }
  return *got;
}

// Both devices refuse the node with INVALID_ARGUMENT and a message
// containing `text`.
void ExpectBothFail(const std::string& op, const std::vector<Tensor>& inputs,
                    const SetAttrs& attrs, const std::string& text, int num_outputs = 1) {
  SCOPED_TRACE(Describe(op, inputs));
  for (const char* device : {"CPU:0", "CUDA:0"}) {
    auto y = RunOpN(op, inputs, attrs, device, num_outputs);
    ASSERT_FALSE(y.ok()) << device;
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << device << ": " << y.status();
    EXPECT_NE(std::string(y.status().message()).find(text), std::string::npos)
        << device << ": " << y.status();
  }
}

SetAttrs TAttrs(DataType t, const char* index_attr = nullptr, DataType index = DataType::kInt32) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    if (index_attr != nullptr) SetType(a, index_attr, index);
  };
}

// ---------------------------------------------------------------------------
// Reshape, ExpandDims, Squeeze
// ---------------------------------------------------------------------------

TEST(CudaMovement, ReshapeExpandDimsSqueeze) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(1);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      const Tensor x = RandomTensor(t, {2, 3, 4}, rng);
      const SetAttrs r = TAttrs(t, "Tshape", ti);
      Expect("Reshape", {x, Ints(ti, {6, 4})}, r);
      Expect("Reshape", {x, Ints(ti, {-1, 3})}, r);
      Expect("Reshape", {x, Ints(ti, {24})}, r);
      Expect("Reshape", {RandomTensor(t, {}, rng), Ints(ti, {1, 1})}, r);     // rank 0
      Expect("Reshape", {RandomTensor(t, {1, 1}, rng), Ints(ti, {})}, r);     // to rank 0
      Expect("Reshape", {RandomTensor(t, {0, 3}, rng), Ints(ti, {3, 0, 5})}, r);  // zero-size
      const SetAttrs e = TAttrs(t, "Tdim", ti);
      Expect("ExpandDims", {x, IntTensor(ti, {}, {0})}, e);
      Expect("ExpandDims", {x, IntTensor(ti, {}, {3})}, e);
      Expect("ExpandDims", {x, IntTensor(ti, {}, {-1})}, e);
      Expect("ExpandDims", {x, IntTensor(ti, {}, {-4})}, e);
      Expect("ExpandDims", {RandomTensor(t, {}, rng), IntTensor(ti, {}, {0})}, e);
      Expect("ExpandDims", {RandomTensor(t, {3, 0}, rng), IntTensor(ti, {}, {1})}, e);
    }
    const Tensor y = RandomTensor(t, {1, 3, 1, 4, 1}, rng);
    auto squeeze = [&](std::vector<int64_t> dims) {
      return [=](AttrMap& a) {
        SetType(a, "T", t);
        auto* list = a["squeeze_dims"].mutable_list();
        for (int64_t d : dims) list->add_i(d);
      };
    };
    Expect("Squeeze", {y}, squeeze({}));
    Expect("Squeeze", {y}, squeeze({0, 2}));
    Expect("Squeeze", {y}, squeeze({-1}));
    Expect("Squeeze", {RandomTensor(t, {1, 1}, rng)}, squeeze({}));  // to rank 0
    Expect("Squeeze", {RandomTensor(t, {}, rng)}, squeeze({}));      // rank 0
    Expect("Squeeze", {RandomTensor(t, {0, 1}, rng)}, squeeze({1}));  // zero-size
  }
}

TEST(CudaMovement, ReshapeLargeAndValuesAndRefusals) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  Expect("Reshape", {RandomTensor(DataType::kFloat, {1 << 22}, rng), Ints(DataType::kInt32, {-1, 1024})},
         TAttrs(DataType::kFloat, "Tshape", DataType::kInt32));
  auto y = RunOp("Reshape",
                 {MakeTensor(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                  Ints(DataType::kInt64, {3, -1})},
                 TAttrs(DataType::kInt32, "Tshape", DataType::kInt64), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  ExpectBothFail("Reshape",
                 {RandomTensor(DataType::kFloat, {2, 3}, rng), Ints(DataType::kInt32, {4, 2})},
                 TAttrs(DataType::kFloat, "Tshape", DataType::kInt32), "");
  ExpectBothFail("ExpandDims",
                 {RandomTensor(DataType::kFloat, {2, 3}, rng), IntTensor(DataType::kInt32, {}, {4})},
                 TAttrs(DataType::kFloat, "Tdim", DataType::kInt32), "expand dim index 4");
  ExpectBothFail("Squeeze", {RandomTensor(DataType::kFloat, {2, 3}, rng)},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   a["squeeze_dims"].mutable_list()->add_i(1);
                 },
                 "squeeze dim[1]");
}

// ---------------------------------------------------------------------------
// Shape, ShapeN, Size, Rank
// ---------------------------------------------------------------------------

TEST(CudaMovement, ShapeSizeRank) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (DataType t : kAllTypes) {
    for (DataType out : kIndexTypes) {
      const SetAttrs a = [=](AttrMap& m) {
        SetType(m, "T", t);
        SetType(m, "out_type", out);
      };
      for (const Shape& s : std::vector<Shape>{{2, 3, 4}, {}, {0, 5}, {7}}) {
        const Tensor x = RandomTensor(t, s, rng);
        const Tensor shape = Expect("Shape", {x}, a);
        std::vector<double> dims(s.begin(), s.end());
        EXPECT_EQ(Values(shape), dims);
        EXPECT_EQ(Values(Expect("Size", {x}, a)),
                  (std::vector<double>{static_cast<double>(NumElements(s))}));
        EXPECT_EQ(Values(Expect("Rank", {x}, TAttrs(t))),
                  (std::vector<double>{static_cast<double>(s.size())}));
      }
      const SetAttrs an = [=](AttrMap& m) {
        SetType(m, "T", t);
        SetType(m, "out_type", out);
        m["N"].set_i(3);
      };
      const std::vector<Tensor> shapes =
          ExpectN("ShapeN",
                  {RandomTensor(t, {2, 3}, rng), RandomTensor(t, {}, rng),
                   RandomTensor(t, {4, 0, 1}, rng)},
                  an, 3);
      if (shapes.size() == 3) {
        EXPECT_EQ(Values(shapes[0]), (std::vector<double>{2, 3}));
        EXPECT_TRUE(Values(shapes[1]).empty());
        EXPECT_EQ(Values(shapes[2]), (std::vector<double>{4, 0, 1}));
      }
    }
  }
  // More ShapeN outputs than are registered as host memory (32): the rest
  // are written to device memory.
  std::vector<Tensor> many;
  for (int k = 0; k < 35; ++k) many.push_back(RandomTensor(DataType::kFloat, {k % 4, 2}, rng));
  const std::vector<Tensor> shapes = ExpectN("ShapeN", many,
                                             [](AttrMap& m) {
                                               SetType(m, "T", DataType::kFloat);
                                               SetType(m, "out_type", DataType::kInt64);
                                               m["N"].set_i(35);
                                             },
                                             35);
  if (shapes.size() == 35) {
    EXPECT_EQ(Values(shapes[34]), (std::vector<double>{2, 2}));
  }
}

// ---------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike
// ---------------------------------------------------------------------------

TEST(CudaMovement, FillZerosLikeOnesLike) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      const SetAttrs a = TAttrs(t, "index_type", ti);
      const Tensor v = RandomTensor(t, {}, rng);
      Expect("Fill", {Ints(ti, {3, 5, 7}), v}, a);
      Expect("Fill", {Ints(ti, {}), v}, a);       // rank 0
      Expect("Fill", {Ints(ti, {4, 0}), v}, a);   // zero-size
      Expect("Fill", {Ints(ti, {1001}), v}, a);
    }
    for (const Shape& s : std::vector<Shape>{{3, 5}, {}, {0, 2}, {100003}}) {
      const Tensor x = RandomTensor(t, s, rng);
      const Tensor z = Expect("ZerosLike", {x}, TAttrs(t));
      const Tensor o = Expect("OnesLike", {x}, TAttrs(t));
      for (double e : Values(z)) EXPECT_EQ(e, 0);
      for (double e : Values(o)) EXPECT_EQ(e, 1);
    }
  }
  auto y = RunOp("Fill", {Ints(DataType::kInt32, {2, 2}), Scalar(DataType::kHalf, 2.5)},
                 TAttrs(DataType::kHalf, "index_type", DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{2.5, 2.5, 2.5, 2.5}));
  Expect("Fill", {Ints(DataType::kInt64, {1 << 12, 1 << 12}), Scalar(DataType::kFloat, -1.5)},
         TAttrs(DataType::kFloat, "index_type", DataType::kInt64));
  ExpectBothFail("Fill", {Ints(DataType::kInt32, {2, -1}), Scalar(DataType::kFloat, 1)},
                 TAttrs(DataType::kFloat, "index_type", DataType::kInt32), "");
}

// ---------------------------------------------------------------------------
// Range
// ---------------------------------------------------------------------------

TEST(CudaMovement, Range) {
  PX_SKIP_WITHOUT_CUDA();
  const std::vector<DataType> types = {
      DataType::kFloat, DataType::kDouble, DataType::kHalf,   DataType::kBFloat16,
      DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
      DataType::kUInt16, DataType::kUInt32};
  auto range = [](DataType t, double start, double limit, double delta) {
    return Expect("Range", {Scalar(t, start), Scalar(t, limit), Scalar(t, delta)},
                  [=](AttrMap& a) { SetType(a, "Tidx", t); });
  };
  for (DataType t : types) {
    const bool is_unsigned = t == DataType::kUInt16 || t == DataType::kUInt32;
    range(t, 0, 10, 1);
    range(t, 3, 100, 7);
    range(t, 5, 5, 1);  // zero-size
    if (!is_unsigned) {
      range(t, 10, -20, -3);
      range(t, -100, 100, 1);
    }
    if (t == DataType::kFloat || t == DataType::kDouble || t == DataType::kHalf ||
        t == DataType::kBFloat16) {
      range(t, 0.5, 37.25, 0.75);
      range(t, -1, 1, 0.001953125);
    }
  }
  range(DataType::kFloat, 0, 1e6, 0.1);  // 10^7 elements, rounding of i * delta
  range(DataType::kDouble, -3, 1e5, 0.0137);
  range(DataType::kInt64, -5000000000LL, 5000000000LL, 1000);
  auto y = RunOp("Range",
                 {Scalar(DataType::kInt32, 2), Scalar(DataType::kInt32, 11),
                  Scalar(DataType::kInt32, 3)},
                 [](AttrMap& a) { SetType(a, "Tidx", DataType::kInt32); }, "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{2, 5, 8}));
  ExpectBothFail("Range",
                 {Scalar(DataType::kFloat, 0), Scalar(DataType::kFloat, 1),
                  Scalar(DataType::kFloat, 0)},
                 [](AttrMap& a) { SetType(a, "Tidx", DataType::kFloat); }, "delta != 0");
}

// ---------------------------------------------------------------------------
// OneHot
// ---------------------------------------------------------------------------

TEST(CudaMovement, OneHot) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  const std::vector<DataType> index_types = {DataType::kUInt8, DataType::kInt8, DataType::kInt32,
                                             DataType::kInt64};
  for (DataType t : kAllTypes) {
    for (DataType ti : index_types) {
      const bool is_unsigned = ti == DataType::kUInt8;
      // Indices in [-2, 6] (in [0, 6] for uint8): some out of range.
      const Tensor idx = RandomTensor(ti, {3, 4}, rng, is_unsigned ? 0 : -2, 6);
      const Tensor on = RandomTensor(t, {}, rng), off = RandomTensor(t, {}, rng);
      for (int64_t axis : {-1, 0, 1, 2}) {
        Expect("OneHot", {idx, IntTensor(DataType::kInt32, {}, {5}), on, off},
               [=](AttrMap& a) {
                 SetType(a, "T", t);
                 SetType(a, "TI", ti);
                 a["axis"].set_i(axis);
               });
      }
      const SetAttrs last = [=](AttrMap& a) {
        SetType(a, "T", t);
        SetType(a, "TI", ti);
        a["axis"].set_i(-1);
      };
      Expect("OneHot", {RandomTensor(ti, {}, rng, 0, 4), IntTensor(DataType::kInt32, {}, {4}), on, off},
             last);  // rank 0 indices
      Expect("OneHot", {RandomTensor(ti, {0, 3}, rng, 0, 4), IntTensor(DataType::kInt32, {}, {4}), on, off},
             last);  // zero-size
      Expect("OneHot", {idx, IntTensor(DataType::kInt32, {}, {0}), on, off}, last);  // depth 0
    }
  }
  auto y = RunOp("OneHot",
                 {IntTensor(DataType::kInt32, {3}, {0, 2, -1}), IntTensor(DataType::kInt32, {}, {3}),
                  Scalar(DataType::kFloat, 5), Scalar(DataType::kFloat, -1)},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "TI", DataType::kInt32);
                   a["axis"].set_i(-1);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{5, -1, -1, -1, -1, 5, -1, -1, -1}));
  Expect("OneHot",
         {RandomTensor(DataType::kInt64, {1000, 100}, rng, 0, 1000),
          IntTensor(DataType::kInt32, {}, {1000}), Scalar(DataType::kFloat, 1),
          Scalar(DataType::kFloat, 0)},
         [](AttrMap& a) {
           SetType(a, "T", DataType::kFloat);
           SetType(a, "TI", DataType::kInt64);
           a["axis"].set_i(1);
         });
  ExpectBothFail("OneHot",
                 {IntTensor(DataType::kInt32, {2}, {0, 1}), IntTensor(DataType::kInt32, {}, {-1}),
                  Scalar(DataType::kFloat, 1), Scalar(DataType::kFloat, 0)},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   SetType(a, "TI", DataType::kInt32);
                   a["axis"].set_i(-1);
                 },
                 "depth must be non-negative");
}

// ---------------------------------------------------------------------------
// Tile, BroadcastTo
// ---------------------------------------------------------------------------

TEST(CudaMovement, TileAndBroadcastTo) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(6);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      const SetAttrs a = TAttrs(t, "Tmultiples", ti);
      const Tensor x = RandomTensor(t, {2, 3, 4}, rng);
      Expect("Tile", {x, Ints(ti, {1, 1, 1})}, a);
      Expect("Tile", {x, Ints(ti, {2, 1, 3})}, a);
      Expect("Tile", {x, Ints(ti, {1, 2, 1})}, a);
      Expect("Tile", {x, Ints(ti, {3, 2, 2})}, a);
      Expect("Tile", {x, Ints(ti, {2, 0, 1})}, a);  // zero-size
      Expect("Tile", {RandomTensor(t, {}, rng), Ints(ti, {})}, a);  // rank 0
      Expect("Tile", {RandomTensor(t, {1, 5, 1}, rng), Ints(ti, {3, 1, 4})}, a);
      Expect("Tile", {RandomTensor(t, {2, 1, 3, 1, 2}, rng), Ints(ti, {2, 3, 2, 2, 3})}, a);
      Expect("Tile", {RandomTensor(t, {3, 17}, rng), Ints(ti, {2, 3})}, a);
      const SetAttrs b = TAttrs(t, "Tidx", ti);
      Expect("BroadcastTo", {RandomTensor(t, {3, 1}, rng), Ints(ti, {2, 3, 4})}, b);
      Expect("BroadcastTo", {RandomTensor(t, {}, rng), Ints(ti, {2, 3})}, b);
      Expect("BroadcastTo", {RandomTensor(t, {1, 4}, rng), Ints(ti, {5, 4})}, b);
      Expect("BroadcastTo", {RandomTensor(t, {2, 3}, rng), Ints(ti, {2, 3})}, b);
      Expect("BroadcastTo", {RandomTensor(t, {1}, rng), Ints(ti, {0})}, b);  // zero-size
      Expect("BroadcastTo", {RandomTensor(t, {}, rng), Ints(ti, {})}, b);    // rank 0
      Expect("BroadcastTo", {RandomTensor(t, {1, 3, 1, 5}, rng), Ints(ti, {2, 4, 3, 6, 5})}, b);
    }
  }
  // Rank 9 that merges down to at most 8 dimensions, large tensors.
  Expect("Tile",
         {RandomTensor(DataType::kInt8, {2, 1, 2, 1, 2, 1, 2, 1, 2}, rng),
          Ints(DataType::kInt32, {1, 2, 1, 2, 1, 2, 1, 2, 1})},
         TAttrs(DataType::kInt8, "Tmultiples", DataType::kInt32));
  Expect("Tile", {RandomTensor(DataType::kFloat, {1000, 1}, rng), Ints(DataType::kInt32, {3, 2000})},
         TAttrs(DataType::kFloat, "Tmultiples", DataType::kInt32));
  Expect("BroadcastTo",
         {RandomTensor(DataType::kHalf, {1, 4096}, rng), Ints(DataType::kInt64, {4096, 4096})},
         TAttrs(DataType::kHalf, "Tidx", DataType::kInt64));
  auto y = RunOp("Tile",
                 {MakeTensor(DataType::kFloat, {2}, {1, 2}), Ints(DataType::kInt32, {3})},
                 TAttrs(DataType::kFloat, "Tmultiples", DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  auto z = RunOp("BroadcastTo",
                 {MakeTensor(DataType::kInt32, {2, 1}, {1, 2}), Ints(DataType::kInt32, {2, 3})},
                 TAttrs(DataType::kInt32, "Tidx", DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(Values(*z), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  ExpectBothFail("Tile", {RandomTensor(DataType::kFloat, {2, 3}, rng), Ints(DataType::kInt32, {2})},
                 TAttrs(DataType::kFloat, "Tmultiples", DataType::kInt32), "");
  ExpectBothFail("BroadcastTo",
                 {RandomTensor(DataType::kFloat, {2, 3}, rng), Ints(DataType::kInt32, {4, 3})},
                 TAttrs(DataType::kFloat, "Tidx", DataType::kInt32), "");
}

// ---------------------------------------------------------------------------
// MirrorPad
// ---------------------------------------------------------------------------

SetAttrs MirrorAttrs(DataType t, DataType ti, const char* mode) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    SetType(a, "Tpaddings", ti);
    a["mode"].set_s(mode);
  };
}

Tensor Paddings(DataType ti, const std::vector<int64_t>& v) {
  return IntTensor(ti, {static_cast<int64_t>(v.size() / 2), 2}, v);
}

TEST(CudaMovement, MirrorPad) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(7);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
        const bool sym = std::string(mode) == "SYMMETRIC";
        const SetAttrs a = MirrorAttrs(t, ti, mode);
        const Tensor x = RandomTensor(t, {3, 4, 5}, rng);
        Expect("MirrorPad", {x, Paddings(ti, {1, 2, 0, 0, 2, 1})}, a);
        Expect("MirrorPad", {x, Paddings(ti, {0, 0, 3, 3, 0, 0})}, a);
        Expect("MirrorPad", {x, Paddings(ti, {0, 0, 0, 0, 0, 0})}, a);
        Expect("MirrorPad", {x, Paddings(ti, {sym ? 3 : 2, sym ? 3 : 2, 1, 0, 0, sym ? 5 : 4})}, a);
        Expect("MirrorPad", {RandomTensor(t, {}, rng), IntTensor(ti, {0, 2}, {})}, a);  // rank 0
        if (sym) {  // REFLECT refuses a dimension of 0 (paddings must be below it)
          Expect("MirrorPad", {RandomTensor(t, {0, 3}, rng), Paddings(ti, {0, 0, 1, 1})}, a);
        }
        Expect("MirrorPad", {RandomTensor(t, {2, 1, 6}, rng), Paddings(ti, {1, 1, 0, 0, 0, 0})}, a);
        Expect("MirrorPad", {RandomTensor(t, {7}, rng), Paddings(ti, {3, 5})}, a);
      }
    }
  }
  Expect("MirrorPad", {RandomTensor(DataType::kFloat, {8, 224, 224, 3}, rng),
                       Paddings(DataType::kInt32, {0, 0, 3, 3, 3, 3, 0, 0})},
         MirrorAttrs(DataType::kFloat, DataType::kInt32, "REFLECT"));
  auto y = RunOp("MirrorPad",
                 {MakeTensor(DataType::kFloat, {3}, {1, 2, 3}), Paddings(DataType::kInt32, {2, 2})},
                 MirrorAttrs(DataType::kFloat, DataType::kInt32, "REFLECT"), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  auto z = RunOp("MirrorPad",
                 {MakeTensor(DataType::kFloat, {3}, {1, 2, 3}), Paddings(DataType::kInt32, {2, 3})},
                 MirrorAttrs(DataType::kFloat, DataType::kInt32, "SYMMETRIC"), "CUDA:0");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(Values(*z), (std::vector<double>{2, 1, 1, 2, 3, 3, 2, 1}));
  ExpectBothFail("MirrorPad",
                 {RandomTensor(DataType::kFloat, {3}, rng), Paddings(DataType::kInt32, {3, 0})},
                 MirrorAttrs(DataType::kFloat, DataType::kInt32, "REFLECT"),
                 "paddings must be less than the dimension size");
  ExpectBothFail("MirrorPad",
                 {RandomTensor(DataType::kFloat, {3}, rng), Paddings(DataType::kInt32, {0, 4})},
                 MirrorAttrs(DataType::kFloat, DataType::kInt32, "SYMMETRIC"),
                 "no greater than the dimension size");
}

// ---------------------------------------------------------------------------
// Split, SplitV, Unpack, Pack
// ---------------------------------------------------------------------------

TEST(CudaMovement, SplitAndSplitV) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(8);
  for (DataType t : kAllTypes) {
    const Tensor x = RandomTensor(t, {6, 4, 9}, rng);
    auto split = [&](const Tensor& v, int64_t axis, int n) {
      return ExpectN("Split", {IntTensor(DataType::kInt32, {}, {axis}), v},
                     [=](AttrMap& a) {
                       SetType(a, "T", t);
                       a["num_split"].set_i(n);
                     },
                     n);
    };
    split(x, 0, 3);
    split(x, 1, 2);
    split(x, 2, 3);
    split(x, -1, 9);
    split(x, -3, 1);
    split(RandomTensor(t, {0, 4}, rng), 1, 2);  // zero-size
    split(RandomTensor(t, {4, 0}, rng), 0, 2);
    for (DataType tl : {DataType::kInt8, DataType::kInt32, DataType::kInt64}) {
      auto splitv = [&](const Tensor& v, const std::vector<double>& sizes, int64_t axis) {
        const int n = static_cast<int>(sizes.size());
        return ExpectN("SplitV",
                       {v, MakeTensor(tl, {static_cast<int64_t>(n)}, sizes),
                        IntTensor(DataType::kInt32, {}, {axis})},
                       [=](AttrMap& a) {
                         SetType(a, "T", t);
                         SetType(a, "Tlen", tl);
                         a["num_split"].set_i(n);
                       },
                       n);
      };
      splitv(x, {1, 2, 3}, 0);
      splitv(x, {2, -1}, 1);
      splitv(x, {0, 4, 5}, -1);  // an empty piece
      splitv(x, {9}, 2);
    }
  }
  Expect("Split", {IntTensor(DataType::kInt32, {}, {1}), RandomTensor(DataType::kFloat, {2048, 2048}, rng)},
         [](AttrMap& a) {
           SetType(a, "T", DataType::kFloat);
           a["num_split"].set_i(1);
         });
  auto y = RunOpN("Split",
                  {IntTensor(DataType::kInt32, {}, {1}),
                   MakeTensor(DataType::kInt32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                  [](AttrMap& a) {
                    SetType(a, "T", DataType::kInt32);
                    a["num_split"].set_i(2);
                  },
                  "CUDA:0", 2);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values((*y)[0]), (std::vector<double>{1, 2, 5, 6}));
  EXPECT_EQ(Values((*y)[1]), (std::vector<double>{3, 4, 7, 8}));
  ExpectBothFail("Split",
                 {IntTensor(DataType::kInt32, {}, {0}), RandomTensor(DataType::kFloat, {5, 2}, rng)},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   a["num_split"].set_i(2);
                 },
                 "", 2);
}

TEST(CudaMovement, UnpackAndPack) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(9);
  for (DataType t : kAllTypes) {
    const Tensor x = RandomTensor(t, {3, 4, 5}, rng);
    auto unpack = [&](const Tensor& v, int64_t axis, int num) {
      return ExpectN("Unpack", {v},
                     [=](AttrMap& a) {
                       SetType(a, "T", t);
                       a["axis"].set_i(axis);
                       a["num"].set_i(num);
                     },
                     num);
    };
    unpack(x, 0, 3);
    unpack(x, 1, 4);
    unpack(x, 2, 5);
    unpack(x, -1, 5);
    unpack(x, -3, 3);
    unpack(RandomTensor(t, {4}, rng), 0, 4);     // to scalars
    unpack(RandomTensor(t, {2, 0}, rng), 0, 2);  // zero-size
    auto pack = [&](const std::vector<Tensor>& vs, int64_t axis) {
      return Expect("Pack", vs, [=](AttrMap& a) {
        SetType(a, "T", t);
        a["axis"].set_i(axis);
        a["N"].set_i(static_cast<int64_t>(vs.size()));
      });
    };
    const std::vector<Tensor> three = {RandomTensor(t, {4, 5}, rng), RandomTensor(t, {4, 5}, rng),
                                       RandomTensor(t, {4, 5}, rng)};
    pack(three, 0);
    pack(three, 1);
    pack(three, 2);
    pack(three, -1);
    pack(three, -3);
    pack({RandomTensor(t, {4, 5}, rng)}, 1);
    pack({RandomTensor(t, {}, rng), RandomTensor(t, {}, rng)}, 0);  // scalars
    pack({RandomTensor(t, {0, 3}, rng), RandomTensor(t, {0, 3}, rng)}, 1);  // zero-size
  }
  auto y = RunOp("Pack",
                 {MakeTensor(DataType::kFloat, {2}, {1, 2}), MakeTensor(DataType::kFloat, {2}, {3, 4})},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   a["axis"].set_i(1);
                   a["N"].set_i(2);
                 },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{2, 2}));
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 3, 2, 4}));
  ExpectN("Unpack", {RandomTensor(DataType::kHalf, {1000, 3, 1000}, rng)},
          [](AttrMap& a) {
            SetType(a, "T", DataType::kHalf);
            a["axis"].set_i(1);
            a["num"].set_i(3);
          },
          3);
  ExpectBothFail("Unpack", {RandomTensor(DataType::kFloat, {3, 4}, rng)},
                 [](AttrMap& a) {
                   SetType(a, "T", DataType::kFloat);
                   a["axis"].set_i(2);
                   a["num"].set_i(3);
                 },
                 "", 3);
}

// ---------------------------------------------------------------------------
// GatherNd
// ---------------------------------------------------------------------------

SetAttrs GatherNdAttrs(DataType t, DataType ti) {
  return [=](AttrMap& a) {
    SetType(a, "Tparams", t);
    SetType(a, "Tindices", ti);
  };
}

// Random index tuples of `count` x dims.size() within dims (shape
// lead + [dims.size()]).
Tensor RandomTuples(DataType ti, Shape lead, const std::vector<int64_t>& dims, std::mt19937& rng) {
  const int64_t count = NumElements(lead);
  std::vector<int64_t> v;
  for (int64_t m = 0; m < count; ++m) {
    for (int64_t d : dims) v.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(d)));
  }
  lead.push_back(static_cast<int64_t>(dims.size()));
  return IntTensor(ti, lead, v);
}

TEST(CudaMovement, GatherNd) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(10);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      const SetAttrs a = GatherNdAttrs(t, ti);
      const Tensor p = RandomTensor(t, {4, 5, 6}, rng);
      Expect("GatherNd", {p, RandomTuples(ti, {7}, {4, 5, 6}, rng)}, a);      // elements
      Expect("GatherNd", {p, RandomTuples(ti, {2, 3}, {4, 5}, rng)}, a);      // rows
      Expect("GatherNd", {p, RandomTuples(ti, {3}, {4}, rng)}, a);            // matrices
      Expect("GatherNd", {p, RandomTuples(ti, {}, {4, 5, 6}, rng)}, a);       // one element
      Expect("GatherNd", {p, IntTensor(ti, {2, 0}, {})}, a);                  // depth 0
      Expect("GatherNd", {p, IntTensor(ti, {0, 2}, {})}, a);                  // zero-size
      Expect("GatherNd", {RandomTensor(t, {3, 0}, rng), RandomTuples(ti, {4}, {3}, rng)}, a);
    }
  }
  Expect("GatherNd",
         {RandomTensor(DataType::kFloat, {100, 100, 64}, rng),
          RandomTuples(DataType::kInt64, {50, 40}, {100, 100}, rng)},
         GatherNdAttrs(DataType::kFloat, DataType::kInt64));
  auto y = RunOp("GatherNd",
                 {MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4}),
                  IntTensor(DataType::kInt32, {2, 2}, {1, 0, 0, 1})},
                 GatherNdAttrs(DataType::kFloat, DataType::kInt32), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<double>{3, 2}));
  for (DataType ti : kIndexTypes) {
    for (int64_t bad : {4, -1}) {
      ExpectBothFail("GatherNd",
                     {RandomTensor(DataType::kFloat, {3, 4}, rng),
                      IntTensor(ti, {2, 2, 2}, {0, 1, 2, 3, 1, bad, 0, 0})},
                     GatherNdAttrs(DataType::kFloat, ti),
                     absl::StrCat("indices[1,0] = [1,", bad, "] does not index into param shape [3,4]"));
    }
  }
}

// ---------------------------------------------------------------------------
// SpaceToBatchND, BatchToSpaceND
// ---------------------------------------------------------------------------

SetAttrs SpaceBatchAttrs(DataType t, DataType ti, bool to_batch) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    SetType(a, "Tblock_shape", ti);
    SetType(a, to_batch ? "Tpaddings" : "Tcrops", ti);
  };
}

TEST(CudaMovement, SpaceToBatchAndBack) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(11);
  for (DataType t : kAllTypes) {
    for (DataType ti : kIndexTypes) {
      const SetAttrs s2b = SpaceBatchAttrs(t, ti, true), b2s = SpaceBatchAttrs(t, ti, false);
      const Tensor x = RandomTensor(t, {2, 4, 6, 3}, rng);
      Expect("SpaceToBatchND", {x, Ints(ti, {2, 2}), Paddings(ti, {0, 0, 0, 0})}, s2b);
      Expect("SpaceToBatchND", {x, Ints(ti, {2, 3}), Paddings(ti, {1, 1, 0, 3})}, s2b);
      Expect("SpaceToBatchND", {x, Ints(ti, {3}), Paddings(ti, {1, 1})}, s2b);
      Expect("SpaceToBatchND", {RandomTensor(t, {1, 5, 2}, rng), Ints(ti, {4}), Paddings(ti, {2, 1})},
             s2b);
      Expect("SpaceToBatchND", {RandomTensor(t, {0, 4, 4, 1}, rng), Ints(ti, {2, 2}),
                                Paddings(ti, {0, 0, 0, 0})},
             s2b);  // zero-size
      const Tensor b = RandomTensor(t, {8, 3, 4, 2}, rng);
      Expect("BatchToSpaceND", {b, Ints(ti, {2, 2}), Paddings(ti, {0, 0, 0, 0})}, b2s);
      Expect("BatchToSpaceND", {b, Ints(ti, {2, 2}), Paddings(ti, {1, 0, 2, 3})}, b2s);
      Expect("BatchToSpaceND", {b, Ints(ti, {4}), Paddings(ti, {3, 2})}, b2s);
      Expect("BatchToSpaceND", {b, Ints(ti, {2, 4}), Paddings(ti, {0, 0, 0, 0})}, b2s);
      Expect("BatchToSpaceND", {b, Ints(ti, {2, 2}), Paddings(ti, {3, 3, 0, 0})}, b2s);  // empty
    }
  }
  Expect("SpaceToBatchND",
         {RandomTensor(DataType::kFloat, {4, 64, 64, 32}, rng), Ints(DataType::kInt32, {2, 2}),
          Paddings(DataType::kInt32, {2, 2, 2, 2})},
         SpaceBatchAttrs(DataType::kFloat, DataType::kInt32, true));
  Expect("BatchToSpaceND",
         {RandomTensor(DataType::kHalf, {16, 34, 34, 32}, rng), Ints(DataType::kInt32, {2, 2}),
          Paddings(DataType::kInt32, {2, 2, 2, 2})},
         SpaceBatchAttrs(DataType::kHalf, DataType::kInt32, false));
  // [1, 2, 2, 1] with a 2 x 2 block: each element becomes a batch.
  auto y = RunOp("SpaceToBatchND",
                 {MakeTensor(DataType::kFloat, {1, 2, 2, 1}, {1, 2, 3, 4}),
                  Ints(DataType::kInt32, {2, 2}), Paddings(DataType::kInt32, {0, 0, 0, 0})},
                 SpaceBatchAttrs(DataType::kFloat, DataType::kInt32, true), "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{4, 1, 1, 1}));
  EXPECT_EQ(Values(*y), (std::vector<double>{1, 2, 3, 4}));
  ExpectBothFail("SpaceToBatchND",
                 {RandomTensor(DataType::kFloat, {1, 5, 2}, rng), Ints(DataType::kInt32, {2}),
                  Paddings(DataType::kInt32, {0, 0})},
                 SpaceBatchAttrs(DataType::kFloat, DataType::kInt32, true), "not divisible");
  ExpectBothFail("BatchToSpaceND",
                 {RandomTensor(DataType::kFloat, {3, 5, 2}, rng), Ints(DataType::kInt32, {2}),
                  Paddings(DataType::kInt32, {0, 0})},
                 SpaceBatchAttrs(DataType::kFloat, DataType::kInt32, false), "not divisible");
}

}  // namespace
}  // namespace plexus
