// Graphs, sessions and SavedModels from Python. Runs release the GIL and
// stop cleanly on Ctrl-C: a SIGINT handler, chained before Python's own,
// sets the run's cancel flag; the run stops between nodes and the
// KeyboardInterrupt is raised once it has.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common.h"
#include "plexus/graph_import.h"
#include "plexus/saved_model.h"
#include "plexus/placement.h"
#include "plexus/session.h"

namespace plexus::python {
namespace {

std::atomic<std::atomic<bool>*> g_cancel_target{nullptr};
struct sigaction g_previous_sigint;
std::thread::id g_main_thread = std::this_thread::get_id();

void OnSigint(int sig, siginfo_t* info, void* context) {
  if (std::atomic<bool>* flag = g_cancel_target.load()) flag->store(true);
  // Then Python's handler, which raises KeyboardInterrupt later.
  if (g_previous_sigint.sa_flags & SA_SIGINFO) {
    if (g_previous_sigint.sa_sigaction != nullptr) g_previous_sigint.sa_sigaction(sig, info, context);
  } else if (g_previous_sigint.sa_handler != SIG_DFL && g_previous_sigint.sa_handler != SIG_IGN &&
             g_previous_sigint.sa_handler != nullptr) {
    g_previous_sigint.sa_handler(sig);
  }
}

// Runs `fn` (which runs a graph) without the GIL; Ctrl-C cancels it.
template <typename Fn>
auto RunCancellable(Fn fn) -> decltype(fn()) {
  std::atomic<bool> cancel{false};
  const bool handle_signals = std::this_thread::get_id() == g_main_thread && g_cancel_target.load() == nullptr;
  if (handle_signals) {
    struct sigaction ours {};
    ours.sa_sigaction = &OnSigint;
    ours.sa_flags = SA_SIGINFO;
    sigemptyset(&ours.sa_mask);
    g_cancel_target.store(&cancel);
    sigaction(SIGINT, &ours, &g_previous_sigint);
  }
  decltype(fn()) result = [&] {
    nb::gil_scoped_release release;
    ScopedRunCancelFlag scoped(&cancel);
    return fn();
  }();
  if (handle_signals) {
    sigaction(SIGINT, &g_previous_sigint, nullptr);
    g_cancel_target.store(nullptr);
  }
  if (!result.ok() && cancel.load()) {
    if (PyErr_CheckSignals() != 0) throw nb::python_error();  // KeyboardInterrupt
  }
  return result;
}

struct PyGraph {
  std::shared_ptr<const Graph> graph;
};

// A timeout argument in seconds: 0 (or None on the Python side) means none.
absl::Duration TimeoutOption(double seconds) {
  if (std::isnan(seconds) || seconds < 0) {
    Throw(absl::InvalidArgumentError(absl::StrCat("timeout must be None, 0 or a positive number of seconds, got ",
                                                  seconds)));
  }
  return seconds > 0 && std::isfinite(seconds) ? absl::Seconds(seconds) : absl::InfiniteDuration();
}

// `with plexus.run_timeout(seconds):` a deadline for every run this thread
// makes inside (graphs, SavedModels, traced functions with their loops).
struct PyRunDeadline {
  double seconds = 0;
  std::unique_ptr<ScopedRunDeadline> scope;
  bool expired = false;  // as of leaving the block
};

nb::object ShapeObject(const PartialShape& s) {
  if (!s.rank_known()) return nb::none();
  nb::list dims;
  for (int64_t i = 0; i < s.rank(); ++i) dims.append(s.dim(i) < 0 ? nb::object(nb::none()) : nb::object(nb::int_(s.dim(i))));
  return nb::tuple(dims);
}

nb::list NodeList(const Graph& g) {
  nb::list out;
  for (const auto& node : g.nodes()) {
    nb::dict d;
    d["name"] = node->name;
    d["op"] = node->op;
    d["device"] = node->requested_device;
    nb::list inputs, dtypes, shapes;
    for (const Endpoint& e : node->inputs) inputs.append(absl::StrCat(e.node->name, ":", e.index));
    for (const Node* c : node->control_inputs) inputs.append(absl::StrCat("^", c->name));
    for (int k = 0; k < node->num_outputs(); ++k) {
      dtypes.append(DTypeObject(node->output_types[k]));
      shapes.append(ShapeObject(k < static_cast<int>(node->output_shapes.size()) ? node->output_shapes[k]
                                                                                   : PartialShape()));
    }
    d["inputs"] = inputs;
    d["output_dtypes"] = dtypes;
    d["output_shapes"] = shapes;
    d["num_consumers"] = node->consumers.size();
    d["is_stateful"] = node->def != nullptr && node->def->is_stateful;
    out.append(d);
  }
  return out;
}

nb::bytes GraphDefBytes(const Graph& g) {
  std::string bytes;
  GraphToGraphDef(g).SerializeToString(&bytes);
  return nb::bytes(bytes.data(), bytes.size());
}

struct PySession {
  std::unique_ptr<Session> session;
  std::shared_ptr<const Graph> graph;
};

std::vector<std::pair<std::string, Tensor>> Feeds(nb::handle feeds) {
  std::vector<std::pair<std::string, Tensor>> out;
  if (feeds.is_none()) return out;
  for (auto [key, value] : nb::cast<nb::dict>(feeds)) {
    std::string name = nb::cast<std::string>(key);
    out.emplace_back(name, ToTensor(value, DataType::kInvalid, absl::StrCat("feed '", name, "'")));
  }
  return out;
}

// A run's streams are not ordered after the eager streams, so eager work
// still queued must finish before the run starts: the run may read its
// results (fed tensors, or a variable an eager assignment is writing), and
// may reuse memory that eager ops gave back while their kernels were queued.
void WaitForEagerWork() {
  absl::Status status;
  {
    nb::gil_scoped_release release;
    status = SynchronizeEagerWork();
  }
  Check(status);  // with the GIL again: it may raise
}

nb::list Wrap(std::vector<Tensor> tensors) {
  nb::list out;
  for (Tensor& t : tensors) out.append(WrapTensor(std::move(t)));
  return out;
}

// The placement report (plexus/placement.h) as plain Python values, wrapped
// by plexus.placement.PlacementReport.
nb::dict PlacementDict(const PlacementReport& report) {
  nb::dict out;
  out["device"] = report.device;
  nb::list nodes;
  for (const NodePlacement& n : report.nodes) {
    nodes.append(nb::make_tuple(n.node, n.op, PlacedByName(n.how), n.device, n.plugin, n.reason, n.once));
  }
  out["nodes"] = nodes;
  nb::list copies;
  for (const CopyPlacement& c : report.copies) copies.append(nb::make_tuple(c.tensor, c.from, c.to, c.reader));
  out["copies"] = copies;
  nb::dict per_device;
  for (const auto& [device, n] : report.NodesPerDevice()) per_device[nb::str(device.c_str())] = n;
  out["per_device"] = per_device;
  out["summary"] = report.Summary();
  out["text"] = report.ToString();
  return out;
}

struct PySavedModel {
  std::unique_ptr<SavedModelSession> model;
};

nb::dict SignatureTensors(const std::map<std::string, SignatureTensor>& tensors) {
  nb::dict out;
  for (const auto& [key, t] : tensors) {
    nb::dict d;
    d["name"] = t.tensor_name;
    d["dtype"] = DTypeObject(t.dtype);
    d["shape"] = ShapeObject(t.shape);
    out[key.c_str()] = d;
  }
  return out;
}

// One run per element (plexus.data's parallel map): the feeds are converted
// here, then the runs go to `threads` C++ threads with the GIL released;
// results come back in order.
nb::list RunMany(PySession& s, const std::vector<std::string>& feed_names, nb::handle elements,
                 const std::vector<std::string>& fetches, const std::vector<std::string>& targets, int threads) {
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds;
  for (nb::handle element : elements) {
    std::vector<std::pair<std::string, Tensor>> values;
    size_t k = 0;
    for (nb::handle v : element) {
      if (k >= feed_names.size()) Throw(absl::InvalidArgumentError("too many feed values"));
      values.emplace_back(feed_names[k], ToTensor(v, DataType::kInvalid, absl::StrCat("argument ", k)));
      ++k;
    }
    feeds.push_back(std::move(values));
  }
  WaitForEagerWork();
  std::vector<absl::StatusOr<std::vector<Tensor>>> results(feeds.size());
  {
    nb::gil_scoped_release release;
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < feeds.size(); i = next++) {
        results[i] = s.session->Run(feeds[i], fetches, targets);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::max(threads, 1) && static_cast<size_t>(t) < feeds.size(); ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }
  nb::list out;
  for (auto& r : results) out.append(Wrap(Unwrap(std::move(r))));
  return out;
}

}  // namespace

void BindGraph(nb::module_& m) {
  nb::class_<PyGraph>(m, "Graph", "An imported or traced graph (immutable).")
      .def_static("from_bytes", [](nb::bytes data, const std::string& source) {
        std::string_view view(data.c_str(), data.size());
        auto g = ImportGraphDefBytes(absl::string_view(view.data(), view.size()), source);
        return PyGraph{std::shared_ptr<const Graph>(Unwrap(std::move(g)))};
      }, nb::arg("data"), nb::arg("source") = "<bytes>")
      .def_static("from_file", [](const std::string& path) {
        auto g = ImportGraphDefFile(path);
        return PyGraph{std::shared_ptr<const Graph>(Unwrap(std::move(g)))};
      })
      .def("nodes", [](const PyGraph& g) { return NodeList(*g.graph); })
      .def("graph_def", [](const PyGraph& g) { return GraphDefBytes(*g.graph); },
           "The graph as serialized GraphDef bytes.")
      .def_prop_ro("source", [](const PyGraph& g) { return g.graph->source; })
      .def_prop_ro("num_nodes", [](const PyGraph& g) { return g.graph->num_nodes(); });

  nb::class_<PyRunDeadline>(m, "RunDeadline", "A deadline for the runs this thread makes in a with block.")
      .def("__init__", [](PyRunDeadline* self, double seconds) {
        TimeoutOption(seconds);
        new (self) PyRunDeadline{seconds, nullptr, false};
      }, nb::arg("seconds"))
      .def("__enter__", [](PyRunDeadline& d) -> PyRunDeadline& {
        if (d.scope != nullptr) Throw(absl::FailedPreconditionError("run_timeout: this block is already entered"));
        d.scope = std::make_unique<ScopedRunDeadline>(TimeoutOption(d.seconds));
        return d;
      }, nb::rv_policy::reference)
      .def("__exit__", [](PyRunDeadline& d, nb::args) {
        d.expired = d.scope != nullptr && d.scope->passed();
        d.scope.reset();
        return false;
      })
      .def_prop_ro("expired", [](const PyRunDeadline& d) { return d.scope != nullptr ? d.scope->passed() : d.expired; })
      .def_prop_ro("seconds", [](const PyRunDeadline& d) { return d.seconds; });

  nb::class_<PySession>(m, "Session", "Runs a graph: feeds, fetches and targets.")
      .def("__init__", [](PySession* self, const PyGraph& graph, nb::handle device, bool optimize,
                          bool device_graphs, bool eager_variables, bool fetch_to_host, int threads) {
        SessionOptions options;
        options.intra_op_threads = threads;
        // Traced functions see (and update) the variables eager code made.
        if (eager_variables) options.resources = GetEager().resources();
        if (!device.is_none()) options.device = nb::cast<std::string>(device);
        else if (Device* d = ScopeDevice()) options.device = d->name();
        options.optimizer.enabled = optimize;
        options.device_graphs = device_graphs;
        // Traced functions leave results where they were computed, as eager
        // ops do; imported graphs give host tensors.
        options.fetch_to_host = fetch_to_host;
        auto s = Session::Create(&GetRuntime(), graph.graph, options);
        new (self) PySession{Unwrap(std::move(s)), graph.graph};
      }, nb::arg("graph"), nb::arg("device") = nb::none(), nb::arg("optimize") = true,
         nb::arg("device_graphs") = false, nb::arg("eager_variables") = false,
         nb::arg("fetch_to_host") = true, nb::arg("threads") = 0)
      .def("run", [](PySession& s, nb::handle feeds, const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, double timeout) {
        auto feed_values = Feeds(feeds);
        WaitForEagerWork();
        RunOptions options;
        options.timeout = TimeoutOption(timeout);
        auto result = RunCancellable([&] { return s.session->Run(feed_values, fetches, targets, options); });
        return Wrap(Unwrap(std::move(result)));
      }, nb::arg("feeds"), nb::arg("fetches"), nb::arg("targets") = std::vector<std::string>{},
         nb::arg("timeout") = 0.0)
      .def("run_values", [](PySession& s, const std::vector<std::string>& feed_names, nb::handle values,
                            const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
        // Positional feeds (the traced-function path): no dict building.
        std::vector<std::pair<std::string, Tensor>> feed_values;
        size_t k = 0;
        for (nb::handle v : values) {
          if (k >= feed_names.size()) Throw(absl::InvalidArgumentError("too many feed values"));
          feed_values.emplace_back(feed_names[k],
                                   ToTensor(v, DataType::kInvalid, absl::StrCat("argument ", k)));
          ++k;
        }
        WaitForEagerWork();
        auto result = RunCancellable([&] { return s.session->Run(feed_values, fetches, targets); });
        return Wrap(Unwrap(std::move(result)));
      })
      .def("run_many", &RunMany, nb::arg("feed_names"), nb::arg("elements"), nb::arg("fetches"),
           nb::arg("targets"), nb::arg("threads"))
      .def_prop_ro("device", [](const PySession& s) { return s.session->device().name(); })
      .def("placement_notes", [](const PySession& s) { return s.session->placement_notes(); })
      .def("placement", [](const PySession& s) { return PlacementDict(s.session->placement()); })
      .def("optimizer_log", [](const PySession& s) { return s.session->optimizer_log(); })
      .def("optimized_graph_def", [](const PySession& s) -> nb::object {
        auto g = s.session->last_run_graph();
        if (g == nullptr) return nb::none();
        return GraphDefBytes(*g);
      })
      .def_prop_ro("graph", [](const PySession& s) { return PyGraph{s.graph}; });

  nb::class_<PySavedModel>(m, "SavedModel", "A loaded SavedModel: its signatures, restored variables.")
      .def("__init__", [](PySavedModel* self, const std::string& dir, const std::vector<std::string>& tags,
                          nb::handle device) {
        SavedModelOptions options;
        options.tags = std::set<std::string>(tags.begin(), tags.end());
        if (!device.is_none()) options.device = nb::cast<std::string>(device);
        else if (Device* d = ScopeDevice()) options.device = d->name();
        absl::StatusOr<std::unique_ptr<SavedModelSession>> loaded;
        {
          nb::gil_scoped_release release;
          loaded = SavedModelSession::Load(&GetRuntime(), dir, options);
        }
        new (self) PySavedModel{Unwrap(std::move(loaded))};
      }, nb::arg("dir"), nb::arg("tags") = std::vector<std::string>{kSavedModelServeTag},
         nb::arg("device") = nb::none())
      .def("signatures", [](const PySavedModel& s) {
        nb::dict out;
        for (const auto& [key, sig] : s.model->model().signatures()) {
          nb::dict d;
          d["method_name"] = sig.method_name;
          d["inputs"] = SignatureTensors(sig.inputs);
          d["outputs"] = SignatureTensors(sig.outputs);
          out[key.c_str()] = d;
        }
        return out;
      })
      .def("run", [](PySavedModel& s, const std::string& key, nb::dict inputs,
                     const std::vector<std::string>& output_keys, double timeout) {
        std::map<std::string, Tensor> values;
        for (auto [k, v] : inputs) {
          std::string name = nb::cast<std::string>(k);
          values[name] = ToTensor(v, DataType::kInvalid, absl::StrCat("signature '", key, "' input '", name, "'"));
        }
        WaitForEagerWork();
        auto result = RunCancellable([&]() -> absl::StatusOr<std::map<std::string, Tensor>> {
          const absl::Duration limit = TimeoutOption(timeout);
          const bool own = limit != absl::InfiniteDuration() && absl::Now() + limit < CurrentRunDeadline();
          ScopedRunDeadline deadline(limit);
          auto out = s.model->Run(key, values, output_keys);
          if (!out.ok() && deadline.passed() && own) {
            return absl::DeadlineExceededError(absl::StrCat("signature '", key, "': the run took longer than its "
                                                            "timeout of ", timeout, " s and was stopped"));
          }
          return out;
        });
        std::map<std::string, Tensor> out = Unwrap(std::move(result));
        nb::dict d;
        for (auto& [k, t] : out) d[k.c_str()] = WrapTensor(std::move(t));
        return d;
      }, nb::arg("key"), nb::arg("inputs"), nb::arg("output_keys") = std::vector<std::string>{},
         nb::arg("timeout") = 0.0)
      .def_prop_ro("dir", [](const PySavedModel& s) { return s.model->model().dir(); })
      .def_prop_ro("device", [](const PySavedModel& s) { return s.model->session().device().name(); })
      .def("placement", [](const PySavedModel& s) { return PlacementDict(s.model->session().placement()); })
      .def_prop_ro("tensorflow_version", [](const PySavedModel& s) { return s.model->model().tensorflow_version(); })
      .def("graph", [](const PySavedModel& s) {
        return PyGraph{std::shared_ptr<const Graph>(std::shared_ptr<const Graph>{}, &s.model->graph())};
      }, nb::keep_alive<0, 1>());
}

}  // namespace plexus::python
