// GPU benchmarks of Plexus on the cuda plugin ("CUDA:0"), set beside PyTorch
// by bench/cuda/run_cuda.sh (bench/cuda/README.md explains the cases and the
// table). Every result is one JSON object per line on stdout.
//
//   plexus_cuda_bench [--cases bandwidth,matmul,reduce,models] [--tf32]
//                     [--capture] [--seconds S] [--data-dir DIR]
//                     [--export-weights DIR] [--device NAME --quick]
//
// Inputs live in device memory (made on the host once, copied with
// CopyTensorTo) and the session keeps its outputs there
// (SessionOptions::fetch_to_host = false). Session::Run returns after the
// device work has finished, so the host wall-clock time of one Run is the
// time of the whole step, launches and runtime overhead included. Each case
// runs a few warm-up steps (the first builds the executor, compiles fused
// kernels and picks cuBLASLt algorithms), then enough timed steps to fill
// about --seconds (at least 5), and reports the median and the 10th/90th
// percentiles in microseconds.
//
// --tf32 sets PX_CUDA_ALLOW_TF32=1 before anything runs (the plugin reads it
// once, on the first float product, so TF32 needs its own process) and
// reports the float MatMuls as "tf32". --capture sets PLEXUS_DEVICE_GRAPHS=1
// before the runtime is created (device graphs: stream capture and replay)
// and records that it was on, with each model's replay count.
// --export-weights DIR writes the Const tensors of the model graphs as
// DIR/<model>/<node name, '/' as '_'>.npy for the PyTorch side, and exits.
//
// Without a CUDA device the program prints a "SKIP" line and exits with 0.
// --device CPU:0 --quick runs every case on another device with small sizes:
// a dry run of the program itself, not a benchmark.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

#include "graph.pb.h"
#include "plexus/plexus.h"
#include "plexus/sdk/float16.h"
#include "plexus/tensor_proto.h"

namespace {

using plexus::DataType;
using plexus::Shape;
using plexus::Tensor;

struct Options {
  std::set<std::string> cases = {"bandwidth", "matmul", "reduce", "models"};
  bool tf32 = false;
  bool capture = false;
  bool quick = false;           // small sizes, for dry runs
  std::string device = "CUDA:0";
  double seconds = 0.25;
  std::string data_dir = PX_BENCH_DATA_DIR;
  std::string export_dir;
  // --profile DIR: the models only, each node finishing its device work
  // before the next starts (RuntimeOptions::synchronous_debug), a trace of
  // each model and batch written to DIR (profile_summary.py reads them).
  // --profile-host DIR: the same without synchronous_debug, so a node's
  // duration is the host's time to queue it (large where it waits).
  std::string profile_dir;
  bool profile_sync = true;
};

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "plexus_cuda_bench: " << message << "\n";
  std::exit(1);
}

void Usage() {
  std::cerr << "usage: plexus_cuda_bench [--cases bandwidth,matmul,reduce,models] [--tf32]\n"
               "         [--capture] [--seconds S] [--data-dir DIR (holds tf_graphs/)]\n"
               "         [--export-weights DIR] [--profile DIR | --profile-host DIR]\n"
               "         [--device NAME] [--quick]\n";
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

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      Usage();
      std::exit(0);
    } else if (arg == "--tf32") {
      o.tf32 = true;
    } else if (arg == "--capture") {
      o.capture = true;
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (i + 1 < argc && arg == "--device") {
      o.device = argv[++i];
    } else if (i + 1 < argc && arg == "--cases") {
      o.cases.clear();
      for (const auto& c : Split(argv[++i], ',')) {
        if (c != "bandwidth" && c != "matmul" && c != "reduce" && c != "models") {
          Fail("unknown case '" + c + "' (bandwidth, matmul, reduce, models)");
        }
        o.cases.insert(c);
      }
    } else if (i + 1 < argc && arg == "--seconds") {
      o.seconds = std::strtod(argv[++i], nullptr);
      if (!(o.seconds > 0)) Fail("--seconds must be positive");
    } else if (i + 1 < argc && arg == "--data-dir") {
      o.data_dir = argv[++i];
    } else if (i + 1 < argc && arg == "--export-weights") {
      o.export_dir = argv[++i];
    } else if (i + 1 < argc && (arg == "--profile" || arg == "--profile-host")) {
      o.profile_sync = arg == "--profile";
      o.profile_dir = argv[++i];
    } else {
      Usage();
      Fail("unknown flag or missing value: " + arg);
    }
  }
  return o;
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

