// Automatic control dependencies for graphs built op by op (traced
// functions), as TensorFlow 2's tf.function adds them: the stateful ops of a
// function run in the order the program wrote them.
//
// - Ops on one resource (a variable, a TensorArray) keep their program
//   order: a read waits for the last write before it, and a write waits for
//   the last write and every read since. Reads between two writes may run in
//   any order among themselves.
// - Other stateful ops (random numbers, summaries, checkpoint I/O, calls)
//   run one after another, in program order.
//
// Two handles of one variable (two VarHandleOp nodes with the same container
// and shared_name) are one resource. Stateless ops get no edges.
//
//   AutoControlDeps deps;
//   std::vector<Node*> controls = deps.ControlInputs(*def, inputs);
//   PX_ASSIGN_OR_RETURN(Node* n, builder.AddNode(op, inputs, attrs, {}, controls));
//   deps.Added(n);
#ifndef PLEXUS_AUTO_CONTROL_DEPS_H_
#define PLEXUS_AUTO_CONTROL_DEPS_H_

#include <map>
#include <string>
#include <vector>

#include "plexus/graph.h"
#include "plexus/op_def.h"

namespace plexus {

class AutoControlDeps {
 public:
  // The nodes an op about to be added with these data inputs must run after.
  std::vector<Node*> ControlInputs(const OpDef& def, const std::vector<Endpoint>& inputs) const;
  // Records a node once it has been added.
  void Added(Node* node);

 private:
  struct Uses {
    Node* last_write = nullptr;
    std::vector<Node*> reads;  // since last_write
  };
  std::map<std::string, Uses> resources_;
  Node* last_stateful_ = nullptr;  // of the ops without resource inputs
};

}  // namespace plexus

#endif  // PLEXUS_AUTO_CONTROL_DEPS_H_
