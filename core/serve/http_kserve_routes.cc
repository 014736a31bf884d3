// KServe's Open Inference Protocol (v2) over REST, with Triton's binary
// tensor extension: health, server and model metadata, readiness, infer.
#include <httplib.h>

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "http_server.h"
#include "kserve_json.h"

namespace plexus::serve {
namespace {

constexpr char kHeaderLength[] = "Inference-Header-Content-Length";

absl::StatusOr<std::shared_ptr<Servable>> FindServable(HttpServer* server,
                                                       const httplib::Request& req) {
  RequestInfo& info = CurrentInfo();
  info.protocol = "rest_v2";
  info.model = req.matches[1];
  std::optional<int64_t> version;
  std::string v = req.matches.size() > 2 ? std::string(req.matches[2]) : "";
  if (!v.empty()) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("version '", v, "' of model '", info.model,
                                                     "' is not a positive integer"));
    }
    version = n;
  }
  auto s = server->models()->Find(info.model, version);
  if (s.ok()) info.version = (*s)->version();
  return s;
}

void Infer(HttpServer* server, const httplib::Request& req, httplib::Response& res) {
  auto s = FindServable(server, req);
  if (!s.ok()) return server->Fail(res, s.status());
  std::optional<size_t> header_length;
  if (req.has_header(kHeaderLength)) {
    size_t n = 0;
    if (!absl::SimpleAtoi(req.get_header_value(kHeaderLength), &n) || n > req.body.size()) {
      return server->Fail(res, absl::InvalidArgumentError(absl::StrCat(
                                   "header ", kHeaderLength, " is '",
                                   req.get_header_value(kHeaderLength),
                                   "'; expected the JSON part's length, at most the body's ",
                                   req.body.size(), " bytes")));
    }
    header_length = n;
  }
  auto parsed = ParseV2Infer(req.body, header_length,
                             [&](const std::string& key) { return (*s)->FindSignature(key); });
  if (!parsed.ok()) return server->Fail(res, parsed.status());
  RunRequest run;
  run.signature = parsed->signature;
  run.inputs = parsed->inputs;
  for (const auto& o : parsed->outputs) run.output_filter.push_back(o.name);
  run.deadline = server->Deadline();
  auto out = (*s)->Run(run);
  if (!out.ok()) return server->Fail(res, out.status());
  V2Response response =
      WriteV2InferResponse((*s)->name(), (*s)->version(), parsed->id, *out, *parsed);
  if (response.header_length) {
    res.set_header(kHeaderLength, absl::StrCat(*response.header_length));
    res.set_content(response.body, "application/octet-stream");
  } else {
    res.set_content(response.body, "application/json");
  }
}

constexpr char kModel[] = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

}  // namespace

void AddKserveRoutes(HttpServer* server, httplib::Server& http) {
  http.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    CurrentInfo().protocol = "rest_v2";
    res.set_content(WriteV2ServerMetadata({"binary_tensor_data"}), "application/json");
  });
  http.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
    CurrentInfo().protocol = "rest_v2";
    res.set_content("{\"live\": true}", "application/json");
  });
  // Not ready (4xx, as the protocol asks) while a model has no version
  // serving or the server is draining after SIGTERM.
  http.Get("/v2/health/ready", [server](const httplib::Request&, httplib::Response& res) {
    CurrentInfo().protocol = "rest_v2";
    if (server->draining()) {
      res.status = 400;
      res.set_content("{\"ready\": false, \"error\": \"the server is shutting down\"}",
                      "application/json");
    } else if (!server->models()->Ready()) {
      res.status = 400;
      res.set_content("{\"ready\": false, \"error\": \"a model has no version serving yet\"}",
                      "application/json");
    } else {
      res.set_content("{\"ready\": true}", "application/json");
    }
  });
  http.Get(kModel, [server](const httplib::Request& req, httplib::Response& res) {
    auto s = FindServable(server, req);
    if (!s.ok()) return server->Fail(res, s.status());
    auto serving = server->models()->Serving();
    res.set_content(WriteV2ModelMetadata(**s, serving[(*s)->name()]), "application/json");
  });
  http.Get(absl::StrCat(kModel, "/ready"),
           [server](const httplib::Request& req, httplib::Response& res) {
             auto s = FindServable(server, req);
             if (!s.ok()) return server->Fail(res, s.status());
             if (server->draining()) {
               res.status = 400;
               res.set_content("{\"ready\": false, \"error\": \"the server is shutting down\"}",
                               "application/json");
               return;
             }
             res.set_content("{\"ready\": true}", "application/json");
           });
  http.Post(absl::StrCat(kModel, "/infer"),
            [server](const httplib::Request& req, httplib::Response& res) {
              Infer(server, req, res);
            });
}

}  // namespace plexus::serve
