// plexus-serve: serves TensorFlow SavedModels over TensorFlow Serving's REST
// and gRPC APIs and KServe's Open Inference Protocol. docs/serving.md.
//
//   plexus-serve --model_name=digits --model_base_path=/models/digits --port=8501
//   plexus-serve --model_config_file=models.config --grpc_port=8500
//
// SIGTERM or SIGINT: readiness turns false, the listeners stop accepting,
// requests in flight are answered (for at most --drain_seconds), exit 0.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "http_server.h"
#include "log.h"
#include "metrics.h"
#include "model_manager.h"
#include "plexus/runtime.h"
#include "plexus/threads.h"
#ifdef PX_SERVE_GRPC
#include "grpc_server.h"
#endif

ABSL_FLAG(std::string, model_name, "default", "Name of the model served from --model_base_path.");
ABSL_FLAG(std::string, model_base_path, "",
          "Directory of the model's versions: BASE/1/saved_model.pb, BASE/2/..., as TensorFlow "
          "Serving lays them out.");
ABSL_FLAG(std::string, model_config_file, "",
          "TensorFlow Serving's model config file (text protobuf model_config_list) naming "
          "several models, their base paths and version policies. Replaces --model_base_path.");
ABSL_FLAG(int32_t, num_versions, 1, "With --model_base_path: serve the latest N versions.");
ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on (127.0.0.1 for this machine only).");
ABSL_FLAG(int32_t, port, 8501, "REST port (0 = any free port, printed at start).");
ABSL_FLAG(int32_t, grpc_port, 8500, "gRPC port (0 = any free port, -1 = no gRPC).");
ABSL_FLAG(double, file_system_poll_wait_seconds, 1.0,
          "How often the base paths are looked at for new versions.");
ABSL_FLAG(bool, enable_batching, false, "Join concurrent requests into batches.");
ABSL_FLAG(int64_t, max_batch_size, 32, "Batching: rows per run.");
ABSL_FLAG(int64_t, batch_timeout_micros, 2000, "Batching: how long a request waits for others.");
ABSL_FLAG(int64_t, max_enqueued_batches, 64,
          "Batching: queue bound in batches; beyond it requests get 429 / RESOURCE_EXHAUSTED.");
ABSL_FLAG(int32_t, num_batch_threads, 2, "Batching: batches run at the same time per version.");
ABSL_FLAG(std::string, device, "", "Device to run on (CPU:0, CUDA:0); default: the best present.");
ABSL_FLAG(std::vector<std::string>, plugin, {}, "Further plugin files to load.");
ABSL_FLAG(int32_t, rest_threads, 32, "HTTP worker threads (a keep-alive connection holds one).");
ABSL_FLAG(int32_t, grpc_threads, 32, "Most gRPC calls served at the same time.");
ABSL_FLAG(int32_t, intra_op_threads, 0, "Threads each kernel may use (0 = the CPUs).");
ABSL_FLAG(int64_t, max_request_bytes, 64 << 20, "Largest request body (larger: 413).");
ABSL_FLAG(double, request_timeout_seconds, 60, "Deadline of a request's run.");
ABSL_FLAG(double, read_timeout_seconds, 10, "Time allowed to read one HTTP request.");
ABSL_FLAG(double, drain_seconds, 30, "On SIGTERM, how long requests in flight may take.");
ABSL_FLAG(std::string, access_log, "", "Access log of JSON lines: '-' = stderr, else a file.");
ABSL_FLAG(bool, warmup, true, "Run each signature once before a version serves.");

namespace plexus::serve {
namespace {

absl::StatusOr<std::vector<ModelConfig>> ModelsFromFlags() {
  std::string file = absl::GetFlag(FLAGS_model_config_file);
  std::string base = absl::GetFlag(FLAGS_model_base_path);
  if (!file.empty() && !base.empty()) {
    return absl::InvalidArgumentError("give --model_config_file or --model_base_path, not both");
  }
  if (!file.empty()) return ReadModelConfigFile(file);
  if (base.empty()) {
    return absl::InvalidArgumentError(
        "no model: give --model_name and --model_base_path, or --model_config_file");
  }
  ModelConfig m;
  m.name = absl::GetFlag(FLAGS_model_name);
  m.base_path = base;
  m.policy.num_versions = std::max(1, absl::GetFlag(FLAGS_num_versions));
  return std::vector<ModelConfig>{m};
}

ServableOptions ServableOptionsFromFlags() {
  ServableOptions o;
  o.device = absl::GetFlag(FLAGS_device);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  o.batching.enabled = absl::GetFlag(FLAGS_enable_batching);
  o.batching.max_batch_size = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_batch_size));
  o.batching.batch_timeout = absl::Microseconds(absl::GetFlag(FLAGS_batch_timeout_micros));
  o.batching.max_enqueued_batches = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_enqueued_batches));
  o.batching.num_batch_threads = std::max(1, absl::GetFlag(FLAGS_num_batch_threads));
  return o;
}

HttpServerOptions HttpOptionsFromFlags() {
  HttpServerOptions o;
  o.host = absl::GetFlag(FLAGS_host);
  o.port = absl::GetFlag(FLAGS_port);
  o.threads = absl::GetFlag(FLAGS_rest_threads);
  o.max_request_bytes = static_cast<size_t>(std::max<int64_t>(1, absl::GetFlag(FLAGS_max_request_bytes)));
  o.request_timeout = absl::Seconds(absl::GetFlag(FLAGS_request_timeout_seconds));
  o.read_timeout = absl::Seconds(absl::GetFlag(FLAGS_read_timeout_seconds));
  o.access_log = absl::GetFlag(FLAGS_access_log);
  return o;
}

