// TensorFlow Serving's REST (v1) bodies.
#include "tfs_json.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "example.pb.h"
#include "json_tensor.h"

namespace plexus::serve {
namespace {

using rapidjson::Value;

constexpr char kBytesSuffix[] = "_bytes";

std::string Str(const Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

std::string InputNames(const Signature& sig) {
  std::vector<std::string> names;
  for (const auto& [name, info] : sig.inputs) names.push_back(name);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// Every member of `obj` an input of `sig`, each once, and every input there.
absl::Status CheckInputNames(const Value& obj, const Signature& sig, const std::string& where) {
  std::set<std::string> seen;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    const std::string name = Str(it->name);
    if (sig.inputs.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, "names input '", name, "', which signature '",
                                                     sig.key, "' does not have; its inputs are: ",
                                                     InputNames(sig)));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, "names input '", name, "' twice"));
    }
  }
  for (const auto& [name, info] : sig.inputs) {
    if (seen.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, "lacks input '", name, "' of signature '",
                                                     sig.key, "' (its inputs are: ", InputNames(sig),
                                                     ")"));
    }
  }
  return absl::OkStatus();
}

bool IsNamedObject(const Value& v) { return v.IsObject() && !IsB64Object(v); }

absl::Status ParseInstances(const Value& list, const Signature& sig,
                            std::map<std::string, Tensor>* inputs) {
  if (!list.IsArray()) return absl::InvalidArgumentError("'instances' must be a list");
  if (list.Empty()) return absl::InvalidArgumentError("'instances' is an empty list");
  const bool named = IsNamedObject(list[0]);
  if (!named && sig.inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "signature '", sig.key, "' has ", sig.inputs.size(), " inputs (", InputNames(sig),
        "), so each of 'instances' must be an object {input: value}"));
  }
  std::map<std::string, std::vector<const Value*>> rows;
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const Value& item = list[i];
    if (IsNamedObject(item) != named) {
      return absl::InvalidArgumentError(absl::StrCat(
          "instance ", i, named ? " is not an object {input: value} like instance 0"
                                : " is an object where instance 0 is a value"));
    }
    if (!named) {
      rows[sig.inputs.begin()->first].push_back(&item);
      continue;
    }
    absl::Status s = CheckInputNames(item, sig, absl::StrCat("instance ", i, " "));
    if (!s.ok()) return s;
    for (auto it = item.MemberBegin(); it != item.MemberEnd(); ++it) {
      rows[Str(it->name)].push_back(&it->value);
    }
  }
  for (const auto& [name, values] : rows) {
    auto t = TensorFromJsonRows(values, sig.inputs.at(name).dtype,
                                absl::StrCat("input '", name, "' of 'instances'"));
    if (!t.ok()) return t.status();
    (*inputs)[name] = *std::move(t);
  }
  return absl::OkStatus();
}

absl::Status ParseColumns(const Value& v, const Signature& sig,
                          std::map<std::string, Tensor>* inputs) {
  if (!IsNamedObject(v)) {
    if (sig.inputs.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "signature '", sig.key, "' has ", sig.inputs.size(), " inputs (", InputNames(sig),
          "), so 'inputs' must be an object {input: value}"));
    }
    const auto& [name, info] = *sig.inputs.begin();
    auto t = TensorFromJson(v, info.dtype, absl::StrCat("input '", name, "'"));
    if (!t.ok()) return t.status();
    (*inputs)[name] = *std::move(t);
    return absl::OkStatus();
  }
  absl::Status s = CheckInputNames(v, sig, "'inputs' ");
  if (!s.ok()) return s;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const std::string name = Str(it->name);
    auto t = TensorFromJson(it->value, sig.inputs.at(name).dtype, absl::StrCat("input '", name, "'"));
    if (!t.ok()) return t.status();
    (*inputs)[name] = *std::move(t);
  }
  return absl::OkStatus();
}

