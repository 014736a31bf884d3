// KServe v2 REST bodies and Triton's binary tensor data extension.
#include "kserve_json.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "json_tensor.h"
#include "v2_datatype.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "binary tensor data is little-endian; this code copies host memory as it is");

namespace plexus::serve {
namespace {

using rapidjson::Value;

std::string Str(const Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

std::string Names(const std::map<std::string, SignatureTensor>& m) {
  std::vector<std::string> names;
  for (const auto& [name, info] : m) names.push_back(name);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// The v2 name, or TensorFlow's when v2 has none.
std::string DatatypeName(DataType dtype) {
  const char* v2 = V2DatatypeName(dtype);
  return *v2 ? std::string(v2) : DataTypeName(dtype);
}

const Value* Member(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

absl::Status Invalid(const std::string& what, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(what, message));
}

// The bytes after the JSON header and how far the inputs have read them.
struct BinaryPart {
  std::string_view bytes;
  size_t offset = 0;
  bool present = false;  // a header length was given
};

absl::StatusOr<Shape> ShapeOf(const Value& input, const std::string& what) {
  const Value* shape = Member(input, "shape");
  if (shape == nullptr || !shape->IsArray()) return Invalid(what, " needs a \"shape\" list");
  Shape out;
  for (const Value& d : shape->GetArray()) {
    if (!d.IsInt64() || d.GetInt64() < 0) {
      return Invalid(what, " has a shape that is not a list of non-negative integers");
    }
    out.push_back(d.GetInt64());
  }
  auto n = CheckedNumElements(out, what);
  if (!n.ok()) return n.status();
  return out;
}

// BYTES elements: each a 4-byte little-endian length and the bytes.
absl::StatusOr<Tensor> StringsFromBinary(std::string_view bytes, int64_t count, const Shape& shape,
                                         const std::string& what) {
  std::vector<std::string> values;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint32_t len = 0;
    if (bytes.size() - pos < 4) {
      return Invalid(what, absl::StrCat(": BYTES element ", values.size(),
                                        " is cut short in its 4-byte length"));
    }
    std::memcpy(&len, bytes.data() + pos, 4);
    pos += 4;
    if (bytes.size() - pos < len) {
      return Invalid(what, absl::StrCat(": BYTES element ", values.size(), " has length ", len,
                                        " but only ", bytes.size() - pos, " bytes remain"));
    }
    values.emplace_back(bytes.data() + pos, len);
    pos += len;
  }
  if (static_cast<int64_t>(values.size()) != count) {
    return Invalid(what, absl::StrCat(" has ", values.size(), " BYTES elements in its binary data but shape ",
                                      ShapeToString(shape), " needs ", count));
  }
  return Tensor::FromStrings(shape, std::move(values));
}

}  // namespace

absl::StatusOr<Tensor> TensorFromBinary(std::string_view bytes, DataType dtype, const Shape& shape,
                                        const std::string& what) {
  auto count = CheckedNumElements(shape, what);
  if (!count.ok()) return count.status();
  if (dtype == DataType::kString) return StringsFromBinary(bytes, *count, shape, what);
  auto size = CheckedByteSize(dtype, shape);
  if (!size.ok()) return Invalid(what, absl::StrCat(": ", size.status().message()));
  if (bytes.size() != *size) {
    return Invalid(what, absl::StrCat(" has ", bytes.size(), " bytes of binary data but ",
                                      DatatypeName(dtype), " ", ShapeToString(shape), " needs ",
                                      *size));
  }
  auto t = Tensor::AllocateHost(dtype, shape);
  if (!t.ok()) return t.status();
  if (dtype == DataType::kBool) {
    auto* out = t->data<uint8_t>();
    for (size_t i = 0; i < bytes.size(); ++i) out[i] = bytes[i] != 0;
  } else if (!bytes.empty()) {
    std::memcpy(t->raw_data(), bytes.data(), bytes.size());
  }
  return t;
}

namespace {

// The data of one input: JSON "data" or its slice of the binary part.
absl::StatusOr<Tensor> InputData(const Value& input, DataType dtype, const Shape& shape,
                                 const std::string& what, BinaryPart* binary) {
  const Value* data = Member(input, "data");
  const Value* params = Member(input, "parameters");
  const Value* size = params && params->IsObject() ? Member(*params, "binary_data_size") : nullptr;
  if (size == nullptr) {
    if (data == nullptr) return Invalid(what, " has neither \"data\" nor a binary_data_size");
    return TensorFromJsonWithShape(*data, dtype, shape, what);
  }
  if (data != nullptr) return Invalid(what, " has both \"data\" and a binary_data_size");
  if (!size->IsUint64()) return Invalid(what, ": binary_data_size must be a non-negative integer");
  const uint64_t n = size->GetUint64();
  const size_t left = binary->bytes.size() - binary->offset;
  if (n > left) {
    if (!binary->present) {
      return Invalid(what, absl::StrCat(" has binary_data_size ", n, " but the request has no "
                                        "binary part (no Inference-Header-Content-Length)"));
    }
    return Invalid(what, absl::StrCat(" has binary_data_size ", n, " but only ", left,
                                      " bytes of binary data remain; the body is truncated"));
  }
  std::string_view bytes = binary->bytes.substr(binary->offset, n);
  binary->offset += n;
  return TensorFromBinary(bytes, dtype, shape, what);
}

absl::Status ParseInput(const Value& input, size_t index, const Signature& sig,
                        BinaryPart* binary, std::map<std::string, Tensor>* inputs) {
  const std::string where = absl::StrCat("input ", index);
  if (!input.IsObject()) return Invalid(where, " must be an object");
  const Value* name_value = Member(input, "name");
  if (name_value == nullptr || !name_value->IsString()) return Invalid(where, " needs a \"name\"");
  const std::string name = Str(*name_value);
  const std::string what = absl::StrCat("input '", name, "'");
  auto info = sig.inputs.find(name);
  if (info == sig.inputs.end()) {
    return Invalid(what, absl::StrCat(" is not an input of signature '", sig.key,
                                      "'; its inputs are: ", Names(sig.inputs)));
  }
  if (inputs->count(name) != 0) return Invalid(what, " is given twice");
  const Value* datatype = Member(input, "datatype");
  if (datatype == nullptr || !datatype->IsString()) return Invalid(what, " needs a \"datatype\"");
  auto dtype = DataTypeFromV2(Str(*datatype));
  if (!dtype.ok()) return Invalid(what, absl::StrCat(": ", dtype.status().message()));
  if (*dtype != info->second.dtype) {
    return Invalid(what, absl::StrCat(" has datatype ", Str(*datatype), ", the model expects ",
                                      DatatypeName(info->second.dtype)));
  }
  auto shape = ShapeOf(input, what);
  if (!shape.ok()) return shape.status();
  auto t = InputData(input, *dtype, *shape, what, binary);
  if (!t.ok()) return t.status();
  (*inputs)[name] = *std::move(t);
  return absl::OkStatus();
}

absl::Status ParseOutputs(const Value& list, const Signature& sig, V2InferRequest* req) {
  if (!list.IsArray()) return absl::InvalidArgumentError("\"outputs\" must be a list");
  std::set<std::string> seen;
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const Value& out = list[i];
    const Value* name = out.IsObject() ? Member(out, "name") : nullptr;
    if (name == nullptr || !name->IsString()) {
      return absl::InvalidArgumentError(absl::StrCat("output ", i, " needs a \"name\""));
    }
    V2RequestedOutput o{Str(*name), req->binary_outputs_default};
    const std::string what = absl::StrCat("output '", o.name, "'");
    if (sig.outputs.count(o.name) == 0) {
      return Invalid(what, absl::StrCat(" is not an output of signature '", sig.key,
                                        "'; its outputs are: ", Names(sig.outputs)));
    }
    if (!seen.insert(o.name).second) return Invalid(what, " is asked for twice");
    const Value* params = Member(out, "parameters");
    if (const Value* b = params && params->IsObject() ? Member(*params, "binary_data") : nullptr) {
      if (!b->IsBool()) return Invalid(what, ": binary_data must be true or false");
      o.binary = b->GetBool();
    }
    req->outputs.push_back(std::move(o));
  }
  return absl::OkStatus();
}

// "id" and "parameters" of the request.
absl::Status ParseHeaderFields(const Value& doc, V2InferRequest* req) {
  if (const Value* id = Member(doc, "id")) {
    if (!id->IsString()) return absl::InvalidArgumentError("\"id\" must be a string");
    req->id = Str(*id);
  }
  const Value* params = Member(doc, "parameters");
  if (params == nullptr) return absl::OkStatus();
  if (!params->IsObject()) return absl::InvalidArgumentError("\"parameters\" must be an object");
  if (const Value* sig = Member(*params, "signature_name")) {
    if (!sig->IsString()) return absl::InvalidArgumentError("parameter signature_name must be a string");
    req->signature = Str(*sig);
  }
  if (const Value* b = Member(*params, "binary_data_output")) {
    if (!b->IsBool()) return absl::InvalidArgumentError("parameter binary_data_output must be true or false");
    req->binary_outputs_default = b->GetBool();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<V2InferRequest> ParseV2Infer(std::string_view body,
                                            std::optional<size_t> header_length,
                                            const FindSignatureFn& find_signature) {
  const size_t json_size = header_length.value_or(body.size());
  if (json_size > body.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the JSON header length ", json_size,
                                                   " is more than the body's ", body.size(), " bytes"));
  }
  rapidjson::Document doc;
  absl::Status s = ParseJsonObject(body.substr(0, json_size), "the request's JSON", &doc);
  if (!s.ok()) return s;
  V2InferRequest req;
  if (s = ParseHeaderFields(doc, &req); !s.ok()) return s;
  auto sig = find_signature(req.signature);
  if (!sig.ok()) return sig.status();
  req.signature = (*sig)->key;
  const Value* inputs = Member(doc, "inputs");
  if (inputs == nullptr || !inputs->IsArray()) {
    return absl::InvalidArgumentError("the request needs \"inputs\", a list");
  }
  BinaryPart binary{body.substr(json_size), 0, header_length.has_value()};
  for (rapidjson::SizeType i = 0; i < inputs->Size(); ++i) {
    if (s = ParseInput((*inputs)[i], i, **sig, &binary, &req.inputs); !s.ok()) return s;
  }
  if (binary.offset != binary.bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the body has ", binary.bytes.size(), " bytes after the JSON header but the inputs' "
        "binary_data_size add up to ", binary.offset));
  }
  for (const auto& [name, info] : (*sig)->inputs) {
    if (req.inputs.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "' of signature '", (*sig)->key,
                                                     "' is missing; its inputs are: ",
                                                     Names((*sig)->inputs)));
    }
  }
  if (const Value* outputs = Member(doc, "outputs")) {
    if (s = ParseOutputs(*outputs, **sig, &req); !s.ok()) return s;
  }
  return req;
}

