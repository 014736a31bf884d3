// Reference kernels: the linalg family (see reference_kernels.h).
//
// MatMul, BatchMatMul (equal batch dimensions), BatchMatMulV2/V3
// (broadcast batch dimensions) and Einsum, as plain triple loops.
#include <limits>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// Accumulator of a product of X and Y written as Out: double when any of
// them is a float type, else uint64 (integer products and sums wrap, as
// they do in the output type, where int64 would overflow).
template <typename X, typename Y, typename Out>
using Acc = std::conditional_t<kIsFloat<X> || kIsFloat<Y> || kIsFloat<Out>, double, uint64_t>;

template <typename A, typename T>
A Load(const T* p, int64_t i) {
  if constexpr (kIsFloat<T>) {
    return static_cast<A>(static_cast<double>(static_cast<sdk::ComputeType<T>>(p[i])));
  } else if constexpr (std::is_same_v<A, uint64_t>) {
    return static_cast<uint64_t>(static_cast<int64_t>(p[i]));  // sign-extended, then modular
  } else {
    return static_cast<A>(p[i]);
  }
}

template <typename Out, typename A>
Out StoreAs(A v) {
  if constexpr (kIsFloat<Out>) {
    return static_cast<Out>(static_cast<sdk::ComputeType<Out>>(v));
  } else if constexpr (std::is_same_v<A, double>) {
    // A float product stored as an integer: NaN is 0, the rest saturates.
    if (std::isnan(v)) return Out(0);
    if (v <= static_cast<double>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    return static_cast<Out>(v);
  } else {
    return static_cast<Out>(v);  // wraps to the type
  }
}

// out[batch..., m, n] = op(x)[batch..., m, k] * op(y)[batch..., k, n], op
// transposing when adj is set. x and y batch dimensions broadcast when
// `broadcast`, else they must be equal.
template <typename X, typename Y, typename Out>
void BatchMatMul(sdk::Call& call, const char* op, bool adj_x, bool adj_y, bool broadcast) {
  const sdk::Shape xs = call.input_shape(0), ys = call.input_shape(1);
  const sdk::BatchMatMulShape g = sdk::BatchMatMulShapes(op, xs, ys, adj_x, adj_y, broadcast);
  const int64_t m = g.m, k = g.k, n = g.n;
  const sdk::Shape& batch = g.batch;
  const sdk::Shape& xb = g.x_batch;
  const sdk::Shape& yb = g.y_batch;
  const size_t br = batch.size();
  const sdk::Shape& out_shape = g.out;
  const X* x = call.input<X>(0);
  const Y* y = call.input<Y>(1);
  Out* out = call.AllocateOutput<Out>(0, out_shape);
  const int64_t batches = sdk::NumElements(batch);
  std::vector<int64_t> index(br, 0);
  for (int64_t b = 0; b < batches; ++b) {
    // The batch offsets in x and y (a broadcast dimension stays at 0).
    int64_t xo = 0, yo = 0;
    for (size_t i = 0; i < br; ++i) {
      xo = xo * xb[i] + (xb[i] == 1 ? 0 : index[i]);
      yo = yo * yb[i] + (yb[i] == 1 ? 0 : index[i]);
    }
    const X* xm = x + xo * m * k;
    const Y* ym = y + yo * k * n;
    Out* om = out + b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        using A = Acc<X, Y, Out>;
        A sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t xi = adj_x ? p * m + i : i * k + p;
          const int64_t yi = adj_y ? j * k + p : p * n + j;
          sum += Load<A>(xm, xi) * Load<A>(ym, yi);
        }
        om[i * n + j] = StoreAs<Out>(sum);
      }
    }
    for (int64_t d = static_cast<int64_t>(br) - 1; d >= 0; --d) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
}

class MatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
  }
  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(0) == 2 && call.input_rank(1) == 2,
                 "MatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 sdk::ShapeString(call.input_shape(0)).c_str(),
                 sdk::ShapeString(call.input_shape(1)).c_str());
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      BatchMatMul<T, T, T>(call, "MatMul", ta_, tb_, false);
    });
  }

 private:
  bool ta_ = false, tb_ = false;
};

template <bool kBroadcast>
class BatchMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    adj_x_ = attrs.Bool("adj_x", false);
    adj_y_ = attrs.Bool("adj_y", false);
  }
  void Compute(sdk::Call& call) override {
    const char* op = kBroadcast ? "BatchMatMulV2" : "BatchMatMul";
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      BatchMatMul<T, T, T>(call, op, adj_x_, adj_y_, kBroadcast);
    });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

