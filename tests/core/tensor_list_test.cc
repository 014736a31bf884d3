// The TensorList ops on variant tensors, built with GraphBuilder and run in a
// cpu session. Expected values and messages are TensorFlow 2.21's
// (tf.raw_ops), including the zeros an unset element reads as, and lists
// are values: a SetItem leaves the list it read unchanged for every other
// reader.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plexus/graph_builder.h"
#include "plexus/session.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;

Tensor Ints(Shape shape, const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, shape, v);
}
Tensor Int64s(Shape shape, const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, shape, v);
}
Tensor Floats(Shape shape, const std::vector<float>& v) {
  return Tensor::FromVector<float>(DataType::kFloat, shape, v);
}
Tensor Filled(Shape shape, float value) {
  return Floats(shape, std::vector<float>(static_cast<size_t>(NumElements(shape)), value));
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// A graph under construction, and a session to run it.
class ListGraph {
 public:
  ListGraph() : b_("tensor_list_test") {}

  Endpoint Const(const Tensor& t) { return {Check(b_.AddConst(t, "c")), 0}; }
  Endpoint Op(const std::string& op, const std::vector<Endpoint>& in, AttrMap attrs = {}, int out = 0,
              const std::string& name = "") {
    return {Check(b_.AddNode(op, in, std::move(attrs), name.empty() ? op : name)), out};
  }
  // Runs the graph as built and as the optimizer rewrites it (every input
  // here is a constant, so constant folding evaluates the lists and keeps
  // them computed); both must agree. Returns the first.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Endpoint>& fetches) {
    auto plain = RunWith(fetches, /*optimize=*/false);
    auto folded = RunWith(fetches, /*optimize=*/true);
    EXPECT_EQ(plain.ok(), folded.ok()) << plain.status() << " / " << folded.status();
    for (size_t i = 0; plain.ok() && folded.ok() && i < plain->size(); ++i) {
      const Tensor& a = (*plain)[i];
      const Tensor& b = (*folded)[i];
      EXPECT_EQ(a.shape(), b.shape());
      EXPECT_TRUE(a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
    }
    return plain;
  }

 private:
  absl::StatusOr<std::vector<Tensor>> RunWith(const std::vector<Endpoint>& fetches, bool optimize) {
    auto graph = b_.Finish();
    if (!graph.ok()) return graph.status();
    SessionOptions options;
    options.optimizer.enabled = optimize;
    auto session = Session::Create(runtime_.get(), *graph, options);
    if (!session.ok()) return session.status();
    std::vector<std::string> names;
    for (const Endpoint& e : fetches) names.push_back(e.node->name + ":" + std::to_string(e.index));
    return (*session)->Run({}, names);
  }
  Node* Check(absl::StatusOr<Node*> n) {
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : nullptr;
  }
  GraphBuilder b_;
  std::unique_ptr<Runtime> runtime_ = CpuRuntime();
};

AttrMap Dtype(DataType t = DataType::kFloat) {
  AttrMap a;
  a["element_dtype"].set_type(static_cast<tf::DataType>(t));
  return a;
}

TEST(TensorListTest, UnsetElementsStackAsZerosAndListsAreValues) {
  ListGraph g;
  Endpoint shape = g.Const(Ints({2}, {-1, 2}));
  Endpoint reserved = g.Op("TensorListReserve", {shape, g.Const(Ints({}, {3}))}, Dtype());
  // Two writers of the same list: neither sees the other's element.
  Endpoint ones = g.Op("TensorListSetItem", {reserved, g.Const(Ints({}, {1})), g.Const(Filled({4, 2}, 1))}, Dtype());
  Endpoint twos = g.Op("TensorListSetItem", {reserved, g.Const(Ints({}, {1})), g.Const(Filled({4, 2}, 2))}, Dtype());
  Endpoint stack_ones = g.Op("TensorListStack", {ones, shape}, Dtype());
  Endpoint stack_twos = g.Op("TensorListStack", {twos, shape}, Dtype());
  // The reserved list still has nothing set: a full element_shape reads zeros.
  Endpoint unset = g.Op("TensorListGetItem", {reserved, g.Const(Ints({}, {1})), g.Const(Ints({2}, {4, 2}))}, Dtype());
  Endpoint length = g.Op("TensorListLength", {reserved});
  AttrMap shape_type;
  shape_type["shape_type"].set_type(tf::DT_INT64);
  Endpoint element_shape = g.Op("TensorListElementShape", {reserved}, shape_type);
  auto out = g.Run({stack_ones, stack_twos, unset, length, element_shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 4, 2}));
  std::vector<float> want(24, 0.0f);
  for (int i = 8; i < 16; ++i) want[i] = 1;
  EXPECT_EQ(Values((*out)[0]), want);
  for (int i = 8; i < 16; ++i) want[i] = 2;
  EXPECT_EQ(Values((*out)[1]), want);
  EXPECT_EQ(Values((*out)[2]), std::vector<float>(8, 0.0f));
  EXPECT_EQ((*out)[3].data<int32_t>()[0], 3);
  EXPECT_EQ((*out)[4].dtype(), DataType::kInt64);
  EXPECT_EQ(std::vector<int64_t>((*out)[4].data<int64_t>(), (*out)[4].data<int64_t>() + 2),
            (std::vector<int64_t>{-1, 2}));
}

