// CPU kernels: the linalg family, written with sdk::OpKernel.
//
// MatMul, BatchMatMul (equal batch dimensions), BatchMatMulV2/V3
// (broadcast batch dimensions) and Einsum. Every product is a dense
// row-major Gemm (linalg_gemm.h: a GEMM library or Eigen); Einsum permutes
// its operands into batched matrix products.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "kernels/conv_onednn.h"
#include "kernels/linalg_gemm.h"
#include "kernels/linalg_transpose.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/linalg_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// Converts between element types through their compute types (integers
// wrap like a C cast; a float stored as an integer saturates, NaN is 0, as
// in the reference plugin).
template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsFloat<From> && !kIsFloat<To>) {
    const double d = static_cast<double>(static_cast<sdk::ComputeType<From>>(v));
    if (std::isnan(d)) return To(0);
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else if constexpr (kIsFloat<To> || kIsFloat<From>) {
    return static_cast<To>(static_cast<sdk::ComputeType<To>>(
        static_cast<sdk::ComputeType<From>>(v)));
  } else {
    return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
}

// out[batch..., m, n] = op(x)[batch..., m, k] * op(y)[batch..., k, n].
template <typename T>
void BatchProduct(sdk::Call& call, const char* op, const T* x, const sdk::Shape& xs, const T* y,
                  const sdk::Shape& ys, bool adj_x, bool adj_y, bool broadcast) {
  const sdk::BatchMatMulShape g = sdk::BatchMatMulShapes(op, xs, ys, adj_x, adj_y, broadcast);
  const int64_t m = g.m, k = g.k, n = g.n;
  const sdk::Shape& batch = g.batch;
  const sdk::Shape& xb = g.x_batch;
  const sdk::Shape& yb = g.y_batch;
  const size_t br = batch.size();
  const sdk::Shape& out_shape = g.out;
  T* out = call.AllocateOutput<T>(0, out_shape);
  const int64_t batches = sdk::NumElements(batch);
  const int64_t x_batches = sdk::NumElements(xb), y_batches = sdk::NumElements(yb);
  if (batches == 0 || m == 0 || n == 0) return;
  if (y_batches == 1 && !adj_x) {
    // One right-hand matrix for every batch: a single product with the
    // batches stacked as rows.
    // (Every batch dimension of y is 1, so the output batches are x's.)
    Gemm<T>(false, adj_y, x_batches * m, n, k, x, y, out);
    return;
  }
  std::vector<int64_t> index(br, 0);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t xo = 0, yo = 0;
    for (size_t i = 0; i < br; ++i) {
      xo = xo * xb[i] + (xb[i] == 1 ? 0 : index[i]);
      yo = yo * yb[i] + (yb[i] == 1 ? 0 : index[i]);
    }
    Gemm<T>(adj_x, adj_y, m, n, k, x + xo * m * k, y + yo * k * n, out + b * m * n);
    for (int64_t d = static_cast<int64_t>(br) - 1; d >= 0; --d) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
}

template <typename F>
void VisitMatMulType(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_FLOAT: f(sdk::TypeTag<float>{}); return;
    case PX_DT_DOUBLE: f(sdk::TypeTag<double>{}); return;
    case PX_DT_HALF: f(sdk::TypeTag<sdk::half>{}); return;
    case PX_DT_BFLOAT16: f(sdk::TypeTag<sdk::bfloat16>{}); return;
    case PX_DT_INT32: f(sdk::TypeTag<int32_t>{}); return;
    case PX_DT_INT64: f(sdk::TypeTag<int64_t>{}); return;
    case PX_DT_INT16: f(sdk::TypeTag<int16_t>{}); return;
    case PX_DT_INT8: f(sdk::TypeTag<int8_t>{}); return;
    case PX_DT_UINT8: f(sdk::TypeTag<uint8_t>{}); return;
    default: sdk::UnsupportedType(t, "matrix product");
  }
}

class MatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
    // Constant float weights: oneDNN's matmul, packed once (conv_onednn.h).
    packed_ = sdk::ConstantInput(attrs, 1) && !ta_ && !tb_;
    onednn_.set_constant_filter(true);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape a = call.input_shape(0), b = call.input_shape(1);
    PX_SDK_CHECK(a.size() == 2 && b.size() == 2,
                 "MatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 sdk::ShapeString(a).c_str(), sdk::ShapeString(b).c_str());
    const int64_t m = ta_ ? a[1] : a[0], k = ta_ ? a[0] : a[1];
    const int64_t kb = tb_ ? b[1] : b[0], n = tb_ ? b[0] : b[1];
    PX_SDK_CHECK(k == kb,
                 "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%s, "
                 "transpose_b=%s)",
                 sdk::ShapeString(a).c_str(), sdk::ShapeString(b).c_str(),
                 ta_ ? "true" : "false", tb_ ? "true" : "false");
    VisitMatMulType(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = call.AllocateOutput<T>(0, {m, n});
      if constexpr (std::is_same_v<T, float>) {
        // (Not when the output shares memory with the input.)
        if (packed_ && m > 0 && n > 0 && k > 0 && !BuffersOverlap(call.input<float>(0), m * k, out, m * n) &&
            onednn_.RunProduct(m, k, n, call.input<float>(0), call.input<float>(1), nullptr, out)) {
          return;
        }
      }
      Gemm<T>(ta_, tb_, m, n, k, call.input<T>(0), call.input<T>(1), out);
    });
  }

 private:
  bool ta_ = false, tb_ = false;
  bool packed_ = false;
  OneDnnConv onednn_;
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
    VisitMatMulType(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      BatchProduct<T>(call, op, call.input<T>(0), call.input_shape(0), call.input<T>(1),
                      call.input_shape(1), adj_x_, adj_y_, kBroadcast);
    });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

