// plexus._plexus's side of plexus.distribute: joining the world
// (plexus/distributed.h) and the store the launcher hosts. The collectives
// themselves are ops (CollectiveReduceV2, ...) run through execute().
#include "plexus/distributed.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include "common.h"

namespace plexus::python {

void BindDistributed(nb::module_& m) {
  m.def(
      "dist_initialize",
      [](int rank, int world_size, const std::string& master_addr, int master_port, const std::string& run_id,
         double timeout, int debug) {
        distributed::Options o;
        o.rank = rank;
        o.world_size = world_size;
        o.master_addr = master_addr;
        o.master_port = master_port;
        o.run_id = run_id;
        o.timeout_seconds = timeout;
        o.debug = debug;
        absl::Status s;
        {
          nb::gil_scoped_release release;
          s = distributed::Initialize(o);
        }
        Check(s);
      },
      nb::arg("rank") = -1, nb::arg("world_size") = -1, nb::arg("master_addr") = "", nb::arg("master_port") = -1,
      nb::arg("run_id") = "", nb::arg("timeout") = -1.0, nb::arg("debug") = -1);
  m.def("dist_shutdown", []() {
    nb::gil_scoped_release release;
    distributed::Shutdown();
  });
  m.def("dist_is_initialized", &distributed::IsInitialized);
  m.def("dist_environment_has_world", &distributed::EnvironmentHasWorld);
  m.def("dist_rank", &distributed::Rank);
  m.def("dist_world_size", &distributed::WorldSize);
  m.def("dist_timeout", &distributed::TimeoutSeconds);
  m.def(
      "dist_barrier",
      [](double timeout) {
        absl::Status s;
        {
          nb::gil_scoped_release release;
          s = distributed::Barrier(timeout);
        }
        Check(s);
      },
      nb::arg("timeout") = 0.0);

  nb::class_<distributed::StoreServer>(m, "StoreServer", "A key-value store server for launchers.")
      .def_static(
          "start",
          [](const std::string& host, int port) { return Unwrap(distributed::StoreServer::Start(host, port)); },
          nb::arg("host") = "127.0.0.1", nb::arg("port") = 0)
      .def_prop_ro("port", &distributed::StoreServer::port)
      .def("stop", [](distributed::StoreServer& s) {
        nb::gil_scoped_release release;
        s.Stop();
      });

  nb::class_<distributed::StoreClient>(m, "StoreClient", "A client of a store server.")
      .def_static(
          "connect",
          [](const std::string& host, int port, double timeout) {
            absl::StatusOr<std::unique_ptr<distributed::StoreClient>> c;
            {
              nb::gil_scoped_release release;
              c = distributed::StoreClient::Connect(host, port, timeout);
            }
            return Unwrap(std::move(c));
          },
          nb::arg("host"), nb::arg("port"), nb::arg("timeout") = 30.0)
      .def("set",
           [](distributed::StoreClient& c, const std::string& key, nb::bytes value) {
             std::string v(value.c_str(), value.size());
             absl::Status s;
             {
               nb::gil_scoped_release release;
               s = c.Set(key, v);
             }
             Check(s);
           })
      .def(
          "get",
          [](distributed::StoreClient& c, const std::string& key, double timeout) {
            absl::StatusOr<std::string> v;
            {
              nb::gil_scoped_release release;
              v = c.Get(key, timeout);
            }
            std::string out = Unwrap(std::move(v));
            return nb::bytes(out.data(), out.size());
          },
          nb::arg("key"), nb::arg("timeout") = 30.0)
      .def("add",
           [](distributed::StoreClient& c, const std::string& key, int64_t delta) {
             absl::StatusOr<int64_t> v;
             {
               nb::gil_scoped_release release;
               v = c.Add(key, delta);
             }
             return Unwrap(std::move(v));
           })
      .def("check", [](distributed::StoreClient& c, const std::string& key) {
        absl::StatusOr<bool> v;
        {
          nb::gil_scoped_release release;
          v = c.Check(key);
        }
        return Unwrap(std::move(v));
      });
}

}  // namespace plexus::python
