// The JSON codecs of plexus-serve: tensors in JSON, TensorFlow Serving's
// REST bodies, KServe v2 with the binary tensor extension.
#include <cmath>
#include <cstring>
#include <limits>

#include "example.pb.h"
#include "gtest/gtest.h"
#include "json_tensor.h"
#include "kserve_json.h"
#include "tfs_json.h"

namespace plexus::serve {
namespace {

using rapidjson::Document;

Document Json(const std::string& text) {
  Document d;
  d.Parse<rapidjson::kParseNanAndInfFlag>(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

void ExpectError(const absl::Status& s, const std::vector<std::string>& parts,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  EXPECT_EQ(s.code(), code) << s;
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << s << " lacks " << p;
}

absl::Status FromJsonStatus(const std::string& text, DataType dtype) {
  Document d = Json(text);
  return TensorFromJson(d, dtype, "input 'x'").status();
}

Tensor FromJson(const std::string& text, DataType dtype) {
  Document d = Json(text);
  auto t = TensorFromJson(d, dtype, "input 'x'");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

std::string ToJson(const Tensor& t, bool b64 = false, bool flat = false) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  flat ? TensorToJsonFlat(t, b64, w) : TensorToJson(t, b64, w);
  return sb.GetString();
}

SignatureTensor Info(DataType dtype, PartialShape shape = PartialShape()) {
  SignatureTensor t;
  t.tensor_name = "t:0";
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

// serving_default: x float [?,3], y int64 [?]; "one": x float; outputs
// "out" (float) and "label" (string).
std::map<std::string, Signature> Signatures() {
  std::map<std::string, Signature> sigs;
  Signature& two = sigs["serving_default"];
  two.key = "serving_default";
  two.inputs["x"] = Info(DataType::kFloat, PartialShape({-1, 3}));
  two.inputs["y"] = Info(DataType::kInt64, PartialShape({-1}));
  two.outputs["out"] = Info(DataType::kFloat, PartialShape({-1}));
  two.outputs["label"] = Info(DataType::kString);
  Signature& one = sigs["one"];
  one.key = "one";
  one.inputs["x"] = Info(DataType::kFloat);
  one.outputs["out"] = Info(DataType::kFloat);
  Signature& s = sigs["strings"];
  s.key = "strings";
  s.inputs["s"] = Info(DataType::kString);
  s.outputs["out"] = Info(DataType::kFloat);
  return sigs;
}

FindSignatureFn Finder() {
  static const auto* sigs = new std::map<std::string, Signature>(Signatures());
  return [](const std::string& key) -> absl::StatusOr<const Signature*> {
    auto it = sigs->find(key.empty() ? "serving_default" : key);
    if (it == sigs->end()) return absl::NotFoundError("no signature '" + key + "'");
    return &it->second;
  };
}

// --- Tensors in JSON ---------------------------------------------------------

TEST(JsonTensor, NestedListsAndScalars) {
  Tensor t = FromJson("[[1, 2.5, -3], [4, 5, 6e2]]", DataType::kFloat);
  EXPECT_EQ(t.shape(), Shape({2, 3}));
  EXPECT_EQ(Values<float>(t), std::vector<float>({1, 2.5f, -3, 4, 5, 600}));
  Tensor s = FromJson("7", DataType::kInt32);
  EXPECT_EQ(s.shape(), Shape());
  EXPECT_EQ(s.data<int32_t>()[0], 7);
  EXPECT_EQ(FromJson("[]", DataType::kFloat).shape(), Shape({0}));
  EXPECT_EQ(FromJson("[[], []]", DataType::kFloat).shape(), Shape({2, 0}));
  Tensor b = FromJson("[true, false]", DataType::kBool);
  EXPECT_EQ(Values<bool>(b), std::vector<bool>({true, false}));
  Tensor d = FromJson("[0.1]", DataType::kDouble);
  EXPECT_EQ(d.data<double>()[0], 0.1);
}

TEST(JsonTensor, Integers) {
  EXPECT_EQ(Values<int64_t>(FromJson("[-9223372036854775808, 9223372036854775807, 2.0, 1e3]",
                                     DataType::kInt64)),
            std::vector<int64_t>({std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), 2, 1000}));
  EXPECT_EQ(FromJson("[18446744073709551615]", DataType::kUInt64).data<uint64_t>()[0],
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Values<int8_t>(FromJson("[-128, 127]", DataType::kInt8)), std::vector<int8_t>({-128, 127}));
  ExpectError(FromJsonStatus("[1, 300]", DataType::kInt8),
              {"input 'x' element [1]", "[-128, 127]", "int8", "300"});
  ExpectError(FromJsonStatus("[-1]", DataType::kUInt8), {"[0, 255]", "uint8"});
  ExpectError(FromJsonStatus("[1.5]", DataType::kInt32), {"an integer", "int32", "1.5"});
  ExpectError(FromJsonStatus("[2147483648]", DataType::kInt32), {"int32"});
  ExpectError(FromJsonStatus("[9223372036854775808]", DataType::kInt64), {"int64"});
  ExpectError(FromJsonStatus("[1e19]", DataType::kInt64), {"int64"});
  ExpectError(FromJsonStatus("[NaN]", DataType::kInt32), {"int32"});
}

TEST(JsonTensor, WrongKinds) {
  ExpectError(FromJsonStatus("[[1, 2], [3, \"4\"]]", DataType::kFloat),
              {"input 'x' element [1][1]", "expected a number", "float", "a string \"4\""});
  ExpectError(FromJsonStatus("[1, 0]", DataType::kBool), {"true or false", "bool"});
  ExpectError(FromJsonStatus("[1]", DataType::kString), {"a string or {\"b64\""});
  ExpectError(FromJsonStatus("[true]", DataType::kFloat), {"float", "true"});
  ExpectError(FromJsonStatus("[null]", DataType::kFloat), {"null"});
  ExpectError(FromJsonStatus("[{\"a\": 1}]", DataType::kString), {"an object"});
  ExpectError(FromJsonStatus("[1e39]", DataType::kFloat), {"element [0]", "out of range for float"});
  ExpectError(FromJsonStatus("[70000]", DataType::kHalf), {"70000 is out of range for half"});
  ExpectError(FromJsonStatus("[1]", DataType::kComplex64), {"input 'x'", "JSON cannot carry"});
}

TEST(JsonTensor, Ragged) {
  ExpectError(FromJsonStatus("[[1, 2], [3]]", DataType::kFloat),
              {"input 'x' is ragged", "element [1]", "a list of 1", "a list of 2"});
  ExpectError(FromJsonStatus("[[1, 2], 3]", DataType::kFloat), {"ragged", "element [1]"});
  ExpectError(FromJsonStatus("[1, [2]]", DataType::kFloat), {"ragged", "element [1]", "a list"});
  ExpectError(FromJsonStatus("[[], [1]]", DataType::kFloat), {"ragged"});
  std::string deep(70, '[');
  deep += "1" + std::string(70, ']');
  ExpectError(FromJsonStatus(deep, DataType::kFloat), {"nested more than 64"});
}

TEST(JsonTensor, StringsAndBase64) {
  Tensor t = FromJson(R"([["a", {"b64": "aGVsbG8="}], [{"b64": "AP8"}, "\u00e9"]])", DataType::kString);
  EXPECT_EQ(t.shape(), Shape({2, 2}));
  EXPECT_EQ(t.strings(), std::vector<std::string>({"a", "hello", std::string("\0\xff", 2), "\xc3\xa9"}));
  ExpectError(FromJsonStatus(R"([{"b64": "!!!"}])", DataType::kString),
              {"input 'x' element [0]", "not valid base64"});
  EXPECT_EQ(ToJson(t), R"([["a","hello"],[{"b64":"AP8="},"é"]])");
  EXPECT_EQ(ToJson(t, true), R"([[{"b64":"YQ=="},{"b64":"aGVsbG8="}],[{"b64":"AP8="},{"b64":"w6k="}]])");
  // URL-safe base64 too.
  EXPECT_EQ(FromJson(R"({"b64": "-_8"})", DataType::kString).strings()[0], "\xfb\xff");
}

TEST(JsonTensor, HalfAndBfloat16) {
  Tensor h = FromJson("[1.5, -2, 65504]", DataType::kHalf);
  EXPECT_EQ(ToJson(h), "[1.5,-2,65504]");
  Tensor b = FromJson("[[1.0, 0.5]]", DataType::kBFloat16);
  EXPECT_EQ(b.shape(), Shape({1, 2}));
  EXPECT_EQ(ToJson(b), "[[1,0.5]]");
}

TEST(JsonTensor, NanAndInfinityRoundTrip) {
  Tensor t = FromJson("[NaN, Infinity, -Infinity, 0.1]", DataType::kFloat);
  EXPECT_TRUE(std::isnan(t.data<float>()[0]));
  EXPECT_EQ(t.data<float>()[1], std::numeric_limits<float>::infinity());
  const std::string out = ToJson(t);
  EXPECT_EQ(out, "[NaN,Infinity,-Infinity,0.1]");
  Tensor back = FromJson(out, DataType::kFloat);
  EXPECT_TRUE(std::isnan(back.data<float>()[0]));
  EXPECT_EQ(back.data<float>()[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(back.data<float>()[3], 0.1f);
  Tensor d = FromJson("[NaN, 1e300]", DataType::kDouble);
  EXPECT_EQ(ToJson(d), "[NaN,1e300]");
}

TEST(JsonTensor, WriteShapes) {
  Tensor t = Tensor::FromVector<int32_t>(DataType::kInt32, Shape{2, 1, 2}, {1, 2, 3, 4});
  EXPECT_EQ(ToJson(t), "[[[1,2]],[[3,4]]]");
  EXPECT_EQ(ToJson(t, false, true), "[1,2,3,4]");
  EXPECT_EQ(ToJson(Tensor::FromVector<float>(DataType::kFloat, Shape{}, {2.5f})), "2.5");
  EXPECT_EQ(ToJson(Tensor::FromVector<float>(DataType::kFloat, Shape{0, 3}, {})), "[]");
  EXPECT_EQ(ToJson(Tensor::FromStrings(Shape{1}, {"\xff\xfe"})), R"([{"b64":"//4="}])");
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  TensorRowToJson(t, 1, false, w);
  EXPECT_STREQ(sb.GetString(), "[[3,4]]");
  EXPECT_EQ(ToJson(Tensor::FromVector<uint8_t>(DataType::kBool, Shape{2}, {1, 0})), "[true,false]");
}

TEST(JsonTensor, WithDeclaredShape) {
  Document flat = Json("[1, 2, 3, 4, 5, 6]");
  auto t = TensorFromJsonWithShape(flat, DataType::kInt32, Shape{2, 3}, "input 'x'");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), Shape({2, 3}));
  EXPECT_EQ(Values<int32_t>(*t), std::vector<int32_t>({1, 2, 3, 4, 5, 6}));
  Document nested = Json("[[1, 2], [3, 4], [5, 6]]");
  t = TensorFromJsonWithShape(nested, DataType::kInt32, Shape{2, 3}, "input 'x'");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Values<int32_t>(*t), std::vector<int32_t>({1, 2, 3, 4, 5, 6}));
  ExpectError(TensorFromJsonWithShape(flat, DataType::kInt32, Shape{4}, "input 'x'").status(),
              {"input 'x' has 6 values but shape [4] needs 4"});
  ExpectError(TensorFromJsonWithShape(flat, DataType::kInt32, Shape{1000000000000, 1000000000000},
                                      "input 'x'").status(),
              {"input 'x'", "too many elements"});
  ExpectError(TensorFromJsonWithShape(flat, DataType::kInt32, Shape{1000000, 1000000}, "input 'x'")
                  .status(),
              {"needs 1000000000000"});
  ExpectError(TensorFromJsonWithShape(flat, DataType::kInt32, Shape{-6}, "input 'x'").status(),
              {"negative"});
  Document ragged = Json("[[1, 2], [3]]");
  ExpectError(TensorFromJsonWithShape(ragged, DataType::kInt32, Shape{3}, "input 'x'").status(),
              {"ragged"});
}

TEST(JsonTensor, ParseJsonObjectErrors) {
  Document d;
  ExpectError(ParseJsonObject("{\"a\": [1, 2", "the body", &d), {"the body is not valid JSON", "at byte"});
  ExpectError(ParseJsonObject("{\"a\": 1} x", "the body", &d), {"not valid JSON"});
  ExpectError(ParseJsonObject("[1]", "the body", &d), {"must be a JSON object", "a list"});
  ExpectError(ParseJsonObject("", "the body", &d), {"not valid JSON"});
  EXPECT_TRUE(ParseJsonObject(std::string(100000, '[') + "x", "b", &d).code() ==
              absl::StatusCode::kInvalidArgument);
}

TEST(JsonTensor, ErrorJson) {
  EXPECT_EQ(ErrorJson(absl::InvalidArgumentError("bad \"x\"\n\xff")),
            "{\"error\":\"bad \\\"x\\\"\\n\xEF\xBF\xBD\"}");
  EXPECT_EQ(WriteTfsError(absl::NotFoundError("gone")), R"({"error":"gone"})");
  EXPECT_EQ(WriteV2Error(absl::NotFoundError("gone")), R"({"error":"gone"})");
}

// --- TensorFlow Serving ------------------------------------------------------

TEST(TfsPredict, RowFormatOneInput) {
  auto r = ParseTfsPredict(R"({"signature_name": "one", "instances": [1.0, 2.0, 5.0]})", Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->row_format);
  EXPECT_EQ(r->signature_name, "one");
  EXPECT_EQ(r->inputs.at("x").shape(), Shape({3}));
  EXPECT_EQ(Values<float>(r->inputs.at("x")), std::vector<float>({1, 2, 5}));
  r = ParseTfsPredict(R"({"signature_name": "one", "instances": [{"x": [1, 2]}, {"x": [3, 4]}]})",
                      Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs.at("x").shape(), Shape({2, 2}));
  r = ParseTfsPredict(R"({"signature_name": "strings", "instances": [{"b64": "aGk="}, "yo"]})",
                      Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs.at("s").strings(), std::vector<std::string>({"hi", "yo"}));
}

TEST(TfsPredict, RowFormatSeveralInputs) {
  auto r = ParseTfsPredict(
      R"({"instances": [{"x": [1, 2, 3], "y": 7}, {"y": 8, "x": [4, 5, NaN]}]})", Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->signature_name, "serving_default");
  const Tensor& x = r->inputs.at("x");
  EXPECT_EQ(x.shape(), Shape({2, 3}));
  EXPECT_EQ(x.data<float>()[3], 4);
  EXPECT_TRUE(std::isnan(x.data<float>()[5]));
  EXPECT_EQ(Values<int64_t>(r->inputs.at("y")), std::vector<int64_t>({7, 8}));
}

TEST(TfsPredict, RowFormatErrors) {
  ExpectError(ParseTfsPredict(R"({"instances": [{"x": [1, 2, 3], "y": 7}, {"x": [4, 5], "y": 8}]})",
                              Finder()).status(),
              {"input 'x' of 'instances' is ragged", "element [1]"});
  ExpectError(ParseTfsPredict(R"({"instances": [{"x": [1], "y": 7}, {"x": [4]}]})", Finder()).status(),
              {"instance 1 lacks input 'y'"});
  ExpectError(ParseTfsPredict(R"({"instances": [{"x": [1], "y": 7, "z": 1}]})", Finder()).status(),
              {"input 'z'", "its inputs are: x, y"});
  ExpectError(ParseTfsPredict(R"({"instances": [1, 2]})", Finder()).status(),
              {"has 2 inputs (x, y)", "object {input: value}"});
  ExpectError(ParseTfsPredict(R"({"signature_name": "one", "instances": [1, {"x": 2}]})", Finder())
                  .status(),
              {"instance 1"});
  ExpectError(ParseTfsPredict(R"({"instances": []})", Finder()).status(), {"empty"});
  ExpectError(ParseTfsPredict(R"({"instances": {"x": 1}})", Finder()).status(), {"must be a list"});
  ExpectError(ParseTfsPredict(R"({"instances": [{"x": [1, 2, 3], "y": 1.5}]})", Finder()).status(),
              {"input 'y' of 'instances' element [0]", "int64", "1.5"});
}

TEST(TfsPredict, Columnar) {
  auto r = ParseTfsPredict(R"({"inputs": {"x": [[1, 2, 3]], "y": [1, 2, 3, 4]}})", Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->row_format);
  EXPECT_EQ(r->inputs.at("x").shape(), Shape({1, 3}));
  EXPECT_EQ(r->inputs.at("y").shape(), Shape({4}));
  r = ParseTfsPredict(R"({"signature_name": "one", "inputs": [[1, 2], [3, 4]]})", Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs.at("x").shape(), Shape({2, 2}));
  r = ParseTfsPredict(R"({"signature_name": "one", "inputs": 3})", Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs.at("x").shape(), Shape());
  ExpectError(ParseTfsPredict(R"({"inputs": {"x": [[1, 2, 3]]}})", Finder()).status(),
              {"lacks input 'y'"});
  ExpectError(ParseTfsPredict(R"({"inputs": {"x": [[1]], "y": [1], "w": 2}})", Finder()).status(),
              {"input 'w'", "its inputs are: x, y"});
  ExpectError(ParseTfsPredict(R"({"inputs": [1, 2]})", Finder()).status(), {"has 2 inputs"});
  ExpectError(ParseTfsPredict(R"({"inputs": {"x": [["a"]], "y": [1]}})", Finder()).status(),
              {"input 'x' element [0][0]", "float"});
}

TEST(TfsPredict, BodyErrors) {
  ExpectError(ParseTfsPredict("{\"instances\": [1, 2", Finder()).status(),
              {"not valid JSON", "at byte"});
  ExpectError(ParseTfsPredict("nonsense", Finder()).status(), {"not valid JSON"});
  ExpectError(ParseTfsPredict("[1]", Finder()).status(), {"must be a JSON object"});
  ExpectError(ParseTfsPredict(R"({"instances": [1], "inputs": [1]})", Finder()).status(),
              {"both 'instances' and 'inputs'"});
  ExpectError(ParseTfsPredict(R"({"signature_name": "one"})", Finder()).status(),
              {"neither 'instances'"});
  ExpectError(ParseTfsPredict(R"({"signature_name": 3, "inputs": 1})", Finder()).status(),
              {"'signature_name' must be a string"});
  ExpectError(ParseTfsPredict(R"({"signature_name": "nope", "inputs": 1})", Finder()).status(),
              {"no signature 'nope'"}, absl::StatusCode::kNotFound);
}

TEST(TfsPredict, Responses) {
  std::map<std::string, Tensor> one{
      {"out", Tensor::FromVector<float>(DataType::kFloat, Shape{3}, {3.5f, 4, 5.5f})}};
  EXPECT_EQ(WriteTfsPredictResponse(one, true), R"({"predictions":[3.5,4,5.5]})");
  EXPECT_EQ(WriteTfsPredictResponse(one, false), R"({"outputs":[3.5,4,5.5]})");
  std::map<std::string, Tensor> two{
      {"a", Tensor::FromVector<int32_t>(DataType::kInt32, Shape{2, 2}, {1, 2, 3, 4})},
      {"img_bytes", Tensor::FromStrings(Shape{2}, {"hi", "yo"})}};
  EXPECT_EQ(WriteTfsPredictResponse(two, true),
            R"({"predictions":[{"a":[1,2],"img_bytes":{"b64":"aGk="}},)"
            R"({"a":[3,4],"img_bytes":{"b64":"eW8="}}]})");
  EXPECT_EQ(WriteTfsPredictResponse(two, false),
            R"({"outputs":{"a":[[1,2],[3,4]],"img_bytes":[{"b64":"aGk="},{"b64":"eW8="}]}})");
  // Outputs that do not share dimension 0: columnar even for a row request.
  two["b"] = Tensor::FromVector<float>(DataType::kFloat, Shape{}, {1});
  EXPECT_EQ(WriteTfsPredictResponse(two, true).rfind("{\"outputs\":{", 0), 0u);
}

tf::Example Example(const Tensor& t, int64_t i) {
  tf::Example e;
  EXPECT_TRUE(e.ParseFromString(t.strings()[i]));
  return e;
}

TEST(TfsExamples, Parse) {
  std::string sig;
  auto t = ParseTfsExamples(R"({"signature_name": "reg", "context": {"c": "ctx"},
      "examples": [{"i": 1, "f": 1.0, "l": [1, 2.5], "s": "x", "b": {"b64": "AAE="}, "e": []},
                   {"i": [-3, 4]}]})", &sig);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(sig, "reg");
  EXPECT_EQ(t->dtype(), DataType::kString);
  EXPECT_EQ(t->shape(), Shape({2}));
  tf::Example e0 = Example(*t, 0);
  const auto& f = e0.features().feature();
  EXPECT_EQ(f.at("i").int64_list().value(0), 1);
  EXPECT_EQ(f.at("f").float_list().value(0), 1.0f);
  EXPECT_EQ(f.at("l").float_list().value_size(), 2);
  EXPECT_EQ(f.at("s").bytes_list().value(0), "x");
  EXPECT_EQ(f.at("b").bytes_list().value(0), std::string("\0\1", 2));
  EXPECT_EQ(f.at("e").kind_case(), tf::Feature::KIND_NOT_SET);
  EXPECT_EQ(f.at("c").bytes_list().value(0), "ctx");
  tf::Example e1 = Example(*t, 1);
  EXPECT_EQ(e1.features().feature().at("i").int64_list().value(1), 4);
  EXPECT_EQ(e1.features().feature().at("c").bytes_list().value(0), "ctx");
  t = ParseTfsExamples(R"({"examples": [{"x": 2}]})", &sig);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(sig, "");
}

TEST(TfsExamples, Errors) {
  std::string sig;
  ExpectError(ParseTfsExamples(R"({"examples": []})", &sig).status(), {"'examples'"});
  ExpectError(ParseTfsExamples(R"({"context": {"a": 1}})", &sig).status(), {"'examples'"});
  ExpectError(ParseTfsExamples(R"({"context": {"a": 1}, "examples": [{"a": 2}]})", &sig).status(),
              {"feature 'a' of example 0 is also in 'context'"});
  ExpectError(ParseTfsExamples(R"({"examples": [{"a": [[1]]}]})", &sig).status(),
              {"feature 'a' of example 0", "nested list"});
  ExpectError(ParseTfsExamples(R"({"examples": [{"a": [1, "x"]}]})", &sig).status(),
              {"mixes strings and numbers"});
  ExpectError(ParseTfsExamples(R"({"examples": [{"a": true}]})", &sig).status(), {"a boolean"});
  ExpectError(ParseTfsExamples(R"({"examples": [{"a": {"b64": "%%"}}]})", &sig).status(),
              {"not valid base64"});
  ExpectError(ParseTfsExamples(R"({"examples": [3]})", &sig).status(), {"example 0 must be an object"});
  ExpectError(ParseTfsExamples("{\"examples\": [{\"a\xff\": 1}]}", &sig).status(), {"not UTF-8"});
  ExpectError(ParseTfsExamples("{", &sig).status(), {"not valid JSON"});
}

TEST(TfsExamples, ClassifyAndRegressResponses) {
  std::map<std::string, Tensor> out{
      {"classes", Tensor::FromStrings(Shape{2, 2}, {"a", "b", "c", "d"})},
      {"scores", Tensor::FromVector<float>(DataType::kFloat, Shape{2, 2}, {0.25f, 0.75f, 1, 0})}};
  auto c = WriteTfsClassifyResponse(out);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, R"({"result":[[["a",0.25],["b",0.75]],[["c",1],["d",0]]]})");
  out.erase("classes");
  c = WriteTfsClassifyResponse(out);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, R"({"result":[[["",0.25],["",0.75]],[["",1],["",0]]]})");
  ExpectError(WriteTfsClassifyResponse({}).status(), {"neither"});
  ExpectError(WriteTfsClassifyResponse({{"scores", Tensor::FromVector<float>(DataType::kFloat,
                                                                             Shape{2}, {1, 2})}})
                  .status(),
              {"output 'scores'", "[batch, classes]"});
  auto r = WriteTfsRegressResponse(
      {{"outputs", Tensor::FromVector<float>(DataType::kFloat, Shape{2, 1}, {3.5f, 4})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, R"({"result":[3.5,4]})");
  ExpectError(WriteTfsRegressResponse({{"outputs", Tensor::FromVector<float>(
                                                       DataType::kFloat, Shape{1, 2}, {1, 2})}})
                  .status(),
              {"output 'outputs'", "[batch, 1]"});
  ExpectError(WriteTfsRegressResponse({}).status(), {"no 'outputs'"});
}

TEST(TfsStatusAndMetadata, ModelStatus) {
  std::vector<VersionStatus> v(2);
  v[0].version = 1;
  v[0].state = "END";
  v[0].status = absl::NotFoundError("dir \"gone\"");
  v[1].version = 2;
  v[1].state = "AVAILABLE";
  EXPECT_EQ(WriteTfsModelStatus(v),
            R"({"model_version_status":[{"version":"1","state":"END","status":{"error_code":)"
            R"("NOT_FOUND","error_message":"dir \"gone\""}},{"version":"2","state":"AVAILABLE",)"
            R"("status":{"error_code":"OK","error_message":""}}]})");
}

TEST(TfsStatusAndMetadata, Metadata) {
  tf::MetaGraphDef mg;
  tf::SignatureDef& def = (*mg.mutable_signature_def())["serving_default"];
  def.set_method_name("tensorflow/serving/predict");
  tf::TensorInfo& x = (*def.mutable_inputs())["x"];
  x.set_name("x:0");
  x.set_dtype(tf::DT_FLOAT);
  x.mutable_tensor_shape()->add_dim()->set_size(-1);
  (*mg.mutable_signature_def())["__saved_model_init_op"].set_method_name("init");
  const std::string json = WriteTfsMetadata("half", 123, mg);
  Document d = Json(json);
  EXPECT_STREQ(d["model_spec"]["name"].GetString(), "half");
  EXPECT_STREQ(d["model_spec"]["signature_name"].GetString(), "");
  EXPECT_STREQ(d["model_spec"]["version"].GetString(), "123");
  const auto& sigs = d["metadata"]["signature_def"]["signature_def"];
  EXPECT_FALSE(sigs.HasMember("__saved_model_init_op"));
  const auto& sd = sigs["serving_default"];
  EXPECT_STREQ(sd["method_name"].GetString(), "tensorflow/serving/predict");
  EXPECT_STREQ(sd["inputs"]["x"]["dtype"].GetString(), "DT_FLOAT");
  EXPECT_STREQ(sd["inputs"]["x"]["name"].GetString(), "x:0");
  EXPECT_STREQ(sd["inputs"]["x"]["tensor_shape"]["dim"][0]["size"].GetString(), "-1");
  EXPECT_FALSE(sd["inputs"]["x"]["tensor_shape"]["unknown_rank"].GetBool());
}

// --- KServe v2 ---------------------------------------------------------------

std::string Le32(uint32_t n) { return std::string(reinterpret_cast<const char*>(&n), 4); }
template <typename T>
std::string Raw(std::vector<T> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)); }

