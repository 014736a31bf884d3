// The CUDA plugin's remaining data-movement and creation kernels:
//
// (Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size and Rank need no kernel:
// the core runs them as views and shape values, core/src/exec/views.h.)
// - creation: Fill, ZerosLike, OnesLike, Range, OneHot;
// - Tile, BroadcastTo, MirrorPad, Split, SplitV, Unpack, Pack, GatherNd,
//   SpaceToBatchND, BatchToSpaceND.
//
// Shapes and argument checks come from the SDK's array_shapes (shared with
// the cpu plugin); small integer arguments are host-memory inputs, as on the
// cpu plugin. The classes here collapse dimensions and build plans; the device
// code is in movement.cu and creation.cu. Elements move as opaque words, so
// every dtype the cpu plugin registers is registered here too.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/movement_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

constexpr int64_t kInt32Limit = int64_t{1} << 31;

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

std::string IndexString(const Index& index) {
  std::string s;
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(index[i]);
  }
  return s;
}

// The multi-index of flat position k in `shape`.
Index Unravel(int64_t k, const Shape& shape) {
  Index index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = k % shape[d];
      k /= shape[d];
    }
  }
  return index;
}

bool Aligned(const void* p, size_t w) { return reinterpret_cast<uintptr_t>(p) % w == 0; }

// The widest word (16, 8, 4, 2 bytes, or es) that divides `bytes` and every
// value of `multiples_bytes`, and to which every pointer is aligned.
size_t WordFor(size_t es, int64_t bytes, std::initializer_list<int64_t> multiples_bytes,
               std::initializer_list<const void*> pointers) {
  for (size_t w = 16; w > es; w /= 2) {
    bool ok = bytes % static_cast<int64_t>(w) == 0;
    for (int64_t m : multiples_bytes) ok = ok && m % static_cast<int64_t>(w) == 0;
    for (const void* p : pointers) ok = ok && Aligned(p, w);
    if (ok) return w;
  }
  return es;
}

[[noreturn]] void TooManyDims(const char* op, const Shape& shape, int rank) {
  throw sdk::KernelError(
      PX_CODE_UNIMPLEMENTED,
      sdk::Format("%s of %s needs %d dimensions after merging, more than the %d the CUDA "
                  "kernel handles",
                  op, sdk::ShapeString(shape).c_str(), rank, mov::kMaxRank));
}

void CopyDevice(GpuStream& stream, void* dst, const void* src, size_t bytes, const char* op) {
  if (bytes == 0) return;
  PX_GPU_THROW_IF_FAILED(px_gpu::MemcpyAsync(dst, src, bytes, px_gpu::kDeviceToDevice, stream.get()),
                          "cudaMemcpyAsync");
  CheckLaunch(stream, op);  // waits in synchronous debug mode
}

// Copies a block of `shape` elements of es bytes: the element at coordinate
// c moves from src + sum(c * src_strides) to dst + sum(c * dst_strides)
// (strides in elements, 0 allowed on the source side). Dimensions of 1 are
// dropped and neighbours contiguous on both sides merged; a contiguous
// result is one cudaMemcpyAsync, anything else one kernel.
void StridedCopy(GpuStream& stream, const char* op, size_t es, const Shape& shape,
                 const Index& src_strides, const void* src, const Index& dst_strides, void* dst) {
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
    CopyDevice(stream, dst, src, static_cast<size_t>(n) * es, op);
    return;
  }
  if (rank > mov::kMaxRank) TooManyDims(op, shape, rank);
  // A run contiguous on both sides moves in words as wide as its bytes, the
  // other strides and the pointers allow.
  size_t word = es;
  if (ss[rank - 1] == 1 && ds[rank - 1] == 1) {
    for (size_t w = 16; w > es; w /= 2) {
      bool ok = (dims[rank - 1] * static_cast<int64_t>(es)) % static_cast<int64_t>(w) == 0 &&
                Aligned(src, w) && Aligned(dst, w);
      for (int d = 0; ok && d < rank - 1; ++d) {
        ok = (ss[d] * static_cast<int64_t>(es)) % static_cast<int64_t>(w) == 0 &&
             (ds[d] * static_cast<int64_t>(es)) % static_cast<int64_t>(w) == 0;
      }
      if (ok) {
        word = w;
        break;
      }
    }
  }
  const int64_t scale = static_cast<int64_t>(word / es);
  mov::CopyPlan plan;
  plan.rank = rank;
  plan.n = n / scale;
  int64_t src_extent = 1, dst_extent = 1;
  for (int d = 0; d < rank; ++d) {
    const bool inner = d == rank - 1;
    plan.dims[d] = inner ? dims[d] / scale : dims[d];
    plan.src_strides[d] = inner ? ss[d] : ss[d] / scale;
    plan.dst_strides[d] = inner ? ds[d] : ds[d] / scale;
    src_extent += (plan.dims[d] - 1) * plan.src_strides[d];
    dst_extent += (plan.dims[d] - 1) * plan.dst_strides[d];
  }
  const bool wide = plan.n >= kInt32Limit || src_extent >= kInt32Limit || dst_extent >= kInt32Limit;
  mov::LaunchStridedCopy(word, src, dst, plan, wide, stream.get());
  CheckLaunch(stream, op);
}

