// The XPU plugin's data-movement and creation kernels (kernels/movement.cl).
// Elements move as opaque 1-, 2-, 4- or 8-byte words, so every dtype the
// CUDA plugin registers for these ops is registered here too; shapes and
// argument checks come from the SDK's array_shapes, and the host-memory
// arguments are the CUDA (and cpu) plugin's.
//
// - One strided-copy kernel (px_strided_copy_*) does Transpose, Slice,
//   StridedSlice (negative strides), Tile, BroadcastTo (stride 0), ConcatV2 /
//   Concat (one launch per input into its window of the output), Split,
//   SplitV, Pack, Unpack, and the copy of Pad / PadV2 (after a fill).
//   Dimensions of 1 are dropped and neighbours contiguous on both sides
//   merged; a contiguous copy is one CopyAsync.
// - Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size and Rank need no
//   kernel: the core runs them as views and shape values.
// - Fill, ZerosLike, OnesLike, Range, OneHot, MirrorPad, SpaceToBatchND,
//   BatchToSpaceND, Gather / GatherV2 and GatherNd (indices checked on the
//   device first; an index out of range is INVALID_ARGUMENT naming it, which
//   costs one synchronization per call).
//
// Range does not take double (not every Intel GPU has fp64).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "abi.h"
#include "kernels/families.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "xpu_stream.h"

namespace plexus::xpu {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

constexpr int kMaxRank = PX_XPU_MAX_DIMS;

// The plans are abi.h's, shared with movement.cl and passed by value: all
// 64-bit fields, so no padding on either side.
static_assert(sizeof(px_xpu_copy_plan) == 3 * kMaxRank * sizeof(px_i64),
              "px_xpu_copy_plan: movement.cl's layout");
static_assert(sizeof(px_xpu_gather_nd_plan) == 2 * kMaxRank * sizeof(px_i64),
              "px_xpu_gather_nd_plan: movement.cl's layout");
static_assert(sizeof(px_xpu_mirror_plan) == 4 * kMaxRank * sizeof(px_i64),
              "px_xpu_mirror_plan: movement.cl's layout");
static_assert(sizeof(px_xpu_space_batch_plan) == 4 * kMaxRank * sizeof(px_i64),
              "px_xpu_space_batch_plan: movement.cl's layout");

void Check(const std::string& error) {
  if (!error.empty()) throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, error);
}

void CheckContiguous(const sdk::Call& call, size_t i, const char* op) {
  PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
}

void CheckVector(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 1, "%s must be a vector, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

void CheckScalar(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 0, "%s must be a scalar, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

int64_t ScalarInt(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_size(i) == 1, "%s must be a scalar, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
  return call.input_int_values(i)[0];
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end && d < s.size(); ++d) p *= s[d];
  return p;
}

Index RowMajorStrides(const Shape& s) {
  Index strides(s.size());
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= s[d];
  }
  return strides;
}

int64_t Canonical(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// The kernel-name suffix of an element size.
const char* WordSuffix(size_t es) {
  switch (es) {
    case 1: return "u8";
    case 2: return "u16";
    case 4: return "u32";
    case 8: return "u64";
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("no XPU data-movement kernel for %zu-byte elements", es));
  }
}

std::string KernelName(const char* base, size_t es, const char* extra = nullptr) {
  std::string name = std::string(base) + "_" + WordSuffix(es);
  if (extra != nullptr) name += std::string("_") + extra;
  return name;
}

void Launch1D(XpuStream& stream, const std::string& kernel, int64_t n,
              std::initializer_list<KernelArg> args) {
  const size_t global = static_cast<size_t>(n);
  Launch(stream, kernel.c_str(), 1, &global, nullptr, args);
}

[[noreturn]] void TooManyDims(const char* op, const Shape& shape, int rank) {
  throw sdk::KernelError(
      PX_CODE_UNIMPLEMENTED,
      sdk::Format("%s of %s needs %d dimensions after merging, more than the %d the XPU "
                  "kernel handles",
                  op, sdk::ShapeString(shape).c_str(), rank, kMaxRank));
}

