// Eager execution (eager.h), graph building (graph_builder.h) and run
// cancellation (session.h) on the cpu plugin.
#include "plexus/eager.h"

#include <cmath>
#include <limits>
#include <atomic>

#include <gtest/gtest.h>

#include "plexus/graph_builder.h"
#include "plexus/npy.h"
#include "plexus/op_def.h"
#include "plexus/session.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuAndReferenceRuntime;
using ::plexus::testing::CpuRuntime;

Tensor Floats(Shape shape, const std::vector<float>& values) {
  return Tensor::FromVector(DataType::kFloat, std::move(shape), values);
}

TEST(EagerTest, RunsAndCachesPreparedOps) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  Tensor a = Floats({2, 2}, {1, 2, 3, 4});
  auto out = eager.Execute("MatMul", {a, a}, {}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const float* c = (*out)[0].data<float>();
  EXPECT_EQ(c[0], 7);
  EXPECT_EQ(c[1], 10);
  EXPECT_EQ(c[2], 15);
  EXPECT_EQ(c[3], 22);
  EXPECT_EQ(eager.cache_size(), 1u);
  ASSERT_TRUE(eager.Execute("MatMul", {a, a}, {}, nullptr).ok());
  EXPECT_EQ(eager.cache_size(), 1u);  // same key: reused
  AttrMap transposed;
  transposed["transpose_b"].set_b(true);
  auto t = eager.Execute("MatMul", {a, a}, transposed, nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].data<float>()[1], 11);  // [1,2]·[3,4]
  EXPECT_EQ(eager.cache_size(), 2u);
}

TEST(EagerTest, ACallerCannotPromiseAConstantWeight) {
  // `_plexus_const_inputs` lets a kernel convert a weight once and keep it
  // (the cpu plugin's oneDNN convolutions reorder the filter once); an eager
  // op's inputs change from call to call, so the attribute is dropped, and
  // each call sees its own filter.
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  AttrMap attrs;
  for (int64_t s : {1, 1, 1, 1}) attrs["strides"].mutable_list()->add_i(s);
  attrs["padding"].set_s("SAME");
  AttrMap promise = attrs;
  promise["_plexus_const_inputs"].mutable_list()->add_i(1);
  auto values = [](size_t n, float scale, int mod) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % mod) - mod / 2) * scale;
    return v;
  };
  Tensor x = Floats({1, 8, 8, 16}, values(8 * 8 * 16, 0.5f, 7));
  for (const std::vector<float>& f : {values(3 * 3 * 16 * 32, 0.25f, 5), values(3 * 3 * 16 * 32, -0.125f, 3)}) {
    auto promised = eager.Execute("Conv2D", {x, Floats({3, 3, 16, 32}, f)}, promise, nullptr);
    auto plain = eager.Execute("Conv2D", {x, Floats({3, 3, 16, 32}, f)}, attrs, nullptr);
    ASSERT_TRUE(promised.ok()) << promised.status();
    ASSERT_TRUE(plain.ok()) << plain.status();
    for (int64_t i = 0; i < (*plain)[0].num_elements(); ++i) {
      ASSERT_NEAR((*promised)[0].data<float>()[i], (*plain)[0].data<float>()[i], 1e-4) << "element " << i;
    }
  }
}

TEST(EagerTest, InfersCountAndTypeAttributes) {
  const OpDef* concat = OpRegistry::Global().Find("ConcatV2");
  ASSERT_NE(concat, nullptr);
  AttrMap attrs;
  ASSERT_TRUE(EagerContext::InferAttrs(*concat, {DataType::kFloat, DataType::kFloat, DataType::kFloat,
                                                 DataType::kInt32},
                                       &attrs)
                  .ok());
  EXPECT_EQ(attrs["N"].i(), 3);
  EXPECT_EQ(attrs["T"].type(), tf::DT_FLOAT);
  EXPECT_EQ(attrs["Tidx"].type(), tf::DT_INT32);

  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  Tensor axis = Tensor::FromVector(DataType::kInt32, {}, std::vector<int32_t>{0});
  auto out = eager.Execute("ConcatV2", {Floats({1}, {1}), Floats({2}, {2, 3}), axis}, {}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), Shape({3}));
  EXPECT_EQ((*out)[0].data<float>()[2], 3);
}

