// CPU kernels: gradients of the activations and of the unary math ops, and
// UnsortedSegmentSum (the gradient of Gather).
//
// The elementwise gradients are one pass over contiguous memory: float and
// double compute in place in vectorized loops (SoftplusGrad's exp through
// Eigen), half and bfloat16 convert a block at a time to float, compute
// with the same float loops and convert back. Large tensors are split into
// chunks that run on several threads (OpenMP, as the other cpu kernels).
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

// Elements per chunk, and the size from which chunks run in parallel.
constexpr int64_t kChunk = 8192;
constexpr int64_t kParallelElements = int64_t{1} << 15;

int MaxThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Calls f(begin, end) over [0, n) in chunks, in parallel when n is large.
template <typename F>
void ForChunks(int64_t n, const F& f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1 && n >= kParallelElements)
  for (int64_t c = 0; c < chunks; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk));
}

enum class Grad {
  kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign,
  kSigmoid, kTanh, kRsqrt, kSqrt, kReciprocal,
};

Grad GradFromName(const std::string& op) {
  static const struct { const char* name; Grad grad; } kOps[] = {
      {"ReluGrad", Grad::kRelu},           {"Relu6Grad", Grad::kRelu6},
      {"EluGrad", Grad::kElu},             {"SeluGrad", Grad::kSelu},
      {"LeakyReluGrad", Grad::kLeakyRelu}, {"SoftplusGrad", Grad::kSoftplus},
      {"SigmoidGrad", Grad::kSigmoid},     {"TanhGrad", Grad::kTanh},
      {"RsqrtGrad", Grad::kRsqrt},         {"SqrtGrad", Grad::kSqrt},
      {"ReciprocalGrad", Grad::kReciprocal}, {"InvGrad", Grad::kReciprocal},
      {"SoftsignGrad", Grad::kSoftsign},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.grad;
  }
  PX_SDK_CHECK(false, "no cpu activation-gradient kernel for op %s", op.c_str());
  return Grad::kRelu;
}

// One element: (a, b) = (gradients, features/outputs) or (y, dy), by op.
// The selects are written so the loops if-convert and vectorize.
template <Grad G, typename C>
inline C GradValue(C a, C b, C alpha) {
  if constexpr (G == Grad::kRelu) {
    return b > C(0) ? a : C(0);
  } else if constexpr (G == Grad::kRelu6) {
    return (b > C(0)) & (b < C(6)) ? a : C(0);
  } else if constexpr (G == Grad::kElu) {
    return b < C(0) ? a * (b + C(1)) : a;
  } else if constexpr (G == Grad::kSelu) {
    const C scale = C(1.0507009873554804934193349852946);
    const C scale_alpha = C(1.7580993408473768599402175208123);
    return b < C(0) ? a * (b + scale_alpha) : a * scale;
  } else if constexpr (G == Grad::kLeakyRelu) {
    return b > C(0) ? a : a * alpha;
  } else if constexpr (G == Grad::kSoftsign) {
    const C d = C(1) + (b < C(0) ? -b : b);
    return a / (d * d);
  } else if constexpr (G == Grad::kSigmoid) {
    return b * a * (C(1) - a);
  } else if constexpr (G == Grad::kTanh) {
    return b * (C(1) - a * a);
  } else if constexpr (G == Grad::kRsqrt) {
    return C(-0.5) * b * (a * a * a);
  } else if constexpr (G == Grad::kSqrt) {
    return C(0.5) * b / a;
  } else {
    static_assert(G == Grad::kReciprocal, "unhandled gradient");
    return -b * a * a;
  }
}

template <Grad G, typename C>
void GradLoop(const C* a, const C* b, C* out, int64_t n, C alpha) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = GradValue<G>(a[i], b[i], alpha);
}

// out = a / (exp(-b) + 1), with Eigen's vectorized exp.
template <typename C>
void SoftplusGradLoop(const C* a, const C* b, C* out, int64_t n) {
  using Array = Eigen::Array<C, Eigen::Dynamic, 1>;
  Eigen::Map<const Array> g(a, n), f(b, n);
  Eigen::Map<Array> o(out, n);
  o = g / ((-f).exp() + C(1));
}

