// The XPU plugin (plugins/xpu/) on a machine without an Intel GPU: it loads
// through the Runtime as "xpu" (device type XPU, DLPack kDLOneAPI = 14,
// platform LevelZero) and reports 0 devices with the reason logged once at
// info level, whatever is wrong: the real Level Zero loader without a GPU
// driver, no loader file at all (PX_XPU_LOADER naming a missing file), a
// library without the Level Zero entry points, or a loader whose zeInit
// fails (tests/xpu/fake_ze_loader.c), after which the plugin must call
// nothing else of the loader. Each loader variant runs in its own process
// (the plexus tool), since a process opens the loader once. Where an Intel
// GPU and its driver exist, the device checks take the other branch.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "plexus/plugin_host.h"
#include "spirv_entry_points.h"

namespace plexus {
namespace {

// DLPack's kDLOneAPI (absent from Debian's dlpack 0.6 header).
constexpr int32_t kDLOneAPIDeviceType = 14;

// One runtime per process: a plugin file is initialized once per process.
Runtime& TheRuntime() {
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_XPU_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok()) {
      std::fprintf(stderr, "runtime: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

std::shared_ptr<Plugin> XpuPlugin() {
  for (const auto& p : TheRuntime().plugins()) {
    if (p->name() == "xpu") return p;
  }
  return nullptr;
}

int XpuDeviceCount() {
  int n = 0;
  for (const auto& d : TheRuntime().devices()) {
    if (d->name().rfind("XPU:", 0) == 0) ++n;
  }
  return n;
}

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

// The plexus tool listing the xpu plugin, with `env` (NAME=value ...) set.
CliResult RunDevices(const std::string& env) {
  const std::string command = "PLEXUS_PLUGIN_PATH= PLEXUS_LOG_LEVEL=info " + env + " '" +
                              std::string(PX_CLI_PATH) + "' devices --plugin '" +
                              std::string(PX_XPU_PLUGIN_PATH) + "' 2>&1";
  CliResult result{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh file name in the temporary directory (removed by the caller).
std::string TempPath(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && dir[0] != '\0' ? dir : "/tmp") + "/" + stem +
                     "." + std::to_string(getpid()) + ".XXXXXX";
  std::vector<char> buffer(path.begin(), path.end());
  buffer.push_back('\0');
  const int fd = mkstemp(buffer.data());
  if (fd >= 0) close(fd);
  return buffer.data();
}

// What every no-device listing shows: the plugin, 0 devices, no XPU device,
// and the reason once.
void ExpectNoDeviceListing(const CliResult& r) {
  const std::string abi =
      "ABI " + std::to_string(PX_ABI_VERSION_MAJOR) + "." + std::to_string(PX_ABI_VERSION_MINOR);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Has(r.output, "plugin xpu 0.1.0: " + abi + ", platform LevelZero")) << r.output;
  EXPECT_TRUE(Has(r.output, "loaded plugin 'xpu' 0.1.0 (" + abi + ", ")) << r.output;
  EXPECT_TRUE(Has(r.output, ", 0 device(s))")) << r.output;
  EXPECT_FALSE(Has(r.output, "device XPU:")) << r.output;
  EXPECT_EQ(Count(r.output, "no XPU device: "), 1) << r.output;
}

TEST(XpuPlugin, LoadsThroughTheRuntime) {
  std::shared_ptr<Plugin> plugin = XpuPlugin();
  ASSERT_NE(plugin, nullptr) << "the xpu plugin did not load";
  EXPECT_EQ(plugin->abi_major(), static_cast<uint32_t>(PX_ABI_VERSION_MAJOR));
  EXPECT_EQ(plugin->abi_minor(), static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_EQ(plugin->device_type(), "XPU");
  EXPECT_EQ(plugin->table().dlpack_device_type, kDLOneAPIDeviceType);
  EXPECT_STREQ(plugin->table().platform_name, "LevelZero");
  // The optional slots the device layer fills.
  EXPECT_NE(plugin->table().host_allocate, nullptr);
  EXPECT_NE(plugin->table().memory_stats, nullptr);
  EXPECT_NE(plugin->table().memcpy_h2d_async, nullptr);
  EXPECT_NE(plugin->table().memcpy_d2h_async, nullptr);
  EXPECT_NE(plugin->table().memcpy_d2d_async, nullptr);
  EXPECT_NE(plugin->table().stream_add_callback, nullptr);
  // The cpu plugin loaded beside it and still is the host device.
  ASSERT_TRUE(TheRuntime().FindDevice("CPU:0").ok());
}

// Every op family of the op coverage list, float32 and float16 at least.
TEST(XpuPlugin, RegistersEveryOpFamilyForFloatAndHalf) {
  std::shared_ptr<Plugin> plugin = XpuPlugin();
  ASSERT_NE(plugin, nullptr);
  for (const char* op :
       {"Neg", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Relu", "Relu6", "Elu", "Selu",
        "LeakyRelu", "Softplus", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Pow", "Less",
        "Equal", "SelectV2", "Sum", "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin", "Softmax",
        "LogSoftmax", "BiasAdd", "MatMul", "BatchMatMulV2", "_FusedMatMul", "Conv2D",
        "DepthwiseConv2dNative", "_FusedConv2D", "MaxPool", "AvgPool", "FusedBatchNormV3",
        "Transpose", "ConcatV2", "Slice", "StridedSlice", "Pad", "GatherV2", "Tile", "Cast", "Pack",
        "Split", "OneHot", "BroadcastTo"}) {
    std::vector<const KernelRegistration*> regs = plugin->kernels().ForOp(op);
    ASSERT_FALSE(regs.empty()) << op << " has no xpu kernel";
    std::set<DataType> have;
    for (const KernelRegistration* reg : regs) {
      for (const auto& [attr, types] : reg->type_constraints) {
        if (attr == "T" || attr == "SrcT" || attr == "Ta" || attr == "Tparams") {
          have.insert(types.begin(), types.end());
        }
      }
    }
    EXPECT_EQ(have.count(DataType::kFloat), 1u) << op;
    EXPECT_EQ(have.count(DataType::kHalf), 1u) << op;
  }
  for (const char* op : {"All", "Any", "LogicalAnd", "Transpose", "Fill"}) {
    EXPECT_FALSE(plugin->kernels().ForOp(op).empty()) << op;
  }
}

TEST(XpuPlugin, DevicesMatchWhatTheMachineHas) {
  ASSERT_NE(XpuPlugin(), nullptr);
  const int count = XpuDeviceCount();
  if (count == 0) {
    // No GPU, driver or loader: nothing named XPU, and the default stays CPU:0.
    EXPECT_FALSE(TheRuntime().FindDevice("XPU:0").ok());
    return;
  }
  auto device = TheRuntime().FindDevice("XPU:0");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_FALSE((*device)->host_accessible());
  EXPECT_STREQ((*device)->info().vendor, "Intel");
  EXPECT_GT((*device)->info().total_memory_bytes, 0u);
}

// The machine's own Level Zero loader (if any): without a GPU driver, zeInit
// fails and the plugin says so.
TEST(XpuPlugin, TheToolListsItAndSaysWhyThereIsNoDevice) {
  ASSERT_NE(XpuPlugin(), nullptr);
  if (XpuDeviceCount() > 0) {
    CliResult r = RunDevices("");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(Has(r.output, "device XPU:0: ")) << r.output;
    EXPECT_TRUE(Has(r.output, "(Intel)")) << r.output;
    return;
  }
  CliResult r = RunDevices("PX_XPU_LOADER=");
  ExpectNoDeviceListing(r);
  // Either the loader is not installed, or its zeInit failed.
  EXPECT_TRUE(Has(r.output, "libze_loader.so.1")) << r.output;
}

TEST(XpuPlugin, AMissingLoaderFileMeansNoDevice) {
  CliResult r = RunDevices("PX_XPU_LOADER=/nonexistent/px-xpu-test/libze_loader.so.1");
  ExpectNoDeviceListing(r);
  EXPECT_TRUE(Has(r.output, "/nonexistent/px-xpu-test/libze_loader.so.1 could not be opened"))
      << r.output;
}

// A shared library that is not a Level Zero loader (the C math library):
// refused before anything is called, naming a missing entry point.
TEST(XpuPlugin, ALibraryWithoutTheEntryPointsMeansNoDevice) {
  CliResult r = RunDevices("PX_XPU_LOADER=libm.so.6");
  ExpectNoDeviceListing(r);
  EXPECT_TRUE(Has(r.output, "libm.so.6 lacks zeInit")) << r.output;
}

// The fake loader: zeInit fails, and every other entry point would abort
// the tool. The plugin calls zeInit exactly once and nothing else.
TEST(XpuPlugin, AFailedZeInitIsTheLastCallIntoTheLoader) {
  const std::string log = TempPath("px_xpu_fake_ze_loader_log");
  CliResult r = RunDevices(std::string("PX_XPU_LOADER='") + PX_XPU_FAKE_LOADER_PATH +
                           "' FAKE_ZE_LOADER_LOG='" + log + "'");
  const std::string calls = ReadFile(log);
  std::remove(log.c_str());
  ExpectNoDeviceListing(r);
  EXPECT_TRUE(Has(r.output, "zeInit(ZE_INIT_FLAG_GPU_ONLY)")) << r.output;
  EXPECT_TRUE(Has(r.output, "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)")) << r.output;
  EXPECT_FALSE(Has(r.output, "called after a failed zeInit")) << r.output;
  EXPECT_EQ(calls, "zeInit\n");
}

// -- the SPIR-V entry-point reader (which embedded module holds a kernel) --

// A SPIR-V word stream: the header, then instructions.
struct SpirvWriter {
  std::vector<uint32_t> words{0x07230203u, 0x00010200u, 0u, 100u, 0u};
  void Instruction(uint32_t opcode, std::vector<uint32_t> operands) {
    words.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | opcode);
    words.insert(words.end(), operands.begin(), operands.end());
  }
  // A nul-terminated literal string, little-endian within each word.
  static std::vector<uint32_t> String(const std::string& s) {
    std::vector<uint32_t> out((s.size() + 4) / 4, 0u);
    for (size_t i = 0; i < s.size(); ++i) {
      out[i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
    }
    return out;
  }
  void EntryPoint(uint32_t model, uint32_t id, const std::string& name) {
    std::vector<uint32_t> ops{model, id};
    for (uint32_t w : String(name)) ops.push_back(w);
    ops.push_back(id + 100);  // an interface id
    Instruction(15, ops);
  }
  std::vector<unsigned char> Bytes(bool big_endian = false) const {
    std::vector<unsigned char> b;
    for (uint32_t w : words) {
      for (int i = 0; i < 4; ++i) {
        const int shift = big_endian ? 8 * (3 - i) : 8 * i;
        b.push_back(static_cast<unsigned char>((w >> shift) & 0xffu));
      }
    }
    return b;
  }
};

TEST(XpuSpirv, ReadsTheKernelEntryPointsInOrder) {
  SpirvWriter w;
  w.Instruction(17, {6});           // OpCapability Kernel
  w.Instruction(14, {2, 2});        // OpMemoryModel Physical64 OpenCL
  w.EntryPoint(6, 1, "add_f32");    // Kernel
  w.EntryPoint(6, 2, "relu");       // 4 characters: the nul takes a word of its own
  w.EntryPoint(5, 3, "compute");    // GLCompute: not an OpenCL kernel
  w.EntryPoint(6, 4, "mul_f16_broadcast");
  w.Instruction(54, {7, 1, 0, 8});  // OpFunction: no entry point after it
  w.EntryPoint(6, 5, "too_late");
  const std::vector<unsigned char> le = w.Bytes();
  EXPECT_EQ(plexus::xpu::SpirvKernelNames(le.data(), le.size()),
            (std::vector<std::string>{"add_f32", "relu", "mul_f16_broadcast"}));
  const std::vector<unsigned char> be = w.Bytes(/*big_endian=*/true);
  EXPECT_EQ(plexus::xpu::SpirvKernelNames(be.data(), be.size()),
            (std::vector<std::string>{"add_f32", "relu", "mul_f16_broadcast"}));
}

TEST(XpuSpirv, RejectsWhatIsNotSpirv) {
  const unsigned char text[] = "not a SPIR-V module at all";
  EXPECT_TRUE(plexus::xpu::SpirvKernelNames(text, 24).empty());
  EXPECT_TRUE(plexus::xpu::SpirvKernelNames(nullptr, 0).empty());
  // A truncated instruction stops the scan without reading past the end.
  SpirvWriter w;
  w.EntryPoint(6, 1, "first");
  w.words.push_back(20u << 16 | 15u);  // claims 20 words, has none
  const std::vector<unsigned char> b = w.Bytes();
  EXPECT_EQ(plexus::xpu::SpirvKernelNames(b.data(), b.size()), (std::vector<std::string>{"first"}));
  // An unterminated name is not a name.
  SpirvWriter u;
  u.Instruction(15, {6, 1, 0x61616161u});  // "aaaa" without its nul
  const std::vector<unsigned char> ub = u.Bytes();
  EXPECT_TRUE(plexus::xpu::SpirvKernelNames(ub.data(), ub.size()).empty());
}

}  // namespace
}  // namespace plexus
