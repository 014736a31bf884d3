// The validation layer (sdk/validation/) seen from the core: each check fires
// on a deliberately broken test plugin (tests/broken_plugins) or on a misuse
// of the table from the host side, and its message names the plugin, the
// call and the argument; warn mode only logs. Every breach leaves the
// runtime usable.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "absl/strings/match.h"

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"
// The host side of the ABI, to call the wrapped table directly.
#include "../../core/src/devices/host_services.h"

namespace plexus {
namespace {

using ::plexus::testing::Contains;
using ::plexus::testing::TestPluginPath;

std::unique_ptr<Runtime> ValidatedRuntime(const std::string& plugin,
                                          ValidationMode mode = ValidationMode::kError) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {plugin};
  options.validation = mode;
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return runtime.ok() ? *std::move(runtime) : nullptr;
}

// z = x + y on the runtime's default device.
absl::StatusOr<int32_t> RunAddition(Runtime* runtime) {
  auto g = ImportGraphDefFile(testing::DataPath("tf_graphs/addition_tf2/model.pb"));
  if (!g.ok()) return g.status();
  PX_ASSIGN_OR_RETURN(auto session, Session::Create(runtime, std::shared_ptr<const Graph>(*std::move(g))));
  PX_ASSIGN_OR_RETURN(auto out, session->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {2})},
                                              {"y", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {3})}},
                                             {"z"}));
  return out[0].data<int32_t>()[0];
}

TEST(ValidationLayer, WrapsAGoodPluginAndSaysSo) {
  auto runtime = ValidatedRuntime(TestPluginPath("good"));
  ASSERT_NE(runtime, nullptr);
  ASSERT_EQ(runtime->plugins().size(), 1u);
  EXPECT_TRUE(runtime->plugins()[0]->validated());
  EXPECT_TRUE(absl::StrContains(runtime->load_reports()[0].message, "under the validation layer"))
      << runtime->load_reports()[0].message;
  auto z = RunAddition(runtime.get());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, 5);
}

TEST(ValidationLayer, AWriteOnePastTheOutputIsCaught) {
  auto runtime = ValidatedRuntime(TestPluginPath("past_end"));
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_TRUE(Contains(z.status(), "node 'z' (op AddV2)")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "validation layer: plugin 'past_end': compute: argument 'outputs'"))
      << z.status();
  EXPECT_TRUE(Contains(z.status(), "wrote outside output 0")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "past the end")) << z.status();
}

TEST(ValidationLayer, AnOutputLeftUnwrittenIsCaught) {
  auto runtime = ValidatedRuntime(TestPluginPath("unwritten"));
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_TRUE(Contains(z.status(), "plugin 'unwritten': compute: argument 'outputs'")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "returned OK without writing output 0")) << z.status();
}

TEST(ValidationLayer, WarnModeOnlyLogs) {
  auto runtime = ValidatedRuntime(TestPluginPath("unwritten"), ValidationMode::kWarn);
  auto z = RunAddition(runtime.get());
  EXPECT_TRUE(z.ok()) << z.status();  // the poison is what the run returns
}

TEST(ValidationLayer, AnUnalignedAllocationIsCaught) {
  auto runtime = ValidatedRuntime(TestPluginPath("unaligned"));
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_TRUE(Contains(z.status(), "plugin 'unaligned': allocate: argument 'out_ptr'")) << z.status();
  EXPECT_TRUE(Contains(z.status(), "not aligned")) << z.status();
}

TEST(ValidationLayer, ANullStreamIsCaught) {
  auto runtime = ValidatedRuntime(TestPluginPath("null_stream"));
  auto z = RunAddition(runtime.get());
  ASSERT_FALSE(z.ok());
  EXPECT_TRUE(Contains(z.status(), "plugin 'null_stream': stream_create: argument 'out_stream'"))
      << z.status();
  EXPECT_TRUE(Contains(z.status(), "OK with a NULL stream")) << z.status();
}

