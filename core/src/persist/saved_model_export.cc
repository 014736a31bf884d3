// ExportSavedModel: a serving graph with resource variables, written as a
// TensorFlow 1 style SavedModel (graph + SaverDef + signatures + a V2
// checkpoint of the variables), atomically.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/checkpoint.h"
#include "plexus/graph_import.h"
#include "plexus/saved_model.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"
#include "saved_model.pb.h"

namespace plexus {
namespace {

namespace fs = std::filesystem;

// What the export needs to know about one variable of the graph.
struct ExportVariable {
  std::string shared_name;  // checkpoint key
  std::string node;         // its (first) VarHandleOp
  DataType dtype = DataType::kInvalid;
  PartialShape shape;
  Tensor value;
};

tf::AttrValue TypeAttr(DataType t) {
  tf::AttrValue v;
  v.set_type(static_cast<tf::DataType>(t));
  return v;
}

tf::AttrValue TypeListAttr(const std::vector<DataType>& types) {
  tf::AttrValue v;
  for (DataType t : types) v.mutable_list()->add_type(static_cast<tf::DataType>(t));
  return v;
}

void SetShapeProto(const PartialShape& shape, tf::TensorShapeProto* proto) {
  proto->Clear();
  if (!shape.rank_known()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dims()) proto->add_dim()->set_size(d < 0 ? -1 : d);
}

tf::AttrValue StringVectorConst(const std::vector<std::string>& values) {
  tf::AttrValue v;
  tf::TensorProto* t = v.mutable_tensor();
  t->set_dtype(tf::DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (const std::string& s : values) t->add_string_val(s);
  return v;
}

tf::NodeDef* AddNode(tf::GraphDef* graph, const std::string& name, const std::string& op,
                     std::vector<std::string> inputs = {}) {
  tf::NodeDef* node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  for (std::string& in : inputs) node->add_input(std::move(in));
  return node;
}

void AddStringsConst(tf::GraphDef* graph, const std::string& name, const std::vector<std::string>& values) {
  tf::NodeDef* node = AddNode(graph, name, "Const");
  (*node->mutable_attr())["dtype"] = TypeAttr(DataType::kString);
  (*node->mutable_attr())["value"] = StringVectorConst(values);
}

// "node:3" -> ("node", 3); "node" -> ("node", 0).
bool SplitTensorName(const std::string& name, std::string* node, int* index) {
  size_t colon = name.rfind(':');
  *index = 0;
  if (colon == std::string::npos) {
    *node = name;
    return !name.empty();
  }
  *node = name.substr(0, colon);
  return !node->empty() && absl::SimpleAtoi(name.substr(colon + 1), index) && *index >= 0;
}

bool Compatible(const PartialShape& declared, const Shape& actual) {
  if (!declared.rank_known()) return true;
  if (declared.rank() != static_cast<int64_t>(actual.size())) return false;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (declared.dim(i) >= 0 && declared.dim(i) != actual[i]) return false;
  }
  return true;
}

// Collects the VarHandleOps of `graph` and matches them with `values`.
absl::StatusOr<std::vector<ExportVariable>> CollectVariables(const tf::GraphDef& graph,
                                                             const std::map<std::string, Tensor>& values) {
  std::vector<ExportVariable> vars;
  std::map<std::string, size_t> by_name;
  for (const tf::NodeDef& node : graph.node()) {
    if (node.op() != "VarHandleOp") continue;
    auto attr = [&](const char* name) -> const tf::AttrValue* {
      auto it = node.attr().find(name);
      return it == node.attr().end() ? nullptr : &it->second;
    };
    ExportVariable v;
    v.node = node.name();
    const tf::AttrValue* shared = attr("shared_name");
    v.shared_name = shared != nullptr && !shared->s().empty() ? shared->s() : node.name();
    const tf::AttrValue* dtype = attr("dtype");
    if (dtype == nullptr || !IsKnownDataType(static_cast<int32_t>(dtype->type())) || dtype->type() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable '", v.shared_name, "' (VarHandleOp '", node.name(), "') has no valid dtype attr"));
    }
    v.dtype = BaseType(static_cast<int32_t>(dtype->type()));
    if (const tf::AttrValue* shape = attr("shape"); shape != nullptr && shape->has_shape()) {
      auto parsed = ShapeFromProto(shape->shape());
      if (!parsed.ok()) {
        return Annotate(parsed.status(), absl::StrCat("variable '", v.shared_name, "' shape attr"));
      }
      v.shape = *parsed;
    }
    auto seen = by_name.find(v.shared_name);
    if (seen != by_name.end()) {
      const ExportVariable& first = vars[seen->second];
      if (first.dtype != v.dtype) {
        return absl::InvalidArgumentError(absl::StrCat("variable '", v.shared_name, "': VarHandleOps '", first.node,
                                                       "' and '", node.name(), "' disagree on its dtype (",
                                                       DataTypeName(first.dtype), " vs ", DataTypeName(v.dtype), ")"));
      }
      continue;
    }
    by_name[v.shared_name] = vars.size();
    vars.push_back(std::move(v));
  }
  for (ExportVariable& v : vars) {
    auto it = values.find(v.shared_name);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no value for variable '", v.shared_name, "' (VarHandleOp '",
                                                     v.node, "')"));
    }
    const Tensor& t = it->second;
    if (!t.valid() || !t.host_readable()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the value of variable '", v.shared_name, "' must be a valid host tensor"));
    }
    if (t.dtype() != v.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("the value of variable '", v.shared_name, "' is ",
                                                     DataTypeName(t.dtype()), " but its VarHandleOp '", v.node,
                                                     "' declares ", DataTypeName(v.dtype)));
    }
    if (!Compatible(v.shape, t.shape())) {
      return absl::InvalidArgumentError(absl::StrCat("the value of variable '", v.shared_name, "' has shape ",
                                                     ShapeToString(t.shape()), " but its VarHandleOp '", v.node,
                                                     "' declares ", v.shape.ToString()));
    }
    v.value = t;
  }
  for (const auto& [name, t] : values) {
    if (by_name.count(name)) continue;
    std::vector<std::string> known;
    for (const ExportVariable& v : vars) known.push_back(absl::StrCat("'", v.shared_name, "'"));
    return absl::InvalidArgumentError(absl::StrCat("a value was given for variable '", name,
                                                   "', but the graph has no VarHandleOp with that shared_name; "
                                                   "its variables are ",
                                                   known.empty() ? "none" : absl::StrJoin(known, ", ")));
  }
  return vars;
}

