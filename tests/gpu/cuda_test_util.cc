#include "gpu/cuda_test_util.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph.pb.h"

namespace plexus::cuda_test {

using conformance::CompareTensors;
using conformance::ElementAsDouble;
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

void SetType(AttrMap& attr, const char* name, DataType t) {
  attr[name].set_type(static_cast<tf::DataType>(t));
}

absl::StatusOr<std::vector<Tensor>> RunOpN(const std::string& op, const std::vector<Tensor>& inputs,
                                           const SetAttrs& set_attrs, const std::string& device,
                                           int num_outputs) {
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
  auto graph = ImportGraphDef(def, absl::StrCat("<cuda test of ", op, ">"));
  if (!graph.ok()) return graph.status();
  std::shared_ptr<const Graph> shared(std::move(*graph));
  SessionOptions options;
  options.device = device;
  auto session = Session::Create(&TheRuntime(), shared, options);
  if (!session.ok()) return session.status();
  std::vector<std::string> fetches;
  for (int k = 0; k < num_outputs; ++k) fetches.push_back(absl::StrCat("op:", k));
  auto out = (*session)->Run(feeds, fetches);
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
  return out;
}

absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const SetAttrs& set_attrs, const std::string& device) {
  auto out = RunOpN(op, inputs, set_attrs, device, 1);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

std::string Describe(const std::string& op, const std::vector<Tensor>& inputs) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    std::string s = absl::StrCat(DataTypeName(t.dtype()), " ", ShapeToString(t.shape()));
    if ((t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64) && t.num_elements() <= 10) {
      std::vector<std::string> v;
      for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(absl::StrCat(ElementAsDouble(t, i)));
      absl::StrAppend(&s, " [", absl::StrJoin(v, ","), "]");
    }
    parts.push_back(s);
  }
  return absl::StrCat(op, "(", absl::StrJoin(parts, ", "), ")");
}

Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const SetAttrs& set_attrs, const Tolerance& tol) {
  SCOPED_TRACE(Describe(op, inputs));
  auto want = RunOp(op, inputs, set_attrs, "CPU:0");
  auto got = RunOp(op, inputs, set_attrs, "CUDA:0");
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return Tensor();
  EXPECT_EQ(got->shape(), want->shape());
  absl::Status same = CompareTensors(*got, *want, tol);
  EXPECT_TRUE(same.ok()) << same;
  return *got;
}

Tolerance Exact() {
  Tolerance exact;
  exact.atol = 0;
  exact.rtol = 0;
  return exact;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(ElementAsDouble(t, i));
  return v;
}

}  // namespace plexus::cuda_test
