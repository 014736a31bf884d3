#include "plexus/saved_model.h"

#include "exec/session_state.h"
#include "persist/object_graph_restore.h"

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "plexus/checkpoint.h"
#include "plexus/graph_import.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"
#include "saved_model.pb.h"

namespace plexus {
namespace {

constexpr size_t kMaxSavedModelBytes = size_t{INT_MAX};

std::string TagSetString(const std::set<std::string>& tags) {
  return absl::StrCat("{", absl::StrJoin(tags, ", "), "}");
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  const std::streamoff size = file.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxSavedModelBytes) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is too large (", size, " bytes)"));
  }
  file.seekg(0);
  std::string contents(static_cast<size_t>(size), '\0');
  if (!file.read(contents.data(), size)) return absl::DataLossError(absl::StrCat("cannot read '", path, "'"));
  return contents;
}

// Text-format Any values name TensorFlow's message types
// ("[type.googleapis.com/tensorflow.AssetFileDef] { ... }"); ours live in
// package plexus.tf with the same fields.
class TensorFlowAnyFinder : public google::protobuf::TextFormat::Finder {
 public:
  const google::protobuf::Descriptor* FindAnyType(const google::protobuf::Message&, const std::string&,
                                                  const std::string& name) const override {
    std::string ours = name;
    if (absl::StartsWith(ours, "tensorflow.")) ours = absl::StrCat("plexus.tf.", ours.substr(11));
    return google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(ours);
  }
};

absl::Status ParseSavedModel(const std::string& bytes, bool text, const std::string& source,
                             tf::SavedModel* proto) {
  if (!text) {
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetRecursionLimit(400);
    if (!proto->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": not a valid binary SavedModel"));
    }
    return absl::OkStatus();
  }
  google::protobuf::TextFormat::Parser parser;
  TensorFlowAnyFinder finder;
  parser.SetFinder(&finder);
  parser.AllowUnknownField(true);
  // Bounded nesting, as for binary files: deep nesting would overflow the
  // stack.
  parser.SetRecursionLimit(400);
  class Collector : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
    }
    void AddWarning(int, int, const std::string&) override {}
    std::string first;
  } collector;
  parser.RecordErrorsTo(&collector);
  if (!parser.ParseFromString(bytes, proto)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a valid text SavedModel (", collector.first, ")"));
  }
  return absl::OkStatus();
}

// "node:0" -> "node"; "^node" -> "node"; "node" unchanged.
std::string NodeNameOf(absl::string_view tensor) {
  absl::ConsumePrefix(&tensor, "^");
  size_t colon = tensor.rfind(':');
  if (colon != absl::string_view::npos) {
    absl::string_view index = tensor.substr(colon + 1);
    bool digits = !index.empty();
    for (char c : index) digits = digits && c >= '0' && c <= '9';
    if (digits) tensor = tensor.substr(0, colon);
  }
  return std::string(tensor);
}

absl::StatusOr<SignatureTensor> ConvertTensorInfo(const tf::TensorInfo& info, absl::string_view where) {
  SignatureTensor t;
  if (info.encoding_case() == tf::TensorInfo::kName) {
    t.tensor_name = info.name();
    if (t.tensor_name.empty()) return absl::InvalidArgumentError(absl::StrCat(where, " has an empty tensor name"));
  }
  const int32_t raw = static_cast<int32_t>(info.dtype());
  if (raw != 0) {
    if (!IsKnownDataType(raw)) return absl::InvalidArgumentError(absl::StrCat(where, " has unknown dtype ", raw));
    t.dtype = BaseType(raw);
    t.is_ref = raw >= kRefTypeOffset;
  }
  if (info.has_tensor_shape()) {
    auto shape = ShapeFromProto(info.tensor_shape());
    if (!shape.ok()) return Annotate(shape.status(), where);
    t.shape = *shape;
  }
  return t;
}