// V3: x, y and output may each have their own dtype.
class BatchMatMulV3Kernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    adj_x_ = attrs.Bool("adj_x", false);
    adj_y_ = attrs.Bool("adj_y", false);
  }
  void Compute(sdk::Call& call) override {
    sdk::VisitNumeric(call.input_dtype(0), [&](auto xtag) {
      sdk::VisitNumeric(call.input_dtype(1), [&](auto ytag) {
        sdk::VisitNumeric(call.output_dtype(0), [&](auto otag) {
          BatchMatMul<typename decltype(xtag)::type, typename decltype(ytag)::type,
                      typename decltype(otag)::type>(call, "BatchMatMulV3", adj_x_, adj_y_,
                                                     true);
        });
      });
    });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

// Einsum with one or two operands, one letter per dimension, no ellipsis
// and no label repeated within an operand. Every combination of label
// values is visited; labels missing from the output are summed over.
class EinsumKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    equation_ = attrs.String("equation");
    std::string lhs = equation_;
    const size_t arrow = equation_.find("->");
    if (arrow != std::string::npos) {
      lhs = equation_.substr(0, arrow);
      output_ = equation_.substr(arrow + 2);
    }
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      operands_.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    std::map<char, int> counts;
    bool supported = operands_.size() <= 2;
    for (const std::string& labels : operands_) {
      for (char c : labels) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!letter || std::count(labels.begin(), labels.end(), c) != 1) supported = false;
        ++counts[c];
      }
    }
    if (arrow == std::string::npos) {
      for (const auto& [c, n] : counts) {
        if (n == 1) output_.push_back(c);
      }
    }
    for (char c : output_) {
      if (std::count(output_.begin(), output_.end(), c) != 1) supported = false;
    }
    supported_ = supported;
    for (char c : output_) {
      PX_SDK_CHECK(counts.count(c), "Einsum output label '%c' appears in no input of '%s'", c,
                   equation_.c_str());
    }
    for (const auto& [c, n] : counts) labels_.push_back(c);
  }

  void Compute(sdk::Call& call) override {
    if (!supported_) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("Einsum equation '%s' is not supported (one or two "
                                         "operands, one letter per dimension, no ellipsis, "
                                         "no repeated labels)",
                                         equation_.c_str()));
    }
    PX_SDK_CHECK(call.num_inputs() == operands_.size(),
                 "Einsum equation '%s' names %zu operands, got %zu inputs", equation_.c_str(),
                 operands_.size(), call.num_inputs());
    std::map<char, int64_t> sizes;
    for (size_t i = 0; i < operands_.size(); ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == operands_[i].size(),
                   "Einsum operand %zu has shape %s but '%s' gives it %zu labels", i,
                   sdk::ShapeString(s).c_str(), equation_.c_str(), operands_[i].size());
      for (size_t d = 0; d < s.size(); ++d) {
        auto it = sizes.find(operands_[i][d]);
        PX_SDK_CHECK(it == sizes.end() || it->second == s[d],
                     "Einsum label '%c' has sizes %lld and %lld in '%s'", operands_[i][d],
                     static_cast<long long>(it == sizes.end() ? 0 : it->second),
                     static_cast<long long>(s[d]), equation_.c_str());
        sizes[operands_[i][d]] = s[d];
      }
    }
    // Strides of every label in every operand and in the output.
    const size_t nl = labels_.size();
    auto strides_of = [&](const std::string& labels) {
      std::vector<int64_t> st(nl, 0);
      int64_t stride = 1;
      for (int64_t d = static_cast<int64_t>(labels.size()) - 1; d >= 0; --d) {
        const size_t l = std::find(labels_.begin(), labels_.end(), labels[d]) - labels_.begin();
        st[l] = stride;
        stride *= sizes[labels[d]];
      }
      return st;
    };
    std::vector<std::vector<int64_t>> in_strides;
    for (const std::string& labels : operands_) in_strides.push_back(strides_of(labels));
    const std::vector<int64_t> out_strides = strides_of(output_);
    sdk::Shape out_shape, extent(nl);
    for (char c : output_) out_shape.push_back(sizes[c]);
    int64_t total = 1;
    for (size_t l = 0; l < nl; ++l) {
      extent[l] = sizes[labels_[l]];
      total *= extent[l];
    }
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<const T*> in;
      for (size_t i = 0; i < operands_.size(); ++i) in.push_back(call.input<T>(i));
      T* out = call.AllocateOutput<T>(0, out_shape);
      std::vector<Acc<T, T, T>> acc(static_cast<size_t>(sdk::NumElements(out_shape)), 0);
      std::vector<int64_t> index(nl, 0);
      for (int64_t t = 0; t < total; ++t) {
        Acc<T, T, T> product = 1;
        for (size_t i = 0; i < in.size(); ++i) {
          int64_t offset = 0;
          for (size_t l = 0; l < nl; ++l) offset += index[l] * in_strides[i][l];
          product *= Load<Acc<T, T, T>>(in[i], offset);
        }
        int64_t o = 0;
        for (size_t l = 0; l < nl; ++l) o += index[l] * out_strides[l];
        acc[o] += product;
        for (int64_t l = static_cast<int64_t>(nl) - 1; l >= 0; --l) {
          if (++index[l] < extent[l]) break;
          index[l] = 0;
        }
      }
      for (size_t o = 0; o < acc.size(); ++o) out[o] = StoreAs<T>(acc[o]);
    });
  }

 private:
  std::string equation_;
  std::vector<std::string> operands_;
  std::string output_;
  std::vector<char> labels_;  // every label, sorted
  bool supported_ = true;
};

}  // namespace

PX_Status* RegisterLinalgKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  std::vector<PX_DataType> matmul = floats;
  matmul.push_back(PX_DT_INT32);
  matmul.push_back(PX_DT_INT64);
  std::vector<PX_DataType> v2 = matmul;
  v2.push_back(PX_DT_INT16);
  std::vector<PX_DataType> v3_in = v2;
  v3_in.push_back(PX_DT_INT8);
  v3_in.push_back(PX_DT_UINT8);
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kMatMul, {matmul})) ||
      (s = sdk::RegisterKernel<BatchMatMulKernel<false>>(info, registrar, sdk::sig::kBatchMatMul,
                                                         {matmul})) ||
      (s = sdk::RegisterKernel<BatchMatMulKernel<true>>(info, registrar, sdk::sig::kBatchMatMulV2,
                                                        {v2})) ||
      (s = sdk::RegisterKernel<BatchMatMulV3Kernel>(info, registrar, sdk::sig::kBatchMatMulV3,
                                                    {v3_in, v3_in, v2})) ||
      (s = sdk::RegisterKernel<EinsumKernel>(info, registrar, sdk::sig::kEinsum, {matmul}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference
