// CPU kernels: the array family, written with sdk::OpKernel.
//
// Data movement is dtype-agnostic: kernels move elements of DtypeSize bytes.
// Most ops are one call of StridedCopy, a copy of an N-d block between two
// strided layouts that merges contiguous dimensions and copies contiguous
// rows with memcpy; the rest copy whole contiguous chunks (concat, split,
// gather). Output shapes and argument checks come from
// sdk/include/plexus/sdk/array_shapes.h, shared with the core and the
// reference. Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size and Rank have
// no kernel here: the core runs them as views and shape values.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

void Check(const std::string& error) { PX_SDK_CHECK(error.empty(), "%s", error.c_str()); }

Index Strides(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * shape[i + 1];
  }
  return s;
}

int64_t Product(const Shape& shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < shape.size(); ++i) n *= shape[i];
  return n;
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
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] > 0) {
      index[d] = k % shape[d];
      k /= shape[d];
    }
  }
  return index;
}

size_t ElementSize(const sdk::Call& call, size_t i) {
  size_t es = sdk::DtypeSize(call.input_dtype(i));
  PX_SDK_CHECK(es > 0, "input %zu has unsupported dtype %s", i,
               sdk::DtypeName(call.input_dtype(i)));
  return es;
}

const char* Bytes(const sdk::Call& call, size_t i) {
  return static_cast<const char*>(call.input_data(i));
}

char* AllocateBytes(sdk::Call& call, size_t i, const Shape& shape) {
  return static_cast<char*>(call.AllocateOutputRaw(i, shape));
}

// Integer values of input i (int8/16/32/64 or uint8) as int64s.
Index IntegerValues(const sdk::Call& call, size_t i) {
  const int64_t n = call.input_size(i);
  Index v(static_cast<size_t>(n));
  const void* p = call.input_data(i);
  switch (call.input_dtype(i)) {
    case PX_DT_INT8: std::copy_n(static_cast<const int8_t*>(p), n, v.begin()); break;
    case PX_DT_UINT8: std::copy_n(static_cast<const uint8_t*>(p), n, v.begin()); break;
    case PX_DT_INT16: std::copy_n(static_cast<const int16_t*>(p), n, v.begin()); break;
    case PX_DT_INT32: std::copy_n(static_cast<const int32_t*>(p), n, v.begin()); break;
    case PX_DT_INT64: std::copy_n(static_cast<const int64_t*>(p), n, v.begin()); break;
    default: PX_SDK_CHECK(false, "input %zu must be an integer tensor", i);
  }
  return v;
}

int64_t ScalarInt(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_size(i) == 1, "%s must be a scalar, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
  return call.input_int_values(i)[0];
}

void CheckVector(const sdk::Call& call, size_t i, const char* what) {
  PX_SDK_CHECK(call.input_rank(i) == 1, "%s must be a vector, got shape %s", what,
               sdk::ShapeString(call.input_shape(i)).c_str());
}

// ---------------------------------------------------------------------------
// Copy engines
// ---------------------------------------------------------------------------

// n elements of size sizeof(U), src and dst strides in elements. memcpy of a
// fixed size compiles to a plain load and store.
template <size_t kSize>
void StridedRow(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * ds * static_cast<int64_t>(kSize),
                src + k * ss * static_cast<int64_t>(kSize), kSize);
  }
}

void Row(size_t es, const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * es);
    return;
  }
  switch (es) {
    case 1: StridedRow<1>(src, ss, dst, ds, n); return;
    case 2: StridedRow<2>(src, ss, dst, ds, n); return;
    case 4: StridedRow<4>(src, ss, dst, ds, n); return;
    case 8: StridedRow<8>(src, ss, dst, ds, n); return;
    default:
      for (int64_t k = 0; k < n; ++k) {
        std::memcpy(dst + k * ds * static_cast<int64_t>(es), src + k * ss * static_cast<int64_t>(es),
                    es);
      }
  }
}

