#include "pocl_harness.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "plexus/sdk/float16.h"

#ifndef PX_XPU_KERNEL_DIR
#error "PX_XPU_KERNEL_DIR (the folder of the XPU plugin's .cl files) must be defined"
#endif

namespace plexus::xpu::test {
namespace {

std::string PlatformInfo(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  clGetPlatformInfo(platform, what, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::string DeviceName(cl_device_id device) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  clGetDeviceInfo(device, CL_DEVICE_NAME, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

}  // namespace

ClBuffer& ClBuffer::operator=(ClBuffer&& other) noexcept {
  if (this != &other) {
    if (mem_ != nullptr) clReleaseMemObject(mem_);
    mem_ = other.mem_;
    bytes_ = other.bytes_;
    other.mem_ = nullptr;
  }
  return *this;
}

ClBuffer::~ClBuffer() {
  if (mem_ != nullptr) clReleaseMemObject(mem_);
}

PoclHarness* PoclHarness::Get(std::string* why) {
  // Built once; the OpenCL objects live until the process ends.
  static std::once_flag once;
  static PoclHarness* harness = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
      reason = "no OpenCL platform (install an ICD such as pocl-opencl-icd)";
      return;
    }
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    // PoCL first (it is what these tests are written against), then any
    // other platform with a CPU device.
    cl_platform_id chosen_platform = nullptr;
    cl_device_id chosen_device = nullptr;
    for (int pass = 0; pass < 2 && chosen_device == nullptr; ++pass) {
      for (cl_platform_id platform : platforms) {
        bool is_pocl = PlatformInfo(platform, CL_PLATFORM_NAME).find("Portable Computing Language") !=
                       std::string::npos;
        if (pass == 0 && !is_pocl) continue;
        cl_device_id device = nullptr;
        cl_uint devices = 0;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, &devices) == CL_SUCCESS &&
            devices > 0) {
          chosen_platform = platform;
          chosen_device = device;
          break;
        }
      }
    }
    if (chosen_device == nullptr) {
      reason = "no OpenCL platform has a CPU device (install pocl-opencl-icd)";
      return;
    }
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &chosen_device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      reason = "clCreateContext failed: " + std::to_string(err);
      return;
    }
    cl_command_queue queue = clCreateCommandQueue(context, chosen_device, 0, &err);
    if (err != CL_SUCCESS) {
      clReleaseContext(context);
      reason = "clCreateCommandQueue failed: " + std::to_string(err);
      return;
    }
    harness = new PoclHarness();
    harness->platform_ = chosen_platform;
    harness->device_ = chosen_device;
    harness->context_ = context;
    harness->queue_ = queue;
    harness->device_name_ = DeviceName(chosen_device);
  });
  if (harness == nullptr && why != nullptr) *why = reason;
  return harness;
}

ClBuffer PoclHarness::Upload(const void* data, size_t bytes) {
  ClBuffer buffer = Alloc(bytes);
  if (bytes > 0 && buffer.mem() != nullptr) {
    cl_int err = clEnqueueWriteBuffer(queue_, buffer.mem(), CL_TRUE, 0, bytes, data, 0, nullptr, nullptr);
    EXPECT_EQ(err, CL_SUCCESS) << "clEnqueueWriteBuffer of " << bytes << " bytes";
  }
  return buffer;
}

ClBuffer PoclHarness::Alloc(size_t bytes) {
  size_t size = bytes == 0 ? 1 : bytes;
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, size, nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS) << "clCreateBuffer of " << size << " bytes";
  if (err != CL_SUCCESS) return ClBuffer();
  std::vector<unsigned char> pattern(size, 0xCD);
  clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, size, pattern.data(), 0, nullptr, nullptr);
  return ClBuffer(mem, bytes);
}

