// The gRPC front end: TensorFlow Serving's PredictionService (Predict,
// GetModelMetadata, Classify, Regress; MultiInference is UNIMPLEMENTED) and
// ModelService (GetModelStatus), and KServe's GRPCInferenceService
// (ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata,
// ModelInfer), on gRPC's synchronous server.
//
// Calls run on gRPC's threads, at most GrpcServerOptions::threads at a
// time (a resource quota); beyond that gRPC answers RESOURCE_EXHAUSTED at
// once. A message larger than max_message_bytes is refused by gRPC with
// RESOURCE_EXHAUSTED. Errors carry absl's code (gRPC's codes are absl's,
// number for number) and message, so a full batch queue's
// RESOURCE_EXHAUSTED / UNAVAILABLE reaches the client as it is.
#ifndef PLEXUS_SERVE_GRPC_SERVER_H_
#define PLEXUS_SERVE_GRPC_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "model_manager.h"

namespace grpc {
class Server;
class Service;
class ServerContext;
class Status;
}  // namespace grpc

namespace plexus::serve {

class Metrics;
namespace grpc_internal {
struct ServiceEnv;
}  // namespace grpc_internal

struct GrpcServerOptions {
  // Largest request message (gRPC refuses larger ones: RESOURCE_EXHAUSTED).
  int max_message_bytes = 64 << 20;
  // A run's deadline: the call's deadline, but at most this far away.
  absl::Duration default_timeout = absl::Seconds(60);
  // Most calls served at the same time.
  int threads = 32;
};

class GrpcServer {
 public:
  // Listens on `address` ("0.0.0.0:8500"; port 0 = any free port, then
  // port() is the one bound) and serves. UNAVAILABLE when it cannot listen.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(const std::string& address,
                                                           ModelManager* models, Metrics* metrics,
                                                           const GrpcServerOptions& options);
  ~GrpcServer();  // Shutdown(now) when not shut down yet

  int port() const { return port_; }

  // Stops accepting calls (ServerReady answers false from now on), lets the
  // calls in flight finish until `deadline`, then cancels the rest. Returns
  // when the server has stopped; a run that ignores its cancellation is
  // waited for (its own deadline ends it).
  void Shutdown(absl::Time deadline);

 private:
  GrpcServer();

  std::unique_ptr<grpc_internal::ServiceEnv> env_;
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

// ---- For the services (grpc_tfs_service.cc, grpc_kserve_service.cc) ------

namespace grpc_internal {

// What every service reads.
struct ServiceEnv {
  ModelManager* models = nullptr;
  Metrics* metrics = nullptr;
  GrpcServerOptions options;
  std::atomic<bool> draining{false};
};

// absl's code and message as a grpc::Status.
grpc::Status ToGrpc(const absl::Status& s);

// The deadline of a run for this call: the call's own deadline, capped by
// options.default_timeout from now.
absl::Time RunDeadline(const grpc::ServerContext& context, const ServiceEnv& env);

// One call's metrics: the in-flight gauge while it lives, then (Finish)
// the request counter and latency by model, version, protocol and the HTTP
// status of the outcome (HttpStatusOf), and the error counter by kind on a
// failure. Calls that name no model are not counted as model requests;
// names of models that do not exist count as "_unknown".
class CallMetrics {
 public:
  CallMetrics(const ServiceEnv& env, const char* protocol);
  ~CallMetrics();
  CallMetrics(const CallMetrics&) = delete;
  CallMetrics& operator=(const CallMetrics&) = delete;

  void set_model(const std::string& name) { model_ = name; }
  void set_version(int64_t version) { version_ = version; }
  // Records the outcome; returns it as a grpc::Status.
  grpc::Status Finish(const absl::Status& s);

 private:
  const ServiceEnv& env_;
  const char* protocol_;
  std::string model_;
  int64_t version_ = 0;
  absl::Time start_;
};

std::unique_ptr<grpc::Service> NewTfsPredictionService(const ServiceEnv* env);
std::unique_ptr<grpc::Service> NewTfsModelService(const ServiceEnv* env);
std::unique_ptr<grpc::Service> NewKserveService(const ServiceEnv* env);

}  // namespace grpc_internal

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_GRPC_SERVER_H_