TEST(TensorListTest, FromTensorGetItemGatherAndScatter) {
  ListGraph g;
  Endpoint x = g.Const(Floats({3, 2}, {0, 1, 2, 3, 4, 5}));
  Endpoint list = g.Op("TensorListFromTensor", {x, g.Const(Ints({1}, {2}))});
  Endpoint item = g.Op("TensorListGetItem", {list, g.Const(Ints({}, {2})), g.Const(Ints({}, {-1}))}, Dtype());
  Endpoint gathered = g.Op("TensorListGather", {list, g.Const(Ints({2}, {2, 0})), g.Const(Ints({}, {-1}))}, Dtype());
  // Scattering past the end grows the list; the gap reads as zeros.
  Endpoint scattered = g.Op("TensorListScatterIntoExistingList",
                            {list, g.Const(Floats({1, 2}, {9, 8})), g.Const(Ints({1}, {4}))});
  Endpoint stacked = g.Op("TensorListStack", {scattered, g.Const(Ints({}, {-1}))}, Dtype());
  auto out = g.Run({item, gathered, stacked});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{4, 5}));
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{4, 5, 0, 1}));
  EXPECT_EQ((*out)[2].shape(), (Shape{5, 2}));
  EXPECT_EQ(Values((*out)[2]), (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 0, 9, 8}));
}

// One ListGraph at a time: each holds a cpu runtime, and a plugin file is
// initialized once per process.
TEST(TensorListTest, PushPopResizeAndTheBoundOfAnEmptyList) {
  {
    ListGraph g;
    AttrMap attrs = Dtype();
    Endpoint empty = g.Op("EmptyTensorList", {g.Const(Ints({1}, {2})), g.Const(Ints({}, {2}))}, attrs);
    Endpoint one = g.Op("TensorListPushBack", {empty, g.Const(Floats({2}, {1, 2}))}, Dtype());
    Endpoint two = g.Op("TensorListPushBack", {one, g.Const(Floats({2}, {3, 4}))}, Dtype());
    Endpoint popped_list = g.Op("TensorListPopBack", {two, g.Const(Ints({}, {-1}))}, Dtype(), 0, "pop");
    Endpoint popped{popped_list.node, 1};
    Endpoint grown = g.Op("TensorListResize", {two, g.Const(Ints({}, {4}))});
    Endpoint grown_stack = g.Op("TensorListStack", {grown, g.Const(Ints({}, {-1}))}, Dtype());
    Endpoint length = g.Op("TensorListLength", {popped_list});
    auto out = g.Run({popped, grown_stack, length});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 4}));
    EXPECT_EQ(Values((*out)[1]), (std::vector<float>{1, 2, 3, 4, 0, 0, 0, 0}));
    EXPECT_EQ((*out)[2].data<int32_t>()[0], 1);
  }
  ListGraph full;
  Endpoint bounded = full.Op("EmptyTensorList", {full.Const(Ints({1}, {2})), full.Const(Ints({}, {1}))}, Dtype());
  Endpoint first = full.Op("TensorListPushBack", {bounded, full.Const(Floats({2}, {1, 2}))}, Dtype());
  Endpoint second = full.Op("TensorListPushBack", {first, full.Const(Floats({2}, {3, 4}))}, Dtype(), 0, "second");
  auto refused = full.Run({full.Op("TensorListLength", {second})});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("node 'second'"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("Tried to push item into a full list list size: 1 max_num_elements: 1"),
            std::string::npos)
      << refused.status();
}

