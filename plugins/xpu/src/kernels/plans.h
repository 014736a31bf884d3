// Host-side plans of the elementwise and reduction kernels (the structures
// of kernels/abi.h, passed to the kernels by value): NumPy broadcasting
// collapsed to at most PX_XPU_MAX_DIMS dimensions, and reductions over any
// set of axes. Header-only; the PoCL tests (tests/xpu) use it too.
#ifndef PLEXUS_PLUGINS_XPU_KERNELS_PLANS_H_
#define PLEXUS_PLUGINS_XPU_KERNELS_PLANS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "abi.h"
#include "plexus/sdk/kernel.h"

namespace plexus::xpu {

// abi.h's plans are passed to the kernels by value, so their C++ layout must
// be OpenCL C's: px_i64 is OpenCL's long (8 bytes, 8-aligned) and the plans
// hold nothing else, so neither side pads.
static_assert(sizeof(px_i64) == 8 && alignof(px_i64) == 8, "px_i64 must be OpenCL C's long");
static_assert(sizeof(px_xpu_broadcast_plan) == (2 + 4 * PX_XPU_MAX_DIMS) * sizeof(px_i64),
              "px_xpu_broadcast_plan: the kernels' layout");
static_assert(sizeof(px_xpu_reduce_plan) == (4 + 4 * PX_XPU_MAX_DIMS) * sizeof(px_i64),
              "px_xpu_reduce_plan: the kernels' layout");

// Broadcasts `n` shapes (NumPy rules) into *out_dims (their rank) and the
// collapsed plan: output dimensions of 1 dropped, neighbours merged where
// each input repeats along both or neither. Returns false for shapes that do
// not broadcast; throws UNIMPLEMENTED when more than PX_XPU_MAX_DIMS
// dimensions remain after collapsing.
inline bool MakeBroadcastPlan(const sdk::Shape* shapes, int n, std::vector<int64_t>* out_dims,
                              px_xpu_broadcast_plan* plan) {
  size_t rank = 0;
  for (int k = 0; k < n; ++k) rank = shapes[k].size() > rank ? shapes[k].size() : rank;
  out_dims->assign(rank, 1);
  int64_t dims[PX_XPU_MAX_DIMS];
  unsigned masks[PX_XPU_MAX_DIMS];  // bit k: input k repeats along the dim
  int collapsed = 0;
  bool too_many = false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size[3] = {1, 1, 1};
    int64_t o = 1;
    for (int k = 0; k < n; ++k) {
      const size_t lead = rank - shapes[k].size();
      size[k] = d >= lead ? shapes[k][d - lead] : 1;
      if (size[k] == 1) continue;
      if (o != 1 && o != size[k]) return false;
      o = size[k];
    }
    (*out_dims)[d] = o;
    if (o == 1) continue;
    unsigned mask = 0;
    for (int k = 0; k < n; ++k) mask |= size[k] == 1 ? 1u << k : 0u;
    if (collapsed > 0 && masks[collapsed - 1] == mask) {
      dims[collapsed - 1] *= o;
      continue;
    }
    if (collapsed == PX_XPU_MAX_DIMS) {
      too_many = true;  // reported once the shapes are known to broadcast
      continue;
    }
    dims[collapsed] = o;
    masks[collapsed] = mask;
    ++collapsed;
  }
  if (too_many) {
    std::string list;
    for (int k = 0; k < n; ++k) list += (k > 0 ? ", " : "") + sdk::ShapeString(shapes[k]);
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                           sdk::Format("broadcasting %s needs more than %d dimensions after "
                                       "collapsing, the most the XPU kernels handle",
                                       list.c_str(), PX_XPU_MAX_DIMS));
  }
  *plan = px_xpu_broadcast_plan{};
  plan->rank = collapsed;
  plan->num_elements = 1;
  for (int64_t o : *out_dims) plan->num_elements *= o;
  for (int k = 0; k < n; ++k) {
    int64_t stride = 1;
    for (int d = collapsed - 1; d >= 0; --d) {
      plan->dims[d] = dims[d];
      if (masks[d] & (1u << k)) {
        plan->strides[k][d] = 0;
      } else {
        plan->strides[k][d] = stride;
        stride *= dims[d];
      }
    }
  }
  return true;
}

// The plan of reducing a row-major tensor of `shape` over the dimensions
// marked in `reduced` (same length as shape). Dimensions of size 1 are
// dropped and neighbours that are both kept or both reduced merged. Returns
// false when nothing is reduced (every reduced dimension has size 1): each
// output is then a copy of one input. Throws UNIMPLEMENTED when more than
// PX_XPU_MAX_DIMS groups of kept or reduced dimensions remain.
inline bool MakeReducePlan(const sdk::Shape& shape, const std::vector<bool>& reduced,
                           px_xpu_reduce_plan* plan) {
  *plan = px_xpu_reduce_plan{};
  plan->outputs = 1;
  plan->count = 1;
  std::vector<int64_t> dims;
  std::vector<bool> group_reduced;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? plan->count : plan->outputs) *= shape[d];
    if (shape[d] == 1) continue;
    if (!dims.empty() && group_reduced.back() == reduced[d]) {
      dims.back() *= shape[d];
    } else {
      dims.push_back(shape[d]);
      group_reduced.push_back(reduced[d]);
    }
  }
  bool any_reduced = false;
  for (bool r : group_reduced) any_reduced = any_reduced || r;
  if (!any_reduced) return false;
  const int groups = static_cast<int>(dims.size());
  std::vector<int64_t> strides(static_cast<size_t>(groups));
  int64_t stride = 1;
  for (int g = groups - 1; g >= 0; --g) {
    strides[g] = stride;
    stride *= dims[g];
  }
  for (int g = 0; g < groups; ++g) {
    px_i64& n = group_reduced[g] ? plan->red_rank : plan->kept_rank;
    if (n == PX_XPU_MAX_DIMS) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("reducing %s over these axes needs more than %d groups of dimensions, the "
                      "most the XPU kernels handle",
                      sdk::ShapeString(shape).c_str(), PX_XPU_MAX_DIMS));
    }
    (group_reduced[g] ? plan->red_dims : plan->kept_dims)[n] = dims[g];
    (group_reduced[g] ? plan->red_strides : plan->kept_strides)[n] = strides[g];
    ++n;
  }
  return true;
}

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_KERNELS_PLANS_H_
