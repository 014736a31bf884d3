// KServe's Open Inference Protocol (v2) over gRPC: inference.
// GRPCInferenceService (ServerLive, ServerReady, ModelReady,
// ServerMetadata, ModelMetadata, ModelInfer), as tritonclient.grpc uses it.
//
// ModelInfer reads each input from raw_input_contents (one entry per input,
// in order: elements row-major, little-endian; BOOL one byte, any nonzero
// byte true; BYTES each a 4-byte little-endian length and the bytes) or
// from its typed `contents`, and answers every output in
// raw_output_contents, laid out the same way. The signature is the request
// parameter "signature_name" (a string), else serving_default.
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpc_server.h"
#include "kserve_json.h"
#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "v2_datatype.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "raw tensor contents are little-endian; this code copies host memory as it is");

#ifndef PLEXUS_SERVE_VERSION
#define PLEXUS_SERVE_VERSION "0.1.0"
#endif

namespace plexus::serve::grpc_internal {
namespace {

namespace v2 = ::inference;
using InputTensor = v2::ModelInferRequest::InferInputTensor;

constexpr char kProtocol[] = "grpc_v2";

// The v2 name, or TensorFlow's when v2 has none.
std::string DatatypeName(DataType dtype) {
  const char* name = V2DatatypeName(dtype);
  return *name ? std::string(name) : DataTypeName(dtype);
}

absl::StatusOr<std::optional<int64_t>> ParseVersion(const std::string& model,
                                                    const std::string& v) {
  if (v.empty()) return std::optional<int64_t>();
  int64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("version '", v, "' of model '", model, "' is not a positive integer"));
  }
  return std::optional<int64_t>(n);
}

absl::StatusOr<std::shared_ptr<Servable>> FindServable(const ServiceEnv& env,
                                                       const std::string& name,
                                                       const std::string& version,
                                                       CallMetrics& call) {
  if (name.empty()) return absl::InvalidArgumentError("the request names no model");
  call.set_model(name);
  auto v = ParseVersion(name, version);
  if (!v.ok()) return v.status();
  auto s = env.models->Find(name, *v);
  if (s.ok()) call.set_version((*s)->version());
  return s;
}

// The declared shape; INVALID_ARGUMENT naming `what` for a negative
// dimension or an element count that overflows.
absl::StatusOr<Shape> ShapeOf(const InputTensor& input, const std::string& what,
                              int64_t* count) {
  Shape shape(input.shape().begin(), input.shape().end());
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", ShapeToString(shape),
                                                     ", which is not a valid size"));
    }
  }
  *count = n;
  return shape;
}

// Typed contents: `values` must hold exactly `count` elements, each in the
// range of T.
template <typename T, typename Values>
absl::StatusOr<Tensor> FromValues(const Values& values, const char* field, DataType dtype,
                                  const Shape& shape, int64_t count, const std::string& what) {
  if (values.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has ", values.size(), " values in contents.", field, " (and no raw_input_contents)",
        " but ", DatatypeName(dtype), " ", ShapeToString(shape), " needs ", count));
  }
  auto t = Tensor::AllocateHost(dtype, shape);
  if (!t.ok()) return t.status();
  T* out = t->template data<T>();
  for (int64_t i = 0; i < count; ++i) {
    const auto v = values.Get(static_cast<int>(i));
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // int_contents and uint_contents carry the narrower types too.
      if (static_cast<decltype(v)>(static_cast<T>(v)) != v) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": value ", v, " at ", i,
                                                       " is out of range for ",
                                                       DatatypeName(dtype)));
      }
    }
    out[i] = static_cast<T>(v);
  }
  return t;
}

