// The CUDA plugin's data-movement kernels: Transpose, ConcatV2 (and Concat),
// Cast, GatherV2 (and Gather), Pad and PadV2. The classes here check shapes
// (the SDK's array_shapes, shared with the cpu plugin), collapse dimensions
// and build the plans; the device code is in array.cu. Except Cast they move
// elements as opaque words, so every dtype the cpu plugin registers is
// registered here too.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/array_launch.h"
#include "kernels/dtype_map.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

void CheckShapes(const std::string& error) {
  if (!error.empty()) throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, error);
}


void CheckContiguous(sdk::Call& call, size_t i, const char* op) {
  PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= s[d];
  return p;
}

bool OnHost(const DLTensor& t) {
  return t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
}

// The integer values of input i, which may lie in device memory (ConcatV2's
// axis: its index depends on N, so it cannot be registered as host memory).
// A device value costs one synchronous copy and a stream synchronize.
std::vector<int64_t> IntValuesAnywhere(sdk::Call& call, size_t i, GpuStream& stream,
                                       const char* op) {
  const DLTensor& t = call.input(i);
  if (OnHost(t)) return call.input_int_values(i);
  const int64_t n = px_sdk_num_elements(&t);
  const bool is64 = t.dtype.code == kDLInt && t.dtype.bits == 64;
  PX_SDK_CHECK(is64 || (t.dtype.code == kDLInt && t.dtype.bits == 32),
               "%s: input %zu must be int32 or int64", op, i);
  std::vector<int64_t> values(static_cast<size_t>(n));
  if (n == 0) return values;
  if (is64) {
    PX_GPU_THROW_IF_FAILED(px_gpu::MemcpyAsync(values.data(), px_sdk_data(&t), n * 8,
                                            px_gpu::kDeviceToHost, stream.get()),
                            "cudaMemcpyAsync (reading a device int64 argument)");
  }
  std::vector<int32_t> v32(is64 ? 0 : static_cast<size_t>(n));
  if (!is64) {
    PX_GPU_THROW_IF_FAILED(
        px_gpu::MemcpyAsync(v32.data(), px_sdk_data(&t), n * 4, px_gpu::kDeviceToHost, stream.get()),
        "cudaMemcpyAsync (reading a device int32 argument)");
  }
  PX_GPU_THROW_IF_FAILED(px_gpu::StreamSynchronize(stream.get()), "cudaStreamSynchronize");
  for (int64_t k = 0; !is64 && k < n; ++k) values[k] = v32[k];
  return values;
}

// The largest word (16, 8, 4, 2 or 1 bytes) that divides `bytes` and to
// which every pointer is aligned.
size_t WordFor(size_t bytes, std::initializer_list<const void*> pointers) {
  size_t w = 16;
  while (w > 1) {
    bool ok = bytes % w == 0;
    for (const void* p : pointers) ok = ok && reinterpret_cast<uintptr_t>(p) % w == 0;
    if (ok) break;
    w /= 2;
  }
  return w;
}

std::string IndexString(int64_t k, const Shape& shape) {
  std::vector<int64_t> coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = shape[d] == 0 ? 0 : k % shape[d];
    if (shape[d] != 0) k /= shape[d];
  }
  std::string s;
  for (size_t d = 0; d < coord.size(); ++d) {
    if (d > 0) s += ",";
    s += std::to_string(coord[d]);
  }
  return s;
}

// ---------------------------------------------------------------------------
// Transpose
// ---------------------------------------------------------------------------

class TransposeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "Transpose");
    const Shape in = call.input_shape(0);
    PX_SDK_CHECK(call.input_shape(1).size() == 1, "perm must be a vector, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    const std::vector<int64_t> perm = call.input_int_values(1);
    Shape out;
    CheckShapes(array_shapes::Transpose(in, perm, &out));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(in);
    if (n == 0) return;
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const void* src = px_sdk_data(&call.input(0));
    GpuStream& stream = StreamOf(call);

    // Drop size-1 dimensions, then merge input dimensions that stay
    // neighbours in the output: perm becomes a permutation of groups.
    const int rank = static_cast<int>(in.size());
    std::vector<int> new_index(rank, -1);
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) {
      if (in[d] != 1) {
        new_index[d] = static_cast<int>(dims.size());
        dims.push_back(in[d]);
      }
    }
    std::vector<int> p;  // output order -> input dimension (without size 1)
    for (int j = 0; j < rank; ++j) {
      if (new_index[perm[j]] >= 0) p.push_back(new_index[perm[j]]);
    }
    // Groups of input dimensions [first, last], in output order.
    std::vector<std::pair<int, int>> groups;
    for (int v : p) {
      if (!groups.empty() && groups.back().second + 1 == v) {
        groups.back().second = v;
      } else {
        groups.push_back({v, v});
      }
    }
    const int g = static_cast<int>(groups.size());
    // The groups in input order give the collapsed input dimensions.
    std::vector<int> order(g);
    for (int k = 0; k < g; ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return groups[a].first < groups[b].first; });
    std::vector<int64_t> cin(g);       // collapsed input dims
    std::vector<int> cperm(g);          // output group k -> collapsed input dim
    for (int k = 0; k < g; ++k) {
      const auto& gr = groups[order[k]];
      int64_t size = 1;
      for (int d = gr.first; d <= gr.second; ++d) size *= dims[d];
      cin[k] = size;
      cperm[order[k]] = k;
    }
    px_gpu::Stream s = stream.get();
    if (g <= 1) {
      PX_GPU_THROW_IF_FAILED(
          px_gpu::MemcpyAsync(dst, src, static_cast<size_t>(n) * es, px_gpu::kDeviceToDevice, s),
          "cudaMemcpyAsync");
      CheckLaunch(stream, "Transpose");  // waits in synchronous debug mode
      return;
    }
    // Swapping the last two dimensions (with or without a batch in front):
    // shared-memory tiles when both are long enough to fill them.
    const bool swap2 = g == 2;
    const bool swap3 = g == 3 && cperm[0] == 0 && cperm[1] == 2 && cperm[2] == 1;
    if ((swap2 || swap3) && es <= 8) {
      const int64_t rows = cin[g - 2], cols = cin[g - 1];
      if (rows >= 16 && cols >= 16) {
        arr::LaunchTransposeTiled(es, src, dst, swap3 ? cin[0] : 1, rows, cols, s);
        CheckLaunch(stream, "Transpose");
        return;
      }
    }
    if (g > arr::kMaxRank) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("Transpose of %s with this permutation needs %d dimensions after merging, "
                      "more than the %d the CUDA kernel handles",
                      sdk::ShapeString(in).c_str(), g, arr::kMaxRank));
    }
    std::vector<int64_t> in_strides(g);
    int64_t stride = 1;
    for (int k = g - 1; k >= 0; --k) {
      in_strides[k] = stride;
      stride *= cin[k];
    }
    arr::TransposePlan plan;
    plan.rank = g;
    plan.n = n;
    for (int j = 0; j < g; ++j) {
      plan.out_dims[j] = cin[cperm[j]];
      plan.src_strides[j] = in_strides[cperm[j]];
    }
    size_t word = es;
    if (cperm[g - 1] == g - 1) {
      // The innermost group stays innermost: move it in words as wide as
      // its bytes and the pointers allow.
      word = WordFor(static_cast<size_t>(cin[g - 1]) * es, {src, dst});
      if (word > es) {
        const int64_t scale = static_cast<int64_t>(word / es);
        plan.out_dims[g - 1] /= scale;
        for (int j = 0; j < g - 1; ++j) plan.src_strides[j] /= scale;
        plan.n /= scale;
      } else {
        word = es;
      }
    }
    arr::LaunchTranspose(word, src, dst, plan, s);
    CheckLaunch(stream, "Transpose");
  }
};

// ---------------------------------------------------------------------------
// ConcatV2 (axis last) and Concat (axis first)
// ---------------------------------------------------------------------------

class ConcatKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_first_ = std::string(attrs.op()) == "Concat"; }

  void Compute(sdk::Call& call) override {
    const char* op = axis_first_ ? "Concat" : "ConcatV2";
    const size_t n = call.num_inputs() - 1;
    const size_t first = axis_first_ ? 1 : 0;
    const size_t axis_input = axis_first_ ? 0 : n;
    GpuStream& stream = StreamOf(call);
    PX_SDK_CHECK(call.input_shape(axis_input).empty(), "axis must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(axis_input)).c_str());
    const int64_t axis = IntValuesAnywhere(call, axis_input, stream, op)[0];
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) {
      CheckContiguous(call, first + k, op);
      shapes.push_back(call.input_shape(first + k));
    }
    Shape out;
    CheckShapes(array_shapes::Concat(shapes, axis, &out));
    const size_t a =
        static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(out.size()) : axis);
    const size_t es = sdk::DtypeSize(call.input_dtype(first));
    char* dst = static_cast<char*>(call.AllocateOutputRaw(0, out));
    const int64_t outer = Product(out, 0, a);
    const size_t row = static_cast<size_t>(Product(out, a, out.size())) * es;
    if (outer == 0 || row == 0) return;
    // One strided 2-D copy per input: its [outer, inner_k] block into the
    // output's columns [offset, offset + inner_k) (bytes).
    size_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t chunk = static_cast<size_t>(Product(shapes[k], a, shapes[k].size())) * es;
      if (chunk == 0) continue;
      const char* src = static_cast<const char*>(px_sdk_data(&call.input(first + k)));
      if (outer == 1) {
        PX_GPU_THROW_IF_FAILED(
            px_gpu::MemcpyAsync(dst + offset, src, chunk, px_gpu::kDeviceToDevice, stream.get()),
            "cudaMemcpyAsync");
      } else {
        px_gpu::Error error = px_gpu::Memcpy2DAsync(dst + offset, row, src, chunk, chunk,
                                              static_cast<size_t>(outer),
                                              px_gpu::kDeviceToDevice, stream.get());
        if (error == px_gpu::kErrorInvalidPitchValue) {
          // A pitch above the device's limit (rows over ~2 GiB): row by row.
          (void)px_gpu::GetLastError();
          error = px_gpu::kSuccess;
          for (int64_t o = 0; o < outer && error == px_gpu::kSuccess; ++o) {
            error = px_gpu::MemcpyAsync(dst + offset + o * row, src + o * chunk, chunk,
                                    px_gpu::kDeviceToDevice, stream.get());
          }
        }
        PX_GPU_THROW_IF_FAILED(error, "cudaMemcpy2DAsync");
      }
      CheckLaunch(stream, op);  // waits in synchronous debug mode
      offset += chunk;
    }
  }

 private:
  bool axis_first_ = false;
};

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------


class CastKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { truncate_ = attrs.Bool("Truncate", false); }

  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "Cast");
    const DLTensor& x = call.input(0);
    const PX_DataType src = call.input_dtype(0), dst = call.output_dtype(0);
    const arr::CastType s = ToCastType(src, "Cast"), d = ToCastType(dst, "Cast");
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = px_sdk_num_elements(&x);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    if (src == dst) {
      PX_GPU_THROW_IF_FAILED(
          px_gpu::MemcpyAsync(y, px_sdk_data(&x), static_cast<size_t>(n) * sdk::DtypeSize(src),
                          px_gpu::kDeviceToDevice, stream.get()),
          "cudaMemcpyAsync");
      CheckLaunch(stream, "Cast");  // waits in synchronous debug mode
      return;
    }
    arr::LaunchCast(s, d, truncate_, px_sdk_data(&x), y, n, stream.get());
    CheckLaunch(stream, "Cast");
  }

 private:
  bool truncate_ = false;
};

// ---------------------------------------------------------------------------
// Gather, GatherV2
// ---------------------------------------------------------------------------