// One JSON object, built field by field and printed as one line.
class Json {
 public:
  Json& Str(const std::string& key, const std::string& value) {
    return Raw(key, "\"" + JsonEscape(value) + "\"");
  }
  Json& Num(const std::string& key, double value) {
    if (!std::isfinite(value)) return Raw(key, "null");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", value);
    return Raw(key, buf);
  }
  Json& Int(const std::string& key, int64_t value) {
    return Raw(key, std::to_string(value));
  }
  Json& Bool(const std::string& key, bool value) { return Raw(key, value ? "true" : "false"); }
  Json& Dims(const std::string& key, const Shape& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return Raw(key, text + "]");
  }
  Json& Raw(const std::string& key, const std::string& value) {
    body_ += (body_.empty() ? "" : ", ") + ("\"" + key + "\": ") + value;
    return *this;
  }
  void Print() const {
    std::printf("{%s}\n", body_.c_str());
    std::fflush(stdout);
  }

 private:
  std::string body_;
};

// ---------------------------------------------------------------------------
// Timing.
// ---------------------------------------------------------------------------

struct Stats {
  int iters = 0;
  double first_us = 0;
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  double min_us = 0;
};

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted[0];
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] * (1.0 - frac) + sorted[hi] * frac;
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// `warmup` calls (the first timed apart), then enough timed calls to fill
// about `seconds`: at least `min_iters`, at most `max_iters`.
Stats TimeCalls(const std::function<void()>& fn, double seconds, int warmup = 5,
                int min_iters = 5, int max_iters = 2000) {
  Stats s;
  double start = NowUs();
  fn();
  s.first_us = NowUs() - start;
  std::vector<double> warm;
  for (int i = 1; i < warmup; ++i) {
    double t0 = NowUs();
    fn();
    warm.push_back(NowUs() - t0);
  }
  std::sort(warm.begin(), warm.end());
  double estimate = warm.empty() ? s.first_us : warm[warm.size() / 2];
  double wanted = seconds * 1e6 / std::max(estimate, 1.0);
  int iters = static_cast<int>(std::min<double>(max_iters, std::max<double>(min_iters, wanted)));
  std::vector<double> times;
  times.reserve(iters);
  for (int i = 0; i < iters; ++i) {
    double t0 = NowUs();
    fn();
    times.push_back(NowUs() - t0);
  }
  std::sort(times.begin(), times.end());
  s.iters = iters;
  s.median_us = Quantile(times, 0.5);
  s.p10_us = Quantile(times, 0.1);
  s.p90_us = Quantile(times, 0.9);
  s.min_us = times.front();
  return s;
}

Json& AddStats(Json& j, const Stats& s) {
  return j.Int("iters", s.iters)
      .Num("first_run_us", s.first_us)
      .Num("median_us", s.median_us)
      .Num("p10_us", s.p10_us)
      .Num("p90_us", s.p90_us)
      .Num("min_us", s.min_us);
}

// ---------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------

std::string DtypeLabel(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return "float32";
    case DataType::kHalf: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    default: return plexus::DataTypeName(dtype);
  }
}

std::string TfTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return "DT_FLOAT";
    case DataType::kHalf: return "DT_HALF";
    case DataType::kBFloat16: return "DT_BFLOAT16";
    case DataType::kInt32: return "DT_INT32";
    default: Fail("no TF type name for " + plexus::DataTypeName(dtype));
  }
}

// Deterministic values in [lo, hi) in host memory.
Tensor HostRandom(DataType dtype, const Shape& shape, uint64_t seed, float lo = -1.0f,
                  float hi = 1.0f) {
  auto made = Tensor::AllocateHost(dtype, shape);
  if (!made.ok()) Fail("host tensor: " + std::string(made.status().message()));
  Tensor t = *made;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  const int64_t n = t.num_elements();
  const float scale = (hi - lo) / 4294967296.0f;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float v = lo + static_cast<float>(static_cast<uint32_t>(state >> 32)) * scale;
    switch (dtype) {
      case DataType::kFloat: t.data<float>()[i] = v; break;
      case DataType::kHalf: t.data<uint16_t>()[i] = plexus::sdk::half(v).bits; break;
      case DataType::kBFloat16: t.data<uint16_t>()[i] = plexus::sdk::bfloat16(v).bits; break;
      default: Fail("HostRandom: unsupported dtype");
    }
  }
  return t;
}