absl::StatusOr<Tensor> TensorFromContents(const v2::InferTensorContents& c, DataType dtype,
                                          const Shape& shape, int64_t count,
                                          const std::string& what) {
  auto from = [&](auto type, const auto& values, const char* field) {
    return FromValues<decltype(type)>(values, field, dtype, shape, count, what);
  };
  switch (dtype) {
    case DataType::kBool: return from(bool(), c.bool_contents(), "bool_contents");
    case DataType::kInt8: return from(int8_t(), c.int_contents(), "int_contents");
    case DataType::kInt16: return from(int16_t(), c.int_contents(), "int_contents");
    case DataType::kInt32: return from(int32_t(), c.int_contents(), "int_contents");
    case DataType::kInt64: return from(int64_t(), c.int64_contents(), "int64_contents");
    case DataType::kUInt8: return from(uint8_t(), c.uint_contents(), "uint_contents");
    case DataType::kUInt16: return from(uint16_t(), c.uint_contents(), "uint_contents");
    case DataType::kUInt32: return from(uint32_t(), c.uint_contents(), "uint_contents");
    case DataType::kUInt64: return from(uint64_t(), c.uint64_contents(), "uint64_contents");
    case DataType::kFloat: return from(float(), c.fp32_contents(), "fp32_contents");
    case DataType::kDouble: return from(double(), c.fp64_contents(), "fp64_contents");
    case DataType::kString: {
      if (c.bytes_contents_size() != count) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " has ", c.bytes_contents_size(), " values in contents.bytes_contents (and no ",
            "raw_input_contents) but BYTES ", ShapeToString(shape), " needs ", count));
      }
      return Tensor::FromStrings(shape, {c.bytes_contents().begin(), c.bytes_contents().end()});
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is ", DatatypeName(dtype), ", which has no typed contents field: send it in ",
          "raw_input_contents"));
  }
}

// The request's inputs as tensors of `sig`.
absl::Status ReadInputs(const v2::ModelInferRequest& request, const Signature& sig,
                        const std::string& model, RunRequest* run) {
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request has ", request.raw_input_contents_size(),
                     " raw_input_contents for ", request.inputs_size(),
                     " inputs; give one per input, in the order of the inputs"));
  }
  for (int i = 0; i < request.inputs_size(); ++i) {
    const InputTensor& input = request.inputs(i);
    const std::string what = absl::StrCat("input '", input.name(), "'");
    if (run->inputs.count(input.name())) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is given twice"));
    }
    auto dtype = DataTypeFromV2(input.datatype());
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", dtype.status().message()));
    }
    auto spec = sig.inputs.find(input.name());
    if (spec != sig.inputs.end() && spec->second.dtype != *dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has datatype ", input.datatype(), "; signature '", sig.key, "' of model '", model,
          "' expects ", DatatypeName(spec->second.dtype)));
    }
    int64_t count = 0;
    auto shape = ShapeOf(input, what, &count);
    if (!shape.ok()) return shape.status();
    if (raw && input.has_contents()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has contents although the request uses raw_input_contents"));
    }
    auto t = raw ? TensorFromBinary(request.raw_input_contents(i), *dtype, *shape, what)
                 : TensorFromContents(input.contents(), *dtype, *shape, count, what);
    if (!t.ok()) return t.status();
    run->inputs[input.name()] = *std::move(t);
  }
  return absl::OkStatus();
}

// Appends the raw form of `t` (as raw_input_contents); false when it has none.
absl::Status WriteOutputs(const std::map<std::string, Tensor>& out,
                          const std::vector<std::string>& order, v2::ModelInferResponse* response) {
  for (const std::string& name : order) {
    auto it = out.find(name);
    if (it == out.end()) continue;
    const Tensor& t = it->second;
    v2::ModelInferResponse::InferOutputTensor* o = response->add_outputs();
    o->set_name(name);
    o->set_datatype(DatatypeName(t.dtype()));
    for (int64_t d : t.shape()) o->add_shape(d);
    if (!AppendBinary(t, response->add_raw_output_contents())) {
      return absl::UnimplementedError(absl::StrCat("output '", name, "' is ",
                                                   DataTypeName(t.dtype()),
                                                   ", which the v2 protocol cannot carry"));
    }
  }
  return absl::OkStatus();
}

using TensorMetadataList =
    google::protobuf::RepeatedPtrField<v2::ModelMetadataResponse::TensorMetadata>;

void AddTensorMetadata(const std::map<std::string, SignatureTensor>& tensors,
                       TensorMetadataList* out) {
  for (const auto& [name, t] : tensors) {
    auto* m = out->Add();
    m->set_name(name);
    m->set_datatype(DatatypeName(t.dtype));
    if (!t.shape.rank_known()) {
      m->add_shape(-1);
      continue;
    }
    for (int64_t d : t.shape.dims()) m->add_shape(d < 0 ? -1 : d);
  }
}

class InferenceServiceImpl final : public v2::GRPCInferenceService::Service {
 public:
  explicit InferenceServiceImpl(const ServiceEnv* env) : env_(*env) {}

  grpc::Status ServerLive(grpc::ServerContext*, const v2::ServerLiveRequest*,
                          v2::ServerLiveResponse* response) override {
    CallMetrics call(env_, kProtocol);
    response->set_live(true);
    return call.Finish(absl::OkStatus());
  }

