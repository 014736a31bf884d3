// Host kernels of the Fourier transforms (schemas in ops/spectral_ops.cc):
// FFT, IFFT, RFFT, IRFFT and their 2-D and 3-D forms over the innermost
// dimensions, on Eigen's FFT module (KISS FFT: any length, not only powers
// of two). As TensorFlow: the inverse transforms divide by the length; RFFT
// crops each inner dimension of its input to fft_length (shorter inputs are
// an error: tf.signal pads them before the op) and keeps fft_length/2 + 1
// frequencies of the last; IRFFT reads that many and ignores the imaginary parts of the zero and
// Nyquist frequencies.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <unsupported/Eigen/FFT>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

struct FftOp {
  int dims = 1;
  bool inverse = false;
  bool real = false;  // RFFT / IRFFT
};

FftOp Describe(const std::string& op) {
  FftOp f;
  f.inverse = op[0] == 'I';
  const std::string base = f.inverse ? op.substr(1) : op;
  f.real = base[0] == 'R';
  f.dims = base.back() == 'D' ? base[base.size() - 2] - '0' : 1;
  return f;
}

// A dense array of complex values with its shape, row-major.
template <typename R>
struct Array {
  Shape shape;
  std::vector<std::complex<R>> v;
};

// Copies `in` into an array whose dimension `axis` has size `size`
// (cropped, or zero-padded at the end).
template <typename R>
Array<R> Resize(const Array<R>& in, int64_t axis, int64_t size) {
  if (in.shape[axis] == size) return in;
  Array<R> out;
  out.shape = in.shape;
  out.shape[axis] = size;
  out.v.assign(static_cast<size_t>(NumElements(out.shape)), std::complex<R>(0, 0));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.shape[d];
  for (size_t d = axis + 1; d < in.shape.size(); ++d) inner *= in.shape[d];
  const int64_t keep = std::min(size, in.shape[axis]);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < keep; ++k) {
      std::copy_n(&in.v[(o * in.shape[axis] + k) * inner], inner, &out.v[(o * size + k) * inner]);
    }
  }
  return out;
}

// The complex transform of every line along `axis`, in place.
template <typename R>
void TransformAxis(Array<R>* a, int64_t axis, bool inverse, Eigen::FFT<R>* fft) {
  const int64_t n = a->shape[axis];
  if (n <= 1 || a->v.empty()) return;  // a transform of length 1 is the identity
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a->shape[d];
  for (size_t d = axis + 1; d < a->shape.size(); ++d) inner *= a->shape[d];
  std::vector<std::complex<R>> line(n), result(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::complex<R>* base = &a->v[o * n * inner + i];
      for (int64_t k = 0; k < n; ++k) line[k] = base[k * inner];
      if (inverse) fft->inv(result.data(), line.data(), n);
      else fft->fwd(result.data(), line.data(), n);
      for (int64_t k = 0; k < n; ++k) base[k * inner] = result[k];
    }
  }
}