// Asset file names are relative to DIR/assets and must stay inside it.
absl::Status CheckAssetName(const std::string& filename, absl::string_view source) {
  std::filesystem::path p(filename);
  bool ok = !filename.empty() && p.is_relative();
  for (const auto& part : p) ok = ok && part != "..";
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": asset file name '", filename,
                                                   "' must be a relative path inside assets/"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SavedModel>> SavedModel::Read(const std::string& dir,
                                                             const std::set<std::string>& tags) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(dir, ec);
  if (ec) abs = dir;
  const std::string base = abs.lexically_normal().string();
  std::string clean = base;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  const std::string pb = clean + "/saved_model.pb";
  const std::string pbtxt = clean + "/saved_model.pbtxt";
  std::string source;
  bool text = false;
  if (std::filesystem::is_regular_file(pb, ec)) {
    source = pb;
  } else if (std::filesystem::is_regular_file(pbtxt, ec)) {
    source = pbtxt;
    text = true;
  } else {
    return absl::NotFoundError(absl::StrCat("no SavedModel in '", dir,
                                            "': neither saved_model.pb nor saved_model.pbtxt exists"));
  }
  PX_ASSIGN_OR_RETURN(std::string bytes, ReadFile(source));
  tf::SavedModel proto;
  PX_RETURN_IF_ERROR(ParseSavedModel(bytes, text, source, &proto));

  auto model = std::unique_ptr<SavedModel>(new SavedModel());
  model->dir_ = clean;
  model->source_ = source;
  model->tags_ = tags;
  int chosen = -1;
  for (int i = 0; i < proto.meta_graphs_size(); ++i) {
    const auto& t = proto.meta_graphs(i).meta_info_def().tags();
    std::set<std::string> set(t.begin(), t.end());
    if (set == tags && chosen < 0) chosen = i;
    model->tag_sets_.push_back(std::move(set));
  }
  if (chosen < 0) {
    std::vector<std::string> sets;
    for (const auto& s : model->tag_sets_) sets.push_back(TagSetString(s));
    return absl::NotFoundError(absl::StrCat(
        source, ": no MetaGraphDef has the tags ", TagSetString(tags), "; the tag sets there are: ",
        sets.empty() ? "none (the file holds no MetaGraphDef)" : absl::StrJoin(sets, ", ")));
  }
  model->meta_graph_.Swap(proto.mutable_meta_graphs(chosen));
  PX_RETURN_IF_ERROR(model->Index(source));
  return model;
}

absl::Status SavedModel::Index(const std::string& source) {
  const tf::MetaGraphDef& mg = meta_graph_;
  for (const auto& [key, def] : mg.signature_def()) {
    Signature sig;
    sig.key = key;
    sig.method_name = def.method_name();
    for (const auto& [name, info] : def.inputs()) {
      PX_ASSIGN_OR_RETURN(sig.inputs[name],
                          ConvertTensorInfo(info, absl::StrCat(source, ": signature '", key, "' input '", name, "'")));
    }
    for (const auto& [name, info] : def.outputs()) {
      PX_ASSIGN_OR_RETURN(sig.outputs[name],
                          ConvertTensorInfo(info, absl::StrCat(source, ": signature '", key, "' output '", name, "'")));
    }
    if (key == kSavedModelInitOpSignatureKey) {
      // TensorFlow 2: the init op is this signature's one output.
      for (const auto& [name, t] : sig.outputs) {
        if (!t.tensor_name.empty()) init_op_ = NodeNameOf(t.tensor_name);
      }
      continue;
    }
    signatures_.emplace(key, std::move(sig));
  }
  // TensorFlow 1: the main op, else the legacy init op (a node list of one).
  for (const char* collection : {"legacy_init_op", "saved_model_main_op"}) {
    auto it = mg.collection_def().find(collection);
    if (it == mg.collection_def().end()) continue;
    const auto& nodes = it->second.node_list().value();
    if (nodes.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": collection '", collection,
                                                     "' must hold exactly one op, has ", nodes.size()));
    }
    init_op_ = NodeNameOf(nodes.Get(0));
  }

  if (mg.has_saver_def()) {
    has_saver_ = true;
    const tf::SaverDef& s = mg.saver_def();
    saver_.filename_tensor_name = s.filename_tensor_name();
    saver_.save_tensor_name = s.save_tensor_name();
    saver_.restore_op_name = s.restore_op_name();
    saver_.sharded = s.sharded();
    saver_.version = static_cast<int>(s.version());
  }

  std::vector<tf::AssetFileDef> asset_defs(mg.asset_file_def().begin(), mg.asset_file_def().end());
  if (asset_defs.empty()) {
    auto it = mg.collection_def().find("saved_model_assets");
    if (it != mg.collection_def().end()) {
      for (const auto& any : it->second.any_list().value()) {
        tf::AssetFileDef def;
        if (!absl::EndsWith(any.type_url(), "AssetFileDef") || !def.ParseFromString(any.value())) {
          return absl::InvalidArgumentError(absl::StrCat(source, ": collection 'saved_model_assets' holds a ",
                                                         any.type_url(), " that is not a valid AssetFileDef"));
        }
        asset_defs.push_back(std::move(def));
      }
    }
  }
  for (const tf::AssetFileDef& def : asset_defs) {
    PX_RETURN_IF_ERROR(CheckAssetName(def.filename(), source));
    AssetFile asset;
    asset.tensor_name = def.tensor_info().name();
    asset.filename = def.filename();
    asset.path = absl::StrCat(dir_, "/assets/", def.filename());
    assets_.push_back(std::move(asset));
  }
  return absl::OkStatus();
}