// Checking the indices costs one small kernel and one synchronous 8-byte
// read per call (the stream waits for the work queued before it): an index
// out of range must be refused with INVALID_ARGUMENT like on the cpu plugin,
// not turned into zeros or a wild read.
class GatherKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { batch_dims_ = attrs.Int("batch_dims", 0); }

  void Compute(sdk::Call& call) override {
    const char* op = call.num_inputs() > 2 ? "GatherV2" : "Gather";
    CheckContiguous(call, 0, op);
    CheckContiguous(call, 1, op);
    int64_t axis = 0;
    if (call.num_inputs() > 2) {
      PX_SDK_CHECK(call.input_shape(2).empty(), "axis must be a scalar, got shape %s",
                   sdk::ShapeString(call.input_shape(2)).c_str());
      axis = call.input_int_values(2)[0];
    }
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    int64_t a = 0, b = 0;
    CheckShapes(array_shapes::Gather(params, indices, axis, batch_dims_, &out, &a, &b));
    const int64_t batch = Product(params, 0, static_cast<size_t>(b));
    const int64_t outer = Product(params, static_cast<size_t>(b), static_cast<size_t>(a));
    const int64_t limit = params[a];
    const int64_t inner = Product(params, static_cast<size_t>(a) + 1, params.size());
    const int64_t n = Product(indices, static_cast<size_t>(b), indices.size());
    const int64_t num_indices = sdk::NumElements(indices);
    const PX_DataType itype = call.input_dtype(1);
    PX_SDK_CHECK(itype == PX_DT_INT32 || itype == PX_DT_INT64,
                 "%s: indices must be int32 or int64, got %s", op, sdk::DtypeName(itype));
    const bool idx64 = itype == PX_DT_INT64;
    const void* idx = px_sdk_data(&call.input(1));
    void* dst = call.AllocateOutputRaw(0, out);
    if (num_indices == 0) return;
    GpuStream& stream = StreamOf(call);
    CheckIndices(stream, op, idx, idx64, num_indices, limit, indices);
    const int64_t total = sdk::NumElements(out);
    if (total == 0) return;
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const void* src = px_sdk_data(&call.input(0));
    const size_t word = WordFor(static_cast<size_t>(inner) * es, {src, dst});
    const int64_t inner_words = inner * static_cast<int64_t>(es) / static_cast<int64_t>(word);
    arr::LaunchGather(word, idx64, src, idx, dst, batch, outer, limit, inner_words, n,
                      stream.get());
    CheckLaunch(stream, op);
  }

 private:
  void CheckIndices(GpuStream& stream, const char* op, const void* idx, bool idx64,
                    int64_t count, int64_t limit, const Shape& indices) {
    px_gpu::Stream s = stream.get();
    int64_t* bad = nullptr;
    PX_GPU_THROW_IF_FAILED(px_gpu::MallocAsync(reinterpret_cast<void**>(&bad), sizeof(int64_t), s),
                            "px_gpu::MallocAsync(8 bytes for the index check)");
    // 0x7f in every byte: larger than any index position.
    px_gpu::Error error = px_gpu::MemsetAsync(bad, 0x7f, sizeof(int64_t), s);
    if (error == px_gpu::kSuccess) {
      arr::LaunchGatherCheck(idx64, idx, count, limit, bad, s);
      error = px_gpu::GetLastError();
    }
    int64_t first_bad = 0;
    if (error == px_gpu::kSuccess) {
      error = px_gpu::MemcpyAsync(&first_bad, bad, sizeof(first_bad), px_gpu::kDeviceToHost, s);
    }
    (void)px_gpu::FreeAsync(bad, s);
    if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(s);
    PX_GPU_THROW_IF_FAILED(error, "the index range check");
    if (first_bad >= count) return;
    int64_t value = 0;
    const size_t isize = idx64 ? 8 : 4;
    int32_t v32 = 0;
    const char* at = static_cast<const char*>(idx) + first_bad * static_cast<int64_t>(isize);
    error = px_gpu::MemcpyAsync(idx64 ? static_cast<void*>(&value) : static_cast<void*>(&v32), at,
                            isize, px_gpu::kDeviceToHost, s);
    if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(s);
    PX_GPU_THROW_IF_FAILED(error, "reading the bad index");
    if (!idx64) value = v32;
    PX_SDK_CHECK(false, "indices[%s] = %lld is not in [0, %lld)",
                 IndexString(first_bad, indices).c_str(), static_cast<long long>(value),
                 static_cast<long long>(limit));
  }

  int64_t batch_dims_ = 0;
};

