// The CUDA kernel of _PlexusFusedElementwise (fused_elementwise.h).
//
// Loading and launching use the CUDA runtime only (cudaLibraryLoadData,
// cudaLibraryGetKernel, cudaLaunchKernel with the cudaKernel_t), never the
// driver library. A loaded library is context-independent, so one per
// compiled image serves every device of that architecture; each kernel
// instance also remembers, per device, the function it launches, so a call
// after the first takes no process-wide lock.
#include "fused/fused_elementwise.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fused/fused_codegen.h"
#include "fused/fused_compiler.h"
#include "gpu_error.h"
#include "gpu_stream.h"
#include "plexus/sdk/fused_elementwise.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

constexpr int kBlock = 256;
// A kernel's parameters take at most 32764 bytes (Volta and newer, CUDA
// 12.1 and newer); each input takes 16 (its pointer and its stride).
constexpr int64_t kMaxInputs = 2000;
// Blocks per multiprocessor of the grid-stride loop's grid.
constexpr int64_t kBlocksPerSm = 16;

// What a device is: its compute capability (major * 10 + minor) and size.
struct DeviceTraits {
  int compute_capability = 0;
  int multiprocessors = 0;
};

DeviceTraits TraitsOf(int device) {
  static std::mutex mu;
  static std::map<int, DeviceTraits>* cache = new std::map<int, DeviceTraits>;  // lives until exit
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(device);
  if (it != cache->end()) return it->second;
  int major = 0, minor = 0, sms = 0;
  PX_GPU_THROW_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  PX_GPU_THROW_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  PX_GPU_THROW_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  DeviceTraits t{major * 10 + minor, std::max(sms, 1)};
  cache->emplace(device, t);
  return t;
}

// The loaded library of each compiled image (never unloaded: the images
// are cached for the life of the process too).
cudaKernel_t LoadImage(const std::shared_ptr<const FusedImage>& image) {
  static std::mutex mu;
  static auto* loaded = new std::map<const FusedImage*, cudaKernel_t>;  // lives until exit
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(image.get());
  if (it != loaded->end()) return it->second;
  cudaLibrary_t library = nullptr;
  PX_GPU_THROW_IF_ERROR(
      cudaLibraryLoadData(&library, image->data.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  const cudaError_t e = cudaLibraryGetKernel(&kernel, library, kFusedKernelName);
  if (e != cudaSuccess) {
    cudaLibraryUnload(library);
    ThrowGpuError(e, "cudaLibraryGetKernel(&kernel, library, \"px_fused\")", __FILE__, __LINE__);
  }
  loaded->emplace(image.get(), kernel);
  return kernel;
}

// Launch arguments, reused by each thread.
struct LaunchScratch {
  std::vector<const void*> pointers;
  std::vector<long long> strides;
  std::vector<void*> args;
};

class FusedElementwiseKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    dtype_ = attrs.Type("T");
    PX_SDK_CHECK(dtype_ == PX_DT_FLOAT || dtype_ == PX_DT_DOUBLE,
                 "_PlexusFusedElementwise takes float or double, not %s", sdk::DtypeName(dtype_));
    num_inputs_ = attrs.Int("N");
    if (num_inputs_ > kMaxInputs) {
      throw sdk::Error(PX_CODE_UNIMPLEMENTED,
                       sdk::Format("_PlexusFusedElementwise: %lld inputs; the CUDA kernel takes at most %lld",
                                   static_cast<long long>(num_inputs_), static_cast<long long>(kMaxInputs)));
    }
    shape_ = attrs.IntList("shape");
    n_ = sdk::FusedShapeElements(shape_);
    const std::vector<sdk::FusedInstruction> program =
        sdk::ParseFusedProgram(attrs.StringList("program"), num_inputs_);
    source_ = GenerateFusedSource(program, num_inputs_, dtype_);
  }

  void Compute(sdk::Call& call) override {
    GpuStream& stream = StreamOf(call);
    const size_t num_inputs = call.num_inputs();
    PX_SDK_CHECK(static_cast<int64_t>(num_inputs) == num_inputs_,
                 "_PlexusFusedElementwise: %zu inputs, the program takes %lld", num_inputs,
                 static_cast<long long>(num_inputs_));
    thread_local LaunchScratch scratch;
    scratch.pointers.resize(num_inputs);
    scratch.strides.resize(num_inputs);
    const int64_t n = n_;
    for (size_t i = 0; i < num_inputs; ++i) {
      const DLTensor& t = call.input(i);
      PX_SDK_CHECK(sdk::DtypeOf(t) == dtype_, "_PlexusFusedElementwise: input %zu is %s, expected %s", i,
                   sdk::DtypeName(sdk::DtypeOf(t)), sdk::DtypeName(dtype_));
      const int64_t m = px_sdk_num_elements(&t);
      PX_SDK_CHECK(m == n || m == 1, "_PlexusFusedElementwise: input %zu has %lld elements, expected %lld or 1", i,
                   static_cast<long long>(m), static_cast<long long>(n));
      PX_SDK_CHECK(m <= 1 || px_sdk_is_contiguous(&t), "_PlexusFusedElementwise: input %zu is not contiguous", i);
      scratch.pointers[i] = px_sdk_data(&t);
      scratch.strides[i] = m == n ? 1 : 0;
    }
    void* y = call.AllocateOutputRaw(0, shape_);
    if (n == 0) return;

    const Loaded loaded = KernelFor(stream.ordinal);

    long long count = n;
    scratch.args.clear();
    for (size_t i = 0; i < num_inputs; ++i) scratch.args.push_back(&scratch.pointers[i]);
    scratch.args.push_back(&y);
    scratch.args.push_back(&count);
    for (size_t i = 0; i < num_inputs; ++i) scratch.args.push_back(&scratch.strides[i]);
    const int64_t blocks = std::min<int64_t>((n + kBlock - 1) / kBlock, kBlocksPerSm * loaded.multiprocessors);
    const cudaError_t launched =
        cudaLaunchKernel(reinterpret_cast<const void*>(loaded.kernel), dim3(static_cast<unsigned>(blocks)), dim3(kBlock),
                         scratch.args.data(), 0, stream.get());
    CheckLaunch(stream, "cudaLaunchKernel(px_fused)");
    // CheckLaunch reads the runtime's last error; a launch that failed
    // without leaving one still fails here.
    if (launched != cudaSuccess) ThrowGpuError(launched, "cudaLaunchKernel(px_fused)", __FILE__, __LINE__);
  }

 private:
  // What a call on one device launches, with the device's size.
  struct Loaded {
    int device;
    cudaKernel_t kernel;
    int multiprocessors;
  };

  // The function to launch on `device`: compiled (or fetched from the
  // process-wide cache) and loaded on the first call for that device.
  Loaded KernelFor(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Loaded& l : kernels_) {
      if (l.device == device) return l;
    }
    const DeviceTraits traits = TraitsOf(device);
    const Loaded l{device, LoadImage(CompileFusedSource(source_, traits.compute_capability)),
                   traits.multiprocessors};
    kernels_.push_back(l);
    return l;
  }

  PX_DataType dtype_ = PX_DT_FLOAT;
  int64_t num_inputs_ = 0;
  sdk::Shape shape_;
  int64_t n_ = 0;
  std::string source_;
  std::mutex mu_;
  std::vector<Loaded> kernels_;  // per device
};

}  // namespace

PX_Status* RegisterFusedElementwise(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<FusedElementwiseKernel>(
      info, registrar, sdk::sig::kPlexusFusedElementwise, {{PX_DT_FLOAT, PX_DT_DOUBLE}});
}

}  // namespace plexus::cuda