bool AppendBinary(const Tensor& t, std::string* out) {
  if (t.dtype() == DataType::kString) {
    for (const std::string& s : t.strings()) {
      const auto len = static_cast<uint32_t>(s.size());
      out->append(reinterpret_cast<const char*>(&len), 4);
      out->append(s);
    }
    return true;
  }
  if (!t.valid() || !t.host_readable() || DataTypeSize(t.dtype()) == 0 ||
      !*V2DatatypeName(t.dtype())) {
    return false;
  }
  if (t.dtype() == DataType::kBool) {
    const auto* p = t.data<uint8_t>();
    for (int64_t i = 0; i < t.num_elements(); ++i) out->push_back(p[i] != 0 ? 1 : 0);
    return true;
  }
  out->append(static_cast<const char*>(t.raw_data()), t.nbytes());
  return true;
}

namespace {

void WriteString(const std::string& s, JsonWriter& w) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteOutput(const std::string& name, const Tensor& t, bool binary, std::string* bytes,
                 JsonWriter& w) {
  w.StartObject();
  w.Key("name");
  WriteString(name, w);
  w.Key("datatype");
  WriteString(DatatypeName(t.dtype()), w);
  w.Key("shape");
  w.StartArray();
  for (int64_t d : t.shape()) w.Int64(d);
  w.EndArray();
  const size_t before = bytes->size();
  if (binary && AppendBinary(t, bytes)) {
    w.Key("parameters");
    w.StartObject();
    w.Key("binary_data_size");
    w.Uint64(bytes->size() - before);
    w.EndObject();
  } else {
    w.Key("data");
    TensorToJsonFlat(t, false, w);
  }
  w.EndObject();
}

void WriteShape(const PartialShape& shape, JsonWriter& w) {
  w.StartArray();
  if (!shape.rank_known()) w.Int64(-1);
  for (int64_t d : shape.dims()) w.Int64(d < 0 ? -1 : d);
  w.EndArray();
}

void WriteTensorList(const std::map<std::string, SignatureTensor>& tensors, JsonWriter& w) {
  w.StartArray();
  for (const auto& [name, info] : tensors) {
    w.StartObject();
    w.Key("name");
    WriteString(name, w);
    w.Key("datatype");
    WriteString(DatatypeName(info.dtype), w);
    w.Key("shape");
    WriteShape(info.shape, w);
    w.EndObject();
  }
  w.EndArray();
}

std::string Finish(const rapidjson::StringBuffer& sb) { return std::string(sb.GetString(), sb.GetSize()); }

}  // namespace