Tensor ToDevice(const Tensor& host, plexus::Device* device) {
  auto moved = plexus::CopyTensorTo(host, device);
  if (!moved.ok()) Fail("copy to " + device->name() + ": " + std::string(moved.status().message()));
  return *moved;
}

Tensor DeviceRandom(plexus::Device* device, DataType dtype, const Shape& shape, uint64_t seed) {
  return ToDevice(HostRandom(dtype, shape, seed), device);
}

// ---------------------------------------------------------------------------
// Graphs in GraphDef text format.
// ---------------------------------------------------------------------------

std::string ShapeAttr(const Shape& shape) {
  std::string dims;
  for (int64_t d : shape) dims += " dim { size: " + std::to_string(d) + " }";
  return "attr { key: \"shape\" value { shape {" + dims + " } } }";
}

std::string TypeAttr(const std::string& key, DataType dtype) {
  return "attr { key: \"" + key + "\" value { type: " + TfTypeName(dtype) + " } }";
}

std::string Placeholder(const std::string& name, DataType dtype, const Shape& shape) {
  return "node { name: \"" + name + "\" op: \"Placeholder\" " + TypeAttr("dtype", dtype) + " " +
         ShapeAttr(shape) + " }\n";
}

std::string IntConst(const std::string& name, int value) {
  return "node { name: \"" + name + "\" op: \"Const\" " + TypeAttr("dtype", DataType::kInt32) +
         " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 "
         "} } int_val: " + std::to_string(value) + " } } } }\n";
}

// A node `y` of `op` over `inputs`, with attribute T and any `extra` attrs.
std::string OpNode(const std::string& op, const std::vector<std::string>& inputs, DataType dtype,
                   const std::string& extra = "") {
  std::string text = "node { name: \"y\" op: \"" + op + "\"";
  for (const auto& in : inputs) text += " input: \"" + in + "\"";
  return text + " " + TypeAttr("T", dtype) + " " + extra + " }\n";
}

std::shared_ptr<const plexus::Graph> ParseGraph(const std::string& text, const std::string& what) {
  auto graph = plexus::ImportGraphDefBytes(text, what, plexus::GraphFormat::kText);
  if (!graph.ok()) Fail("graph " + what + ": " + std::string(graph.status().message()));
  return std::shared_ptr<const plexus::Graph>(std::move(*graph));
}

// ---------------------------------------------------------------------------
// The bench context: runtime, device, session helper.
// ---------------------------------------------------------------------------

struct Bench {
  Options options;
  std::unique_ptr<plexus::Runtime> runtime;
  std::shared_ptr<plexus::Device> device;
  double copy_gbps = 0;  // from the bandwidth case, for the fractions

  std::unique_ptr<plexus::Session> MakeSession(std::shared_ptr<const plexus::Graph> graph,
                                               bool trace = false) {
    plexus::SessionOptions so;
    so.device = device->name();
    so.fetch_to_host = false;
    so.trace = trace;
    auto session = plexus::Session::Create(runtime.get(), std::move(graph), so);
    if (!session.ok()) Fail("session: " + std::string(session.status().message()));
    return std::move(*session);
  }

  // Base fields of every result line.
  Json Line(const std::string& group, const std::string& key) const {
    Json j;
    j.Str("side", "plexus").Str("group", group).Str("key", key).Bool("capture", options.capture);
    return j;
  }
};

std::string Notes(const plexus::Session& session) {
  std::string notes;
  for (const std::string& note : session.placement_notes()) {
    notes += (notes.empty() ? "" : "; ") + note;
  }
  return notes;
}

std::string OutputDevice(const std::vector<Tensor>& outputs) {
  if (outputs.empty() || outputs[0].device() == nullptr) return "host";
  return outputs[0].device()->name();
}

// Times one graph run with `feeds`, fetching "y" (or `fetch`). A failing run
// is reported as an "error" line instead of ending the program.
struct GraphResult {
  bool ok = false;
  Stats stats;
  std::string notes;
  std::string output_device;
  std::string error;
  std::vector<Tensor> outputs;
  int64_t graph_replays = 0;  // runs replayed from a device graph
  std::string graph_note;     // why not, when not
  int64_t copy_items = 0;     // copies between devices in the plan
  int64_t copies_per_run = 0; // of those, the ones every run makes (not a constant's)
};