// Copies a block of `shape`: the element at multi-index i moves from
// src + sum(i * src_strides) to dst + sum(i * dst_strides), strides in
// elements (zero or negative allowed on the source side).
void StridedCopy(size_t es, const Shape& shape, const Index& src_strides, const char* src,
                 const Index& dst_strides, char* dst) {
  // Drop size-1 dimensions and merge dimensions that are contiguous in both
  // layouts.
  Shape dims;
  Index ss, ds;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return;
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
  const int64_t e = static_cast<int64_t>(es);
  if (dims.empty()) {
    std::memcpy(dst, src, es);
    return;
  }
  const int64_t r = static_cast<int64_t>(dims.size());
  // A transpose-like innermost pair (dst contiguous along the last
  // dimension, src contiguous along another): copy in tiles so both sides
  // stay in cache.
  int64_t tile_dim = -1;
  if (r >= 2 && ds[r - 1] == 1 && ss[r - 1] != 1) {
    for (int64_t d = r - 2; d >= 0; --d) {
      if (ss[d] == 1) {
        tile_dim = d;
        break;
      }
    }
  }
  if (tile_dim >= 0 && dims[tile_dim] >= 16 && dims[r - 1] >= 16) {
    // Move tile_dim to the position just before the last one.
    std::swap(dims[tile_dim], dims[r - 2]);
    std::swap(ss[tile_dim], ss[r - 2]);
    std::swap(ds[tile_dim], ds[r - 2]);
    constexpr int64_t kTile = 32;
    const int64_t rows = dims[r - 2], cols = dims[r - 1];
    Index index(r - 2, 0);
    const int64_t outer = Product(dims, 0, r - 2);
    for (int64_t k = 0; k < outer; ++k) {
      int64_t so = 0, dof = 0;
      for (int64_t d = 0; d < r - 2; ++d) {
        so += index[d] * ss[d];
        dof += index[d] * ds[d];
      }
      for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
        const int64_t i1 = std::min(rows, i0 + kTile);
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
          const int64_t j1 = std::min(cols, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i) {
            Row(es, src + (so + i * ss[r - 2] + j0 * ss[r - 1]) * e, ss[r - 1],
                dst + (dof + i * ds[r - 2] + j0) * e, 1, j1 - j0);
          }
        }
      }
      for (int64_t d = r - 3; d >= 0; --d) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    return;
  }
  // Odometer over the outer dimensions, one row copy per step.
  const int64_t n = dims[r - 1];
  const int64_t outer = Product(dims, 0, r - 1);
  Index index(r - 1, 0);
  int64_t so = 0, dof = 0;
  for (int64_t k = 0; k < outer; ++k) {
    Row(es, src + so * e, ss[r - 1], dst + dof * e, ds[r - 1], n);
    for (int64_t d = r - 2; d >= 0; --d) {
      so += ss[d];
      dof += ds[d];
      if (++index[d] < dims[d]) break;
      so -= ss[d] * dims[d];
      dof -= ds[d] * dims[d];
      index[d] = 0;
    }
  }
}

// Fills n elements with the es-byte value at `value`.
void FillBytes(char* dst, int64_t n, const char* value, size_t es) {
  if (n <= 0) return;
  bool zero = true;
  for (size_t b = 0; b < es; ++b) zero = zero && value[b] == 0;
  if (zero || es == 1) {
    std::memset(dst, zero ? 0 : value[0], static_cast<size_t>(n) * es);
    return;
  }
  // Doubling copies: value, then 1, 2, 4, ... elements at a time.
  std::memcpy(dst, value, es);
  int64_t done = 1;
  while (done < n) {
    const int64_t chunk = std::min(done, n - done);
    std::memcpy(dst + done * es, dst, static_cast<size_t>(chunk) * es);
    done += chunk;
  }
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

class TransposeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "perm");
    const Shape in = call.input_shape(0);
    const Index perm = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Transpose(in, perm, &out));
    const Index in_strides = Strides(in);
    Index src_strides(out.size());
    for (size_t d = 0; d < out.size(); ++d) src_strides[d] = in_strides[perm[d]];
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    StridedCopy(es, out, src_strides, Bytes(call, 0), Strides(out), dst);
  }
};

