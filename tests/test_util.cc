#include "test_util.h"

#include <vector>

namespace plexus::testing {

namespace {

std::unique_ptr<Runtime> RuntimeWith(std::vector<std::string> paths, const char* what) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = paths;
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  if (!runtime.ok()) return nullptr;
  EXPECT_EQ((*runtime)->plugins().size(), paths.size()) << what << " did not load";
  return *std::move(runtime);
}

}  // namespace

std::unique_ptr<Runtime> CpuRuntime() { return RuntimeWith({PX_CPU_PLUGIN_PATH}, "the cpu plugin"); }

std::unique_ptr<Runtime> CpuAndReferenceRuntime() {
  return RuntimeWith({PX_CPU_PLUGIN_PATH, PX_REFERENCE_PLUGIN_PATH}, "the cpu and reference plugins");
}

std::unique_ptr<Runtime> CpuAndTestPluginRuntime(const std::string& flavour) {
  return RuntimeWith({PX_CPU_PLUGIN_PATH, TestPluginPath(flavour)}, "the cpu and test plugins");
}

std::shared_ptr<const Graph> GraphFromText(const std::string& text) {
  auto graph = ImportGraphDefBytes(text, "<test graph>", GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  return std::shared_ptr<const Graph>(*std::move(graph));
}

bool Contains(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

std::string DataPath(const std::string& relative) {
  return std::string(PX_TEST_DATA_DIR) + "/" + relative;
}

std::string TestPluginPath(const std::string& flavour) {
  return std::string(PX_TEST_PLUGIN_DIR) + "/libpx_test_plugin_" + flavour + ".so";
}

}  // namespace plexus::testing
