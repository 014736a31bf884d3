// The CUDA plugin's Slice and StridedSlice. The shapes come from the SDK's
// array_shapes (shared with the cpu plugin); begin, size, end and strides are
// host-memory inputs. Every output dimension gets a (possibly negative) input
// stride and the slice's first element a base offset; dimensions of 1 are
// dropped and neighbours that stay contiguous merged, then one kernel
// (slice.cu) writes each output element. Elements move as opaque words, so
// every dtype the cpu plugin registers is registered.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gpu_stream.h"
#include "kernels/register_kernels.h"
#include "kernels/slice_launch.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

void CheckSliceShapes(const std::string& error) {
  if (!error.empty()) throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, error);
}

void CheckVector(sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_shape(i).size() == 1, "%s must be a vector, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

// Copies the slice out of input 0: output dimension d (out_dims[d], row-major)
// steps src_strides[d] elements through the input, from element `base`.
void CopySlice(sdk::Call& call, const char* op, const Shape& final_shape,
               const std::vector<int64_t>& out_dims, const std::vector<int64_t>& src_strides,
               int64_t base) {
  PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: input 0 is not contiguous", op);
  void* dst = call.AllocateOutputRaw(0, final_shape);
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  if (n == 0) return;
  const size_t es = sdk::DtypeSize(call.input_dtype(0));
  const char* src = static_cast<const char*>(px_sdk_data(&call.input(0))) + base * static_cast<int64_t>(es);
  GpuStream& stream = StreamOf(call);
  px_gpu::Stream s = stream.get();

  // Drop dimensions of 1, then merge a dimension into the one inside it when
  // stepping it equals stepping over the whole inner one.
  std::vector<int64_t> dims, strides;
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] == 1) continue;
    if (!dims.empty() && strides.back() == src_strides[d] * out_dims[d]) {
      dims.back() *= out_dims[d];
      strides.back() = src_strides[d];
    } else {
      dims.push_back(out_dims[d]);
      strides.push_back(src_strides[d]);
    }
  }
  int rank = static_cast<int>(dims.size());
  if (rank == 0 || (rank == 1 && strides[0] == 1)) {
    const px_gpu::Error e = px_gpu::MemcpyAsync(dst, src, static_cast<size_t>(n) * es,
                                          px_gpu::kDeviceToDevice, s);
    PX_SDK_CHECK(e == px_gpu::kSuccess, "%s: cudaMemcpyAsync failed: %s", op, px_gpu::ErrorString(e));
    return;
  }
  if (rank > arr::kMaxRank) {
    throw sdk::KernelError(
        PX_CODE_UNIMPLEMENTED,
        sdk::Format("%s to %s needs %d dimensions after merging, more than the %d the CUDA "
                    "kernel handles",
                    op, sdk::ShapeString(final_shape).c_str(), rank, arr::kMaxRank));
  }
  // A contiguous innermost run moves in words as wide as its bytes, the other
  // strides and the pointers allow.
  size_t word = es;
  if (strides[rank - 1] == 1) {
    size_t w = 16;
    while (w > es) {
      bool ok = (static_cast<size_t>(dims[rank - 1]) * es) % w == 0 &&
                reinterpret_cast<uintptr_t>(src) % w == 0 &&
                reinterpret_cast<uintptr_t>(dst) % w == 0;
      for (int d = 0; ok && d < rank - 1; ++d) {
        const int64_t bytes = strides[d] * static_cast<int64_t>(es);
        ok = (bytes < 0 ? -bytes : bytes) % static_cast<int64_t>(w) == 0;
      }
      if (ok) break;
      w /= 2;
    }
    word = w;
  }
  const int64_t scale = static_cast<int64_t>(word / es);
  arr::TransposePlan plan;
  plan.rank = rank;
  plan.n = n / scale;
  for (int d = 0; d < rank; ++d) {
    plan.out_dims[d] = d == rank - 1 ? dims[d] / scale : dims[d];
    plan.src_strides[d] = d == rank - 1 ? strides[d] : strides[d] / scale;
  }
  constexpr int64_t kInt32Limit = int64_t{1} << 31;
  const bool wide = n >= kInt32Limit || call.input_size(0) >= kInt32Limit;
  arr::LaunchSlice(word, src, dst, plan, wide, s);
  CheckLaunch(stream, op);
}

std::vector<int64_t> RowMajorStrides(const Shape& s) {
  std::vector<int64_t> strides(s.size());
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= s[d];
  }
  return strides;
}

class SliceKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "begin");
    CheckVector(call, 2, "size");
    const Shape in = call.input_shape(0);
    const std::vector<int64_t> begin = call.input_int_values(1);
    Shape out;
    CheckSliceShapes(array_shapes::Slice(in, begin, call.input_int_values(2), &out));
    const std::vector<int64_t> in_strides = RowMajorStrides(in);
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) base += begin[d] * in_strides[d];
    CopySlice(call, "Slice", out, out, in_strides, base);
  }
};

class StridedSliceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    begin_mask_ = attrs.Int("begin_mask", 0);
    end_mask_ = attrs.Int("end_mask", 0);
    ellipsis_mask_ = attrs.Int("ellipsis_mask", 0);
    new_axis_mask_ = attrs.Int("new_axis_mask", 0);
    shrink_axis_mask_ = attrs.Int("shrink_axis_mask", 0);
  }

  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "begin");
    CheckVector(call, 2, "end");
    CheckVector(call, 3, "strides");
    const Shape in = call.input_shape(0);
    const std::vector<int64_t> begin = call.input_int_values(1), end = call.input_int_values(2);
    array_shapes::StridedSliceResult r;
    CheckSliceShapes(array_shapes::StridedSlice(in, &begin, &end, call.input_int_values(3),
                                                begin_mask_, end_mask_, ellipsis_mask_,
                                                new_axis_mask_, shrink_axis_mask_, &r));
    const std::vector<int64_t> in_strides = RowMajorStrides(in);
    if (r.is_identity) {
      CopySlice(call, "StridedSlice", r.final_shape, {call.input_size(0)}, {1}, 0);
      return;
    }
    std::vector<int64_t> src_strides(in.size());
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      src_strides[d] = in_strides[d] * r.strides[d];
      if (r.processing[d] > 0) base += r.begin[d] * in_strides[d];
    }
    CopySlice(call, "StridedSlice", r.final_shape, r.processing, src_strides, base);
  }

 private:
  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0, new_axis_mask_ = 0,
          shrink_axis_mask_ = 0;
};

}  // namespace

PX_Status* RegisterSliceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  // begin and size (Slice), begin, end and strides (StridedSlice) stay in
  // host memory, as on the cpu plugin.
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<SliceKernel>(info, registrar, sdk::sig::kSlice, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<StridedSliceKernel>(
      info, registrar, sdk::sig::kStridedSlice, {all, index}));
  return nullptr;
}

}  // namespace plexus::cuda
