// The geometry of the matrix-diagonal ops (MatrixDiag, MatrixDiagPart,
// MatrixSetDiag and their V2 and V3), written once and shared by the core's
// shape functions and by the reference and cpu kernels, so that all three
// accept and refuse the same arguments with the same messages (TensorFlow's
// where TensorFlow has one).
//
// Diagonal d of a matrix holds the elements (i, i + d): d > 0 above the main
// diagonal, d < 0 below. k is one diagonal or a band [lower, upper]; a band
// is stored as num = upper - lower + 1 rows of max_len elements, the row of
// diagonal d at index upper - d. A diagonal shorter than max_len is aligned
// to the left or right of its row by `align` (V3's attribute: superdiagonals
// first, then subdiagonals; V1 and V2 align both to the left).
//
// Plain C++ with no dependency (the core includes it too). A dimension of -1
// is unknown (shape functions at import time); kernels pass exact shapes.
// Each check returns an empty string when the arguments are valid, else the
// error message; the caller turns that into INVALID_ARGUMENT.
#ifndef PLEXUS_SDK_MATRIX_DIAG_SHAPES_H_
#define PLEXUS_SDK_MATRIX_DIAG_SHAPES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace plexus::matrix_diag {

using Dims = std::vector<int64_t>;

inline std::string Str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

struct Band {
  int64_t lower = 0, upper = 0;
  int64_t num() const { return upper - lower + 1; }
};

// k: a scalar, or a vector of one or two elements, lower <= upper. `values`
// null: unknown (only the shape is checked).
inline std::string ReadBand(const Dims& k_shape, const std::vector<int64_t>* values, Band* band) {
  if (k_shape.size() > 1) {
    return "diag_index must be a scalar or vector, received shape: " + Str(k_shape);
  }
  if (k_shape.size() == 1 && k_shape[0] == 0) {
    return "Expected diag_index to have at least 1 element";
  }
  if (k_shape.size() == 1 && k_shape[0] > 2) {
    return "diag_index must have only one or two elements, received " +
           std::to_string(k_shape[0]) + " elements.";
  }
  if (values == nullptr || values->empty()) return "";
  band->lower = (*values)[0];
  band->upper = values->size() > 1 ? (*values)[1] : band->lower;
  if (band->lower > band->upper) {
    return "lower_diag_index must not be larger than upper_diag_index: " +
           std::to_string(band->lower) + " > " + std::to_string(band->upper);
  }
  return "";
}

// The align attribute: LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT or RIGHT_RIGHT
// (superdiagonals, subdiagonals). Empty (V1, V2): LEFT_LEFT.
struct Align {
  bool left_super = true, left_sub = true;
};
inline std::string ParseAlign(const std::string& s, Align* a) {
  if (s.empty() || s == "LEFT_LEFT") {
    *a = {true, true};
  } else if (s == "LEFT_RIGHT") {
    *a = {true, false};
  } else if (s == "RIGHT_LEFT") {
    *a = {false, true};
  } else if (s == "RIGHT_RIGHT") {
    *a = {false, false};
  } else {
    return "align must be LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT or RIGHT_RIGHT, got '" + s + "'";
  }
  return "";
}

// The length of diagonal d of a rows x cols matrix, and where it starts in
// its row of max_len elements.
inline void DiagLenAndOffset(int64_t d, int64_t max_len, int64_t rows, int64_t cols,
                             const Align& a, int64_t* len, int64_t* offset) {
  const bool left = (d >= 0 && a.left_super) || (d <= 0 && a.left_sub);
  *len = std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  *offset = left ? 0 : max_len - *len;
}

// The longest diagonal of the band in a rows x cols matrix.
inline int64_t MaxDiagLen(int64_t rows, int64_t cols, const Band& b) {
  return std::min(rows + std::min<int64_t>(b.upper, 0), cols - std::max<int64_t>(b.lower, 0));
}

// The band must lie inside a rows x cols matrix (d = 0 always may).
inline std::string CheckBandInMatrix(int64_t rows, int64_t cols, const Band& b) {
  if (rows < 0 || cols < 0) return "";
  const struct { const char* name; int64_t v; } ends[] = {{"lower", b.lower}, {"upper", b.upper}};
  for (const auto& e : ends) {
    if (!((-rows < e.v && e.v < cols) || e.v == 0)) {
      return std::string(e.name) + "_diag_index is out of bound: " + std::to_string(e.v) +
             ". It must be between " + std::to_string(-rows) + " and " + std::to_string(cols);
    }
  }
  return "";
}