TEST(V2Infer, JsonData) {
  auto r = ParseV2Infer(R"({"id": "r1", "inputs": [
      {"name": "x", "datatype": "FP32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, NaN]},
      {"name": "y", "datatype": "INT64", "shape": [2], "data": [[7], [8]]}],
      "outputs": [{"name": "label", "parameters": {"binary_data": true}}, {"name": "out"}]})",
                        std::nullopt, Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->id, "r1");
  EXPECT_EQ(r->signature, "serving_default");
  EXPECT_EQ(r->inputs.at("x").shape(), Shape({2, 3}));
  EXPECT_TRUE(std::isnan(r->inputs.at("x").data<float>()[5]));
  EXPECT_EQ(Values<int64_t>(r->inputs.at("y")), std::vector<int64_t>({7, 8}));
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].name, "label");
  EXPECT_TRUE(r->outputs[0].binary);
  EXPECT_FALSE(r->outputs[1].binary);
  r = ParseV2Infer(R"({"parameters": {"signature_name": "strings", "binary_data_output": true},
      "inputs": [{"name": "s", "datatype": "BYTES", "shape": [1], "data": ["hey"]}],
      "outputs": [{"name": "out"}]})", std::nullopt, Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->signature, "strings");
  EXPECT_TRUE(r->binary_outputs_default);
  EXPECT_TRUE(r->outputs[0].binary);
  EXPECT_EQ(r->inputs.at("s").strings()[0], "hey");
}