// ---------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike
// ---------------------------------------------------------------------------

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
    GpuStream& stream = StreamOf(call);
    mov::LaunchFill(sdk::DtypeSize(call.input_dtype(1)), call.input_data(1), 0, dst, n,
                    stream.get());
    CheckLaunch(stream, "Fill");
  }
};

class ZerosLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    void* dst = call.AllocateOutputRaw(0, call.input_shape(0));
    const size_t bytes =
        static_cast<size_t>(call.input_size(0)) * sdk::DtypeSize(call.input_dtype(0));
    if (bytes == 0) return;
    GpuStream& stream = StreamOf(call);
    PX_GPU_THROW_IF_FAILED(px_gpu::MemsetAsync(dst, 0, bytes, stream.get()), "cudaMemsetAsync");
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
    GpuStream& stream = StreamOf(call);
    mov::LaunchFill(es, nullptr, bits, dst, n, stream.get());
    CheckLaunch(stream, "OnesLike");
  }
};

// ---------------------------------------------------------------------------
// Range (start, limit and delta in host memory)
// ---------------------------------------------------------------------------

mov::RangeType ToRangeType(PX_DataType t) {
  switch (t) {
    case PX_DT_FLOAT: return mov::RangeType::kFloat;
    case PX_DT_DOUBLE: return mov::RangeType::kDouble;
    case PX_DT_HALF: return mov::RangeType::kHalf;
    case PX_DT_BFLOAT16: return mov::RangeType::kBFloat16;
    case PX_DT_INT8: return mov::RangeType::kInt8;
    case PX_DT_INT16: return mov::RangeType::kInt16;
    case PX_DT_INT32: return mov::RangeType::kInt32;
    case PX_DT_INT64: return mov::RangeType::kInt64;
    case PX_DT_UINT16: return mov::RangeType::kUInt16;
    case PX_DT_UINT32: return mov::RangeType::kUInt32;
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("Range on CUDA does not support dtype %s",
                                         sdk::DtypeName(t)));
  }
}

class RangeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    for (size_t i = 0; i < 3; ++i) {
      PX_SDK_CHECK(call.input_size(i) == 1, "%s must be a scalar, got shape %s",
                   i == 0 ? "start" : i == 1 ? "limit" : "delta",
                   sdk::ShapeString(call.input_shape(i)).c_str());
    }
    const PX_DataType dtype = call.input_dtype(0);
    const mov::RangeType type = ToRangeType(dtype);
    double fstart = 0, fdelta = 0;
    int64_t istart = 0, idelta = 0, size = 0;
    // The same arithmetic type C as the cpu plugin: int64 for integers,
    // double for double, float otherwise.
    sdk::VisitNumeric(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_integral_v<T>, int64_t,
                                   std::conditional_t<std::is_same_v<T, double>, double, float>>;
      const C start = static_cast<C>(call.input<T>(0)[0]);
      const C limit = static_cast<C>(call.input<T>(1)[0]);
      const C delta = static_cast<C>(call.input<T>(2)[0]);
      Check(array_shapes::RangeSize<C>(start, limit, delta, &size));
      if constexpr (std::is_integral_v<C>) {
        istart = start;
        idelta = delta;
      } else {
        fstart = static_cast<double>(start);
        fdelta = static_cast<double>(delta);
      }
    });
    void* dst = call.AllocateOutputRaw(0, {size});
    if (size == 0) return;
    GpuStream& stream = StreamOf(call);
    mov::LaunchRange(type, fstart, fdelta, istart, idelta, dst, size, stream.get());
    CheckLaunch(stream, "Range");
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
    int index_type = 0;
    switch (call.input_dtype(0)) {
      case PX_DT_UINT8: index_type = 0; break;
      case PX_DT_INT8: index_type = 1; break;
      case PX_DT_INT32: index_type = 2; break;
      case PX_DT_INT64: index_type = 3; break;
      default:
        PX_SDK_CHECK(false, "OneHot: indices must be uint8, int8, int32 or int64, got %s",
                     sdk::DtypeName(call.input_dtype(0)));
    }
    void* dst = call.AllocateOutputRaw(0, out);
    const int64_t n = sdk::NumElements(out);
    if (n == 0) return;
    const int64_t suffix = Product(indices, static_cast<size_t>(a), indices.size());
    GpuStream& stream = StreamOf(call);
    mov::LaunchOneHot(sdk::DtypeSize(call.input_dtype(2)), index_type, call.input_data(0),
                      call.input_data(2), call.input_data(3), dst, depth, suffix, n,
                      n >= kInt32Limit, stream.get());
    CheckLaunch(stream, "OneHot");
  }

 private:
  int64_t axis_ = -1;
};

// ---------------------------------------------------------------------------
// Tile, BroadcastTo
// ---------------------------------------------------------------------------

// out (dims out_dims, contiguous) at coordinate c = input 0 (dims in_dims,
// contiguous) at c[d] % in_dims[d]; each out_dims[d] is a multiple of
// in_dims[d].
void TileCopy(sdk::Call& call, const char* op, const Shape& in_dims, const Shape& out_dims,
              const Shape& out_shape) {
  CheckContiguous(call, 0, op);
  void* dst = call.AllocateOutputRaw(0, out_shape);
  const int64_t n = sdk::NumElements(out_shape);
  if (n == 0) return;
  const size_t es = sdk::DtypeSize(call.input_dtype(0));
  const void* src = call.input_data(0);
  GpuStream& stream = StreamOf(call);
  // Innermost first: drop dimensions of 1; merge a dimension into an
  // untiled one inside it.
  Index in_c, out_c;
  for (size_t d = in_dims.size(); d-- > 0;) {
    if (out_dims[d] == 1) continue;
    if (!in_c.empty() && in_c.back() == out_c.back()) {
      const int64_t inner = in_c.back();
      in_c.back() = in_dims[d] * inner;
      out_c.back() = out_dims[d] * inner;
      continue;
    }
    in_c.push_back(in_dims[d]);
    out_c.push_back(out_dims[d]);
  }
  const int rank = static_cast<int>(in_c.size());
  if (rank == 0 || (rank == 1 && in_c[0] == out_c[0])) {
    CopyDevice(stream, dst, src, static_cast<size_t>(n) * es, op);
    return;
  }
  if (rank > mov::kMaxRank) TooManyDims(op, out_shape, rank);
  // The innermost input run in words as wide as its bytes and the pointers
  // allow (tiles then start on word boundaries).
  const size_t word = WordFor(es, in_c[0] * static_cast<int64_t>(es), {}, {src, dst});
  const int64_t scale = static_cast<int64_t>(word / es);
  mov::TilePlan plan;
  plan.rank = rank;
  plan.n = n / scale;
  int64_t stride = 1;
  for (int k = 0; k < rank; ++k) {  // collected innermost first
    const int d = rank - 1 - k;
    plan.in_dims[d] = k == 0 ? in_c[k] / scale : in_c[k];
    plan.out_dims[d] = k == 0 ? out_c[k] / scale : out_c[k];
    plan.in_strides[d] = stride;
    stride *= plan.in_dims[d];
  }
  const bool wide = n >= kInt32Limit || call.input_size(0) >= kInt32Limit;
  mov::LaunchTile(word, src, dst, plan, wide, stream.get());
  CheckLaunch(stream, op);
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
    // The input with leading 1s; a zero-size output returns before the
    // input dimensions are used.
    Shape in_full(out.size() - in.size(), 1);
    in_full.insert(in_full.end(), in.begin(), in.end());
    TileCopy(call, "BroadcastTo", in_full, out, out);
  }
};