// Copies a block of `shape` elements of es bytes: the element at coordinate
// c moves from src[src_base + sum(c * src_strides)] to dst[dst_base +
// sum(c * dst_strides)] (elements; source strides may be negative or 0).
void StridedCopy(XpuStream& stream, const char* op, size_t es, const Shape& shape,
                 const Index& src_strides, const void* src, int64_t src_base,
                 const Index& dst_strides, void* dst, int64_t dst_base) {
  Shape dims;
  Index ss, ds;
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    n *= shape[i];
    if (shape[i] == 1) continue;
    if (!dims.empty() && ss.back() == src_strides[i] * shape[i] &&
        ds.back() == dst_strides[i] * shape[i]) {
      dims.back() *= shape[i];
      ss.back() = src_strides[i];
      ds.back() = dst_strides[i];
      continue;
    }
    dims.push_back(shape[i]);
    ss.push_back(src_strides[i]);
    ds.push_back(dst_strides[i]);
  }
  if (n == 0) return;
  const int rank = static_cast<int>(dims.size());
  if (rank == 0 || (rank == 1 && ss[0] == 1 && ds[0] == 1)) {
    CopyAsync(stream, static_cast<char*>(dst) + dst_base * static_cast<int64_t>(es),
              static_cast<const char*>(src) + src_base * static_cast<int64_t>(es),
              static_cast<size_t>(n) * es);
    return;
  }
  if (rank > kMaxRank) TooManyDims(op, shape, rank);
  px_xpu_copy_plan plan{};
  for (int d = 0; d < rank; ++d) {
    plan.dims[d] = dims[d];
    plan.src[d] = ss[d];
    plan.dst[d] = ds[d];
  }
  for (int d = rank; d < kMaxRank; ++d) plan.dims[d] = 1;
  const int32_t r = rank;
  Launch1D(stream, KernelName("px_strided_copy", es), n,
           {Arg(src), Arg(dst), Arg(n), Arg(r), Arg(plan), Arg(src_base), Arg(dst_base)});
}

// Copies the dense block `shape` from src (strides src_strides from
// src_base) into a dense output.
void GatherCopy(XpuStream& stream, const char* op, size_t es, const Shape& shape,
                const Index& src_strides, const void* src, int64_t src_base, void* dst) {
  StridedCopy(stream, op, es, shape, src_strides, src, src_base, RowMajorStrides(shape), dst, 0);
}

// Whether a tensor's data can be read on the host.
bool OnHost(const DLTensor& t) { return t.device.device_type == kDLCPU; }

// ---------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike
// ---------------------------------------------------------------------------

// Fills n elements of es bytes with the bit pattern `bits`.
void FillBits(XpuStream& stream, void* dst, size_t es, uint64_t bits, int64_t n) {
  if (n == 0) return;
  const std::string kernel = KernelName("px_fill_bits", es);
  switch (es) {
    case 1: Launch1D(stream, kernel, n, {Arg(dst), Arg(n), Arg(static_cast<uint8_t>(bits))}); break;
    case 2: Launch1D(stream, kernel, n, {Arg(dst), Arg(n), Arg(static_cast<uint16_t>(bits))}); break;
    case 4: Launch1D(stream, kernel, n, {Arg(dst), Arg(n), Arg(static_cast<uint32_t>(bits))}); break;
    default: Launch1D(stream, kernel, n, {Arg(dst), Arg(n), Arg(bits)}); break;
  }
}

class FillKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 0, "dims");
    CheckScalar(call, 1, "value");
    Shape out;
    Check(array_shapes::Fill(call.input_int_values(0), &out));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const size_t es = sdk::DtypeSize(call.input_dtype(1));
    XpuStream& stream = StreamOf(call);
    if (OnHost(call.input(1))) {
      uint64_t bits = 0;
      std::memcpy(&bits, call.input_data(1), es);
      FillBits(stream, dst, es, bits, n);
      return;
    }
    Launch1D(stream, KernelName("px_fill", es), n, {Arg(dst), Arg(n), Arg(call.input_data(1))});
  }
};

class ZerosLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    void* dst = call.AllocateOutputRaw(0, call.input_shape(0));
    const size_t bytes =
        static_cast<size_t>(call.input_size(0)) * sdk::DtypeSize(call.input_dtype(0));
    if (bytes == 0) return;
    FillAsync(StreamOf(call), dst, 0, bytes);
  }
};

class OnesLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    uint64_t bits = 0;
    size_t es = 0;
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T one = T(1);
      std::memcpy(&bits, &one, sizeof(T));
      es = sizeof(T);
    });
    void* dst = call.AllocateOutputRaw(0, call.input_shape(0));
    const int64_t n = call.input_size(0);
    if (n == 0) return;
    FillBits(StreamOf(call), dst, es, bits, n);
  }
};

// ---------------------------------------------------------------------------
// Range (start, limit and delta in host memory)
// ---------------------------------------------------------------------------

class RangeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    for (size_t i = 0; i < 3; ++i) {
      PX_SDK_CHECK(call.input_size(i) == 1, "%s must be a scalar, got shape %s",
                   i == 0 ? "start" : i == 1 ? "limit" : "delta",
                   sdk::ShapeString(call.input_shape(i)).c_str());
    }
    const PX_DataType dtype = call.input_dtype(0);
    const char* suffix = nullptr;
    switch (dtype) {
      case PX_DT_FLOAT: suffix = "f32"; break;
      case PX_DT_HALF: suffix = "f16"; break;
      case PX_DT_BFLOAT16: suffix = "bf16"; break;
      case PX_DT_INT8: suffix = "i8"; break;
      case PX_DT_INT16: suffix = "i16"; break;
      case PX_DT_INT32: suffix = "i32"; break;
      case PX_DT_INT64: suffix = "i64"; break;
      case PX_DT_UINT16: suffix = "u16"; break;
      case PX_DT_UINT32: suffix = "u32"; break;
      default:
        throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                               sdk::Format("Range on XPU does not support dtype %s",
                                           sdk::DtypeName(dtype)));
    }
    float fstart = 0, fdelta = 0;
    int64_t istart = 0, idelta = 0, size = 0;
    bool is_float = false;
    // The cpu plugin's arithmetic type: int64 for integers, float otherwise.
    sdk::VisitNumeric(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
      const C start = static_cast<C>(call.input<T>(0)[0]);
      const C limit = static_cast<C>(call.input<T>(1)[0]);
      const C delta = static_cast<C>(call.input<T>(2)[0]);
      Check(array_shapes::RangeSize<C>(start, limit, delta, &size));
      if constexpr (std::is_integral_v<C>) {
        istart = start;
        idelta = delta;
      } else {
        is_float = true;
        fstart = start;
        fdelta = delta;
      }
    });
    void* dst = call.AllocateOutputRaw(0, {size});
    if (size == 0) return;
    XpuStream& stream = StreamOf(call);
    const std::string kernel = std::string("px_range_") + suffix;
    if (is_float) {
      Launch1D(stream, kernel, size, {Arg(dst), Arg(size), Arg(fstart), Arg(fdelta)});
    } else {
      Launch1D(stream, kernel, size, {Arg(dst), Arg(size), Arg(istart), Arg(idelta)});
    }
  }
};

// ---------------------------------------------------------------------------
// OneHot (depth in host memory; indices, on_value and off_value on the device)
// ---------------------------------------------------------------------------

class OneHotKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_ = attrs.Int("axis", -1); }
  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "OneHot");
    const Shape indices = call.input_shape(0);
    const int64_t depth = ScalarInt(call, 1, "depth");
    PX_SDK_CHECK(call.input_rank(2) == 0, "on_value must be a scalar");
    PX_SDK_CHECK(call.input_rank(3) == 0, "off_value must be a scalar");
    Shape out;
    int64_t a = 0;
    Check(array_shapes::OneHot(indices, depth, axis_, &out, &a));
    const char* itype = nullptr;
    switch (call.input_dtype(0)) {
      case PX_DT_UINT8: itype = "u8"; break;
      case PX_DT_INT8: itype = "i8"; break;
      case PX_DT_INT32: itype = "i32"; break;
      case PX_DT_INT64: itype = "i64"; break;
      default:
        PX_SDK_CHECK(false, "OneHot: indices must be uint8, int8, int32 or int64, got %s",
                     sdk::DtypeName(call.input_dtype(0)));
    }
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const int64_t suffix = Product(indices, static_cast<size_t>(a), indices.size());
    Launch1D(StreamOf(call), KernelName("px_one_hot", sdk::DtypeSize(call.input_dtype(2)), itype),
             n,
             {Arg(call.input_data(0)), Arg(call.input_data(2)), Arg(call.input_data(3)), Arg(dst),
              Arg(depth), Arg(suffix), Arg(n)});
  }

 private:
  int64_t axis_ = -1;
};

// ---------------------------------------------------------------------------
// Transpose, Slice, StridedSlice
// ---------------------------------------------------------------------------

class TransposeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "Transpose");
    CheckVector(call, 1, "perm");
    const Shape in = call.input_shape(0);
    const std::vector<int64_t> perm = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Transpose(in, perm, &out));
    void* dst = call.AllocateOutputRaw(0, out);
    if (sdk::NumElements(in) == 0) return;
    const Index in_strides = RowMajorStrides(in);
    Index src_strides(out.size());
    for (size_t j = 0; j < out.size(); ++j) src_strides[j] = in_strides[perm[j]];
    GatherCopy(StreamOf(call), "Transpose", sdk::DtypeSize(call.input_dtype(0)), out, src_strides,
               call.input_data(0), 0, dst);
  }
};

// Copies the slice out of input 0 into the output of shape final_shape:
// output dimension d (out_dims[d]) steps src_strides[d] elements from `base`.
void CopySlice(sdk::Call& call, const char* op, const Shape& final_shape, const Shape& out_dims,
               const Index& src_strides, int64_t base) {
  CheckContiguous(call, 0, op);
  void* dst = call.AllocateOutputRaw(0, final_shape);
  if (sdk::NumElements(out_dims) == 0) return;
  GatherCopy(StreamOf(call), op, sdk::DtypeSize(call.input_dtype(0)), out_dims, src_strides,
             call.input_data(0), base, dst);
}

class SliceKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "begin");
    CheckVector(call, 2, "size");
    const Shape in = call.input_shape(0);
    const std::vector<int64_t> begin = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Slice(in, begin, call.input_int_values(2), &out));
    const Index in_strides = RowMajorStrides(in);
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
    Check(array_shapes::StridedSlice(in, &begin, &end, call.input_int_values(3), begin_mask_,
                                     end_mask_, ellipsis_mask_, new_axis_mask_, shrink_axis_mask_,
                                     &r));
    const Index in_strides = RowMajorStrides(in);
    if (r.is_identity) {
      CopySlice(call, "StridedSlice", r.final_shape, {call.input_size(0)}, {1}, 0);
      return;
    }
    Index src_strides(in.size());
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

// ---------------------------------------------------------------------------
// Tile, BroadcastTo
// ---------------------------------------------------------------------------

// out (dims out_dims) at coordinate c = input 0 (dims in_dims) at
// c[d] % in_dims[d]: each tiled dimension becomes two, [multiple, in] with
// source strides [0, stride] (a dimension of 1 broadcast: stride 0).
void TileCopy(sdk::Call& call, const char* op, const Shape& in_dims, const Shape& out_dims,
              const Shape& out_shape) {
  CheckContiguous(call, 0, op);
  void* dst = call.AllocateOutputRaw(0, out_shape);
  if (sdk::NumElements(out_shape) == 0) return;
  const Index in_strides = RowMajorStrides(in_dims), out_strides = RowMajorStrides(out_dims);
  Shape dims;
  Index ss, ds;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const int64_t mult = out_dims[d] / in_dims[d];
    if (mult != 1) {
      dims.push_back(mult);
      ss.push_back(0);
      ds.push_back(in_dims[d] * out_strides[d]);
    }
    dims.push_back(in_dims[d]);
    ss.push_back(in_strides[d]);
    ds.push_back(out_strides[d]);
  }
  StridedCopy(StreamOf(call), op, sdk::DtypeSize(call.input_dtype(0)), dims, ss,
              call.input_data(0), 0, ds, dst, 0);
}

class TileKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "multiples");
    const Shape in = call.input_shape(0);
    Shape out;
    Check(array_shapes::Tile(in, call.input_int_values(1), &out));
    TileCopy(call, "Tile", in, out, out);
  }
};

class BroadcastToKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "shape");
    const Shape in = call.input_shape(0);
    Shape out;
    Check(array_shapes::BroadcastTo(in, call.input_int_values(1), &out));
    Shape in_full(out.size() - in.size(), 1);
    in_full.insert(in_full.end(), in.begin(), in.end());
    TileCopy(call, "BroadcastTo", in_full, out, out);
  }
};

// ---------------------------------------------------------------------------
// ConcatV2, Concat, Split, SplitV, Pack, Unpack
// ---------------------------------------------------------------------------

// The integer values of input i, which may lie in device memory (ConcatV2's
// axis: its index depends on N, so it cannot be registered as host memory;
// a device value costs one synchronization).
Index IntValuesAnywhere(sdk::Call& call, size_t i, XpuStream& stream, const char* op) {
  const DLTensor& t = call.input(i);
  if (OnHost(t)) return call.input_int_values(i);
  const int64_t n = px_sdk_num_elements(&t);
  const bool is64 = t.dtype.code == kDLInt && t.dtype.bits == 64;
  PX_SDK_CHECK(is64 || (t.dtype.code == kDLInt && t.dtype.bits == 32),
               "%s: input %zu must be int32 or int64", op, i);
  Index values(static_cast<size_t>(n));
  if (n == 0) return values;
  std::vector<int32_t> v32(is64 ? 0 : static_cast<size_t>(n));
  CopyAsync(stream, is64 ? static_cast<void*>(values.data()) : static_cast<void*>(v32.data()),
            px_sdk_data(&t), static_cast<size_t>(n) * (is64 ? 8 : 4));
  Synchronize(stream);
  for (int64_t k = 0; !is64 && k < n; ++k) values[k] = v32[k];
  return values;
}

class ConcatKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_first_ = std::string(attrs.op()) == "Concat"; }

  void Compute(sdk::Call& call) override {
    const char* op = axis_first_ ? "Concat" : "ConcatV2";
    const size_t n = call.num_inputs() - 1;
    const size_t first = axis_first_ ? 1 : 0;
    const size_t axis_input = axis_first_ ? 0 : n;
    CheckScalar(call, axis_input, "axis");
    XpuStream& stream = StreamOf(call);
    const int64_t axis = IntValuesAnywhere(call, axis_input, stream, op)[0];
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) {
      CheckContiguous(call, first + k, op);
      shapes.push_back(call.input_shape(first + k));
    }
    Shape out;
    Check(array_shapes::Concat(shapes, axis, &out));
    const size_t a = static_cast<size_t>(Canonical(axis, out.size()));
    const size_t es = sdk::DtypeSize(call.input_dtype(first));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t outer = Product(out, 0, a);
    const int64_t row = Product(out, a, out.size());
    if (outer == 0 || row == 0) return;
    // Each input's [outer, chunk] block into the output's columns
    // [offset, offset + chunk).
    int64_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      const int64_t chunk = Product(shapes[k], a, shapes[k].size());
      if (chunk == 0) continue;
      StridedCopy(stream, op, es, {outer, chunk}, {chunk, 1}, call.input_data(first + k), 0,
                  {row, 1}, dst, offset);
      offset += chunk;
    }
  }

 private:
  bool axis_first_ = false;
};