// "signature_name" of a request body: a string when present.
absl::StatusOr<std::string> SignatureName(const Value& doc) {
  auto it = doc.FindMember("signature_name");
  if (it == doc.MemberEnd()) return std::string();
  if (!it->value.IsString()) {
    return absl::InvalidArgumentError("'signature_name' must be a string");
  }
  return Str(it->value);
}

bool IsBytesOutput(const std::string& name, const Tensor& t) {
  return t.dtype() == DataType::kString && absl::EndsWith(name, kBytesSuffix);
}

// True when every output has a dimension 0 and all share it.
bool RowsAgree(const std::map<std::string, Tensor>& outputs) {
  if (outputs.empty()) return false;
  const Tensor& first = outputs.begin()->second;
  for (const auto& [name, t] : outputs) {
    if (t.dims() == 0 || t.shape()[0] != first.shape()[0]) return false;
  }
  return true;
}

std::string Finish(const rapidjson::StringBuffer& sb) { return std::string(sb.GetString(), sb.GetSize()); }

}  // namespace

absl::StatusOr<TfsPredictRequest> ParseTfsPredict(std::string_view body,
                                                  const FindSignatureFn& find_signature) {
  rapidjson::Document doc;
  absl::Status s = ParseJsonObject(body, "the request body", &doc);
  if (!s.ok()) return s;
  auto name = SignatureName(doc);
  if (!name.ok()) return name.status();
  const bool has_instances = doc.HasMember("instances");
  const bool has_inputs = doc.HasMember("inputs");
  if (has_instances == has_inputs) {
    return absl::InvalidArgumentError(
        has_instances ? "the request has both 'instances' and 'inputs'; give one"
                      : "the request has neither 'instances' (row format) nor 'inputs' (columnar)");
  }
  auto sig = find_signature(*name);
  if (!sig.ok()) return sig.status();
  TfsPredictRequest req;
  req.signature_name = (*sig)->key;
  req.row_format = has_instances;
  s = has_instances ? ParseInstances(doc["instances"], **sig, &req.inputs)
                    : ParseColumns(doc["inputs"], **sig, &req.inputs);
  if (!s.ok()) return s;
  return req;
}

std::string WriteTfsPredictResponse(const std::map<std::string, Tensor>& outputs,
                                    bool row_format) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  const bool single = outputs.size() == 1;
  if (row_format && RowsAgree(outputs)) {
    w.Key("predictions");
    w.StartArray();
    const int64_t n = outputs.begin()->second.shape()[0];
    for (int64_t r = 0; r < n; ++r) {
      if (!single) w.StartObject();
      for (const auto& [name, t] : outputs) {
        if (!single) w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
        TensorRowToJson(t, r, IsBytesOutput(name, t), w);
      }
      if (!single) w.EndObject();
    }
    w.EndArray();
  } else {
    w.Key("outputs");
    if (!single) w.StartObject();
    for (const auto& [name, t] : outputs) {
      if (!single) w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
      TensorToJson(t, IsBytesOutput(name, t), w);
    }
    if (!single) w.EndObject();
  }
  w.EndObject();
  return Finish(sb);
}

// --- Classify and regress ----------------------------------------------------