// A copy of `graph` for shape inference: each ReadVariableOp of a
// VarHandleOp becomes a Placeholder with the variable's dtype and shape, so
// the shapes of what is computed from variables are known (the resource
// handle carries no shape through import).
tf::GraphDef WithVariableShapes(const tf::GraphDef& graph) {
  std::map<std::string, const tf::NodeDef*> handles;
  for (const tf::NodeDef& node : graph.node()) {
    if (node.op() == "VarHandleOp") handles[node.name()] = &node;
  }
  tf::GraphDef copy = graph;
  for (tf::NodeDef& node : *copy.mutable_node()) {
    if (node.op() != "ReadVariableOp" || node.input_size() < 1) continue;
    std::string input = node.input(0);
    if (input.size() > 2 && input.compare(input.size() - 2, 2, ":0") == 0) input.resize(input.size() - 2);
    auto it = handles.find(input);
    if (it == handles.end()) continue;
    auto shape = it->second->attr().find("shape");
    if (shape == it->second->attr().end()) continue;
    node.set_op("Placeholder");
    // Keep control inputs only.
    auto* inputs = node.mutable_input();
    inputs->erase(inputs->begin());
    for (int i = inputs->size() - 1; i >= 0; --i) {
      if (inputs->Get(i).empty() || inputs->Get(i)[0] != '^') inputs->erase(inputs->begin() + i);
    }
    (*node.mutable_attr())["shape"] = shape->second;
  }
  return copy;
}

// A scope for the saver's nodes that no node of the graph uses: "save",
// else "save_1", ... (as tf.train.Saver picks it).
std::string SaverScope(const tf::GraphDef& graph) {
  std::set<std::string> roots;
  for (const tf::NodeDef& node : graph.node()) roots.insert(node.name().substr(0, node.name().find('/')));
  std::string scope = "save";
  for (int i = 1; roots.count(scope); ++i) scope = absl::StrCat("save_", i);
  return scope;
}

