// Reference kernels: the array family (see reference_kernels.h).
//
// Data movement is dtype-agnostic: kernels move elements of DtypeSize bytes.
// Each kernel walks the output element by element, computes the multi-index
// of the input element it comes from and copies it: slow and obviously
// correct. Output shapes and argument checks come from array_shapes.h, the
// same code the core's shape functions and the cpu kernels use.
#include <cstring>
#include <string>
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;
using Index = std::vector<int64_t>;

void Check(const std::string& error) { PX_SDK_CHECK(error.empty(), "%s", error.c_str()); }

// Row-major strides (in elements) of a shape.
Index Strides(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * shape[i + 1];
  }
  return s;
}

int64_t Offset(const Index& index, const Index& strides) {
  int64_t o = 0;
  for (size_t i = 0; i < index.size(); ++i) o += index[i] * strides[i];
  return o;
}

// Calls f(index, k) for every multi-index of `shape` in row-major order; k
// is the flat position.
template <typename F>
void ForEachIndex(const Shape& shape, F&& f) {
  const int64_t n = sdk::NumElements(shape);
  Index index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(index, k);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

std::string IndexString(const Index& index) {
  std::string s;
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(index[i]);
  }
  return s;
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

void CopyElement(char* dst, int64_t d, const char* src, int64_t s, size_t es) {
  std::memcpy(dst + d * es, src + s * es, es);
}

// The integer values of input i (int8/16/32/64 or uint8), read from its
// buffer (host memory or a host-accessible device's memory).
Index IntegerValues(const sdk::Call& call, size_t i) {
  const int64_t n = call.input_size(i);
  Index v(static_cast<size_t>(n));
  const void* p = call.input_data(i);
  PX_DataType t = call.input_dtype(i);
  for (int64_t k = 0; k < n; ++k) {
    switch (t) {
      case PX_DT_INT8: v[k] = static_cast<const int8_t*>(p)[k]; break;
      case PX_DT_UINT8: v[k] = static_cast<const uint8_t*>(p)[k]; break;
      case PX_DT_INT16: v[k] = static_cast<const int16_t*>(p)[k]; break;
      case PX_DT_INT32: v[k] = static_cast<const int32_t*>(p)[k]; break;
      case PX_DT_INT64: v[k] = static_cast<const int64_t*>(p)[k]; break;
      default: PX_SDK_CHECK(false, "input %zu must be an integer tensor", i);
    }
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

class ReshapeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "shape");
    Shape out;
    Check(array_shapes::Reshape(call.input_shape(0), call.input_int_values(1), &out));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    for (int64_t k = 0; k < call.input_size(0); ++k) CopyElement(dst, k, src, k, es);
  }
};

// ExpandDims and Squeeze: the elements stay in order.
class ExpandDimsKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    Shape out;
    Check(array_shapes::ExpandDims(call.input_shape(0), call.input_int_values(1), &out));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    for (int64_t k = 0; k < call.input_size(0); ++k) CopyElement(dst, k, Bytes(call, 0), k, es);
  }
};

class SqueezeKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { dims_ = attrs.IntList("squeeze_dims", {}); }
  void Compute(sdk::Call& call) override {
    Shape out;
    bool rank_unknown = false;
    Check(array_shapes::Squeeze(call.input_shape(0), dims_, &out, &rank_unknown));
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    for (int64_t k = 0; k < call.input_size(0); ++k) CopyElement(dst, k, Bytes(call, 0), k, es);
  }

 private:
  std::vector<int64_t> dims_;
};

class TransposeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "perm");
    const Shape in = call.input_shape(0);
    const Index perm = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Transpose(in, perm, &out));
    const size_t es = ElementSize(call, 0);
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i(in.size());
      for (size_t d = 0; d < out.size(); ++d) i[perm[d]] = o[d];
      CopyElement(dst, k, src, Offset(i, in_strides), es);
    });
  }
};