template <typename R>
absl::Status Run(HostOpContext& ctx, const FftOp& f, DataType out_type) {
  const Tensor& in = ctx.input(0);
  const int64_t rank = in.dims();
  if (rank < f.dims) {
    return ctx.InvalidArgument(absl::StrCat("input must have rank at least ", f.dims, ", got shape ",
                                            ShapeToString(in.shape())));
  }
  std::vector<int64_t> lengths;
  if (f.real) {
    const Tensor& len = ctx.input(1);
    if (len.dtype() != DataType::kInt32 || len.dims() != 1 || len.num_elements() != f.dims) {
      return ctx.InvalidArgument(absl::StrCat("fft_length must be an int32 vector of ", f.dims, " elements, got ",
                                              len.DebugString(0)));
    }
    for (int k = 0; k < f.dims; ++k) {
      lengths.push_back(len.data<int32_t>()[k]);
      if (lengths.back() < 0) return ctx.InvalidArgument(absl::StrCat("fft_length must not be negative, got ", lengths.back()));
    }
    // The input must be at least as long as the transform (tf.signal pads
    // it before the op); longer inputs are cropped.
    for (int k = 0; k < f.dims; ++k) {
      const int64_t axis = rank - f.dims + k;
      const int64_t need = f.inverse && k == f.dims - 1 ? lengths[k] / 2 + 1 : lengths[k];
      if (in.shape()[axis] < need) {
        return ctx.InvalidArgument(absl::StrCat("Input dimension ", axis, " must have length of at least ", need,
                                                " but got: ", in.shape()[axis]));
      }
    }
  }
  Array<R> a;
  a.shape = in.shape();
  const int64_t n = in.num_elements();
  a.v.resize(static_cast<size_t>(n));
  if (f.real && !f.inverse) {
    for (int64_t i = 0; i < n; ++i) a.v[i] = std::complex<R>(in.data<R>()[i], 0);
  } else {
    std::copy_n(in.data<std::complex<R>>(), n, a.v.data());
  }
  Eigen::FFT<R> fft;
  const int64_t first = rank - f.dims;
  if (!f.real) {
    for (int64_t axis = first; axis < rank; ++axis) TransformAxis(&a, axis, f.inverse, &fft);
    PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, a.shape));
    std::copy(a.v.begin(), a.v.end(), out.data<std::complex<R>>());
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  const int64_t last = rank - 1;
  const int64_t n_last = lengths.back();
  if (!f.inverse) {
    // Real to half spectrum along the last axis, then complex transforms.
    for (int k = 0; k < f.dims; ++k) a = Resize(a, first + k, lengths[k]);
    TransformAxis(&a, last, false, &fft);
    a = Resize(a, last, n_last / 2 + 1);
    for (int64_t axis = first; axis < last; ++axis) TransformAxis(&a, axis, false, &fft);
    PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, a.shape));
    std::copy(a.v.begin(), a.v.end(), out.data<std::complex<R>>());
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  // Inverse: complex transforms along the outer axes, then half spectrum
  // to real along the last.
  for (int k = 0; k + 1 < f.dims; ++k) a = Resize(a, first + k, lengths[k]);
  a = Resize(a, last, n_last / 2 + 1);
  for (int64_t axis = first; axis < last; ++axis) TransformAxis(&a, axis, true, &fft);
  Shape out_shape = a.shape;
  out_shape[last] = n_last;
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, out_shape));
  const int64_t lines = n_last == 0 ? 0 : NumElements(out_shape) / n_last;
  const int64_t half = n_last / 2 + 1;
  std::vector<std::complex<R>> spectrum(static_cast<size_t>(n_last));
  std::vector<std::complex<R>> result(static_cast<size_t>(n_last));
  for (int64_t l = 0; l < lines; ++l) {
    // The full Hermitian spectrum from its first half.
    const std::complex<R>* h = &a.v[l * half];
    spectrum[0] = std::complex<R>(h[0].real(), 0);
    for (int64_t k = 1; k < half; ++k) spectrum[k] = h[k];
    if (n_last % 2 == 0 && n_last > 0) spectrum[n_last / 2] = std::complex<R>(h[n_last / 2].real(), 0);
    for (int64_t k = half; k < n_last; ++k) spectrum[k] = std::conj(spectrum[n_last - k]);
    if (n_last == 1) result[0] = spectrum[0];
    else fft.inv(result.data(), spectrum.data(), n_last);
    for (int64_t k = 0; k < n_last; ++k) out.data<R>()[l * n_last + k] = result[k].real();
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Fft(HostOpContext& ctx) {
  const FftOp f = Describe(ctx.node().op);
  const DataType in_type = ctx.input(0).dtype();
  const bool real_in = f.real && !f.inverse;
  const DataType want64 = real_in ? DataType::kFloat : DataType::kComplex64;
  const DataType want128 = real_in ? DataType::kDouble : DataType::kComplex128;
  if (in_type != want64 && in_type != want128) {
    return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(in_type), "; ", ctx.node().op, " takes ",
                                            DataTypeName(want64), " or ", DataTypeName(want128)));
  }
  const bool single = in_type == want64;
  const DataType out_type = !f.real ? in_type
                            : f.inverse ? (single ? DataType::kFloat : DataType::kDouble)
                                        : (single ? DataType::kComplex64 : DataType::kComplex128);
  return single ? Run<float>(ctx, f, out_type) : Run<double>(ctx, f, out_type);
}

PX_REGISTER_HOST_OP("FFT", Fft);
PX_REGISTER_HOST_OP("IFFT", Fft);
PX_REGISTER_HOST_OP("FFT2D", Fft);
PX_REGISTER_HOST_OP("IFFT2D", Fft);
PX_REGISTER_HOST_OP("FFT3D", Fft);
PX_REGISTER_HOST_OP("IFFT3D", Fft);
PX_REGISTER_HOST_OP("RFFT", Fft);
PX_REGISTER_HOST_OP("IRFFT", Fft);
PX_REGISTER_HOST_OP("RFFT2D", Fft);
PX_REGISTER_HOST_OP("IRFFT2D", Fft);
PX_REGISTER_HOST_OP("RFFT3D", Fft);
PX_REGISTER_HOST_OP("IRFFT3D", Fft);

}  // namespace
}  // namespace plexus
