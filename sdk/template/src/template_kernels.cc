// The template plugin's kernels, written with plexus/sdk/kernel.h: each is an
// sdk::OpKernel that reads its attributes once (Init) and computes on the
// tensors of one launch (Compute). Errors are thrown (PX_SDK_CHECK) and
// become statuses; no exception crosses the ABI.
//
// The emulated device's memory is host RAM, so these kernels compute on the
// calling thread with plain loops, synchronously. On real hardware, Compute
// launches a device kernel on the launch's stream instead:
//   TemplateStream* s = sdk::HandleCast<TemplateStream>(call.stream());
// and a failure found later goes to that stream's sticky error.
#include "template_kernels.h"

#include <cstdint>
#include <vector>

#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace template_plugin {
namespace {

namespace sdk = plexus::sdk;
using sdk::Shape;

// The element types these kernels are registered for.
const std::vector<PX_DataType> kFloatTypes = {PX_DT_FLOAT, PX_DT_DOUBLE};

// Calls f(sdk::TypeTag<T>{}) for float or double.
template <typename F>
void VisitFloatOrDouble(PX_DataType t, F&& f) {
  switch (t) {
    case PX_DT_FLOAT: f(sdk::TypeTag<float>{}); return;
    case PX_DT_DOUBLE: f(sdk::TypeTag<double>{}); return;
    default: sdk::UnsupportedType(t, "template");
  }
}

// ---------------------------------------------------------------------------
// AddV2 and Mul: elementwise with NumPy broadcasting
// ---------------------------------------------------------------------------

// The broadcast shape of a and b, or INVALID_ARGUMENT.
Shape BroadcastShape(const Shape& a, const Shape& b) {
  const size_t rank = a.size() > b.size() ? a.size() : b.size();
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    PX_SDK_CHECK(da == db || da == 1 || db == 1, "Incompatible shapes: %s vs. %s",
                 sdk::ShapeString(a).c_str(), sdk::ShapeString(b).c_str());
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element strides of `in` seen as a tensor of shape `out` (0 along broadcast
// dimensions).
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t i = in.size() - 1 - k;    // dimension of in
    const size_t o = out.size() - 1 - k;   // the same dimension of out
    strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

struct AddOp {
  template <typename T>
  T operator()(T x, T y) const { return x + y; }
};
struct MulOp {
  template <typename T>
  T operator()(T x, T y) const { return x * y; }
};

template <typename Op>
class BinaryKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "x is %s but y is %s", sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)));
    const Shape a = call.input_shape(0), b = call.input_shape(1);
    const Shape out_shape = BroadcastShape(a, b);
    VisitFloatOrDouble(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* y = call.input<T>(1);
      T* z = call.AllocateOutput<T>(0, out_shape);
      const int64_t n = sdk::NumElements(out_shape);
      const Op op;
      if (a == b) {  // the common case: no broadcasting
        for (int64_t i = 0; i < n; ++i) z[i] = op(x[i], y[i]);
        return;
      }
      // Walk the output in row-major order, keeping the input offsets.
      const std::vector<int64_t> sx = BroadcastStrides(a, out_shape);
      const std::vector<int64_t> sy = BroadcastStrides(b, out_shape);
      const size_t rank = out_shape.size();
      std::vector<int64_t> index(rank, 0);
      int64_t ox = 0, oy = 0;
      for (int64_t i = 0; i < n; ++i) {
        z[i] = op(x[ox], y[oy]);
        for (size_t d = rank; d-- > 0;) {
          ox += sx[d];
          oy += sy[d];
          if (++index[d] < out_shape[d]) break;
          ox -= sx[d] * out_shape[d];
          oy -= sy[d] * out_shape[d];
          index[d] = 0;
        }
      }
    });
  }
};

// ---------------------------------------------------------------------------
// Relu
// ---------------------------------------------------------------------------

class ReluKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    VisitFloatOrDouble(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, call.input_shape(0));
      const int64_t n = call.input_size(0);
      // x < 0 ? 0 : x keeps NaN as NaN, like TensorFlow.
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < T(0) ? T(0) : x[i];
    });
  }
};

// ---------------------------------------------------------------------------
// MatMul: [m, k] x [k, n], either side optionally transposed
// ---------------------------------------------------------------------------

class MatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    transpose_a_ = attrs.Bool("transpose_a", false);
    transpose_b_ = attrs.Bool("transpose_b", false);
  }

  void Compute(sdk::Call& call) override {
    const Shape as = call.input_shape(0), bs = call.input_shape(1);
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2,
                 "MatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    const int64_t m = transpose_a_ ? as[1] : as[0];
    const int64_t k = transpose_a_ ? as[0] : as[1];
    const int64_t kb = transpose_b_ ? bs[1] : bs[0];
    const int64_t n = transpose_b_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    PX_SDK_CHECK(call.input_dtype(1) == call.input_dtype(0), "a is %s but b is %s",
                 sdk::DtypeName(call.input_dtype(0)), sdk::DtypeName(call.input_dtype(1)));
    VisitFloatOrDouble(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* c = call.AllocateOutput<T>(0, {m, n});
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;  // accumulate in double: float results stay accurate
          for (int64_t p = 0; p < k; ++p) {
            const T av = transpose_a_ ? a[p * m + i] : a[i * k + p];
            const T bv = transpose_b_ ? b[j * k + p] : b[p * n + j];
            sum += static_cast<double>(av) * static_cast<double>(bv);
          }
          c[i * n + j] = static_cast<T>(sum);
        }
      }
    });
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

}  // namespace

PX_Status* RegisterTemplateKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  // One line per kernel: the class, the op's signature from the SDK's table
  // (plexus/sdk/op_signatures.h: its type attributes and host-memory
  // arguments) and one dtype list per type attribute, here only "T".
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BinaryKernel<AddOp>>(info, registrar, sdk::sig::kAddV2, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BinaryKernel<MulOp>>(info, registrar, sdk::sig::kMul, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ReluKernel>(info, registrar, sdk::sig::kRelu, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<MatMulKernel>(info, registrar, sdk::sig::kMatMul, {kFloatTypes}));
  return nullptr;
}

}  // namespace template_plugin
