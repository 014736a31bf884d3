// Where each node of a run goes, as a user can read it: the placement
// report of one executor (a run signature of a session), built by the
// placer (core/src/placer/) and shown by `plexus run --placement`, the
// Python Session and function objects, and the C API.
//
//   const PlacementReport& report = session->placement();  // the last run's
//   std::printf("%s", report.ToString().c_str());
#ifndef PLEXUS_PLACEMENT_H_
#define PLEXUS_PLACEMENT_H_

#include <map>
#include <string>
#include <vector>

namespace plexus {

// How a node runs.
enum class PlacedBy {
  kKernel,  // a plugin kernel on `device`
  kHostOp,  // a host op the core implements (variables, strings, state)
  kCore,    // no kernel at all: control flow and ops that forward their inputs
};

const char* PlacedByName(PlacedBy how);  // "kernel", "host op", "core"

struct NodePlacement {
  std::string node;
  std::string op;
  PlacedBy how = PlacedBy::kKernel;
  std::string device;  // the device that runs it ("" for the core's own work)
  std::string plugin;  // the plugin whose kernel runs it (kernels only)
  // Why the node is not on the run's device, or how a request was honoured;
  // empty when it simply runs there.
  std::string reason;
  // A constant computed once, when the executor was built, and (with its
  // copies to other devices) shared by every run: it does no work at a run,
  // wherever it was placed.
  bool once = false;
};

struct CopyPlacement {
  std::string tensor;  // "node:k"
  std::string from;    // a device name, or "host memory"
  std::string to;
  std::string reader;  // the node that needs it there
};

struct PlacementReport {
  std::string device;  // the run's device
  std::vector<NodePlacement> nodes;  // in execution order
  std::vector<CopyPlacement> copies;

  // Nodes per device ("core" for host ops and the core's own work).
  std::map<std::string, int> NodesPerDevice() const;
  // One line per node, then one per copy, then a summary:
  //   node 'conv' (op Conv2D): CPU:0, kernel of plugin 'cpu'
  //   node 'top_k' (op TopKV2): CUDA:0 has no kernel, placed on CPU:0 ...
  //   summary: 12 nodes (CPU:0: 10, core: 2), 1 copy across devices
  std::string ToString() const;
  std::string Summary() const;
};

}  // namespace plexus

#endif  // PLEXUS_PLACEMENT_H_
