// Small text graphs for the optimizer's tests (optimizer_test.cc,
// keras_fusion_test.cc): node builders, and a runner that runs a graph with
// and without the optimizer so the results can be compared.
#ifndef PLEXUS_TESTS_CORE_OPTIMIZER_GRAPHS_H_
#define PLEXUS_TESTS_CORE_OPTIMIZER_GRAPHS_H_

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "plexus/plexus.h"

namespace plexus::optimizer_graphs {

inline const std::vector<std::string> kAllPasses = {"prune", "arithmetic", "constant_fold", "cse", "layout",
                                             "dense_layers", "layer_norm", "fuse", "fuse_elementwise", "dead_nodes", "const_inputs"};

// Every pass but `keep` (and dead-node removal, which cleans up after it).
inline std::vector<std::string> AllBut(const std::string& keep) {
  std::vector<std::string> out;
  for (const std::string& p : kAllPasses) {
    if (p != keep && p != "dead_nodes") out.push_back(p);
  }
  return out;
}

inline std::shared_ptr<const Graph> Parse(const std::string& text) {
  auto g = ImportGraphDefBytes(text, "<optimizer test>", GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return std::shared_ptr<const Graph>(*std::move(g));
}

struct Outcome {
  std::vector<Tensor> optimized;
  std::vector<Tensor> plain;
  std::shared_ptr<const Graph> run_graph;
  std::vector<std::string> log;
};

inline Outcome RunBoth(Runtime* runtime, const std::string& text,
                const std::vector<std::pair<std::string, Tensor>>& feeds,
                const std::vector<std::string>& fetches, const std::vector<std::string>& disabled = {}) {
  Outcome o;
  auto graph = Parse(text);
  SessionOptions on;
  on.optimizer.disabled_passes = disabled;
  auto s1 = Session::Create(runtime, graph, on);
  EXPECT_TRUE(s1.ok()) << s1.status();
  auto r1 = (*s1)->Run(feeds, fetches);
  EXPECT_TRUE(r1.ok()) << r1.status();
  if (r1.ok()) o.optimized = *r1;
  o.run_graph = (*s1)->last_run_graph();
  o.log = (*s1)->optimizer_log();
  SessionOptions off;
  off.optimizer.enabled = false;
  auto s2 = Session::Create(runtime, graph, off);
  auto r2 = (*s2)->Run(feeds, fetches);
  EXPECT_TRUE(r2.ok()) << r2.status();
  if (r2.ok()) o.plain = *r2;
  return o;
}

inline int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op == op;
  return n;
}

inline void ExpectNear(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].dtype(), b[k].dtype());
    ASSERT_EQ(a[k].shape(), b[k].shape());
    for (int64_t i = 0; i < a[k].num_elements(); ++i) {
      double x = a[k].dtype() == DataType::kFloat ? a[k].data<float>()[i] : a[k].data<int32_t>()[i];
      double y = b[k].dtype() == DataType::kFloat ? b[k].data<float>()[i] : b[k].data<int32_t>()[i];
      EXPECT_NEAR(x, y, tol * (1 + std::fabs(y))) << "output " << k << " element " << i;
    }
  }
}

inline Tensor Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor t = *Tensor::AllocateHost(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

inline std::string FloatConst(const std::string& name, const Shape& shape, const std::vector<float>& values) {
  std::string dims, vals;
  for (int64_t d : shape) dims += "dim { size: " + std::to_string(d) + " } ";
  for (float v : values) vals += "float_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } " +
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { " + dims + "} " + vals +
         "} } } }\n";
}

inline std::string IntConst(const std::string& name, const std::vector<int>& values) {
  std::string vals;
  for (int v : values) vals += "int_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } " +
         "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: " +
         std::to_string(values.size()) + " } } " + vals + "} } } }\n";
}

inline std::string Placeholder(const std::string& name, const Shape& shape) {
  std::string dims;
  for (int64_t d : shape) dims += "dim { size: " + std::to_string(d) + " } ";
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " +
         "attr { key: 'shape' value { shape { " + dims + "} } } }\n";
}

inline std::string Binary(const std::string& name, const std::string& op, const std::string& a, const std::string& b) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

inline std::string Unary(const std::string& name, const std::string& op, const std::string& a) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

}  // namespace plexus::optimizer_graphs

#endif  // PLEXUS_TESTS_CORE_OPTIMIZER_GRAPHS_H_
