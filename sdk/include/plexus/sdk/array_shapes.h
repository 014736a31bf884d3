// Output shapes of the array (shape and data movement) ops, written once and
// shared by the core's shape functions and by the reference and cpu kernels,
// so that all three agree on every shape and on every error message.
//
// Plain C++ with no dependency (the core includes it too). A dimension of -1
// is unknown (shape functions at import time); kernels pass exact shapes.
// Each function returns an empty string when the arguments are valid, else
// the error message; the caller turns that into INVALID_ARGUMENT.
#ifndef PLEXUS_SDK_ARRAY_SHAPES_H_
#define PLEXUS_SDK_ARRAY_SHAPES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace plexus::array_shapes {

using Dims = std::vector<int64_t>;

inline bool Known(int64_t d) { return d >= 0; }

// "[2,?,3]".
inline std::string Str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

inline void Append(std::string& s, const char* v) { s += v; }
inline void Append(std::string& s, const std::string& v) { s += v; }
inline void Append(std::string& s, const Dims& v) { s += Str(v); }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
void Append(std::string& s, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%g", static_cast<double>(v));
    s += buffer;
  } else {
    s += std::to_string(v);
  }
}
template <typename... A>
std::string Msg(const A&... args) {
  std::string s;
  (Append(s, args), ...);
  return s;
}

// Products and sums that stay unknown (-1) when an operand is unknown (a
// known zero times anything is zero), or when they overflow int64 (a graph
// file may hold any sizes: what cannot be represented is left to the
// kernel, which refuses it at run time).
inline int64_t MulDim(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  int64_t product;
  return Known(a) && Known(b) && !__builtin_mul_overflow(a, b, &product) ? product : -1;
}
inline int64_t AddDim(int64_t a, int64_t b) {
  int64_t sum;
  return Known(a) && Known(b) && !__builtin_add_overflow(a, b, &sum) ? sum : -1;
}
// Whether MulDim(a, b) of two known dimensions would overflow int64.
inline bool MulDimOverflows(int64_t a, int64_t b) {
  int64_t product;
  return Known(a) && Known(b) && __builtin_mul_overflow(a, b, &product);
}
// Number of elements, -1 when a dimension is unknown.
inline int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n = MulDim(n, d);
  return n;
}

// Reshape: `target` may hold one -1, inferred from the element count.
inline std::string Reshape(const Dims& in, const Dims& target, Dims* out) {
  int64_t product = 1;
  int64_t unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (unknown >= 0) {
        return Msg("only one input size may be -1, not both ", unknown, " and ", i);
      }
      unknown = static_cast<int64_t>(i);
    } else if (t < 0) {
      return Msg("size ", i, " must be non-negative, not ", t);
    } else if (__builtin_mul_overflow(product, t, &product)) {
      return Msg("the requested shape's number of elements overflows int64 at size ", i, " (", t, ")");
    }
  }
  *out = target;
  int64_t n = NumElements(in);
  if (unknown >= 0) {
    if (product == 0) {
      return "Reshape cannot infer the missing input size for an empty tensor unless all "
             "specified input sizes are non-zero";
    }
    if (n < 0) return "";
    if (n % product != 0) {
      return Msg("Input to reshape is a tensor with ", n,
                 " values, but the requested shape requires a multiple of ", product);
    }
    (*out)[unknown] = n / product;
  } else if (n >= 0 && n != product) {
    return Msg("Input to reshape is a tensor with ", n, " values, but the requested shape has ",
               product);
  }
  return "";
}

inline std::string Transpose(const Dims& in, const Dims& perm, Dims* out) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (static_cast<int64_t>(perm.size()) != r) {
    return Msg("transpose expects a vector of size ", r, ". But input(1) is a vector of size ",
               perm.size());
  }
  std::vector<bool> seen(r, false);
  out->assign(r, -1);
  for (int64_t i = 0; i < r; ++i) {
    int64_t d = perm[i];
    if (d < 0 || d >= r) return Msg(d, " is out of range [0 .. ", r, ")");
    if (seen[d]) return Msg(d, " appears more than once in the permutation ", perm);
    seen[d] = true;
    (*out)[i] = in[d];
  }
  return "";
}