// MatrixDiagPart: input [..., rows, cols] gives [..., num, max_len] (or
// [..., max_len] for one diagonal).
inline std::string DiagPartShape(const Dims& in, const Band& b, Dims* out) {
  if (in.size() < 2) return "input must be at least 2-dim, received shape: " + Str(in);
  const int64_t rows = in[in.size() - 2], cols = in[in.size() - 1];
  const std::string error = CheckBandInMatrix(rows, cols, b);
  if (!error.empty()) return error;
  out->assign(in.begin(), in.end() - 2);
  if (b.num() > 1) out->push_back(b.num());
  out->push_back(rows < 0 || cols < 0 ? -1 : MaxDiagLen(rows, cols, b));
  return "";
}

// MatrixDiag: diagonal [..., max_len] (or [..., num, max_len] for a band)
// gives [..., rows, cols]. num_rows and num_cols of -1 are derived: both
// unknown, the smallest square matrix that holds the band; one unknown, the
// smallest that fits. Fills *rows and *cols (-1 when not known yet).
inline std::string DiagShape(const Dims& diag, const Band& b, int64_t num_rows, int64_t num_cols,
                             Dims* out, int64_t* rows, int64_t* cols) {
  const size_t rank = diag.size();
  if (rank < 1) return "diagonal must be at least 1-dim, received shape: " + Str(diag);
  if (b.num() > 1 && rank < 2) {
    return "diagonal must be at least 2-dim for a band of diagonals (k = [" +
           std::to_string(b.lower) + ", " + std::to_string(b.upper) + "]), received shape: " +
           Str(diag);
  }
  if (b.num() > 1 && diag[rank - 2] >= 0 && diag[rank - 2] != b.num()) {
    return "The number of diagonals provided in the input does not match the lower_diag_index "
           "and upper_diag_index range.";
  }
  const int64_t max_len = diag[rank - 1];
  *rows = num_rows;
  *cols = num_cols;
  if (max_len >= 0) {
    const int64_t min_rows = max_len - std::min<int64_t>(b.upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(b.lower, 0);
    if (num_rows != -1 && num_rows < min_rows) return "The number of rows is too small.";
    if (num_cols != -1 && num_cols < min_cols) return "The number of columns is too small.";
    if (num_rows == -1 && num_cols == -1) {
      *rows = *cols = std::max(min_rows, min_cols);
    } else if (num_rows == -1) {
      *rows = min_rows;
    } else if (num_cols == -1) {
      *cols = min_cols;
    }
    if (*rows != min_rows && *cols != min_cols) {
      return "The number of rows or columns is not consistent with the specified d_lower, "
             "d_upper, and diagonal.";
    }
  }
  out->assign(diag.begin(), diag.end() - (b.num() > 1 ? 2 : 1));
  out->push_back(*rows);
  out->push_back(*cols);
  return "";
}

// MatrixSetDiag: diagonal must have the shape MatrixDiagPart gives for the
// input.
inline std::string SetDiagCheck(const Dims& in, const Dims& diag, const Band& b) {
  if (in.size() < 2) return "input must be at least 2-dim, received shape: " + Str(in);
  if (diag.empty()) return "diagonal must be at least 1-dim, received shape: " + Str(diag);
  Dims want;
  const std::string error = DiagPartShape(in, b, &want);
  if (!error.empty()) return error;
  bool match = want.size() == diag.size();
  for (size_t i = 0; match && i < want.size(); ++i) {
    match = want[i] < 0 || diag[i] < 0 || want[i] == diag[i];
  }
  if (!match) {
    return "Either first dimensions of diagonal don't match input.shape[:-2], or "
           "diagonal.shape[:-1] is not consistent with the number of diagonals supplied. "
           "Expected diagonal shape: " + Str(want) + " but received: " + Str(diag);
  }
  return "";
}

}  // namespace plexus::matrix_diag

#endif  // PLEXUS_SDK_MATRIX_DIAG_SHAPES_H_
