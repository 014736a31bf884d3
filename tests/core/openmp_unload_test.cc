// The cpu plugin's OpenMP runtime stays loaded after the runtime that loaded
// the plugin is gone. Worker threads of a team outlive their parallel region
// inside libgomp; when the plugin's dlclose unloaded the library under them,
// processes crashed at exit on a busy machine (plugins/cpu/src/threading.h,
// PinOpenMpRuntime). This program does not link OpenMP itself, so only the
// plugin can have loaded, and kept, the library.
#include <dlfcn.h>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

constexpr const char* kLibgomp = "libgomp.so.1";

bool Loaded(const char* soname) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

TEST(OpenMpUnload, TheRuntimeStaysLoadedAfterThePluginIsUnloaded) {
  if (Loaded(kLibgomp)) GTEST_SKIP() << kLibgomp << " was loaded before the cpu plugin";
  auto runtime = testing::CpuRuntime();
  if (!Loaded(kLibgomp)) GTEST_SKIP() << "the cpu plugin is built without OpenMP";
  runtime.reset();
  EXPECT_TRUE(Loaded(kLibgomp)) << kLibgomp << " was unloaded with the cpu plugin";
}

}  // namespace
}  // namespace plexus
