// Grouped convolutions (ConvGeometry::groups > 1) as one ungrouped
// convolution per group, for the paths that have no grouped form of their
// own: im2col + GEMM (Conv2D and _FusedConv2D in types other than float, or
// when oneDNN refuses a geometry) and the gradients' GEMM paths. Each group
// reads a column slice of two operands and writes a column slice of the
// third, all three seen as row-major matrices:
//
//   kInput   x or dx    [n*h*w, c]              group k: channels k*c/groups ...
//   kFilter  f or df    [kh*kw*c/groups, f_out] group k: columns k*f_out/groups ...
//   kOutput  y or dy    [n*oh*ow, f_out]        group k: columns k*f_out/groups ...
//
// The slices are copied to contiguous buffers and back; oneDNN (float) runs
// grouped convolutions in one primitive and does not come here.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_CONV_GROUPS_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_CONV_GROUPS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/conv_im2col.h"

namespace plexus::cpu {

enum class ConvOperand { kInput, kFilter, kOutput };

// The geometry of one group of g: an ungrouped convolution of c / groups
// input and f_out / groups output channels.
inline ConvGeometry GroupGeometry(const ConvGeometry& g) {
  ConvGeometry sub = g;
  sub.c = g.c / g.groups;
  sub.f_out = g.f_out / g.groups;
  sub.groups = 1;
  return sub;
}

// Rows and columns of an operand of g as a matrix (see the table above).
inline int64_t OperandRows(const ConvGeometry& g, ConvOperand which) {
  switch (which) {
    case ConvOperand::kInput: return g.n * g.h * g.w;
    case ConvOperand::kFilter: return g.kh * g.kw * (g.c / g.groups);
    case ConvOperand::kOutput: return g.n * g.oh * g.ow;
  }
  return 0;
}
inline int64_t OperandColumns(const ConvGeometry& g, ConvOperand which) {
  return which == ConvOperand::kInput ? g.c : g.f_out;
}

// Runs run(sub, a_k, b_k, out_k) for every group k, where sub is
// GroupGeometry(g) and a_k, b_k, out_k are group k's slices of the operands
// a, b and out (out's slices are written back; run writes every element of
// out_k).
template <typename T, typename Run>
void ForEachGroup(const ConvGeometry& g, ConvOperand a_kind, const T* a, ConvOperand b_kind,
                  const T* b, ConvOperand out_kind, T* out, Run run) {
  const ConvGeometry sub = GroupGeometry(g);
  struct Slice {
    int64_t rows, width, part;
    std::vector<T> data;
  };
  auto slice_of = [&](ConvOperand kind) {
    const int64_t width = OperandColumns(g, kind);
    return Slice{OperandRows(g, kind), width, width / g.groups,
                 std::vector<T>(static_cast<size_t>(OperandRows(g, kind) * (width / g.groups)))};
  };
  Slice sa = slice_of(a_kind), sb = slice_of(b_kind), so = slice_of(out_kind);
  auto take = [](const T* full, int64_t k, Slice* s) {
    for (int64_t r = 0; r < s->rows; ++r) {
      const T* src = full + r * s->width + k * s->part;
      std::copy(src, src + s->part, s->data.data() + r * s->part);
    }
  };
  for (int64_t k = 0; k < g.groups; ++k) {
    take(a, k, &sa);
    take(b, k, &sb);
    run(sub, sa.data.data(), sb.data.data(), so.data.data());
    for (int64_t r = 0; r < so.rows; ++r) {
      const T* src = so.data.data() + r * so.part;
      std::copy(src, src + so.part, out + r * so.width + k * so.part);
    }
  }
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_CONV_GROUPS_H_
