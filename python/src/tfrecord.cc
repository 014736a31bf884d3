// TFRecord files from Python (plexus.data): _plexus.TFRecordReader and
// _plexus.TFRecordWriter over plexus/tfrecord.h. Reads come in batches of
// records (one call per batch, the GIL released while reading).
#include <nanobind/stl/string.h>

#include "common.h"
#include "plexus/tfrecord.h"

namespace plexus::python {
namespace {

RecordCompression Compression(const std::string& name) { return Unwrap(ParseRecordCompression(name)); }

struct PyRecordReader {
  std::unique_ptr<RecordReader> reader;
  bool done = false;
  absl::Status pending;  // an error met after some records of a batch
};

struct PyRecordWriter {
  std::unique_ptr<RecordWriter> writer;
};

}  // namespace

void BindTFRecord(nb::module_& m) {
  nb::class_<PyRecordReader>(m, "TFRecordReader", "Reads the records of one TFRecord file, CRCs verified.")
      .def(
          "__init__",
          [](PyRecordReader* self, const std::string& path, const std::string& compression) {
            std::unique_ptr<RecordReader> reader = Unwrap(RecordReader::Open(path, Compression(compression)));
            new (self) PyRecordReader{std::move(reader)};
          },
          nb::arg("path"), nb::arg("compression") = "")
      .def(
          "read",
          [](PyRecordReader& r, size_t max_records) {
            std::vector<std::string> records;
            if (!r.pending.ok()) {
              absl::Status error = r.pending;
              r.pending = absl::OkStatus();
              r.done = true;
              Throw(error);
            }
            absl::Status status;
            if (!r.done) {
              nb::gil_scoped_release release;
              records.reserve(max_records);
              std::string record;
              while (records.size() < max_records) {
                status = r.reader->Next(&record);
                if (!status.ok()) break;
                records.push_back(std::move(record));
              }
            }
            if (absl::IsOutOfRange(status)) {
              r.done = true;
              status = absl::OkStatus();
            }
            // Records read before an error come back first; the error is
            // raised by the next call, so nothing read is lost.
            if (!status.ok()) {
              if (records.empty()) {
                r.done = true;
                Throw(status);
              }
              r.pending = status;
            }
            nb::list out;
            for (const std::string& rec : records) out.append(nb::bytes(rec.data(), rec.size()));
            return out;
          },
          nb::arg("max_records") = 256, "Up to max_records records as bytes; [] at the end of the file.")
      .def_prop_ro("offset", [](const PyRecordReader& r) { return r.reader->offset(); });
  nb::class_<PyRecordWriter>(m, "TFRecordWriter", "Writes records to a TFRecord file.")
      .def(
          "__init__",
          [](PyRecordWriter* self, const std::string& path, const std::string& compression) {
            new (self) PyRecordWriter{Unwrap(RecordWriter::Open(path, Compression(compression)))};
          },
          nb::arg("path"), nb::arg("compression") = "")
      .def(
          "write",
          [](PyRecordWriter& w, nb::bytes record) {
            Check(w.writer->Write(std::string_view(record.c_str(), record.size())));
          },
          nb::arg("record"))
      .def("flush", [](PyRecordWriter& w) { Check(w.writer->Flush()); })
      .def("close", [](PyRecordWriter& w) { Check(w.writer->Close()); });
}

}  // namespace plexus::python
