// KServe's Open Inference Protocol (v2) over REST, with Triton's binary
// tensor data extension: infer requests and responses, model and server
// metadata, errors. Pure functions; no HTTP here.
//
// Binary data (the extension): an input with "parameters":
// {"binary_data_size": N} has its N bytes after the JSON header, inputs in
// the order the request lists them; the header's length comes in the HTTP
// header Inference-Header-Content-Length. Elements are little-endian,
// row-major; BOOL is one byte (any nonzero byte reads as true); BYTES
// elements are each a 4-byte little-endian length and the bytes. Outputs
// asked for with "parameters": {"binary_data": true} (or all of them with
// the request parameter "binary_data_output": true) come back the same way.
//
// JSON data: as json_tensor.h reads and writes it (flat or nested `data`;
// BYTES as strings, and {"b64": ...} objects are accepted too). A BYTES
// output that is not valid UTF-8 is written as {"b64": ...}, which a JSON
// string cannot be; ask for binary outputs to get the bytes as they are.
#ifndef PLEXUS_SERVE_KSERVE_JSON_H_
#define PLEXUS_SERVE_KSERVE_JSON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json_tensor.h"
#include "plexus/saved_model.h"
#include "plexus/tensor.h"
#include "servable.h"

namespace plexus::serve {

// The server's version in GET /v2; the build may define it.
#ifndef PLEXUS_SERVE_VERSION
#define PLEXUS_SERVE_VERSION "0.1.0"
#endif

struct V2RequestedOutput {
  std::string name;
  bool binary = false;
};

struct V2InferRequest {
  std::string id;
  // The key find_signature returned for the request parameter
  // "signature_name" ("" = the default).
  std::string signature = "";
  std::map<std::string, Tensor> inputs;
  // The outputs the request lists, in its order; empty = all of them.
  std::vector<V2RequestedOutput> outputs;
  bool binary_outputs_default = false;  // parameters.binary_data_output
};

// `body` is the JSON header alone, or (with `header_length`) the header
// followed by the binary inputs. INVALID_ARGUMENT for malformed JSON, an
// unknown input (naming the expected ones), a missing or repeated input, a
// datatype other than the signature's ("input 'x' has datatype FP64, the
// model expects FP32"), a shape that is negative or overflows, data whose
// count is not the shape's product, binary sizes that do not match the
// dtype and shape or do not add up to the bytes after the header (a
// truncated body names the input), an unknown output; find_signature's own
// status when the signature is not there.
absl::StatusOr<V2InferRequest> ParseV2Infer(std::string_view body,
                                            std::optional<size_t> header_length,
                                            const FindSignatureFn& find_signature);

// A tensor from its v2 binary form (the binary tensor extension's parts and
// gRPC's raw_input_contents): row-major little-endian values, one byte per
// BOOL, and BYTES elements each led by a 4-byte little-endian length. The
// byte count must match `dtype` and `shape` exactly; INVALID_ARGUMENT names
// `what` otherwise.
absl::StatusOr<Tensor> TensorFromBinary(std::string_view bytes, DataType dtype, const Shape& shape,
                                        const std::string& what);
// Appends the v2 binary form of `t` to `out`; false when it has none (a
// dtype v2 cannot name, or memory the host cannot read).
bool AppendBinary(const Tensor& t, std::string* out);

struct V2Response {
  std::string body;
  // Set when binary outputs follow the JSON: its length (for the HTTP
  // header Inference-Header-Content-Length).
  std::optional<size_t> header_length;
};

// {"model_name", "model_version": "N", "id" (when the request had one),
// "outputs": [{"name", "datatype", "shape", "data": [flat]} or, binary,
// "parameters": {"binary_data_size": n}]}: the outputs the request listed
// (in its order; names not in `outputs` are skipped), else every output.
V2Response WriteV2InferResponse(const std::string& model, int64_t version, const std::string& id,
                                const std::map<std::string, Tensor>& outputs,
                                const V2InferRequest& request);

// {"name", "versions": ["1", "2"], "platform": "tensorflow_savedmodel",
// "inputs": [{"name", "datatype", "shape"}], "outputs": [...]} of the
// signature serving_default (or the only one); unknown dimensions are -1,
// and a shape of unknown rank is [-1].
std::string WriteV2ModelMetadata(const Servable& s, const std::vector<int64_t>& versions);
std::string WriteV2ModelMetadata(const std::string& name, const std::vector<int64_t>& versions,
                                 const std::map<std::string, Signature>& signatures);

// {"name": "plexus-serve", "version": PLEXUS_SERVE_VERSION, "extensions": [...]}.
std::string WriteV2ServerMetadata(const std::vector<std::string>& extensions);

// {"error": "message"}.
std::string WriteV2Error(const absl::Status& s);

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_KSERVE_JSON_H_
