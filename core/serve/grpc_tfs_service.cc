// TensorFlow Serving's gRPC API: PredictionService (Predict,
// GetModelMetadata, Classify, Regress; MultiInference UNIMPLEMENTED) and
// ModelService (GetModelStatus; HandleReloadConfigRequest UNIMPLEMENTED).
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpc_server.h"
#include "plexus/tensor_proto.h"
#include "tensorflow_serving/apis/model_service.grpc.pb.h"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

namespace plexus::serve::grpc_internal {
namespace {

namespace tfs = tensorflow::serving;

constexpr char kProtocol[] = "grpc_tfs";

// The version a ModelSpec names, found; the call's metrics learn the model
// and version.
absl::StatusOr<std::shared_ptr<Servable>> FindServable(const ServiceEnv& env,
                                                       const tfs::ModelSpec& spec,
                                                       CallMetrics& call) {
  if (spec.name().empty()) {
    return absl::InvalidArgumentError("the request's model_spec has no model name");
  }
  call.set_model(spec.name());
  std::optional<int64_t> version;
  if (spec.has_version()) version = spec.version().value();
  auto s = env.models->Find(spec.name(), version, spec.version_label());
  if (s.ok()) call.set_version((*s)->version());
  return s;
}

// The model and version that answered (and the signature, when one ran).
void FillSpec(const Servable& s, const std::string& signature, tfs::ModelSpec* spec) {
  spec->set_name(s.name());
  spec->mutable_version()->set_value(s.version());
  if (!signature.empty()) spec->set_signature_name(signature);
}

absl::Status Prefixed(const std::string& what, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// A request's TensorProto as a host tensor. Besides TensorFromProto's
// checks, a tensor may not declare more elements than the bytes it carries
// (each element takes at least one byte on the wire): TensorProto's rule
// that a short *_val list repeats its last value would otherwise let a few
// bytes ask for gigabytes. Small fills (up to 1024 elements) are allowed.
absl::StatusOr<Tensor> DecodeInput(const std::string& name, const plexus::tf::TensorProto& proto) {
  const std::string what = absl::StrCat("input '", name, "'");
  auto shape = ShapeFromProto(proto.tensor_shape());
  if (!shape.ok()) return Prefixed(what, shape.status());
  if (shape->fully_defined()) {
    int64_t n = 1;
    for (int64_t d : shape->dims()) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " has shape ", shape->ToString(), ", which is not a valid size"));
      }
    }
    const int64_t carried = static_cast<int64_t>(proto.ByteSizeLong());
    if (n > std::max<int64_t>(1024, carried)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " declares shape ", shape->ToString(), " (", n, " elements) but carries only ",
          carried, " bytes"));
    }
  }
  auto t = TensorFromProto(proto);
  if (!t.ok()) return Prefixed(what, t.status());
  return t;
}

// Input.example_list(_with_context) as a DT_STRING [n] tensor of
// serialized tf.Examples (each merged with the context, when there is one:
// the example's features win).
absl::StatusOr<Tensor> SerializedExamples(const tfs::Input& input) {
  std::vector<std::string> serialized;
  if (input.has_example_list()) {
    for (const auto& e : input.example_list().examples()) {
      serialized.push_back(e.SerializeAsString());
    }
  } else if (input.has_example_list_with_context()) {
    const auto& list = input.example_list_with_context();
    for (const auto& e : list.examples()) {
      plexus::tf::Example merged = list.context();
      merged.MergeFrom(e);
      serialized.push_back(merged.SerializeAsString());
    }
  }
  if (serialized.empty()) {
    return absl::InvalidArgumentError(
        "the request's input has no examples (input.example_list or "
        "input.example_list_with_context)");
  }
  const int64_t n = static_cast<int64_t>(serialized.size());
  return Tensor::FromStrings(Shape{n}, std::move(serialized));
}