// Integer values of host-memory input i (int8, int32 or int64).
Index HostIntegerValues(const sdk::Call& call, size_t i) {
  if (call.input_dtype(i) == PX_DT_INT8) {
    const int8_t* p = static_cast<const int8_t*>(call.input_data(i));
    return Index(p, p + call.input_size(i));
  }
  return call.input_int_values(i);
}

// Splits input `value_input` along axis a into outputs of the given shapes.
void SplitInto(sdk::Call& call, const char* op, size_t value_input, size_t a,
               const std::vector<Shape>& outs) {
  CheckContiguous(call, value_input, op);
  const Shape in = call.input_shape(value_input);
  const size_t es = sdk::DtypeSize(call.input_dtype(value_input));
  const int64_t outer = Product(in, 0, a);
  const int64_t in_row = Product(in, a, in.size());
  int64_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    void* dst = call.AllocateOutputRaw(k, outs[k]);
    const int64_t chunk = Product(outs[k], a, outs[k].size());
    if (chunk > 0 && outer > 0) {
      StridedCopy(StreamOf(call), op, es, {outer, chunk}, {in_row, 1},
                  call.input_data(value_input), offset, {chunk, 1}, dst, 0);
    }
    offset += chunk;
  }
}

class SplitKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    num_split_ = attrs.Int("num_split");
    sizes_ = std::string(attrs.op()) == "SplitV";
  }
  void Compute(sdk::Call& call) override {
    const char* op = sizes_ ? "SplitV" : "Split";
    const size_t value_input = sizes_ ? 0 : 1;
    const int64_t axis = ScalarInt(call, sizes_ ? 2 : 0, "split_dim");
    const Shape in = call.input_shape(value_input);
    std::vector<Shape> outs;
    if (sizes_) {
      CheckVector(call, 1, "size_splits");
      Check(array_shapes::SplitV(in, HostIntegerValues(call, 1), axis, num_split_, &outs));
    } else {
      Shape each;
      Check(array_shapes::Split(in, axis, num_split_, &each));
      outs.assign(static_cast<size_t>(num_split_), each);
    }
    SplitInto(call, op, value_input, static_cast<size_t>(Canonical(axis, in.size())), outs);
  }

 private:
  bool sizes_ = false;
  int64_t num_split_ = 1;
};

class UnpackKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    axis_ = attrs.Int("axis", 0);
    num_ = attrs.Int("num");
  }
  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "Unpack");
    const Shape in = call.input_shape(0);
    Shape each;
    Check(array_shapes::Unpack(in, axis_, num_, &each));
    const size_t a = static_cast<size_t>(Canonical(axis_, in.size()));
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const int64_t outer = Product(in, 0, a);
    const int64_t inner = Product(in, a + 1, in.size());
    for (int64_t k = 0; k < num_; ++k) {
      void* dst = call.AllocateOutputRaw(static_cast<size_t>(k), each);
      if (outer == 0 || inner == 0) continue;
      StridedCopy(StreamOf(call), "Unpack", es, {outer, inner}, {num_ * inner, 1},
                  call.input_data(0), k * inner, {inner, 1}, dst, 0);
    }
  }

 private:
  int64_t axis_ = 0, num_ = 0;
};

class PackKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_ = attrs.Int("axis", 0); }
  void Compute(sdk::Call& call) override {
    const size_t n = call.num_inputs();
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) {
      CheckContiguous(call, k, "Pack");
      shapes.push_back(call.input_shape(k));
    }
    Shape out;
    Check(array_shapes::Pack(shapes, axis_, &out));
    const size_t a = static_cast<size_t>(Canonical(axis_, out.size()));
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t outer = Product(shapes[0], 0, a);
    const int64_t inner = Product(shapes[0], a, shapes[0].size());
    if (outer == 0 || inner == 0) return;
    const int64_t count = static_cast<int64_t>(n);
    XpuStream& stream = StreamOf(call);
    for (size_t k = 0; k < n; ++k) {
      StridedCopy(stream, "Pack", es, {outer, inner}, {inner, 1}, call.input_data(k), 0,
                  {count * inner, 1}, dst, static_cast<int64_t>(k) * inner);
    }
  }

 private:
  int64_t axis_ = 0;
};