TEST(EagerTest, ErrorsNameTheOpAndDevice) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  auto bad = eager.Execute("MatMul", {Floats({2, 2}, {1, 2, 3, 4}), Floats({3}, {1, 2, 3})}, {}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("op MatMul on CPU:0"), std::string::npos) << bad.status();
  auto unknown = eager.Execute("NoSuchOp", {}, {}, nullptr);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  auto graph_only = eager.Execute("Switch", {Floats({1}, {1}), Tensor::FromVector(DataType::kBool, {}, std::vector<bool>{true})}, {}, nullptr);
  EXPECT_EQ(graph_only.status().code(), absl::StatusCode::kInvalidArgument);
  auto mixed = eager.Execute("AddV2", {Floats({1}, {1}), Tensor::FromVector(DataType::kInt32, {1}, std::vector<int32_t>{1})}, {}, nullptr);
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument) << mixed.status();
  // The context still works.
  EXPECT_TRUE(eager.Execute("Neg", {Floats({1}, {1})}, {}, nullptr).ok());
}

TEST(GraphBuilderTest, ChecksNodesAndInfersShapes) {
  GraphBuilder b("test");
  auto x = b.AddPlaceholder(DataType::kFloat, PartialShape({-1, 4}), "x");
  ASSERT_TRUE(x.ok()) << x.status();
  auto w = b.AddConst(Floats({4, 3}, std::vector<float>(12, 1.0f)), "w");
  ASSERT_TRUE(w.ok());
  auto y = b.AddNode("MatMul", {{*x, 0}, {*w, 0}}, {});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)->output_shapes[0].ToString(), "[?,3]");
  const int before = b.graph().num_nodes();
  auto bad = b.AddNode("MatMul", {{*w, 0}, {*w, 0}}, {});  // [4,3] x [4,3]
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(b.graph().num_nodes(), before);  // unchanged on error
  auto relu = b.AddNode("Relu", {{*y, 0}}, {});
  ASSERT_TRUE(relu.ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  auto runtime = CpuRuntime();
  auto session = Session::Create(runtime.get(), *graph);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"x", Floats({1, 4}, {1, -2, 1, 1})}}, {(*relu)->name});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 1);
}

TEST(SessionTest, CancelledRunStopsWithCancelled) {
  GraphBuilder b("cancel");
  auto x = b.AddPlaceholder(DataType::kFloat, PartialShape({2}), "x");
  auto y = b.AddNode("Neg", {{*x, 0}}, {});
  ASSERT_TRUE(y.ok());
  auto runtime = CpuRuntime();
  auto session = Session::Create(runtime.get(), *b.Finish());
  ASSERT_TRUE(session.ok());
  std::atomic<bool> cancel{true};
  RunOptions options;
  options.cancel = &cancel;
  auto out = (*session)->Run({{"x", Floats({2}, {1, 2})}}, {(*y)->name}, {}, options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << out.status();
  cancel = false;
  EXPECT_TRUE((*session)->Run({{"x", Floats({2}, {1, 2})}}, {(*y)->name}, {}, options).ok());
  EXPECT_EQ(CurrentRunCancelFlag(), nullptr);
}

// Metadata ops run in the core (exec/views.h): a Reshape, ExpandDims or
// Squeeze output shares its input's memory; Shape, ShapeN, Size and Rank are
// host values made from shapes. No kernel runs for them.
TEST(EagerTest, MetadataOpsAreViewsAndShapeValues) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  Tensor a = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor shape = Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {3, -1});
  auto reshaped = eager.Execute("Reshape", {a, shape}, {}, nullptr);
  ASSERT_TRUE(reshaped.ok()) << reshaped.status();
  EXPECT_EQ((*reshaped)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ((*reshaped)[0].buffer(), a.buffer());  // a view, not a copy
  auto prepared = eager.Prepare("Reshape", {DataType::kFloat, DataType::kInt32}, {}, nullptr);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ((*prepared)->device(), nullptr);  // no device's kernel

  Tensor axis = Tensor::FromVector<int32_t>(DataType::kInt32, {}, {0});
  auto expanded = eager.Execute("ExpandDims", {a, axis}, {}, nullptr);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ((*expanded)[0].shape(), (Shape{1, 2, 3}));
  auto squeezed = eager.Execute("Squeeze", {(*expanded)[0]}, {}, nullptr);
  ASSERT_TRUE(squeezed.ok()) << squeezed.status();
  EXPECT_EQ((*squeezed)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ((*squeezed)[0].buffer(), a.buffer());

  AttrMap int64_out;
  int64_out["out_type"].set_type(tf::DT_INT64);
  auto dims = eager.Execute("Shape", {a}, int64_out, nullptr);
  ASSERT_TRUE(dims.ok()) << dims.status();
  ASSERT_EQ((*dims)[0].dtype(), DataType::kInt64);
  EXPECT_EQ((*dims)[0].data<int64_t>()[0], 2);
  EXPECT_EQ((*dims)[0].data<int64_t>()[1], 3);
  auto size = eager.Execute("Size", {a}, {}, nullptr);
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ((*size)[0].data<int32_t>()[0], 6);
  auto rank = eager.Execute("Rank", {a}, {}, nullptr);
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ((*rank)[0].data<int32_t>()[0], 2);
  auto both = eager.Execute("ShapeN", {a, (*expanded)[0]}, {}, nullptr);
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[1].num_elements(), 3);

  // Errors name the op, as a kernel's would.
  Tensor bad = Tensor::FromVector<int32_t>(DataType::kInt32, {1}, {5});
  auto refused = eager.Execute("Reshape", {a, bad}, {}, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("op Reshape"), std::string::npos)
      << refused.status();
}

