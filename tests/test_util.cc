#include "test_util.h"

namespace plexus::testing {

std::unique_ptr<Runtime> CpuRuntime() {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH};
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  if (!runtime.ok()) return nullptr;
  EXPECT_EQ((*runtime)->plugins().size(), 1u) << "the cpu plugin did not load";
  return *std::move(runtime);
}

std::unique_ptr<Runtime> CpuAndReferenceRuntime() {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_REFERENCE_PLUGIN_PATH};
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  if (!runtime.ok()) return nullptr;
  EXPECT_EQ((*runtime)->plugins().size(), 2u) << "the cpu and reference plugins did not both load";
  return *std::move(runtime);
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