// ---------------------------------------------------------------------------
// Pad, PadV2 (constant), MirrorPad
// ---------------------------------------------------------------------------

class PadKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const char* op = call.num_inputs() > 2 ? "PadV2" : "Pad";
    CheckContiguous(call, 0, op);
    const Shape in = call.input_shape(0);
    const Index pad = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Pad(in, call.input_shape(1), pad, 0, &out));
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    uint64_t value_bits = 0;
    if (call.num_inputs() > 2) {
      CheckScalar(call, 2, "constant_values");
      std::memcpy(&value_bits, call.input_data(2), es);  // a host-memory input
    }
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    XpuStream& stream = StreamOf(call);
    // The padding value everywhere, then the input into its window.
    if (value_bits == 0) {
      FillAsync(stream, dst, 0, static_cast<size_t>(n) * es);
    } else {
      FillBits(stream, dst, es, value_bits, n);
    }
    const Index out_strides = RowMajorStrides(out);
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) base += pad[2 * d] * out_strides[d];
    StridedCopy(stream, op, es, in, RowMajorStrides(in), call.input_data(0), 0, out_strides, dst,
                base);
  }
};

class MirrorPadKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string mode = attrs.String("mode");
    PX_SDK_CHECK(mode == "REFLECT" || mode == "SYMMETRIC",
                 "mode must be REFLECT or SYMMETRIC, got '%s'", mode.c_str());
    symmetric_ = mode == "SYMMETRIC";
  }

  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "MirrorPad");
    const Shape in = call.input_shape(0);
    const Index pad = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Pad(in, call.input_shape(1), pad, symmetric_ ? 2 : 1, &out));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const int rank = static_cast<int>(in.size());
    if (rank > kMaxRank) TooManyDims("MirrorPad", in, rank);
    const Index in_strides = RowMajorStrides(in);
    px_xpu_mirror_plan plan{};
    for (int d = 0; d < rank; ++d) {
      plan.in_dims[d] = in[d];
      plan.out_dims[d] = out[d];
      plan.before[d] = pad[2 * d];
      plan.in_strides[d] = in_strides[d];
    }
    const int32_t r = rank, symmetric = symmetric_ ? 1 : 0;
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    Launch1D(StreamOf(call), KernelName("px_mirror_pad", es), n,
             {Arg(call.input_data(0)), Arg(dst), Arg(n), Arg(r), Arg(plan), Arg(symmetric)});
  }

 private:
  bool symmetric_ = false;
};

// ---------------------------------------------------------------------------
// Gather, GatherV2, GatherNd
// ---------------------------------------------------------------------------

constexpr int32_t kNoBadIndex = 0x7fffffff;

// Runs an index check kernel (it lowers *bad to the first bad position) and
// returns that position, or -1 when every index is in range.
int64_t FirstBadIndex(XpuStream& stream, const std::string& kernel, int64_t count,
                      std::initializer_list<KernelArg> args_before_bad) {
  ScratchBuffer bad(stream, sizeof(int32_t), "the index check");
  int32_t init = kNoBadIndex;
  CopyAsync(stream, bad.get(), &init, sizeof(init));
  std::vector<KernelArg> args(args_before_bad);
  void* bad_ptr = bad.get();
  args.push_back(Arg(bad_ptr));
  const size_t global = static_cast<size_t>(count);
  // Launch takes an initializer_list: spell the argument lists out.
  if (args.size() == 4) {
    Launch(stream, kernel.c_str(), 1, &global, nullptr, {args[0], args[1], args[2], args[3]});
  } else {
    Launch(stream, kernel.c_str(), 1, &global, nullptr,
           {args[0], args[1], args[2], args[3], args[4]});
  }
  int32_t first = kNoBadIndex;
  CopyAsync(stream, &first, bad.get(), sizeof(first));
  Synchronize(stream);
  return first == kNoBadIndex ? -1 : first;
}

// Reads `count` indices (int32 or int64) at position `at` of device memory.
Index ReadIndices(XpuStream& stream, const void* idx, bool idx64, int64_t at, int64_t count) {
  const size_t isize = idx64 ? 8 : 4;
  std::vector<int64_t> v64(idx64 ? count : 0);
  std::vector<int32_t> v32(idx64 ? 0 : count);
  CopyAsync(stream, idx64 ? static_cast<void*>(v64.data()) : static_cast<void*>(v32.data()),
            static_cast<const char*>(idx) + at * static_cast<int64_t>(isize),
            static_cast<size_t>(count) * isize);
  Synchronize(stream);
  return idx64 ? v64 : Index(v32.begin(), v32.end());
}

