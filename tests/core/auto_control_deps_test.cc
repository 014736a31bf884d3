// Automatic control dependencies (auto_control_deps.h): which control
// inputs the stateful ops of a graph built op by op get.
#include "plexus/auto_control_deps.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "plexus/graph_builder.h"
#include "plexus/op_def.h"

namespace plexus {
namespace {

class AutoControlDepsTest : public ::testing::Test {
 protected:
  // Adds `op` as the tracer does: with the control inputs it needs.
  Node* Add(const std::string& op, const std::vector<Endpoint>& inputs, AttrMap attrs = {}) {
    const OpDef* def = OpRegistry::Global().Find(op);
    EXPECT_NE(def, nullptr) << op;
    auto node = builder_.AddNode(op, inputs, std::move(attrs), {}, deps_.ControlInputs(*def, inputs));
    EXPECT_TRUE(node.ok()) << node.status();
    deps_.Added(*node);
    return *node;
  }
  Node* Handle(const std::string& shared_name) {
    AttrMap attrs;
    attrs["dtype"].set_type(tf::DT_FLOAT);
    attrs["shape"].mutable_shape();
    attrs["shared_name"].set_s(shared_name);
    return Add("VarHandleOp", {}, attrs);
  }
  Node* Value(float v) {
    return *builder_.AddConst(Tensor::FromVector<float>(DataType::kFloat, {}, {v}), "value");
  }
  Node* Read(Node* handle) {
    AttrMap attrs;
    attrs["dtype"].set_type(tf::DT_FLOAT);
    return Add("ReadVariableOp", {{handle, 0}}, attrs);
  }
  Node* Assign(Node* handle, float v, const std::string& op = "AssignVariableOp") {
    AttrMap attrs;
    attrs["dtype"].set_type(tf::DT_FLOAT);
    return Add(op, {{handle, 0}, {Value(v), 0}}, attrs);
  }
  static bool After(const Node* n, const Node* before) {
    return std::find(n->control_inputs.begin(), n->control_inputs.end(), before) != n->control_inputs.end();
  }

  GraphBuilder builder_{"auto_control_deps_test"};
  AutoControlDeps deps_;
};

TEST_F(AutoControlDepsTest, ReadsAndWritesOfOneVariableKeepProgramOrder) {
  Node* v = Handle("v");
  Node* w1 = Assign(v, 2);
  Node* r1 = Read(v);
  Node* r2 = Read(v);
  Node* w2 = Assign(v, 1, "AssignAddVariableOp");
  Node* r3 = Read(v);
  EXPECT_TRUE(w1->control_inputs.empty());  // the first use waits for nothing
  EXPECT_TRUE(After(r1, w1));               // a read after the last write
  EXPECT_TRUE(After(r2, w1));
  EXPECT_FALSE(After(r2, r1));              // reads between two writes stay free
  EXPECT_TRUE(After(w2, w1));               // a write after the last write...
  EXPECT_TRUE(After(w2, r1));               // ...and every read since
  EXPECT_TRUE(After(w2, r2));
  EXPECT_TRUE(After(r3, w2));
  EXPECT_FALSE(After(r3, w1));              // only the last write
}

TEST_F(AutoControlDepsTest, TwoHandlesOfOneVariableAreOneResource) {
  Node* a = Handle("shared");
  Node* b = Handle("shared");
  Node* other = Handle("other");
  Node* w = Assign(a, 3);
  Node* r = Read(b);
  Node* r_other = Read(other);
  EXPECT_TRUE(After(r, w));
  EXPECT_TRUE(r_other->control_inputs.empty());  // another variable is independent
  EXPECT_TRUE(b->control_inputs.empty());        // making a handle waits for nothing
}

TEST_F(AutoControlDepsTest, HandlesSeenThroughIdentity) {
  Node* v = Handle("v");
  AttrMap attrs;
  attrs["T"].set_type(tf::DT_RESOURCE);
  Node* alias = *builder_.AddNode("Identity", {{v, 0}}, attrs);
  Node* w = Assign(v, 4);
  Node* r = Read(alias);
  EXPECT_TRUE(After(r, w));
}

TEST_F(AutoControlDepsTest, StatelessOpsGetNoEdges) {
  Node* v = Handle("v");
  Node* w = Assign(v, 5);
  AttrMap attrs;
  attrs["T"].set_type(tf::DT_FLOAT);
  Node* sum = Add("AddV2", {{Value(1), 0}, {Value(2), 0}}, attrs);
  EXPECT_TRUE(sum->control_inputs.empty());
  EXPECT_FALSE(After(sum, w));
}

}  // namespace
}  // namespace plexus
