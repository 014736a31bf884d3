// Gradients from Python: the eager GradientTape (plexus/tape.h) and
// symbolic gradients of the function being traced (plexus/gradients.h).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>

#include "common.h"
#include "plexus/gradients.h"
#include "plexus/tape.h"

namespace plexus::python {
namespace {

std::atomic<int64_t> g_next_id{1};

int64_t TapeId(PyTensor& t) {
  if (t.tape_id == 0) t.tape_id = g_next_id++;
  return t.tape_id;
}

struct PyTape {
  std::shared_ptr<GradientTape> tape;
  bool watch_accessed_variables = true;
};

thread_local std::vector<std::shared_ptr<PyTape>> t_tapes;

}  // namespace

bool TapesActive() { return !t_tapes.empty(); }

void ClearTapes() { t_tapes.clear(); }

void RecordOnTapes(const EagerOp& op, const nb::handle* inputs, const absl::InlinedVector<Tensor, 4>& tensors,
                   const nb::list& outputs) {
  std::vector<int64_t> ids(tensors.size(), 0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (nb::isinstance<PyTensor>(inputs[k])) ids[k] = nb::inst_ptr<PyTensor>(inputs[k])->tape_id;
  }
  for (const auto& t : t_tapes) {
    if (!t->tape->ShouldRecord(ids)) continue;
    std::vector<int64_t> out_ids;
    std::vector<Tensor> out_values;
    for (nb::handle o : outputs) {
      PyTensor* p = nb::inst_ptr<PyTensor>(o);
      out_ids.push_back(TapeId(*p));
      out_values.push_back(p->tensor);
    }
    t->tape->Record(op.node().op, op.node().attrs, ids, std::vector<Tensor>(tensors.begin(), tensors.end()),
                    std::move(out_ids), std::move(out_values));
  }
}

void BindGradients(nb::module_& m) {
  nb::class_<PyTape>(m, "_Tape", "A gradient tape (plexus.GradientTape wraps it).")
      .def("__init__", [](PyTape* self, bool persistent, bool watch_accessed_variables) {
        new (self) PyTape{std::make_shared<GradientTape>(persistent), watch_accessed_variables};
      }, nb::arg("persistent") = false, nb::arg("watch_accessed_variables") = true)
      .def_prop_ro("watch_accessed_variables", [](const PyTape& t) { return t.watch_accessed_variables; })
      .def("watch", [](PyTape& t, PyTensor& x) { t.tape->Watch(TapeId(x)); })
      .def("is_watched", [](PyTape& t, PyTensor& x) { return x.tape_id != 0 && t.tape->IsTracked(x.tape_id); })
      .def_prop_ro("num_records", [](const PyTape& t) { return t.tape->num_records(); })
      .def("gradient", [](PyTape& t, std::vector<PyTensor*> targets, std::vector<PyTensor*> sources,
                          std::vector<PyTensor*> output_gradients) {
        std::vector<int64_t> target_ids, source_ids;
        std::vector<Tensor> target_values, dys;
        for (PyTensor* y : targets) {
          target_ids.push_back(TapeId(*y));
          target_values.push_back(y->tensor);
        }
        for (PyTensor* x : sources) source_ids.push_back(TapeId(*x));
        for (PyTensor* d : output_gradients) dys.push_back(d->tensor);
        absl::StatusOr<std::vector<std::optional<Tensor>>> result;
        {
          nb::gil_scoped_release release;
          result = t.tape->Gradient(&GetRuntime(), &GetEager(), target_ids, target_values, source_ids, dys);
        }
        nb::list out;
        for (auto& g : Unwrap(std::move(result))) {
          out.append(g.has_value() ? WrapTensor(std::move(*g)) : nb::none());
        }
        return out;
      }, nb::arg("targets"), nb::arg("sources"), nb::arg("output_gradients"));

  m.def("_push_tape", [](std::shared_ptr<PyTape> t) { t_tapes.push_back(std::move(t)); });
  m.def("_pop_tape", [](std::shared_ptr<PyTape> t) {
    for (size_t i = t_tapes.size(); i-- > 0;) {
      if (t_tapes[i] == t) {
        t_tapes.erase(t_tapes.begin() + static_cast<long>(i));
        return;
      }
    }
  });
  m.def("_tapes_active", []() { return TapesActive(); });
  // Variables read while a tape records are watched by it (trainable ones,
  // when the tape watches accessed variables).
  m.def("_watch_on_tapes", [](PyTensor& handle) {
    for (const auto& t : t_tapes) {
      if (t->watch_accessed_variables) t->tape->Watch(TapeId(handle));
    }
  });
  // Variables are made eagerly even when first used inside a traced
  // function (TensorFlow's init_scope): the trace is set aside meanwhile.
  struct SuspendedTrace {
    std::shared_ptr<TraceState> trace;
  };
  nb::class_<SuspendedTrace>(m, "_SuspendedTrace");
  m.def("_suspend_trace", []() {
    SuspendedTrace s{ActiveTrace()};
    SetActiveTrace(nullptr);
    return s;
  });
  m.def("_resume_trace", [](const SuspendedTrace& s) { SetActiveTrace(s.trace); });
  m.def("_trace_id", []() -> nb::object {
    auto trace = ActiveTrace();
    if (trace == nullptr) return nb::none();
    return nb::int_(reinterpret_cast<intptr_t>(trace.get()));
  });
  // Symbolic gradients inside a traced function.
  m.def("graph_gradients", [](std::vector<PyGraphTensor*> ys, std::vector<PyGraphTensor*> xs,
                              std::vector<PyGraphTensor*> grad_ys) {
    std::shared_ptr<TraceState> trace = ActiveTrace();
    auto same = [&](PyGraphTensor* t) {
      if (trace == nullptr) trace = t->trace;
      if (t->trace != trace) {
        Throw(absl::InvalidArgumentError("gradients: every tensor must belong to the function being traced"));
      }
    };
    std::vector<Endpoint> y, x, dy;
    for (PyGraphTensor* t : ys) { same(t); y.push_back({t->node, t->index}); }
    for (PyGraphTensor* t : xs) { same(t); x.push_back({t->node, t->index}); }
    for (PyGraphTensor* t : grad_ys) { same(t); dy.push_back({t->node, t->index}); }
    if (trace == nullptr) Throw(absl::InvalidArgumentError("gradients: no tensors given"));
    GradientList grads = Unwrap(AddGradients(trace->builder, y, x, dy));
    nb::list out;
    for (const auto& g : grads) {
      out.append(g.has_value() ? nb::cast(PyGraphTensor{trace, g->node, g->index}) : nb::none());
    }
    return out;
  }, nb::arg("ys"), nb::arg("xs"), nb::arg("grad_ys"));
}

}  // namespace plexus::python
