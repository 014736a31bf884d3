// Reference kernels: MatrixDiag, MatrixDiagPart and MatrixSetDiag, V1 to V3
// (see reference_kernels.h). Each output element is computed from its own
// coordinates: which diagonal d it lies on, that diagonal's row in the band
// and its position in the row (plexus/sdk/matrix_diag_shapes.h has the
// geometry and the checks, shared with the core and the cpu plugin).
// Elements move as bytes, so every fixed-size dtype is served.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "plexus/sdk/matrix_diag_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;
namespace md = matrix_diag;

enum class Kind { kDiag, kDiagPart, kSetDiag };

class MatrixDiagKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string op = attrs.op();
    kind_ = op.rfind("MatrixDiagPart", 0) == 0 ? Kind::kDiagPart
            : op.rfind("MatrixSetDiag", 0) == 0 ? Kind::kSetDiag
                                                : Kind::kDiag;
    versioned_ = op.back() == '2' || op.back() == '3';
    const std::string error = md::ParseAlign(op.back() == '3' ? attrs.String("align", "RIGHT_LEFT") : "",
                                             &align_);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
  }

  void Compute(sdk::Call& call) override {
    es_ = sdk::DtypeSize(call.input_dtype(0));
    PX_SDK_CHECK(es_ > 0, "unsupported dtype %s", sdk::DtypeName(call.input_dtype(0)));
    band_ = md::Band();
    if (versioned_) ReadBand(call, kind_ == Kind::kSetDiag ? 2 : 1);
    switch (kind_) {
      case Kind::kDiag: return Diag(call);
      case Kind::kDiagPart: return DiagPart(call);
      case Kind::kSetDiag: return SetDiag(call);
    }
  }

 private:
  void ReadBand(sdk::Call& call, int index) {
    const Shape k_shape = call.input_shape(index);
    const std::vector<int64_t> k = call.input_int_values(index);
    const std::string error = md::ReadBand(k_shape, &k, &band_);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
  }

  // The padding value (input `index`, a scalar), or zero bytes.
  std::vector<char> Padding(sdk::Call& call, int index, const char* message) {
    std::vector<char> pad(es_, 0);
    if (!versioned_) return pad;
    PX_SDK_CHECK(call.input_shape(index).empty(), "%s", message);
    std::memcpy(pad.data(), call.input_data(index), es_);
    return pad;
  }

  int64_t ScalarInt(sdk::Call& call, int index, const char* message) {
    PX_SDK_CHECK(call.input_shape(index).empty(), "%s", message);
    return call.input_int_values(index)[0];
  }

  void Diag(sdk::Call& call) {
    const Shape ds = call.input_shape(0);
    int64_t num_rows = -1, num_cols = -1;
    if (versioned_) {
      num_rows = ScalarInt(call, 2, "num_rows must be a scalar");
      num_cols = ScalarInt(call, 3, "num_cols must be a scalar");
    }
    const std::vector<char> pad = Padding(call, 4, "padding_value must be a scalar");
    Shape out_shape;
    int64_t rows = 0, cols = 0;
    const std::string error = md::DiagShape(ds, band_, num_rows, num_cols, &out_shape, &rows, &cols);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t max_len = ds.back();
    const char* diag = static_cast<const char*>(call.input_data(0));
    char* out = static_cast<char*>(call.AllocateOutputRaw(0, out_shape));
    const int64_t n = sdk::NumElements(out_shape);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t j = e % cols, i = e / cols % rows, b = e / (rows * cols);
      const int64_t d = j - i;
      const char* src = pad.data();
      if (band_.lower <= d && d <= band_.upper) {
        int64_t len = 0, offset = 0;
        md::DiagLenAndOffset(d, max_len, rows, cols, align_, &len, &offset);
        const int64_t row = band_.upper - d, pos = j - std::max<int64_t>(d, 0) + offset;
        src = diag + ((b * band_.num() + row) * max_len + pos) * es_;
      }
      std::memcpy(out + e * es_, src, es_);
    }
  }

  void DiagPart(sdk::Call& call) {
    const Shape in_shape = call.input_shape(0);
    const std::vector<char> pad = Padding(call, 2, "Padding must be scalar.");
    Shape out_shape;
    const std::string error = md::DiagPartShape(in_shape, band_, &out_shape);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t rows = in_shape[in_shape.size() - 2], cols = in_shape.back();
    const int64_t max_len = out_shape.back();
    const char* in = static_cast<const char*>(call.input_data(0));
    char* out = static_cast<char*>(call.AllocateOutputRaw(0, out_shape));
    const int64_t n = sdk::NumElements(out_shape);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t pos = e % max_len, row = e / max_len % band_.num();
      const int64_t b = e / (max_len * band_.num());
      const int64_t d = band_.upper - row;
      int64_t len = 0, offset = 0;
      md::DiagLenAndOffset(d, max_len, rows, cols, align_, &len, &offset);
      const char* src = pad.data();
      if (pos >= offset && pos < offset + len) {
        const int64_t i = pos - offset + std::max<int64_t>(-d, 0);
        const int64_t j = pos - offset + std::max<int64_t>(d, 0);
        src = in + ((b * rows + i) * cols + j) * es_;
      }
      std::memcpy(out + e * es_, src, es_);
    }
  }

  void SetDiag(sdk::Call& call) {
    const Shape in_shape = call.input_shape(0), ds = call.input_shape(1);
    const std::string error = md::SetDiagCheck(in_shape, ds, band_);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const int64_t rows = in_shape[in_shape.size() - 2], cols = in_shape.back();
    const int64_t max_len = ds.back();
    const char* in = static_cast<const char*>(call.input_data(0));
    const char* diag = static_cast<const char*>(call.input_data(1));
    char* out = static_cast<char*>(call.AllocateOutputRaw(0, in_shape));
    const int64_t n = sdk::NumElements(in_shape);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t j = e % cols, i = e / cols % rows, b = e / (rows * cols);
      const int64_t d = j - i;
      const char* src = in + e * es_;
      if (band_.lower <= d && d <= band_.upper) {
        int64_t len = 0, offset = 0;
        md::DiagLenAndOffset(d, max_len, rows, cols, align_, &len, &offset);
        const int64_t row = band_.upper - d, pos = j - std::max<int64_t>(d, 0) + offset;
        src = diag + ((b * band_.num() + row) * max_len + pos) * es_;
      }
      std::memcpy(out + e * es_, src, es_);
    }
  }

  Kind kind_ = Kind::kDiag;
  bool versioned_ = false;
  md::Align align_;
  md::Band band_;
  size_t es_ = 0;
};

}  // namespace

PX_Status* RegisterMatrixDiagKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::reference