// The host side: handles used after they were destroyed, memory freed twice
// or copied past its end, through the wrapped table as the core sees it.
class HostSide : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = ValidatedRuntime(TestPluginPath("good"));
    ASSERT_NE(runtime_, nullptr);
    plugin_ = runtime_->plugins()[0];
    const PX_PluginTable& t = plugin_->table();
    ASSERT_EQ(Take(t.device_open(t.plugin_state, 0, &device_)), "");
  }
  void TearDown() override {
    if (device_ != nullptr) plugin_->table().device_close(plugin_->table().plugin_state, device_);
  }
  // The status's message ("" when OK), freed.
  std::string Take(PX_Status* status) {
    absl::Status s = TakePluginStatus(status);
    return std::string(s.message());
  }
  const PX_PluginTable& t() { return plugin_->table(); }

  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<Plugin> plugin_;
  PX_Device* device_ = nullptr;
};

TEST_F(HostSide, AStreamUsedAfterDestroyIsCaught) {
  PX_Stream* stream = nullptr;
  ASSERT_EQ(Take(t().stream_create(device_, &stream)), "");
  t().stream_destroy(device_, stream);
  std::string message = Take(t().stream_synchronize(device_, stream));
  EXPECT_NE(message.find("plugin 'good': stream_synchronize: argument 'stream': used after stream_destroy"),
            std::string::npos) << message;
}

TEST_F(HostSide, AnEventUsedAfterDestroyIsCaught) {
  PX_Stream* stream = nullptr;
  PX_Event* event = nullptr;
  ASSERT_EQ(Take(t().stream_create(device_, &stream)), "");
  ASSERT_EQ(Take(t().event_create(device_, &event)), "");
  t().event_destroy(device_, event);
  std::string message = Take(t().event_record(device_, stream, event));
  EXPECT_NE(message.find("plugin 'good': event_record: argument 'event': used after event_destroy"),
            std::string::npos) << message;
  message = Take(t().stream_wait_event(device_, stream, event));
  EXPECT_NE(message.find("stream_wait_event: argument 'event': used after event_destroy"), std::string::npos)
      << message;
  t().stream_destroy(device_, stream);
}

TEST_F(HostSide, ADoubleFreeIsReportedByTheNextCall) {
  void* ptr = nullptr;
  ASSERT_EQ(Take(t().allocate(device_, 100, 0, &ptr)), "");
  t().deallocate(device_, ptr);
  t().deallocate(device_, ptr);  // returns nothing: reported by the next call
  PX_Stream* stream = nullptr;
  std::string message = Take(t().stream_create(device_, &stream));
  EXPECT_NE(message.find("plugin 'good': deallocate: argument 'ptr': is not a live allocation"),
            std::string::npos) << message;
}

TEST_F(HostSide, ACopyPastTheEndOfAnAllocationIsCaught) {
  void* ptr = nullptr;
  ASSERT_EQ(Take(t().allocate(device_, 16, 0, &ptr)), "");
  char host[32] = {};
  std::string message = Take(t().memcpy_h2d(device_, ptr, host, sizeof(host)));
  EXPECT_NE(message.find("plugin 'good': memcpy_h2d: argument 'dst': copies 32 bytes"), std::string::npos)
      << message;
  message = Take(t().memcpy_d2h(device_, host, nullptr, 4));
  EXPECT_NE(message.find("memcpy_d2h: argument 'src': is NULL"), std::string::npos) << message;
  t().deallocate(device_, ptr);
}

TEST_F(HostSide, AWriteBeforeAnAllocationIsFoundWhenItIsFreed) {
  void* ptr = nullptr;
  ASSERT_EQ(Take(t().allocate(device_, 16, 0, &ptr)), "");
  static_cast<unsigned char*>(ptr)[-1] = 0;  // the guard byte just before it
  t().deallocate(device_, ptr);
  PX_Stream* stream = nullptr;
  std::string message = Take(t().stream_create(device_, &stream));
  EXPECT_NE(message.find("deallocate: argument 'ptr': memory written outside its buffer: 1 byte(s) before"),
            std::string::npos) << message;
}

TEST_F(HostSide, AStreamOfAnotherKindOfHandleIsCaught) {
  PX_Event* event = nullptr;
  ASSERT_EQ(Take(t().event_create(device_, &event)), "");
  std::string message = Take(t().stream_synchronize(device_, reinterpret_cast<PX_Stream*>(event)));
  EXPECT_NE(message.find("stream_synchronize: argument 'stream': is a event, not a stream"), std::string::npos)
      << message;
  t().event_destroy(device_, event);
}

