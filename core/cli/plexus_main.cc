// The plexus command-line tool.
//
//   plexus devices
//   plexus run GRAPH|SAVEDMODEL_DIR --input NAME=FILE.npy|NAME=@FILE ...
//                    --output NAME ... [--init NODE]... [--signature KEY] [--tag TAG]...
//                    [--device DEV] [--out DIR] [--plugin PATH]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "plexus/op_catalog.h"
#include "plexus/op_coverage.h"
#include "plexus/plexus.h"
#include "plexus/saved_model.h"

namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  plexus devices [--plugin PATH]...\n"
    "      List the plugins found (with their ABI versions) and their devices.\n"
    "  plexus run GRAPH [--input NAME=FILE.npy]... --output NAME... [--init NODE]...\n"
    "             [--device DEV] [--out DIR] [--threads N] [--timeout SECONDS] [--plugin PATH]...\n"
    "      Import a TensorFlow GraphDef (.pb binary or .pbtxt text), feed the inputs,\n"
    "      run it and print each output. NAME is a node name (output 0) or node:k.\n"
    "      --init runs NODE once first, in the same session (a frozen graph's table\n"
    "      initializer, e.g. init_all_tables).\n"
    "      With --out, each output is written to DIR/NAME.npy (':' and '/' in NAME\n"
    "      become '_'; DIR is made if missing; strings as NumPy bytes, dtype S).\n"
    "  plexus run SAVEDMODEL_DIR [--signature KEY] [--tag TAG]... [--input KEY=FILE.npy]...\n"
    "             [--output KEY]... [--device DEV] [--out DIR] [--threads N] [--plugin PATH]...\n"
    "      Load a TensorFlow SavedModel (a folder holding saved_model.pb), restore its\n"
    "      variables, and run signature KEY (default serving_default) of the\n"
    "      MetaGraphDef whose tag set is the --tag values (default: serve). --input and --output\n"
    "      take the signature's input and output keys; without --output, every\n"
    "      output is printed. The signatures and their keys are listed on error.\n"
    "  --input NAME=@FILE feeds a string scalar holding FILE's raw bytes (for\n"
    "      example a WAV file for a wav_data input). A .npy of NumPy strings (dtype S,\n"
    "      or U, fed as UTF-8) feeds a string tensor.\n"
    "  Optimizer options of run (GraphDefs):\n"
    "    --dump-graphs DIR    write the graph before and after each optimizer pass to\n"
    "                         DIR as text (.pbtxt) and Graphviz (.dot; .svg with dot)\n"
    "    --no-optimize        run the graph as imported\n"
    "    --disable-pass NAME  skip one pass (prune, arithmetic, constant_fold, cse,\n"
    "                         layout, dense_layers, layer_norm, fuse,\n"
    "                         fuse_elementwise, dead_nodes, const_inputs); may be\n"
    "                         repeated\n"
    "    --trace FILE         write the run's timeline (Chrome trace format: open it\n"
    "                         in Perfetto), a track per device and thread\n"
    "    --memory-stats       print how the run was executed (scheduler, memory plan,\n"
    "                         copies) and each device's memory pool statistics\n"
    "  --threads N (GraphDefs and SavedModels): each kernel uses at most N threads\n"
    "      (default: the CPUs this process may use, fewer while other processes keep\n"
    "      some busy; PLEXUS_ADAPTIVE_THREADS=0 turns that off). Same as\n"
    "      PLEXUS_INTRA_OP_THREADS=N.\n"
    "  --timeout SECONDS (GraphDefs and SavedModels): stop the run once it has taken\n"
    "      SECONDS (between nodes; loops and functions too) and exit with status 1.\n"
    "  --placement (GraphDefs and SavedModels) prints where each node ran: one line\n"
    "      per node (device, the plugin whose kernel ran it, why it is not on the run's\n"
    "      device), the copies between devices and a summary.\n"
    "  plexus ops [--plugin PATH]...\n"
    "      Print the op catalog (docs/ops.md): every op, its dtypes and which plugins\n"
    "      implement it.\n"
    "  plexus ops --missing GRAPH [--plugin PATH]...\n"
    "      List the ops of a graph file or SavedModel folder that nothing loaded can\n"
    "      run (unknown to Plexus, or without a kernel in any plugin); exit status 1\n"
    "      when there are any.\n"
    "Plugins are found in PLEXUS_PLUGIN_PATH (folders or files, ':'-separated) and\n"
    "in the plexus-plugins folder beside the library.\n";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "plexus: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

