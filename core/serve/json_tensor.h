// Tensors in JSON, the part TensorFlow Serving's REST API and KServe's v2
// protocol share: nested lists of numbers, booleans and strings to host
// tensors and back. Pure functions; no HTTP here.
//
// Reading (what each dtype accepts):
//   float, double, half, bfloat16: a JSON number, NaN, Infinity or
//     -Infinity (documents are parsed with kParseNanAndInfFlag). A finite
//     number beyond the dtype's range is an error, not an infinity.
//   int8..int64, uint8..uint64: an integer in the dtype's range. An
//     integral number written as a decimal (2.0, 1e3) is accepted; 1.5 is
//     an error.
//   bool: true or false only (as TensorFlow Serving; 0 and 1 are errors).
//   string: a JSON string, or {"b64": "..."} with standard or URL-safe
//     base64 (bad base64 is an error).
// The shape comes from the nesting (a bare value is a scalar); ragged
// lists are errors. Every error is INVALID_ARGUMENT and names `what`
// ("input 'x'"), the element ("[1][0]") and what was expected. Nothing
// is allocated before the structure has been checked, so a small body
// never allocates a big tensor.
//
// Writing: nested lists (a scalar as a bare value); NaN and infinities as
// NaN, Infinity, -Infinity; floats, halfs and bfloat16s with the shortest
// digits that read back to the same float; strings as {"b64": ...} when
// asked or when they are not valid UTF-8. Dtypes JSON cannot carry
// (complex, resource, variant) and tensors outside host memory are written
// as null.
#ifndef PLEXUS_SERVE_JSON_TENSOR_H_
#define PLEXUS_SERVE_JSON_TENSOR_H_

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "plexus/dtype.h"
#include "plexus/saved_model.h"
#include "plexus/shape.h"
#include "plexus/tensor.h"

namespace plexus::serve {

// The writer every codec uses: NaN and infinities are written as NaN,
// Infinity and -Infinity (TensorFlow Serving's JSON), not refused.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

// The signature a request names ("" = the default), for the parsers of
// tfs_json.h and kserve_json.h; its status goes back to the caller
// unchanged (NOT_FOUND from Servable::FindSignature).
using FindSignatureFn = std::function<absl::StatusOr<const Signature*>(const std::string&)>;

// Deepest nesting read as a tensor.
inline constexpr int kMaxJsonRank = 64;

// Parses `text` into `doc` (NaN and Infinity accepted; parsed iteratively,
// so deep nesting cannot overflow the stack). INVALID_ARGUMENT names
// `what` ("the request body"), RapidJSON's message and the byte offset, or
// says what was found when the document is not an object.
absl::Status ParseJsonObject(std::string_view text, const std::string& what,
                             rapidjson::Document* doc);

// A scalar or nested lists as a host tensor of `dtype`.
absl::StatusOr<Tensor> TensorFromJson(const rapidjson::Value& v, DataType dtype,
                                      const std::string& what);

// KServe's `data`: flat or nested, read in row-major order into a tensor of
// the declared `shape`. The number of values must equal the shape's
// product (computed with overflow checks before anything is allocated);
// nested data must not be ragged.
absl::StatusOr<Tensor> TensorFromJsonWithShape(const rapidjson::Value& data, DataType dtype,
                                               const Shape& shape, const std::string& what);

// TensorFlow Serving's row format: one value per instance, stacked along a
// new dimension 0. Every row must have the first row's shape; an error
// names the row as the first index ("[3][1]").
absl::StatusOr<Tensor> TensorFromJsonRows(const std::vector<const rapidjson::Value*>& rows,
                                          DataType dtype, const std::string& what);

// The product of `shape` as a number of elements; INVALID_ARGUMENT naming
// `what` and the shape for a negative dimension or an int64 overflow.
absl::StatusOr<int64_t> CheckedNumElements(const Shape& shape, const std::string& what);

// Nested lists; a scalar as a bare value.
void TensorToJson(const Tensor& t, bool strings_as_b64, JsonWriter& w);
// Every element in one flat list, row-major (KServe's `data`).
void TensorToJsonFlat(const Tensor& t, bool strings_as_b64, JsonWriter& w);
// Row `row` of dimension 0, nested (TensorFlow Serving's "predictions").
// The tensor must have at least one dimension and row < dim 0.
void TensorRowToJson(const Tensor& t, int64_t row, bool strings_as_b64, JsonWriter& w);

// Element `index` (row-major) as a bare value; null when out of range.
void TensorElementToJson(const Tensor& t, int64_t index, bool strings_as_b64, JsonWriter& w);

// Bytes as a JSON string, or as {"b64": ...} when `as_b64` or when they
// are not valid UTF-8 (which a JSON string cannot hold).
void WriteJsonBytes(std::string_view bytes, bool as_b64, JsonWriter& w);

// True for {"b64": <string>} (exactly that one member).
bool IsB64Object(const rapidjson::Value& v);
// Standard base64 (padding optional), else URL-safe base64.
absl::StatusOr<std::string> DecodeBase64(std::string_view text, const std::string& what);
bool IsValidUtf8(std::string_view s);

// {"error": "message"}: the status's message only, JSON-escaped, with bytes
// that are not UTF-8 replaced by U+FFFD.
std::string ErrorJson(const absl::Status& s);

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_JSON_TENSOR_H_