// ---------------------------------------------------------------------------
// MirrorPad
// ---------------------------------------------------------------------------

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
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const void* src = call.input_data(0);
    GpuStream& stream = StreamOf(call);
    // Innermost first: drop unpadded dimensions of 1; merge an unpadded
    // dimension into an unpadded one inside it (a reflection does not
    // commute with merging, so padded dimensions stay alone).
    Index ind, outd, before;
    for (size_t d = in.size(); d-- > 0;) {
      const int64_t b = pad[2 * d], e = pad[2 * d + 1];
      const bool unpadded = b == 0 && e == 0;
      if (in[d] == 1 && unpadded) continue;
      if (unpadded && !ind.empty() && ind.back() == outd.back()) {
        ind.back() *= in[d];
        outd.back() *= in[d];
        continue;
      }
      ind.push_back(in[d]);
      outd.push_back(out[d]);
      before.push_back(b);
    }
    const int rank = static_cast<int>(ind.size());
    if (rank == 0 || (rank == 1 && ind[0] == outd[0])) {
      CopyDevice(stream, dst, src, static_cast<size_t>(n) * es, "MirrorPad");
      return;
    }
    if (rank > mov::kMaxRank) TooManyDims("MirrorPad", in, rank);
    // An unpadded innermost run moves in wider words.
    size_t word = es;
    if (ind[0] == outd[0]) word = WordFor(es, ind[0] * static_cast<int64_t>(es), {}, {src, dst});
    const int64_t scale = static_cast<int64_t>(word / es);
    mov::MirrorPlan plan;
    plan.rank = rank;
    plan.n = n / scale;
    int64_t stride = 1;
    for (int k = 0; k < rank; ++k) {
      const int d = rank - 1 - k;
      plan.in_dims[d] = k == 0 ? ind[k] / scale : ind[k];
      plan.out_dims[d] = k == 0 ? outd[k] / scale : outd[k];
      plan.before[d] = before[k];  // 0 for the widened innermost run
      plan.in_strides[d] = stride;
      stride *= plan.in_dims[d];
    }
    const bool wide = n >= kInt32Limit || call.input_size(0) >= kInt32Limit;
    mov::LaunchMirrorPad(word, src, dst, plan, symmetric_, wide, stream.get());
    CheckLaunch(stream, "MirrorPad");
  }

 private:
  bool symmetric_ = false;
};

// ---------------------------------------------------------------------------
// Split, SplitV, Unpack, Pack
// ---------------------------------------------------------------------------

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
  const char* src = static_cast<const char*>(call.input_data(value_input));
  int64_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    void* dst = call.AllocateOutputRaw(k, outs[k]);
    const int64_t chunk = Product(outs[k], a, outs[k].size());
    if (chunk > 0 && outer > 0) {
      GpuStream& stream = StreamOf(call);
      StridedCopy(stream, op, es, {outer, chunk}, {in_row, 1},
                  src + offset * static_cast<int64_t>(es), {chunk, 1}, dst);
    }
    offset += chunk;
  }
}

