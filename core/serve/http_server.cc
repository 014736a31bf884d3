#include "http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "log.h"
#include "metrics.h"
#include "status_map.h"

namespace plexus::serve {
namespace {

struct ThreadState {
  RequestInfo info;
  absl::Time start;
  bool in_flight = false;  // counted in the in-flight gauge
};
thread_local ThreadState current;

// A JSON string literal of `s` (quotes, backslashes and control characters
// escaped; bytes above 0x7f passed through).
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

RequestInfo& CurrentInfo() { return current.info; }

HttpServer::HttpServer(ModelManager* models, Metrics* metrics, HttpServerOptions options)
    : models_(models), metrics_(metrics), options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  if (options_.access_log == "-") {
    log_ = stderr;
  } else if (!options_.access_log.empty()) {
    log_ = std::fopen(options_.access_log.c_str(), "a");
    own_log_ = log_ != nullptr;
    if (!log_) LogLine(absl::StrCat("cannot open the access log '", options_.access_log, "'"));
  }
  httplib::Server& http = *server_;
  int threads = options_.threads < 1 ? 1 : options_.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(options_.max_request_bytes);
  // Small responses go out at once rather than after the client's delayed
  // ACK (about 40 ms on a keep-alive connection). Accepted sockets inherit
  // the option from the listening one.
  http.set_tcp_nodelay(true);
  http.set_read_timeout(absl::ToChronoMicroseconds(options_.read_timeout));
  http.set_write_timeout(absl::ToChronoMicroseconds(options_.read_timeout));
  http.set_keep_alive_timeout(std::max<time_t>(1, absl::ToInt64Seconds(options_.keep_alive_timeout)));
  http.set_keep_alive_max_count(100);
  http.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
    current.info = RequestInfo();
    current.start = absl::Now();
    // A request whose answer could not be written never reached Finish:
    // it leaves the gauge here, when its thread takes the next one.
    if (!current.in_flight) metrics_->InFlight(1);
    current.in_flight = true;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Responses httplib makes itself (no route: 404; body too large: 413;
  // unreadable request: 400) get a JSON error body too.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message;
    if (res.status == 404) {
      message = absl::StrCat("no route for ", req.method, " ", req.path,
                             " (TensorFlow Serving's /v1/models/..., KServe's /v2/..., /metrics)");
    } else if (res.status == 413) {
      message = absl::StrCat("the request body is larger than the server's limit of ",
                             options_.max_request_bytes, " bytes (--max_request_bytes)");
      current.info.error = message;
    } else {
      message = absl::StrCat("HTTP ", res.status, " for ", req.method, " ", req.path,
                             res.status == 400 ? ": the request could not be read (a truncated "
                                                 "body or a malformed header)" : "");
    }
    current.info.error = message;
    res.set_content(absl::StrCat("{\"error\": ", JsonString(message), "}"), "application/json");
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    Finish(req, res);
  });
  AddServerRoutes();
  AddTfsRoutes(this, http);
  AddKserveRoutes(this, http);
}

HttpServer::~HttpServer() {
  if (own_log_) std::fclose(log_);
}

absl::Status HttpServer::Bind() {
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's
  // library): a burst of clients would see SYNs dropped and retried a
  // second later. The socket is caught as it is made and given the
  // system's backlog once bound.
  int listening = -1;
  server_->set_socket_options([&listening](int fd) {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    listening = fd;
  });
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
  } else {
    port_ = server_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ > 0 && listening >= 0) ::listen(listening, SOMAXCONN);
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on ", options_.host, ":",
                                               options_.port, " (in use, or not an address of "
                                               "this machine)"));
  }
  return absl::OkStatus();
}

void HttpServer::Serve() { server_->listen_after_bind(); }

void HttpServer::Stop() { server_->stop(); }

void HttpServer::Fail(httplib::Response& res, const absl::Status& s) const {
  res.status = HttpStatusOf(s);
  current.info.error = std::string(s.message());
  res.set_content(absl::StrCat("{\"error\": ", JsonString(std::string(s.message())), "}"),
                  "application/json");
}

void HttpServer::AddServerRoutes() {
  httplib::Server& http = *server_;
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    current.info.protocol = "rest";
    res.set_content(metrics_->Render(models_->Serving()), "text/plain; version=0.0.4");
  });
  // TensorFlow Serving's path for the same (its monitoring config default).
  http.Get("/monitoring/prometheus/metrics", [this](const httplib::Request&, httplib::Response& res) {
    current.info.protocol = "rest";
    res.set_content(metrics_->Render(models_->Serving()), "text/plain; version=0.0.4");
  });
}

void HttpServer::Finish(const httplib::Request& req, const httplib::Response& res) {
  const RequestInfo& info = current.info;
  if (current.in_flight) metrics_->InFlight(-1);
  current.in_flight = false;
  double seconds = absl::ToDoubleSeconds(absl::Now() - current.start);
  if (!info.model.empty()) {
    // Names of models that do not exist are not labels: a client could
    // otherwise grow the metrics without bound.
    metrics_->Request(models_->Has(info.model) ? info.model : "_unknown", info.version,
                      info.protocol.empty() ? "rest" : info.protocol, res.status, seconds);
  }
  if (res.status >= 400) {
    metrics_->Error(res.status == 413 ? "too_large"
                    : res.status == 404 ? "not_found"
                    : res.status == 429 || res.status == 503 ? "overloaded"
                    : res.status == 504 ? "deadline"
                    : res.status < 500 ? "bad_request" : "internal");
  }
  if (!log_) return;
  std::string line = absl::StrCat(
      "{\"time\": ", JsonString(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", current.start, absl::UTCTimeZone())),
      ", \"remote\": ", JsonString(req.remote_addr), ", \"method\": ", JsonString(req.method),
      ", \"path\": ", JsonString(req.path), ", \"status\": ", res.status,
      ", \"protocol\": ", JsonString(info.protocol), ", \"model\": ", JsonString(info.model),
      ", \"version\": ", info.version, ", \"bytes_in\": ", req.body.size(),
      ", \"bytes_out\": ", res.body.size(),
      ", \"ms\": ", absl::StrFormat("%.3f", seconds * 1e3));
  if (!info.error.empty()) absl::StrAppend(&line, ", \"error\": ", JsonString(info.error));
  line += "}\n";
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fwrite(line.data(), 1, line.size(), log_);
  std::fflush(log_);
}

}  // namespace plexus::serve