absl::StatusOr<const Signature*> SavedModel::FindSignature(absl::string_view key) const {
  auto it = signatures_.find(std::string(key));
  if (it != signatures_.end()) return &it->second;
  std::vector<std::string> keys;
  for (const auto& [k, sig] : signatures_) keys.push_back(absl::StrCat("'", k, "'"));
  return absl::NotFoundError(absl::StrCat("SavedModel '", dir_, "' has no signature '", key, "'; it has ",
                                          keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
}

std::string SavedModel::variables_prefix() const { return absl::StrCat(dir_, "/variables/variables"); }

bool SavedModel::has_variables() const { return CheckpointExists(variables_prefix()); }

absl::StatusOr<std::unique_ptr<Graph>> SavedModel::ImportGraph() const {
  return ImportGraphDef(meta_graph_.graph_def(), absl::StrCat(source_, " (tags ", TagSetString(tags_), ")"));
}

// ---------------------------------------------------------------------------

std::vector<std::pair<std::string, Tensor>> SavedModelSession::AssetFeeds() const {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const AssetFile& asset : model_->assets()) {
    if (asset.tensor_name.empty()) continue;
    feeds.emplace_back(asset.tensor_name, Tensor::FromStrings({}, {asset.path}));
  }
  return feeds;
}

absl::StatusOr<std::unique_ptr<SavedModelSession>> SavedModelSession::Load(Runtime* runtime,
                                                                           const std::string& dir,
                                                                           SavedModelOptions options) {
  auto loaded = std::unique_ptr<SavedModelSession>(new SavedModelSession());
  PX_ASSIGN_OR_RETURN(loaded->model_, SavedModel::Read(dir, options.tags));
  const SavedModel& model = *loaded->model_;
  PX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, model.ImportGraph());
  loaded->graph_ = std::shared_ptr<const Graph>(std::move(graph));
  SessionOptions session_options;
  session_options.device = options.device;
  // The session's variables, kept here too so the object graph can fill the
  // ones the restore op leaves out.
  auto resources = std::make_shared<ResourceStore>();
  session_options.resources = resources;
  PX_ASSIGN_OR_RETURN(loaded->session_, Session::Create(runtime, loaded->graph_, session_options));

  const auto asset_feeds = loaded->AssetFeeds();
  if (model.has_saver() && model.has_variables()) {
    const SaverInfo& saver = model.saver();
    if (saver.filename_tensor_name.empty() || saver.restore_op_name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("SavedModel '", model.dir(),
                                                     "': the SaverDef names no filename tensor or restore op"));
    }
    auto feeds = asset_feeds;
    feeds.emplace_back(saver.filename_tensor_name, Tensor::FromStrings({}, {model.variables_prefix()}));
    auto restored = loaded->session_->Run(feeds, {}, {NodeNameOf(saver.restore_op_name)});
    if (!restored.ok()) {
      return Annotate(restored.status(), absl::StrCat("restoring the variables of SavedModel '", model.dir(),
                                                      "' from '", model.variables_prefix(), "'"));
    }
  }
  // TF2 SavedModels: variables whose handles the restore op does not write
  // (Keras 3's tf.saved_model.save) come from the checkpoint through the
  // object graph, as TensorFlow's loader does.
  auto from_object_graph = RestoreFromObjectGraph(model, *resources);
  if (!from_object_graph.ok()) {
    return Annotate(from_object_graph.status(), absl::StrCat("restoring the variables of SavedModel '",
                                                             model.dir(), "' through its object graph"));
  }
  if (!model.init_op().empty()) {
    auto init = loaded->session_->Run(asset_feeds, {}, {model.init_op()});
    if (!init.ok()) {
      return Annotate(init.status(), absl::StrCat("running the init op '", model.init_op(), "' of SavedModel '",
                                                  model.dir(), "'"));
    }
  }
  return loaded;
}

absl::StatusOr<std::map<std::string, Tensor>> SavedModelSession::Run(
    const std::string& key, const std::map<std::string, Tensor>& inputs,
    const std::vector<std::string>& output_keys) {
  PX_ASSIGN_OR_RETURN(const Signature* sig, model_->FindSignature(key));
  const tf::SignatureDef& def = model_->meta_graph().signature_def().at(key);
  auto expected = [&](const std::map<std::string, SignatureTensor>& m) {
    std::vector<std::string> keys;
    for (const auto& [k, t] : m) keys.push_back(absl::StrCat("'", k, "'"));
    return keys.empty() ? std::string("none") : absl::StrJoin(keys, ", ");
  };
  const std::string where = absl::StrCat("signature '", key, "'");
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, value] : inputs) {
    auto it = sig->inputs.find(name);
    if (it == sig->inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has no input '", name, "'; its inputs are ",
                                                     expected(sig->inputs)));
    }
    const SignatureTensor& t = it->second;
    if (t.tensor_name.empty()) {
      return absl::UnimplementedError(absl::StrCat(where, " input '", name,
                                                   "' is a sparse or composite tensor; not supported"));
    }
    if (t.dtype != DataType::kInvalid && value.dtype() != t.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(where, " input '", name, "' must be ", DataTypeName(t.dtype),
                                                     ", got ", DataTypeName(value.dtype())));
    }
    feeds.emplace_back(t.tensor_name, value);
  }
  for (const auto& [name, t] : sig->inputs) {
    if (inputs.count(name)) continue;
    auto d = def.defaults().find(name);
    if (d == def.defaults().end()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " needs input '", name, "' (", t.tensor_name,
                                                     "); its inputs are ", expected(sig->inputs)));
    }
    auto value = TensorFromProto(d->second);
    if (!value.ok()) return Annotate(value.status(), absl::StrCat(where, " default of input '", name, "'"));
    feeds.emplace_back(t.tensor_name, *std::move(value));
  }
  std::vector<std::string> keys = output_keys;
  if (keys.empty()) {
    for (const auto& [name, t] : sig->outputs) keys.push_back(name);
  }
  std::vector<std::string> fetches;
  for (const std::string& name : keys) {
    auto it = sig->outputs.find(name);
    if (it == sig->outputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has no output '", name, "'; its outputs are ",
                                                     expected(sig->outputs)));
    }
    if (it->second.tensor_name.empty()) {
      return absl::UnimplementedError(absl::StrCat(where, " output '", name,
                                                   "' is a sparse or composite tensor; not supported"));
    }
    fetches.push_back(it->second.tensor_name);
  }
  auto results = session_->Run(feeds, fetches);
  if (!results.ok()) return Annotate(results.status(), absl::StrCat("running ", where, " of SavedModel '", model_->dir(), "'"));
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < keys.size(); ++i) out[keys[i]] = std::move((*results)[i]);
  return out;
}

}  // namespace plexus