// ConcatV2 and Concat. Every input has the same (known) rank.
inline std::string Concat(const std::vector<Dims>& ins, int64_t axis, Dims* out) {
  const int64_t r = static_cast<int64_t>(ins[0].size());
  if (r == 0) return "Can't concatenate scalars (use tf.stack instead)";
  if (axis < -r || axis >= r) {
    return Msg("ConcatOp : Expected concatenating dimensions in the range [", -r, ", ", r,
               "), but got ", axis);
  }
  const int64_t a = axis < 0 ? axis + r : axis;
  *out = ins[0];
  for (size_t k = 1; k < ins.size(); ++k) {
    const Dims& s = ins[k];
    if (static_cast<int64_t>(s.size()) != r) {
      return Msg("ConcatOp : Ranks of all input tensors should match: shape[0] = ", ins[0],
                 " vs. shape[", k, "] = ", s);
    }
    for (int64_t d = 0; d < r; ++d) {
      if (d == a) continue;
      if (Known((*out)[d]) && Known(s[d]) && (*out)[d] != s[d]) {
        return Msg("ConcatOp : Dimension ", d, " in both shapes must be equal: shape[0] = ",
                   ins[0], " vs. shape[", k, "] = ", s);
      }
      if (!Known((*out)[d])) (*out)[d] = s[d];
    }
    int64_t sum = 0;
    if (Known((*out)[a]) && Known(s[a]) && __builtin_add_overflow((*out)[a], s[a], &sum)) {
      return Msg("ConcatOp : the concatenated dimension ", a, " (", (*out)[a], " + ", s[a], " at input ", k,
                 ") overflows int64");
    }
    (*out)[a] = AddDim((*out)[a], s[a]);
  }
  return "";
}

inline std::string SplitAxis(int64_t rank, int64_t axis, int64_t* a) {
  if (axis < -rank || axis >= rank) {
    return Msg("-input rank(-", rank, ") <= split_dim < input rank (", rank, "), but got ", axis);
  }
  *a = axis < 0 ? axis + rank : axis;
  return "";
}

// Split: `num_split` equal pieces; *out is the shape of each.
inline std::string Split(const Dims& in, int64_t axis, int64_t num_split, Dims* out) {
  int64_t a = 0;
  std::string e = SplitAxis(static_cast<int64_t>(in.size()), axis, &a);
  if (!e.empty()) return e;
  if (num_split <= 0) return Msg("Number of ways to split should be > 0, but got ", num_split);
  *out = in;
  if (Known(in[a])) {
    if (in[a] % num_split != 0) {
      return Msg("Number of ways to split should evenly divide the split dimension, but got "
                 "split_dim ", axis, " (size = ", in[a], ") and num_split ", num_split);
    }
    (*out)[a] = in[a] / num_split;
  }
  return "";
}

// SplitV: pieces of the given sizes (one may be -1).
inline std::string SplitV(const Dims& in, const Dims& sizes, int64_t axis, int64_t num_split,
                          std::vector<Dims>* outs) {
  int64_t a = 0;
  std::string e = SplitAxis(static_cast<int64_t>(in.size()), axis, &a);
  if (!e.empty()) return e;
  if (static_cast<int64_t>(sizes.size()) != num_split) {
    return Msg("size_splits has ", sizes.size(), " values but num_split is ", num_split);
  }
  int64_t unknown = -1;
  int64_t sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) return "There can only be one -1 in the input.";
      unknown = static_cast<int64_t>(i);
    } else if (sizes[i] < 0) {
      return Msg("Split size at index ", i, " must be >= 0. Got: ", sizes[i]);
    } else {
      sum += sizes[i];
    }
  }
  const int64_t d = in[a];
  if (Known(d) && ((unknown < 0 && sum != d) || (unknown >= 0 && sum > d))) {
    return Msg("Determined shape must either match input shape along split_dim exactly if fully "
               "specified, or be less than the size of the input along split_dim if not fully "
               "specified.  Got: ", sum);
  }
  outs->assign(sizes.size(), in);
  for (size_t i = 0; i < sizes.size(); ++i) {
    (*outs)[i][a] = static_cast<int64_t>(i) == unknown ? (Known(d) ? d - sum : -1) : sizes[i];
  }
  return "";
}

