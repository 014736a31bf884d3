#include "passes/optimizer/optimizer.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "passes/optimizer/graph_util.h"
#include "plexus/graph_import.h"
#include "plexus/graph_import.h"
#include "plexus/logging.h"

extern char** environ;

namespace plexus::opt {
namespace {

// Graphviz text of a graph: nodes colored by where they run (the session's
// device, the core's host ops, or another device by fallback), fused nodes
// drawn bold with a double border.
std::string ToDot(const Graph& graph, const PassContext& ctx) {
  std::string out = "digraph plexus {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  };
  for (const auto& node : graph.nodes()) {
    std::string color = "#e8e8e8";  // core (host ops, control flow, forwarding)
    std::string where = "core";
    if (ctx.place) {
      where = ctx.place(graph, *node);  // the placer's answer, given by the session
      if (ctx.device != nullptr && where == ctx.device->name()) {
        color = "#cfe2ff";
      } else if (where != "core") {
        color = "#ffe5b4";  // another device, by request or fallback
      }
    }
    bool fused = node->op.rfind("_Fused", 0) == 0;
    absl::StrAppend(&out, "  ", quote(node->name), " [label=", quote(absl::StrCat(node->name, "\\n", node->op,
                                                                                  fused ? " (fused)" : "",
                                                                                  "\\n", where)),
                    ", fillcolor=", quote(color), fused ? ", peripheries=2, penwidth=2" : "", "];\n");
  }
  for (const auto& node : graph.nodes()) {
    for (const Endpoint& in : node->inputs) {
      absl::StrAppend(&out, "  ", quote(in.node->name), " -> ", quote(node->name),
                      in.index ? absl::StrCat(" [label=\"", in.index, "\"]") : "", ";\n");
    }
    for (const Node* c : node->control_inputs) {
      absl::StrAppend(&out, "  ", quote(c->name), " -> ", quote(node->name), " [style=dashed];\n");
    }
  }
  return out + "}\n";
}

// Writes the graph as text and as Graphviz (and SVG when `dot` is on PATH).
void Dump(const std::string& dir, const std::string& stem, const tf::GraphDef& def, const PassContext& ctx) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(def, &text);
  std::ofstream(absl::StrCat(dir, "/", stem, ".pbtxt")) << text;
  auto graph = ImportGraphDef(def, stem);
  if (!graph.ok()) return;
  std::string dot_path = absl::StrCat(dir, "/", stem, ".dot");
  std::ofstream(dot_path) << ToDot(**graph, ctx);
  // Graphviz's dot, when installed, run without a shell (paths are passed
  // as they are).
  std::string svg_path = absl::StrCat(dir, "/", stem, ".svg");
  std::string program = "dot", format = "-Tsvg", output = "-o";
  char* argv[] = {program.data(), format.data(), dot_path.data(), output.data(), svg_path.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Log(LogLevel::kWarning, absl::StrCat("dot failed on ", dot_path));
    }
  }
}

}  // namespace

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      {"prune", PruneToFetches, "keep only what the fetches and targets need"},
      {"arithmetic", SimplifyArithmetic,
       "x*1, x+0, x-0, x/1, double transposes, casts and reshapes that change nothing, identity chains"},
      {"constant_fold", FoldConstants, "evaluate what depends only on constants, and shapes known statically"},
      {"cse", EliminateCommonSubexpressions, "merge nodes that compute the same value"},
      // Before "fuse": an NCHW Conv2D + BiasAdd + Relu, once rewritten to the
      // device's preferred NHWC (with the transposes between them cancelled
      // here), fuses into one _FusedConv2D in the same round, and an NHWC
      // batch norm folds into its convolution. After "cse", so duplicate
      // convolutions are merged before each gets its transposes.
      {"layout", OptimizeLayout,
       "4-D convolution, pooling, BiasAdd and batch-norm ops to the device's preferred layout (NHWC or NCHW), "
       "with the transposes between them cancelled or moved through elementwise ops"},
      // Before "fuse", whose MatMul + BiasAdd fusion it prepares.
      {"dense_layers", RewriteDenseLayers,
       "batched products by a matrix as one MatMul over the rows, and a bias after a Reshape moved before it"},
      // Before "fuse_elementwise", which would take its elementwise ops.
      {"layer_norm", FuseLayerNorms,
       "layer normalization over the last axis, written out as means and elementwise ops, into one _PlexusLayerNorm"},
      {"fuse", FuseOps,
       "TF1 atrous SpaceToBatchND/conv/BatchToSpaceND into one dilated convolution; MatMul/Conv2D/DepthwiseConv2dNative + BiasAdd (+ activation) into one fused op, and inference batch norm into the convolution"},
      {"fuse_elementwise", FuseElementwise,
       "trees of elementwise float ops of one shape into one _PlexusFusedElementwise node"},
      {"dead_nodes", RemoveDeadNodes, "remove nodes whose values nobody uses and that have no effects"},
      // Last: after the passes that create, fold and remove constants.
      {"const_inputs", MarkConstantInputs,
       "tell convolutions and products which weights are constants, so their kernels prepare them once"},
  };
  return kPasses;
}

std::string PassNames() {
  std::vector<std::string> names;
  for (const PassInfo& p : AllPasses()) names.push_back(p.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<OptimizeResult> Optimize(const Graph& graph, const PassContext& ctx_in,
                                        const OptimizerOptions& options) {
  OptimizeResult result;
  PassContext ctx = ctx_in;
  ctx.log = &result.log;
  ctx.fold_max_bytes = options.constant_fold_max_bytes;
  tf::GraphDef def = GraphToGraphDef(graph);
  int step = 0;
  if (!options.dump_dir.empty()) Dump(options.dump_dir, "00_before", def, ctx);
  bool any_change = false;
  for (int round = 0; round < 6; ++round) {
    bool changed = false;
    for (const PassInfo& pass : AllPasses()) {
      if (std::find(options.disabled_passes.begin(), options.disabled_passes.end(), pass.name) !=
          options.disabled_passes.end()) {
        continue;
      }
      auto c = pass.fn(def, ctx);
      if (!c.ok()) {
        return absl::Status(c.status().code(),
                            absl::StrCat("optimizer pass '", pass.name, "': ", c.status().message()));
      }
      if (!*c) continue;
      changed = true;
      if (!options.dump_dir.empty()) {
        Dump(options.dump_dir, absl::StrFormat("%02d_after_%s", ++step, pass.name), def, ctx);
      }
    }
    any_change |= changed;
    if (!changed) break;  // a fixed point
  }
  if (!any_change) {
    // Nothing to do: the caller keeps using the original graph.
    result.graph = nullptr;
    return result;
  }
  auto imported = ImportGraphDef(def, ctx.source);
  if (!imported.ok()) {
    return absl::InternalError(absl::StrCat("the optimized graph does not import (an optimizer bug; run with the "
                                            "optimizer off to work around it): ",
                                            imported.status().message()));
  }
  (*imported)->source = graph.source;
  result.graph = std::shared_ptr<const Graph>(std::move(*imported));
  return result;
}

}  // namespace plexus::opt