// Adds the TensorFlow 1 saver subgraph and fills `saver`.
void AddSaver(const std::vector<ExportVariable>& vars, tf::GraphDef* graph, tf::SaverDef* saver) {
  const std::string scope = SaverScope(*graph);
  const std::string filename = absl::StrCat(scope, "/Const");
  {
    tf::NodeDef* node = AddNode(graph, filename, "Placeholder");
    (*node->mutable_attr())["dtype"] = TypeAttr(DataType::kString);
    tf::AttrValue shape;
    shape.mutable_shape();  // a scalar
    (*node->mutable_attr())["shape"] = shape;
  }
  std::vector<std::string> keys;
  std::vector<DataType> types;
  for (const ExportVariable& v : vars) {
    keys.push_back(v.shared_name);
    types.push_back(v.dtype);
  }
  const std::vector<std::string> slices(vars.size(), "");

  // Save: SaveV2 of a fresh ReadVariableOp of every variable.
  AddStringsConst(graph, absl::StrCat(scope, "/SaveV2/tensor_names"), keys);
  AddStringsConst(graph, absl::StrCat(scope, "/SaveV2/shape_and_slices"), slices);
  std::vector<std::string> save_inputs = {filename, absl::StrCat(scope, "/SaveV2/tensor_names"),
                                          absl::StrCat(scope, "/SaveV2/shape_and_slices")};
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string read = absl::StrCat(scope, "/Read_", i, "/ReadVariableOp");
    tf::NodeDef* node = AddNode(graph, read, "ReadVariableOp", {vars[i].node});
    (*node->mutable_attr())["dtype"] = TypeAttr(vars[i].dtype);
    save_inputs.push_back(read);
  }
  tf::NodeDef* save = AddNode(graph, absl::StrCat(scope, "/SaveV2"), "SaveV2", save_inputs);
  (*save->mutable_attr())["dtypes"] = TypeListAttr(types);
  tf::NodeDef* done = AddNode(graph, absl::StrCat(scope, "/control_dependency"), "Identity",
                              {filename, absl::StrCat("^", scope, "/SaveV2")});
  (*done->mutable_attr())["T"] = TypeAttr(DataType::kString);

  // Restore: one RestoreV2, each output assigned to its variable.
  AddStringsConst(graph, absl::StrCat(scope, "/RestoreV2/tensor_names"), keys);
  AddStringsConst(graph, absl::StrCat(scope, "/RestoreV2/shape_and_slices"), slices);
  const std::string restore = absl::StrCat(scope, "/RestoreV2");
  tf::NodeDef* restore_node =
      AddNode(graph, restore, "RestoreV2",
              {filename, absl::StrCat(restore, "/tensor_names"), absl::StrCat(restore, "/shape_and_slices")});
  (*restore_node->mutable_attr())["dtypes"] = TypeListAttr(types);
  std::vector<std::string> assigns;
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string assign = absl::StrCat(scope, "/AssignVariableOp", i == 0 ? "" : absl::StrCat("_", i));
    tf::NodeDef* node = AddNode(graph, assign, "AssignVariableOp",
                                {vars[i].node, i == 0 ? restore : absl::StrCat(restore, ":", i)});
    (*node->mutable_attr())["dtype"] = TypeAttr(vars[i].dtype);
    assigns.push_back(absl::StrCat("^", assign));
  }
  AddNode(graph, absl::StrCat(scope, "/restore_all"), "NoOp", assigns);

  saver->set_filename_tensor_name(absl::StrCat(filename, ":0"));
  saver->set_save_tensor_name(absl::StrCat(scope, "/control_dependency:0"));
  saver->set_restore_op_name(absl::StrCat(scope, "/restore_all"));
  saver->set_max_to_keep(5);
  saver->set_sharded(false);
  saver->set_keep_checkpoint_every_n_hours(10000.0f);
  saver->set_version(tf::SaverDef::V2);
}

// Fills the SignatureDefs, checking every tensor against the imported graph.
absl::Status AddSignatures(const Graph& graph, const std::vector<SavedModelSignatureExport>& signatures,
                           tf::MetaGraphDef* meta) {
  for (const SavedModelSignatureExport& sig : signatures) {
    const std::string where = absl::StrCat("signature '", sig.key, "'");
    if (sig.key.empty()) return absl::InvalidArgumentError("a signature has an empty key");
    if (meta->signature_def().count(sig.key)) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is given twice"));
    }
    if (sig.outputs.empty()) return absl::InvalidArgumentError(absl::StrCat(where, " has no outputs"));
    tf::SignatureDef& def = (*meta->mutable_signature_def())[sig.key];
    def.set_method_name(sig.method_name);
    for (int side = 0; side < 2; ++side) {
      const auto& tensors = side == 0 ? sig.inputs : sig.outputs;
      auto* out = side == 0 ? def.mutable_inputs() : def.mutable_outputs();
      const char* what = side == 0 ? "input" : "output";
      for (const auto& [key, tensor] : tensors) {
        if (key.empty()) return absl::InvalidArgumentError(absl::StrCat(where, " has an ", what, " with an empty key"));
        if (out->count(key)) {
          return absl::InvalidArgumentError(absl::StrCat(where, " has ", what, " '", key, "' twice"));
        }
        std::string node_name;
        int index = 0;
        const Node* node = nullptr;
        if (SplitTensorName(tensor, &node_name, &index)) node = graph.FindNode(node_name);
        if (node == nullptr || index >= node->num_outputs()) {
          return absl::InvalidArgumentError(absl::StrCat(where, " ", what, " '", key, "' names tensor '", tensor,
                                                         "', which the graph does not have"));
        }
        tf::TensorInfo& info = (*out)[key];
        info.set_name(absl::StrCat(node_name, ":", index));
        info.set_dtype(static_cast<tf::DataType>(node->output_types[index]));
        SetShapeProto(index < static_cast<int>(node->output_shapes.size()) ? node->output_shapes[index]
                                                                           : PartialShape::Unknown(),
                      info.mutable_tensor_shape());
      }
    }
  }
  return absl::OkStatus();
}