V2Response WriteV2InferResponse(const std::string& model, int64_t version, const std::string& id,
                                const std::map<std::string, Tensor>& outputs,
                                const V2InferRequest& request) {
  std::vector<V2RequestedOutput> chosen = request.outputs;
  if (chosen.empty()) {
    for (const auto& [name, t] : outputs) chosen.push_back({name, request.binary_outputs_default});
  }
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  std::string bytes;
  w.StartObject();
  w.Key("model_name");
  WriteString(model, w);
  w.Key("model_version");
  WriteString(absl::StrCat(version), w);
  if (!id.empty()) {
    w.Key("id");
    WriteJsonBytes(id, false, w);
  }
  w.Key("outputs");
  w.StartArray();
  for (const V2RequestedOutput& o : chosen) {
    auto it = outputs.find(o.name);
    if (it != outputs.end()) WriteOutput(o.name, it->second, o.binary, &bytes, w);
  }
  w.EndArray();
  w.EndObject();
  V2Response r;
  r.body = Finish(sb);
  const bool any_binary = std::any_of(chosen.begin(), chosen.end(), [&](const V2RequestedOutput& o) {
    return o.binary && outputs.count(o.name) != 0;
  });
  if (any_binary) {
    r.header_length = r.body.size();
    r.body += bytes;
  }
  return r;
}

