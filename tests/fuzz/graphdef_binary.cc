// A binary GraphDef (.pb) as `plexus run` and the C API import it, then every function of
// its library turned into a graph and imported, the way a call to it is.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/graph_import.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto graph = plexus::ImportGraphDefBytes(bytes, "<fuzz>", plexus::GraphFormat::kBinary);
  if (!graph.ok()) return 0;
  for (const auto& function : (*graph)->library.function()) {
    auto body = plexus::FunctionToGraphDef(function, (*graph)->library);
    if (body.ok()) (void)plexus::ImportGraphDef(body->graph, "<fuzz function>");
  }
  return 0;
}
