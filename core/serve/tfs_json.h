// TensorFlow Serving's REST API (v1) bodies: predict in row ("instances")
// and columnar ("inputs") form, classify and regress over tf.Examples,
// model status and metadata, errors. Pure functions; no HTTP here.
#ifndef PLEXUS_SERVE_TFS_JSON_H_
#define PLEXUS_SERVE_TFS_JSON_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json_tensor.h"
#include "meta_graph.pb.h"
#include "model_manager.h"
#include "plexus/saved_model.h"
#include "plexus/tensor.h"
#include "servable.h"

namespace plexus::serve {

struct TfsPredictRequest {
  std::string signature_name;  // the key find_signature returned
  std::map<std::string, Tensor> inputs;
  bool row_format = false;     // "instances" (answer "predictions")
};

// {"signature_name"?: s, "instances": [...]} or {"signature_name"?: s,
// "inputs": value | {name: value}}. Row format: with one signature input
// each instance is its value (or {name: value}); with several, each is an
// object {name: value} naming every input; the instances are stacked along
// a new dimension 0 and must agree in shape. Columnar: a bare value for a
// one-input signature, else an object naming every input. Dtypes come from
// the signature; shapes are checked later (Servable::Run). Errors are
// INVALID_ARGUMENT (malformed JSON with RapidJSON's message and the byte
// offset, both or neither of instances/inputs, unknown input names with
// the expected ones, missing inputs, ragged instances, wrong element kinds)
// or find_signature's own.
absl::StatusOr<TfsPredictRequest> ParseTfsPredict(std::string_view body,
                                                  const FindSignatureFn& find_signature);

// Row format: {"predictions": [row, ...]}, a row being the one output's
// value or {name: value} for several; when the outputs do not share
// dimension 0 (or one is a scalar) the columnar form is written instead.
// Columnar: {"outputs": value} for one output, else {"outputs": {name:
// value}}. String outputs whose key ends in "_bytes" are {"b64": ...}.
std::string WriteTfsPredictResponse(const std::map<std::string, Tensor>& outputs,
                                    bool row_format);

// Classify and regress: {"signature_name"?: s, "context"?: {feature:
// value}, "examples": [{feature: value}, ...]} as serialized tf.Examples
// (a DT_STRING tensor [n]), the context's features merged into each (a
// feature may not be in both). A feature value is a number, a string,
// {"b64": ...} or a flat list of one kind: numbers become an int64_list
// when every one is written as an integer that fits int64, else a
// float_list (so 1.0 is a float, as in TensorFlow Serving); strings and
// b64 objects a bytes_list; an empty list an empty feature.
// `signature_name` gets the name given ("" when none).
absl::StatusOr<Tensor> ParseTfsExamples(std::string_view body, std::string* signature_name);

// {"result": [[[label, score], ...], ...]} from the outputs "classes"
// (strings [n,k]) and "scores" (numbers [n,k]): labels "" without classes,
// scores 0 without scores (TensorFlow Serving's ClassificationResult).
// INVALID_ARGUMENT when neither is there or the shapes are wrong.
absl::StatusOr<std::string> WriteTfsClassifyResponse(const std::map<std::string, Tensor>& outputs);
// {"result": [v, ...]} from the output "outputs" (numbers [n] or [n,1]).
absl::StatusOr<std::string> WriteTfsRegressResponse(const std::map<std::string, Tensor>& outputs);

// {"error": "message"}.
std::string WriteTfsError(const absl::Status& s);

// GetModelStatusResponse: {"model_version_status": [{"version": "2",
// "state": "AVAILABLE", "status": {"error_code": "OK", "error_message":
// ""}}]}, error codes by name ("NOT_FOUND", "UNKNOWN", ...).
std::string WriteTfsModelStatus(const std::vector<VersionStatus>& versions);

// GetModelMetadataResponse: {"model_spec": {"name", "signature_name": "",
// "version": "N"}, "metadata": {"signature_def": {"signature_def": {key:
// SignatureDef}}}}, the SignatureDefs printed as protobuf JSON with proto
// field names and default values ("method_name", "tensor_shape",
// "dtype": "DT_FLOAT", "size": "-1"), __saved_model_init_op left out.
std::string WriteTfsMetadata(const Servable& servable);
std::string WriteTfsMetadata(const std::string& name, int64_t version,
                             const tf::MetaGraphDef& meta_graph);

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_TFS_JSON_H_