// ConcatV2 (axis last) and Concat (axis first): per outer index, one
// contiguous chunk from each input.
class ConcatKernel : public sdk::OpKernel {
 public:
  explicit ConcatKernel(bool axis_first = false) : axis_first_(axis_first) {}
  void Compute(sdk::Call& call) override {
    const size_t n = call.num_inputs() - 1;
    const size_t first = axis_first_ ? 1 : 0;
    const int64_t axis = ScalarInt(call, axis_first_ ? 0 : n, "axis");
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) shapes.push_back(call.input_shape(first + k));
    Shape out;
    Check(array_shapes::Concat(shapes, axis, &out));
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(out.size()) : axis);
    const size_t es = ElementSize(call, first);
    char* dst = AllocateBytes(call, 0, out);
    const int64_t outer = Product(out, 0, a);
    std::vector<size_t> chunk(n);
    std::vector<const char*> src(n);
    for (size_t k = 0; k < n; ++k) {
      chunk[k] = static_cast<size_t>(Product(shapes[k], a, shapes[k].size())) * es;
      src[k] = Bytes(call, first + k);
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t k = 0; k < n; ++k) {
        if (chunk[k] == 0) continue;
        std::memcpy(dst, src[k] + o * chunk[k], chunk[k]);
        dst += chunk[k];
      }
    }
  }

 private:
  bool axis_first_;
};

class ConcatV1Kernel : public ConcatKernel {
 public:
  ConcatV1Kernel() : ConcatKernel(true) {}
};

// Copies `value` split along axis a into outputs of the given shapes.
void SplitInto(sdk::Call& call, size_t value_input, size_t a, const std::vector<Shape>& outs) {
  const Shape in = call.input_shape(value_input);
  const size_t es = ElementSize(call, value_input);
  const int64_t outer = Product(in, 0, a);
  const size_t in_row = static_cast<size_t>(Product(in, a, in.size())) * es;
  const char* src = Bytes(call, value_input);
  size_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    char* dst = AllocateBytes(call, k, outs[k]);
    const size_t chunk = static_cast<size_t>(Product(outs[k], a, outs[k].size())) * es;
    if (chunk > 0) {
      for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * chunk, src + o * in_row + offset, chunk);
    }
    offset += chunk;
  }
}

class SplitKernel : public sdk::OpKernel {
 public:
  explicit SplitKernel(bool sizes = false) : sizes_(sizes) {}
  void Init(sdk::Attrs& attrs) override { num_split_ = attrs.Int("num_split"); }
  void Compute(sdk::Call& call) override {
    const size_t value_input = sizes_ ? 0 : 1;
    const int64_t axis = ScalarInt(call, sizes_ ? 2 : 0, "split_dim");
    const Shape in = call.input_shape(value_input);
    std::vector<Shape> outs;
    if (sizes_) {
      CheckVector(call, 1, "size_splits");
      Check(array_shapes::SplitV(in, IntegerValues(call, 1), axis, num_split_, &outs));
    } else {
      Shape each;
      Check(array_shapes::Split(in, axis, num_split_, &each));
      outs.assign(num_split_, each);
    }
    SplitInto(call, value_input,
              static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(in.size()) : axis), outs);
  }

 private:
  bool sizes_;
  int64_t num_split_ = 1;
};

class SplitVKernel : public SplitKernel {
 public:
  SplitVKernel() : SplitKernel(true) {}
};

class UnpackKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    axis_ = attrs.Int("axis", 0);
    num_ = attrs.Int("num");
  }
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    Shape each;
    Check(array_shapes::Unpack(in, axis_, num_, &each));
    const size_t a = static_cast<size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(in.size()) : axis_);
    // Split into pieces of size 1 along a, each seen without that dimension.
    const size_t es = ElementSize(call, 0);
    const int64_t outer = Product(in, 0, a);
    const size_t chunk = static_cast<size_t>(Product(in, a + 1, in.size())) * es;
    const char* src = Bytes(call, 0);
    for (int64_t k = 0; k < num_; ++k) {
      char* dst = AllocateBytes(call, k, each);
      if (chunk == 0) continue;
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(dst + o * chunk, src + (o * num_ + k) * chunk, chunk);
      }
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
    for (size_t k = 0; k < n; ++k) shapes.push_back(call.input_shape(k));
    Shape out;
    Check(array_shapes::Pack(shapes, axis_, &out));
    const size_t a = static_cast<size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(out.size()) : axis_);
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const int64_t outer = Product(shapes[0], 0, a);
    const size_t chunk = static_cast<size_t>(Product(shapes[0], a, shapes[0].size())) * es;
    if (chunk == 0) return;
    if (n == 1 || outer == 1) {
      for (size_t k = 0; k < n; ++k) std::memcpy(dst + k * chunk, Bytes(call, k), chunk * outer);
      return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t k = 0; k < n; ++k) {
        std::memcpy(dst, Bytes(call, k) + o * chunk, chunk);
        dst += chunk;
      }
    }
  }

 private:
  int64_t axis_ = 0;
};

class SliceKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const Index begin = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Slice(in, begin, call.input_int_values(2), &out));
    const Index in_strides = Strides(in);
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) base += begin[d] * in_strides[d];
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    StridedCopy(es, out, in_strides, Bytes(call, 0) + base * static_cast<int64_t>(es), Strides(out),
                dst);
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
    for (size_t i = 1; i <= 3; ++i) CheckVector(call, i, i == 1 ? "begin" : i == 2 ? "end" : "strides");
    const Shape in = call.input_shape(0);
    const Index begin = call.input_int_values(1), end = call.input_int_values(2);
    array_shapes::StridedSliceResult r;
    Check(array_shapes::StridedSlice(in, &begin, &end, call.input_int_values(3), begin_mask_,
                                     end_mask_, ellipsis_mask_, new_axis_mask_,
                                     shrink_axis_mask_, &r));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, r.final_shape);
    if (r.is_identity) {
      const size_t bytes = static_cast<size_t>(call.input_size(0)) * es;
      if (bytes > 0) std::memcpy(dst, Bytes(call, 0), bytes);
      return;
    }
    const Index in_strides = Strides(in);
    Index src_strides(in.size());
    int64_t base = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      src_strides[d] = in_strides[d] * r.strides[d];
      if (r.processing[d] > 0) base += r.begin[d] * in_strides[d];
    }
    StridedCopy(es, r.processing, src_strides, Bytes(call, 0) + base * static_cast<int64_t>(es),
                Strides(r.processing), dst);
  }

 private:
  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0, new_axis_mask_ = 0,
          shrink_axis_mask_ = 0;
};

// Gather and GatherV2: params seen as [batch, outer, axis, inner], indices as
// [batch, n]; out[b, o, j, :] = params[b, o, indices[b, j], :].
class GatherKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { batch_dims_ = attrs.Int("batch_dims", 0); }
  void Compute(sdk::Call& call) override {
    const int64_t axis = call.num_inputs() > 2 ? ScalarInt(call, 2, "axis") : 0;
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    int64_t a = 0, b = 0;
    Check(array_shapes::Gather(params, indices, axis, batch_dims_, &out, &a, &b));
    const int64_t batch = Product(params, 0, b);
    const int64_t outer = Product(params, b, a);
    const int64_t limit = params[a];
    const int64_t inner = Product(params, a + 1, params.size());
    const int64_t n = Product(indices, b, indices.size());
    const Index idx = IntegerValues(call, 1);
    for (size_t k = 0; k < idx.size(); ++k) {
      if (idx[k] < 0 || idx[k] >= limit) {
        PX_SDK_CHECK(false, "indices[%s] = %lld is not in [0, %lld)",
                     IndexString(Unravel(static_cast<int64_t>(k), indices)).c_str(),
                     static_cast<long long>(idx[k]), static_cast<long long>(limit));
      }
    }
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const size_t chunk = static_cast<size_t>(inner) * es;
    if (chunk == 0) return;
    const char* src = Bytes(call, 0);
    for (int64_t bb = 0; bb < batch; ++bb) {
      for (int64_t o = 0; o < outer; ++o) {
        const char* base = src + ((bb * outer + o) * limit) * chunk;
        const int64_t* row = idx.data() + bb * n;
        for (int64_t j = 0; j < n; ++j) {
          std::memcpy(dst, base + row[j] * chunk, chunk);
          dst += chunk;
        }
      }
    }
  }

 private:
  int64_t batch_dims_ = 0;
};

class GatherNdKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    Check(array_shapes::GatherNd(params, indices, &out));
    const int64_t depth = indices.back();
    const int64_t count = Product(indices, 0, indices.size() - 1);
    const Index idx = IntegerValues(call, 1);
    const int64_t slice = Product(params, depth, params.size());
    const Index p_strides = Strides(params);
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    const size_t chunk = static_cast<size_t>(slice) * es;
    for (int64_t m = 0; m < count; ++m) {
      int64_t offset = 0;
      for (int64_t j = 0; j < depth; ++j) {
        const int64_t v = idx[m * depth + j];
        if (v < 0 || v >= params[j]) {
          Index tuple(idx.begin() + m * depth, idx.begin() + (m + 1) * depth);
          Shape lead(indices.begin(), indices.end() - 1);
          PX_SDK_CHECK(false, "indices[%s] = [%s] does not index into param shape %s",
                       IndexString(Unravel(m, lead)).c_str(), IndexString(tuple).c_str(),
                       sdk::ShapeString(params).c_str());
        }
        offset += v * p_strides[j];
      }
      if (chunk > 0) std::memcpy(dst + m * chunk, src + offset * static_cast<int64_t>(es), chunk);
    }
  }
};

// Pad (zeros), PadV2 (constant_values) and MirrorPad.
class PadKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    if (std::string(attrs.op()) == "MirrorPad") {
      std::string mode = attrs.String("mode");
      PX_SDK_CHECK(mode == "REFLECT" || mode == "SYMMETRIC",
                   "mode must be REFLECT or SYMMETRIC, got '%s'", mode.c_str());
      mirror_ = mode == "REFLECT" ? 1 : 2;
    }
  }
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const Index pad = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Pad(in, call.input_shape(1), pad, mirror_, &out));
    const size_t es = ElementSize(call, 0);
    const int64_t e = static_cast<int64_t>(es);
    char* dst = AllocateBytes(call, 0, out);
    const Index in_strides = Strides(in), out_strides = Strides(out);
    const char* src = Bytes(call, 0);
    const int64_t r = static_cast<int64_t>(in.size());
    if (mirror_ == 0) {
      std::vector<char> fill(es, 0);
      if (call.num_inputs() > 2) {
        PX_SDK_CHECK(call.input_rank(2) == 0, "constant_values must be a scalar, got shape %s",
                     sdk::ShapeString(call.input_shape(2)).c_str());
        std::memcpy(fill.data(), Bytes(call, 2), es);
      }
      FillBytes(dst, sdk::NumElements(out), fill.data(), es);
      int64_t base = 0;
      for (int64_t d = 0; d < r; ++d) base += pad[2 * d] * out_strides[d];
      StridedCopy(es, in, in_strides, src, out_strides, dst + base * e);
      return;
    }
    // Mirror: per dimension up to three segments (mirrored before, the
    // input, mirrored after), each an affine map; copy every combination.
    struct Segment {
      int64_t out_start, length, in_start, in_step;
    };
    std::vector<std::vector<Segment>> segments(r);
    for (int64_t d = 0; d < r; ++d) {
      const int64_t before = pad[2 * d], after = pad[2 * d + 1], n = in[d];
      const int64_t shift = mirror_ == 1 ? 0 : 1;  // SYMMETRIC repeats the edge
      if (before > 0) segments[d].push_back({0, before, before - shift, -1});
      segments[d].push_back({before, n, 0, 1});
      if (after > 0) segments[d].push_back({before + n, after, n - 2 + shift, -1});
    }
    Index choice(r, 0);
    while (true) {
      Shape block(r);
      Index src_strides(r);
      int64_t src_off = 0, dst_off = 0;
      for (int64_t d = 0; d < r; ++d) {
        const Segment& s = segments[d][choice[d]];
        block[d] = s.length;
        src_strides[d] = in_strides[d] * s.in_step;
        src_off += s.in_start * in_strides[d];
        dst_off += s.out_start * out_strides[d];
      }
      StridedCopy(es, block, src_strides, src + src_off * e, out_strides, dst + dst_off * e);
      int64_t d = r - 1;
      for (; d >= 0; --d) {
        if (++choice[d] < static_cast<int64_t>(segments[d].size())) break;
        choice[d] = 0;
      }
      if (d < 0) break;
    }
  }

 private:
  int mirror_ = 0;
};