// ConcatV2 (axis last) and Concat (axis first).
class ConcatKernel : public sdk::OpKernel {
 public:
  explicit ConcatKernel(bool axis_first = false) : axis_first_(axis_first) {}
  void Compute(sdk::Call& call) override {
    const size_t n = call.num_inputs() - 1;
    const size_t first = axis_first_ ? 1 : 0;
    const size_t axis_input = axis_first_ ? 0 : n;
    const int64_t axis = ScalarInt(call, axis_input, "axis");
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n; ++k) shapes.push_back(call.input_shape(first + k));
    Shape out;
    Check(array_shapes::Concat(shapes, axis, &out));
    const int64_t r = static_cast<int64_t>(out.size());
    const int64_t a = axis < 0 ? axis + r : axis;
    const size_t es = ElementSize(call, first);
    char* dst = AllocateBytes(call, 0, out);
    const Index out_strides = Strides(out);
    int64_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      const char* src = Bytes(call, first + k);
      ForEachIndex(shapes[k], [&](const Index& i, int64_t flat) {
        Index o = i;
        o[a] += offset;
        CopyElement(dst, Offset(o, out_strides), src, flat, es);
      });
      offset += shapes[k][a];
    }
  }

 private:
  bool axis_first_;
};

class ConcatV1Kernel : public ConcatKernel {
 public:
  ConcatV1Kernel() : ConcatKernel(true) {}
};

// Split (split_dim first) and SplitV (sizes and split_dim after the value).
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
    const int64_t a = axis < 0 ? axis + static_cast<int64_t>(in.size()) : axis;
    const size_t es = ElementSize(call, value_input);
    const Index in_strides = Strides(in);
    const char* src = Bytes(call, value_input);
    int64_t offset = 0;
    for (size_t k = 0; k < outs.size(); ++k) {
      char* dst = AllocateBytes(call, k, outs[k]);
      ForEachIndex(outs[k], [&](const Index& o, int64_t flat) {
        Index i = o;
        i[a] += offset;
        CopyElement(dst, flat, src, Offset(i, in_strides), es);
      });
      offset += outs[k][a];
    }
  }

 private:
  bool sizes_;
  int64_t num_split_ = 1;
};

class SplitVKernel : public SplitKernel {
 public:
  SplitVKernel() : SplitKernel(true) {}
};

class SliceKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape in = call.input_shape(0);
    const Index begin = call.input_int_values(1);
    Shape out;
    Check(array_shapes::Slice(in, begin, call.input_int_values(2), &out));
    const size_t es = ElementSize(call, 0);
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i = o;
      for (size_t d = 0; d < i.size(); ++d) i[d] += begin[d];
      CopyElement(dst, k, src, Offset(i, in_strides), es);
    });
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
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, r.final_shape);
    const char* src = Bytes(call, 0);
    // The output holds the processing shape's elements in order.
    ForEachIndex(r.processing, [&](const Index& p, int64_t k) {
      Index i(in.size());
      for (size_t d = 0; d < in.size(); ++d) i[d] = r.begin[d] + p[d] * r.strides[d];
      CopyElement(dst, k, src, Offset(i, in_strides), es);
    });
  }

 private:
  int64_t begin_mask_ = 0, end_mask_ = 0, ellipsis_mask_ = 0, new_axis_mask_ = 0,
          shrink_axis_mask_ = 0;
};

class PackKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { axis_ = attrs.Int("axis", 0); }
  void Compute(sdk::Call& call) override {
    std::vector<Shape> shapes;
    for (size_t k = 0; k < call.num_inputs(); ++k) shapes.push_back(call.input_shape(k));
    Shape out;
    Check(array_shapes::Pack(shapes, axis_, &out));
    const int64_t a = axis_ < 0 ? axis_ + static_cast<int64_t>(out.size()) : axis_;
    const size_t es = ElementSize(call, 0);
    const Index out_strides = Strides(out);
    char* dst = AllocateBytes(call, 0, out);
    for (size_t k = 0; k < call.num_inputs(); ++k) {
      ForEachIndex(shapes[k], [&](const Index& i, int64_t flat) {
        Index o = i;
        o.insert(o.begin() + a, static_cast<int64_t>(k));
        CopyElement(dst, Offset(o, out_strides), Bytes(call, k), flat, es);
      });
    }
  }

 private:
  int64_t axis_ = 0;
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
    const int64_t a = axis_ < 0 ? axis_ + static_cast<int64_t>(in.size()) : axis_;
    const size_t es = ElementSize(call, 0);
    const Index in_strides = Strides(in);
    for (int64_t k = 0; k < num_; ++k) {
      char* dst = AllocateBytes(call, k, each);
      ForEachIndex(each, [&](const Index& o, int64_t flat) {
        Index i = o;
        i.insert(i.begin() + a, k);
        CopyElement(dst, flat, Bytes(call, 0), Offset(i, in_strides), es);
      });
    }
  }

 private:
  int64_t axis_ = 0, num_ = 0;
};

// Gather (axis 0) and GatherV2 (axis input, batch_dims).
class GatherKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { batch_dims_ = attrs.Int("batch_dims", 0); }
  void Compute(sdk::Call& call) override {
    const int64_t axis = call.num_inputs() > 2 ? ScalarInt(call, 2, "axis") : 0;
    const Shape params = call.input_shape(0), indices = call.input_shape(1);
    Shape out;
    int64_t a = 0, b = 0;
    Check(array_shapes::Gather(params, indices, axis, batch_dims_, &out, &a, &b));
    const Index index_values = IntegerValues(call, 1);
    const Index p_strides = Strides(params), i_strides = Strides(indices);
    const int64_t ir = static_cast<int64_t>(indices.size());
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      // o = params[:a] (the first b of them batch) + indices[b:] + params[a+1:].
      Index ii(o.begin(), o.begin() + b);
      ii.insert(ii.end(), o.begin() + a, o.begin() + a + (ir - b));
      const int64_t v = index_values[Offset(ii, i_strides)];
      PX_SDK_CHECK(v >= 0 && v < params[a], "indices[%s] = %lld is not in [0, %lld)",
                   IndexString(ii).c_str(), static_cast<long long>(v),
                   static_cast<long long>(params[a]));
      Index pi(o.begin(), o.begin() + a);
      pi.push_back(v);
      pi.insert(pi.end(), o.begin() + a + (ir - b), o.end());
      CopyElement(dst, k, src, Offset(pi, p_strides), es);
    });
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
    const Index index_values = IntegerValues(call, 1);
    const Index p_strides = Strides(params);
    const int64_t lead = static_cast<int64_t>(indices.size()) - 1;
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      // Position of the index tuple among the tuples.
      int64_t tuple = 0;
      for (int64_t d = 0; d < lead; ++d) tuple = tuple * indices[d] + o[d];
      Index pi;
      for (int64_t j = 0; j < depth; ++j) {
        const int64_t v = index_values[tuple * depth + j];
        if (v < 0 || v >= params[j]) {
          Index where(o.begin(), o.begin() + lead), tuple_values;
          for (int64_t m = 0; m < depth; ++m) tuple_values.push_back(index_values[tuple * depth + m]);
          PX_SDK_CHECK(false, "indices[%s] = [%s] does not index into param shape %s",
                       IndexString(where).c_str(), IndexString(tuple_values).c_str(),
                       sdk::ShapeString(params).c_str());
        }
        pi.push_back(v);
      }
      pi.insert(pi.end(), o.begin() + lead, o.end());
      CopyElement(dst, k, src, Offset(pi, p_strides), es);
    });
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
    std::vector<char> fill(es, 0);
    if (call.num_inputs() > 2) {
      PX_SDK_CHECK(call.input_rank(2) == 0, "constant_values must be a scalar, got shape %s",
                   sdk::ShapeString(call.input_shape(2)).c_str());
      std::memcpy(fill.data(), Bytes(call, 2), es);
    }
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i(in.size());
      bool inside = true;
      for (size_t d = 0; d < in.size(); ++d) {
        int64_t j = o[d] - pad[2 * d];
        if (mirror_ == 1) {
          if (j < 0) j = -j;
          if (j >= in[d]) j = 2 * (in[d] - 1) - j;
        } else if (mirror_ == 2) {
          if (j < 0) j = -j - 1;
          if (j >= in[d]) j = 2 * in[d] - 1 - j;
        }
        inside = inside && j >= 0 && j < in[d];
        i[d] = j;
      }
      if (inside) {
        CopyElement(dst, k, src, Offset(i, in_strides), es);
      } else {
        std::memcpy(dst + k * es, fill.data(), es);
      }
    });
  }

 private:
  int mirror_ = 0;
};

class TileKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckVector(call, 1, "multiples");
    const Shape in = call.input_shape(0);
    Shape out;
    Check(array_shapes::Tile(in, call.input_int_values(1), &out));
    const size_t es = ElementSize(call, 0);
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, out);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i(in.size());
      for (size_t d = 0; d < in.size(); ++d) i[d] = o[d] % in[d];
      CopyElement(dst, k, Bytes(call, 0), Offset(i, in_strides), es);
    });
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
    const Index in_strides = Strides(in);
    const size_t lead = out.size() - in.size();
    char* dst = AllocateBytes(call, 0, out);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i(in.size());
      for (size_t d = 0; d < in.size(); ++d) i[d] = in[d] == 1 ? 0 : o[lead + d];
      CopyElement(dst, k, Bytes(call, 0), Offset(i, in_strides), es);
    });
  }
};

// Shape, Size and Rank write int32 or int64 (the output dtype).
void WriteInts(sdk::Call& call, size_t output, const Shape& shape, const Index& values) {
  if (call.output_dtype(output) == PX_DT_INT32) {
    int32_t* out = call.AllocateOutput<int32_t>(output, shape);
    for (size_t k = 0; k < values.size(); ++k) {
      PX_SDK_CHECK(values[k] <= INT32_MAX, "value %lld does not fit the int32 output; use "
                   "out_type int64", static_cast<long long>(values[k]));
      out[k] = static_cast<int32_t>(values[k]);
    }
  } else {
    int64_t* out = call.AllocateOutput<int64_t>(output, shape);
    for (size_t k = 0; k < values.size(); ++k) out[k] = values[k];
  }
}

class ShapeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    for (size_t k = 0; k < call.num_inputs(); ++k) {
      WriteInts(call, k, {call.input_rank(k)}, call.input_shape(k));
    }
  }
};

class SizeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override { WriteInts(call, 0, {}, {call.input_size(0)}); }
};

class RankKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override { WriteInts(call, 0, {}, {call.input_rank(0)}); }
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
    char* dst = AllocateBytes(call, 0, out);
    for (int64_t k = 0; k < sdk::NumElements(out); ++k) CopyElement(dst, k, Bytes(call, 1), 0, es);
  }
};

class ZerosLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const size_t es = ElementSize(call, 0);
    char* dst = AllocateBytes(call, 0, call.input_shape(0));
    // All-zero bytes are zero (or false) in every supported dtype.
    for (int64_t k = 0; k < call.input_size(0) * static_cast<int64_t>(es); ++k) dst[k] = 0;
  }
};

class OnesLikeKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = call.AllocateOutput<T>(0, call.input_shape(0));
      for (int64_t k = 0; k < call.input_size(0); ++k) out[k] = T(1);
    });
  }
};

// Range: start + i * delta, computed in C (see array_shapes::RangeSize).
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
    const Index values = IntegerValues(call, 0);
    const Index i_strides = Strides(indices);
    const size_t es = ElementSize(call, 2);
    char* dst = AllocateBytes(call, 0, out);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i = o;
      i.erase(i.begin() + a);
      // Indices out of [0, depth) give a row of off_value (no error).
      const bool on = values[Offset(i, i_strides)] == o[a];
      CopyElement(dst, k, Bytes(call, on ? 2 : 3), 0, es);
    });
  }

 private:
  int64_t axis_ = -1;
};

