// Which ops of a graph nothing here can run, found before running it
// (`plexus ops --missing GRAPH`): ops Plexus does not know, and ops it knows
// that neither the core runs itself nor any loaded plugin has a kernel for.
#ifndef PLEXUS_OP_COVERAGE_H_
#define PLEXUS_OP_COVERAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph.pb.h"
#include "plexus/runtime.h"

namespace plexus {

struct MissingOp {
  std::string op;
  std::string why;       // "Plexus has no such op", "no loaded plugin has a kernel for it"
  int nodes = 0;         // how many nodes use it (the function library's included)
  std::string example;   // one of them: "node 'x'" or "node 'x' in function 'f'"
};

// The GraphDef in a graph file (binary, else text), read without importing
// it, so that graphs with ops Plexus lacks can be examined. A SavedModel's
// is SavedModel::Read(dir)->meta_graph().graph_def().
absl::StatusOr<tf::GraphDef> ReadGraphDefFile(const std::string& path);

// The ops of `def` and its function library that nothing in `runtime` can
// run, sorted by name.
std::vector<MissingOp> FindMissingOps(const tf::GraphDef& def, const Runtime& runtime);

}  // namespace plexus

#endif  // PLEXUS_OP_COVERAGE_H_