inline std::string Slice(const Dims& in, const Dims& begin, const Dims& size, Dims* out) {
  const size_t r = in.size();
  if (begin.size() != r || size.size() != r) {
    return Msg("Expected begin and size arguments to be 1-D tensors of size ", r,
               ", but got shapes [", begin.size(), "] and [", size.size(), "] instead.");
  }
  out->assign(r, -1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t b = begin[i], s = size[i], d = in[i];
    if (b < 0 || (Known(d) && b > d)) {
      return Msg("Expected begin[", i, "] in [0, ", Known(d) ? std::to_string(d) : "?",
                 "], but got ", b);
    }
    if (s == -1) {
      (*out)[i] = Known(d) ? d - b : -1;
    } else if (s < 0 || (Known(d) && s > d - b)) {
      return Msg("Expected size[", i, "] in [0, ", Known(d) ? std::to_string(d - b) : "?",
                 "], but got ", s);
    } else {
      (*out)[i] = s;
    }
  }
  return "";
}

// StridedSlice, following TensorFlow's ValidateStridedSliceOp: the sparse
// spec (begin/end/strides with their masks) becomes one (begin, end, stride)
// per input dimension; `processing` is the sliced shape before new axes are
// added and shrunk axes removed, `final_shape` the output shape.
struct StridedSliceResult {
  Dims begin, end, strides;  // per input dimension, canonical
  Dims processing;           // per input dimension
  Dims final_shape;
  bool is_identity = false;
};