// The threading rule: the host serializes device enumeration, open and close.
// One thread opens the device (slowly, PX_TEST_OPEN_DELAY_MS) while another
// counts devices; the layer reports the overlap by the next call, naming the
// plugin and the call that came in second.
TEST_F(HostSide, EnumerationDuringAnOpenIsCaught) {
  setenv("PX_TEST_OPEN_DELAY_MS", "400", 1);
  std::string open_message;
  PX_Device* second = nullptr;
  std::thread opener([&] { open_message = Take(t().device_open(t().plugin_state, 0, &second)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int32_t count = -1;
  std::string count_message = Take(t().device_count(t().plugin_state, &count));
  opener.join();
  unsetenv("PX_TEST_OPEN_DELAY_MS");
  if (second != nullptr) t().device_close(t().plugin_state, second);
  // The breach is found inside device_count and returned by a later call.
  PX_Stream* stream = nullptr;
  std::string message = Take(t().stream_create(device_, &stream));
  for (const std::string& m : {open_message, count_message}) {
    if (absl::StrContains(m, "called concurrently")) message = m;
  }
  EXPECT_NE(message.find("plugin 'good': device_count: called concurrently with another device enumeration, "
                         "open or close (the host must serialize them)"),
            std::string::npos)
      << message;
  if (stream != nullptr) t().stream_destroy(device_, stream);
  // Serialized calls are fine again.
  ASSERT_EQ(Take(t().device_count(t().plugin_state, &count)), "");
  EXPECT_EQ(count, 1);
}

// Stream interop (ABI 0.8): the two slots go together, a stream's native
// handle is never one of DLPack's reserved values, and the streams passed
// are checked as in every other stream call.
TEST(ValidationLayer, AHalfFilledInteropPairIsRefused) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.validation = ValidationMode::kError;
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto plugin = (*runtime)->LoadPlugin(TestPluginPath("half_interop"));
  ASSERT_FALSE(plugin.ok());
  EXPECT_TRUE(Contains(plugin.status(), "fills only one of stream_native_handle and native_stream_wait"))
      << plugin.status();
  // The runtime keeps working.
  ASSERT_TRUE((*runtime)->LoadPlugin(TestPluginPath("good")).ok());
  auto z = RunAddition(runtime->get());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(*z, 5);
}

TEST(ValidationLayer, NativeStreamHandlesAreChecked) {
  auto runtime = ValidatedRuntime(TestPluginPath("reserved_handle"));
  ASSERT_NE(runtime, nullptr);
  ASSERT_EQ(runtime->plugins().size(), 1u);
  const PX_PluginTable& t = runtime->plugins()[0]->table();
  ASSERT_NE(t.stream_native_handle, nullptr);
  ASSERT_NE(t.native_stream_wait, nullptr);
  auto take = [](PX_Status* status) { return std::string(TakePluginStatus(status).message()); };
  PX_Device* device = nullptr;
  ASSERT_EQ(take(t.device_open(t.plugin_state, 0, &device)), "");
  PX_Stream* stream = nullptr;
  ASSERT_EQ(take(t.stream_create(device, &stream)), "");
  uint64_t handle = 0;
  std::string message = take(t.stream_native_handle(device, stream, &handle));
  EXPECT_NE(message.find("plugin 'reserved_handle': stream_native_handle: argument 'out_handle': the plugin "
                         "returned OK with handle 1 (0, 1 and 2 are not stream handles)"),
            std::string::npos)
      << message;
  message = take(t.stream_native_handle(device, stream, nullptr));
  EXPECT_NE(message.find("stream_native_handle: argument 'out_handle': is NULL"), std::string::npos) << message;
  EXPECT_EQ(take(t.native_stream_wait(device, 4096, stream)), "");
  t.stream_destroy(device, stream);
  message = take(t.native_stream_wait(device, 4096, stream));
  EXPECT_NE(message.find("native_stream_wait: argument 'stream': used after stream_destroy"), std::string::npos)
      << message;
  message = take(t.stream_native_handle(device, stream, &handle));
  EXPECT_NE(message.find("stream_native_handle: argument 'stream': used after stream_destroy"), std::string::npos)
      << message;
  t.device_close(t.plugin_state, device);
}

}  // namespace
}  // namespace plexus
