// The server's Prometheus metrics, written in the text exposition format
// (version 0.0.4) at /metrics. No Prometheus client library is packaged
// for Debian, and the format is a few lines of text.
//
//   plexus_serve_requests_total{model,version,protocol,code}     counter
//   plexus_serve_request_duration_seconds{model,protocol}        histogram
//   plexus_serve_errors_total{kind}                              counter
//   plexus_serve_batch_size{model}                               histogram
//   plexus_serve_queue_rejections_total{model}                   counter
//   plexus_serve_model_versions{model,version}                   gauge (1 = serving)
//   plexus_serve_model_load_failures_total{model}                counter
//   plexus_serve_in_flight_requests                              gauge
#ifndef PLEXUS_SERVE_METRICS_H_
#define PLEXUS_SERVE_METRICS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace plexus::serve {

class Metrics {
 public:
  // One answered request. `protocol` is "rest_v1", "rest_v2", "grpc_tfs" or
  // "grpc_v2"; `code` the HTTP status (gRPC codes are mapped to theirs).
  void Request(const std::string& model, int64_t version, const std::string& protocol,
               int code, double seconds);
  // An error by kind ("bad_request", "not_found", "overloaded",
  // "deadline", "too_large", "internal", "load_failed").
  void Error(const std::string& kind);
  void Batch(const std::string& model, int64_t rows);
  void QueueRejected(const std::string& model);
  void LoadFailed(const std::string& model);
  void InFlight(int delta) { in_flight_ += delta; }

  // The exposition; `serving` gives the versions loaded now.
  std::string Render(const std::map<std::string, std::vector<int64_t>>& serving) const;

 private:
  struct Histogram {
    std::vector<int64_t> buckets;  // cumulative counts per bound
    int64_t count = 0;
    double sum = 0;
  };
  static void Observe(Histogram& h, const std::vector<double>& bounds, double value);

  mutable std::mutex mu_;
  std::map<std::tuple<std::string, int64_t, std::string, int>, int64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> latency_;
  std::map<std::string, int64_t> errors_;
  std::map<std::string, Histogram> batch_sizes_;
  std::map<std::string, int64_t> rejections_;
  std::map<std::string, int64_t> load_failures_;
  std::atomic<int64_t> in_flight_{0};
};

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_METRICS_H_
