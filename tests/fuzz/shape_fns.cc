// The op registry's shape functions, driven as a user's graph drives them: a
// GraphDef of one node of a random registered op with random attribute
// values (op_spec.h), fed by Placeholders of random partial shapes (unknown
// rank, unknown, zero and enormous dimensions) or, for integer inputs, by
// small Consts whose values the shape functions read (Reshape, Fill, Tile,
// Slice, ...). Importing checks the node against its op and runs static
// shape inference.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_util.h"
#include "op_spec.h"
#include "plexus/graph_import.h"

namespace tf = ::plexus::tf;

namespace {

using plexus::DataType;

const std::vector<DataType> kAnyTypes = {DataType::kFloat, DataType::kInt32, DataType::kInt64,
                                         DataType::kBool,  DataType::kString, DataType::kHalf,
                                         DataType::kDouble, DataType::kUInt8, DataType::kComplex64};

void AddInput(FuzzedDataProvider& p, int k, DataType type, tf::GraphDef* graph, tf::NodeDef* op) {
  tf::NodeDef* node = graph->add_node();
  node->set_name("input" + std::to_string(k));
  op->add_input(node->name());
  auto& attrs = *node->mutable_attr();
  attrs["dtype"].set_type(static_cast<tf::DataType>(type));
  const bool integer = type == DataType::kInt32 || type == DataType::kInt64;
  if (integer && p.ConsumeBool()) {
    node->set_op("Const");
    tf::TensorProto* value = attrs["value"].mutable_tensor();
    value->set_dtype(static_cast<tf::DataType>(type));
    const bool scalar = p.ConsumeProbability<float>() < 0.2f;
    const int n = scalar ? 1 : p.ConsumeIntegralInRange<int>(0, 6);
    if (!scalar) value->mutable_tensor_shape()->add_dim()->set_size(n);
    for (int i = 0; i < n; ++i) {
      const int64_t v = p.ConsumeProbability<float>() < 0.9f
                            ? p.ConsumeIntegralInRange<int64_t>(-3, 6)
                            : p.PickValueInArray({int64_t{1} << 31, int64_t{1} << 62, -(int64_t{1} << 40)});
      if (type == DataType::kInt32) value->add_int_val(static_cast<int32_t>(v));
      else value->add_int64_val(v);
    }
    return;
  }
  node->set_op("Placeholder");
  plexus::PartialShape shape = plexus::fuzz::RandomPartialShape(p, true);
  tf::TensorShapeProto* proto = attrs["shape"].mutable_shape();
  if (!shape.rank_known()) proto->set_unknown_rank(true);
  for (int64_t d : shape.dims()) proto->add_dim()->set_size(d);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Every registered op.
  static const std::vector<const plexus::OpDef*> ops =
      plexus::fuzz::ListOps([](const plexus::OpDef&) { return true; });
  FuzzedDataProvider p(data, size);
  plexus::fuzz::OpCall call;
  plexus::fuzz::MakeOpCall(p, ops, kAnyTypes, &call);
  tf::GraphDef graph;
  tf::NodeDef op;
  op.set_name("op");
  op.set_op(call.def->name);
  for (size_t k = 0; k < call.input_types.size(); ++k) {
    AddInput(p, static_cast<int>(k), call.input_types[k], &graph, &op);
  }
  for (const auto& [name, value] : call.attrs) (*op.mutable_attr())[name] = value;
  // A few dropped attributes: the import must name the one missing.
  if (!op.attr().empty() && p.ConsumeProbability<float>() < 0.03f) op.mutable_attr()->erase(op.mutable_attr()->begin());
  *graph.add_node() = op;
  // PX_FUZZ_DUMP=1 prints the graph, to turn a crashing input into a
  // .pbtxt regression test.
  if (std::getenv("PX_FUZZ_DUMP") != nullptr) std::fprintf(stderr, "%s\n", graph.DebugString().c_str());
  (void)plexus::ImportGraphDef(graph, "<fuzz>");
  return 0;
}
