// Shared by the CUDA plugin's GPU tests: a runtime with the cpu and cuda
// plugins, the skip when there is no CUDA device, and running one node on a
// device to compare CUDA:0 with the cpu plugin.
#ifndef PLEXUS_TESTS_GPU_CUDA_TEST_UTIL_H_
#define PLEXUS_TESTS_GPU_CUDA_TEST_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attr_value.pb.h"
#include "cases.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"

namespace plexus::cuda_test {

// One runtime per test program, with only the cpu and cuda plugins.
Runtime& TheRuntime();

// Empty when CUDA:0 exists; otherwise why not (the plugin did not load, or
// it reports no device).
std::string NoCudaDeviceReason();

#define PX_SKIP_WITHOUT_CUDA()                                                 \
  do {                                                                         \
    const std::string reason = ::plexus::cuda_test::NoCudaDeviceReason();      \
    if (!reason.empty()) GTEST_SKIP() << "no CUDA device: " << reason;         \
  } while (0)

inline const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble, DataType::kHalf,
                                                  DataType::kBFloat16};
// Every dtype both plugins register for the data-movement ops.
inline const std::vector<DataType> kAllTypes = {
    DataType::kFloat, DataType::kDouble, DataType::kHalf,   DataType::kBFloat16,
    DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
    DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
    DataType::kBool};

using AttrMap = google::protobuf::Map<std::string, tf::AttrValue>;
using SetAttrs = std::function<void(AttrMap&)>;

void SetType(AttrMap& attr, const char* name, DataType t);

// Runs one node of `op` on `inputs` (fed through placeholders) on `device`
// and fetches its first `num_outputs` outputs; fails when the node did not
// run there.
absl::StatusOr<std::vector<Tensor>> RunOpN(const std::string& op, const std::vector<Tensor>& inputs,
                                           const SetAttrs& set_attrs, const std::string& device,
                                           int num_outputs);

// RunOpN's first output.
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs,
                             const SetAttrs& set_attrs, const std::string& device);

// "Op(float [2,3], int32 [2] [0,1])", for traces.
std::string Describe(const std::string& op, const std::vector<Tensor>& inputs);

// Runs the node on CPU:0 and CUDA:0 and expects the same shape and values
// within `tol`; returns the CUDA result (invalid on failure).
Tensor ExpectCudaMatchesCpu(const std::string& op, const std::vector<Tensor>& inputs,
                            const SetAttrs& set_attrs, const conformance::Tolerance& tol);

// Exact tolerance (atol = rtol = 0).
conformance::Tolerance Exact();

std::vector<double> Values(const Tensor& t);

}  // namespace plexus::cuda_test

#endif  // PLEXUS_TESTS_GPU_CUDA_TEST_UTIL_H_