// ---------------------------------------------------------------------------
// Pad, PadV2 (constant mode)
// ---------------------------------------------------------------------------

class PadKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const char* op = call.num_inputs() > 2 ? "PadV2" : "Pad";
    CheckContiguous(call, 0, op);
    const Shape in = call.input_shape(0);
    const std::vector<int64_t> pad = call.input_int_values(1);
    Shape out;
    CheckShapes(array_shapes::Pad(in, call.input_shape(1), pad, 0, &out));
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const void* value_dev = nullptr;
    uint64_t value_bits = 0;
    if (call.num_inputs() > 2) {
      PX_SDK_CHECK(call.input_shape(2).empty(), "constant_values must be a scalar, got shape %s",
                   sdk::ShapeString(call.input_shape(2)).c_str());
      const DLTensor& v = call.input(2);
      if (OnHost(v)) {
        std::memcpy(&value_bits, px_sdk_data(&v), es);
      } else {
        value_dev = px_sdk_data(&v);
      }
    }
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const void* src = px_sdk_data(&call.input(0));
    GpuStream& stream = StreamOf(call);
    // Collapse: drop unpadded size-1 dimensions; merge a dimension into the
    // unpadded one after it (innermost first).
    std::vector<int64_t> ind, outd, before;
    for (size_t d = in.size(); d-- > 0;) {
      const int64_t b = pad[2 * d], e = pad[2 * d + 1];
      if (in[d] == 1 && b == 0 && e == 0) continue;
      if (!ind.empty() && ind.back() == outd.back()) {
        // The dimension inside (already collected) is unpadded: merge.
        const int64_t inner = ind.back();
        ind.back() = in[d] * inner;
        outd.back() = out[d] * inner;
        before.back() = b * inner;
        continue;
      }
      ind.push_back(in[d]);
      outd.push_back(out[d]);
      before.push_back(b);
    }
    const int rank = static_cast<int>(ind.size());
    if (rank == 0) {
      // Nothing padded (rank 0, or only size-1 dimensions).
      PX_GPU_THROW_IF_FAILED(px_gpu::MemcpyAsync(dst, src, static_cast<size_t>(n) * es,
                                              px_gpu::kDeviceToDevice, stream.get()),
                              "cudaMemcpyAsync");
      CheckLaunch(stream, op);  // waits in synchronous debug mode
      return;
    }
    if (rank > arr::kMaxRank) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s of %s needs %d dimensions after merging, more than "
                                         "the %d the CUDA kernel handles",
                                         op, sdk::ShapeString(in).c_str(), rank, arr::kMaxRank));
    }
    arr::PadPlan plan;
    plan.rank = rank;
    plan.n = n;
    int64_t stride = 1;
    for (int k = 0; k < rank; ++k) {  // collected innermost first
      const int d = rank - 1 - k;
      plan.in_dims[d] = ind[k];
      plan.out_dims[d] = outd[k];
      plan.before[d] = before[k];
      plan.in_strides[d] = stride;
      stride *= ind[k];
    }
    arr::LaunchPad(es, src, dst, value_dev, value_bits, plan, stream.get());
    CheckLaunch(stream, op);
  }
};

}  // namespace

PX_Status* RegisterArrayKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  // perm, paddings and GatherV2's axis stay in host memory; ConcatV2's axis
  // (its last input, whose index depends on N) is read where it lies.
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<TransposeKernel>(info, registrar, sdk::sig::kTranspose, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ConcatKernel>(info, registrar, sdk::sig::kConcatV2, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ConcatKernel>(info, registrar, sdk::sig::kConcat, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<CastKernel>(info, registrar, sdk::sig::kCast, {all, all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGather, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGatherV2, {all, index, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kPad, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kPadV2, {all, index}));
  return nullptr;
}

}  // namespace plexus::cuda