TEST(TensorListTest, ConcatUsesLeadingDimsForUnsetElementsAndSplitInverts) {
  ListGraph g;
  Endpoint reserved = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
  Endpoint set = g.Op("TensorListSetItem", {reserved, g.Const(Ints({}, {1})), g.Const(Filled({4, 2}, 1))}, Dtype());
  Endpoint concat = g.Op("TensorListConcatV2", {set, g.Const(Ints({2}, {-1, 2})), g.Const(Int64s({3}, {1, 1, 2}))},
                         Dtype(), 0, "concat");
  Endpoint lengths{concat.node, 1};
  Endpoint split = g.Op("TensorListSplit", {g.Const(Floats({5, 1}, {0, 1, 2, 3, 4})), g.Const(Ints({2}, {-1, 1})),
                                            g.Const(Int64s({2}, {2, 3}))});
  Endpoint second = g.Op("TensorListGetItem", {split, g.Const(Ints({}, {1})), g.Const(Ints({}, {-1}))}, Dtype());
  auto out = g.Run({concat, lengths, second});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{7, 2}));
  std::vector<float> want(14, 0.0f);
  for (int i = 2; i < 10; ++i) want[i] = 1;
  EXPECT_EQ(Values((*out)[0]), want);
  EXPECT_EQ(std::vector<int64_t>((*out)[1].data<int64_t>(), (*out)[1].data<int64_t>() + 3),
            (std::vector<int64_t>{1, 4, 2}));
  EXPECT_EQ(Values((*out)[2]), (std::vector<float>{2, 3, 4}));
}

// Each run's error, with TensorFlow's message and the node's name.
void ExpectRunError(ListGraph& g, const Endpoint& fetch, const std::string& message) {
  auto out = g.Run({fetch});
  ASSERT_FALSE(out.ok()) << message;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find(message), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("'" + fetch.node->name + "'"), std::string::npos) << out.status();
}

TEST(TensorListTest, BadIndicesDtypesAndShapesAreClearErrors) {
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListGetItem", {l, g.Const(Ints({}, {3})), g.Const(Ints({2}, {3, 2}))}, Dtype()),
                   "Trying to access element 3 in a list with 3 elements.");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListGetItem", {l, g.Const(Ints({}, {0})), g.Const(Ints({2}, {-1, 2}))}, Dtype()),
                   "Trying to read an uninitialized tensor but element_shape is not fully defined: [?,2] and no "
                   "list element is set.");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListGetItem", {l, g.Const(Ints({}, {0})), g.Const(Ints({2}, {3, 2}))},
                           Dtype(DataType::kInt32)),
                   "Invalid data types; op elements int32 but list elements float");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListSetItem", {l, g.Const(Ints({}, {-1})), g.Const(Filled({1, 2}, 1))}, Dtype()),
                   "Trying to modify element -1 in a list with 3 elements.");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListSetItem", {l, g.Const(Ints({}, {0})), g.Const(Filled({1, 3}, 1))}, Dtype()),
                   "Tried to set a tensor with incompatible shape at a list index. Item element shape: [1,3] list "
                   "shape: [?,2]");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListReserve", {g.Const(Ints({2}, {-1, 2})), g.Const(Ints({}, {3}))}, Dtype());
    ExpectRunError(g, g.Op("TensorListStack", {l, g.Const(Ints({2}, {-1, 2}))}, Dtype()),
                   "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
                   "element_shape: [?,2]");
  }
  {
    ListGraph g;
    ExpectRunError(g, g.Op("TensorListReserve", {g.Const(Ints({1}, {2})), g.Const(Ints({}, {-1}))}, Dtype()),
                   "The num_elements to reserve must be a non negative number, but got -1");
  }
  {
    ListGraph g;
    ExpectRunError(g, g.Op("TensorListSplit", {g.Const(Filled({5, 2}, 1)), g.Const(Ints({2}, {-1, 2})),
                                               g.Const(Int64s({2}, {2, 2}))}),
                   "Unused values in tensor. Length of tensor: 5 Values used: 4");
  }
  {
    ListGraph g;
    Endpoint l = g.Op("TensorListFromTensor", {g.Const(Filled({3, 2}, 1)), g.Const(Ints({}, {-1}))});
    ExpectRunError(g,
                   g.Op("TensorListScatterIntoExistingList", {l, g.Const(Filled({1, 2}, 1)), g.Const(Ints({1}, {-1}))}),
                   "Indices in TensorListScatter must all be non-negative.");
  }
  ListGraph g;
  ExpectRunError(g, g.Op("TensorListReserve", {g.Const(Ints({}, {2})), g.Const(Ints({}, {1}))}, Dtype()),
                 "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
}

}  // namespace
}  // namespace plexus