GraphResult TimeGraph(Bench& b, std::shared_ptr<const plexus::Graph> graph,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      const std::string& fetch = "y", double seconds = -1) {
  GraphResult r;
  auto session = b.MakeSession(std::move(graph));
  std::string error;
  auto fn = [&]() {
    if (!error.empty()) return;
    auto out = session->Run(feeds, {fetch});
    if (!out.ok()) {
      error = std::string(out.status().message());
      return;
    }
    r.outputs = std::move(*out);
  };
  // One run first: a failure ends the case before the timing loop.
  double t0 = NowUs();
  fn();
  double first = NowUs() - t0;
  if (!error.empty()) {
    r.error = error;
    return r;
  }
  r.stats = TimeCalls(fn, seconds > 0 ? seconds : b.options.seconds);
  r.stats.first_us = first;
  if (!error.empty()) {
    r.error = error;
    return r;
  }
  r.ok = true;
  r.notes = Notes(*session);
  {
    const plexus::ExecutionInfo info = session->last_execution_info();
    r.graph_replays = info.device_graph_replays;
    r.graph_note = info.device_graph_note;
    r.copy_items = info.copy_items;
    r.copies_per_run = info.copies_per_run;
  }
  r.output_device = OutputDevice(r.outputs);
  return r;
}

void PrintError(Bench& b, const std::string& group, const std::string& key,
                const std::string& error) {
  b.Line(group, key).Str("error", error).Print();
  std::cerr << "plexus_cuda_bench: " << key << ": " << error << "\n";
}

// ---------------------------------------------------------------------------
// a. Bandwidth: device copy and elementwise ops.
// ---------------------------------------------------------------------------

void RunBandwidth(Bench& b) {
  plexus::Device& dev = *b.device;
  {
    const size_t bytes = b.options.quick ? size_t{16} << 20 : size_t{1} << 30;
    auto src = dev.Allocate(bytes);
    auto dst = dev.Allocate(bytes);
    if (!src.ok() || !dst.ok()) {
      PrintError(b, "bandwidth", "copy_1GiB", "cannot allocate 2 x 1 GiB on the device");
    } else {
      void* d = (*dst)->data();
      const void* s = (*src)->data();
      std::string error;
      Stats st = TimeCalls(
          [&]() {
            absl::Status status = dev.CopyDeviceToDevice(d, s, bytes);
            if (!status.ok() && error.empty()) error = std::string(status.message());
          },
          b.options.seconds, 3, 10, 200);
      if (!error.empty()) {
        PrintError(b, "bandwidth", "copy_1GiB", error);
      } else {
        double moved = 2.0 * static_cast<double>(bytes);
        b.copy_gbps = moved / (st.median_us * 1e3);
        Json j = b.Line("bandwidth", "copy_1GiB");
        j.Str("what", "Device::CopyDeviceToDevice of " + std::to_string(bytes >> 20) + " MiB").Num("bytes", moved);
        AddStats(j, st).Num("gbps", b.copy_gbps).Num("frac_copy", 1.0).Print();
      }
    }
  }

  const int64_t n = b.options.quick ? int64_t{1} << 20 : int64_t{64} << 20;  // 64 Mi elements
  const Shape shape = {n};
  struct Ew {
    std::string op;
    DataType dtype;
    int arity;
  };
  const std::vector<Ew> ops = {
      {"Relu", DataType::kFloat, 1},    {"Add", DataType::kFloat, 2},
      {"Mul", DataType::kFloat, 2},     {"Exp", DataType::kFloat, 1},
      {"Tanh", DataType::kFloat, 1},    {"Sigmoid", DataType::kFloat, 1},
      {"Add", DataType::kHalf, 2},      {"Add", DataType::kBFloat16, 2},
  };
  std::map<DataType, std::pair<Tensor, Tensor>> inputs;
  for (const Ew& e : ops) {
    if (!inputs.count(e.dtype)) {
      inputs[e.dtype] = {DeviceRandom(&dev, e.dtype, shape, 1),
                         DeviceRandom(&dev, e.dtype, shape, 2)};
    }
    const auto& [x, y] = inputs[e.dtype];
    std::string text = Placeholder("x", e.dtype, shape);
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
    if (e.arity == 2) {
      text += Placeholder("x2", e.dtype, shape);
      feeds.emplace_back("x2", y);
      text += OpNode(e.op, {"x", "x2"}, e.dtype);
    } else {
      text += OpNode(e.op, {"x"}, e.dtype);
    }
    std::string key = "ew_" + e.op + "_" + DtypeLabel(e.dtype);
    GraphResult r = TimeGraph(b, ParseGraph(text, key), feeds);
    if (!r.ok) {
      PrintError(b, "bandwidth", key, r.error);
      continue;
    }
    double bytes = static_cast<double>(n) * static_cast<double>(plexus::DataTypeSize(e.dtype)) *
                   (e.arity + 1);
    double gbps = bytes / (r.stats.median_us * 1e3);
    Json j = b.Line("bandwidth", key);
    j.Str("op", e.op).Str("dtype", DtypeLabel(e.dtype)).Dims("shape", shape).Num("bytes", bytes);
    AddStats(j, r.stats).Num("gbps", gbps);
    if (b.copy_gbps > 0) j.Num("frac_copy", gbps / b.copy_gbps);
    j.Str("output_device", r.output_device).Str("placement_notes", r.notes).Print();
  }
}