  // Not ready while a model has no version serving or the server drains.
  grpc::Status ServerReady(grpc::ServerContext*, const v2::ServerReadyRequest*,
                           v2::ServerReadyResponse* response) override {
    CallMetrics call(env_, kProtocol);
    response->set_ready(!env_.draining && env_.models->Ready());
    return call.Finish(absl::OkStatus());
  }

  // ready = false (not an error) for a model or version not serving, as
  // Triton answers.
  grpc::Status ModelReady(grpc::ServerContext*, const v2::ModelReadyRequest* request,
                          v2::ModelReadyResponse* response) override {
    CallMetrics call(env_, kProtocol);
    auto s = FindServable(env_, request->name(), request->version(), call);
    response->set_ready(s.ok() && !env_.draining);
    return call.Finish(absl::OkStatus());
  }

  grpc::Status ServerMetadata(grpc::ServerContext*, const v2::ServerMetadataRequest*,
                              v2::ServerMetadataResponse* response) override {
    CallMetrics call(env_, kProtocol);
    response->set_name("plexus-serve");
    response->set_version(PLEXUS_SERVE_VERSION);
    // As GET /v2 says: the binary tensor extension is the REST side's.
    response->add_extensions("binary_tensor_data");
    return call.Finish(absl::OkStatus());
  }

  // The inputs and outputs of serving_default (or the only signature).
  grpc::Status ModelMetadata(grpc::ServerContext*, const v2::ModelMetadataRequest* request,
                             v2::ModelMetadataResponse* response) override {
    CallMetrics call(env_, kProtocol);
    auto s = FindServable(env_, request->name(), request->version(), call);
    if (!s.ok()) return call.Finish(s.status());
    response->set_name((*s)->name());
    const auto serving = env_.models->Serving();  // kept: the loop reads into it
    auto versions = serving.find((*s)->name());
    if (versions != serving.end()) {
      for (int64_t v : versions->second) response->add_versions(absl::StrCat(v));
    }
    response->set_platform("tensorflow_savedmodel");
    auto sig = (*s)->FindSignature("");
    if (sig.ok()) {
      AddTensorMetadata((*sig)->inputs, response->mutable_inputs());
      AddTensorMetadata((*sig)->outputs, response->mutable_outputs());
    }
    return call.Finish(absl::OkStatus());
  }

  grpc::Status ModelInfer(grpc::ServerContext* context, const v2::ModelInferRequest* request,
                          v2::ModelInferResponse* response) override {
    CallMetrics call(env_, kProtocol);
    return call.Finish(DoInfer(*context, *request, response, call));
  }

 private:
  absl::Status DoInfer(const grpc::ServerContext& context, const v2::ModelInferRequest& request,
                       v2::ModelInferResponse* response, CallMetrics& call) {
    auto s = FindServable(env_, request.model_name(), request.model_version(), call);
    if (!s.ok()) return s.status();
    std::string key;
    auto param = request.parameters().find("signature_name");
    if (param != request.parameters().end()) {
      if (param->second.parameter_choice_case() != v2::InferParameter::kStringParam) {
        return absl::InvalidArgumentError(
            "parameter signature_name must be a string (string_param)");
      }
      key = param->second.string_param();
    }
    auto sig = (*s)->FindSignature(key);
    if (!sig.ok()) return sig.status();
    RunRequest run;
    run.signature = (*sig)->key;
    absl::Status read = ReadInputs(request, **sig, (*s)->name(), &run);
    if (!read.ok()) return read;
    std::vector<std::string> order;
    for (const auto& o : request.outputs()) {
      if (std::find(order.begin(), order.end(), o.name()) == order.end()) order.push_back(o.name());
    }
    run.output_filter = order;
    run.deadline = RunDeadline(context, env_);
    auto out = (*s)->Run(run);
    if (!out.ok()) return out.status();
    if (order.empty()) {
      for (const auto& [name, t] : *out) order.push_back(name);
    }
    response->set_model_name((*s)->name());
    response->set_model_version(absl::StrCat((*s)->version()));
    response->set_id(request.id());
    return WriteOutputs(*out, order, response);
  }

  const ServiceEnv& env_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewKserveService(const ServiceEnv* env) {
  return std::make_unique<InferenceServiceImpl>(env);
}

}  // namespace plexus::serve::grpc_internal