// Tile: output [m0, d0, m1, d1, ...] reading the input with stride 0 along
// the multiples.
class TileKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "multiples");
    const Shape in = call.input_shape(0);
    const Index multiples = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Tile(in, multiples, &out));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const Index in_strides = Strides(in);
    Shape view;
    Index src_strides;
    for (size_t d = 0; d < in.size(); ++d) {
      view.push_back(multiples[d]);
      src_strides.push_back(0);
      view.push_back(in[d]);
      src_strides.push_back(in_strides[d]);
    }
    StridedCopy(es, view, src_strides, Bytes(call, 0), Strides(view), dst);
  }
};

// ReverseV2: one strided copy that reads the reversed axes backwards (from
// their last element, with negative source strides).
class ReverseV2Kernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(in.size());
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, in);
    // A scalar or an empty tensor comes back as it is, whatever the axes.
    if (rank == 0 || sdk::NumElements(in) == 0) {
      if (rank == 0) std::memcpy(dst, Bytes(call, 0), es);
      return;
    }
    std::vector<bool> reversed;
    Check(array_shapes::ReverseAxes(rank, call.input_shape(1), call.input_int_values(1),
                                    &reversed));
    if (rank > 8) {  // as TensorFlow's kernels
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             "reverse is not implemented for tensors of rank > 8.");
    }
    Index src_strides = Strides(in);
    int64_t base = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reversed[d]) continue;
      base += (in[d] - 1) * src_strides[d];
      src_strides[d] = -src_strides[d];
    }
    StridedCopy(es, in, src_strides, Bytes(call, 0) + base * static_cast<int64_t>(es), Strides(in),
                dst);
  }
};

class BroadcastToKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "shape");
    const Shape in = call.input_shape(0);
    Shape out;
    Check(array_shapes::BroadcastTo(in, call.input_int_values(1), &out));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const Index in_strides = Strides(in);
    const size_t lead = out.size() - in.size();
    Index src_strides(out.size(), 0);
    for (size_t d = 0; d < in.size(); ++d) src_strides[lead + d] = in[d] == 1 ? 0 : in_strides[d];
    StridedCopy(es, out, src_strides, Bytes(call, 0), Strides(out), dst);
  }
};

class FillKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 0, "dims");
    PX_SDK_CHECK(call.input_rank(1) == 0, "value must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    Shape out;
    Check(array_shapes::Fill(call.input_int_values(0), &out));
    const size_t es = ElementSize(call, 1);
    FillBytes(AllocateBytes(call, 0, out), sdk::NumElements(out), Bytes(call, 1), es);
  }
};

class ZerosLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, call.input_shape(0));
    std::memset(dst, 0, static_cast<size_t>(call.input_size(0)) * es);
  }
};

class OnesLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = call.AllocateOutput<T>(0, call.input_shape(0));
      std::fill_n(out, call.input_size(0), T(1));
    });
  }
};

// Range: start + i * delta in C, the same formula as the reference (so the
// rounding of half and bfloat16 matches).
class RangeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    for (size_t i = 0; i < 3; ++i) {
      PX_SDK_CHECK(call.input_size(i) == 1, "%s must be a scalar, got shape %s",
                   i == 0 ? "start" : i == 1 ? "limit" : "delta",
                   sdk::ShapeString(call.input_shape(i)).c_str());
    }
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_integral_v<T>, int64_t,
                                   std::conditional_t<std::is_same_v<T, double>, double, float>>;
      const C start = static_cast<C>(call.input<T>(0)[0]);
      const C limit = static_cast<C>(call.input<T>(1)[0]);
      const C delta = static_cast<C>(call.input<T>(2)[0]);
      int64_t size = 0;
      Check(array_shapes::RangeSize<C>(start, limit, delta, &size));
      T* out = call.AllocateOutput<T>(0, {size});
      for (int64_t i = 0; i < size; ++i) out[i] = static_cast<T>(start + static_cast<C>(i) * delta);
    });
  }
};