// The gradient over n contiguous elements of a floating compute type C
// (float or double).
template <typename C>
void FloatGrad(Grad grad, const C* a, const C* b, C* out, int64_t n, C alpha) {
  switch (grad) {
    case Grad::kRelu: return GradLoop<Grad::kRelu>(a, b, out, n, alpha);
    case Grad::kRelu6: return GradLoop<Grad::kRelu6>(a, b, out, n, alpha);
    case Grad::kElu: return GradLoop<Grad::kElu>(a, b, out, n, alpha);
    case Grad::kSelu: return GradLoop<Grad::kSelu>(a, b, out, n, alpha);
    case Grad::kLeakyRelu: return GradLoop<Grad::kLeakyRelu>(a, b, out, n, alpha);
    case Grad::kSoftplus: return SoftplusGradLoop(a, b, out, n);
    case Grad::kSoftsign: return GradLoop<Grad::kSoftsign>(a, b, out, n, alpha);
    case Grad::kSigmoid: return GradLoop<Grad::kSigmoid>(a, b, out, n, alpha);
    case Grad::kTanh: return GradLoop<Grad::kTanh>(a, b, out, n, alpha);
    case Grad::kRsqrt: return GradLoop<Grad::kRsqrt>(a, b, out, n, alpha);
    case Grad::kSqrt: return GradLoop<Grad::kSqrt>(a, b, out, n, alpha);
    case Grad::kReciprocal: return GradLoop<Grad::kReciprocal>(a, b, out, n, alpha);
  }
}

// ReluGrad and Relu6Grad of an integer type.
template <typename T>
void IntegerGrad(Grad grad, const T* a, const T* b, T* out, int64_t n) {
  if (grad == Grad::kRelu) {
    GradLoop<Grad::kRelu>(a, b, out, n, T(0));
  } else {
    GradLoop<Grad::kRelu6>(a, b, out, n, T(0));
  }
}

class ActivationGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    grad_ = GradFromName(attrs.op());
    if (grad_ == Grad::kLeakyRelu) alpha_ = attrs.Float("alpha", 0.2f);
  }

  void Compute(sdk::Call& call) override {
    const DLTensor& in0 = call.input(0);
    const DLTensor& in1 = call.input(1);
    PX_SDK_CHECK(in0.ndim == in1.ndim && std::equal(in0.shape, in0.shape + in0.ndim, in1.shape),
                 "both inputs must have the same shape, got %s and %s",
                 sdk::ShapeString(call.input_shape(0)).c_str(),
                 sdk::ShapeString(call.input_shape(1)).c_str());
    const int64_t n = call.input_size(0);
    const Grad grad = grad_;
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* out = call.AllocateOutputLike<T>(0, 0);
      if constexpr (std::is_integral_v<T>) {
        PX_SDK_CHECK(grad == Grad::kRelu || grad == Grad::kRelu6,
                     "this activation gradient needs a floating-point dtype");
        ForChunks(n, [&](int64_t begin, int64_t end) {
          IntegerGrad(grad, a + begin, b + begin, out + begin, end - begin);
        });
      } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        const T alpha = static_cast<T>(alpha_);
        ForChunks(n, [&](int64_t begin, int64_t end) {
          FloatGrad(grad, a + begin, b + begin, out + begin, end - begin, alpha);
        });
      } else {
        // half and bfloat16: blocks converted to float on the stack.
        const float alpha = alpha_;
        ForChunks(n, [&](int64_t begin, int64_t end) {
          constexpr int64_t kBlock = 512;
          float fa[kBlock], fb[kBlock], fo[kBlock];
          for (int64_t i0 = begin; i0 < end; i0 += kBlock) {
            const int64_t len = std::min(kBlock, end - i0);
            for (int64_t i = 0; i < len; ++i) {
              fa[i] = static_cast<float>(a[i0 + i]);
              fb[i] = static_cast<float>(b[i0 + i]);
            }
            FloatGrad(grad, fa, fb, fo, len, alpha);
            for (int64_t i = 0; i < len; ++i) out[i0 + i] = static_cast<T>(fo[i]);
          }
        });
      }
    }, "activation gradient");
  }

 private:
  Grad grad_ = Grad::kRelu;
  float alpha_ = 0.2f;
};

// ---------------------------------------------------------------------------
// UnsortedSegmentSum
// ---------------------------------------------------------------------------

// "[1,2]" for flat index 5 of shape [2,3].
std::string IndexString(const Shape& shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return sdk::ShapeString(index);
}

// Integer sums wrap (two's complement) like TensorFlow's, without
// signed-overflow undefined behaviour.
template <typename A>
inline A AddWrap(A x, A y) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

// sum[ids[i] * inner + j] += data[i * inner + j] for j in [j0, j1) and
// segments in [s0, s1); A is the accumulator type (float for the 16-bit
// floats).
template <typename T, typename A, typename I>
void SegmentSumRange(const T* data, const I* ids, A* sum, int64_t rows, int64_t inner, int64_t j0,
                     int64_t j1, int64_t s0, int64_t s1) {
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id < s0 || id >= s1) continue;  // negative ids are dropped
    const T* src = data + i * inner;
    A* dst = sum + id * inner;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) dst[j] = AddWrap(dst[j], static_cast<A>(src[j]));
  }
}

