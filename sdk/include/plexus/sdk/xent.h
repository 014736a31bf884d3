// SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits:
// the shape checks (with TensorFlow's messages) and the broadcast of the
// dense form's operands, shared by the cpu, reference and GPU plugins.
#ifndef PLEXUS_SDK_XENT_H_
#define PLEXUS_SDK_XENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// A cross entropy over `batch` rows of `classes`. Dense form: logits
// element (r, k) is at r * f_row + k * f_col and labels element (r, k) at
// r * l_row + k * l_col, a step of 0 where an operand is broadcast. Sparse
// form: logits [batch, classes] (f_row = classes, f_col = 1), labels
// [batch].
struct XentShape {
  int64_t batch = 0, classes = 0;
  int64_t f_row = 0, f_col = 1, l_row = 0, l_col = 1;
};

// The dense form: logits and labels of rank 0 to 2 (one of them 2),
// broadcast to [batch, classes] (rank 1 is one row).
inline XentShape DenseXentShape(const Shape& fs, const Shape& ls) {
  PX_SDK_CHECK(fs.size() <= 2 && ls.size() <= 2 && (fs.size() == 2 || ls.size() == 2),
               "logits and labels must be either 2-dimensional, or broadcasted to be "
               "2-dimensional; got logits %s and labels %s",
               ShapeString(fs).c_str(), ShapeString(ls).c_str());
  const int64_t f_rows = fs.size() == 2 ? fs[0] : 1, f_cols = fs.empty() ? 1 : fs.back();
  const int64_t l_rows = ls.size() == 2 ? ls[0] : 1, l_cols = ls.empty() ? 1 : ls.back();
  auto merge = [&](int64_t a, int64_t b) {
    PX_SDK_CHECK(a == b || a == 1 || b == 1,
                 "logits and labels must be broadcastable: logits_size=%s labels_size=%s",
                 ShapeString(fs).c_str(), ShapeString(ls).c_str());
    return a == 1 ? b : a;
  };
  XentShape s;
  s.batch = merge(f_rows, l_rows);
  s.classes = merge(f_cols, l_cols);
  s.f_row = f_rows == s.batch ? f_cols : 0;
  s.l_row = l_rows == s.batch ? l_cols : 0;
  s.f_col = f_cols == s.classes ? 1 : 0;
  s.l_col = l_cols == s.classes ? 1 : 0;
  return s;
}

// The sparse form: logits [batch, classes], labels [batch], at least one
// class unless the batch is empty.
inline XentShape SparseXentShape(const Shape& fs, const Shape& ls) {
  PX_SDK_CHECK(fs.size() == 2, "logits must be 2-D, but got shape %s", ShapeString(fs).c_str());
  PX_SDK_CHECK(ls.size() == 1, "labels must be 1-D, but got shape %s", ShapeString(ls).c_str());
  PX_SDK_CHECK(fs[0] == ls[0],
               "logits and labels must have the same first dimension, got logits shape %s "
               "and labels shape %s",
               ShapeString(fs).c_str(), ShapeString(ls).c_str());
  PX_SDK_CHECK(fs[0] == 0 || fs[1] > 0, "Must have at least one class, but got logits shape %s",
               ShapeString(fs).c_str());
  XentShape s;
  s.batch = fs[0];
  s.classes = fs[1];
  s.f_row = fs[1];
  return s;
}

// The sparse form's labels, read on the host: every one in [0, classes),
// else INVALID_ARGUMENT with TensorFlow's message (the first 100 labels).
inline void CheckSparseLabels(const std::vector<int64_t>& labels, int64_t classes) {
  for (int64_t label : labels) {
    if (label >= 0 && label < classes) continue;
    std::string values;
    for (size_t k = 0; k < labels.size() && k < 100; ++k) {
      values += (k ? " " : "") + std::to_string(labels[k]);
    }
    if (labels.size() > 100) values += "...";
    PX_SDK_CHECK(false,
                 "Received a label value of %lld which is outside the valid range of "
                 "[0, %lld).  Label values: %s",
                 static_cast<long long>(label), static_cast<long long>(classes), values.c_str());
  }
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_XENT_H_