int Usage(const std::string& why) {
  std::fprintf(stderr, "plexus: %s\n%s", why.c_str(), kUsage);
  return 2;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  return absl::StrCat(bytes / (1024 * 1024), " MiB");
}

absl::StatusOr<std::unique_ptr<plexus::Runtime>> MakeRuntime(const std::vector<std::string>& plugins) {
  plexus::RuntimeOptions options;
  options.plugin_paths = plugins;
  return plexus::Runtime::Create(options);
}

int Devices(const std::vector<std::string>& plugins) {
  auto runtime = MakeRuntime(plugins);
  if (!runtime.ok()) return Fail(runtime.status());
  auto reports = (*runtime)->load_reports();
  if (reports.empty()) {
    std::printf("no plugins found (search path: PLEXUS_PLUGIN_PATH, then %s)\n",
                plexus::PluginLoader::DefaultPluginDir().c_str());
  }
  for (const auto& plugin : (*runtime)->plugins()) {
    std::printf("plugin %s %s: ABI %u.%u, platform %s, %zu kernels, file %s\n",
                plugin->name().c_str(), plugin->version().c_str(), plugin->abi_major(),
                plugin->abi_minor(),
                plugin->table().platform_name ? plugin->table().platform_name : "?",
                plugin->kernels().size(), plugin->path().c_str());
    int device_count = 0;
    for (const auto& device : (*runtime)->devices()) {
      if (&device->plugin() != plugin.get()) continue;
      ++device_count;
      const PX_DeviceInfo& info = device->info();
      // [0.4] preferred_layout; older plugins leave it 0 (no preference).
      const int32_t layout = PX_STRUCT_HAS(&info, PX_DeviceInfo, preferred_layout) ? info.preferred_layout
                                                                                  : PX_LAYOUT_ANY;
      const char* layout_name = layout == PX_LAYOUT_NHWC ? "NHWC" : layout == PX_LAYOUT_NCHW ? "NCHW" : "any";
      std::printf("  device %s: %s (%s), memory %s total, %s free, preferred layout %s\n", device->name().c_str(),
                  info.name, info.vendor, FormatBytes(info.total_memory_bytes).c_str(),
                  FormatBytes(info.free_memory_bytes).c_str(), layout_name);
    }
    // A GPU plugin on a machine without its GPU: loaded, zero devices. The
    // plugin logs its reason at info level.
    if (device_count == 0) std::printf("  0 devices (PLEXUS_LOG_LEVEL=info shows the plugin's reason)\n");
  }
  for (const auto& report : reports) {
    if (report.loaded) {
      if (report.message.find("; ") != std::string::npos) std::printf("note: %s\n", report.message.c_str());
      continue;
    }
    std::printf("refused: %s\n", report.message.c_str());
  }
  auto best = (*runtime)->DefaultDevice();
  std::printf("default device: %s\n", best ? best->name().c_str() : "none");
  return 0;
}

// Reads an --input value: FILE.npy, or @FILE for a string scalar of FILE's bytes.
absl::StatusOr<plexus::Tensor> ReadInput(const std::string& name, const std::string& file) {
  if (!file.empty() && file[0] == '@') {
    std::string path = file.substr(1);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("input '", name, "': cannot open '", path, "'"));
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      return absl::DataLossError(absl::StrCat("input '", name, "': cannot read '", path, "'"));
    }
    return plexus::Tensor::FromStrings({}, {std::move(bytes)});
  }
  auto tensor = plexus::ReadNpy(file);
  if (!tensor.ok()) return plexus::Annotate(tensor.status(), absl::StrCat("input '", name, "'"));
  return tensor;
}