// SpaceToBatchND and BatchToSpaceND: output batch index is
// block_offset * batch + b, block_offset row-major over block_shape.
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
    const Index in_strides = Strides(in);
    char* dst = AllocateBytes(call, 0, out);
    const char* src = Bytes(call, 0);
    ForEachIndex(out, [&](const Index& o, int64_t k) {
      Index i = o;
      bool inside = true;
      if (to_batch_) {
        int64_t offset = o[0] / in[0];
        i[0] = o[0] % in[0];
        for (int64_t d = m - 1; d >= 0; --d) {
          const int64_t block_offset = offset % block[d];
          offset /= block[d];
          i[1 + d] = o[1 + d] * block[d] + block_offset - pad[2 * d];
          inside = inside && i[1 + d] >= 0 && i[1 + d] < in[1 + d];
        }
      } else {
        int64_t offset = 0;
        for (int64_t d = 0; d < m; ++d) {
          const int64_t p = o[1 + d] + pad[2 * d];
          offset = offset * block[d] + p % block[d];
          i[1 + d] = p / block[d];
        }
        i[0] = offset * out[0] + o[0];
      }
      if (inside) {
        CopyElement(dst, k, src, Offset(i, in_strides), es);
      } else {
        std::memset(dst + k * es, 0, es);
      }
    });
  }

 private:
  bool to_batch_;
};

class BatchToSpaceKernel : public SpaceBatchKernel {
 public:
  BatchToSpaceKernel() : SpaceBatchKernel(false) {}
};

}  // namespace

PX_Status* RegisterArrayKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> all = sdk::AllTypes();
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  std::vector<PX_DataType> range_types = sdk::FloatTypes();
  for (PX_DataType t : {PX_DT_INT8, PX_DT_INT16, PX_DT_INT32, PX_DT_INT64, PX_DT_UINT16,
                        PX_DT_UINT32}) {
    range_types.push_back(t);
  }
  std::vector<PX_DataType> ones_types = sdk::AllTypes();
  PX_Status* s = nullptr;
  auto reg = [&](PX_Status* status) {
    if (s == nullptr) s = status;
  };
  reg(sdk::RegisterKernel<ReshapeKernel>(info, registrar, sdk::sig::kReshape, {all, index}));
  reg(sdk::RegisterKernel<TransposeKernel>(info, registrar, sdk::sig::kTranspose, {all, index}));
  // ConcatV2's axis is its last input, whose index depends on N: it is read
  // where it lies (host-accessible memory on this device).
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
  reg(sdk::RegisterKernel<ExpandDimsKernel>(info, registrar, sdk::sig::kExpandDims, {all, index}));
  reg(sdk::RegisterKernel<SqueezeKernel>(info, registrar, sdk::sig::kSqueeze, {all}));
  reg(sdk::RegisterKernel<ShapeKernel>(info, registrar, sdk::sig::kShape, {all, index}));
  reg(sdk::RegisterKernel<ShapeKernel>(info, registrar, sdk::sig::kShapeN, {all, index}));
  reg(sdk::RegisterKernel<SizeKernel>(info, registrar, sdk::sig::kSize, {all, index}));
  reg(sdk::RegisterKernel<RankKernel>(info, registrar, sdk::sig::kRank, {all}));
  reg(sdk::RegisterKernel<FillKernel>(info, registrar, sdk::sig::kFill, {all, index}));
  reg(sdk::RegisterKernel<ZerosLikeKernel>(info, registrar, sdk::sig::kZerosLike, {all}));
  reg(sdk::RegisterKernel<OnesLikeKernel>(info, registrar, sdk::sig::kOnesLike, {ones_types}));
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

}  // namespace plexus::reference
