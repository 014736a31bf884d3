// The ROCm plugin as the core sees it, on any machine with the HIP runtime
// installed: it loads through the Runtime, registers its kernels (the ones
// shared with the CUDA plugin plus Plexus's own matrix products and
// convolutions), carries device code for every architecture it was built
// for, and, without an AMD GPU, reports 0 devices and says why at info
// level while the plexus tool lists it with its ABI version.
#include <cstdio>
#include <fstream>
#include <iterator>
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
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_ROCM_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok()) {
      std::fprintf(stderr, "runtime: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

std::shared_ptr<Plugin> RocmPlugin() {
  for (const auto& p : TheRuntime().plugins()) {
    if (p->name() == "rocm") return p;
  }
  return nullptr;
}

int RocmDeviceCount() {
  int n = 0;
  for (const auto& d : TheRuntime().devices()) {
    if (d->name().rfind("ROCM:", 0) == 0) ++n;
  }
  return n;
}

std::string RunCli(const std::string& args, int* exit_code) {
  const std::string command = "PLEXUS_PLUGIN_PATH= PLEXUS_LOG_LEVEL=info '" +
                              std::string(PX_CLI_PATH) + "' " + args + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RocmPlugin, LoadsThroughTheRuntime) {
  std::shared_ptr<Plugin> plugin = RocmPlugin();
  ASSERT_NE(plugin, nullptr) << "the rocm plugin did not load";
  EXPECT_EQ(plugin->abi_major(), static_cast<uint32_t>(PX_ABI_VERSION_MAJOR));
  EXPECT_EQ(plugin->abi_minor(), static_cast<uint32_t>(PX_ABI_VERSION_MINOR));
  EXPECT_EQ(plugin->device_type(), "ROCM");
  EXPECT_EQ(plugin->table().dlpack_device_type, kDLROCM);
  ASSERT_TRUE(TheRuntime().FindDevice("CPU:0").ok());
}

// Every op family of the op coverage list, float32 and float16 at least.
TEST(RocmPlugin, RegistersEveryOpFamilyForFloatAndHalf) {
  std::shared_ptr<Plugin> plugin = RocmPlugin();
  ASSERT_NE(plugin, nullptr);
  for (const char* op :
       {// elementwise and activations
        "Neg", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Relu", "Relu6", "Elu", "Selu",
        "LeakyRelu", "Softplus", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Pow", "Less",
        "Equal", "SelectV2",
        // reductions and softmax
        "Sum", "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin", "Softmax", "LogSoftmax", "BiasAdd",
        // linear algebra (Plexus's own GEMM)
        "MatMul", "BatchMatMulV2", "_FusedMatMul",
        // convolution and pooling (Plexus's own kernels)
        "Conv2D", "DepthwiseConv2dNative", "_FusedConv2D", "MaxPool", "AvgPool", "FusedBatchNormV3",
        // shape and data movement
        "Transpose", "ConcatV2", "Slice", "StridedSlice", "Pad", "GatherV2", "Tile", "Cast",
        "Pack", "Split", "OneHot", "BroadcastTo"}) {
    std::vector<const KernelRegistration*> regs = plugin->kernels().ForOp(op);
    ASSERT_FALSE(regs.empty()) << op << " has no rocm kernel";
    std::set<DataType> have;
    for (const KernelRegistration* reg : regs) {
      for (const auto& [attr, types] : reg->type_constraints) {
        if (attr == "T" || attr == "SrcT" || attr == "Ta" || attr == "Tparams") have.insert(types.begin(), types.end());
      }
    }
    EXPECT_EQ(have.count(DataType::kFloat), 1u) << op;
    EXPECT_EQ(have.count(DataType::kHalf), 1u) << op;
  }
  for (const char* op : {"All", "Any"}) EXPECT_FALSE(plugin->kernels().ForOp(op).empty()) << op;
}

// hipcc embedded a code object per architecture of PX_ROCM_ARCHITECTURES
// (comma-separated here).
TEST(RocmPlugin, CarriesDeviceCodeForEveryArchitecture) {
  std::ifstream file(PX_ROCM_PLUGIN_PATH, std::ios::binary);
  ASSERT_TRUE(file) << PX_ROCM_PLUGIN_PATH;
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string archs = PX_ROCM_ARCHITECTURES;
  size_t start = 0;
  int count = 0;
  while (start <= archs.size()) {
    size_t end = archs.find(',', start);
    if (end == std::string::npos) end = archs.size();
    const std::string arch = archs.substr(start, end - start);
    if (!arch.empty()) {
      ++count;
      EXPECT_TRUE(Has(bytes, "amdgcn-amd-amdhsa--" + arch)) << "no code object for " << arch;
    }
    start = end + 1;
  }
  EXPECT_GE(count, 1);
}

TEST(RocmPlugin, WithoutAnAmdGpuTheToolListsItWithZeroDevicesAndTheReason) {
  ASSERT_NE(RocmPlugin(), nullptr);
  int exit_code = -1;
  const std::string out = RunCli(std::string("devices --plugin ") + PX_ROCM_PLUGIN_PATH, &exit_code);
  ASSERT_EQ(exit_code, 0) << out;
  const std::string abi =
      "ABI " + std::to_string(PX_ABI_VERSION_MAJOR) + "." + std::to_string(PX_ABI_VERSION_MINOR);
  EXPECT_TRUE(Has(out, "plugin rocm 0.1.0: " + abi + ", platform ROCm")) << out;
  if (RocmDeviceCount() > 0) {
    EXPECT_TRUE(Has(out, "device ROCM:0: ")) << out;
    EXPECT_TRUE(Has(out, "(AMD)")) << out;
    return;
  }
  EXPECT_FALSE(TheRuntime().FindDevice("ROCM:0").ok());
  EXPECT_TRUE(Has(out, "  0 devices")) << out;
  EXPECT_FALSE(Has(out, "device ROCM:")) << out;
  EXPECT_TRUE(Has(out, "no ROCm device: ")) << out;
  EXPECT_TRUE(Has(out, "hipGetDeviceCount")) << out;
  // Another plugin the tool discovers (cuda on an NVIDIA machine) may be the
  // best device; it is never ROCm without a ROCm device.
  EXPECT_TRUE(Has(out, "default device: ")) << out;
  EXPECT_FALSE(Has(out, "default device: ROCM")) << out;
}

}  // namespace
}  // namespace plexus