// ---------------------------------------------------------------------------
// b. MatMul.
// ---------------------------------------------------------------------------

void RunMatMul(Bench& b) {
  std::vector<std::pair<DataType, std::string>> kinds;
  if (b.options.tf32) {
    kinds = {{DataType::kFloat, "tf32"}};
  } else {
    kinds = {{DataType::kFloat, "float32"}, {DataType::kBFloat16, "bfloat16"}};
  }
  for (const auto& [dtype, label] : kinds) {
    std::vector<int64_t> sizes = {1024, 2048, 4096, 8192};
    if (b.options.quick) sizes = {128, 256};
    for (int64_t n : sizes) {
      const Shape shape = {n, n};
      std::string key = "matmul_" + label + "_" + std::to_string(n);
      std::string text = Placeholder("a", dtype, shape) + Placeholder("b", dtype, shape) +
                         OpNode("MatMul", {"a", "b"}, dtype);
      Tensor a = DeviceRandom(b.device.get(), dtype, shape, 3);
      Tensor bm = DeviceRandom(b.device.get(), dtype, shape, 4);
      GraphResult r = TimeGraph(b, ParseGraph(text, key), {{"a", a}, {"b", bm}});
      if (!r.ok) {
        PrintError(b, "matmul", key, r.error);
        continue;
      }
      double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      Json j = b.Line("matmul", key);
      j.Str("op", "MatMul").Str("dtype", label).Dims("shape", shape).Num("flops", flops);
      AddStats(j, r.stats).Num("tflops", flops / (r.stats.median_us * 1e6));
      j.Str("output_device", r.output_device).Str("placement_notes", r.notes).Print();
    }
  }
}

// ---------------------------------------------------------------------------
// c. Softmax and reductions.
// ---------------------------------------------------------------------------

void ReportMemoryBound(Bench& b, const std::string& group, const std::string& key,
                       const std::string& op, DataType dtype, const Shape& shape,
                       const GraphResult& r, double bytes) {
  double gbps = bytes / (r.stats.median_us * 1e3);
  Json j = b.Line(group, key);
  j.Str("op", op).Str("dtype", DtypeLabel(dtype)).Dims("shape", shape).Num("bytes", bytes);
  AddStats(j, r.stats).Num("gbps", gbps);
  if (b.copy_gbps > 0) j.Num("frac_copy", gbps / b.copy_gbps);
  j.Str("output_device", r.output_device).Str("placement_notes", r.notes).Print();
}

