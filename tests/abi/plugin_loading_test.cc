// The plugin ABI seen from the host: negotiation, validation and clean
// refusal of broken plugins, error reporting from kernels and allocators, and
// unload. After every failure the runtime must keep working.
#include <cstdlib>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::TestPluginPath;

std::unique_ptr<Runtime> EmptyRuntime() {
  RuntimeOptions options;
  options.discover_plugins = false;
  return *Runtime::Create(options);
}

using ::plexus::testing::Contains;

std::shared_ptr<const Graph> AdditionGraph() {
  auto g = ImportGraphDefFile(testing::DataPath("tf_graphs/addition_tf2/model.pb"));
  EXPECT_TRUE(g.ok()) << g.status();
  return std::shared_ptr<const Graph>(*std::move(g));
}

// Runs z = x + y on `runtime`'s default device; returns the status.
absl::StatusOr<int32_t> RunAddition(Runtime* runtime, const std::string& device = "") {
  SessionOptions options;
  options.device = device;
  PX_ASSIGN_OR_RETURN(auto session, Session::Create(runtime, AdditionGraph(), options));
  PX_ASSIGN_OR_RETURN(auto out, session->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {2})},
                                              {"y", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {3})}},
                                             {"z"}));
  return out[0].data<int32_t>()[0];
}

TEST(PluginAbi, GoodPluginLoadsAndRuns) {
  auto runtime = EmptyRuntime();
  auto plugin = runtime->LoadPlugin(TestPluginPath("good"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "good");
  EXPECT_EQ((*plugin)->abi_major(), PX_ABI_VERSION_MAJOR);
  EXPECT_EQ((*plugin)->abi_minor(), static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_EQ((*plugin)->kernels().size(), 1u);
  ASSERT_EQ(runtime->devices().size(), 1u);
  EXPECT_EQ(runtime->devices()[0]->name(), "TESTDEV:0");
  auto z = RunAddition(runtime.get());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, 5);
  // Loading the same file again returns the loaded plugin.
  EXPECT_TRUE(runtime->LoadPlugin(TestPluginPath("good")).ok());
  EXPECT_EQ(runtime->plugins().size(), 1u);
}

struct Refusal {
  const char* flavour;
  const char* reason;  // must appear in the message
};

class BrokenPlugin : public ::testing::TestWithParam<Refusal> {};

TEST_P(BrokenPlugin, IsRefusedWithAClearMessageAndTheRuntimeCarriesOn) {
  auto runtime = EmptyRuntime();
  std::string path = TestPluginPath(GetParam().flavour);
  auto plugin = runtime->LoadPlugin(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_TRUE(Contains(plugin.status(), path)) << plugin.status();
  EXPECT_TRUE(Contains(plugin.status(), GetParam().reason)) << plugin.status();
  EXPECT_TRUE(runtime->plugins().empty());
  ASSERT_EQ(runtime->load_reports().size(), 1u);
  EXPECT_FALSE(runtime->load_reports()[0].loaded);
  // The process and the runtime keep working.
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  auto z = RunAddition(runtime.get());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, 5);
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, BrokenPlugin,
    ::testing::Values(
        Refusal{"wrong_major", "speaks ABI 99.0-99.8, this core speaks ABI 0.0-0.8 (major versions differ)"},
        Refusal{"missing_slot", "required slot(s) missing from its table: memcpy_d2h"},
        Refusal{"init_fails", "failed to initialize: injected initialization failure"},
        Refusal{"no_probe", "does not export PX_PluginProbe"}),
    [](const auto& info) { return std::string(info.param.flavour); });

TEST(PluginAbi, MissingFileIsRefused) {
  auto runtime = EmptyRuntime();
  auto plugin = runtime->LoadPlugin("/nonexistent/libplexus_plugin_x.so");
  ASSERT_FALSE(plugin.ok());
  EXPECT_TRUE(Contains(plugin.status(), "/nonexistent/libplexus_plugin_x.so"));
  EXPECT_TRUE(Contains(plugin.status(), "cannot be loaded"));
}

// Every test plugin has device type TESTDEV: a second one would make a
// second TESTDEV:0, so it is refused, naming both files.
TEST(PluginAbi, ASecondPluginOfTheSameDeviceTypeIsRefused) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("good")).ok());
  auto second = runtime->LoadPlugin(TestPluginPath("kernel_error"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(Contains(second.status(), TestPluginPath("kernel_error"))) << second.status();
  EXPECT_TRUE(Contains(second.status(), "same device type 'TESTDEV'")) << second.status();
  EXPECT_TRUE(Contains(second.status(), TestPluginPath("good"))) << second.status();
  int testdev = 0;
  for (const auto& d : runtime->devices()) testdev += d->name() == "TESTDEV:0";
  EXPECT_EQ(testdev, 1);
}

// Malformed kernel definitions are refused, naming the plugin's file, the
// op and what is wrong (they were once accepted silently).
TEST(PluginAbi, MalformedKernelDefsAreRefused) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"missing_attr", "op AddV2: a type constraint names attr 'Q', which is not a type attribute of the op "
                       "(its type attributes: T)"},
      {"bad_dtype", "op AddV2: the type constraint on attr 'T' lists dtype 12345, which is not a dtype"},
      {"constraint_size", "op AddV2: a type constraint has struct_size 0"},
      {"huge_size", "op AddV2: PX_KernelDef has struct_size 1099511627776"},
      {"host_index", "op AddV2: host-memory input index 7 is outside the op's 2 inputs"},
  };
  for (const auto& [how, expected] : cases) {
    ::setenv("PX_TEST_BAD_KERNEL_DEF", how, 1);
    auto runtime = EmptyRuntime();
    auto plugin = runtime->LoadPlugin(TestPluginPath("bad_registration"));
    ASSERT_FALSE(plugin.ok()) << how;
    EXPECT_TRUE(Contains(plugin.status(), TestPluginPath("bad_registration"))) << plugin.status();
    EXPECT_TRUE(Contains(plugin.status(), expected)) << how << ": " << plugin.status();
  }
  ::setenv("PX_TEST_BAD_KERNEL_DEF", "", 1);
  auto runtime = EmptyRuntime();
  EXPECT_TRUE(runtime->LoadPlugin(TestPluginPath("bad_registration")).ok());  // the well-formed def
  ::unsetenv("PX_TEST_BAD_KERNEL_DEF");
}