// The signature of a Classify or Regress request (method
// tensorflow/serving/VERB) and its input of serialized examples: "inputs",
// or its only input.
absl::StatusOr<std::pair<const Signature*, std::string>> ExampleSignature(
    const Servable& s, const std::string& key, const std::string& verb) {
  auto sig = s.FindSignature(key);
  if (!sig.ok()) return sig.status();
  const std::string method = "tensorflow/serving/" + verb;
  std::string input;
  if ((*sig)->inputs.count("inputs")) {
    input = "inputs";
  } else if ((*sig)->inputs.size() == 1) {
    input = (*sig)->inputs.begin()->first;
  }
  if ((*sig)->method_name != method || input.empty() ||
      (*sig)->inputs.at(input).dtype != DataType::kString) {
    return absl::InvalidArgumentError(absl::StrCat(
        verb, " needs a signature with method '", method, "' taking serialized tf.Examples; ",
        "signature '", (*sig)->key, "' of model '", s.name(), "' has method '",
        (*sig)->method_name, "'"));
  }
  return std::make_pair(*sig, input);
}

absl::Status OutputError(const std::string& name, const Tensor& t, const std::string& wanted) {
  return absl::InvalidArgumentError(absl::StrCat("output '", name, "' is ", DataTypeName(t.dtype()),
                                                 " ", ShapeToString(t.shape()), "; expected ",
                                                 wanted));
}

// Element i of a float or double output as a float.
absl::StatusOr<float> FloatAt(const std::string& name, const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return static_cast<float>(t.data<double>()[i]);
    default: return OutputError(name, t, "float");
  }
}