// Sums into `sum` (zeroed, num_segments * inner): wide rows split their
// columns between threads, narrow rows split the segments, small inputs run
// on one thread.
template <typename T, typename A, typename I>
void SegmentSum(const T* data, const I* ids, A* sum, int64_t rows, int64_t inner,
                int64_t num_segments) {
  const int threads = MaxThreads();
  const int64_t work = rows * inner;
  if (threads > 1 && work >= kParallelElements && inner >= 256) {
    const int64_t blocks = std::min<int64_t>(threads, inner / 64);
    const int64_t width = (inner + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      SegmentSumRange(data, ids, sum, rows, inner, b * width, std::min(inner, (b + 1) * width), 0,
                      num_segments);
    }
  } else if (threads > 1 && work >= kParallelElements && num_segments >= 2 * threads) {
    const int64_t blocks = threads;
    const int64_t span = (num_segments + blocks - 1) / blocks;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      SegmentSumRange(data, ids, sum, rows, inner, 0, inner, b * span,
                      std::min(num_segments, (b + 1) * span));
    }
  } else {
    SegmentSumRange(data, ids, sum, rows, inner, 0, inner, 0, num_segments);
  }
}

class UnsortedSegmentSumKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape data_shape = call.input_shape(0);
    const Shape ids_shape = call.input_shape(1);
    const std::vector<int64_t> num = call.input_int_values(2);
    PX_SDK_CHECK(call.input_rank(2) == 0 && num.size() == 1,
                 "num_segments must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(2)).c_str());
    const int64_t num_segments = num[0];
    PX_SDK_CHECK(num_segments >= 0, "Input num_segments == %lld must not be negative.",
                 static_cast<long long>(num_segments));
    bool prefix = ids_shape.size() <= data_shape.size();
    for (size_t i = 0; prefix && i < ids_shape.size(); ++i) prefix = ids_shape[i] == data_shape[i];
    PX_SDK_CHECK(prefix, "data.shape = %s does not start with segment_ids.shape = %s",
                 sdk::ShapeString(data_shape).c_str(), sdk::ShapeString(ids_shape).c_str());
    const int64_t rows = sdk::NumElements(ids_shape);
    int64_t inner = 1;
    for (size_t i = ids_shape.size(); i < data_shape.size(); ++i) inner *= data_shape[i];
    Shape out_shape{num_segments};
    out_shape.insert(out_shape.end(), data_shape.begin() + ids_shape.size(), data_shape.end());

    const PX_DataType index_type = call.input_dtype(1);
    PX_SDK_CHECK(index_type == PX_DT_INT32 || index_type == PX_DT_INT64,
                 "segment_ids must be int32 or int64, got %s", sdk::DtypeName(index_type));
    auto run = [&](auto* ids) {
      for (int64_t i = 0; i < rows; ++i) {
        if (static_cast<int64_t>(ids[i]) >= num_segments) {
          PX_SDK_CHECK(false, "segment_ids%s = %lld is out of range [0, %lld)",
                       IndexString(ids_shape, i).c_str(), static_cast<long long>(ids[i]),
                       static_cast<long long>(num_segments));
        }
      }
      sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* data = call.input<T>(0);
        T* out = call.AllocateOutput<T>(0, out_shape);
        const int64_t size = num_segments * inner;
        if constexpr (std::is_same_v<T, sdk::ComputeType<T>>) {
          std::fill(out, out + size, T(0));
          SegmentSum(data, ids, out, rows, inner, num_segments);
        } else {
          std::vector<float> sum(static_cast<size_t>(size), 0.0f);
          SegmentSum(data, ids, sum.data(), rows, inner, num_segments);
          for (int64_t k = 0; k < size; ++k) out[k] = static_cast<T>(sum[k]);
        }
      }, "UnsortedSegmentSum");
    };
    if (index_type == PX_DT_INT32) {
      run(call.input<int32_t>(1));
    } else {
      run(call.input<int64_t>(1));
    }
  }
};

}  // namespace

PX_Status* RegisterActivationGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> kFloat = sdk::FloatTypes();
  const std::vector<PX_DataType> kReal = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16,
                                          PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                          PX_DT_UINT8};
  for (const sdk::OpSignature* op : {&sdk::sig::kReluGrad, &sdk::sig::kRelu6Grad}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationGradKernel>(info, registrar, *op, {kReal})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op :
       {&sdk::sig::kEluGrad, &sdk::sig::kSeluGrad, &sdk::sig::kLeakyReluGrad,
        &sdk::sig::kSoftplusGrad, &sdk::sig::kSoftsignGrad, &sdk::sig::kSigmoidGrad,
        &sdk::sig::kTanhGrad, &sdk::sig::kRsqrtGrad, &sdk::sig::kSqrtGrad,
        &sdk::sig::kReciprocalGrad, &sdk::sig::kInvGrad}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationGradKernel>(info, registrar, *op, {kFloat})) {
      return s;
    }
  }
  return sdk::RegisterKernel<UnsortedSegmentSumKernel>(
      info, registrar, sdk::sig::kUnsortedSegmentSum,
      {kReal, {PX_DT_INT32, PX_DT_INT64}, {PX_DT_INT32, PX_DT_INT64}});
}

}  // namespace plexus::cpu
