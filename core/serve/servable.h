// One loaded version of one model: a SavedModel in a session, its
// signatures, an optional batcher, and the checks every protocol shares
// (input names, dtypes and shapes against the signature).
//
// A Servable is shared: the ModelManager and every request in flight hold a
// std::shared_ptr to it, so a version taken out of service is destroyed
// (its session freed) only when its last request has been answered.
#ifndef PLEXUS_SERVE_SERVABLE_H_
#define PLEXUS_SERVE_SERVABLE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plexus/runtime.h"
#include "plexus/saved_model.h"
#include "plexus/tensor.h"

namespace plexus::serve {

class Batcher;
class Metrics;

// Server-side batching of one model (TensorFlow Serving's batching
// parameters). Requests whose inputs share every dimension but the first
// are joined along dimension 0, run once, and the outputs split back.
struct BatchingOptions {
  bool enabled = false;
  int64_t max_batch_size = 32;             // rows per run
  absl::Duration batch_timeout = absl::Milliseconds(2);  // wait for more rows
  int64_t max_enqueued_batches = 64;       // queue bound (in batches) -> UNAVAILABLE
  int num_batch_threads = 2;               // runs at the same time
};

struct ServableOptions {
  std::string device;  // "CPU:0"; empty = the runtime's default
  BatchingOptions batching;
  // Runs each signature once on zeros (unknown dimensions as 1) before the
  // version is published, so the first request does not pay for the
  // compilation and the memory plans.
  bool warmup = true;
};

// What a protocol front end asks of a version.
struct RunRequest {
  std::string signature;  // empty = "serving_default"
  // By signature input key; every input of the signature must be present.
  std::map<std::string, Tensor> inputs;
  // Output keys to return; empty = every output.
  std::vector<std::string> output_filter;
  absl::Time deadline = absl::InfiniteFuture();
};

class Servable {
 public:
  // Loads DIR (a SavedModel) as version `version` of `name`, and warms it
  // up. Errors name the model, the version and the directory.
  static absl::StatusOr<std::shared_ptr<Servable>> Load(
      Runtime* runtime, const std::string& name, int64_t version, const std::string& dir,
      const ServableOptions& options, Metrics* metrics);
  ~Servable();

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const std::string& dir() const { return dir_; }
  const SavedModel& model() const { return session_->model(); }

  // The signature `key` ("" = "serving_default"); NOT_FOUND names the model
  // and lists the signatures there are.
  absl::StatusOr<const Signature*> FindSignature(const std::string& key) const;

  // Checks the request against its signature (INVALID_ARGUMENT naming the
  // input and what was expected), then runs it, through the batcher when
  // batching is on. DEADLINE_EXCEEDED when the deadline passes first.
  absl::StatusOr<std::map<std::string, Tensor>> Run(const RunRequest& request);

  // Requests running or queued on this version now.
  int64_t in_flight() const { return in_flight_.load(); }

  // Runs without the checks or the batcher (the batcher's own runs).
  absl::StatusOr<std::map<std::string, Tensor>> RunDirect(
      const std::string& signature, const std::map<std::string, Tensor>& inputs,
      const std::vector<std::string>& output_filter, absl::Time deadline);

 private:
  Servable() = default;
  absl::Status Validate(const Signature& signature, const RunRequest& request) const;
  absl::Status Warmup();

  std::string name_;
  int64_t version_ = 0;
  std::string dir_;
  std::unique_ptr<SavedModelSession> session_;
  std::unique_ptr<Batcher> batcher_;
  Metrics* metrics_ = nullptr;
  std::atomic<int64_t> in_flight_{0};
};

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_SERVABLE_H_