std::string WriteV2ModelMetadata(const Servable& s, const std::vector<int64_t>& versions) {
  return WriteV2ModelMetadata(s.name(), versions, s.model().signatures());
}

std::string WriteV2ModelMetadata(const std::string& name, const std::vector<int64_t>& versions,
                                 const std::map<std::string, Signature>& signatures) {
  const Signature* sig = nullptr;
  auto it = signatures.find("serving_default");
  if (it != signatures.end()) {
    sig = &it->second;
  } else if (signatures.size() == 1) {
    sig = &signatures.begin()->second;
  }
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("name");
  WriteString(name, w);
  w.Key("versions");
  w.StartArray();
  for (int64_t v : versions) WriteString(absl::StrCat(v), w);
  w.EndArray();
  w.Key("platform");
  w.String("tensorflow_savedmodel");
  w.Key("inputs");
  WriteTensorList(sig ? sig->inputs : std::map<std::string, SignatureTensor>(), w);
  w.Key("outputs");
  WriteTensorList(sig ? sig->outputs : std::map<std::string, SignatureTensor>(), w);
  w.EndObject();
  return Finish(sb);
}

std::string WriteV2ServerMetadata(const std::vector<std::string>& extensions) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("name");
  w.String("plexus-serve");
  w.Key("version");
  w.String(PLEXUS_SERVE_VERSION);
  w.Key("extensions");
  w.StartArray();
  for (const std::string& e : extensions) WriteString(e, w);
  w.EndArray();
  w.EndObject();
  return Finish(sb);
}

std::string WriteV2Error(const absl::Status& s) { return ErrorJson(s); }

}  // namespace plexus::serve