// Prints each output and, with an --out folder, writes it as DIR/NAME.npy.
int PrintOutputs(const std::vector<std::string>& names, const std::vector<plexus::Tensor>& values,
                 const std::string& out_dir) {
  if (!out_dir.empty()) {
    // Like `mkdir -p`: the folder is made when it is not there yet.
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) {
      return Fail(absl::PermissionDeniedError(absl::StrCat("cannot create the --out folder '", out_dir,
                                                           "': ", ec.message())));
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const plexus::Tensor& t = values[i];
    std::printf("%s: %s\n", names[i].c_str(), t.DebugString(10).c_str());
    if (!out_dir.empty()) {
      std::string file = absl::StrCat(out_dir, "/",
                                      absl::StrReplaceAll(names[i], {{":", "_"}, {"/", "_"}}), ".npy");
      absl::Status s = plexus::WriteNpy(file, t);
      if (!s.ok()) return Fail(s);
      std::printf("  wrote %s\n", file.c_str());
    }
  }
  return 0;
}

std::string DescribeSignature(const plexus::Signature& sig) {
  auto keys = [](const std::map<std::string, plexus::SignatureTensor>& m) {
    std::vector<std::string> out;
    for (const auto& [key, t] : m) {
      out.push_back(absl::StrCat(key, " (", t.tensor_name, ", ", plexus::DataTypeName(t.dtype), " ",
                                 t.shape.ToString(), ")"));
    }
    return out.empty() ? std::string("none") : absl::StrJoin(out, ", ");
  };
  return absl::StrCat("  ", sig.key, ": inputs ", keys(sig.inputs), "; outputs ", keys(sig.outputs));
}

int RunSavedModel(plexus::Runtime* runtime, const std::string& dir, const std::string& signature,
                  const std::set<std::string>& tags, const std::string& device,
                  const std::vector<std::pair<std::string, std::string>>& inputs,
                  const std::vector<std::string>& outputs, const std::string& out_dir,
                  bool placement) {
  plexus::SavedModelOptions options;
  options.tags = tags;
  options.device = device;
  auto model = plexus::SavedModelSession::Load(runtime, dir, options);
  if (!model.ok()) return Fail(model.status());
  auto sig = (*model)->model().FindSignature(signature);
  if (!sig.ok()) {
    std::fprintf(stderr, "plexus: error: %s\n", std::string(sig.status().message()).c_str());
    for (const auto& [key, s] : (*model)->model().signatures()) {
      std::fprintf(stderr, "%s\n", DescribeSignature(s).c_str());
    }
    return 1;
  }
  std::map<std::string, plexus::Tensor> feeds;
  for (const auto& [name, file] : inputs) {
    auto tensor = ReadInput(name, file);
    if (!tensor.ok()) return Fail(tensor.status());
    feeds[name] = *std::move(tensor);
  }
  auto results = (*model)->Run(signature, feeds, outputs);
  if (!results.ok()) {
    std::fprintf(stderr, "plexus: error: %s\n%s\n", std::string(results.status().message()).c_str(),
                 DescribeSignature(**sig).c_str());
    return 1;
  }
  std::printf("ran signature '%s' of SavedModel %s (tags %s) on %s\n", signature.c_str(),
              (*model)->model().dir().c_str(), absl::StrJoin(tags, ",").c_str(),
              (*model)->session().device().name().c_str());
  for (const std::string& note : (*model)->session().placement_notes()) {
    std::printf("note: %s\n", note.c_str());
  }
  if (placement) std::printf("%s", (*model)->session().placement().ToString().c_str());
  std::vector<std::string> names;
  std::vector<plexus::Tensor> values;
  if (outputs.empty()) {  // every output, in key order
    for (const auto& [key, value] : *results) {
      names.push_back(key);
      values.push_back(value);
    }
  } else {
    for (const std::string& key : outputs) {
      names.push_back(key);
      values.push_back(results->at(key));
    }
  }
  return PrintOutputs(names, values, out_dir);
}