// allocate returning OK without memory is the plugin's fault, and is said
// so; it used to be reported as "out of memory".
TEST(PluginAbi, AllocateReturningNullIsNotOutOfMemory) {
  ::setenv("PX_TEST_BAD_KERNEL_DEF", "null_alloc", 1);
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("bad_registration")).ok());
  auto device = runtime->FindDevice("TESTDEV:0");
  ASSERT_TRUE(device.ok()) << device.status();
  auto buffer = (*device)->Allocate(1024);
  ::unsetenv("PX_TEST_BAD_KERNEL_DEF");
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kInternal) << buffer.status();
  EXPECT_TRUE(Contains(buffer.status(), "allocate returned OK with a null pointer")) << buffer.status();
  EXPECT_TRUE(Contains(buffer.status(), "plugin 'bad_registration'")) << buffer.status();
  EXPECT_FALSE(Contains(buffer.status(), "out of memory")) << buffer.status();
}

TEST(PluginAbi, AnEmptyPathOrADirectoryIsSaidPlainly) {
  auto runtime = EmptyRuntime();
  auto empty = runtime->LoadPlugin("");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(Contains(empty.status(), "plugin path is empty")) << empty.status();
  auto dir = runtime->LoadPlugin(PX_TEST_DATA_DIR);
  ASSERT_FALSE(dir.ok());
  EXPECT_TRUE(Contains(dir.status(), "is a directory")) << dir.status();
}