// `begin` and `end` may be null (unknown values: shape functions); strides
// must be known. Input dimensions may be unknown (-1).
inline std::string StridedSlice(const Dims& in, const Dims* begin, const Dims* end,
                                const Dims& strides, int64_t begin_mask, int64_t end_mask,
                                int64_t ellipsis_mask, int64_t new_axis_mask,
                                int64_t shrink_axis_mask, StridedSliceResult* out) {
  const int64_t n = static_cast<int64_t>(strides.size());
  if ((begin != nullptr && static_cast<int64_t>(begin->size()) != n) ||
      (end != nullptr && static_cast<int64_t>(end->size()) != n) || n >= 32) {
    return Msg("Expected begin, end, and strides to be 1D equal size tensors, but got sizes ",
               begin ? std::to_string(begin->size()) : "?", ", ",
               end ? std::to_string(end->size()) : "?", ", and ", n, " instead.");
  }
  const uint64_t ellipsis_bits = static_cast<uint64_t>(ellipsis_mask);  // any int64, even INT64_MIN
  if ((ellipsis_bits & (ellipsis_bits - 1)) != 0) {
    return "Multiple ellipses in slice spec not allowed";
  }
  // Step 1: the sparse spec, with an implicit ellipsis at the end when none.
  int64_t sparse_dims = n;
  int64_t sparse_ellipsis = ellipsis_mask;
  int64_t num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int64_t i = 0; i < n; ++i) {
    if (ellipsis_seen && ((int64_t{1} << i) & new_axis_mask) != 0) ++num_add_axis_after_ellipsis;
    if ((int64_t{1} << i) & ellipsis_mask) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    sparse_ellipsis |= (int64_t{1} << sparse_dims);
    ++sparse_dims;
  }
  // Step 2: the dense spec, one entry per input dimension.
  const int64_t dims = static_cast<int64_t>(in.size());
  constexpr int64_t kNewAxis = -1, kShrinkAxis = -2;
  out->begin.assign(dims, 0);
  out->end.assign(dims, 0);
  out->strides.assign(dims, 1);
  int64_t dense_begin_mask = 0, dense_end_mask = 0, dense_shrink = 0;
  std::vector<int64_t> gather;  // final dimension -> dense dimension or kNewAxis/kShrinkAxis
  int64_t full = 0;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (bit & sparse_ellipsis) {
      int64_t next = std::min(dims - (sparse_dims - i) + 1 + num_add_axis_after_ellipsis, dims);
      for (; full < next; ++full) {
        out->begin[full] = out->end[full] = 0;
        out->strides[full] = 1;
        dense_begin_mask |= int64_t{1} << full;
        dense_end_mask |= int64_t{1} << full;
        gather.push_back(full);
      }
    } else if (bit & new_axis_mask) {
      gather.push_back(kNewAxis);
    } else {
      if (full == dims) {
        return Msg("Index out of range using input dim ", full, "; input has only ", dims,
                   " dims");
      }
      if (begin != nullptr) out->begin[full] = (*begin)[i];
      if (end != nullptr) out->end[full] = (*end)[i];
      out->strides[full] = strides[i];
      if (begin_mask & bit) dense_begin_mask |= int64_t{1} << full;
      if (end_mask & bit) dense_end_mask |= int64_t{1} << full;
      if (shrink_axis_mask & bit) {
        gather.push_back(kShrinkAxis);
        dense_shrink |= int64_t{1} << full;
      } else {
        gather.push_back(full);
      }
      ++full;
    }
  }
  // Step 3: explicit, bounds-checked ranges and the processing shape.
  const bool values_known = begin != nullptr && end != nullptr;
  out->is_identity = true;
  out->processing.clear();
  for (int64_t i = 0; i < dims; ++i) {
    int64_t& begin_i = out->begin[i];
    int64_t& end_i = out->end[i];
    const int64_t stride_i = out->strides[i];
    const int64_t dim_i = in[i];
    const int64_t bit = int64_t{1} << i;
    if (stride_i == 0) return Msg("strides[", i, "] must be non-zero");
    const bool shrink_i = (dense_shrink & bit) != 0;
    if (dim_i < 0) {
      out->processing.push_back(shrink_i ? 1 : -1);
      out->is_identity = false;
      continue;
    }
    const bool begin_masked = (dense_begin_mask & bit) != 0;
    const bool end_masked = (dense_end_mask & bit) != 0;
    const int64_t lo = stride_i > 0 ? 0 : -1;
    const int64_t hi = stride_i > 0 ? dim_i : dim_i - 1;
    auto canonical = [&](int64_t x, int c) {
      if (c == 0 ? begin_masked : end_masked) {
        // A masked begin is the first element in the direction of the
        // stride; a masked end is one past the last.
        return (stride_i > 0) == (c == 0) ? lo : hi;
      }
      int64_t x_fwd = x < 0 ? dim_i + x : x;
      return x_fwd < lo ? lo : x_fwd > hi ? hi : x_fwd;
    };
    if (shrink_i && stride_i <= 0) return "only stride 1 allowed on non-range indexing.";
    if (values_known) {
      if (shrink_i) {
        int64_t x_fwd = begin_i < 0 ? dim_i + begin_i : begin_i;
        if (x_fwd < 0 || x_fwd >= dim_i) {
          return Msg("slice index ", begin_i, " of dimension ", i, " out of bounds.");
        }
        begin_i = x_fwd;
        end_i = begin_i + 1;
      } else {
        begin_i = canonical(begin_i, 0);
        end_i = canonical(end_i, 1);
      }
      out->is_identity &= stride_i == 1 && begin_i == 0 && end_i == dim_i;
    } else {
      out->is_identity &= stride_i == 1 && begin_masked && end_masked;
    }
    int64_t interval = 0;
    bool known_interval = false;
    if (values_known) {
      interval = end_i - begin_i;
      known_interval = true;
    } else if (shrink_i) {
      interval = 1;
      known_interval = true;
    } else if (begin_masked && end_masked) {
      interval = stride_i < 0 ? -dim_i : dim_i;
      known_interval = true;
    }
    if (known_interval) {
      int64_t size_i;
      if (interval == 0 || ((interval < 0) != (stride_i < 0))) {
        size_i = 0;
      } else {
        size_i = interval / stride_i + (interval % stride_i != 0 ? 1 : 0);
      }
      out->processing.push_back(size_i);
    } else {
      out->processing.push_back(-1);
    }
  }
  // Step 4: the final shape.
  out->final_shape.clear();
  for (int64_t g : gather) {
    if (g >= 0) {
      out->final_shape.push_back(out->processing[g]);
    } else if (g == kNewAxis) {
      out->final_shape.push_back(1);
    }
  }
  return "";
}

