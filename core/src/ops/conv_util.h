// The grouping check shared by the shape functions of Conv2D (nn_ops.cc) and
// its gradients (conv_grad_ops.cc).
#ifndef PLEXUS_CORE_SRC_OPS_CONV_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_CONV_UTIL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"

namespace plexus {

// A Conv2D whose input has in_c channels and whose filter is
// [KH, KW, f_in, f_out] has in_c / f_in groups (Keras' Conv2D(groups=...)),
// which must divide f_out as TensorFlow requires; unknown (-1) sizes pass.
inline absl::Status CheckConvGroups(InferenceContext& ctx, int64_t in_c, int64_t f_in,
                                    int64_t f_out) {
  if (in_c < 0 || f_in <= 0 || f_out < 0 || in_c % f_in != 0) return absl::OkStatus();
  const int64_t groups = in_c / f_in;
  if (groups > 0 && f_out % groups != 0) {
    return ctx.Error(absl::StrCat("output depth ", f_out,
                                  " must be a multiple of the number of groups ", groups,
                                  " (input depth ", in_c, " / filter input depth ", f_in, ")"));
  }
  return absl::OkStatus();
}

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_CONV_UTIL_H_