std::string ShapeLabel(const Shape& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

void RunReduce(Bench& b) {
  std::vector<Shape> softmax_shapes = {Shape{4096, 1024}, Shape{32768, 4096}};
  if (b.options.quick) softmax_shapes = {Shape{64, 1024}, Shape{256, 512}};
  for (const Shape& shape : softmax_shapes) {
    for (DataType dtype : {DataType::kFloat, DataType::kHalf}) {
      std::string key = "softmax_" + DtypeLabel(dtype) + "_" + ShapeLabel(shape);
      std::string text = Placeholder("x", dtype, shape) + OpNode("Softmax", {"x"}, dtype);
      Tensor x = DeviceRandom(b.device.get(), dtype, shape, 5);
      GraphResult r = TimeGraph(b, ParseGraph(text, key), {{"x", x}});
      if (!r.ok) {
        PrintError(b, "reduce", key, r.error);
        continue;
      }
      double bytes = 2.0 * static_cast<double>(x.nbytes());
      ReportMemoryBound(b, "reduce", key, "Softmax", dtype, shape, r, bytes);
    }
  }
  const DataType dtype = DataType::kFloat;
  std::vector<Shape> reduce_shapes = {Shape{4096, 4096}, Shape{64, 1024, 1024}};
  if (b.options.quick) reduce_shapes = {Shape{256, 256}, Shape{4, 64, 64}};
  for (const Shape& shape : reduce_shapes) {
    Tensor x = DeviceRandom(b.device.get(), dtype, shape, 6);
    for (const char* op : {"Sum", "Mean", "Max"}) {
      for (bool last : {true, false}) {
        int axis = last ? static_cast<int>(shape.size()) - 1 : 0;
        std::string key = std::string("reduce_") + op + "_" + (last ? "last" : "first") + "_" +
                          DtypeLabel(dtype) + "_" + ShapeLabel(shape);
        std::string text = Placeholder("x", dtype, shape) + IntConst("axis", axis) +
                           OpNode(op, {"x", "axis"}, dtype,
                                  TypeAttr("Tidx", DataType::kInt32) +
                                      " attr { key: \"keep_dims\" value { b: false } }");
        GraphResult r = TimeGraph(b, ParseGraph(text, key), {{"x", x}});
        if (!r.ok) {
          PrintError(b, "reduce", key, r.error);
          continue;
        }
        double out_elems = static_cast<double>(x.num_elements()) / static_cast<double>(shape[axis]);
        double bytes = static_cast<double>(x.nbytes()) + out_elems * 4.0;
        ReportMemoryBound(b, "reduce", key, op, dtype, shape, r, bytes);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// d. The real models.
// ---------------------------------------------------------------------------

struct Model {
  std::string name;       // key prefix
  std::string file;       // under tf_graphs/
  std::string input;      // fed tensor
  std::string fetch;
  Shape sample_shape;     // one sample, without the batch dimension
  std::string ref_input;  // .npy under tf_graphs/ (batch 1), may be empty
  std::string ref_output;
};

std::vector<Model> Models() {
  return {
      {"mlp_fc_layers", "mlp_fc_layers/frozen.pb", "X", "output", {784},
       "mlp_fc_layers/ref_input_ramp.npy", "mlp_fc_layers/ref_output_ramp.npy"},
      {"kws_cnn_s", "kws_cnn/CNN_S.pb", "Mfcc", "labels_softmax", {49, 10},
       "kws_cnn/ref_mfcc_input.npy", "kws_cnn/ref_CNN_S_softmax.npy"},
      {"kws_ds_cnn_s", "kws_cnn/DS_CNN_S.pb", "Mfcc", "labels_softmax", {49, 10},
       "kws_cnn/ref_mfcc_input.npy", "kws_cnn/ref_DS_CNN_S_softmax.npy"},
  };
}

// The model graph. The keyword-spotting CNNs start from a WAV file (DecodeWav,
// AudioSpectrogram, Mfcc), whose shapes fix the batch to 1: like
// bench/peers/prepare.py, the Mfcc node becomes a float Placeholder of shape
// [-1, 49, 10] with the same name, so the network body takes any batch (the
// frontend is no longer needed and is pruned). The weights and every other
// node are the original ones.
std::shared_ptr<const plexus::Graph> LoadModel(const Options& o, const Model& m) {
  std::string path = o.data_dir + "/tf_graphs/" + m.file;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) Fail("cannot open " + path + " (give --data-dir, the folder holding tf_graphs/)");
  std::string bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, got);
  std::fclose(f);
  plexus::tf::GraphDef def;
  if (!def.ParseFromString(bytes)) Fail("cannot parse " + path + " as a binary GraphDef");
  for (auto& node : *def.mutable_node()) {
    if (node.name() != "Mfcc" || node.op() != "Mfcc") continue;
    node.clear_input();
    node.clear_attr();
    node.set_op("Placeholder");
    (*node.mutable_attr())["dtype"].set_type(plexus::tf::DT_FLOAT);
    auto* shape = (*node.mutable_attr())["shape"].mutable_shape();
    shape->add_dim()->set_size(-1);
    shape->add_dim()->set_size(49);
    shape->add_dim()->set_size(10);
  }
  auto graph = plexus::ImportGraphDef(def, path);
  if (!graph.ok()) Fail("import " + path + ": " + std::string(graph.status().message()));
  return std::shared_ptr<const plexus::Graph>(std::move(*graph));
}

// Largest absolute difference between a device output and a reference .npy,
// and that divided by the largest reference magnitude (NaN when the output
// cannot be compared).
std::pair<double, double> RefDiff(const Tensor& out, const Tensor& ref) {
  auto host = plexus::CopyTensorTo(out, nullptr);
  if (!host.ok() || host->dtype() != DataType::kFloat || ref.dtype() != DataType::kFloat ||
      host->num_elements() != ref.num_elements()) {
    return {NAN, NAN};
  }
  double worst = 0;
  double scale = 1e-30;
  for (int64_t i = 0; i < ref.num_elements(); ++i) {
    double want = static_cast<double>(ref.data<float>()[i]);
    worst = std::max(worst, std::fabs(static_cast<double>(host->data<float>()[i]) - want));
    scale = std::max(scale, std::fabs(want));
  }
  return {worst, worst / scale};
}

// --profile: per model and batch, 13 traced runs (the first ones build the
// executor and pick algorithms; profile_summary.py takes each node's median)
// written to DIR/<key>.json in Chrome's trace format. A node's duration holds
// its device work: the runtime is synchronous_debug.
void ProfileModels(Bench& b) {
  mkdir(b.options.profile_dir.c_str(), 0755);
  for (const Model& m : Models()) {
    auto graph = LoadModel(b.options, m);
    for (int64_t batch : {1, 256}) {
      Shape shape = {batch};
      for (int64_t d : m.sample_shape) shape.push_back(d);
      const std::string key = "model_" + m.name + "_b" + std::to_string(batch);
      Tensor x = DeviceRandom(b.device.get(), DataType::kFloat, shape, 7);
      auto session = b.MakeSession(graph, /*trace=*/true);
      for (int i = 0; i < 13; ++i) {
        auto out = session->Run({{m.input, x}}, {m.fetch});
        if (!out.ok()) Fail(key + ": " + std::string(out.status().message()));
      }
      absl::Status s = session->WriteTrace(b.options.profile_dir + "/" + key + ".json");
      if (!s.ok()) Fail(std::string(s.message()));
      std::cerr << "plexus_cuda_bench: profiled " << key << "\n";
    }
  }
}

void RunModels(Bench& b) {
  if (!b.options.profile_dir.empty()) return ProfileModels(b);
  for (const Model& m : Models()) {
    auto graph = LoadModel(b.options, m);
    // Correctness first: the reference input (batch 1) against TensorFlow's
    // recorded output.
    std::pair<double, double> ref_diff = {NAN, NAN};
    std::string ref_error;
    if (!m.ref_input.empty()) {
      auto in = plexus::ReadNpy(b.options.data_dir + "/tf_graphs/" + m.ref_input);
      auto want = plexus::ReadNpy(b.options.data_dir + "/tf_graphs/" + m.ref_output);
      if (in.ok() && want.ok()) {
        auto session = b.MakeSession(graph);
        auto out = session->Run({{m.input, ToDevice(*in, b.device.get())}}, {m.fetch});
        if (out.ok()) {
          ref_diff = RefDiff((*out)[0], *want);
        } else {
          ref_error = std::string(out.status().message());
        }
      } else {
        ref_error = "cannot read the reference .npy files";
      }
    }
    for (int64_t batch : {1, 256}) {
      Shape shape = {batch};
      for (int64_t d : m.sample_shape) shape.push_back(d);
      std::string key = "model_" + m.name + "_b" + std::to_string(batch);
      Tensor x = DeviceRandom(b.device.get(), DataType::kFloat, shape, 7);
      GraphResult r = TimeGraph(b, graph, {{m.input, x}}, m.fetch, std::max(b.options.seconds, 0.5));
      if (!r.ok) {
        PrintError(b, "models", key, r.error);
        continue;
      }
      Json j = b.Line("models", key);
      j.Str("model", m.name).Int("batch", batch).Dims("shape", shape);
      AddStats(j, r.stats).Num("median_ms", r.stats.median_us / 1e3);
      j.Num("ref_max_abs_diff", ref_diff.first).Num("ref_rel_diff", ref_diff.second);
      if (!ref_error.empty()) j.Str("ref_error", ref_error);
      j.Int("graph_replays", r.graph_replays).Str("graph_note", r.graph_note);
      j.Int("copy_items", r.copy_items).Int("copies_per_run", r.copies_per_run);
      j
          .Str("output_device", r.output_device)
          .Str("placement_notes", r.notes)
          .Print();
    }
  }
}

// ---------------------------------------------------------------------------
// Weights for the PyTorch side.
// ---------------------------------------------------------------------------

int ExportWeights(const Options& o) {
  mkdir(o.export_dir.c_str(), 0755);
  for (const Model& m : Models()) {
    auto graph = LoadModel(o, m);
    std::string dir = o.export_dir + "/" + m.name;
    mkdir(dir.c_str(), 0755);
    int written = 0;
    for (const auto& node : graph->nodes()) {
      if (node->op != "Const") continue;
      auto proto = plexus::GetAttrTensorProto(*node, "value");
      if (!proto.ok()) Fail(std::string(proto.status().message()));
      auto t = plexus::TensorFromProto(**proto);
      if (!t.ok()) Fail(node->name + ": " + std::string(t.status().message()));
      if (t->dtype() != DataType::kFloat) continue;
      std::string file = node->name;
      std::replace(file.begin(), file.end(), '/', '_');
      file = dir + "/" + file + ".npy";
      absl::Status s = plexus::WriteNpy(file, *t);
      if (!s.ok()) Fail(std::string(s.message()));
      ++written;
    }
    std::cerr << "plexus_cuda_bench: wrote " << written << " tensors of " << m.name << " to "
              << dir << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  if (!o.export_dir.empty()) return ExportWeights(o);

  // Both variables must be set before the runtime (and so the plugin) exists.
  if (o.tf32) setenv("PX_CUDA_ALLOW_TF32", "1", 1);
  if (o.capture) setenv("PLEXUS_DEVICE_GRAPHS", "1", 1);

  Bench b;
  b.options = o;
  std::string cuda_plugin = PX_BENCH_CUDA_PLUGIN;
  struct stat st;
  if (stat(cuda_plugin.c_str(), &st) != 0) {
    const char* build = std::getenv("PX_BUILD");
    if (build != nullptr) cuda_plugin = std::string(build) + "/lib/plexus-plugins/" +
                                        cuda_plugin.substr(cuda_plugin.rfind('/') + 1);
  }
  plexus::RuntimeOptions ro;
  ro.discover_plugins = false;
  ro.synchronous_debug = !o.profile_dir.empty() && o.profile_sync;
  // The cpu plugin too: ops without a CUDA kernel fall back to it (and say so
  // in placement_notes).
  ro.plugin_paths = {cuda_plugin, PX_BENCH_CPU_PLUGIN};
  auto runtime = plexus::Runtime::Create(ro);
  if (!runtime.ok()) Fail("runtime: " + std::string(runtime.status().message()));
  b.runtime = std::move(*runtime);
  for (const auto& report : b.runtime->load_reports()) {
    if (!report.loaded) {
      std::printf("{\"side\": \"plexus\", \"skip\": \"plugin %s not loaded: %s\"}\n",
                  JsonEscape(report.path).c_str(), JsonEscape(report.message).c_str());
      std::cerr << "SKIP: plugin " << report.path << " not loaded: " << report.message << "\n";
      return 0;
    }
  }
  auto device = b.runtime->FindDevice(o.device);
  if (!device.ok()) {
    std::string why = "no device " + o.device + " (the cuda plugin reports none; "
                      "PLEXUS_LOG_LEVEL=info says why): " + std::string(device.status().message());
    std::printf("{\"side\": \"plexus\", \"skip\": \"%s\"}\n", JsonEscape(why).c_str());
    std::cerr << "SKIP: " << why << "\n";
    return 0;
  }
  b.device = *device;
  absl::Status opened = b.device->Open();
  if (!opened.ok()) Fail("open " + b.device->name() + ": " + std::string(opened.message()));

  Json info;
  info.Str("side", "plexus")
      .Str("info", "device")
      .Str("device", b.device->name())
      .Str("device_name", b.device->info().name)
      .Num("memory_gib", static_cast<double>(b.device->info().total_memory_bytes) / (1 << 30))
      .Bool("tf32", o.tf32)
      .Bool("capture", o.capture)
      .Str("PLEXUS_DEVICE_GRAPHS", std::getenv("PLEXUS_DEVICE_GRAPHS") ? std::getenv("PLEXUS_DEVICE_GRAPHS") : "")
      .Num("seconds_per_case", o.seconds)
      .Print();

  // The copy bandwidth is the yardstick of the memory-bound cases: measure
  // it whenever they run.
  if (o.cases.count("bandwidth")) {
    RunBandwidth(b);
  }
  if (o.cases.count("matmul")) RunMatMul(b);
  if (o.cases.count("reduce")) RunReduce(b);
  if (o.cases.count("models")) RunModels(b);
  return 0;
}
