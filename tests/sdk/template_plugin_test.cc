// The template plugin (sdk/template) and the SDK's C++ plugin helpers
// (plexus/sdk/plugin.h):
// - every table slot of the built template, driven through a small strict
//   host of this file (older and newer hosts, out-of-range ordinals, a huge
//   allocation, memory statistics, copies, sticky stream errors, events);
// - plugin.h itself on a minimal plugin class (optional slots left NULL,
//   exceptions turned into statuses, vendor error messages, sdk::Status);
// - the template's kernels through the whole stack (graph, session, ABI) on
//   TEMPLATE:0 against the cpu plugin.
#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin.h"

namespace {

namespace sdk = plexus::sdk;

// ---------------------------------------------------------------------------
// A small strict host: statuses are counted so that leaks show.
// ---------------------------------------------------------------------------

struct TestStatus {
  PX_Code code;
  std::string message;
};

std::atomic<int> g_live_statuses{0};
std::atomic<int> g_logs{0};

PX_Status* StatusCreate(PX_Code code, const char* message) {
  ++g_live_statuses;
  return reinterpret_cast<PX_Status*>(new TestStatus{code, message ? message : ""});
}
void StatusDestroy(PX_Status* s) {
  if (s == nullptr) return;
  --g_live_statuses;
  delete reinterpret_cast<TestStatus*>(s);
}
PX_Code StatusCode(const PX_Status* s) {
  return s ? reinterpret_cast<const TestStatus*>(s)->code : PX_CODE_OK;
}
const char* StatusMessage(const PX_Status* s) {
  return s ? reinterpret_cast<const TestStatus*>(s)->message.c_str() : "";
}
void Log(void*, PX_LogLevel, const char*) { ++g_logs; }

struct Registrar {
  std::vector<std::string> ops;
};
PX_Status* KernelRegister(PX_KernelRegistrar* r, const PX_KernelDef* def) {
  reinterpret_cast<Registrar*>(r)->ops.push_back(def->op_name);
  return nullptr;
}

PX_HostServices MakeServices() {
  PX_HostServices s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.status_create = StatusCreate;
  s.status_destroy = StatusDestroy;
  s.status_code = StatusCode;
  s.status_message = StatusMessage;
  s.log = Log;
  s.kernel_register = KernelRegister;
  return s;
}
const PX_HostServices g_services = MakeServices();

// Takes a status the plugin returned: its code (and message, through *message).
PX_Code Take(PX_Status* s, std::string* message = nullptr) {
  PX_Code code = StatusCode(s);
  if (message) *message = StatusMessage(s);
  StatusDestroy(s);
  return code;
}

PX_HostInitArgs InitArgs(uint32_t major = PX_ABI_VERSION_MAJOR, uint32_t min_minor = 0,
                         uint32_t max_minor = PX_ABI_VERSION_MINOR) {
  PX_HostInitArgs args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.abi_major = major;
  args.abi_min_minor = min_minor;
  args.abi_max_minor = max_minor;
  args.services = &g_services;
  args.plugin_path = PX_TEMPLATE_PLUGIN_PATH;
  return args;
}

// The template plugin, dlopened and initialized by this host.
class TemplateAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(PX_TEMPLATE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    probe_ = reinterpret_cast<PX_PluginProbeFn>(dlsym(handle_, PX_PLUGIN_PROBE_SYMBOL));
    init_ = reinterpret_cast<PX_PluginInitializeFn>(dlsym(handle_, PX_PLUGIN_INITIALIZE_SYMBOL));
    ASSERT_NE(probe_, nullptr);
    ASSERT_NE(init_, nullptr);
    statuses_before_ = g_live_statuses.load();
  }
  void TearDown() override {
    if (table_.plugin_shutdown != nullptr) table_.plugin_shutdown(table_.plugin_state);
    if (handle_ != nullptr) dlclose(handle_);
    EXPECT_EQ(g_live_statuses.load(), statuses_before_) << "statuses leaked or freed twice";
  }

  // Initializes as the current host; fills table_.
  void Initialize() {
    PX_HostInitArgs args = InitArgs();
    std::memset(&table_, 0, sizeof(table_));
    table_.struct_size = sizeof(table_);
    ASSERT_EQ(Take(init_(&args, &table_)), PX_CODE_OK);
  }

  PX_Device* Open() {
    PX_Device* device = nullptr;
    EXPECT_EQ(Take(table_.device_open(table_.plugin_state, 0, &device)), PX_CODE_OK);
    return device;
  }

