// The REST front end: TensorFlow Serving's /v1 API, KServe's /v2 (Open
// Inference Protocol, with Triton's binary tensor extension), /metrics and
// an access log, on cpp-httplib.
//
// Requests run on the HTTP worker threads (or wait there for the batcher).
// A keep-alive connection holds a worker until it closes or idles for
// keep_alive_timeout, so the pool is sized for the clients expected.
#ifndef PLEXUS_SERVE_HTTP_SERVER_H_
#define PLEXUS_SERVE_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "model_manager.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace plexus::serve {

class Metrics;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 8501;  // 0 = any free port
  int threads = 32;
  size_t max_request_bytes = 64u << 20;  // larger bodies get 413
  absl::Duration request_timeout = absl::Seconds(60);  // a run's deadline
  absl::Duration read_timeout = absl::Seconds(10);     // reading one request
  absl::Duration keep_alive_timeout = absl::Seconds(5);
  std::string access_log;  // "" = none, "-" = stderr, else a file (appended)
};

// What one request was about, for the metrics and the access log.
struct RequestInfo {
  std::string protocol;  // "rest_v1", "rest_v2", "rest"
  std::string model;
  int64_t version = 0;
  std::string error;
};

class HttpServer {
 public:
  HttpServer(ModelManager* models, Metrics* metrics, HttpServerOptions options);
  ~HttpServer();

  // Binds the port; port() is then the port bound.
  absl::Status Bind();
  int port() const { return port_; }
  // Serves until Stop (blocks).
  void Serve();
  // Stops accepting; requests being answered finish, then Serve returns.
  void Stop();
  // Readiness (/v2/health/ready) goes false while draining.
  void SetDraining() { draining_ = true; }
  bool draining() const { return draining_; }

  // For the route files.
  ModelManager* models() const { return models_; }
  const HttpServerOptions& options() const { return options_; }
  // Writes a JSON error body with the HTTP status of `s`.
  void Fail(httplib::Response& res, const absl::Status& s) const;
  absl::Time Deadline() const { return absl::Now() + options_.request_timeout; }

 private:
  void AddServerRoutes();
  void Finish(const httplib::Request& req, const httplib::Response& res);

  ModelManager* models_;
  Metrics* metrics_;
  HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> draining_{false};
  std::mutex log_mu_;
  std::FILE* log_ = nullptr;
  bool own_log_ = false;
};

// The route tables (http_tfs_routes.cc, http_kserve_routes.cc).
void AddTfsRoutes(HttpServer* server, httplib::Server& http);
void AddKserveRoutes(HttpServer* server, httplib::Server& http);

// The RequestInfo of the request this thread is answering (each request is
// answered on one worker thread, from routing to the access log).
RequestInfo& CurrentInfo();

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_HTTP_SERVER_H_