std::string ErrnoText() { return std::strerror(errno); }

absl::Status WriteFileSynced(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot create '", path, "': ", ErrnoText()));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      absl::Status s = absl::UnavailableError(absl::StrCat("cannot write '", path, "': ", ErrnoText()));
      ::close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = absl::UnavailableError(absl::StrCat("cannot sync '", path, "': ", ErrnoText()));
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return absl::UnavailableError(absl::StrCat("cannot close '", path, "': ", ErrnoText()));
  return absl::OkStatus();
}

// Makes the entries of a directory durable (best effort).
void SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Removes the temporary directory unless released.
class TempDirGuard {
 public:
  explicit TempDirGuard(fs::path path) : path_(std::move(path)) {}
  ~TempDirGuard() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  void Release() { path_.clear(); }

 private:
  fs::path path_;
};

}  // namespace

absl::Status ExportSavedModel(const std::string& dir, const tf::GraphDef& graph,
                              const std::vector<SavedModelSignatureExport>& signatures,
                              const std::map<std::string, Tensor>& variables, const std::vector<std::string>& tags) {
  if (dir.empty()) return absl::InvalidArgumentError("the SavedModel directory is empty");
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "dir/" -> "dir"
  std::error_code ec;
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot export a SavedModel to '", dir, "': it exists and is not a directory"));
    }
    if (!fs::is_empty(target, ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot export a SavedModel to '", dir, "': the directory exists and is not empty"));
    }
  }
  if (signatures.empty()) return absl::InvalidArgumentError("a SavedModel export needs at least one signature");
  if (tags.empty()) return absl::InvalidArgumentError("a SavedModel export needs at least one tag");

  // Check everything before touching the file system.
  PX_RETURN_IF_ERROR(ImportGraphDef(graph, "the graph to export").status());
  PX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> imported,
                      ImportGraphDef(WithVariableShapes(graph), "the graph to export"));
  PX_ASSIGN_OR_RETURN(std::vector<ExportVariable> vars, CollectVariables(graph, variables));

  tf::SavedModel model;
  model.set_saved_model_schema_version(1);
  tf::MetaGraphDef* meta = model.add_meta_graphs();
  PX_RETURN_IF_ERROR(AddSignatures(*imported, signatures, meta));
  tf::MetaGraphDef::MetaInfoDef* info = meta->mutable_meta_info_def();
  for (const std::string& tag : tags) info->add_tags(tag);
  // TensorFlow reads these for messages only (the graph carries its own
  // producer version); this file was not written by TensorFlow.
  info->set_meta_graph_version("plexus");
  info->set_tensorflow_git_version("plexus");
  *meta->mutable_graph_def() = graph;
  if (!vars.empty()) AddSaver(vars, meta->mutable_graph_def(), meta->mutable_saver_def());

  // Write into a temporary sibling directory, then rename it into place.
  fs::path parent = target.parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat("cannot create the directory '", parent.string(), "': ", ec.message()));
    }
  }
  std::random_device rd;
  const fs::path temp = fs::path(absl::StrCat(target.string(), ".tmp-", ::getpid(), "-", absl::Hex(rd() ^ (uint64_t{rd()} << 32))));
  fs::create_directory(temp, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create '", temp.string(), "': ", ec.message()));
  TempDirGuard guard(temp);
  fs::create_directory(temp / "variables", ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create '", (temp / "variables").string(), "': ", ec.message()));

  if (!vars.empty()) {
    PX_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create((temp / "variables" / "variables").string()));
    for (const ExportVariable& v : vars) {
      absl::Status s = writer->Add(v.shared_name, v.value);
      if (!s.ok()) return Annotate(s, absl::StrCat("writing variable '", v.shared_name, "'"));
    }
    PX_RETURN_IF_ERROR(writer->Finish());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InternalError("cannot serialize the SavedModel (is it over 2 GiB?)");
  }
  PX_RETURN_IF_ERROR(WriteFileSynced((temp / "saved_model.pb").string(), bytes));
  SyncDirectory((temp / "variables").string());
  SyncDirectory(temp.string());

  // rename(2) replaces an empty directory and fails for a non-empty one, so
  // a directory created meanwhile is never overwritten.
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot export a SavedModel to '", dir, "': the directory exists and is not empty"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot rename '", temp.string(), "' to '", dir, "': ", std::strerror(err)));
  }
  guard.Release();
  SyncDirectory(parent.empty() ? std::string(".") : parent.string());
  return absl::OkStatus();
}

}  // namespace plexus