  void* handle_ = nullptr;
  PX_PluginProbeFn probe_ = nullptr;
  PX_PluginInitializeFn init_ = nullptr;
  PX_PluginTable table_{};
  int statuses_before_ = 0;
};

TEST_F(TemplateAbi, ProbeAndTable) {
  PX_PluginProbeInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  probe_(&info);
  EXPECT_STREQ(info.plugin_name, "template");
  EXPECT_EQ(info.abi_major, static_cast<uint32_t>(PX_ABI_VERSION_MAJOR));
  EXPECT_EQ(info.abi_min_minor, 0u);
  EXPECT_EQ(info.abi_max_minor, static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_LT(info.score, 0);

  Initialize();
  EXPECT_EQ(table_.struct_size, sizeof(PX_PluginTable));
  EXPECT_EQ(table_.abi_minor, static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_STREQ(table_.plugin_name, "template");
  EXPECT_STREQ(table_.device_type, "TEMPLATE");
  EXPECT_EQ(table_.dlpack_device_type, kDLExtDev);
  // Every slot up to ABI 0.4, optional ones included, is implemented by the
  // template. Stream capture (0.5) is not: its streams run work as it is
  // queued, so there is nothing to record, and it leaves all four slots NULL.
  const auto* slots = reinterpret_cast<void* const*>(&table_.plugin_shutdown);
  const auto* end = reinterpret_cast<void* const*>(&table_.stream_capture_begin);
  for (const auto* p = slots; p < end; ++p) EXPECT_NE(*p, nullptr) << "slot " << (p - slots);
  EXPECT_EQ(table_.stream_capture_begin, nullptr);
  EXPECT_EQ(table_.stream_capture_end, nullptr);
  EXPECT_EQ(table_.graph_launch, nullptr);
  EXPECT_EQ(table_.graph_destroy, nullptr);

  Registrar registrar;
  ASSERT_EQ(Take(table_.register_kernels(table_.plugin_state,
                                         reinterpret_cast<PX_KernelRegistrar*>(&registrar))),
            PX_CODE_OK);
  EXPECT_EQ(registrar.ops, (std::vector<std::string>{"AddV2", "Mul", "Relu", "MatMul"}));
}

TEST_F(TemplateAbi, NegotiationRefusesWithAReason) {
  PX_PluginTable table;
  std::memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  PX_HostInitArgs args = InitArgs(/*major=*/7);
  std::string message;
  EXPECT_EQ(Take(init_(&args, &table), &message), PX_CODE_FAILED_PRECONDITION);
  EXPECT_NE(message.find("major"), std::string::npos) << message;
  args = InitArgs(PX_ABI_VERSION_MAJOR, PX_ABI_VERSION_MINOR + 1, PX_ABI_VERSION_MINOR + 3);
  EXPECT_EQ(Take(init_(&args, &table), &message), PX_CODE_FAILED_PRECONDITION);
  EXPECT_NE(message.find("no common ABI minor"), std::string::npos) << message;
  EXPECT_EQ(table.register_kernels, nullptr);
  // An older host: the newest minor both speak.
  args = InitArgs(PX_ABI_VERSION_MAJOR, 0, 1);
  table_.struct_size = sizeof(table_);
  ASSERT_EQ(Take(init_(&args, &table_)), PX_CODE_OK);
  EXPECT_EQ(table_.abi_minor, 1u);
}

TEST_F(TemplateAbi, OlderAndNewerHostTables) {
  // An older host's table ends before stream_add_callback: nothing may be
  // written past it, and struct_size stays.
  const size_t old_size = offsetof(PX_PluginTable, stream_add_callback);
  std::vector<unsigned char> bytes(sizeof(PX_PluginTable) + 64, 0xAB);
  auto* table = reinterpret_cast<PX_PluginTable*>(bytes.data());
  std::memset(bytes.data(), 0, old_size);
  table->struct_size = old_size;
  PX_HostInitArgs args = InitArgs();
  ASSERT_EQ(Take(init_(&args, table)), PX_CODE_OK);
  EXPECT_EQ(table->struct_size, old_size);
  for (size_t i = old_size; i < bytes.size(); ++i) ASSERT_EQ(bytes[i], 0xAB) << "byte " << i;
  EXPECT_NE(table->stream_wait_event, nullptr);
  table->plugin_shutdown(table->plugin_state);

  // A newer host's larger table: the plugin lowers struct_size to its own.
  std::fill(bytes.begin(), bytes.end(), 0);
  table->struct_size = bytes.size();
  ASSERT_EQ(Take(init_(&args, table)), PX_CODE_OK);
  EXPECT_EQ(table->struct_size, sizeof(PX_PluginTable));
  for (size_t i = sizeof(PX_PluginTable); i < bytes.size(); ++i) ASSERT_EQ(bytes[i], 0) << i;
  std::memcpy(&table_, table, sizeof(table_));  // TearDown shuts it down
}

TEST_F(TemplateAbi, DevicesAndOrdinals) {
  Initialize();
  int32_t count = -1;
  ASSERT_EQ(Take(table_.device_count(table_.plugin_state, &count)), PX_CODE_OK);
  EXPECT_EQ(count, 1);
  PX_DeviceInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  ASSERT_EQ(Take(table_.device_get_info(table_.plugin_state, 0, &info)), PX_CODE_OK);
  EXPECT_EQ(info.host_accessible, 0);
  EXPECT_EQ(info.total_memory_bytes, uint64_t{1} << 30);
  EXPECT_GT(std::strlen(info.name), 0u);
  std::string message;
  EXPECT_EQ(Take(table_.device_get_info(table_.plugin_state, 1, &info), &message),
            PX_CODE_INVALID_ARGUMENT);
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  EXPECT_EQ(Take(table_.device_get_info(table_.plugin_state, -1, &info)), PX_CODE_INVALID_ARGUMENT);
  PX_Device* device = nullptr;
  EXPECT_EQ(Take(table_.device_open(table_.plugin_state, 5, &device)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(device, nullptr);
  device = Open();
  ASSERT_NE(device, nullptr);
  table_.device_close(table_.plugin_state, device);
}

TEST_F(TemplateAbi, MemoryAndStatistics) {
  Initialize();
  PX_Device* device = Open();
  ASSERT_NE(device, nullptr);
  auto stats = [&] {
    PX_MemoryStats s;
    std::memset(&s, 0, sizeof(s));
    s.struct_size = sizeof(s);
    EXPECT_EQ(Take(table_.memory_stats(device, &s)), PX_CODE_OK);
    return s;
  };
  EXPECT_EQ(stats().bytes_in_use, 0u);
  EXPECT_EQ(stats().bytes_limit, uint64_t{1} << 30);

  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(Take(table_.allocate(device, 1000, 0, &a)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.allocate(device, 24, 256, &b)), PX_CODE_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 256, 0u);
  EXPECT_EQ(stats().bytes_in_use, 1024u);
  EXPECT_EQ(stats().num_allocations, 2u);

  // A huge allocation fails cleanly, as RESOURCE_EXHAUSTED, and changes nothing.
  void* huge = nullptr;
  std::string message;
  EXPECT_EQ(Take(table_.allocate(device, size_t{1} << 40, 64, &huge), &message),
            PX_CODE_RESOURCE_EXHAUSTED);
  EXPECT_EQ(huge, nullptr);
  EXPECT_NE(message.find("template_plugin.cc:"), std::string::npos) << message;
  EXPECT_NE(message.find("failed: out of device memory (code 2)"), std::string::npos) << message;
  EXPECT_EQ(Take(table_.allocate(device, SIZE_MAX, 64, &huge)), PX_CODE_RESOURCE_EXHAUSTED);
  EXPECT_EQ(Take(table_.allocate(device, 16, 3, &huge)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(stats().bytes_in_use, 1024u);

  // Copies in, within and out; the device side must be device memory.
  std::vector<float> in(250), out(250);
  for (int i = 0; i < 250; ++i) in[i] = i * 0.5f;
  ASSERT_EQ(Take(table_.memcpy_h2d(device, a, in.data(), 1000)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.memcpy_d2d(device, b, static_cast<char*>(a) + 40, 24)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.memcpy_d2h(device, out.data(), a, 1000)), PX_CODE_OK);
  EXPECT_EQ(in, out);
  float six[6];
  ASSERT_EQ(Take(table_.memcpy_d2h(device, six, b, 24)), PX_CODE_OK);
  EXPECT_EQ(six[0], 5.0f);
  EXPECT_EQ(Take(table_.memcpy_h2d(device, in.data(), out.data(), 8)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(Take(table_.memcpy_d2h(device, out.data(), a, 1001)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(Take(table_.memcpy_h2d(device, nullptr, in.data(), 4)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(Take(table_.memcpy_h2d(device, nullptr, nullptr, 0)), PX_CODE_OK);

  table_.deallocate(device, a);
  table_.deallocate(device, nullptr);
  EXPECT_EQ(stats().bytes_in_use, 24u);
  EXPECT_EQ(stats().peak_bytes_in_use, 1024u);
  table_.deallocate(device, b);
  EXPECT_EQ(stats().bytes_in_use, 0u);

  void* pinned = nullptr;
  ASSERT_EQ(Take(table_.host_allocate(device, 100, &pinned)), PX_CODE_OK);
  std::memset(pinned, 1, 100);  // host memory: directly usable
  table_.host_deallocate(device, pinned);
  table_.host_deallocate(device, nullptr);
  table_.device_close(table_.plugin_state, device);
}

void RecordStatus(void* arg, const PX_Status* status) {
  *static_cast<PX_Code*>(arg) = StatusCode(status);
}

TEST_F(TemplateAbi, StickyStreamErrorsAndEvents) {
  Initialize();
  PX_Device* device = Open();
  ASSERT_NE(device, nullptr);
  void* buffer = nullptr;
  ASSERT_EQ(Take(table_.allocate(device, 64, 64, &buffer)), PX_CODE_OK);
  PX_Stream* stream = nullptr;
  PX_Event* before = nullptr;
  PX_Event* after = nullptr;
  PX_Event* never = nullptr;
  ASSERT_EQ(Take(table_.stream_create(device, &stream)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.event_create(device, &before)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.event_create(device, &after)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.event_create(device, &never)), PX_CODE_OK);

  char host[64] = {1, 2, 3};
  char back[64] = {};
  ASSERT_EQ(Take(table_.memcpy_h2d_async(device, stream, buffer, host, 64)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.event_record(device, stream, before)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.memcpy_d2h_async(device, stream, back, buffer, 64)), PX_CODE_OK);
  ASSERT_EQ(Take(table_.stream_synchronize(device, stream)), PX_CODE_OK);
  EXPECT_EQ(back[2], 3);

  // A failing copy (the source is not device memory) is the stream's first
  // error; a later failure does not replace it.
  std::string first;
  EXPECT_EQ(Take(table_.memcpy_d2d_async(device, stream, buffer, host, 8), &first),
            PX_CODE_INVALID_ARGUMENT);
  EXPECT_NE(Take(table_.memcpy_d2h_async(device, stream, back, host, 8)), PX_CODE_OK);
  std::string sticky;
  EXPECT_EQ(Take(table_.stream_get_status(device, stream), &sticky), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(sticky, first);
  EXPECT_EQ(Take(table_.stream_synchronize(device, stream), &sticky), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(sticky, first);
  // Events carry the stream's status at the point they were recorded.
  ASSERT_EQ(Take(table_.event_record(device, stream, after)), PX_CODE_OK);
  EXPECT_EQ(Take(table_.event_synchronize(device, before)), PX_CODE_OK);
  EXPECT_EQ(Take(table_.event_synchronize(device, after)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(Take(table_.event_synchronize(device, never)), PX_CODE_OK);
  EXPECT_EQ(Take(table_.stream_wait_event(device, stream, before)), PX_CODE_OK);
  PX_Code seen = PX_CODE_OK;
  ASSERT_EQ(Take(table_.stream_add_callback(device, stream, RecordStatus, &seen)), PX_CODE_OK);
  EXPECT_EQ(seen, PX_CODE_INVALID_ARGUMENT);

  // A fresh stream has no error.
  PX_Stream* clean = nullptr;
  ASSERT_EQ(Take(table_.stream_create(device, &clean)), PX_CODE_OK);
  EXPECT_EQ(Take(table_.stream_synchronize(device, clean)), PX_CODE_OK);
  seen = PX_CODE_UNKNOWN;
  ASSERT_EQ(Take(table_.stream_add_callback(device, clean, RecordStatus, &seen)), PX_CODE_OK);
  EXPECT_EQ(seen, PX_CODE_OK);

  table_.stream_destroy(device, clean);
  table_.event_destroy(device, never);
  table_.event_destroy(device, after);
  table_.event_destroy(device, before);
  table_.stream_destroy(device, stream);
  table_.deallocate(device, buffer);
  table_.device_close(table_.plugin_state, device);
}

// ---------------------------------------------------------------------------
// plugin.h on a minimal plugin of this file
// ---------------------------------------------------------------------------

enum FakeError { kFakeOk = 0, kFakeBusy = 7, kFakeNoMemory = 9 };
const char* DescribeFake(FakeError e) { return e == kFakeBusy ? "device busy" : nullptr; }
PX_Code MapFake(FakeError e) {
  return e == kFakeNoMemory ? PX_CODE_RESOURCE_EXHAUSTED : PX_CODE_INTERNAL;
}

struct MinimalStream {};
struct MinimalEvent {};

class MinimalDevice : public sdk::Device {
 public:
  using Stream = MinimalStream;
  using Event = MinimalEvent;
  using sdk::Device::Device;
  PX_Status* Allocate(size_t bytes, size_t, void** out) {
    if (bytes == 13) throw std::runtime_error("thirteen");
    if (bytes == 14) throw std::bad_alloc();
    if (bytes == 15) sdk::ThrowError(PX_CODE_OUT_OF_RANGE, "fifteen is %s", "too many");
    if (bytes == 16) {
      PX_SDK_VENDOR_CALL_MAPPED(host(), FakeCall(kFakeNoMemory), kFakeOk, DescribeFake, MapFake);
    }
    if (bytes == 17) PX_SDK_VENDOR_CALL(host(), FakeCall(kFakeBusy), kFakeOk, DescribeFake);
    if (bytes == 18) PX_SDK_VENDOR_CHECK(host(), FakeCall(kFakeBusy), kFakeOk, DescribeFake);
    *out = &storage_;
    return nullptr;
  }
  void Deallocate(void*) {}
  PX_Status* MemcpyH2D(void*, const void*, size_t) { return nullptr; }
  PX_Status* MemcpyD2H(void*, const void*, size_t) { return nullptr; }
  PX_Status* MemcpyD2D(void*, const void*, size_t) { return nullptr; }
  PX_Status* StreamSynchronize(Stream&) { return nullptr; }
  PX_Status* StreamGetStatus(Stream&) { return nullptr; }
  PX_Status* EventRecord(Stream&, Event&) { return nullptr; }
  PX_Status* EventSynchronize(Event&) { return nullptr; }
  PX_Status* StreamWaitEvent(Stream&, Event&) { return nullptr; }

 private:
  static FakeError FakeCall(FakeError e) { return e; }
  double storage_ = 0;
};

class MinimalPlugin : public sdk::Plugin {
 public:
  using Device = MinimalDevice;
  explicit MinimalPlugin(const sdk::PluginContext& context) : sdk::Plugin(context) {
    if (context.abi_minor == 0) sdk::ThrowError(PX_CODE_FAILED_PRECONDITION, "no 0.0 please");
  }
  PX_Status* RegisterKernels(PX_KernelRegistrar*) { return nullptr; }
  PX_Status* DeviceCount(int32_t* count) {
    *count = 2;
    return nullptr;
  }
  PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info) {
    sdk::CopyString(info->name, "a name far longer than the vendor field allows, to be cut");
    return nullptr;
  }
  PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<MinimalDevice>* out) {
    *out = std::make_unique<MinimalDevice>(*this, ordinal);
    return nullptr;
  }
};

constexpr sdk::PluginInfo kMinimalInfo{"minimal", "1.0", "Test", "MIN", kDLExtDev};

TEST(PluginHelpers, MinimalPluginLeavesOptionalSlotsNull) {
  const int before = g_live_statuses.load();
  PX_HostInitArgs args = InitArgs();
  PX_PluginTable table;
  std::memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  ASSERT_EQ(Take(sdk::internal::Initialize<MinimalPlugin>(kMinimalInfo, &args, &table)), PX_CODE_OK);
  EXPECT_STREQ(table.plugin_name, "minimal");
  EXPECT_NE(table.stream_create, nullptr);
  EXPECT_NE(table.event_create, nullptr);
  EXPECT_EQ(table.host_allocate, nullptr);
  EXPECT_EQ(table.host_deallocate, nullptr);
  EXPECT_EQ(table.memory_stats, nullptr);
  EXPECT_EQ(table.memcpy_h2d_async, nullptr);
  EXPECT_EQ(table.memcpy_d2h_async, nullptr);
  EXPECT_EQ(table.memcpy_d2d_async, nullptr);
  EXPECT_EQ(table.stream_add_callback, nullptr);

  PX_Device* device = nullptr;
  ASSERT_EQ(Take(table.device_open(table.plugin_state, 1, &device)), PX_CODE_OK);
  EXPECT_EQ(Take(table.device_open(table.plugin_state, 2, &device)), PX_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(Take(table.device_open(table.plugin_state, 0, nullptr)), PX_CODE_INVALID_ARGUMENT);
  void* p = nullptr;
  std::string message;
  EXPECT_EQ(Take(table.allocate(device, 13, 0, &p), &message), PX_CODE_INTERNAL);
  EXPECT_NE(message.find("thirteen"), std::string::npos) << message;
  EXPECT_EQ(Take(table.allocate(device, 14, 0, &p)), PX_CODE_RESOURCE_EXHAUSTED);
  EXPECT_EQ(Take(table.allocate(device, 15, 0, &p), &message), PX_CODE_OUT_OF_RANGE);
  EXPECT_EQ(message, "fifteen is too many");
  EXPECT_EQ(Take(table.allocate(device, 16, 0, &p), &message), PX_CODE_RESOURCE_EXHAUSTED);
  EXPECT_NE(message.find("template_plugin_test.cc:"), std::string::npos) << message;
  EXPECT_NE(message.find(": FakeCall(kFakeNoMemory) failed: unknown error (code 9)"),
            std::string::npos)
      << message;
  EXPECT_EQ(Take(table.allocate(device, 17, 0, &p), &message), PX_CODE_INTERNAL);
  EXPECT_NE(message.find(": FakeCall(kFakeBusy) failed: device busy (code 7)"), std::string::npos)
      << message;
  EXPECT_EQ(message.find('/'), std::string::npos) << "no folders in " << message;
  EXPECT_EQ(Take(table.allocate(device, 18, 0, &p), &message), PX_CODE_INTERNAL);
  EXPECT_NE(message.find(": FakeCall(kFakeBusy) failed: device busy (code 7)"), std::string::npos)
      << message;
  EXPECT_EQ(Take(table.allocate(device, 8, 48, &p)), PX_CODE_INVALID_ARGUMENT);
  ASSERT_EQ(Take(table.allocate(device, 8, 0, &p)), PX_CODE_OK);
  EXPECT_NE(p, nullptr);

  PX_DeviceInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = offsetof(PX_DeviceInfo, vendor);  // an older host: name only
  std::memset(info.vendor, 0x5A, sizeof(info.vendor));
  ASSERT_EQ(Take(table.device_get_info(table.plugin_state, 0, &info)), PX_CODE_OK);
  EXPECT_EQ(info.struct_size, offsetof(PX_DeviceInfo, vendor));
  EXPECT_EQ(info.vendor[0], 0x5A);
  EXPECT_EQ(std::string(info.name).substr(0, 6), "a name");

  PX_Stream* stream = nullptr;
  ASSERT_EQ(Take(table.stream_create(device, &stream)), PX_CODE_OK);
  EXPECT_EQ(Take(table.stream_synchronize(device, stream)), PX_CODE_OK);
  table.stream_destroy(device, stream);
  table.device_close(table.plugin_state, device);
  table.plugin_shutdown(table.plugin_state);

  // A constructor that throws refuses the plugin with its status.
  PX_HostInitArgs old = InitArgs(PX_ABI_VERSION_MAJOR, 0, 0);
  std::memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  EXPECT_EQ(Take(sdk::internal::Initialize<MinimalPlugin>(kMinimalInfo, &old, &table), &message),
            PX_CODE_FAILED_PRECONDITION);
  EXPECT_EQ(message, "no 0.0 please");
  EXPECT_EQ(table.register_kernels, nullptr);
  // Unusable services: no status can be made, the table stays empty.
  PX_HostInitArgs no_services = InitArgs();
  no_services.services = nullptr;
  EXPECT_EQ(sdk::internal::Initialize<MinimalPlugin>(kMinimalInfo, &no_services, &table), nullptr);
  EXPECT_EQ(table.register_kernels, nullptr);
  EXPECT_EQ(g_live_statuses.load(), before);
}

int g_destroyed = 0;
int DestroyInt(int value) {
  g_destroyed += value;
  return 0;
}

TEST(PluginHelpers, HandlesAndUniqueHandle) {
  MinimalStream stream;
  PX_Stream* handle = sdk::ToHandle<PX_Stream>(&stream);
  EXPECT_EQ(sdk::HandleCast<MinimalStream>(handle), &stream);
  g_destroyed = 0;
  {
    sdk::UniqueHandle<int, DestroyInt> a;
    EXPECT_FALSE(a);
    *a.out() = 5;
    EXPECT_TRUE(a);
    sdk::UniqueHandle<int, DestroyInt> b = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), 5);
    sdk::UniqueHandle<int, DestroyInt> c(7);
    EXPECT_EQ(c.release(), 7);  // not destroyed
  }
  EXPECT_EQ(g_destroyed, 5);
}

TEST(PluginHelpers, StatusOwnership) {
  const int before = g_live_statuses.load();
  {
    sdk::Status ok;
    EXPECT_TRUE(ok.ok());
    EXPECT_EQ(ok.code(), PX_CODE_OK);
    EXPECT_STREQ(ok.message(), "");
    sdk::Status s = sdk::MakeStatus(&g_services, PX_CODE_NOT_FOUND, "no %s", "thing");
    EXPECT_EQ(s.code(), PX_CODE_NOT_FOUND);
    EXPECT_STREQ(s.message(), "no thing");
    sdk::Status moved = std::move(s);
    EXPECT_TRUE(s.ok());  // NOLINT: moved-from is OK and empty
    EXPECT_EQ(moved.code(), PX_CODE_NOT_FOUND);
    EXPECT_EQ(g_live_statuses.load(), before + 1);
    PX_Status* raw = moved.release();
    EXPECT_TRUE(moved.ok());
    EXPECT_EQ(Take(raw), PX_CODE_NOT_FOUND);
    EXPECT_TRUE(sdk::MakeStatus(&g_services, PX_CODE_OK, "fine").ok());
    EXPECT_EQ(sdk::MakeError(&g_services, PX_CODE_OK, "fine"), nullptr);
    sdk::Status dropped(&g_services, StatusCreate(PX_CODE_INTERNAL, "dropped"));
  }
  EXPECT_EQ(g_live_statuses.load(), before);

  auto returns = [](bool fail) -> PX_Status* {
    PX_SDK_RETURN_IF_ERROR(fail ? sdk::MakeError(&g_services, PX_CODE_ABORTED, "x") : nullptr);
    PX_SDK_RETURN_IF_ERROR(sdk::Status());
    return nullptr;
  };
  EXPECT_EQ(returns(false), nullptr);
  EXPECT_EQ(Take(returns(true)), PX_CODE_ABORTED);

  sdk::StickyStatus sticky;
  EXPECT_EQ(sticky.Report(&g_services), nullptr);
  sdk::Status first = sdk::MakeStatus(&g_services, PX_CODE_DATA_LOSS, "first");
  sdk::Status second = sdk::MakeStatus(&g_services, PX_CODE_ABORTED, "second");
  EXPECT_TRUE(sticky.Record(&g_services, first.get()));
  EXPECT_FALSE(sticky.Record(&g_services, second.get()));
  EXPECT_FALSE(sticky.Record(&g_services, nullptr));
  std::string message;
  EXPECT_EQ(Take(sticky.Report(&g_services), &message), PX_CODE_DATA_LOSS);
  EXPECT_EQ(message, "first");
}

// ---------------------------------------------------------------------------
// The template's kernels through the core, against the cpu plugin
// ---------------------------------------------------------------------------

class TemplateKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plexus::RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_TEMPLATE_PLUGIN_PATH};
    auto runtime = plexus::Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(runtime).value().release();
    ASSERT_EQ(runtime_->plugins().size(), 2u);
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }

  // Runs a one-node graph of `op` on `device`; the node must stay there.
  static absl::StatusOr<plexus::Tensor> Run(const std::string& device, const std::string& op,
                                            const std::vector<plexus::Tensor>& inputs,
                                            const std::string& attrs) {
    std::string text;
    std::string node = "node { name: 'out' op: '" + op + "'";
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      text += "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: " +
              TypeEnum(inputs[i].dtype()) + " } } }\n";
      node += " input: '" + name + "'";
    }
    text += node + " attr { key: 'T' value { type: " + TypeEnum(inputs[0].dtype()) + " } } " +
            attrs + " }\n";
    auto graph = plexus::ImportGraphDefBytes(text, "<test graph>", plexus::GraphFormat::kText);
    if (!graph.ok()) return graph.status();
    plexus::SessionOptions options;
    options.device = device;
    auto session = plexus::Session::Create(
        runtime_, std::shared_ptr<const plexus::Graph>(std::move(graph).value()), options);
    if (!session.ok()) return session.status();
    std::vector<std::pair<std::string, plexus::Tensor>> feeds;
    for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({"in" + std::to_string(i), inputs[i]});
    auto out = (*session)->Run(feeds, {"out"});
    if (!out.ok()) return out.status();
    if (!(*session)->placement_notes().empty()) {
      return absl::InternalError("fell back: " + (*session)->placement_notes()[0]);
    }
    return (*out)[0];
  }

  static std::string TypeEnum(plexus::DataType t) {
    switch (t) {
      case plexus::DataType::kDouble: return "DT_DOUBLE";
      case plexus::DataType::kInt32: return "DT_INT32";
      default: return "DT_FLOAT";
    }
  }

  template <typename T>
  static plexus::Tensor Random(plexus::DataType dtype, const plexus::Shape& shape,
                               std::mt19937& rng) {
    plexus::Tensor t = *plexus::Tensor::AllocateHost(dtype, shape);
    std::uniform_real_distribution<double> dist(-3, 3);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<T>()[i] = static_cast<T>(dist(rng));
    return t;
  }

  // Runs on TEMPLATE:0 and CPU:0 and compares.
  template <typename T>
  static void ExpectSame(const std::string& op, const std::vector<plexus::Tensor>& inputs,
                         const std::string& attrs = "") {
    auto got = Run("TEMPLATE:0", op, inputs, attrs);
    auto want = Run("CPU:0", op, inputs, attrs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->shape(), want->shape());
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    for (int64_t i = 0; i < got->num_elements(); ++i) {
      const double g = got->data<T>()[i], w = want->data<T>()[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << "at " << i;
      } else {
        EXPECT_NEAR(g, w, tol * (1 + std::fabs(w))) << "at " << i;
      }
    }
  }

  template <typename T>
  static void CheckAll(plexus::DataType dtype) {
    std::mt19937 rng(5);
    using plexus::Shape;
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{2, 3}, {2, 3}}, {{2, 3}, {}}, {{}, {4}}, {{2, 3}, {3}},
        {{2, 1, 3}, {4, 1}}, {{1}, {5, 1}}, {{0, 3}, {3}}, {{}, {}}};
    for (const char* op : {"AddV2", "Mul"}) {
      for (const auto& [a, b] : shapes) {
        SCOPED_TRACE(std::string(op) + " " + plexus::ShapeToString(a) + " " +
                     plexus::ShapeToString(b));
        ExpectSame<T>(op, {Random<T>(dtype, a, rng), Random<T>(dtype, b, rng)});
      }
    }
    plexus::Tensor x = Random<T>(dtype, {3, 4}, rng);
    x.data<T>()[0] = std::numeric_limits<T>::quiet_NaN();
    x.data<T>()[1] = -std::numeric_limits<T>::infinity();
    ExpectSame<T>("Relu", {x});
    ExpectSame<T>("Relu", {Random<T>(dtype, {}, rng)});
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = 3, k = 5, n = 4;
        const std::string attrs = std::string("attr { key: 'transpose_a' value { b: ") +
                                  (ta ? "true" : "false") +
                                  " } } attr { key: 'transpose_b' value { b: " +
                                  (tb ? "true" : "false") + " } }";
        SCOPED_TRACE(attrs);
        ExpectSame<T>("MatMul",
                      {Random<T>(dtype, ta ? Shape{k, m} : Shape{m, k}, rng),
                       Random<T>(dtype, tb ? Shape{n, k} : Shape{k, n}, rng)},
                      attrs);
      }
    }
    ExpectSame<T>("MatMul", {Random<T>(dtype, {2, 0}, rng), Random<T>(dtype, {0, 3}, rng)});
  }

  static plexus::Runtime* runtime_;
};
plexus::Runtime* TemplateKernels::runtime_ = nullptr;

TEST_F(TemplateKernels, MatchTheCpuPluginFloat) { CheckAll<float>(plexus::DataType::kFloat); }
TEST_F(TemplateKernels, MatchTheCpuPluginDouble) { CheckAll<double>(plexus::DataType::kDouble); }

TEST_F(TemplateKernels, ErrorsAreStatuses) {
  std::mt19937 rng(3);
  auto bad = Run("TEMPLATE:0", "MatMul",
                 {Random<float>(plexus::DataType::kFloat, {2, 3}, rng),
                  Random<float>(plexus::DataType::kFloat, {4, 2}, rng)},
                 "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  // int32 has no template kernel: the node falls back to the cpu.
  plexus::Tensor i = *plexus::Tensor::AllocateHost(plexus::DataType::kInt32, {2});
  auto fallback = Run("TEMPLATE:0", "Relu", {i}, "");
  ASSERT_FALSE(fallback.ok());
  EXPECT_NE(fallback.status().message().find("fell back"), absl::string_view::npos)
      << fallback.status();
}

}  // namespace