TEST(V2Infer, BinaryData) {
  const std::string header = R"({"parameters": {"signature_name": "strings"}, "inputs": [)"
                             R"({"name": "s", "datatype": "BYTES", "shape": [2],)"
                             R"( "parameters": {"binary_data_size": 13}}]})";
  const std::string bytes = Le32(2) + "hi" + Le32(3) + std::string("\0\1\2", 3);
  auto r = ParseV2Infer(header + bytes, header.size(), Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs.at("s").strings(), std::vector<std::string>({"hi", std::string("\0\1\2", 3)}));
  const std::string h2 = R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3],)"
                         R"( "parameters": {"binary_data_size": 12}},)"
                         R"( {"name": "y", "datatype": "INT64", "shape": [1], "data": [5]}]})";
  r = ParseV2Infer(h2 + Raw<float>({1.5f, 2, 3}), h2.size(), Finder());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(r->inputs.at("x")), std::vector<float>({1.5f, 2, 3}));
  // Truncated, too long, sizes that do not fit the shape, no binary part.
  ExpectError(ParseV2Infer(h2 + Raw<float>({1, 2}), h2.size(), Finder()).status(),
              {"input 'x'", "binary_data_size 12", "only 8 bytes", "truncated"});
  ExpectError(ParseV2Infer(h2 + Raw<float>({1, 2, 3, 4}), h2.size(), Finder()).status(),
              {"16 bytes after the JSON header", "add up to 12"});
  ExpectError(ParseV2Infer(h2, std::nullopt, Finder()).status(), {"input 'x'", "no binary part"});
  std::string h3 = h2;
  h3.replace(h3.find("[1, 3]"), 6, "[1, 2]");
  ExpectError(ParseV2Infer(h3 + Raw<float>({1, 2, 3}), h3.size(), Finder()).status(),
              {"input 'x' has 12 bytes of binary data but FP32 [1,2] needs 8"});
  ExpectError(ParseV2Infer(header + Le32(2) + "hi" + Le32(9) + "abcdef", header.size(), Finder()).status(),
              {"input 's'", "BYTES element 1 has length 9"});
  ExpectError(ParseV2Infer(header + Le32(20) + std::string(9, 'a'), header.size(), Finder()).status(),
              {"BYTES element 0"});
  ExpectError(ParseV2Infer(header.substr(0, header.size() - 2), std::nullopt, Finder()).status(),
              {"not valid JSON"});
  ExpectError(ParseV2Infer(header, header.size() + 1, Finder()).status(), {"header length"});
}