// fuzz_eager_ops (issue 27): BiasAddGrad on int64 added -2^63 + 1 and -2
// in int64 (UBSan: signed overflow). Integer sums wrap, as a sum in the
// type does in TensorFlow; so do MaxPoolGrad's.
// The reference plugin's BiasAddGrad did the same (found by the long run);
// both plugins are checked.
TEST(EagerTest, BiasAddGradInt64SumsWrap) {
  auto runtime = CpuAndReferenceRuntime();
  ASSERT_NE(runtime, nullptr);
  EagerContext eager(runtime.get());
  const int64_t min1 = std::numeric_limits<int64_t>::min() + 1;
  Tensor g = Tensor::FromVector(DataType::kInt64, {3, 1}, std::vector<int64_t>{min1, -2, 5});
  const uint64_t want = static_cast<uint64_t>(min1) + static_cast<uint64_t>(int64_t{-2}) + 5u;
  for (const char* name : {"CPU:0", "REF:0"}) {
    SCOPED_TRACE(name);
    auto device = runtime->FindDevice(name);
    ASSERT_TRUE(device.ok()) << device.status();
    auto out = eager.Execute("BiasAddGrad", {g}, {}, device->get());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<int64_t>()[0], static_cast<int64_t>(want));
  }
}

// fuzz_eager_ops (issue 27): BatchMatMulV3 with float inputs and an integer
// Tout converted -inf to the integer type (UBSan: outside the range), in the
// reference plugin's product and in the cpu plugin's conversion of its
// inputs. A float stored as an integer now saturates (NaN is 0) on both.
TEST(EagerTest, BatchMatMulFloatToIntegerSaturates) {
  auto runtime = CpuAndReferenceRuntime();
  ASSERT_NE(runtime, nullptr);
  EagerContext eager(runtime.get());
  const float inf = std::numeric_limits<float>::infinity();
  // Three batches of x against one y (broadcast): -inf, 1e30 and NaN.
  Tensor x = Tensor::FromVector(DataType::kFloat, {3, 1, 3},
                                std::vector<float>{-inf, 0, 0, 1e30f, 0, 0, NAN, 0, 0});
  Tensor y = Tensor::FromVector(DataType::kFloat, {1, 3, 1}, std::vector<float>{1, 0, 0});
  AttrMap attrs;
  attrs["Tout"].set_type(tf::DT_INT16);
  for (const char* name : {"REF:0", "CPU:0"}) {
    SCOPED_TRACE(name);
    auto device = runtime->FindDevice(name);
    ASSERT_TRUE(device.ok()) << device.status();
    auto out = eager.Execute("BatchMatMulV3", {x, y}, attrs, device->get());
    if (!out.ok()) {
      // A device without the combination refuses it by name; never undefined behaviour.
      EXPECT_TRUE(testing::Contains(out.status(), "BatchMatMulV3")) << out.status();
      continue;
    }
    const int16_t* v = (*out)[0].data<int16_t>();
    EXPECT_EQ(v[0], std::numeric_limits<int16_t>::lowest());
    EXPECT_EQ(v[1], std::numeric_limits<int16_t>::max());
    EXPECT_EQ(v[2], 0);
  }
}

