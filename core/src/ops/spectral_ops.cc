// Fourier transforms (tf.signal.fft/ifft/rfft/irfft and their 2-D and 3-D
// forms, used by stft, spectrograms and Keras's MelSpectrogram) and the
// complex-number ops around them: Real, Imag, Complex, ComplexAbs, Conj,
// Angle. Host ops, with kernels in host_kernels/fft.cc and complex.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The rank the transform needs: the input has at least `dims` dimensions.
absl::Status CheckInnerDims(InferenceContext& ctx, int dims) {
  const PartialShape& in = ctx.input(0);
  if (in.rank_known() && in.rank() < dims) {
    return ctx.Error(absl::StrCat("input must have rank at least ", dims, ", got shape ", in.ToString()));
  }
  return absl::OkStatus();
}

absl::Status ComplexFftShape(InferenceContext& ctx, int dims) {
  PX_RETURN_IF_ERROR(CheckInnerDims(ctx, dims));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// RFFT: the inner dims become fft_length, the last halved plus one; IRFFT:
// the inner dims become fft_length.
absl::Status RealFftShape(InferenceContext& ctx, int dims, bool forward) {
  PX_RETURN_IF_ERROR(CheckInnerDims(ctx, dims));
  const PartialShape& in = ctx.input(0);
  if (!in.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> lengths;
  const bool known = ReadIntValues(ctx.input_value(1), &lengths);
  if (known && static_cast<int>(lengths.size()) != dims) {
    return ctx.Error(absl::StrCat("fft_length must have ", dims, " elements, got ", lengths.size()));
  }
  Shape out;
  for (int64_t d = 0; d < in.rank(); ++d) out.push_back(in.dim(d));
  for (int k = 0; k < dims; ++k) {
    int64_t n = known ? lengths[k] : -1;
    if (forward && k == dims - 1 && n >= 0) n = n / 2 + 1;
    out[in.rank() - dims + k] = n;
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

#define PX_COMPLEX_FFT(name, dims)                                             \
  PX_REGISTER_OP(OpDefBuilder(name)                                            \
                     .Input("input: Tcomplex")                                 \
                     .Output("output: Tcomplex")                               \
                     .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64") \
                     .SetShapeFn([](InferenceContext& ctx) { return ComplexFftShape(ctx, dims); }))
PX_COMPLEX_FFT("FFT", 1);
PX_COMPLEX_FFT("IFFT", 1);
PX_COMPLEX_FFT("FFT2D", 2);
PX_COMPLEX_FFT("IFFT2D", 2);
PX_COMPLEX_FFT("FFT3D", 3);
PX_COMPLEX_FFT("IFFT3D", 3);

#define PX_REAL_FFT(name, dims, forward)                                         \
  PX_REGISTER_OP(OpDefBuilder(name)                                              \
                     .Input(forward ? "input: Treal" : "input: Tcomplex")        \
                     .Input("fft_length: int32")                                 \
                     .Output(forward ? "output: Tcomplex" : "output: Treal")     \
                     .Attr("Treal: {float, double} = DT_FLOAT")                  \
                     .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")   \
                     .SetShapeFn([](InferenceContext& ctx) { return RealFftShape(ctx, dims, forward); }))
PX_REAL_FFT("RFFT", 1, true);
PX_REAL_FFT("IRFFT", 1, false);
PX_REAL_FFT("RFFT2D", 2, true);
PX_REAL_FFT("IRFFT2D", 2, false);
PX_REAL_FFT("RFFT3D", 3, true);
PX_REAL_FFT("IRFFT3D", 3, false);

// Complex to real, elementwise.
#define PX_COMPLEX_PART(name)                                                  \
  PX_REGISTER_OP(OpDefBuilder(name)                                            \
                     .Input("input: T")                                        \
                     .Output("output: Tout")                                   \
                     .Attr("T: {complex64, complex128} = DT_COMPLEX64")        \
                     .Attr("Tout: {float, double} = DT_FLOAT")                 \
                     .SetShapeFn(UnchangedShape))
PX_COMPLEX_PART("Real");
PX_COMPLEX_PART("Imag");
PX_COMPLEX_PART("Angle");

PX_REGISTER_OP(OpDefBuilder("ComplexAbs")
                   .Input("x: T")
                   .Output("y: Tout")
                   .Attr("T: {complex64, complex128} = DT_COMPLEX64")
                   .Attr("Tout: {float, double} = DT_FLOAT")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Complex")
                   .Input("real: T")
                   .Input("imag: T")
                   .Output("out: Tout")
                   .Attr("T: {float, double} = DT_FLOAT")
                   .Attr("Tout: {complex64, complex128} = DT_COMPLEX64")
                   .SetShapeFn(BroadcastShape));

PX_REGISTER_OP(OpDefBuilder("Conj")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: {complex64, complex128} = DT_COMPLEX64")
                   .SetShapeFn(UnchangedShape));

}  // namespace
}  // namespace plexus
