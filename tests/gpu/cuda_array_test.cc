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
#include "test_util.h"

namespace plexus {
namespace {

using conformance::CompareTensors;
using conformance::ElementAsDouble;
using conformance::IntTensor;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

Runtime& TheRuntime() {
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_CUDA_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok()) {
      std::fprintf(stderr, "runtime: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

std::string NoCudaDeviceReason() {
  bool loaded = false;
  for (const auto& p : TheRuntime().plugins()) loaded |= p->name() == "cuda";
  if (!loaded) {
    std::vector<std::string> lines;
    for (const PluginLoadReport& r : TheRuntime().load_reports()) lines.push_back(r.message);
    return "the cuda plugin did not load: " + absl::StrJoin(lines, "; ");
  }
  if (TheRuntime().FindDevice("CUDA:0").ok()) return "";
  return "the cuda plugin reports 0 devices (PLEXUS_LOG_LEVEL=info plexus devices says why)";
}

#define SKIP_WITHOUT_CUDA()                                                            \
  do {                                                                                 \
    const std::string reason = NoCudaDeviceReason();                                   \
    if (!reason.empty()) GTEST_SKIP() << "no CUDA device: " << reason;                 \
  } while (0)

// Every dtype both plugins register for the data-movement ops.
const std::vector<DataType> kAllTypes = {
    DataType::kFloat, DataType::kDouble, DataType::kHalf,   DataType::kBFloat16,
    DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
    DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
    DataType::kBool};

using AttrMap = google::protobuf::Map<std::string, tf::AttrValue>;
using SetAttrs = std::function<void(AttrMap&)>;

void SetType(AttrMap& attr, const char* name, DataType t) {
  attr[name].set_type(static_cast<tf::DataType>(t));
}

// Runs one node of `op` on `device`; fails when the node did not run there.
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const SetAttrs& set_attrs, const std::string& device) {
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
  set_attrs(*node->mutable_attr());
  auto graph = ImportGraphDef(def, "<cuda array test>");
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&TheRuntime(), shared, options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run(feeds, {"op:0"});
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

std::string Describe(const std::string& op, const std::vector<Tensor>& inputs) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    std::string s = absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape()));
    if ((t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64) &&
        t.num_elements() <= 10) {
      std::vector<std::string> v;
      for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(absl::StrCat(ElementAsDouble(t, i)));
      absl::StrAppend(&s, " [", absl::StrJoin(v, ","), "]");
    }
    parts.push_back(s);
  }
  return absl::StrCat(op, "(", absl::StrJoin(parts, ", "), ")");
}

// Data movement and Cast are exact: both plugins follow the same rules.
Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const SetAttrs& set_attrs) {
  SCOPED_TRACE(Describe(op, inputs));
  auto want = RunOp(op, inputs, set_attrs, "CPU:0");
  auto got = RunOp(op, inputs, set_attrs, "CUDA:0");
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return Tensor();
  EXPECT_EQ(got->shape(), want->shape());
  Tolerance exact;
  exact.atol = 0;
  exact.rtol = 0;
  absl::Status same = CompareTensors(*got, *want, exact);
  EXPECT_TRUE(same.ok()) << same;
  return *got;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(ElementAsDouble(t, i));
  return v;
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
    ExpectConcatV2({RandomTensor(t, {7}, rng)}, 0, DataType::kInt32);  // N = 1
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