// OneHot: fill with off_value, then set on_value where the index hits.
class OneHotKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_ = attrs.Int("axis", -1); }
  void Compute(sdk::Call& call) override {
    const Shape indices = call.input_shape(0);
    const int64_t depth = ScalarInt(call, 1, "depth");
    PX_SDK_CHECK(call.input_rank(2) == 0, "on_value must be a scalar");
    PX_SDK_CHECK(call.input_rank(3) == 0, "off_value must be a scalar");
    Shape out;
    int64_t a = 0;
    Check(array_shapes::OneHot(indices, depth, axis_, &out, &a));
    const Index idx = IntegerValues(call, 0);
    const size_t es = ElementSize(call, 2);
    char* dst = AllocateBytes(call, 0, out);
    FillBytes(dst, sdk::NumElements(out), Bytes(call, 3), es);
    const int64_t prefix = Product(indices, 0, a);
    const int64_t suffix = Product(indices, a, indices.size());
    const char* on = Bytes(call, 2);
    for (int64_t p = 0; p < prefix; ++p) {
      for (int64_t s = 0; s < suffix; ++s) {
        const int64_t v = idx[p * suffix + s];
        if (v >= 0 && v < depth) std::memcpy(dst + ((p * depth + v) * suffix + s) * es, on, es);
      }
    }
  }

 private:
  int64_t axis_ = -1;
};

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// SpaceToBatchND and BatchToSpaceND: for every block offset, one strided
// copy between the batch slab of that offset and the spatial positions it
// covers (output batch = block_offset * batch + b).
class SpaceBatchKernel : public sdk::OpKernel {
 public:
  explicit SpaceBatchKernel(bool to_batch = true) : to_batch_(to_batch) {}
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const Index block = call.input_int_values(1), pad = call.input_int_values(2);
    Shape out;
    Check(array_shapes::SpaceBatch(to_batch_, in, call.input_shape(1), block, call.input_shape(2),
                                   pad, &out));
    const int64_t m = static_cast<int64_t>(block.size());
    const size_t es = ElementSize(call, 0);
    const int64_t e = static_cast<int64_t>(es);
    char* dst = AllocateBytes(call, 0, out);
    if (sdk::NumElements(out) == 0) return;
    const char* src = Bytes(call, 0);
    // `space` is the side with the spatial layout, `batch` the other one.
    const Shape& space = to_batch_ ? in : out;
    const Shape& batch = to_batch_ ? out : in;
    const Index space_strides = Strides(space), batch_strides = Strides(batch);
    const int64_t b0 = space[0];
    if (to_batch_) std::memset(dst, 0, static_cast<size_t>(sdk::NumElements(out)) * es);
    int64_t blocks = 1;
    for (int64_t v : block) blocks *= v;
    for (int64_t offset_flat = 0; offset_flat < blocks; ++offset_flat) {
      Index offset(m);
      int64_t rest = offset_flat;
      for (int64_t d = m - 1; d >= 0; --d) {
        offset[d] = rest % block[d];
        rest /= block[d];
      }
      // Batch-side positions j with space position j * block + offset - pad
      // inside [0, space dim).
      Shape region = batch;
      region[0] = b0;
      Index s_strides = space_strides, b_strides = batch_strides;
      int64_t s_off = 0, b_off = offset_flat * b0 * batch_strides[0];
      bool empty = false;
      for (int64_t d = 0; d < m; ++d) {
        const int64_t lo = std::max<int64_t>(0, CeilDiv(pad[2 * d] - offset[d], block[d]));
        const int64_t hi = std::min<int64_t>(
            batch[1 + d], CeilDiv(space[1 + d] + pad[2 * d] - offset[d], block[d]));
        if (hi <= lo) {
          empty = true;
          break;
        }
        region[1 + d] = hi - lo;
        s_strides[1 + d] = space_strides[1 + d] * block[d];
        s_off += (lo * block[d] + offset[d] - pad[2 * d]) * space_strides[1 + d];
        b_off += lo * batch_strides[1 + d];
      }
      if (empty) continue;
      if (to_batch_) {
        StridedCopy(es, region, s_strides, src + s_off * e, b_strides, dst + b_off * e);
      } else {
        StridedCopy(es, region, b_strides, src + b_off * e, s_strides, dst + s_off * e);
      }
    }
  }

 private:
  bool to_batch_;
};