// Pack: every input has the same shape; the output inserts N at `axis`.
inline std::string Pack(const std::vector<Dims>& ins, int64_t axis, Dims* out) {
  Dims merged = ins[0];
  for (size_t k = 1; k < ins.size(); ++k) {
    bool same = ins[k].size() == merged.size();
    for (size_t d = 0; same && d < merged.size(); ++d) {
      if (Known(merged[d]) && Known(ins[k][d]) && merged[d] != ins[k][d]) same = false;
      if (!Known(merged[d])) merged[d] = ins[k][d];
    }
    if (!same) {
      return Msg("Shapes of all inputs must match: values[0].shape = ", ins[0], " != values[", k,
                 "].shape = ", ins[k]);
    }
  }
  const int64_t r = static_cast<int64_t>(merged.size());
  if (axis < -(r + 1) || axis > r) {
    return Msg("axis = ", axis, " not in [", -(r + 1), ", ", r + 1, ")");
  }
  const int64_t a = axis < 0 ? axis + r + 1 : axis;
  *out = merged;
  out->insert(out->begin() + a, static_cast<int64_t>(ins.size()));
  return "";
}

inline std::string Unpack(const Dims& in, int64_t axis, int64_t num, Dims* out) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (axis < -r || axis >= r) return Msg("axis = ", axis, " not in [", -r, ", ", r, ")");
  const int64_t a = axis < 0 ? axis + r : axis;
  if (Known(in[a]) && in[a] != num) {
    return Msg("Input shape axis ", a, " must equal ", num, ", got shape ", in);
  }
  *out = in;
  out->erase(out->begin() + a);
  return "";
}

// GatherV2 (Gather is axis 0, batch_dims 0). *axis_out and *batch_out get
// the canonical (non-negative) values.
inline std::string Gather(const Dims& params, const Dims& indices, int64_t axis,
                          int64_t batch_dims, Dims* out, int64_t* axis_out = nullptr,
                          int64_t* batch_out = nullptr) {
  const int64_t pr = static_cast<int64_t>(params.size());
  const int64_t ir = static_cast<int64_t>(indices.size());
  if (pr < 1) return Msg("params must be at least 1 dimensional, got shape ", params);
  if (axis < -pr || axis >= pr) {
    return Msg("Expected axis in the range [", -pr, ", ", pr, "), but got ", axis);
  }
  const int64_t a = axis < 0 ? axis + pr : axis;
  int64_t b = batch_dims < 0 ? batch_dims + ir : batch_dims;
  if (b < 0 || b > ir) {
    return Msg("Expected batch_dims in the range [", -ir, ", ", ir, "], but got ", batch_dims);
  }
  if (b > a) return Msg("batch_dims (", b, ") must be less than or equal to axis (", a, ").");
  out->clear();
  for (int64_t i = 0; i < b; ++i) {
    if (Known(params[i]) && Known(indices[i]) && params[i] != indices[i]) {
      return Msg("params.shape[", i, "]: ", params[i], " should be equal to indices.shape[", i,
                 "]: ", indices[i]);
    }
  }
  for (int64_t i = 0; i < a; ++i) {
    out->push_back(i < b && !Known(params[i]) ? indices[i] : params[i]);
  }
  for (int64_t i = b; i < ir; ++i) out->push_back(indices[i]);
  for (int64_t i = a + 1; i < pr; ++i) out->push_back(params[i]);
  if (axis_out) *axis_out = a;
  if (batch_out) *batch_out = b;
  return "";
}

// GatherNd: the innermost dimension of `indices` must be known.
inline std::string GatherNd(const Dims& params, const Dims& indices, Dims* out) {
  if (indices.empty()) return Msg("indices must be at least a vector, got shape ", indices);
  const int64_t k = indices.back();
  if (k > static_cast<int64_t>(params.size())) {
    return Msg("index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
               params.size());
  }
  out->assign(indices.begin(), indices.end() - 1);
  for (size_t i = static_cast<size_t>(k); i < params.size(); ++i) out->push_back(params[i]);
  return "";
}