// fuzz_eager_ops (issue 27): LRN with depth_radius -2^63 computed its window
// as d - radius (UBSan: signed overflow) on the reference plugin; a negative
// radius is now refused by both plugins, as TensorFlow's bounds check does.
TEST(EagerTest, LrnNegativeRadiusIsAnError) {
  auto runtime = CpuAndReferenceRuntime();
  ASSERT_NE(runtime, nullptr);
  EagerContext eager(runtime.get());
  Tensor x = Tensor::FromVector(DataType::kFloat, {1, 1, 1, 3}, std::vector<float>{1, 2, 3});
  for (int64_t radius : {std::numeric_limits<int64_t>::min(), int64_t{-1}}) {
    AttrMap attrs;
    attrs["depth_radius"].set_i(radius);
    for (const char* name : {"REF:0", "CPU:0"}) {
      SCOPED_TRACE(name);
      auto device = runtime->FindDevice(name);
      ASSERT_TRUE(device.ok()) << device.status();
      auto out = eager.Execute("LRN", {x}, attrs, device->get());
      ASSERT_FALSE(out.ok());
      EXPECT_TRUE(testing::Contains(out.status(), "depth_radius")) << out.status();
    }
  }
}

// fuzz_eager_ops (issue 27): the host op of AccumulateNV2 (and AddN) summed
// int64 1 + (2^63 - 1) in int64 (UBSan: signed overflow). Integer sums wrap,
// as TensorFlow's do.
TEST(EagerTest, HostAccumulateNInt64Wraps) {
  auto runtime = CpuRuntime();
  ASSERT_NE(runtime, nullptr);
  auto cpu = runtime->FindDevice("CPU:0");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EagerContext eager(runtime.get());
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  Tensor a = Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{1, -1});
  Tensor b = Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{max, min});
  AttrMap attrs;
  attrs["N"].set_i(2);
  attrs["T"].set_type(tf::DT_INT64);
  attrs["shape"].mutable_shape()->add_dim()->set_size(2);
  auto out = eager.Execute("AccumulateNV2", {a, b}, attrs, cpu->get());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], min);
  EXPECT_EQ((*out)[0].data<int64_t>()[1], max);
}

// Found by reading the host kernels after the AccumulateNV2 finding: Cross
// multiplied int64 components in int64 (a signed overflow for 2^62 * 4).
// Integer products and differences wrap, as Eigen's do.
TEST(EagerTest, HostCrossInt64Wraps) {
  auto runtime = CpuRuntime();
  ASSERT_NE(runtime, nullptr);
  auto cpu = runtime->FindDevice("CPU:0");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EagerContext eager(runtime.get());
  const int64_t big = int64_t{1} << 62;
  Tensor a = Tensor::FromVector(DataType::kInt64, {3}, std::vector<int64_t>{big, 2, 0});
  Tensor b = Tensor::FromVector(DataType::kInt64, {3}, std::vector<int64_t>{0, big, 4});
  auto out = eager.Execute("Cross", {a, b}, {}, cpu->get());
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t* z = (*out)[0].data<int64_t>();
  EXPECT_EQ(z[0], 8);
  EXPECT_EQ(z[1], 0);  // 0 - 2^64, modulo 2^64
  EXPECT_EQ(z[2], 0);  // 2^124, modulo 2^64
}

// fuzz_eager_ops (issue 27): EuclideanNorm squared an int32 of -2^31 in
// int32 (UBSan: signed overflow); an integer sum of squares that overflows
// is now an error naming the op.
TEST(EagerTest, EuclideanNormIntegerOverflowIsAnError) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  auto x = ReadNpy(testing::DataPath("../fuzz/regressions/euclidean_norm_int32_min.npy"));
  ASSERT_TRUE(x.ok()) << x.status();
  Tensor axes = Tensor::FromVector(DataType::kInt32, {1}, std::vector<int32_t>{0});
  auto out = eager.Execute("EuclideanNorm", {*x, axes}, {}, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(testing::Contains(out.status(), "EuclideanNorm")) << out.status();
  EXPECT_TRUE(testing::Contains(out.status(), "overflows int32")) << out.status();
  Tensor small = Tensor::FromVector(DataType::kInt32, {2}, std::vector<int32_t>{3, 4});
  auto norm = eager.Execute("EuclideanNorm", {small, axes}, {}, nullptr);
  ASSERT_TRUE(norm.ok()) << norm.status();
  EXPECT_EQ((*norm)[0].data<int32_t>()[0], 5);
}