class BatchToSpaceKernel : public SpaceBatchKernel {
 public:
  BatchToSpaceKernel() : SpaceBatchKernel(false) {}
};

}  // namespace

PX_Status* RegisterArrayFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  std::vector<PX_DataType> range_types = sdk::FloatTypes();
  for (PX_DataType t : {PX_DT_INT8, PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT16,
                        PX_DT_UINT32}) {
    range_types.push_back(t);
  }
  PX_Status* s = nullptr;
  auto reg = [&](PX_Status* status) {
    if (s == nullptr) s = status;
  };
  reg(sdk::RegisterKernel<TransposeKernel>(info, registrar, sdk::sig::kTranspose, {all, index}));
  // ConcatV2's axis is its last input, whose index depends on N: it is read
  // where it lies (host memory on this device).
  reg(sdk::RegisterKernel<ConcatKernel>(info, registrar, sdk::sig::kConcatV2, {all, index}));
  reg(sdk::RegisterKernel<ConcatV1Kernel>(info, registrar, sdk::sig::kConcat, {all}));
  reg(sdk::RegisterKernel<SplitKernel>(info, registrar, sdk::sig::kSplit, {all}));
  reg(sdk::RegisterKernel<SplitVKernel>(info, registrar, sdk::sig::kSplitV,
                                        {all, {PX_DT_INT8, PX_DT_INT32, PX_DT_INT64}}));
  reg(sdk::RegisterKernel<SliceKernel>(info, registrar, sdk::sig::kSlice, {all, index}));
  reg(sdk::RegisterKernel<StridedSliceKernel>(info, registrar, sdk::sig::kStridedSlice,
                                              {all, index}));
  reg(sdk::RegisterKernel<PackKernel>(info, registrar, sdk::sig::kPack, {all}));
  reg(sdk::RegisterKernel<UnpackKernel>(info, registrar, sdk::sig::kUnpack, {all}));
  reg(sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGather, {all, index}));
  reg(sdk::RegisterKernel<GatherKernel>(info, registrar, sdk::sig::kGatherV2, {all, index, index}));
  reg(sdk::RegisterKernel<GatherNdKernel>(info, registrar, sdk::sig::kGatherNd, {all, index}));
  reg(sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kPad, {all, index}));
  reg(sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kPadV2, {all, index}));
  reg(sdk::RegisterKernel<PadKernel>(info, registrar, sdk::sig::kMirrorPad, {all, index}));
  reg(sdk::RegisterKernel<TileKernel>(info, registrar, sdk::sig::kTile, {all, index}));
  reg(sdk::RegisterKernel<ReverseV2Kernel>(info, registrar, sdk::sig::kReverseV2, {all, index}));
  reg(sdk::RegisterKernel<FillKernel>(info, registrar, sdk::sig::kFill, {all, index}));
  reg(sdk::RegisterKernel<ZerosLikeKernel>(info, registrar, sdk::sig::kZerosLike, {all}));
  reg(sdk::RegisterKernel<OnesLikeKernel>(info, registrar, sdk::sig::kOnesLike, {all}));
  reg(sdk::RegisterKernel<RangeKernel>(info, registrar, sdk::sig::kRange, {range_types}));
  reg(sdk::RegisterKernel<OneHotKernel>(
      info, registrar, sdk::sig::kOneHot,
      {all, {PX_DT_UINT8, PX_DT_INT8, PX_DT_INT32, PX_DT_INT64}}));
  reg(sdk::RegisterKernel<BroadcastToKernel>(info, registrar, sdk::sig::kBroadcastTo,
                                             {all, index}));
  reg(sdk::RegisterKernel<SpaceBatchKernel>(info, registrar, sdk::sig::kSpaceToBatchND,
                                            {all, index, index}));
  reg(sdk::RegisterKernel<BatchToSpaceKernel>(info, registrar, sdk::sig::kBatchToSpaceND,
                                              {all, index, index}));
  return s;
}

}  // namespace plexus::cpu
