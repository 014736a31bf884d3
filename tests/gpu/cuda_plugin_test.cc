// The CUDA plugin as the core sees it, on any machine: it loads through the
// Runtime, registers its kernels, and reports its devices; where no GPU (or
// no driver) exists it reports 0 devices and says why at info level, and the
// plexus tool lists it with its ABI version. Where a GPU exists, the device
// is CUDA:0 with its own (not host-accessible) memory.
#include <cstdio>
#include <set>
#include <string>
#include <sys/wait.h>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "plexus/plugin_host.h"
#include "test_util.h"

namespace plexus {
namespace {

// One runtime per process: a plugin file is initialized once per process.
Runtime& TheRuntime() {
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_CUDA_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok()) {
      std::fprintf(stderr, "runtime: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

std::shared_ptr<Plugin> CudaPlugin() {
  for (const auto& p : TheRuntime().plugins()) {
    if (p->name() == "cuda") return p;
  }
  return nullptr;
}

int CudaDeviceCount() {
  int n = 0;
  for (const auto& d : TheRuntime().devices()) {
    if (d->name().rfind("CUDA:", 0) == 0) ++n;
  }
  return n;
}

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

CliResult RunCli(const std::string& env, const std::string& args) {
  std::string command =
      "PLEXUS_PLUGIN_PATH= " + env + " '" + std::string(PX_CLI_PATH) + "' " + args + " 2>&1";
  CliResult result{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CudaPlugin, LoadsThroughTheRuntime) {
  std::shared_ptr<Plugin> plugin = CudaPlugin();
  ASSERT_NE(plugin, nullptr) << "the cuda plugin did not load";
  EXPECT_EQ(plugin->abi_major(), static_cast<uint32_t>(PX_ABI_VERSION_MAJOR));
  EXPECT_EQ(plugin->abi_minor(), static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_EQ(plugin->device_type(), "CUDA");
  EXPECT_EQ(plugin->table().dlpack_device_type, kDLCUDA);
  // The cpu plugin loaded beside it and still is the host device.
  ASSERT_TRUE(TheRuntime().FindDevice("CPU:0").ok());
}

TEST(CudaPlugin, RegistersTheElementwiseKernelsForTheFloatTypes) {
  std::shared_ptr<Plugin> plugin = CudaPlugin();
  ASSERT_NE(plugin, nullptr);
  const std::set<DataType> want = {DataType::kFloat, DataType::kDouble, DataType::kHalf,
                                   DataType::kBFloat16};
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Relu", "Relu6",
                         "Sigmoid", "Tanh", "Add", "AddV2", "Sub", "Mul", "Div", "RealDiv",
                         "Maximum", "Minimum", "SquaredDifference"}) {
    std::vector<const KernelRegistration*> regs = plugin->kernels().ForOp(op);
    ASSERT_EQ(regs.size(), 1u) << op;
    ASSERT_EQ(regs[0]->type_constraints.size(), 1u) << op;
    EXPECT_EQ(regs[0]->type_constraints[0].first, "T") << op;
    // The four floating types at least (integer types too for some ops).
    const auto& types = regs[0]->type_constraints[0].second;
    const std::set<DataType> have(types.begin(), types.end());
    for (DataType t : want) EXPECT_EQ(have.count(t), 1u) << op << " " << DataTypeName(t);
  }
}

TEST(CudaPlugin, RegistersTheMatMulKernelsForTheFloatTypes) {
  std::shared_ptr<Plugin> plugin = CudaPlugin();
  ASSERT_NE(plugin, nullptr);
  const std::set<DataType> want = {DataType::kFloat, DataType::kDouble, DataType::kHalf,
                                   DataType::kBFloat16};
  for (const char* op : {"MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2"}) {
    std::vector<const KernelRegistration*> regs = plugin->kernels().ForOp(op);
    ASSERT_EQ(regs.size(), 1u) << op;
    ASSERT_EQ(regs[0]->type_constraints.size(), 1u) << op;
    EXPECT_EQ(regs[0]->type_constraints[0].first, "T") << op;
    // The four floating types at least (integer types too for some ops).
    const auto& types = regs[0]->type_constraints[0].second;
    const std::set<DataType> have(types.begin(), types.end());
    for (DataType t : want) EXPECT_EQ(have.count(t), 1u) << op << " " << DataTypeName(t);
  }
  // BatchMatMulV3: Ta, Tb and Tout, each a float type.
  std::vector<const KernelRegistration*> v3 = plugin->kernels().ForOp("BatchMatMulV3");
  ASSERT_EQ(v3.size(), 1u);
  ASSERT_EQ(v3[0]->type_constraints.size(), 3u);
  for (const auto& [attr, types] : v3[0]->type_constraints) {
    EXPECT_EQ(std::set<DataType>(types.begin(), types.end()), want) << attr;
  }
}

TEST(CudaPlugin, DevicesMatchWhatTheMachineHas) {
  ASSERT_NE(CudaPlugin(), nullptr);
  const int count = CudaDeviceCount();
  if (count == 0) {
    // No GPU or no driver: nothing named CUDA, and the default stays CPU:0.
    EXPECT_FALSE(TheRuntime().FindDevice("CUDA:0").ok());
    return;
  }
  auto device = TheRuntime().FindDevice("CUDA:0");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_FALSE((*device)->host_accessible());
  EXPECT_STREQ((*device)->info().vendor, "NVIDIA");
  EXPECT_GT((*device)->info().total_memory_bytes, 0u);
  EXPECT_GT((*device)->info().free_memory_bytes, 0u);
  EXPECT_EQ((*device)->info().preferred_layout, PX_LAYOUT_NHWC);
}

TEST(CudaPlugin, TheToolListsItWithItsAbiVersionAndSaysWhyThereIsNoDevice) {
  ASSERT_NE(CudaPlugin(), nullptr);
  const int count = CudaDeviceCount();
  CliResult r = RunCli("PLEXUS_LOG_LEVEL=info", std::string("devices --plugin ") + PX_CUDA_PLUGIN_PATH);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string abi =
      "ABI " + std::to_string(PX_ABI_VERSION_MAJOR) + "." + std::to_string(PX_ABI_VERSION_MINOR);
  EXPECT_TRUE(Has(r.output, "plugin cuda 0.1.0: " + abi + ", platform CUDA")) << r.output;
  EXPECT_TRUE(Has(r.output, "loaded plugin 'cuda' 0.1.0 (" + abi + ", ")) << r.output;
  if (count == 0) {
    EXPECT_TRUE(Has(r.output, ", 0 device(s))")) << r.output;
    EXPECT_FALSE(Has(r.output, "device CUDA:")) << r.output;
    // The reason, logged once at info level by the plugin.
    EXPECT_TRUE(Has(r.output, "no CUDA device: ")) << r.output;
    EXPECT_TRUE(Has(r.output, "cudaGetDeviceCount")) << r.output;
  } else {
    EXPECT_TRUE(Has(r.output, "device CUDA:0: ")) << r.output;
    EXPECT_TRUE(Has(r.output, "(NVIDIA)")) << r.output;
  }
}

}  // namespace
}  // namespace plexus