// fuzz_eager_ops (issue 27): ParseExample sized its key inputs by the
// sparse_types list while the node's inputs were counted by Nsparse, so one
// type more than Nsparse read an input past the last one (ASan:
// heap-buffer-overflow). The disagreement is now an error naming the attrs.
TEST(EagerTest, ParseExampleCountsThatDisagreeWithTheTypesAreAnError) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  AttrMap attrs;
  attrs["Nsparse"].set_i(0);
  attrs["Ndense"].set_i(0);
  attrs["sparse_types"].mutable_list()->add_type(tf::DT_FLOAT);
  attrs["Tdense"].mutable_list();
  attrs["dense_shapes"].mutable_list();
  Tensor serialized = Tensor::FromStrings({1}, {""});
  Tensor names = Tensor::FromStrings({0}, {});
  auto out = eager.Execute("ParseExample", {serialized, names}, attrs, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(testing::Contains(out.status(), "attr 'Nsparse' is 0 but 'sparse_types' lists 1 types"))
      << out.status();
}

// fuzz_eager_ops (issue 27): the cpu plugin's _PlexusFusedElementwise kernel
// multiplied its `shape` attribute unchecked (UBSan: signed overflow) when
// made eagerly; each plugin's kernel now refuses such a shape, naming it.
TEST(EagerTest, FusedElementwiseShapeOverflowIsAnError) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  AttrMap attrs;
  attrs["T"].set_type(tf::DT_FLOAT);
  attrs["N"].set_i(1);
  attrs["shape"].mutable_list()->add_i(int64_t{1} << 62);
  attrs["shape"].mutable_list()->add_i(4);
  attrs["program"].mutable_list()->add_s("Neg i0");
  Tensor x = Tensor::FromVector(DataType::kFloat, {1}, std::vector<float>{1});
  auto out = eager.Execute("_PlexusFusedElementwise", {x}, attrs, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(testing::Contains(out.status(), "_PlexusFusedElementwise")) << out.status();
  EXPECT_TRUE(testing::Contains(out.status(), "int64")) << out.status();
}

// fuzz_eager_ops (issue 27): AdjustHue with an infinite delta stepped its
// hue by 6 for ever (a hang, libFuzzer's timeout); the pixel is now NaN.
TEST(EagerTest, AdjustHueWithAnInfiniteDeltaEnds) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  Tensor image = Tensor::FromVector(DataType::kFloat, {1, 1, 3}, std::vector<float>{0.2f, 0.5f, 0.9f});
  for (float delta : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    Tensor d = Tensor::FromVector(DataType::kFloat, {}, std::vector<float>{delta});
    auto out = eager.Execute("AdjustHue", {image, d}, {}, runtime->devices()[0].get());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0]));
  }
}

// fuzz_eager_ops (issue 27): DynamicStitch with an index of 2^31 - 1, and
// UnsortedSegmentJoin with as many segments, ask for a host output of
// gigabytes; PLEXUS_HOST_ALLOCATION_LIMIT turns that
// into RESOURCE_EXHAUSTED naming the limit, and the context still works.
TEST(EagerTest, HostAllocationLimitRefusesAHugeOutput) {
  auto runtime = CpuRuntime();
  EagerContext eager(runtime.get());
  Tensor indices = Tensor::FromVector(DataType::kInt32, {1}, std::vector<int32_t>{2147483647});
  Tensor data = Tensor::FromVector(DataType::kFloat, {1}, std::vector<float>{1});
  AttrMap attrs;
  attrs["N"].set_i(1);
  setenv("PLEXUS_HOST_ALLOCATION_LIMIT", "1048576", 1);
  auto out = eager.Execute("DynamicStitch", {indices, data}, attrs, nullptr);
  // A string output made by a kernel of its own is checked the same way.
  Tensor words = Tensor::FromStrings({1}, {"a"});
  Tensor ids = Tensor::FromVector(DataType::kInt32, {1}, std::vector<int32_t>{0});
  Tensor segments = Tensor::FromVector(DataType::kInt32, {}, std::vector<int32_t>{2147483647});
  auto joined = eager.Execute("UnsortedSegmentJoin", {words, ids, segments}, {}, nullptr);
  unsetenv("PLEXUS_HOST_ALLOCATION_LIMIT");
  ASSERT_FALSE(joined.ok());
  EXPECT_TRUE(testing::Contains(joined.status(), "PLEXUS_HOST_ALLOCATION_LIMIT=1048576")) << joined.status();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_TRUE(testing::Contains(out.status(), "PLEXUS_HOST_ALLOCATION_LIMIT=1048576")) << out.status();
  Tensor small = Tensor::FromVector(DataType::kInt32, {1}, std::vector<int32_t>{1});
  auto ok = eager.Execute("DynamicStitch", {small, data}, attrs, nullptr);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].num_elements(), 2);
}

}  // namespace
}  // namespace plexus
