#include "metrics.h"

#include <cstdio>
#include <sstream>

namespace plexus::serve {
namespace {

// Request latency bounds in seconds, and batch-size bounds in rows.
const std::vector<double>& LatencyBounds() {
  static const std::vector<double> b = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return b;
}
const std::vector<double>& BatchBounds() {
  static const std::vector<double> b = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  return b;
}

// A label value escaped as the exposition format asks (\\, \", \n).
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}  // namespace

void Metrics::Observe(Histogram& h, const std::vector<double>& bounds, double value) {
  if (h.buckets.empty()) h.buckets.assign(bounds.size(), 0);
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += value;
}

void Metrics::Request(const std::string& model, int64_t version, const std::string& protocol,
                      int code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{model, version, protocol, code}];
  Observe(latency_[{model, protocol}], LatencyBounds(), seconds);
}

void Metrics::Error(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  ++errors_[kind];
}

void Metrics::Batch(const std::string& model, int64_t rows) {
  std::lock_guard<std::mutex> lock(mu_);
  Observe(batch_sizes_[model], BatchBounds(), static_cast<double>(rows));
}

void Metrics::QueueRejected(const std::string& model) {
  std::lock_guard<std::mutex> lock(mu_);
  ++rejections_[model];
}

void Metrics::LoadFailed(const std::string& model) {
  std::lock_guard<std::mutex> lock(mu_);
  ++load_failures_[model];
}

namespace {

void RenderHistogram(std::ostringstream& out, const std::string& name, const std::string& labels,
                     const std::vector<double>& bounds, const std::vector<int64_t>& buckets,
                     int64_t count, double sum) {
  std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < bounds.size(); ++i) {
    out << name << "_bucket{" << labels << sep << "le=\"" << Number(bounds[i]) << "\"} "
        << (i < buckets.size() ? buckets[i] : 0) << "\n";
  }
  out << name << "_bucket{" << labels << sep << "le=\"+Inf\"} " << count << "\n";
  out << name << "_sum{" << labels << "} " << Number(sum) << "\n";
  out << name << "_count{" << labels << "} " << count << "\n";
}

}  // namespace

std::string Metrics::Render(const std::map<std::string, std::vector<int64_t>>& serving) const {
  std::ostringstream out;
  std::lock_guard<std::mutex> lock(mu_);
  out << "# HELP plexus_serve_requests_total Requests answered, by model, version, protocol "
         "and HTTP status.\n# TYPE plexus_serve_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [model, version, protocol, code] = key;
    out << "plexus_serve_requests_total{model=\"" << Escape(model) << "\",version=\"" << version
        << "\",protocol=\"" << protocol << "\",code=\"" << code << "\"} " << n << "\n";
  }
  out << "# HELP plexus_serve_request_duration_seconds Time from a request's arrival to its "
         "answer.\n# TYPE plexus_serve_request_duration_seconds histogram\n";
  for (const auto& [key, h] : latency_) {
    RenderHistogram(out, "plexus_serve_request_duration_seconds",
                    "model=\"" + Escape(key.first) + "\",protocol=\"" + key.second + "\"",
                    LatencyBounds(), h.buckets, h.count, h.sum);
  }
  out << "# HELP plexus_serve_errors_total Failed requests by kind.\n"
         "# TYPE plexus_serve_errors_total counter\n";
  for (const auto& [kind, n] : errors_) {
    out << "plexus_serve_errors_total{kind=\"" << Escape(kind) << "\"} " << n << "\n";
  }
  out << "# HELP plexus_serve_batch_size Rows per batched run.\n"
         "# TYPE plexus_serve_batch_size histogram\n";
  for (const auto& [model, h] : batch_sizes_) {
    RenderHistogram(out, "plexus_serve_batch_size", "model=\"" + Escape(model) + "\"",
                    BatchBounds(), h.buckets, h.count, h.sum);
  }
  out << "# HELP plexus_serve_queue_rejections_total Requests refused because the batch "
         "queue was full.\n# TYPE plexus_serve_queue_rejections_total counter\n";
  for (const auto& [model, n] : rejections_) {
    out << "plexus_serve_queue_rejections_total{model=\"" << Escape(model) << "\"} " << n << "\n";
  }
  out << "# HELP plexus_serve_model_load_failures_total Versions that failed to load.\n"
         "# TYPE plexus_serve_model_load_failures_total counter\n";
  for (const auto& [model, n] : load_failures_) {
    out << "plexus_serve_model_load_failures_total{model=\"" << Escape(model) << "\"} " << n
        << "\n";
  }
  out << "# HELP plexus_serve_model_versions Versions serving now (1 each).\n"
         "# TYPE plexus_serve_model_versions gauge\n";
  for (const auto& [model, versions] : serving) {
    for (int64_t v : versions) {
      out << "plexus_serve_model_versions{model=\"" << Escape(model) << "\",version=\"" << v
          << "\"} 1\n";
    }
  }
  out << "# HELP plexus_serve_in_flight_requests Requests being answered now.\n"
         "# TYPE plexus_serve_in_flight_requests gauge\n"
      << "plexus_serve_in_flight_requests " << in_flight_.load() << "\n";
  return out.str();
}

}  // namespace plexus::serve
