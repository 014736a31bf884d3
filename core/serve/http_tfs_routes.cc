// TensorFlow Serving's REST API (/v1): model status, metadata, predict in
// row and columnar form, classify and regress.
#include <httplib.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "http_server.h"
#include "tfs_json.h"

namespace plexus::serve {
namespace {

// The (model, version or label) of a /v1 path's matches 1..3.
struct Target {
  std::string name;
  std::optional<int64_t> version;
  std::string label;
};

absl::StatusOr<Target> TargetOf(const httplib::Request& req) {
  Target t;
  t.name = req.matches[1];
  std::string v = req.matches.size() > 2 ? std::string(req.matches[2]) : "";
  t.label = req.matches.size() > 3 ? std::string(req.matches[3]) : "";
  if (!v.empty()) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("version '", v, "' of model '", t.name,
                                                     "' is not a positive integer"));
    }
    t.version = n;
  }
  CurrentInfo().protocol = "rest_v1";
  CurrentInfo().model = t.name;
  return t;
}

absl::StatusOr<std::shared_ptr<Servable>> FindServable(HttpServer* server, const Target& t) {
  auto s = server->models()->Find(t.name, t.version, t.label);
  if (s.ok()) CurrentInfo().version = (*s)->version();
  return s;
}

void Status(HttpServer* server, const httplib::Request& req, httplib::Response& res) {
  auto t = TargetOf(req);
  if (!t.ok()) return server->Fail(res, t.status());
  auto all = server->models()->Status(t->name);
  if (!all.ok()) return server->Fail(res, all.status());
  std::optional<int64_t> only = t->version;
  if (!t->label.empty()) {
    auto s = FindServable(server, *t);
    if (!s.ok()) return server->Fail(res, s.status());
    only = (*s)->version();
  }
  std::vector<VersionStatus> shown;
  for (const auto& v : *all) {
    if (!only || v.version == *only) shown.push_back(v);
  }
  if (only && shown.empty()) {
    return server->Fail(res, absl::NotFoundError(absl::StrCat(
                                 "model '", t->name, "' has no version ", *only)));
  }
  res.set_content(WriteTfsModelStatus(shown), "application/json");
}

void Metadata(HttpServer* server, const httplib::Request& req, httplib::Response& res) {
  auto t = TargetOf(req);
  if (!t.ok()) return server->Fail(res, t.status());
  auto s = FindServable(server, *t);
  if (!s.ok()) return server->Fail(res, s.status());
  res.set_content(WriteTfsMetadata(**s), "application/json");
}

void Predict(HttpServer* server, Servable& s, const httplib::Request& req, httplib::Response& res) {
  auto parsed = ParseTfsPredict(req.body, [&](const std::string& key) { return s.FindSignature(key); });
  if (!parsed.ok()) return server->Fail(res, parsed.status());
  RunRequest run;
  run.signature = parsed->signature_name;
  run.inputs = std::move(parsed->inputs);
  run.deadline = server->Deadline();
  auto out = s.Run(run);
  if (!out.ok()) return server->Fail(res, out.status());
  res.set_content(WriteTfsPredictResponse(*out, parsed->row_format), "application/json");
}

// classify and regress: serialized tf.Examples fed to the signature's one
// string input.
void Examples(HttpServer* server, Servable& s, const std::string& verb,
              const httplib::Request& req, httplib::Response& res) {
  std::string key;
  auto examples = ParseTfsExamples(req.body, &key);
  if (!examples.ok()) return server->Fail(res, examples.status());
  auto sig = s.FindSignature(key);
  if (!sig.ok()) return server->Fail(res, sig.status());
  const std::string method = "tensorflow/serving/" + verb;
  if ((*sig)->method_name != method || (*sig)->inputs.size() != 1 ||
      (*sig)->inputs.begin()->second.dtype != DataType::kString) {
    return server->Fail(res, absl::InvalidArgumentError(absl::StrCat(
                                 ":", verb, " needs a signature with method '", method,
                                 "' over serialized tf.Examples; signature '", (*sig)->key,
                                 "' of model '", s.name(), "' has method '", (*sig)->method_name,
                                 "'")));
  }
  RunRequest run;
  run.signature = (*sig)->key;
  run.inputs[(*sig)->inputs.begin()->first] = *std::move(examples);
  run.deadline = server->Deadline();
  auto out = s.Run(run);
  if (!out.ok()) return server->Fail(res, out.status());
  auto body = verb == "classify" ? WriteTfsClassifyResponse(*out) : WriteTfsRegressResponse(*out);
  if (!body.ok()) return server->Fail(res, body.status());
  res.set_content(*body, "application/json");
}

void Post(HttpServer* server, const httplib::Request& req, httplib::Response& res) {
  auto t = TargetOf(req);
  if (!t.ok()) return server->Fail(res, t.status());
  const std::string verb = req.matches[4];
  auto s = FindServable(server, *t);
  if (!s.ok()) return server->Fail(res, s.status());
  if (verb == "predict") return Predict(server, **s, req, res);
  return Examples(server, **s, verb, req, res);
}

constexpr char kModel[] = R"(/v1/models/([^/:]+)(?:/versions/([^/:]+)|/labels/([^/:]+))?)";

}  // namespace

void AddTfsRoutes(HttpServer* server, httplib::Server& http) {
  http.Get(kModel, [server](const httplib::Request& req, httplib::Response& res) {
    Status(server, req, res);
  });
  http.Get(absl::StrCat(kModel, "/metadata"),
           [server](const httplib::Request& req, httplib::Response& res) {
             Metadata(server, req, res);
           });
  http.Post(absl::StrCat(kModel, ":(predict|classify|regress)"),
            [server](const httplib::Request& req, httplib::Response& res) {
              Post(server, req, res);
            });
}

}  // namespace plexus::serve
