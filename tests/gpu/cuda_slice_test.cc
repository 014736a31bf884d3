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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
  SKIP_WITHOUT_CUDA();
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