absl::Status ToClassificationResult(const std::map<std::string, Tensor>& out, int64_t n,
                                    tfs::ClassificationResult* result) {
  auto c = out.find("classes");
  auto sc = out.find("scores");
  const Tensor* classes = c == out.end() ? nullptr : &c->second;
  const Tensor* scores = sc == out.end() ? nullptr : &sc->second;
  if (!classes && !scores) {
    return absl::InvalidArgumentError(
        "the classification signature has neither a 'classes' nor a 'scores' output");
  }
  if (classes && (classes->dtype() != DataType::kString || classes->dims() != 2 ||
                  classes->shape()[0] != n)) {
    return OutputError("classes", *classes, absl::StrCat("strings [", n, ", classes]"));
  }
  if (scores && (scores->dims() != 2 || scores->shape()[0] != n)) {
    return OutputError("scores", *scores, absl::StrCat("floats [", n, ", classes]"));
  }
  if (classes && scores && classes->shape() != scores->shape()) {
    return OutputError("scores", *scores, absl::StrCat("the shape of 'classes', ",
                                                       ShapeToString(classes->shape())));
  }
  const int64_t k = classes ? classes->shape()[1] : scores->shape()[1];
  for (int64_t i = 0; i < n; ++i) {
    tfs::Classifications* row = result->add_classifications();
    for (int64_t j = 0; j < k; ++j) {
      tfs::Class* cls = row->add_classes();
      if (classes) cls->set_label(classes->strings()[i * k + j]);
      if (scores) {
        auto v = FloatAt("scores", *scores, i * k + j);
        if (!v.ok()) return v.status();
        cls->set_score(*v);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ToRegressionResult(const std::map<std::string, Tensor>& out, int64_t n,
                                tfs::RegressionResult* result) {
  auto it = out.find("outputs");
  if (it == out.end()) {
    return absl::InvalidArgumentError("the regression signature has no 'outputs' output");
  }
  const Tensor& t = it->second;
  if (t.dims() < 1 || t.dims() > 2 || t.shape()[0] != n || (t.dims() == 2 && t.shape()[1] != 1)) {
    return OutputError("outputs", t, absl::StrCat("floats [", n, "] or [", n, ", 1]"));
  }
  for (int64_t i = 0; i < n; ++i) {
    auto v = FloatAt("outputs", t, i);
    if (!v.ok()) return v.status();
    result->add_regressions()->set_value(*v);
  }
  return absl::OkStatus();
}

class PredictionServiceImpl final : public tfs::PredictionService::Service {
 public:
  explicit PredictionServiceImpl(const ServiceEnv* env) : env_(*env) {}

  grpc::Status Predict(grpc::ServerContext* context, const tfs::PredictRequest* request,
                       tfs::PredictResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(DoPredict(*context, *request, response, call));
  }

  grpc::Status GetModelMetadata(grpc::ServerContext* context,
                                const tfs::GetModelMetadataRequest* request,
                                tfs::GetModelMetadataResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(DoMetadata(*request, response, call));
  }

  grpc::Status Classify(grpc::ServerContext* context, const tfs::ClassificationRequest* request,
                        tfs::ClassificationResponse* response) override {
    CallMetrics call(env_, kProtocol);
    std::map<std::string, Tensor> out;
    int64_t n = 0;
    absl::Status s = RunExamples(*context, request->model_spec(), request->input(), "classify",
                                 response->mutable_model_spec(), &out, &n, call);
    if (s.ok()) s = ToClassificationResult(out, n, response->mutable_result());
    return call.Finish(s);
  }

  grpc::Status Regress(grpc::ServerContext* context, const tfs::RegressionRequest* request,
                       tfs::RegressionResponse* response) override {
    CallMetrics call(env_, kProtocol);
    std::map<std::string, Tensor> out;
    int64_t n = 0;
    absl::Status s = RunExamples(*context, request->model_spec(), request->input(), "regress",
                                 response->mutable_model_spec(), &out, &n, call);
    if (s.ok()) s = ToRegressionResult(out, n, response->mutable_result());
    return call.Finish(s);
  }

  grpc::Status MultiInference(grpc::ServerContext* context,
                              const tfs::MultiInferenceRequest* request,
                              tfs::MultiInferenceResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(absl::UnimplementedError(
        "plexus-serve does not implement MultiInference; call Classify or Regress for each task"));
  }

 private:
  absl::Status DoPredict(const grpc::ServerContext& context, const tfs::PredictRequest& request,
                         tfs::PredictResponse* response, CallMetrics& call) {
    auto s = FindServable(env_, request.model_spec(), call);
    if (!s.ok()) return s.status();
    auto sig = (*s)->FindSignature(request.model_spec().signature_name());
    if (!sig.ok()) return sig.status();
    RunRequest run;
    run.signature = (*sig)->key;
    for (const auto& [name, proto] : request.inputs()) {
      auto t = DecodeInput(name, proto);
      if (!t.ok()) return t.status();
      run.inputs[name] = *std::move(t);
    }
    run.output_filter.assign(request.output_filter().begin(), request.output_filter().end());
    run.deadline = RunDeadline(context, env_);
    auto out = (*s)->Run(run);
    if (!out.ok()) return out.status();
    auto& outputs = *response->mutable_outputs();
    for (const auto& [name, t] : *out) {
      auto proto = TensorToProto(t);
      if (!proto.ok()) return Prefixed(absl::StrCat("output '", name, "'"), proto.status());
      outputs[name] = *std::move(proto);
    }
    FillSpec(**s, (*sig)->key, response->mutable_model_spec());
    return absl::OkStatus();
  }

  absl::Status DoMetadata(const tfs::GetModelMetadataRequest& request,
                          tfs::GetModelMetadataResponse* response, CallMetrics& call) {
    if (request.metadata_field_size() == 0) {
      return absl::InvalidArgumentError(
          "GetModelMetadataRequest needs metadata_field; the one there is: signature_def");
    }
    for (const std::string& field : request.metadata_field()) {
      if (field != "signature_def") {
        return absl::InvalidArgumentError(absl::StrCat(
            "metadata_field '", field, "' is not supported; the one there is: signature_def"));
      }
    }
    auto s = FindServable(env_, request.model_spec(), call);
    if (!s.ok()) return s.status();
    tfs::SignatureDefMap signatures;
    *signatures.mutable_signature_def() = (*s)->model().meta_graph().signature_def();
    (*response->mutable_metadata())["signature_def"].PackFrom(signatures);
    FillSpec(**s, "", response->mutable_model_spec());
    return absl::OkStatus();
  }

  // Classify and Regress: the examples run through the signature; `n` is
  // the number of examples.
  absl::Status RunExamples(const grpc::ServerContext& context, const tfs::ModelSpec& spec,
                           const tfs::Input& input, const std::string& verb,
                           tfs::ModelSpec* response_spec, std::map<std::string, Tensor>* out,
                           int64_t* n, CallMetrics& call) {
    auto s = FindServable(env_, spec, call);
    if (!s.ok()) return s.status();
    auto sig = ExampleSignature(**s, spec.signature_name(), verb);
    if (!sig.ok()) return sig.status();
    auto examples = SerializedExamples(input);
    if (!examples.ok()) return examples.status();
    *n = examples->shape()[0];
    RunRequest run;
    run.signature = sig->first->key;
    run.inputs[sig->second] = *std::move(examples);
    const std::vector<std::string> wanted =
        verb == "classify" ? std::vector<std::string>{"classes", "scores"}
                           : std::vector<std::string>{"outputs"};
    for (const std::string& name : wanted) {
      if (sig->first->outputs.count(name)) run.output_filter.push_back(name);
    }
    run.deadline = RunDeadline(context, env_);
    auto result = (*s)->Run(run);
    if (!result.ok()) return result.status();
    *out = *std::move(result);
    FillSpec(**s, sig->first->key, response_spec);
    return absl::OkStatus();
  }

  const ServiceEnv& env_;
};

tfs::ModelVersionStatus::State StateOf(const std::string& state) {
  tfs::ModelVersionStatus::State value = tfs::ModelVersionStatus::UNKNOWN;
  if (!tfs::ModelVersionStatus::State_Parse(state, &value)) return tfs::ModelVersionStatus::UNKNOWN;
  return value;
}

class ModelServiceImpl final : public tfs::ModelService::Service {
 public:
  explicit ModelServiceImpl(const ServiceEnv* env) : env_(*env) {}

  grpc::Status GetModelStatus(grpc::ServerContext* context,
                              const tfs::GetModelStatusRequest* request,
                              tfs::GetModelStatusResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(DoStatus(request->model_spec(), response, call));
  }

  grpc::Status HandleReloadConfigRequest(grpc::ServerContext* context,
                                         const tfs::ReloadConfigRequest* request,
                                         tfs::ReloadConfigResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(absl::UnimplementedError(
        "plexus-serve does not take model configs through gRPC (HandleReloadConfigRequest); "
        "give them in --model_config_file, and add versions under the base paths"));
  }

 private:
  absl::Status DoStatus(const tfs::ModelSpec& spec, tfs::GetModelStatusResponse* response,
                        CallMetrics& call) {
    if (spec.name().empty()) {
      return absl::InvalidArgumentError("the request's model_spec has no model name");
    }
    call.set_model(spec.name());
    auto all = env_.models->Status(spec.name());
    if (!all.ok()) return all.status();
    std::optional<int64_t> only;
    if (spec.has_version()) only = spec.version().value();
    if (!spec.version_label().empty()) {
      auto s = env_.models->Find(spec.name(), std::nullopt, spec.version_label());
      if (!s.ok()) return s.status();
      only = (*s)->version();
    }
    if (only) call.set_version(*only);
    for (const VersionStatus& v : *all) {
      if (only && v.version != *only) continue;
      tfs::ModelVersionStatus* out = response->add_model_version_status();
      out->set_version(v.version);
      out->set_state(StateOf(v.state));
      out->mutable_status()->set_error_code(static_cast<int>(v.status.code()));
      out->mutable_status()->set_error_message(std::string(v.status.message()));
    }
    if (only && response->model_version_status_size() == 0) {
      return absl::NotFoundError(
          absl::StrCat("model '", spec.name(), "' has no version ", *only));
    }
    return absl::OkStatus();
  }

  const ServiceEnv& env_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewTfsPredictionService(const ServiceEnv* env) {
  return std::make_unique<PredictionServiceImpl>(env);
}

std::unique_ptr<grpc::Service> NewTfsModelService(const ServiceEnv* env) {
  return std::make_unique<ModelServiceImpl>(env);
}

}  // namespace plexus::serve::grpc_internal