// Pad, PadV2 and MirrorPad. `pad` is the [rank, 2] paddings matrix, row
// major; `mirror` is 0 for plain padding, 1 for REFLECT, 2 for SYMMETRIC.
inline std::string Pad(const Dims& in, const Dims& pad_shape, const Dims& pad, int mirror,
                       Dims* out) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (pad_shape.size() != 2 || pad_shape[0] != r || pad_shape[1] != 2) {
    return Msg("paddings must be a matrix of shape [", r, ",2] for an input of shape ", in,
               ", got ", pad_shape);
  }
  out->assign(r, -1);
  for (int64_t i = 0; i < r; ++i) {
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    if (before < 0 || after < 0) {
      return Msg("Paddings must be non-negative: ", before, " ", after);
    }
    if (mirror == 1 && Known(in[i]) && (before >= in[i] || after >= in[i])) {
      return Msg("paddings must be less than the dimension size: ", before, ", ", after,
                 " not less than ", in[i]);
    }
    if (mirror == 2 && Known(in[i]) && (before > in[i] || after > in[i])) {
      return Msg("paddings must be no greater than the dimension size: ", before, ", ", after,
                 " greater than ", in[i]);
    }
    int64_t total = 0;
    if (__builtin_add_overflow(before, after, &total) || (Known(in[i]) && __builtin_add_overflow(in[i], total, &total))) {
      return Msg("Dimension ", i, " of size ", in[i], " padded by ", before, " and ", after, " overflows int64");
    }
    (*out)[i] = AddDim(in[i], before + after);
  }
  return "";
}

inline std::string Tile(const Dims& in, const Dims& multiples, Dims* out) {
  if (multiples.size() != in.size()) {
    return Msg("Expected multiples argument to be a vector of length ", in.size(),
               " but got length ", multiples.size());
  }
  out->assign(in.size(), -1);
  for (size_t i = 0; i < in.size(); ++i) {
    if (multiples[i] < 0) return Msg("Expected multiples[", i, "] >= 0, but got ", multiples[i]);
    if (MulDimOverflows(in[i], multiples[i])) {
      return Msg("Dimension ", i, " of size ", in[i], " times multiples[", i, "] = ", multiples[i],
                 " overflows int64");
    }
    (*out)[i] = MulDim(in[i], multiples[i]);
  }
  return "";
}

inline std::string ExpandDims(const Dims& in, const Dims& dim, Dims* out) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (dim.size() != 1) return Msg("'dim' must be a tensor with a single value, got ", dim.size());
  int64_t d = dim[0];
  if (d < -1 - r || d > r) {
    return Msg("Tried to expand dim index ", d, " for tensor with ", r, " dimensions.");
  }
  if (d < 0) d += r + 1;
  *out = in;
  out->insert(out->begin() + d, 1);
  return "";
}

// Squeeze. With no squeeze_dims every dimension of size 1 goes; an unknown
// dimension then makes the output rank unknown (*rank_unknown set).
inline std::string Squeeze(const Dims& in, const Dims& squeeze_dims, Dims* out,
                           bool* rank_unknown) {
  const int64_t r = static_cast<int64_t>(in.size());
  *rank_unknown = false;
  std::vector<bool> drop(r, false);
  for (int64_t s : squeeze_dims) {
    if (s < -r || s >= r) {
      return Msg("Tried to squeeze dim index ", s, " for tensor with ", r, " dimensions.");
    }
    drop[s < 0 ? s + r : s] = true;
  }
  out->clear();
  for (int64_t i = 0; i < r; ++i) {
    if (squeeze_dims.empty()) {
      if (!Known(in[i])) *rank_unknown = true;
      if (in[i] != 1) out->push_back(in[i]);
    } else if (drop[i]) {
      if (Known(in[i]) && in[i] != 1) {
        return Msg("Can not squeeze dim[", i, "], expected a dimension of 1, got ", in[i]);
      }
    } else {
      out->push_back(in[i]);
    }
  }
  return "";
}

inline std::string Fill(const Dims& dims, Dims* out) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return Msg("dims[", i, "] = ", dims[i], " must be nonnegative.");
  }
  *out = dims;
  return "";
}

