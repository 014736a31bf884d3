// The graph optimizer: passes that rewrite a GraphDef for one run signature
// (its feeds, fetches and targets) before the executor is built. Each pass
// is its own file, switchable by name, and never changes results beyond
// floating-point reassociation. Passes work on tf::GraphDef, the form the
// importer validates, so every rewritten graph is checked exactly like a
// graph from a file. Internal to the core.
#ifndef PLEXUS_SRC_OPTIMIZER_OPTIMIZER_H_
#define PLEXUS_SRC_OPTIMIZER_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph.pb.h"
#include "plexus/graph.h"
#include "plexus/runtime.h"
#include "plexus/optimizer_options.h"
#include "plexus/tensor.h"

namespace plexus::opt {

// Runs a graph of constants and returns the values of `fetches` ("node:k"):
// how constant folding evaluates, supplied by the session that owns the
// passes (they never build a session themselves).
using ConstantEvaluator = std::function<absl::StatusOr<std::vector<Tensor>>(
    std::shared_ptr<const Graph> graph, const std::vector<std::string>& fetches)>;

// What the passes must preserve and where the graph will run.
struct PassContext {
  // Nodes named by the signature (fed, fetched, targets): never removed,
  // renamed or replaced; their inputs may be rewired to equal values.
  std::set<std::string> protected_nodes;
  // Fed endpoints ("node:k"): their values come from the caller, so nothing
  // downstream of them is constant.
  std::set<std::string> fed;
  // Roots of the signature: fetched and target nodes.
  std::vector<std::string> roots;
  const Runtime* runtime = nullptr;
  std::shared_ptr<Device> device;  // where the session runs
  int64_t fold_max_bytes = 10 << 20;
  // Constant folding's evaluator; empty: only statically known shapes fold.
  ConstantEvaluator evaluate;
  // Where a node runs, for graph dumps: a device name, or "core" for the
  // core's own work. Given by the session from the placer (empty: "core").
  std::function<std::string(const Graph&, const Node&)> place;
  std::string source;  // for messages
  // Appends a line to the optimizer's log (what a pass did).
  std::vector<std::string>* log = nullptr;
};

// A pass rewrites `def` in place and returns whether it changed anything.
using PassFn = absl::StatusOr<bool> (*)(tf::GraphDef& def, const PassContext& ctx);

struct PassInfo {
  const char* name;
  PassFn fn;
  const char* description;
};

// Every pass, in the order they run.
const std::vector<PassInfo>& AllPasses();

// The passes.
absl::StatusOr<bool> PruneToFetches(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> SimplifyArithmetic(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> FoldConstants(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> EliminateCommonSubexpressions(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> OptimizeLayout(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> RewriteDenseLayers(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> FuseLayerNorms(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> FuseOps(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> FuseElementwise(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> RemoveDeadNodes(tf::GraphDef& def, const PassContext& ctx);
absl::StatusOr<bool> MarkConstantInputs(tf::GraphDef& def, const PassContext& ctx);

// The optimized graph for one signature, or the graph unchanged (as a copy)
// when no pass applies. A rewritten graph that fails to import is an
// optimizer bug: the error names the pass.
struct OptimizeResult {
  std::shared_ptr<const Graph> graph;
  std::vector<std::string> log;
};
absl::StatusOr<OptimizeResult> Optimize(const Graph& graph, const PassContext& ctx,
                                        const OptimizerOptions& options);

// Names of passes a user may give, for messages.
std::string PassNames();

}  // namespace plexus::opt

#endif  // PLEXUS_SRC_OPTIMIZER_OPTIMIZER_H_
