#include "op_test_util.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph.pb.h"
#include "plexus/sdk/float16.h"

namespace plexus::testing {

Runtime& OpTestRuntime() {
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_REFERENCE_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok() || (*r)->plugins().size() != 2) {
      std::fprintf(stderr, "the cpu and reference plugins did not both load: %s\n",
                   r.ok() ? "one is missing" : std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

std::vector<DataType> FloatTypes() {
  return {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16};
}
std::vector<DataType> IntegerTypes() {
  return {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUInt8};
}
std::vector<DataType> RealTypes() {
  std::vector<DataType> v = FloatTypes();
  for (DataType t : IntegerTypes()) v.push_back(t);
  return v;
}

OpCase& OpCase::Input(Tensor value) {
  inputs_.push_back(std::move(value));
  return *this;
}
OpCase& OpCase::Attr(const std::string& name, const tf::AttrValue& value) {
  attrs_.emplace_back(name, value);
  return *this;
}
OpCase& OpCase::Attr(const std::string& name, DataType value) {
  tf::AttrValue v;
  v.set_type(static_cast<tf::DataType>(value));
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, int64_t value) {
  tf::AttrValue v;
  v.set_i(value);
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, float value) {
  tf::AttrValue v;
  v.set_f(value);
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, bool value) {
  tf::AttrValue v;
  v.set_b(value);
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, const std::string& value) {
  tf::AttrValue v;
  v.set_s(value);
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, const std::vector<int64_t>& value) {
  tf::AttrValue v;
  auto* list = v.mutable_list();
  for (int64_t x : value) list->add_i(x);
  return Attr(name, v);
}
OpCase& OpCase::Attr(const std::string& name, const std::vector<DataType>& value) {
  tf::AttrValue v;
  auto* list = v.mutable_list();
  for (DataType x : value) list->add_type(static_cast<tf::DataType>(x));
  return Attr(name, v);
}

std::string OpCase::Describe() const {
  std::vector<std::string> ins, attrs;
  for (const Tensor& t : inputs_) ins.push_back(absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape())));
  for (const auto& [name, value] : attrs_) attrs.push_back(absl::StrCat(name, "=", value.ShortDebugString()));
  return absl::StrCat(op_, "(", absl::StrJoin(ins, ", "), ") ", absl::StrJoin(attrs, " "));
}

absl::StatusOr<std::vector<Tensor>> OpCase::Run(const std::string& device) const {
  tf::GraphDef def;
  tf::NodeDef* node = nullptr;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    tf::NodeDef* p = def.add_node();
    p->set_name(absl::StrCat("in", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"].set_type(static_cast<tf::DataType>(inputs_[i].dtype()));
    feeds.emplace_back(absl::StrCat("in", i, ":0"), inputs_[i]);
  }
  node = def.add_node();
  node->set_name("op");
  node->set_op(op_);
  for (size_t i = 0; i < inputs_.size(); ++i) node->add_input(absl::StrCat("in", i));
  for (const auto& [name, value] : attrs_) (*node->mutable_attr())[name] = value;
  auto graph = ImportGraphDef(def, "<op test>");
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  const Node* op_node = shared->FindNode("op");
  std::vector<std::string> fetches;
  for (int k = 0; k < op_node->num_outputs(); ++k) fetches.push_back(absl::StrCat("op:", k));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&OpTestRuntime(), shared, options);
  if (!session.ok()) return session.status();
  auto result = (*session)->Run(feeds, fetches, fetches.empty() ? std::vector<std::string>{"op"}
                                                                : std::vector<std::string>{});
  // Checked whether the run failed or not: an error from another device
  // (or from the core) must not pass for this device's.
  std::vector<std::string> notes = (*session)->placement_notes();
  if (!notes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the node did not run on ", device, ": ", absl::StrJoin(notes, "; ")));
  }
  return result;
}

namespace {

void Compare(const OpCase& c, const Tolerance* tol) {
  auto want = c.Run("REF:0");
  auto got = c.Run("CPU:0");
  // A case meant to succeed: a failing reference is a broken case (error
  // cases use ExpectBothFail).
  ASSERT_TRUE(want.ok()) << c.Describe() << ": the reference failed: " << want.status();
  ASSERT_TRUE(got.ok()) << c.Describe() << ": " << got.status();
  ASSERT_EQ(got->size(), want->size()) << c.Describe();
  for (size_t k = 0; k < got->size(); ++k) {
    Tolerance t = tol ? *tol : DefaultTolerance((*want)[k].dtype());
    absl::Status s = CompareTensors((*got)[k], (*want)[k], t);
    EXPECT_TRUE(s.ok()) << c.Describe() << ": output " << k << ": " << s.message();
  }
}

}  // namespace

void ExpectCpuAgreesWithReference(const OpCase& c) {
  auto want = c.Run("REF:0");
  auto got = c.Run("CPU:0");
  if (want.ok()) {
    Compare(c, nullptr);
    return;
  }
  ASSERT_FALSE(got.ok()) << c.Describe() << ": the reference failed (" << want.status()
                         << ") but the cpu kernel succeeded";
  EXPECT_EQ(got.status().code(), want.status().code())
      << c.Describe() << ": cpu " << got.status() << " vs reference " << want.status();
}

void ExpectCpuMatchesReference(const OpCase& c) { Compare(c, nullptr); }
void ExpectCpuMatchesReference(const OpCase& c, Tolerance tol) { Compare(c, &tol); }

void ExpectBothFail(const OpCase& c, absl::StatusCode code, const std::string& text) {
  for (const char* device : {"REF:0", "CPU:0"}) {
    auto r = c.Run(device);
    ASSERT_FALSE(r.ok()) << c.Describe() << " on " << device << " succeeded";
    EXPECT_EQ(r.status().code(), code) << c.Describe() << " on " << device << ": " << r.status();
    if (std::string(device) == "CPU:0") {
      EXPECT_NE(r.status().message().find(text), absl::string_view::npos)
          << c.Describe() << ": " << r.status();
    }
  }
}

}  // namespace plexus::testing
