// What the graph optimizer may do: the options a session gives the passes
// of core/src/passes/optimizer/. A header of its own so that the passes (a
// lower layer) and sessions share it without the passes seeing sessions.
#ifndef PLEXUS_OPTIMIZER_OPTIONS_H_
#define PLEXUS_OPTIMIZER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace plexus {

// The graph optimizer (docs/architecture.md, "Optimizer"): passes that
// rewrite the graph of each run signature before its executor is built.
// The environment can override these: PLEXUS_OPTIMIZER=off turns it off,
// PLEXUS_DISABLE_PASSES=cse,fuse switches passes off by name.
struct OptimizerOptions {
  bool enabled = true;
  // Names of passes not to run: prune, arithmetic, constant_fold, cse, layout,
  // dense_layers, layer_norm, fuse, fuse_elementwise, dead_nodes, const_inputs.
  std::vector<std::string> disabled_passes;
  // When set, the graph before and after each pass that changed it is
  // written there as text (.pbtxt) and Graphviz (.dot, and .svg when the
  // dot program is installed).
  std::string dump_dir;
  // Folded constants larger than this stay computed at run time.
  int64_t constant_fold_max_bytes = 10 << 20;
};

}  // namespace plexus

#endif  // PLEXUS_OPTIMIZER_OPTIONS_H_
