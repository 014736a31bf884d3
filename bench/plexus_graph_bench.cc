// Times one TensorFlow GraphDef through one Plexus Session on the cpu plugin
// and prints the result as one JSON line, so scripts (bench/run.sh) can set
// it beside the same graph timed in other runtimes.
//
//   plexus_graph_bench --graph mlp.pb --fetch output --input X --shape X=B,784
//                      --batch 64 --warmup 20 --iters 200 --label mlp_fc_layers
//
// Inputs come from .npy files (--feed NAME=FILE) or are generated (--input
// NAME): deterministic values in [-1, 1) of the tensor's dtype, with the shape
// given by --shape NAME=D0,D1,... (the letter B stands for --batch) or, when
// there is no --shape, the tensor's inferred shape with its leading unknown
// dimension set to --batch. With neither --feed nor --input, every Placeholder
// of the graph is generated that way.
//
// Each timed iteration is one Session::Run with the same feeds and fetches
// (the executor is built once, during warmup). The JSON line holds the median
// and the 10th/90th percentiles of the per-run wall time in microseconds.
// --save-outputs DIR writes the fetched tensors as DIR/<i>.npy, so a caller
// can check the results against another runtime.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "plexus/plexus.h"

namespace {

struct Options {
  std::string graph;
  std::string label;
  std::string plugin = PX_BENCH_CPU_PLUGIN;
  std::string device = "CPU:0";
  std::vector<std::string> fetches;
  std::vector<std::pair<std::string, std::string>> feed_files;  // name, .npy
  std::vector<std::string> inputs;                              // generated
  std::map<std::string, std::string> shapes;                    // name -> spec
  int64_t batch = 1;
  int warmup = 10;
  int iters = 100;      // with --seconds: the least number of timed runs
  double seconds = 0;   // when > 0, time about this long (at least --iters runs)
  int max_iters = 100000;
  int threads = 0;      // SessionOptions::intra_op_threads; 0: automatic
  std::string save_outputs;
};

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "plexus_graph_bench: " << message << "\n";
  std::exit(1);
}

void Usage() {
  std::cerr <<
      "usage: plexus_graph_bench --graph FILE.pb --fetch NAME[,NAME...]\n"
      "         [--feed NAME=FILE.npy]... [--input NAME]... [--shape NAME=D0,D1,...]...\n"
      "         [--batch N] [--warmup N] [--iters N] [--seconds S] [--max-iters N]\n"
      "         [--label TEXT] [--threads N]\n"
      "         [--plugin FILE] [--device NAME] [--save-outputs DIR]\n"
      "In --shape, the letter B stands for --batch. With --seconds, the number of\n"
      "timed runs fills about S seconds (from the warmup's median), at least --iters\n"
      "and at most --max-iters. --batch is only a label when every input is fed.\n"
      "--threads N: each kernel uses at most N threads (SessionOptions::intra_op_threads;\n"
      "default: the CPUs the process may use). --threads 1 also turns inter-op\n"
      "parallelism off (SessionOptions::inter_op_parallelism), so that the run uses one\n"
      "thread in all, as the peers' one-thread rows do (inter_op=1).\n"
      "PLEXUS_ADAPTIVE_THREADS=0 keeps the count fixed while other processes are busy.\n";
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, sep)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::pair<std::string, std::string> SplitAssignment(const std::string& text,
                                                    const char* flag) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    Fail(std::string(flag) + " wants NAME=VALUE, got '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t ParseInt(const std::string& text, const char* what) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') {
    Fail(std::string(what) + ": not an integer: '" + text + "'");
  }
  return value;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      Usage();
      std::exit(0);
    }
    if (i + 1 >= argc) {
      Usage();
      Fail("missing value after " + arg);
    }
    std::string value = argv[++i];
    if (arg == "--graph") {
      o.graph = value;
    } else if (arg == "--fetch") {
      for (auto& f : Split(value, ',')) o.fetches.push_back(f);
    } else if (arg == "--feed") {
      o.feed_files.push_back(SplitAssignment(value, "--feed"));
    } else if (arg == "--input") {
      o.inputs.push_back(value);
    } else if (arg == "--shape") {
      o.shapes.insert(SplitAssignment(value, "--shape"));
    } else if (arg == "--batch") {
      o.batch = ParseInt(value, "--batch");
    } else if (arg == "--warmup") {
      o.warmup = static_cast<int>(ParseInt(value, "--warmup"));
    } else if (arg == "--iters") {
      o.iters = static_cast<int>(ParseInt(value, "--iters"));
    } else if (arg == "--seconds") {
      o.seconds = std::strtod(value.c_str(), nullptr);
    } else if (arg == "--max-iters") {
      o.max_iters = static_cast<int>(ParseInt(value, "--max-iters"));
    } else if (arg == "--threads") {
      o.threads = static_cast<int>(ParseInt(value, "--threads"));
    } else if (arg == "--label") {
      o.label = value;
    } else if (arg == "--plugin") {
      o.plugin = value;
    } else if (arg == "--device") {
      o.device = value;
    } else if (arg == "--save-outputs") {
      o.save_outputs = value;
    } else {
      Usage();
      Fail("unknown flag " + arg);
    }
  }
  if (o.graph.empty() || o.fetches.empty()) {
    Usage();
    Fail("--graph and --fetch are required");
  }
  if (o.iters < 1 || o.max_iters < 1 || o.warmup < 0 || o.batch < 1 || o.seconds < 0 ||
      o.threads < 0) {
    Fail("--iters, --max-iters and --batch must be positive, --warmup, --seconds and --threads "
         "not negative");
  }
  if (o.label.empty()) o.label = o.graph;
  return o;
}