inline std::string OneHot(const Dims& indices, int64_t depth, int64_t axis, Dims* out,
                          int64_t* axis_out = nullptr) {
  const int64_t r = static_cast<int64_t>(indices.size());
  if (depth < 0) return Msg("depth must be non-negative, got: ", depth);
  if (axis < -1 || axis > r) {
    return Msg("Expected axis to be -1 or between [0, ", r + 1, ").  But received: ", axis);
  }
  const int64_t a = axis == -1 ? r : axis;
  *out = indices;
  out->insert(out->begin() + a, depth);
  if (axis_out) *axis_out = a;
  return "";
}

inline std::string BroadcastTo(const Dims& in, const Dims& shape, Dims* out) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) return Msg("shape[", i, "] = ", shape[i], " must be non-negative");
  }
  if (in.size() > shape.size()) {
    return Msg("Rank of input (", in.size(), ") must be no greater than rank of output shape (",
               shape.size(), ").");
  }
  const size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t d = in[i], t = shape[lead + i];
    if (Known(d) && d != 1 && d != t) {
      return Msg("Unable to broadcast tensor of shape ", in, " to tensor of shape ", shape);
    }
  }
  *out = shape;
  return "";
}

// SpaceToBatchND (to_batch) and BatchToSpaceND (crops instead of paddings).
inline std::string SpaceBatch(bool to_batch, const Dims& in, const Dims& block_shape_dims,
                              const Dims& block, const Dims& pad_shape, const Dims& pad,
                              Dims* out) {
  const char* what = to_batch ? "paddings" : "crops";
  if (block_shape_dims.size() != 1) {
    return Msg("block_shape must be 1-D, got shape ", block_shape_dims);
  }
  const int64_t m = static_cast<int64_t>(block.size());
  if (pad_shape.size() != 2 || pad_shape[0] != m || pad_shape[1] != 2) {
    return Msg(what, " should have shape [", m, ", 2] instead of ", pad_shape);
  }
  const int64_t r = static_cast<int64_t>(in.size());
  if (r < 1 + m) return Msg("input rank should be >= ", 1 + m, " instead of ", r);
  int64_t prod = 1;
  for (int64_t i = 0; i < m; ++i) {
    if (block[i] < 1) return Msg("All values in block_shape must be positive, got ", block);
    if (__builtin_mul_overflow(prod, block[i], &prod)) {
      return Msg("the product of block_shape ", block, " overflows int64");
    }
  }
  for (int64_t v : pad) {
    if (v < 0) return Msg("All values in ", what, " must be non-negative, got ", pad);
  }
  *out = in;
  if (to_batch) {
    if (MulDimOverflows(in[0], prod)) {
      return Msg("the batch dimension ", in[0], " times the block product ", prod, " overflows int64");
    }
    (*out)[0] = MulDim(in[0], prod);
  } else {
    if (Known(in[0]) && in[0] % prod != 0) {
      return Msg("Input batch dimension (", in[0], ") is not divisible by product of block sizes (",
                 prod, ")");
    }
    (*out)[0] = Known(in[0]) ? in[0] / prod : -1;
  }
  for (int64_t i = 0; i < m; ++i) {
    const int64_t d = in[1 + i], b = block[i], lo = pad[2 * i], hi = pad[2 * i + 1];
    if (!Known(d)) {
      (*out)[1 + i] = -1;
    } else if (to_batch) {
      int64_t padded = 0;
      if (__builtin_add_overflow(d, lo, &padded) || __builtin_add_overflow(padded, hi, &padded)) {
        return Msg("padded_shape[", i, "] (", d, " + ", lo, " + ", hi, ") overflows int64");
      }
      if (padded % b != 0) {
        return Msg("padded_shape[", i, "]=", padded, " is not divisible by block_shape[", i,
                   "]=", b);
      }
      (*out)[1 + i] = padded / b;
    } else {
      int64_t size = 0;
      if (__builtin_mul_overflow(d, b, &size)) {
        return Msg("dimension ", 1 + i, " of size ", d, " times block_shape[", i, "]=", b, " overflows int64");
      }
      if (lo > size || hi > size - lo) {
        return Msg("Negative output dimension size caused by overly large crop values: crops[",
                   i, "] = [", lo, ", ", hi, "] for a block of ", size);
      }
      size = size - lo - hi;
      if (size < 0) {
        return Msg("Negative output dimension size caused by overly large crop values: crops[",
                   i, "] = [", lo, ", ", hi, "] for a block of ", d * b);
      }
      (*out)[1 + i] = size;
    }
  }
  return "";
}