TEST(V2Infer, Errors) {
  auto parse = [](const std::string& inputs, const std::string& more = "") {
    return ParseV2Infer("{\"inputs\": [" + inputs + "]" + more + "}", std::nullopt, Finder()).status();
  };
  const std::string y = R"(, {"name": "y", "datatype": "INT64", "shape": [1], "data": [1]})";
  ExpectError(parse(R"({"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]})" + y),
              {"input 'x' has datatype FP64, the model expects FP32"});
  ExpectError(parse(R"({"name": "x", "datatype": "fp32", "shape": [1], "data": [1]})"),
              {"input 'x'", "unknown datatype 'fp32'"});
  ExpectError(parse(R"({"name": "z", "datatype": "FP32", "shape": [1], "data": [1]})"),
              {"input 'z' is not an input", "its inputs are: x, y"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]})"),
              {"input 'y'", "missing"});
  ExpectError(parse(y.substr(2) + y), {"input 'y' is given twice"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [-1, 3], "data": [1, 2, 3]})"),
              {"input 'x'", "non-negative"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1e12, 1e12], "data": [1]})"),
              {"input 'x'", "non-negative integers"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1000000000000, 1000000000000],)"
                    R"( "data": [1]})"),
              {"input 'x'", "too many elements"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [2, 3], "data": [1, 2, 3]})"),
              {"input 'x' has 3 values but shape [2,3] needs 6"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1, 3]})"),
              {"neither \"data\""});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1, 1], "data": ["a"]})"),
              {"input 'x' element [0]", "float"});
  ExpectError(parse(R"({"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]})" + y,
                    R"(, "outputs": [{"name": "nope"}])"),
              {"output 'nope'", "its outputs are: label, out"});
  ExpectError(ParseV2Infer(R"({"inputs": 3})", std::nullopt, Finder()).status(), {"\"inputs\""});
  ExpectError(ParseV2Infer(R"({"id": 3, "inputs": []})", std::nullopt, Finder()).status(), {"\"id\""});
  ExpectError(ParseV2Infer(R"({"parameters": {"signature_name": "x"}, "inputs": []})", std::nullopt,
                           Finder()).status(),
              {"no signature 'x'"}, absl::StatusCode::kNotFound);
}

