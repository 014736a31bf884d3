// PLEXUS_PLUGINS: discovery loads only the plugins whose names it lists;
// the others are skipped with a load report naming the file, and a listed
// plugin that is not found is a warning naming it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::TestPluginPath;

class AllowList : public ::testing::Test {
 protected:
  void SetUp() override {
    // The good test plugin and the folder of the real plugins (cpu, ...).
    const std::string path = TestPluginPath("good") + ":" + std::string(PX_PLUGIN_DIR);
    setenv("PLEXUS_PLUGIN_PATH", path.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("PLEXUS_PLUGIN_PATH");
    unsetenv("PLEXUS_PLUGINS");
  }
  static std::vector<std::string> Names(const Runtime& runtime) {
    std::vector<std::string> names;
    for (const auto& p : runtime.plugins()) names.push_back(p->name());
    return names;
  }
};

TEST_F(AllowList, LoadsOnlyTheListedPlugins) {
  setenv("PLEXUS_PLUGINS", "good", 1);
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_EQ(Names(**runtime), std::vector<std::string>{"good"});
  bool cpu_skipped = false;
  for (const auto& report : (*runtime)->load_reports()) {
    if (absl::StrContains(report.path, "libplexus_plugin_cpu.so")) {
      EXPECT_FALSE(report.loaded);
      EXPECT_TRUE(absl::StrContains(report.message, "(plugin 'cpu') skipped: not in PLEXUS_PLUGINS=good"))
          << report.message;
      EXPECT_TRUE(absl::StrContains(report.message, report.path)) << report.message;
      cpu_skipped = true;
    }
  }
  EXPECT_TRUE(cpu_skipped);
}

TEST_F(AllowList, SeveralNamesAndSpaces) {
  setenv("PLEXUS_PLUGINS", " cpu , good ", 1);
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  std::vector<std::string> names = Names(**runtime);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "good"), names.end());
}

TEST_F(AllowList, AListedPluginThatIsNotFoundIsAWarning) {
  setenv("PLEXUS_PLUGINS", "good,nosuchplugin", 1);
  ::testing::internal::CaptureStderr();
  auto runtime = Runtime::Create();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_EQ(Names(**runtime), std::vector<std::string>{"good"});
  EXPECT_TRUE(absl::StrContains(err, "PLEXUS_PLUGINS names plugin 'nosuchplugin', but no plugin of that name "
                                     "was loaded")) << err;
}

TEST_F(AllowList, ExplicitPathsAreAlwaysLoaded) {
  setenv("PLEXUS_PLUGINS", "good", 1);
  RuntimeOptions options;
  options.plugin_paths = {PX_REFERENCE_PLUGIN_PATH};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  std::vector<std::string> names = Names(**runtime);
  EXPECT_NE(std::find(names.begin(), names.end(), "reference"), names.end());
}

TEST_F(AllowList, UnsetLoadsEverything) {
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  std::vector<std::string> names = Names(**runtime);
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "good"), names.end());
}

}  // namespace
}  // namespace plexus
