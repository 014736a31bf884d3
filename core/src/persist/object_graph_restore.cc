// Restoring a TF2 SavedModel's variables through its object graph
// (object_graph_restore.h).
#include "persist/object_graph_restore.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "meta_graph.pb.h"
#include "plexus/checkpoint.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"
#include "saved_object_graph.pb.h"
#include "trackable_object_graph.pb.h"

namespace plexus {
namespace {

constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr char kVariableValue[] = "VARIABLE_VALUE";

// The checkpoint's object graph, or an empty one when it has none.
absl::StatusOr<tf::TrackableObjectGraph> CheckpointObjectGraph(const CheckpointReader& reader) {
  tf::TrackableObjectGraph graph;
  if (reader.Find(kObjectGraphKey) == nullptr) return graph;
  PX_ASSIGN_OR_RETURN(Tensor bytes, reader.Read(kObjectGraphKey));
  if (bytes.dtype() != DataType::kString || bytes.num_elements() != 1 ||
      !graph.ParseFromString(bytes.strings()[0])) {
    return absl::DataLossError(absl::StrCat("checkpoint '", reader.prefix(), "': its ", kObjectGraphKey,
                                            " entry is not a serialized TrackableObjectGraph"));
  }
  return graph;
}

// Whether a value of shape `dims` fits a variable declared `shape`.
bool Fits(const PartialShape& shape, const Shape& dims) {
  if (shape.rank() < 0) return true;
  if (shape.rank() != static_cast<int64_t>(dims.size())) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) >= 0 && shape.dim(d) != dims[d]) return false;
  }
  return true;
}

// The checkpoint key holding node `node`'s variable value, or "".
std::string ValueKey(const tf::TrackableObjectGraph& graph, int node) {
  if (node >= graph.nodes_size()) return "";
  for (const auto& attribute : graph.nodes(node).attributes()) {
    if (attribute.name() == kVariableValue) return attribute.checkpoint_key();
  }
  return "";
}

absl::Status Restore(const CheckpointReader& reader, const tf::SavedVariable& saved, const std::string& key,
                     ResourceStore& store) {
  const DataType dtype = static_cast<DataType>(saved.dtype());
  PX_ASSIGN_OR_RETURN(PartialShape shape, ShapeFromProto(saved.shape()));
  const std::string where = absl::StrCat("variable '", saved.name(), "' (checkpoint key '", key, "')");
  auto read = reader.Read(key);
  if (!read.ok()) return Annotate(read.status(), where);
  Tensor value = *std::move(read);
  if (value.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the checkpoint holds ", DataTypeName(value.dtype()),
                                                   ", the SavedModel says ", DataTypeName(dtype)));
  }
  if (!Fits(shape, value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the checkpoint holds shape ",
                                                   ShapeToString(value.shape()), ", the SavedModel says ",
                                                   shape.ToString()));
  }
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> resource,
                      store.LookupOrCreate(VariableResourceKey("", saved.name()),
                                           [&]() -> absl::StatusOr<std::shared_ptr<ResourceBase>> {
                                             return std::make_shared<Variable>(saved.name(), dtype, shape);
                                           }));
  auto* variable = dynamic_cast<Variable*>(resource.get());
  if (variable == nullptr || variable->dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the session holds another resource of that name: ",
                                                   resource->DebugString()));
  }
  return Annotate(variable->Assign(std::move(value)), where);
}

}  // namespace

absl::StatusOr<int> RestoreFromObjectGraph(const SavedModel& model, ResourceStore& store) {
  const tf::SavedObjectGraph& objects = model.meta_graph().object_graph_def();
  if (objects.nodes_size() == 0 || !model.has_variables()) return 0;
  PX_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader,
                      CheckpointReader::Open(model.variables_prefix()));
  PX_ASSIGN_OR_RETURN(tf::TrackableObjectGraph checkpoint, CheckpointObjectGraph(*reader));
  int restored = 0;
  for (int i = 0; i < objects.nodes_size(); ++i) {
    if (objects.nodes(i).kind_case() != tf::SavedObject::kVariable) continue;
    const tf::SavedVariable& saved = objects.nodes(i).variable();
    if (saved.name().empty()) continue;
    auto* existing = dynamic_cast<Variable*>(store.Find(VariableResourceKey("", saved.name())).get());
    if (existing != nullptr && existing->initialized()) continue;  // the restore op did it
    const std::string key = ValueKey(checkpoint, i);
    if (key.empty()) continue;  // not saved (TensorFlow leaves it to its initializer)
    PX_RETURN_IF_ERROR(Restore(*reader, saved, key, store));
    ++restored;
  }
  return restored;
}

}  // namespace plexus
