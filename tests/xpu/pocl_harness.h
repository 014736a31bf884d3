// A small OpenCL harness for the XPU plugin's kernels: it builds the plugin's
// OpenCL C sources (plugins/xpu/kernels/*.cl, the same files that become the
// SPIR-V modules) on an OpenCL CPU device (PoCL), runs a named kernel on
// buffers and reads the results back. This is how the kernels' numerics are
// checked without an Intel GPU.
//
// Usage (in a GoogleTest body):
//   PX_POCL_HARNESS(h);                      // GTEST_SKIPs without a CPU device
//   auto x = h->Upload(std::vector<float>{...});
//   auto y = h->Alloc(n * sizeof(float));
//   size_t global = n;
//   h->Run("elementwise", "ew_unary_f32", 1, &global, nullptr,
//          {Mem(x), Mem(y), Arg(int64_t{n}), Arg(int32_t{op})});
//   std::vector<float> out = h->Download<float>(y, n);
//
// Launch rules mirror plugins/xpu/src/xpu_stream.h's Launch: the global size
// is rounded up to whole work-groups (so kernels must check their bounds), a
// null `local` lets the harness choose the work-group size (64 in dimension
// 0, 1 elsewhere), and a launch with a zero global size does nothing.
#ifndef PLEXUS_TESTS_XPU_POCL_HARNESS_H_
#define PLEXUS_TESTS_XPU_POCL_HARNESS_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace plexus::xpu::test {

// One kernel argument: `size` bytes at `data` (as xpu_stream.h's KernelArg).
struct ClArg {
  size_t size;
  const void* data;
};
template <typename T>
ClArg Arg(const T& value) {
  return {sizeof(T), &value};
}

// A device buffer (at least one byte, so zero-size tensors work).
class ClBuffer {
 public:
  ClBuffer() = default;
  ClBuffer(cl_mem mem, size_t bytes) : mem_(mem), bytes_(bytes) {}
  ClBuffer(ClBuffer&& other) noexcept : mem_(other.mem_), bytes_(other.bytes_) {
    other.mem_ = nullptr;
  }
  ClBuffer& operator=(ClBuffer&& other) noexcept;
  ClBuffer(const ClBuffer&) = delete;
  ClBuffer& operator=(const ClBuffer&) = delete;
  ~ClBuffer();
  const cl_mem& mem() const { return mem_; }
  size_t bytes() const { return bytes_; }

 private:
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
};
// A buffer argument (the cl_mem handle by value).
inline ClArg Mem(const ClBuffer& buffer) { return {sizeof(cl_mem), &buffer.mem()}; }

class PoclHarness {
 public:
  // The process-wide harness, or nullptr (with the reason in *why) when no
  // OpenCL CPU device can be found.
  static PoclHarness* Get(std::string* why);

  // Device memory initialised from host data / left uninitialised (filled
  // with 0xCD bytes so that unwritten outputs show).
  ClBuffer Upload(const void* data, size_t bytes);
  template <typename T>
  ClBuffer Upload(const std::vector<T>& values) {
    return Upload(values.data(), values.size() * sizeof(T));
  }
  ClBuffer Alloc(size_t bytes);

  void Read(const ClBuffer& buffer, void* out, size_t bytes);
  template <typename T>
  std::vector<T> Download(const ClBuffer& buffer, size_t count) {
    std::vector<T> out(count);
    Read(buffer, out.data(), count * sizeof(T));
    return out;
  }

  // Builds plugins/xpu/kernels/<module>.cl (once; with -I for that folder and
  // -cl-std=CL1.2) and runs `kernel`, waiting for it to finish. Failures are
  // reported as GoogleTest failures (with the build log) and return false.
  bool Run(const std::string& module, const std::string& kernel, int dims, const size_t* global,
           const size_t* local, std::initializer_list<ClArg> args);

  // Whether `kernel` exists in `module` (false and a failure when the module
  // does not build).
  bool HasKernel(const std::string& module, const std::string& kernel);

  std::string device_name() const { return device_name_; }

 private:
  PoclHarness() = default;
  cl_program Program(const std::string& module);

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string device_name_;
  std::map<std::string, cl_program> programs_;
  std::map<std::string, cl_kernel> kernels_;
};

// Declares `PoclHarness* name` in a test body, skipping the test when there is
// no OpenCL CPU device.
#define PX_POCL_HARNESS(name)                                              \
  std::string name##_why;                                                  \
  ::plexus::xpu::test::PoclHarness* name =                                 \
      ::plexus::xpu::test::PoclHarness::Get(&name##_why);                  \
  if (name == nullptr) GTEST_SKIP() << "no OpenCL CPU device: " << name##_why

// float <-> IEEE half (round to nearest even), for test data.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);
// Rounds through half: what a float16 tensor can hold.
inline float RoundToHalf(float value) { return HalfToFloat(FloatToHalf(value)); }

}  // namespace plexus::xpu::test

#endif  // PLEXUS_TESTS_XPU_POCL_HARNESS_H_