std::string IndexString(int64_t k, const Shape& shape) {
  Index coord(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      coord[d] = k % shape[d];
      k /= shape[d];
    }
  }
  std::string s;
  for (size_t d = 0; d < coord.size(); ++d) s += (d ? "," : "") + std::to_string(coord[d]);
  return s;
}

class GatherKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { batch_dims_ = attrs.Int("batch_dims", 0); }

  void Compute(sdk::Call& call) override {
    const char* op = call.num_inputs() > 2 ? "GatherV2" : "Gather";
    CheckContiguous(call, 0, op);
    CheckContiguous(call, 1, op);
    int64_t axis = 0;
    if (call.num_inputs() > 2) {
      CheckScalar(call, 2, "axis");
      axis = call.input_int_values(2)[0];
    }
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    int64_t a = 0, b = 0;
    Check(array_shapes::Gather(params, indices, axis, batch_dims_, &out, &a, &b));
    const int64_t outer = Product(params, static_cast<size_t>(b), static_cast<size_t>(a));
    const int64_t limit = params[a];
    const int64_t inner = Product(params, static_cast<size_t>(a) + 1, params.size());
    const int64_t n = Product(indices, static_cast<size_t>(b), indices.size());
    const int64_t num_indices = sdk::NumElements(indices);
    const PX_DataType itype = call.input_dtype(1);
    PX_SDK_CHECK(itype == PX_DT_INT32 || itype == PX_DT_INT64,
                 "%s: indices must be int32 or int64, got %s", op, sdk::DtypeName(itype));
    const bool idx64 = itype == PX_DT_INT64;
    const char* isuffix = idx64 ? "i64" : "i32";
    const void* idx = call.input_data(1);
    void* dst = call.AllocateOutputRaw(0, out);
    if (num_indices == 0) return;
    XpuStream& stream = StreamOf(call);
    const int64_t bad = FirstBadIndex(stream, std::string("px_index_check_") + isuffix,
                                      num_indices, {Arg(idx), Arg(num_indices), Arg(limit)});
    if (bad >= 0) {
      const int64_t value = ReadIndices(stream, idx, idx64, bad, 1)[0];
      PX_SDK_CHECK(false, "indices[%s] = %lld is not in [0, %lld)",
                   IndexString(bad, indices).c_str(), static_cast<long long>(value),
                   static_cast<long long>(limit));
    }
    const int64_t total = sdk::NumElements(out);
    if (total == 0) return;
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    Launch1D(stream, KernelName("px_gather", es, isuffix), total,
             {Arg(call.input_data(0)), Arg(idx), Arg(dst), Arg(outer), Arg(limit), Arg(inner),
              Arg(n), Arg(total)});
  }

 private:
  int64_t batch_dims_ = 0;
};

class GatherNdKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckContiguous(call, 0, "GatherNd");
    CheckContiguous(call, 1, "GatherNd");
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    Check(array_shapes::GatherNd(params, indices, &out));
    const PX_DataType itype = call.input_dtype(1);
    PX_SDK_CHECK(itype == PX_DT_INT32 || itype == PX_DT_INT64,
                 "GatherNd: indices must be int32 or int64, got %s", sdk::DtypeName(itype));
    const bool idx64 = itype == PX_DT_INT64;
    const char* isuffix = idx64 ? "i64" : "i32";
    const int64_t depth = indices.back();
    if (depth > kMaxRank) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("GatherNd with index tuples of %lld values, more than the %d the XPU "
                      "kernel handles",
                      static_cast<long long>(depth), kMaxRank));
    }
    const int64_t count = Product(indices, 0, indices.size() - 1);
    const int64_t slice = Product(params, static_cast<size_t>(depth), params.size());
    const Index p_strides = RowMajorStrides(params);
    void* dst = call.AllocateOutputRaw(0, out);
    if (count == 0) return;
    const void* idx = call.input_data(1);
    XpuStream& stream = StreamOf(call);
    px_xpu_gather_nd_plan plan{};
    for (int64_t j = 0; j < depth; ++j) {
      plan.dims[j] = params[j];
      plan.strides[j] = p_strides[j];
    }
    const int32_t d32 = static_cast<int32_t>(depth);
    if (depth > 0) {
      const int64_t bad =
          FirstBadIndex(stream, std::string("px_index_check_nd_") + isuffix, count,
                        {Arg(idx), Arg(count), Arg(d32), Arg(plan)});
      if (bad >= 0) {
        const Index tuple = ReadIndices(stream, idx, idx64, bad * depth, depth);
        std::string values;
        for (size_t d = 0; d < tuple.size(); ++d) values += (d ? "," : "") + std::to_string(tuple[d]);
        const Shape lead(indices.begin(), indices.end() - 1);
        PX_SDK_CHECK(false, "indices[%s] = [%s] does not index into param shape %s",
                     IndexString(bad, lead).c_str(), values.c_str(),
                     sdk::ShapeString(params).c_str());
      }
    }
    const int64_t total = count * slice;
    if (total == 0) return;
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    Launch1D(stream, KernelName("px_gather_nd", es, isuffix), total,
             {Arg(call.input_data(0)), Arg(idx), Arg(dst), Arg(d32), Arg(plan), Arg(slice),
              Arg(total)});
  }
};

