// The gRPC server: its threads, limits, listening port and shutdown, and
// what the services share (status mapping, deadlines, metrics).
#include "grpc_server.h"

#include <grpcpp/impl/service_type.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics.h"
#include "status_map.h"

namespace plexus::serve {
namespace grpc_internal {

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  // absl's codes are gRPC's, number for number (0..16).
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

absl::Time RunDeadline(const grpc::ServerContext& context, const ServiceEnv& env) {
  const absl::Time cap = absl::Now() + env.options.default_timeout;
  const auto deadline = context.deadline();  // time_point::max() when the call has none
  if (deadline == std::chrono::system_clock::time_point::max()) return cap;
  return std::min(cap, absl::FromChrono(deadline));
}

CallMetrics::CallMetrics(const ServiceEnv& env, const char* protocol)
    : env_(env), protocol_(protocol), start_(absl::Now()) {
  if (env_.metrics) env_.metrics->InFlight(1);
}

CallMetrics::~CallMetrics() {
  if (env_.metrics) env_.metrics->InFlight(-1);
}

grpc::Status CallMetrics::Finish(const absl::Status& s) {
  if (env_.metrics) {
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    if (!model_.empty()) {
      // Names of models that do not exist are not labels: a client could
      // otherwise grow the metrics without bound.
      const std::vector<std::string> known = env_.models->ModelNames();
      const bool exists = std::find(known.begin(), known.end(), model_) != known.end();
      env_.metrics->Request(exists ? model_ : "_unknown", version_, protocol_, HttpStatusOf(s),
                            seconds);
    }
    if (!s.ok()) env_.metrics->Error(ErrorKindOf(s));
  }
  return ToGrpc(s);
}

}  // namespace grpc_internal

namespace {

// gRPC's synchronous server polls with up to this many threads of the
// quota besides the ones running calls.
constexpr int kPollers = 2;

}  // namespace

GrpcServer::GrpcServer() = default;

GrpcServer::~GrpcServer() {
  if (server_ && !shut_down_) Shutdown(absl::Now());
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(const std::string& address,
                                                              ModelManager* models,
                                                              Metrics* metrics,
                                                              const GrpcServerOptions& options) {
  if (options.threads < 1 || options.max_message_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gRPC needs at least one thread and a positive message size (threads ", options.threads,
        ", max_message_bytes ", options.max_message_bytes, ")"));
  }
  // gRPC takes a port beyond 65535 modulo 65536; refuse it instead.
  const size_t colon = address.rfind(':');
  int64_t port_number = 0;
  if (colon != std::string::npos && absl::SimpleAtoi(address.substr(colon + 1), &port_number) &&
      (port_number < 0 || port_number > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen for gRPC on ", address, ": the port must be 0..65535"));
  }
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->env_ = std::make_unique<grpc_internal::ServiceEnv>();
  grpc_internal::ServiceEnv* env = server->env_.get();
  env->models = models;
  env->metrics = metrics;
  env->options = options;
  server->services_.push_back(grpc_internal::NewTfsPredictionService(env));
  server->services_.push_back(grpc_internal::NewTfsModelService(env));
  server->services_.push_back(grpc_internal::NewKserveService(env));

  grpc::ServerBuilder builder;
  // Every thread of the synchronous server (pollers and calls) takes one
  // from the quota; a call that finds none left is answered
  // RESOURCE_EXHAUSTED by gRPC at once rather than queued.
  grpc::ResourceQuota quota("plexus-serve-grpc");
  quota.SetMaxThreads(options.threads + kPollers);
  builder.SetResourceQuota(quota);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kPollers);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  for (const auto& service : server->services_) builder.RegisterService(service.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || port <= 0) {
    server->server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen for gRPC on ", address,
                                               " (in use, or not an address of this machine)"));
  }
  server->port_ = port;
  return server;
}

void GrpcServer::Shutdown(absl::Time deadline) {
  if (!server_ || shut_down_) return;
  shut_down_ = true;
  env_->draining = true;
  // New calls are refused from now on; calls in flight have until the
  // deadline, then are cancelled.
  server_->Shutdown(absl::ToChronoTime(deadline));
  server_->Wait();
}

}  // namespace plexus::serve