// Blocks SIGTERM and SIGINT in every thread (call before starting any) and
// returns a descriptor that reads them.
int SignalFd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is not fatal
  return signalfd(-1, &set, SFD_CLOEXEC);
}

int Main() {
  int sfd = SignalFd();
  if (absl::GetFlag(FLAGS_intra_op_threads) > 0) {
    SetDefaultIntraOpThreads(absl::GetFlag(FLAGS_intra_op_threads));
  }
  auto models = ModelsFromFlags();
  if (!models.ok()) {
    std::fprintf(stderr, "plexus-serve: %s\n", std::string(models.status().message()).c_str());
    return 2;
  }
  RuntimeOptions runtime_options;
  runtime_options.plugin_paths = absl::GetFlag(FLAGS_plugin);
  auto runtime = Runtime::Create(runtime_options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "plexus-serve: %s\n", std::string(runtime.status().message()).c_str());
    return 1;
  }
  ServableOptions servable_options = ServableOptionsFromFlags();
  if (!servable_options.device.empty()) {
    auto device = (*runtime)->FindDevice(servable_options.device);
    if (!device.ok()) {
      std::fprintf(stderr, "plexus-serve: --device: %s\n",
                   std::string(device.status().message()).c_str());
      return 2;
    }
  }
  Metrics metrics;
  ModelManager manager(runtime->get(), servable_options, &metrics,
                       absl::Seconds(std::max(0.05, absl::GetFlag(FLAGS_file_system_poll_wait_seconds))));
  absl::Status loaded = manager.SetModels(*std::move(models));
  if (!loaded.ok()) {
    std::fprintf(stderr, "plexus-serve: %s\n", std::string(loaded.message()).c_str());
    return 1;
  }
  HttpServer http(&manager, &metrics, HttpOptionsFromFlags());
  absl::Status bound = http.Bind();
  if (!bound.ok()) {
    std::fprintf(stderr, "plexus-serve: %s\n", std::string(bound.message()).c_str());
    return 1;
  }
#ifdef PX_SERVE_GRPC
  std::unique_ptr<GrpcServer> grpc;
  if (absl::GetFlag(FLAGS_grpc_port) >= 0) {
    GrpcServerOptions grpc_options;
    grpc_options.max_message_bytes = static_cast<int>(
        std::min<int64_t>(absl::GetFlag(FLAGS_max_request_bytes), 1 << 30));
    grpc_options.default_timeout = absl::Seconds(absl::GetFlag(FLAGS_request_timeout_seconds));
    grpc_options.threads = absl::GetFlag(FLAGS_grpc_threads);
    auto started = GrpcServer::Start(
        absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_grpc_port)), &manager,
        &metrics, grpc_options);
    if (!started.ok()) {
      std::fprintf(stderr, "plexus-serve: %s\n", std::string(started.status().message()).c_str());
      return 1;
    }
    grpc = *std::move(started);
  }
#else
  if (absl::GetFlag(FLAGS_grpc_port) >= 0) {
    LogLine("this build has no gRPC (Debian's libgrpc++-dev was not found when it was built); "
            "serving REST only");
  }
#endif
  manager.StartPolling();
  std::thread serving([&] { http.Serve(); });
  std::printf("plexus-serve: REST listening on %s:%d\n", absl::GetFlag(FLAGS_host).c_str(), http.port());
#ifdef PX_SERVE_GRPC
  if (grpc) {
    std::printf("plexus-serve: gRPC listening on %s:%d\n", absl::GetFlag(FLAGS_host).c_str(), grpc->port());
  }
#endif
  std::fflush(stdout);

  // Wait for SIGTERM / SIGINT, then drain.
  signalfd_siginfo info;
  while (::read(sfd, &info, sizeof(info)) != sizeof(info)) {
  }
  absl::Duration drain = absl::Seconds(absl::GetFlag(FLAGS_drain_seconds));
  absl::Time deadline = absl::Now() + drain;
  LogLine(absl::StrCat("signal ", info.ssi_signo, ": draining (requests in flight have ",
                       absl::FormatDuration(drain), ")"));
  http.SetDraining();
  auto stopped = std::async(std::launch::async, [&] {
#ifdef PX_SERVE_GRPC
    if (grpc) grpc->Shutdown(deadline);
#endif
    http.Stop();
    serving.join();
  });
  if (stopped.wait_until(absl::ToChronoTime(deadline + absl::Seconds(1))) != std::future_status::ready) {
    LogLine("requests still running after the drain deadline; exiting without them");
    std::fflush(nullptr);
    ::_exit(1);
  }
  LogLine("drained; exiting");
  std::fflush(nullptr);
  // Versions unload as the manager goes; the runtime's plugins after them.
  return 0;
}

}  // namespace
}  // namespace plexus::serve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "serves TensorFlow SavedModels over TensorFlow Serving's REST and gRPC APIs and KServe's "
      "v2 protocol.\n  plexus-serve --model_name=NAME --model_base_path=BASE [--port=8501] "
      "[--grpc_port=8500]\n  plexus-serve --model_config_file=FILE");
  absl::ParseCommandLine(argc, argv);
  return plexus::serve::Main();
}