void PoclHarness::Read(const ClBuffer& buffer, void* out, size_t bytes) {
  if (bytes == 0) return;
  ASSERT_LE(bytes, buffer.bytes()) << "reading past the end of a buffer";
  cl_int err = clEnqueueReadBuffer(queue_, buffer.mem(), CL_TRUE, 0, bytes, out, 0, nullptr, nullptr);
  EXPECT_EQ(err, CL_SUCCESS) << "clEnqueueReadBuffer of " << bytes << " bytes";
}

cl_program PoclHarness::Program(const std::string& module) {
  auto found = programs_.find(module);
  if (found != programs_.end()) return found->second;
  programs_[module] = nullptr;  // a failed build fails once, not once per kernel
  std::string dir = PX_XPU_KERNEL_DIR;
  std::string path = dir + "/" + module + ".cl";
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    ADD_FAILURE() << "cannot open " << path;
    return nullptr;
  }
  std::string source;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) source.append(chunk, got);
  std::fclose(file);

  const char* text = source.c_str();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &err);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "clCreateProgramWithSource(" << path << ") failed: " << err;
    return nullptr;
  }
  // OpenCL C 1.2, the subset the kernels are written in (the SPIR-V build
  // compiles the same files as OpenCL C 3.0).
  std::string options = "-cl-std=CL1.2 -I" + dir;
  err = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t log_size = 0;
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_size);
    std::string log(log_size, '\0');
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, log_size, log.data(), nullptr);
    ADD_FAILURE() << "building " << path << " failed (" << err << "):\n" << log;
    clReleaseProgram(program);
    return nullptr;
  }
  programs_[module] = program;
  return program;
}

bool PoclHarness::HasKernel(const std::string& module, const std::string& kernel) {
  cl_program program = Program(module);
  if (program == nullptr) return false;
  std::string key = module + "/" + kernel;
  if (kernels_.count(key) != 0) return true;
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program, kernel.c_str(), &err);
  if (err != CL_SUCCESS) return false;
  kernels_[key] = k;
  return true;
}

bool PoclHarness::Run(const std::string& module, const std::string& kernel, int dims,
                      const size_t* global, const size_t* local, std::initializer_list<ClArg> args) {
  if (!HasKernel(module, kernel)) {
    ADD_FAILURE() << "no kernel " << kernel << " in " << module << ".cl";
    return false;
  }
  if (dims < 1 || dims > 3) {
    ADD_FAILURE() << "dims must be 1..3, got " << dims;
    return false;
  }
  cl_kernel k = kernels_[module + "/" + kernel];
  cl_uint index = 0;
  for (const ClArg& arg : args) {
    cl_int err = clSetKernelArg(k, index, arg.size, arg.data);
    if (err != CL_SUCCESS) {
      ADD_FAILURE() << kernel << ": clSetKernelArg(" << index << ", " << arg.size
                    << " bytes) failed: " << err;
      return false;
    }
    ++index;
  }
  cl_uint expected_args = 0;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(expected_args), &expected_args, nullptr);
  if (expected_args != index) {
    ADD_FAILURE() << kernel << " takes " << expected_args << " arguments, given " << index;
    return false;
  }
  size_t rounded[3] = {1, 1, 1};
  size_t group[3] = {1, 1, 1};
  for (int d = 0; d < dims; ++d) {
    if (global[d] == 0) return true;  // nothing to do
    group[d] = local != nullptr ? local[d] : (d == 0 ? 64 : 1);
    rounded[d] = (global[d] + group[d] - 1) / group[d] * group[d];
  }
  cl_int err = clEnqueueNDRangeKernel(queue_, k, static_cast<cl_uint>(dims), nullptr, rounded, group, 0,
                                      nullptr, nullptr);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << kernel << ": clEnqueueNDRangeKernel failed: " << err;
    return false;
  }
  err = clFinish(queue_);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << kernel << ": clFinish failed: " << err;
    return false;
  }
  return true;
}

uint16_t FloatToHalf(float value) { return sdk::half(value).bits; }

float HalfToFloat(uint16_t bits) {
  sdk::half h;
  h.bits = bits;
  return static_cast<float>(h);
}

}  // namespace plexus::xpu::test