// ReverseV2: `axis` (of shape `axis_shape`) names distinct dimensions in
// [-rank, rank); (*reversed)[d] is set for each. TensorFlow's kernel returns
// a scalar or an empty input unchanged without looking at axis, so callers
// check only inputs with elements (`rank` > 0).
inline std::string ReverseAxes(int64_t rank, const Dims& axis_shape, const Dims& axis,
                               std::vector<bool>* reversed) {
  if (axis_shape.size() != 1) return Msg("'dims' must be 1-dimension, not ", axis_shape.size());
  reversed->assign(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axis.size(); ++i) {
    const int64_t d = axis[i] < 0 ? axis[i] + rank : axis[i];
    if (d < 0 || d >= rank) {
      return Msg("'axis'[", i, "] = ", axis[i], " is out of valid range [0, ", rank - 1, "]");
    }
    if ((*reversed)[d]) return Msg("axis ", d, " specified more than once.");
    (*reversed)[d] = true;
  }
  return "";
}

// Cumsum and Cumprod: the scan axis is a scalar in [-rank, rank); *a gets it
// made non-negative (and the message shows that value, as TensorFlow's does).
inline std::string ScanAxis(int64_t rank, const Dims& axis_shape, int64_t axis, int64_t* a) {
  if (!axis_shape.empty()) return Msg("ScanOp: axis must be a scalar, not ", axis_shape);
  *a = axis < 0 ? axis + rank : axis;
  if (*a < 0 || *a >= rank) {
    return Msg("ScanOp: Expected scan axis in the range [", -rank, ", ", rank, "), but got ", *a);
  }
  return "";
}

// MatrixBandPart: input of rank >= 2, scalar band widths; a width is
// negative (the whole triangle) or at most the number of rows (lower) or
// columns (upper). Dimensions may be unknown (-1); `lower` and `upper` may be
// null (unknown values).
inline std::string MatrixBandPart(const Dims& in, const Dims& lower_shape,
                                  const Dims& upper_shape, const int64_t* lower,
                                  const int64_t* upper) {
  if (in.size() < 2) return Msg("input must be at least 2-dim, received shape: ", in);
  if (!lower_shape.empty()) return Msg("num_lower must be scalar, got shape ", lower_shape);
  if (!upper_shape.empty()) return Msg("num_upper must be scalar, got shape ", upper_shape);
  const int64_t rows = in[in.size() - 2], cols = in[in.size() - 1];
  if (lower != nullptr && Known(rows) && *lower > rows) {
    return Msg("num_lower must be negative or less or equal to number of rows (", rows,
               ") got: ", *lower);
  }
  if (upper != nullptr && Known(cols) && *upper > cols) {
    return Msg("num_upper must be negative or less or equal to number of columns (", cols,
               ") got: ", *upper);
  }
  return "";
}

// Range: the number of elements, computed in C (int64_t for integer types,
// float for float, half and bfloat16, double for double).
template <typename C>
std::string RangeSize(C start, C limit, C delta, int64_t* size) {
  if (delta == 0) return Msg("Requires delta != 0: ", delta);
  if (delta > 0 && start > limit) {
    return Msg("Requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return Msg("Requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<C>) {
    const uint64_t span = start < limit ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                        : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step = delta < 0 ? uint64_t{0} - static_cast<uint64_t>(delta)
                                    : static_cast<uint64_t>(delta);
    *size = static_cast<int64_t>(span / step + (span % step != 0 ? 1 : 0));
  } else {
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      return Msg("Range requires finite start, limit and delta, got ", start, ", ", limit, ", ",
                 delta);
    }
    C n = std::ceil(std::fabs((limit - start) / delta));
    if (!(n <= static_cast<C>(std::numeric_limits<int64_t>::max() / 2))) {
      return Msg("Requires ((limit - start) / delta) <= ", std::numeric_limits<int64_t>::max());
    }
    *size = static_cast<int64_t>(n);
  }
  return "";
}

}  // namespace plexus::array_shapes

#endif  // PLEXUS_SDK_ARRAY_SHAPES_H_