TEST(PluginAbi, KernelErrorIsReportedWithNodeAndDevice) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("kernel_error")).ok());
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(Contains(z.status(), "node 'z' (op AddV2) on TESTDEV:0: injected kernel failure"))
      << z.status();
  // Still usable: the same runtime runs the graph on the cpu plugin.
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  auto ok = RunAddition(runtime.get(), "CPU:0");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, 5);
}

TEST(PluginAbi, OutOfMemoryNamesDeviceAndNode) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("out_of_memory")).ok());
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(z.status(), "node 'z' (op AddV2)")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "TESTDEV:0")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "out of memory")) << z.status();
}

TEST(PluginAbi, MissingKernelNamesOpDeviceAndTypes) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("good")).ok());
  auto g = ImportGraphDefBytes(R"pb(
    node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 's' op: 'AddV2' input: 'a' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } })pb",
                               "g", GraphFormat::kText);
  ASSERT_TRUE(g.ok());
  auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(g)));
  ASSERT_TRUE(session.ok());
  auto out = (*session)->Run({{"a", Tensor::FromVector<float>(DataType::kFloat, {}, {1})}}, {"s"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(out.status(), "node 's' (op AddV2) on TESTDEV:0")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "T=float")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "AddV2 [T in {int32}]")) << out.status();
}

TEST(PluginAbi, FallsBackToTheHostDeviceAndSaysSo) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(TestPluginPath("good")).ok());
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  // The test device has only AddV2; the Placeholder-free regression graph
  // needs Mul/Add/Identity/Const, which fall back to CPU:0.
  auto g = ImportGraphDefFile(testing::DataPath("tf_graphs/regression_frozen/frozen.pb"));
  ASSERT_TRUE(g.ok());
  auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(g)));
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)->device().name(), "TESTDEV:0");
  auto out = (*session)->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {1}, {1})}}, {"pred"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], 1.2634872f, 1e-6);
  auto notes = (*session)->placement_notes();
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(notes[0].find("placed on CPU:0") != std::string::npos) << notes[0];
}

TEST(PluginAbi, SkeletonLoadsWithNoDevices) {
  auto runtime = EmptyRuntime();
  auto plugin = runtime->LoadPlugin(PX_SKELETON_PLUGIN_PATH);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "skeleton");
  EXPECT_TRUE(runtime->devices().empty());
  ASSERT_EQ(runtime->load_reports().size(), 1u);
  const std::string message = runtime->load_reports()[0].message;  // a copy: load_reports() returns a new vector
  EXPECT_NE(message.find("0 device(s)"), std::string::npos) << message;
  EXPECT_EQ(message.find("failed"), std::string::npos) << message;
}

