// The models a server serves and their versions.
//
// Each model has a base path laid out like TensorFlow Serving's
// (BASE/NAME/VERSION/ with a SavedModel inside, VERSION a positive integer)
// and a version policy. A poller looks at every base path every
// poll_interval: a new version directory is loaded and warmed up on the
// poller's thread, then published atomically; versions that leave the
// policy are taken out of service and unloaded when their requests finish
// (a Servable is shared). A version that fails to load is reported (its
// state and error in the model status) and the versions already serving
// go on serving.
//
// Lookups copy a shared_ptr under a short lock, so a swap never waits for
// requests and requests never wait for a load.
#ifndef PLEXUS_SERVE_MODEL_MANAGER_H_
#define PLEXUS_SERVE_MODEL_MANAGER_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "servable.h"

namespace plexus::serve {

struct VersionPolicy {
  enum Kind { kLatest, kAll, kSpecific };
  Kind kind = kLatest;
  int64_t num_versions = 1;         // kLatest
  std::set<int64_t> versions;       // kSpecific
};

struct ModelConfig {
  std::string name;
  std::string base_path;
  VersionPolicy policy;
  // version labels ("stable" -> 3), as TensorFlow Serving's version_labels.
  std::map<std::string, int64_t> labels;
};

// Reads a TensorFlow Serving model config file (text protobuf:
// model_config_list { config { name: "a" base_path: "/m/a"
// model_platform: "tensorflow" model_version_policy { latest {
// num_versions: 2 } } version_labels { key: "stable" value: 1 } } }).
// Relative base paths are taken from the file's directory.
absl::StatusOr<std::vector<ModelConfig>> ReadModelConfigFile(const std::string& path);

// The state of one version, as TensorFlow Serving reports it.
struct VersionStatus {
  int64_t version = 0;
  std::string state;      // "LOADING", "AVAILABLE", "UNLOADING", "END"
  absl::Status status;    // why it failed to load
};

class ModelManager {
 public:
  ModelManager(Runtime* runtime, ServableOptions options, Metrics* metrics,
               absl::Duration poll_interval);
  ~ModelManager();  // stops polling; servables drain with their requests

  // Sets the models (replacing any earlier list: models no longer listed
  // are unloaded) and loads what each policy asks for now. NOT_FOUND when a
  // base path is not a directory; a model with no version yet (or none that
  // loads) is waited for: not ready, its requests UNAVAILABLE.
  absl::Status SetModels(std::vector<ModelConfig> models);
  // Starts the poller thread (each poll_interval).
  void StartPolling();
  // One poll of every base path, on the calling thread.
  void PollOnce();

  // The version to serve: `version` when given, the label's version when
  // `label` is given, else the highest version serving. NOT_FOUND names the
  // model and what was asked ("model 'half' has no version 3; serving: 1, 2").
  absl::StatusOr<std::shared_ptr<Servable>> Find(
      const std::string& name, std::optional<int64_t> version = std::nullopt,
      const std::string& label = "") const;

  // Names of the models configured, sorted.
  std::vector<std::string> ModelNames() const;
  // Whether `name` is a model configured (any version state).
  bool Has(const std::string& name) const;
  // Every version known of `name` (serving, failed, unloaded), by version.
  absl::StatusOr<std::vector<VersionStatus>> Status(const std::string& name) const;
  // Versions serving now of every model (for /metrics).
  std::map<std::string, std::vector<int64_t>> Serving() const;
  // True when every model has at least one version serving.
  bool Ready() const;

 private:
  struct Model {
    ModelConfig config;
    std::map<int64_t, std::shared_ptr<Servable>> serving;
    std::map<int64_t, VersionStatus> states;
    std::set<std::string> failed_dirs;  // not retried until they change
  };
  void Reconcile(const std::string& name);
  void PollLoop();

  Runtime* runtime_;
  ServableOptions options_;
  Metrics* metrics_;
  absl::Duration poll_interval_;
  mutable std::mutex mu_;            // guards models_ (short holds only)
  std::map<std::string, Model> models_;
  // Versions taken out of service whose requests may still be running.
  struct Unloading {
    std::string model;
    int64_t version;
    std::weak_ptr<Servable> servable;
  };
  std::vector<Unloading> unloading_;
  std::mutex load_mu_;               // one reconcile at a time
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_MODEL_MANAGER_H_