// The shape of a generated input: --shape if given, else the inferred shape
// with unknown dimensions filled (the first with the batch, others fail).
plexus::Shape InputShape(const Options& o, const std::string& name,
                         const plexus::Node& node, int index) {
  auto spec = o.shapes.find(name);
  if (spec != o.shapes.end()) {
    plexus::Shape shape;
    for (const std::string& dim : Split(spec->second, ',')) {
      shape.push_back(dim == "B" || dim == "b" ? o.batch : ParseInt(dim, "--shape"));
    }
    return shape;
  }
  plexus::PartialShape partial;
  if (node.op == "Placeholder") {
    auto attr = plexus::GetAttrShape(node, "shape");
    if (attr.ok()) partial = *attr;
  }
  if (!partial.rank_known() && index < static_cast<int>(node.output_shapes.size())) {
    partial = node.output_shapes[index];
  }
  if (!partial.rank_known()) {
    Fail("the shape of '" + name + "' is unknown: give --shape " + name + "=...");
  }
  plexus::Shape shape = partial.dims();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0) continue;
    if (d != 0) {
      Fail("'" + name + "' has shape " + partial.ToString() +
           ": only the first dimension is taken from --batch; give --shape");
    }
    shape[d] = o.batch;
  }
  return shape;
}

// Deterministic values in [-1, 1) (integers: small non-negative values).
plexus::Tensor Generate(plexus::DataType dtype, const plexus::Shape& shape,
                        const std::string& name) {
  auto made = plexus::Tensor::AllocateHost(dtype, shape);
  if (!made.ok()) Fail("cannot make input '" + name + "': " + std::string(made.status().message()));
  plexus::Tensor t = *made;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const int64_t n = t.num_elements();
  switch (dtype) {
    case plexus::DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = next() / 1073741824.0f - 1.0f;
      break;
    case plexus::DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = next() / 1073741824.0 - 1.0;
      break;
    case plexus::DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(next() % 8);
      break;
    case plexus::DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = static_cast<int64_t>(next() % 8);
      break;
    default:
      Fail("cannot generate values of dtype " + plexus::DataTypeName(dtype) + " for '" + name +
           "': feed a .npy file with --feed");
  }
  return t;
}

std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// Threads of this process now (Linux /proc), or -1 where that is unknown.
int ProcessThreads() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int threads = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "Threads:", 8) == 0) threads = std::atoi(line + 8);
  }
  std::fclose(f);
  return threads;
}