// V3: inputs of another dtype than the output are converted to it first.
class BatchMatMulV3Kernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    adj_x_ = attrs.Bool("adj_x", false);
    adj_y_ = attrs.Bool("adj_y", false);
  }
  void Compute(sdk::Call& call) override {
    VisitMatMulType(call.output_dtype(0), [&](auto otag) {
      using Out = typename decltype(otag)::type;
      std::vector<Out> converted[2];
      const Out* operand[2];
      for (size_t i = 0; i < 2; ++i) {
        if (call.input_dtype(i) == sdk::DtypeFor<Out>()) {
          operand[i] = call.input<Out>(i);
          continue;
        }
        VisitMatMulType(call.input_dtype(i), [&](auto itag) {
          using In = typename decltype(itag)::type;
          const In* p = call.input<In>(i);
          converted[i].resize(static_cast<size_t>(call.input_size(i)));
          for (size_t e = 0; e < converted[i].size(); ++e) {
            converted[i][e] = Convert<Out>(p[e]);
          }
        });
        operand[i] = converted[i].data();
      }
      BatchProduct<Out>(call, "BatchMatMulV3", operand[0], call.input_shape(0), operand[1],
                        call.input_shape(1), adj_x_, adj_y_, true);
    });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

// Sums the trailing `inner` elements of each of `outer` rows.
template <typename T>
std::vector<T> SumTail(const std::vector<T>& in, int64_t outer, int64_t inner) {
  // Integers add in uint64: the sum wraps as in the type, never overflows.
  using A = std::conditional_t<kIsFloat<T>, double, uint64_t>;
  std::vector<T> out(static_cast<size_t>(outer));
  for (int64_t o = 0; o < outer; ++o) {
    A sum = 0;
    for (int64_t i = 0; i < inner; ++i) sum += static_cast<A>(static_cast<sdk::ComputeType<T>>(in[o * inner + i]));
    out[o] = static_cast<T>(static_cast<sdk::ComputeType<T>>(sum));
  }
  return out;
}

// Einsum with one or two operands, one letter per dimension, no ellipsis
// and no label repeated within an operand. Labels are grouped as batch (in
// both operands and the output), contracted (in both, not the output),
// free (in one operand and the output) and summed (in one operand only):
// each operand is permuted to [batch, free, contracted, summed], its summed
// labels are added up, and one batched product gives [batch, free_x,
// free_y], permuted at last to the output order.
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
    supported_ = operands_.size() <= 2;
    for (const std::string& labels : operands_) {
      for (char c : labels) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!letter || std::count(labels.begin(), labels.end(), c) != 1) supported_ = false;
        ++counts[c];
      }
    }
    if (arrow == std::string::npos) {
      for (const auto& [c, n] : counts) {
        if (n == 1) output_.push_back(c);
      }
    }
    for (char c : output_) {
      if (std::count(output_.begin(), output_.end(), c) != 1) supported_ = false;
      PX_SDK_CHECK(counts.count(c), "Einsum output label '%c' appears in no input of '%s'", c,
                   equation_.c_str());
    }
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
    sdk::Shape out_shape;
    for (char c : output_) out_shape.push_back(sizes[c]);
    VisitMatMulType(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (operands_.size() == 1) {
        Unary<T>(call, sizes, out_shape);
      } else {
        Binary<T>(call, sizes, out_shape);
      }
    });
  }

 private:
  static bool Has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

  // Permutes operand `i` to the label order `want` (a permutation of its
  // labels).
  template <typename T>
  std::vector<T> Permuted(const sdk::Call& call, size_t i, const std::string& want) const {
    const std::string& have = operands_[i];
    const T* data = call.input<T>(i);
    std::vector<T> out(static_cast<size_t>(call.input_size(i)));
    std::vector<int64_t> perm;
    for (char c : want) perm.push_back(static_cast<int64_t>(have.find(c)));
    Transpose(data, call.input_shape(i), perm, out.data());
    return out;
  }

  template <typename T>
  void Unary(sdk::Call& call, std::map<char, int64_t>& sizes, const sdk::Shape& out_shape) {
    std::string summed;
    int64_t summed_size = 1;
    for (char c : operands_[0]) {
      if (!Has(output_, c)) {
        summed.push_back(c);
        summed_size *= sizes[c];
      }
    }
    std::vector<T> permuted = Permuted<T>(call, 0, output_ + summed);
    const int64_t out_n = sdk::NumElements(out_shape);
    if (!summed.empty()) permuted = SumTail(permuted, out_n, summed_size);
    T* out = call.AllocateOutput<T>(0, out_shape);
    std::copy(permuted.begin(), permuted.begin() + out_n, out);
  }

  template <typename T>
  void Binary(sdk::Call& call, std::map<char, int64_t>& sizes, const sdk::Shape& out_shape) {
    const std::string& a = operands_[0];
    const std::string& b = operands_[1];
    std::string batch, contracted, free_a, free_b, sum_a, sum_b;
    int64_t nb = 1, nk = 1, nm = 1, nn = 1, nsa = 1, nsb = 1;
    for (char c : a) {
      const int64_t s = sizes[c];
      if (Has(b, c) && Has(output_, c)) {
        batch.push_back(c);
        nb *= s;
      } else if (Has(b, c)) {
        contracted.push_back(c);
        nk *= s;
      } else if (Has(output_, c)) {
        free_a.push_back(c);
        nm *= s;
      } else {
        sum_a.push_back(c);
        nsa *= s;
      }
    }
    for (char c : b) {
      if (Has(a, c)) continue;
      if (Has(output_, c)) {
        free_b.push_back(c);
        nn *= sizes[c];
      } else {
        sum_b.push_back(c);
        nsb *= sizes[c];
      }
    }
    if constexpr (std::is_same_v<T, float>) {
      if (sum_a.empty() && sum_b.empty() && free_a.size() == 1 && free_b.size() == 1 && contracted.size() == 1 &&
          StridedProduct(call, sizes, out_shape, batch, free_a[0], contracted[0], free_b[0])) {
        return;
      }
    }
    std::vector<T> pa = Permuted<T>(call, 0, batch + free_a + contracted + sum_a);
    if (!sum_a.empty()) pa = SumTail(pa, nb * nm * nk, nsa);
    std::vector<T> pb = Permuted<T>(call, 1, batch + contracted + free_b + sum_b);
    if (!sum_b.empty()) pb = SumTail(pb, nb * nk * nn, nsb);
    const std::string product_labels = batch + free_a + free_b;
    T* out = call.AllocateOutput<T>(0, out_shape);
    const bool in_order = product_labels == output_;
    std::vector<T> product;
    T* dst = out;
    if (!in_order) {
      product.resize(static_cast<size_t>(nb * nm * nn));
      dst = product.data();
    }
    for (int64_t i = 0; i < nb; ++i) {
      Gemm<T>(false, false, nm, nn, nk, pa.data() + i * nm * nk, pb.data() + i * nk * nn,
              dst + i * nm * nn);
    }
    if (!in_order) {
      sdk::Shape product_shape;
      for (char c : product_labels) product_shape.push_back(sizes[c]);
      std::vector<int64_t> perm;
      for (char c : output_) perm.push_back(static_cast<int64_t>(product_labels.find(c)));
      Transpose(product.data(), product_shape, perm, out);
    }
  }

  // Element strides of each label of operand `labels` with shape `shape`
  // (row-major).
  static std::map<char, int64_t> Strides(const std::string& labels, const std::map<char, int64_t>& sizes) {
    std::map<char, int64_t> strides;
    int64_t stride = 1;
    for (size_t d = labels.size(); d-- > 0;) {
      strides[labels[d]] = stride;
      stride *= sizes.at(labels[d]);
    }
    return strides;
  }

  // The float product when one label each is free in a, contracted and free
  // in b, and there is no summed label: one GEMM per batch index straight
  // on the operands and the output, with leading dimensions, instead of
  // permuting both operands and the product (attention's
  // BTNH,BSNH->BNTS and BNTS,BSNH->BTNH). Batches split over the OpenMP
  // team, each product single-threaded. False when a matrix has no unit
  // stride or the GEMM library takes no leading dimensions (checked before
  // the output is allocated).
  bool StridedProduct(sdk::Call& call, const std::map<char, int64_t>& sizes, const sdk::Shape& out_shape,
                      const std::string& batch, char m_label, char k_label, char n_label) {
    const std::map<char, int64_t> sa = Strides(operands_[0], sizes), sb = Strides(operands_[1], sizes),
                                  so = Strides(output_, sizes);
    // A matrix [rows, cols] with strides (rs, cs) is row-major with ld rs
    // when cs == 1, or the transpose of a row-major [cols, rows] with ld cs
    // when rs == 1.
    auto layout = [](int64_t rs, int64_t cs, int64_t rows, int64_t cols, bool* transposed, int64_t* ld) {
      if (cs == 1 && (rs >= cols || rows == 1)) {
        *transposed = false;
        *ld = std::max<int64_t>(rs, cols);
        return true;
      }
      if (rs == 1 && (cs >= rows || cols == 1)) {
        *transposed = true;
        *ld = std::max<int64_t>(cs, rows);
        return true;
      }
      return false;
    };
    const int64_t m = sizes.at(m_label), k = sizes.at(k_label), n = sizes.at(n_label);
    bool ta = false, tb = false, tc = false;
    int64_t lda = 0, ldb = 0, ldc = 0;
    if (!HaveStridedGemm() || !layout(sa.at(m_label), sa.at(k_label), m, k, &ta, &lda) ||
        !layout(sb.at(k_label), sb.at(n_label), k, n, &tb, &ldb) ||
        !layout(so.at(m_label), so.at(n_label), m, n, &tc, &ldc)) {
      return false;
    }
    float* out = call.AllocateOutput<float>(0, out_shape);
    const int64_t out_n = sdk::NumElements(out_shape);
    if (out_n == 0) return true;
    if (k == 0) {
      std::fill(out, out + out_n, 0.0f);
      return true;
    }
    const float* a = call.input<float>(0);
    const float* b = call.input<float>(1);
    int64_t batches = 1;
    for (char c : batch) batches *= sizes.at(c);
    bool ok = true;
#pragma omp parallel for schedule(static) if (batches > 1 && batches * m * n * k >= (int64_t{1} << 18))
    for (int64_t i = 0; i < batches; ++i) {
      int64_t rest = i, oa = 0, ob = 0, oc = 0;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t size = sizes.at(batch[d]);
        const int64_t idx = rest % size;
        rest /= size;
        oa += idx * sa.at(batch[d]);
        ob += idx * sb.at(batch[d]);
        oc += idx * so.at(batch[d]);
      }
      // A transposed output: compute c^T = b^T a^T.
      const bool done = tc ? GemmStrided(!tb, !ta, n, m, k, b + ob, ldb, a + oa, lda, out + oc, ldc)
                           : GemmStrided(ta, tb, m, n, k, a + oa, lda, b + ob, ldb, out + oc, ldc);
      if (!done) {
#pragma omp atomic write
        ok = false;
      }
    }
    // The library refuses only arguments it cannot take, which the checks
    // above rule out.
    PX_SDK_CHECK(ok, "Einsum '%s': the GEMM library refused a strided product", equation_.c_str());
    return true;
  }

  std::string equation_;
  std::vector<std::string> operands_;
  std::string output_;
  bool supported_ = true;
};

}  // namespace

PX_Status* RegisterLinalgFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  std::vector<PX_DataType> matmul = sdk::FloatTypes();
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

}  // namespace plexus::cpu