bool IsSavedModelDir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) &&
         (std::filesystem::exists(path + "/saved_model.pb", ec) ||
          std::filesystem::exists(path + "/saved_model.pbtxt", ec));
}

// The options of `plexus run`.
struct RunArgs {
  std::string graph_path, device, out_dir, signature, dump_dir, trace_path;
  bool optimize = true;
  bool memory_stats = false;
  bool placement = false;
  bool saved_model = false;  // graph_path is a SavedModel folder
  int threads = 0;           // --threads; 0: automatic
  double timeout = 0;        // --timeout seconds; 0: none
  std::vector<std::string> disabled_passes;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::string> outputs, plugins, init_nodes;
  std::set<std::string> tags;
};

// Parses the arguments of `plexus run` (argv[2] on) into `args`. Returns
// the exit code when they are bad (after printing the usage), or nullopt.
std::optional<int> ParseRunArgs(int argc, char** argv, RunArgs* args) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (arg == "--input") {
      const char* v = value("--input");
      if (!v) return Usage("--input needs NAME=FILE.npy or NAME=@FILE");
      std::string spec = v;
      size_t eq = spec.find('=');  // names have no '='; paths may
      if (eq == std::string::npos || eq == 0) return Usage(absl::StrCat("bad --input '", spec, "': expected NAME=FILE.npy or NAME=@FILE"));
      args->inputs.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (arg == "--output") {
      const char* v = value("--output");
      if (!v) return Usage("--output needs NAME");
      args->outputs.push_back(v);
    } else if (arg == "--init") {
      const char* v = value("--init");
      if (!v) return Usage("--init needs a node name");
      args->init_nodes.push_back(v);
    } else if (arg == "--signature") {
      const char* v = value("--signature");
      if (!v) return Usage("--signature needs a signature key");
      args->signature = v;
    } else if (arg == "--tag") {
      const char* v = value("--tag");
      if (!v) return Usage("--tag needs a tag");
      args->tags.insert(v);
    } else if (arg == "--device") {
      const char* v = value("--device");
      if (!v) return Usage("--device needs a device name");
      args->device = v;
    } else if (arg == "--out") {
      const char* v = value("--out");
      if (!v) return Usage("--out needs a folder");
      args->out_dir = v;
    } else if (arg == "--plugin") {
      const char* v = value("--plugin");
      if (!v) return Usage("--plugin needs a file");
      args->plugins.push_back(v);
    } else if (arg == "--dump-graphs") {
      const char* v = value("--dump-graphs");
      if (!v) return Usage("--dump-graphs needs a folder");
      args->dump_dir = v;
    } else if (arg == "--trace") {
      const char* v = value("--trace");
      if (!v) return Usage("--trace needs a file");
      args->trace_path = v;
    } else if (arg == "--threads") {
      const char* v = value("--threads");
      int n = 0;
      if (!v || !absl::SimpleAtoi(v, &n) || n < 1) return Usage("--threads needs a count of 1 or more");
      args->threads = n;
    } else if (arg == "--timeout") {
      const char* v = value("--timeout");
      double t = 0;
      if (!v || !absl::SimpleAtod(v, &t) || !(t > 0)) return Usage("--timeout needs a number of seconds above 0");
      args->timeout = t;
    } else if (arg == "--no-optimize") {
      args->optimize = false;
    } else if (arg == "--memory-stats") {
      args->memory_stats = true;
    } else if (arg == "--placement") {
      args->placement = true;
    } else if (arg == "--disable-pass") {
      const char* v = value("--disable-pass");
      if (!v) return Usage("--disable-pass needs a pass name");
      args->disabled_passes.push_back(v);
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(absl::StrCat("unknown option '", arg, "'"));
    } else if (args->graph_path.empty()) {
      args->graph_path = arg;
    } else {
      return Usage(absl::StrCat("unexpected argument '", arg, "'"));
    }
  }
  if (args->graph_path.empty()) return Usage("run needs a GRAPH file or a SavedModel folder");
  args->saved_model = IsSavedModelDir(args->graph_path);
  if (args->saved_model && !args->init_nodes.empty()) {
    return Usage("--init applies to a graph file; a SavedModel runs its own init op");
  }
  if (!args->saved_model && (!args->signature.empty() || !args->tags.empty())) {
    return Usage(absl::StrCat("--signature and --tag apply to a SavedModel folder (holding "
                              "saved_model.pb); '", args->graph_path, "' is not one"));
  }
  if (args->outputs.empty() && !args->saved_model) return Usage("run needs at least one --output");
  return std::nullopt;
}

// --memory-stats: how the last run was executed and each device's pool.
void PrintMemoryStats(plexus::Runtime& runtime, const plexus::Session& session) {
  const plexus::ExecutionInfo info = session.last_execution_info();
  std::printf("executor: %s scheduler, %lld copy items\n", info.parallel ? "parallel" : "serial",
              static_cast<long long>(info.copy_items));
  std::printf("memory plan: %lld tensors of %lld bytes in arenas of %lld bytes\n",
              static_cast<long long>(info.planned_tensors), static_cast<long long>(info.planned_tensor_bytes),
              static_cast<long long>(info.arena_bytes));
  std::printf("threads: %d per kernel in the last run (of %d usable CPUs)\n", info.intra_op_threads,
              plexus::UsableCpuCount());
  if (info.device_graph_eligible || info.device_graph_note != "off") {
    std::printf("device graph: %s%s%s\n",
                info.device_graph_recorded ? "recorded" : info.device_graph_eligible ? "eligible" : "not used",
                info.device_graph_note.empty() ? "" : ": ", info.device_graph_note.c_str());
  }
  for (const auto& d : runtime.devices()) {
    std::printf("memory pool %s: %s\n", d->name().c_str(), d->memory_stats().ToString().c_str());
  }
}

// Runs a GraphDef file: imports it, optimizes and runs it in a session, and
// prints what the options ask for and the outputs.
int RunGraphDef(plexus::Runtime* runtime, const RunArgs& args) {
  auto graph = plexus::ImportGraphDefFile(args.graph_path);
  if (!graph.ok()) return Fail(graph.status());
  std::shared_ptr<const plexus::Graph> shared(std::move(*graph));
  plexus::SessionOptions options;
  options.device = args.device;
  options.optimizer.enabled = args.optimize;
  options.optimizer.disabled_passes = args.disabled_passes;
  options.trace = !args.trace_path.empty();
  if (!args.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.dump_dir, ec);
    if (ec) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("cannot create ", args.dump_dir, ": ", ec.message())));
    }
    options.optimizer.dump_dir = args.dump_dir;
  }
  auto session = plexus::Session::Create(runtime, shared, options);
  if (!session.ok()) return Fail(session.status());

  std::vector<std::pair<std::string, plexus::Tensor>> feeds;
  for (const auto& [name, file] : args.inputs) {
    auto tensor = ReadInput(name, file);
    if (!tensor.ok()) return Fail(tensor.status());
    feeds.emplace_back(name, *std::move(tensor));
  }
  if (!args.init_nodes.empty()) {
    auto init = (*session)->Run({}, {}, args.init_nodes);
    if (!init.ok()) return Fail(init.status());
  }
  auto results = (*session)->Run(feeds, args.outputs);
  if (!results.ok()) return Fail(results.status());
  std::printf("ran %s on %s\n", args.graph_path.c_str(), (*session)->device().name().c_str());
  for (const std::string& note : (*session)->placement_notes()) std::printf("note: %s\n", note.c_str());
  if (args.placement) std::printf("%s", (*session)->placement().ToString().c_str());
  if (args.memory_stats) PrintMemoryStats(*runtime, **session);
  if (!args.trace_path.empty()) {
    absl::Status written = (*session)->WriteTrace(args.trace_path);
    if (!written.ok()) return Fail(written);
    std::printf("timeline written to %s\n", args.trace_path.c_str());
  }
  if (!args.dump_dir.empty()) {
    for (const std::string& line : (*session)->optimizer_log()) std::printf("optimizer: %s\n", line.c_str());
    std::printf("graphs written to %s\n", args.dump_dir.c_str());
  }
  return PrintOutputs(args.outputs, *results, args.out_dir);
}