int64_t Canonical(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
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
    const char* src = static_cast<const char*>(call.input_data(0));
    for (int64_t k = 0; k < num_; ++k) {
      void* dst = call.AllocateOutputRaw(static_cast<size_t>(k), each);
      if (outer == 0 || inner == 0) continue;
      GpuStream& stream = StreamOf(call);
      StridedCopy(stream, "Unpack", es, {outer, inner}, {num_ * inner, 1},
                  src + k * inner * static_cast<int64_t>(es), {inner, 1}, dst);
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
    char* dst = static_cast<char*>(call.AllocateOutputRaw(0, out));
    const int64_t outer = Product(shapes[0], 0, a);
    const int64_t inner = Product(shapes[0], a, shapes[0].size());
    if (outer == 0 || inner == 0) return;
    const int64_t count = static_cast<int64_t>(n);
    GpuStream& stream = StreamOf(call);
    for (size_t k = 0; k < n; ++k) {
      StridedCopy(stream, "Pack", es, {outer, inner}, {inner, 1}, call.input_data(k),
                  {count * inner, 1}, dst + static_cast<int64_t>(k) * inner * static_cast<int64_t>(es));
    }
  }

 private:
  int64_t axis_ = 0;
};

// ---------------------------------------------------------------------------
// GatherNd
// ---------------------------------------------------------------------------

// Checking the indices costs one small kernel and one synchronous 8-byte
// read per call (the host waits for the work queued before it): an index
// out of range must be refused with INVALID_ARGUMENT naming it, like on the
// cpu plugin, not turned into zeros or a wild read.
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
    const int64_t depth = indices.back();
    if (depth > mov::kMaxGatherNdDepth) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("GatherNd with index tuples of %lld values, more than the %d the CUDA "
                      "kernel handles",
                      static_cast<long long>(depth), mov::kMaxGatherNdDepth));
    }
    const int64_t count = Product(indices, 0, indices.size() - 1);
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const int64_t slice = Product(params, static_cast<size_t>(depth), params.size());
    const Index p_strides = RowMajorStrides(params);
    void* dst = call.AllocateOutputRaw(0, out);
    if (count == 0) return;
    const void* idx = call.input_data(1);
    const void* src = call.input_data(0);
    GpuStream& stream = StreamOf(call);
    mov::GatherNdPlan plan;
    plan.depth = static_cast<int>(depth);
    plan.count = count;
    for (int64_t j = 0; j < depth; ++j) plan.dims[j] = params[j];
    if (depth > 0) CheckIndices(stream, call, plan, indices, params);
    const int64_t total = count * slice;
    if (total == 0) return;
    // Slices move in words as wide as their bytes and the pointers allow.
    const size_t word = WordFor(es, slice * static_cast<int64_t>(es), {}, {src, dst});
    const int64_t scale = static_cast<int64_t>(word / es);
    plan.slice = slice / scale;
    for (int64_t j = 0; j < depth; ++j) plan.strides[j] = p_strides[j] / scale;
    const bool wide = total >= kInt32Limit || call.input_size(0) >= kInt32Limit;
    mov::LaunchGatherNd(word, idx64, src, idx, dst, plan, wide, stream.get());
    CheckLaunch(stream, "GatherNd");
  }

 private:
  void CheckIndices(GpuStream& stream, const sdk::Call& call, const mov::GatherNdPlan& plan,
                    const Shape& indices, const Shape& params) {
    px_gpu::Stream s = stream.get();
    const bool idx64 = call.input_dtype(1) == PX_DT_INT64;
    const void* idx = call.input_data(1);
    int64_t* bad = nullptr;
    PX_GPU_THROW_IF_FAILED(px_gpu::MallocAsync(reinterpret_cast<void**>(&bad), sizeof(int64_t), s),
                            "px_gpu::MallocAsync(8 bytes for the index check)");
    // 0x7f in every byte: larger than any row.
    px_gpu::Error error = px_gpu::MemsetAsync(bad, 0x7f, sizeof(int64_t), s);
    if (error == px_gpu::kSuccess) {
      mov::LaunchGatherNdCheck(idx64, idx, plan, bad, s);
      error = px_gpu::GetLastError();
    }
    int64_t first_bad = 0;
    if (error == px_gpu::kSuccess) {
      error = px_gpu::MemcpyAsync(&first_bad, bad, sizeof(first_bad), px_gpu::kDeviceToHost, s);
    }
    (void)px_gpu::FreeAsync(bad, s);
    if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(s);
    PX_GPU_THROW_IF_FAILED(error, "the index range check");
    if (first_bad >= plan.count) return;
    // Read the bad tuple back for the message.
    const size_t isize = idx64 ? 8 : 4;
    const size_t depth = static_cast<size_t>(plan.depth);
    std::vector<int64_t> v64(idx64 ? depth : 0);
    std::vector<int32_t> v32(idx64 ? 0 : depth);
    const char* at = static_cast<const char*>(idx) +
                     first_bad * static_cast<int64_t>(depth * isize);
    error = px_gpu::MemcpyAsync(idx64 ? static_cast<void*>(v64.data()) : static_cast<void*>(v32.data()),
                            at, depth * isize, px_gpu::kDeviceToHost, s);
    if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(s);
    PX_GPU_THROW_IF_FAILED(error, "reading the bad index");
    Index tuple = idx64 ? v64 : Index(v32.begin(), v32.end());
    const Shape lead(indices.begin(), indices.end() - 1);
    PX_SDK_CHECK(false, "indices[%s] = [%s] does not index into param shape %s",
                 IndexString(Unravel(first_bad, lead)).c_str(), IndexString(tuple).c_str(),
                 sdk::ShapeString(params).c_str());
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
    if (m > mov::kMaxRank) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s with %d block dimensions, more than the %d the CUDA "
                                         "kernel handles",
                                         op, m, mov::kMaxRank));
    }
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    const void* src = call.input_data(0);
    const Shape& space = to_batch_ ? in : out;
    const Shape& batch = to_batch_ ? out : in;
    const int64_t rest = Product(in, 1 + static_cast<size_t>(m), in.size());
    GpuStream& stream = StreamOf(call);
    const size_t word = WordFor(es, rest * static_cast<int64_t>(es), {}, {src, dst});
    const int64_t scale = static_cast<int64_t>(word / es);
    mov::SpaceBatchPlan plan;
    plan.m = m;
    plan.n = n / scale;
    plan.batch = space[0];
    plan.rest = rest / scale;
    for (int d = 0; d < m; ++d) {
      plan.block[d] = block[d];
      plan.space[d] = space[1 + d];
      plan.grid[d] = batch[1 + d];
      plan.pad[d] = pad[2 * d];
    }
    const bool wide = n >= kInt32Limit || call.input_size(0) >= kInt32Limit;
    mov::LaunchSpaceBatch(word, to_batch_, src, dst, plan, wide, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  bool to_batch_ = true;
};

}  // namespace