TEST(V2Infer, Responses) {
  std::map<std::string, Tensor> outputs{
      {"out", Tensor::FromVector<float>(DataType::kFloat, Shape{2, 2}, {1, 2.5f, NAN, 4})},
      {"label", Tensor::FromStrings(Shape{2}, {"a", "bc"})}};
  V2InferRequest all;
  V2Response r = WriteV2InferResponse("m", 3, "id7", outputs, all);
  EXPECT_FALSE(r.header_length.has_value());
  EXPECT_EQ(r.body, R"({"model_name":"m","model_version":"3","id":"id7","outputs":[)"
                    R"({"name":"label","datatype":"BYTES","shape":[2],"data":["a","bc"]},)"
                    R"({"name":"out","datatype":"FP32","shape":[2,2],"data":[1,2.5,NaN,4]}]})");
  V2InferRequest some;
  some.outputs = {{"out", true}, {"label", true}};
  r = WriteV2InferResponse("m", 3, "", outputs, some);
  ASSERT_TRUE(r.header_length.has_value());
  const std::string json = r.body.substr(0, *r.header_length);
  EXPECT_EQ(json, R"({"model_name":"m","model_version":"3","outputs":[)"
                  R"({"name":"out","datatype":"FP32","shape":[2,2],"parameters":{"binary_data_size":16}},)"
                  R"({"name":"label","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":11}}]})");
  const std::string bin = r.body.substr(*r.header_length);
  ASSERT_EQ(bin.size(), 27u);
  float f[4];
  std::memcpy(f, bin.data(), 16);
  EXPECT_EQ(f[1], 2.5f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(bin.substr(16), Le32(1) + "a" + Le32(2) + "bc");
  V2InferRequest one;
  one.outputs = {{"label", false}};
  r = WriteV2InferResponse("m", 1, "", outputs, one);
  EXPECT_EQ(r.body.find("\"out\""), std::string::npos);
}

TEST(V2Metadata, ModelAndServer) {
  auto sigs = Signatures();
  sigs["serving_default"].inputs["y"].shape = PartialShape();
  Document d = Json(WriteV2ModelMetadata("m", {1, 2}, sigs));
  EXPECT_STREQ(d["name"].GetString(), "m");
  EXPECT_STREQ(d["versions"][1].GetString(), "2");
  EXPECT_STREQ(d["platform"].GetString(), "tensorflow_savedmodel");
  const auto& x = d["inputs"][0];
  EXPECT_STREQ(x["name"].GetString(), "x");
  EXPECT_STREQ(x["datatype"].GetString(), "FP32");
  EXPECT_EQ(x["shape"].Size(), 2u);
  EXPECT_EQ(x["shape"][0].GetInt(), -1);
  EXPECT_EQ(x["shape"][1].GetInt(), 3);
  EXPECT_EQ(d["inputs"][1]["shape"][0].GetInt(), -1);
  EXPECT_STREQ(d["outputs"][0]["datatype"].GetString(), "BYTES");
  std::map<std::string, Signature> only{{"k", sigs["one"]}};
  Document o = Json(WriteV2ModelMetadata("m", {1}, only));
  EXPECT_STREQ(o["inputs"][0]["name"].GetString(), "x");
  Document s = Json(WriteV2ServerMetadata({"binary_tensor_data"}));
  EXPECT_STREQ(s["name"].GetString(), "plexus-serve");
  EXPECT_TRUE(s["version"].IsString());
  EXPECT_STREQ(s["extensions"][0].GetString(), "binary_tensor_data");
}

}  // namespace
}  // namespace plexus::serve
