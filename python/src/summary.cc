// TensorBoard event files: plexus._plexus.SummaryWriter over the core's
// plexus::SummaryWriter (plexus/summary.h). plexus/summary.py is the public
// API on top.
#include "plexus/summary.h"

#include <nanobind/stl/string.h>

#include "absl/strings/str_cat.h"
#include "common.h"
#include "plexus/tensor.h"

namespace plexus::python {
namespace {

struct PySummaryWriter {
  std::unique_ptr<SummaryWriter> writer;
};

PySummaryWriter CreateWriter(const std::string& logdir, double flush_interval_seconds,
                             size_t max_buffer_bytes, const std::string& filename_suffix) {
  SummaryWriterOptions options;
  options.flush_interval_seconds = flush_interval_seconds;
  options.max_buffer_bytes = max_buffer_bytes;
  options.filename_suffix = filename_suffix;
  absl::StatusOr<std::unique_ptr<SummaryWriter>> w;
  {
    nb::gil_scoped_release release;
    w = SummaryWriter::Create(logdir, options);
  }
  return PySummaryWriter{Unwrap(std::move(w))};
}

}  // namespace

void BindSummary(nb::module_& m) {
  nb::class_<PySummaryWriter>(m, "SummaryWriter",
                              "Writes scalars and histograms to a TensorBoard event file.")
      .def_prop_ro("filename", [](const PySummaryWriter& w) { return w.writer->filename(); })
      .def_prop_ro("logdir", [](const PySummaryWriter& w) { return w.writer->logdir(); })
      .def_prop_ro("closed", [](const PySummaryWriter& w) { return w.writer->closed(); })
      .def(
          "scalar",
          [](PySummaryWriter& w, const std::string& tag, double value, int64_t step) {
            absl::Status s;
            {
              nb::gil_scoped_release release;
              s = w.writer->Scalar(tag, static_cast<float>(value), step);
            }
            Check(s);
          },
          nb::arg("tag"), nb::arg("value"), nb::arg("step"))
      .def(
          "histogram",
          [](PySummaryWriter& w, const std::string& tag, nb::handle values, int64_t step) {
            Tensor t = HostCopy(ToTensor(values, DataType::kInvalid,
                                         absl::StrCat("histogram '", tag, "' values")));
            absl::Status s;
            {
              nb::gil_scoped_release release;
              s = w.writer->Histogram(tag, t, step);
            }
            Check(s);
          },
          nb::arg("tag"), nb::arg("values"), nb::arg("step"))
      .def(
          "flush",
          [](PySummaryWriter& w) {
            absl::Status s;
            {
              nb::gil_scoped_release release;
              s = w.writer->Flush();
            }
            Check(s);
          })
      .def(
          "write_event",
          [](PySummaryWriter& w, nb::bytes event) {
            std::string data(event.c_str(), event.size());
            absl::Status s;
            {
              nb::gil_scoped_release release;
              s = w.writer->WriteSerializedEvent(data);
            }
            Check(s);
          },
          nb::arg("event"), "Writes a serialized Event proto (a graph, for example) as one record.")
      .def("close", [](PySummaryWriter& w) {
        absl::Status s;
        {
          nb::gil_scoped_release release;
          s = w.writer->Close();
        }
        Check(s);
      });
  m.def("_create_summary_writer", &CreateWriter, nb::arg("logdir"),
        nb::arg("flush_interval_seconds") = 5.0, nb::arg("max_buffer_bytes") = size_t{1} << 20,
        nb::arg("filename_suffix") = "",
        "A new TensorBoard event file in `logdir` (created when missing).");
}

}  // namespace plexus::python