TEST(PluginAbi, FailedDeviceEnumerationKeepsThePluginWithNoDevices) {
  auto runtime = EmptyRuntime();
  auto plugin = runtime->LoadPlugin(TestPluginPath("enumeration_fails"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_TRUE(runtime->devices().empty());
  ASSERT_EQ(runtime->load_reports().size(), 1u);
  const std::string message = runtime->load_reports()[0].message;  // a copy: load_reports() returns a new vector
  EXPECT_NE(message.find("device enumeration failed: UNAVAILABLE"), std::string::npos) << message;
  EXPECT_NE(message.find("driver not loaded"), std::string::npos) << message;
}

TEST(PluginAbi, APluginFileIsInitializedOncePerProcessAndShared) {
  auto first = EmptyRuntime();
  ASSERT_TRUE(first->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  // The same runtime returns the plugin it has, also through another path.
  std::string dir = std::string(PX_PLUGIN_DIR);
  auto again = first->LoadPlugin(dir + "/../plexus-plugins/libplexus_plugin_cpu.so");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(first->plugins().size(), 1u);
  // A second runtime of the same process shares the loaded plugin and its
  // device objects (a device is opened once)...
  auto second = EmptyRuntime();
  auto shared = second->LoadPlugin(PX_CPU_PLUGIN_PATH);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->get(), again->get());
  ASSERT_EQ(second->devices().size(), first->devices().size());
  EXPECT_EQ(second->devices()[0].get(), first->devices()[0].get());
  EXPECT_NE(second->load_reports().back().message.find("shared with another runtime"), std::string::npos);
  // ...and keeps it when the first lets it go: a tensor on its device
  // still works.
  again = absl::NotFoundError("released");
  first.reset();
  auto host = second->HostDevice();
  ASSERT_NE(host, nullptr);
  auto third = EmptyRuntime();
  auto loaded = third->LoadPlugin(PX_CPU_PLUGIN_PATH);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(third->HostDevice().get(), host.get());
  // Once every holder is gone, the next load initializes the plugin anew.
  host.reset();
  shared = absl::NotFoundError("released");
  loaded = absl::NotFoundError("released");
  second.reset();
  third.reset();
  auto fresh = EmptyRuntime();
  auto reloaded = fresh->LoadPlugin(PX_CPU_PLUGIN_PATH);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(fresh->load_reports().back().message.find("shared with another runtime"), std::string::npos);
}

TEST(PluginAbi, DuplicateNameIsRefused) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  // A copy of the cpu plugin under another file name.
  std::string copy = ::testing::TempDir() + "/libplexus_plugin_cpu_copy.so";
  ASSERT_EQ(std::system(("cp '" + std::string(PX_CPU_PLUGIN_PATH) + "' '" + copy + "'").c_str()), 0);
  auto second = runtime->LoadPlugin(copy);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(Contains(second.status(), "already loaded")) << second.status();
  std::remove(copy.c_str());
}

TEST(PluginAbi, UnloadIsRefusedWhileInUseThenWorks) {
  auto runtime = EmptyRuntime();
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  {
    auto device = runtime->FindDevice("cpu");
    ASSERT_TRUE(device.ok());
    auto tensor = (*device)->AllocateTensor(DataType::kFloat, {4});
    ASSERT_TRUE(tensor.ok());
    device->reset();
    auto refused = runtime->UnloadPlugin("cpu");
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(Contains(refused, "still in use")) << refused;
  }  // the tensor dies here
  PX_ASSERT_OK(runtime->UnloadPlugin("cpu"));
  EXPECT_TRUE(runtime->devices().empty());
  EXPECT_FALSE(runtime->UnloadPlugin("cpu").ok());
  // Load it again and use it.
  ASSERT_TRUE(runtime->LoadPlugin(PX_CPU_PLUGIN_PATH).ok());
  auto z = RunAddition(runtime.get());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, 5);
}

TEST(PluginAbi, DiscoveryUsesThePluginPathAndTheFolderBesideTheLibrary) {
  // PLEXUS_PLUGIN_PATH may name files and folders.
  std::string env = TestPluginPath("good") + ":" + std::string(PX_PLUGIN_DIR);
  setenv("PLEXUS_PLUGIN_PATH", env.c_str(), 1);
  auto files = PluginLoader::DiscoverFiles();
  unsetenv("PLEXUS_PLUGIN_PATH");
  ASSERT_GE(files.size(), 2u);
  EXPECT_EQ(files[0], TestPluginPath("good"));
  bool has_cpu = false;
  for (const auto& f : files) has_cpu = has_cpu || f.find("libplexus_plugin_cpu.so") != std::string::npos;
  EXPECT_TRUE(has_cpu);
  // Without the variable the folder beside the core library is searched.
  EXPECT_NE(PluginLoader::DefaultPluginDir().find("plexus-plugins"), std::string::npos);
  auto runtime = Runtime::Create();
  ASSERT_TRUE(runtime.ok());
  ASSERT_FALSE((*runtime)->devices().empty());
  EXPECT_TRUE((*runtime)->FindDevice("CPU:0").ok());
  EXPECT_TRUE((*runtime)->FindDevice("/device:CPU:0").ok());
  auto missing = (*runtime)->FindDevice("GPU:3");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "devices present: CPU:0")) << missing.status();
}

}  // namespace
}  // namespace plexus
