// CPU kernels: MatrixDiag, MatrixDiagPart and MatrixSetDiag, V1 to V3,
// written with sdk::OpKernel. Each works a diagonal at a time: the output is
// first filled (with the padding value, or with a copy of the input for
// MatrixSetDiag), then every diagonal of the band is walked once, element
// (i, i + d) to or from its row of the band. Elements move as words of the
// dtype's size, so every fixed-size dtype is served. The geometry and the
// argument checks are plexus/sdk/matrix_diag_shapes.h, shared with the core
// and the reference kernels.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/matrix_diag_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;
namespace md = matrix_diag;

enum class Kind { kDiag, kDiagPart, kSetDiag };

// Calls f(W{}) with the unsigned word type of `size` bytes.
template <typename F>
void BySize(size_t size, PX_DataType dt, F&& f) {
  switch (size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: sdk::UnsupportedType(dt, "matrix diagonal");
  }
}

// The walk over one band of diagonals of `batches` rows x cols matrices with
// rows of max_len elements: f(matrix_offset, band_offset) for every element
// of every diagonal (offsets in elements).
template <typename F>
void ForEachDiagonalElement(int64_t batches, int64_t rows, int64_t cols, int64_t max_len,
                            const md::Band& band, const md::Align& align, F&& f) {
  const int64_t num = band.num();
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t row = 0; row < num; ++row) {
      const int64_t d = band.upper - row;
      int64_t len = 0, offset = 0;
      md::DiagLenAndOffset(d, max_len, rows, cols, align, &len, &offset);
      const int64_t first = (b * rows + std::max<int64_t>(-d, 0)) * cols + std::max<int64_t>(d, 0);
      const int64_t band_first = (b * num + row) * max_len + offset;
      for (int64_t pos = 0; pos < len; ++pos) f(first + pos * (cols + 1), band_first + pos);
    }
  }
}

class MatrixDiagKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string op = attrs.op();
    kind_ = op.rfind("MatrixDiagPart", 0) == 0 ? Kind::kDiagPart
            : op.rfind("MatrixSetDiag", 0) == 0 ? Kind::kSetDiag
                                                : Kind::kDiag;
    versioned_ = op.back() == '2' || op.back() == '3';
    const std::string align = op.back() == '3' ? attrs.String("align", "RIGHT_LEFT") : "";
    const std::string error = md::ParseAlign(align, &align_);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
  }

  void Compute(sdk::Call& call) override {
    const PX_DataType dt = call.input_dtype(0);
    band_ = md::Band();
    if (versioned_) {
      const int index = kind_ == Kind::kSetDiag ? 2 : 1;
      const std::vector<int64_t> k = call.input_int_values(index);
      const std::string error = md::ReadBand(call.input_shape(index), &k, &band_);
      PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    }
    BySize(sdk::DtypeSize(dt), dt, [&](auto word) {
      using W = decltype(word);
      switch (kind_) {
        case Kind::kDiag: return Diag<W>(call);
        case Kind::kDiagPart: return DiagPart<W>(call);
        case Kind::kSetDiag: return SetDiag<W>(call);
      }
    });
  }

 private:
  template <typename W>
  W Padding(sdk::Call& call, int index, const char* message) const {
    W pad = 0;
    if (versioned_) {
      PX_SDK_CHECK(call.input_shape(index).empty(), "%s", message);
      std::memcpy(&pad, call.input_data(index), sizeof(W));
    }
    return pad;
  }

  static int64_t ScalarInt(sdk::Call& call, int index, const char* message) {
    PX_SDK_CHECK(call.input_shape(index).empty(), "%s", message);
    return call.input_int_values(index)[0];
  }

  template <typename W>
  void Diag(sdk::Call& call) {
    const Shape ds = call.input_shape(0);
    int64_t num_rows = -1, num_cols = -1;
    if (versioned_) {
      num_rows = ScalarInt(call, 2, "num_rows must be a scalar");
      num_cols = ScalarInt(call, 3, "num_cols must be a scalar");
    }
    const W pad = Padding<W>(call, 4, "padding_value must be a scalar");
    Shape out_shape;
    int64_t rows = 0, cols = 0;
    const std::string error = md::DiagShape(ds, band_, num_rows, num_cols, &out_shape, &rows, &cols);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t n = sdk::NumElements(out_shape);
    const W* diag = static_cast<const W*>(call.input_data(0));
    W* out = static_cast<W*>(call.AllocateOutputRaw(0, out_shape));
    if (n == 0) return;
    std::fill(out, out + n, pad);
    ForEachDiagonalElement(n / (rows * cols), rows, cols, ds.back(), band_, align_,
                           [&](int64_t m, int64_t k) { out[m] = diag[k]; });
  }

  template <typename W>
  void DiagPart(sdk::Call& call) {
    const Shape in_shape = call.input_shape(0);
    const W pad = Padding<W>(call, 2, "Padding must be scalar.");
    Shape out_shape;
    const std::string error = md::DiagPartShape(in_shape, band_, &out_shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t n = sdk::NumElements(out_shape);
    const W* in = static_cast<const W*>(call.input_data(0));
    W* out = static_cast<W*>(call.AllocateOutputRaw(0, out_shape));
    if (n == 0) return;
    std::fill(out, out + n, pad);
    const int64_t rows = in_shape[in_shape.size() - 2], cols = in_shape.back();
    ForEachDiagonalElement(n / (band_.num() * out_shape.back()), rows, cols, out_shape.back(),
                           band_, align_, [&](int64_t m, int64_t k) { out[k] = in[m]; });
  }

  template <typename W>
  void SetDiag(sdk::Call& call) {
    const Shape in_shape = call.input_shape(0), ds = call.input_shape(1);
    const std::string error = md::SetDiagCheck(in_shape, ds, band_);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t n = sdk::NumElements(in_shape);
    const W* in = static_cast<const W*>(call.input_data(0));
    const W* diag = static_cast<const W*>(call.input_data(1));
    W* out = static_cast<W*>(call.AllocateOutputRaw(0, in_shape));
    if (n == 0) return;
    if (out != in) std::memcpy(out, in, n * sizeof(W));
    const int64_t rows = in_shape[in_shape.size() - 2], cols = in_shape.back();
    ForEachDiagonalElement(n / (rows * cols), rows, cols, ds.back(), band_, align_,
                           [&](int64_t m, int64_t k) { out[m] = diag[k]; });
  }

  Kind kind_ = Kind::kDiag;
  bool versioned_ = false;
  md::Align align_;
  md::Band band_;
};

}  // namespace

PX_Status* RegisterMatrixDiagFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  for (const sdk::OpSignature* op :
       {&sdk::sig::kMatrixDiag, &sdk::sig::kMatrixDiagV2, &sdk::sig::kMatrixDiagV3,
        &sdk::sig::kMatrixDiagPart, &sdk::sig::kMatrixDiagPartV2, &sdk::sig::kMatrixDiagPartV3,
        &sdk::sig::kMatrixSetDiag, &sdk::sig::kMatrixSetDiagV2, &sdk::sig::kMatrixSetDiagV3}) {
    if (PX_Status* s =
            sdk::RegisterKernel<MatrixDiagKernel>(info, registrar, *op, {sdk::AllTypes()})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::cpu