namespace {

// One feature value: a number, string or b64 object, or a flat list of them.
absl::Status FeatureFromJson(const Value& v, const std::string& what, tf::Feature* feature) {
  std::vector<const Value*> items;
  if (v.IsArray()) {
    for (const Value& item : v.GetArray()) items.push_back(&item);
  } else {
    items.push_back(&v);
  }
  if (items.empty()) return absl::OkStatus();  // an empty feature
  bool strings = false, numbers = false, floats = false;
  for (const Value* item : items) {
    if (item->IsString() || IsB64Object(*item)) {
      strings = true;
    } else if (item->IsNumber()) {
      numbers = true;
      floats |= !item->IsInt64();
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " must be a number, a string, {\"b64\": ...} or a flat list of one of them; got ",
          item->IsArray()    ? "a nested list"
          : item->IsObject() ? "an object"
          : item->IsBool()   ? "a boolean"
                             : "null"));
    }
  }
  if (strings && numbers) {
    return absl::InvalidArgumentError(absl::StrCat(what, " mixes strings and numbers"));
  }
  for (const Value* item : items) {
    if (strings) {
      if (item->IsString()) {
        feature->mutable_bytes_list()->add_value(item->GetString(), item->GetStringLength());
        continue;
      }
      const Value& b64 = (*item)["b64"];
      auto bytes = DecodeBase64(std::string_view(b64.GetString(), b64.GetStringLength()), what);
      if (!bytes.ok()) return bytes.status();
      feature->mutable_bytes_list()->add_value(*std::move(bytes));
    } else if (floats) {
      const double d = item->GetDouble();
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", d, " is out of range for a float"));
      }
      feature->mutable_float_list()->add_value(static_cast<float>(d));
    } else {
      feature->mutable_int64_list()->add_value(item->GetInt64());
    }
  }
  return absl::OkStatus();
}