// ---------------------------------------------------------------------------
// SpaceToBatchND, BatchToSpaceND (block_shape and paddings/crops in host
// memory)
// ---------------------------------------------------------------------------

class SpaceBatchKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    to_batch_ = std::string(attrs.op()) == "SpaceToBatchND";
  }
  void Compute(sdk::Call& call) override {
    const char* op = to_batch_ ? "SpaceToBatchND" : "BatchToSpaceND";
    CheckContiguous(call, 0, op);
    const Shape in = call.input_shape(0);
    const Index block = call.input_int_values(1), pad = call.input_int_values(2);
    Shape out;
    Check(array_shapes::SpaceBatch(to_batch_, in, call.input_shape(1), block, call.input_shape(2),
                                   pad, &out));
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const int m = static_cast<int>(block.size());
    if (m > kMaxRank) TooManyDims(op, in, m);
    const Shape& space = to_batch_ ? in : out;
    const Shape& batch = to_batch_ ? out : in;
    const int64_t rest = Product(in, 1 + static_cast<size_t>(m), in.size());
    px_xpu_space_batch_plan plan{};
    for (int d = 0; d < m; ++d) {
      plan.block[d] = block[d];
      plan.space[d] = space[1 + d];
      plan.grid[d] = batch[1 + d];
      plan.pad[d] = pad[2 * d];
    }
    const int32_t m32 = m, to_batch = to_batch_ ? 1 : 0;
    const int64_t space_batch = space[0];
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    Launch1D(StreamOf(call), KernelName("px_space_batch", es), n,
             {Arg(call.input_data(0)), Arg(dst), Arg(n), Arg(m32), Arg(plan), Arg(space_batch),
              Arg(rest), Arg(to_batch)});
  }

 private:
  bool to_batch_ = true;
};

}  // namespace

PX_Status* RegisterXpuMovementKernels(sdk::RegistrationInfo* info,
                                      PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  const std::vector<PX_DataType> range_types = {PX_DT_FLOAT, PX_DT_HALF,   PX_DT_BFLOAT16,
                                                PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32,
                                                PX_DT_INT64, PX_DT_UINT16, PX_DT_UINT32};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<FillKernel>(info, registrar, sdk::sig::kFill, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ZerosLikeKernel>(info, registrar, sdk::sig::kZerosLike, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<OnesLikeKernel>(info, registrar, sdk::sig::kOnesLike, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<RangeKernel>(info, registrar, sdk::sig::kRange, {range_types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<OneHotKernel>(
      info, registrar, sdk::sig::kOneHot,
      {all, {PX_DT_UINT8, PX_DT_INT8, PX_DT_INT32, PX_DT_INT64}}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<TransposeKernel>(info, registrar, sdk::sig::kTranspose, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<SliceKernel>(info, registrar, sdk::sig::kSlice, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<StridedSliceKernel>(
      info, registrar, sdk::sig::kStridedSlice, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<TileKernel>(info, registrar, sdk::sig::kTile, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BroadcastToKernel>(
      info, registrar, sdk::sig::kBroadcastTo, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ConcatKernel>(info, registrar, sdk::sig::kConcatV2, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ConcatKernel>(info, registrar, sdk::sig::kConcat, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<SplitKernel>(info, registrar, sdk::sig::kSplit, {all}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SplitKernel>(
      info, registrar, sdk::sig::kSplitV, {all, {PX_DT_INT8, PX_DT_INT32, PX_DT_INT64}}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<UnpackKernel>(info, registrar, sdk::sig::kUnpack, {all}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PackKernel>(info, registrar, sdk::sig::kPack, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kPad, {all, index}));
  // PadV2's constant_values (input 2) in host memory too, beyond the op's
  // contract: PadKernel reads the fill value on the host and fills with it
  // as a bit pattern (FillBits), so no kernel reads it from the device.
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PadKernel>(
      info, registrar, sdk::sig::kPadV2.WithHostInputs({1, 2}), {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MirrorPadKernel>(info, registrar, sdk::sig::kMirrorPad, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGather, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGatherV2, {all, index, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherNdKernel>(info, registrar, sdk::sig::kGatherNd, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SpaceBatchKernel>(
      info, registrar, sdk::sig::kSpaceToBatchND, {all, index, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SpaceBatchKernel>(
      info, registrar, sdk::sig::kBatchToSpaceND, {all, index, index}));
  return nullptr;
}

}  // namespace plexus::xpu