// `plexus ops --missing GRAPH`: the ops of a graph file or SavedModel that
// nothing loaded can run; exit status 1 when there are any.
int MissingOps(const plexus::Runtime& runtime, const std::string& path) {
  absl::StatusOr<plexus::tf::GraphDef> def;
  if (IsSavedModelDir(path)) {
    auto model = plexus::SavedModel::Read(path);
    if (!model.ok()) return Fail(model.status());
    def = (*model)->meta_graph().graph_def();
  } else {
    def = plexus::ReadGraphDefFile(path);
  }
  if (!def.ok()) return Fail(def.status());
  const std::vector<plexus::MissingOp> missing = plexus::FindMissingOps(*def, runtime);
  if (missing.empty()) {
    std::printf("every op %s uses can run here\n", path.c_str());
    return 0;
  }
  std::printf("%zu op(s) of %s cannot run here:\n", missing.size(), path.c_str());
  for (const plexus::MissingOp& m : missing) {
    std::printf("  %s: %s (%d node%s, e.g. %s)\n", m.op.c_str(), m.why.c_str(), m.nodes, m.nodes == 1 ? "" : "s",
                m.example.c_str());
  }
  return 1;
}

// Sets `flag` when `seconds` pass, unless destroyed first (--timeout).
int Run(int argc, char** argv) {
  RunArgs args;
  if (std::optional<int> bad = ParseRunArgs(argc, argv, &args)) return *bad;
  if (args.threads > 0) plexus::SetDefaultIntraOpThreads(args.threads);
  auto runtime = MakeRuntime(args.plugins);
  if (!runtime.ok()) return Fail(runtime.status());
  // --timeout: every run this thread makes (init, the graph, a SavedModel's
  // restore and signature) stops between nodes once the time has passed.
  plexus::ScopedRunDeadline deadline(args.timeout > 0 ? absl::Seconds(args.timeout) : absl::InfiniteDuration());
  int code = 0;
  {
    if (args.saved_model) {
      if (args.signature.empty()) args.signature = "serving_default";
      if (args.tags.empty()) args.tags.insert(plexus::kSavedModelServeTag);
      code = RunSavedModel(runtime->get(), args.graph_path, args.signature, args.tags, args.device, args.inputs,
                           args.outputs, args.out_dir, args.placement);
    } else {
      code = RunGraphDef(runtime->get(), args);
    }
  }
  if (code != 0 && deadline.passed()) {
    std::fprintf(stderr, "plexus: error: the run took longer than --timeout %g s and was stopped\n", args.timeout);
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::printf("%s", kUsage);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  if (command == "devices") {
    std::vector<std::string> plugins;
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
        plugins.push_back(argv[++i]);
      } else {
        return Usage(absl::StrCat("unexpected argument '", argv[i], "'"));
      }
    }
    return Devices(plugins);
  }
  if (command == "run") return Run(argc, argv);
  if (command == "ops") {
    std::vector<std::string> plugins;
    std::string missing_in;
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
        plugins.push_back(argv[++i]);
      } else if (std::strcmp(argv[i], "--missing") == 0 && i + 1 < argc) {
        missing_in = argv[++i];
      } else {
        return Usage(absl::StrCat("unexpected argument '", argv[i], "'"));
      }
    }
    auto runtime = MakeRuntime(plugins);
    if (!runtime.ok()) return Fail(runtime.status());
    if (!missing_in.empty()) return MissingOps(**runtime, missing_in);
    std::printf("%s", plexus::OpCatalogMarkdown(**runtime).c_str());
    return 0;
  }
  return Usage(absl::StrCat("unknown command '", command, "'"));
}