// The q-quantile of sorted values, interpolating between neighbours.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted[0];
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] * (1.0 - frac) + sorted[hi] * frac;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);

  plexus::RuntimeOptions runtime_options;
  runtime_options.discover_plugins = false;
  runtime_options.plugin_paths = {o.plugin};
  auto runtime = plexus::Runtime::Create(runtime_options);
  if (!runtime.ok()) Fail("runtime: " + std::string(runtime.status().message()));
  for (const auto& report : (*runtime)->load_reports()) {
    if (!report.loaded) Fail("plugin " + report.path + ": " + report.message);
  }

  auto imported = plexus::ImportGraphDefFile(o.graph);
  if (!imported.ok()) Fail("import: " + std::string(imported.status().message()));
  std::shared_ptr<const plexus::Graph> graph(std::move(*imported));

  // Feeds: files first, then generated inputs.
  std::vector<std::pair<std::string, plexus::Tensor>> feeds;
  for (const auto& [name, file] : o.feed_files) {
    auto t = plexus::ReadNpy(file);
    if (!t.ok()) Fail("--feed " + name + ": " + std::string(t.status().message()));
    feeds.emplace_back(name, *t);
  }
  std::vector<std::string> inputs = o.inputs;
  if (o.feed_files.empty() && inputs.empty()) {
    for (const auto& node : graph->nodes()) {
      if (node->op == "Placeholder") inputs.push_back(node->name);
    }
  }
  for (const std::string& name : inputs) {
    auto endpoint = graph->ResolveTensor(name);
    if (!endpoint.ok()) Fail("--input: " + std::string(endpoint.status().message()));
    const plexus::Node& node = *endpoint->node;
    plexus::Shape shape = InputShape(o, name, node, endpoint->index);
    feeds.emplace_back(name, Generate(node.output_types[endpoint->index], shape, name));
  }

  plexus::SessionOptions session_options;
  session_options.device = o.device;
  session_options.intra_op_threads = o.threads;
  // One thread means one thread in all: no branches side by side on the
  // inter-op pool either (the peers' one-thread rows set inter_op=1).
  if (o.threads == 1) session_options.inter_op_parallelism = false;
  // PLEXUS_BENCH_TRACE=FILE: also write the timeline of every run (first
  // run included) in Chrome trace format, to see where the time goes.
  const char* trace_path = std::getenv("PLEXUS_BENCH_TRACE");
  session_options.trace = trace_path != nullptr && *trace_path != '\0';
  auto session = plexus::Session::Create(runtime->get(), graph, session_options);
  if (!session.ok()) Fail("session: " + std::string(session.status().message()));

  std::vector<plexus::Tensor> outputs;
  auto run_once = [&]() {
    auto out = (*session)->Run(feeds, o.fetches);
    if (!out.ok()) Fail("run: " + std::string(out.status().message()));
    outputs = std::move(*out);
  };

  // The first run builds the executor; time it apart from the steady state.
  auto first_start = std::chrono::steady_clock::now();
  run_once();
  double first_us = std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - first_start).count();
  std::vector<double> warm;
  for (int i = 1; i < o.warmup; ++i) {
    auto start = std::chrono::steady_clock::now();
    run_once();
    warm.push_back(std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - start).count());
  }
  int iters = o.iters;
  if (o.seconds > 0) {
    std::sort(warm.begin(), warm.end());
    double estimate = warm.empty() ? first_us : warm[warm.size() / 2];
    double wanted = o.seconds * 1e6 / std::max(estimate, 1e-3);
    iters = static_cast<int>(std::min<double>(o.max_iters, std::max<double>(o.iters, wanted)));
  }

  std::vector<double> times;
  times.reserve(iters);
  for (int i = 0; i < iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    run_once();
    times.push_back(std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - start).count());
  }

  if (session_options.trace) {
    absl::Status written = (*session)->WriteTrace(trace_path);
    if (!written.ok()) Fail("trace: " + std::string(written.message()));
  }
  if (!o.save_outputs.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path = o.save_outputs + "/" + std::to_string(i) + ".npy";
      auto status = plexus::WriteNpy(path, outputs[i]);
      if (!status.ok()) Fail("--save-outputs: " + std::string(status.message()));
    }
  }

  double sum = 0;
  for (double t : times) sum += t;
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());

  std::string notes;
  for (const std::string& note : (*session)->placement_notes()) {
    notes += (notes.empty() ? "" : "; ") + note;
  }

  // The intra-op budget: as set (or automatic: the usable CPUs), whether it
  // adapts to other processes' load, and what the last run used.
  const bool adaptive = session_options.adapt_threads_to_load && plexus::AdaptiveThreadsAllowed();
  const std::string threads =
      "intra_op=" + std::to_string(o.threads > 0 ? o.threads : plexus::DefaultIntraOpThreads()) +
      (o.threads > 0 ? " (--threads)" : " (automatic)") + (adaptive ? " adaptive" : " fixed") +
      (session_options.inter_op_parallelism ? "" : ", inter-op off") +
      ", last run " + std::to_string((*session)->last_execution_info().intra_op_threads) +
      "; " + std::to_string(ProcessThreads()) + " threads in the process after the runs";

  std::printf(
      "{\"runtime\": \"plexus\", \"label\": \"%s\", \"graph\": \"%s\", \"batch\": %lld, "
      "\"iters\": %d, \"warmup\": %d, \"graph_nodes\": %d, \"first_run_us\": %.2f, "
      "\"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, \"mean_us\": %.3f, "
      "\"min_us\": %.3f, \"threads\": \"%s\", \"placement_notes\": \"%s\"}\n",
      JsonEscape(o.label).c_str(), JsonEscape(o.graph).c_str(),
      static_cast<long long>(o.batch), iters, o.warmup, graph->num_nodes(), first_us,
      Quantile(sorted, 0.5), Quantile(sorted, 0.1), Quantile(sorted, 0.9),
      sum / static_cast<double>(times.size()), sorted.front(), JsonEscape(threads).c_str(),
      JsonEscape(notes).c_str());
  return 0;
}