PX_Status* RegisterMovementKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  std::vector<PX_DataType> range_types = sdk::FloatTypes();
  for (PX_DataType t : {PX_DT_INT8, PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT16,
                        PX_DT_UINT32}) {
    range_types.push_back(t);
  }
  // The host-memory arguments are the cpu plugin's: shape, dim, multiples,
  // paddings, block_shape, crops, split_dim, size_splits, depth, dims and
  // Range's scalars; Shape, Size and Rank write host-memory outputs.
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
      sdk::RegisterKernel<TileKernel>(info, registrar, sdk::sig::kTile, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BroadcastToKernel>(
      info, registrar, sdk::sig::kBroadcastTo, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MirrorPadKernel>(info, registrar, sdk::sig::kMirrorPad, {all, index}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<SplitKernel>(info, registrar, sdk::sig::kSplit, {all}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SplitKernel>(
      info, registrar, sdk::sig::kSplitV, {all, {PX_DT_INT8, PX_DT_INT32, PX_DT_INT64}}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<UnpackKernel>(info, registrar, sdk::sig::kUnpack, {all}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PackKernel>(info, registrar, sdk::sig::kPack, {all}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<GatherNdKernel>(info, registrar, sdk::sig::kGatherNd, {all, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SpaceBatchKernel>(
      info, registrar, sdk::sig::kSpaceToBatchND, {all, index, index}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SpaceBatchKernel>(
      info, registrar, sdk::sig::kBatchToSpaceND, {all, index, index}));
  return nullptr;
}

}  // namespace plexus::cuda