absl::Status FeaturesFromJson(const Value& obj, const std::string& what,
                              const tf::Features* context, tf::Features* features) {
  if (!obj.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an object {feature: value}"));
  }
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    const std::string name = Str(it->name);
    if (!IsValidUtf8(name)) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has a feature name that is not UTF-8"));
    }
    if (context != nullptr && context->feature().count(name) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature '", name, "' of ", what, " is also in 'context'"));
    }
    if (features->feature().count(name) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has feature '", name, "' twice"));
    }
    absl::Status s = FeatureFromJson(it->value, absl::StrCat("feature '", name, "' of ", what),
                                     &(*features->mutable_feature())[name]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> ParseTfsExamples(std::string_view body, std::string* signature_name) {
  rapidjson::Document doc;
  absl::Status s = ParseJsonObject(body, "the request body", &doc);
  if (!s.ok()) return s;
  auto name = SignatureName(doc);
  if (!name.ok()) return name.status();
  *signature_name = *name;
  tf::Features context;
  auto ctx = doc.FindMember("context");
  if (ctx != doc.MemberEnd()) {
    s = FeaturesFromJson(ctx->value, "'context'", nullptr, &context);
    if (!s.ok()) return s;
  }
  auto examples = doc.FindMember("examples");
  if (examples == doc.MemberEnd() || !examples->value.IsArray() || examples->value.Empty()) {
    return absl::InvalidArgumentError("the request needs 'examples', a non-empty list of objects");
  }
  std::vector<std::string> serialized;
  for (rapidjson::SizeType i = 0; i < examples->value.Size(); ++i) {
    tf::Example example;
    tf::Features* features = example.mutable_features();
    s = FeaturesFromJson(examples->value[i], absl::StrCat("example ", i), &context, features);
    if (!s.ok()) return s;
    for (const auto& [key, feature] : context.feature()) (*features->mutable_feature())[key] = feature;
    serialized.push_back(example.SerializeAsString());
  }
  const int64_t n = static_cast<int64_t>(serialized.size());
  return Tensor::FromStrings(Shape{n}, std::move(serialized));
}

namespace {

bool IsNumeric(const Tensor& t) {
  return t.valid() && t.dtype() != DataType::kString && DataTypeSize(t.dtype()) != 0;
}

absl::Status OutputShapeError(const std::string& name, const Tensor& t, const std::string& wanted) {
  return absl::InvalidArgumentError(absl::StrCat("output '", name, "' is ", DataTypeName(t.dtype()),
                                                 " ", ShapeToString(t.shape()), "; expected ", wanted));
}

}  // namespace

absl::StatusOr<std::string> WriteTfsClassifyResponse(const std::map<std::string, Tensor>& outputs) {
  auto c = outputs.find("classes");
  auto sc = outputs.find("scores");
  const Tensor* classes = c == outputs.end() ? nullptr : &c->second;
  const Tensor* scores = sc == outputs.end() ? nullptr : &sc->second;
  if (classes == nullptr && scores == nullptr) {
    return absl::InvalidArgumentError(
        "the classification signature has neither a 'classes' nor a 'scores' output");
  }
  if (classes && (classes->dtype() != DataType::kString || classes->dims() != 2)) {
    return OutputShapeError("classes", *classes, "strings [batch, classes]");
  }
  if (scores && (!IsNumeric(*scores) || scores->dims() != 2)) {
    return OutputShapeError("scores", *scores, "numbers [batch, classes]");
  }
  if (classes && scores && classes->shape() != scores->shape()) {
    return OutputShapeError("scores", *scores, absl::StrCat("the shape of 'classes', ",
                                                          ShapeToString(classes->shape())));
  }
  const Shape& shape = classes ? classes->shape() : scores->shape();
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("result");
  w.StartArray();
  for (int64_t i = 0; i < shape[0]; ++i) {
    w.StartArray();
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t k = i * shape[1] + j;
      w.StartArray();
      WriteJsonBytes(classes ? std::string_view(classes->strings()[k]) : std::string_view(), false, w);
      if (scores) {
        TensorElementToJson(*scores, k, false, w);
      } else {
        w.Double(0.0);
      }
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return Finish(sb);
}

absl::StatusOr<std::string> WriteTfsRegressResponse(const std::map<std::string, Tensor>& outputs) {
  auto it = outputs.find("outputs");
  if (it == outputs.end()) {
    return absl::InvalidArgumentError("the regression signature has no 'outputs' output");
  }
  const Tensor& t = it->second;
  if (!IsNumeric(t) || t.dims() < 1 || t.dims() > 2 || (t.dims() == 2 && t.shape()[1] != 1)) {
    return OutputShapeError("outputs", t, "numbers [batch] or [batch, 1]");
  }
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("result");
  w.StartArray();
  for (int64_t i = 0; i < t.shape()[0]; ++i) TensorElementToJson(t, i, false, w);
  w.EndArray();
  w.EndObject();
  return Finish(sb);
}

std::string WriteTfsError(const absl::Status& s) { return ErrorJson(s); }

std::string WriteTfsModelStatus(const std::vector<VersionStatus>& versions) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("model_version_status");
  w.StartArray();
  for (const VersionStatus& v : versions) {
    w.StartObject();
    w.Key("version");
    w.String(absl::StrCat(v.version).c_str());
    w.Key("state");
    w.String(v.state.c_str());
    w.Key("status");
    w.StartObject();
    w.Key("error_code");
    w.String(absl::StatusCodeToString(v.status.code()).c_str());
    w.Key("error_message");
    WriteJsonBytes(std::string_view(v.status.message().data(), v.status.message().size()), false, w);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Finish(sb);
}

std::string WriteTfsMetadata(const Servable& servable) {
  return WriteTfsMetadata(servable.name(), servable.version(), servable.model().meta_graph());
}

std::string WriteTfsMetadata(const std::string& name, int64_t version,
                             const tf::MetaGraphDef& meta_graph) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  // Sorted by key (a protobuf map has no order).
  std::map<std::string, const tf::SignatureDef*> signatures;
  for (const auto& [key, def] : meta_graph.signature_def()) {
    if (key != kSavedModelInitOpSignatureKey) signatures[key] = &def;
  }
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("model_spec");
  w.StartObject();
  w.Key("name");
  w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  w.Key("signature_name");
  w.String("");
  w.Key("version");
  w.String(absl::StrCat(version).c_str());
  w.EndObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("signature_def");
  w.StartObject();
  w.Key("signature_def");
  w.StartObject();
  for (const auto& [key, def] : signatures) {
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(*def, &json, options).ok()) json = "{}";
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return Finish(sb);
}

}  // namespace plexus::serve
