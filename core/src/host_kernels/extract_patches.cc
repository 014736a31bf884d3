// Host kernel of ExtractImagePatches (schema in ops/image_host_ops.cc): for
// each output position, the ksize_rows x ksize_cols window (with holes of
// `rates`) of every channel, flattened as [rows, cols, depth], zeros where
// the window leaves the image under SAME padding, as TensorFlow. Works on
// the bytes of any element type.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/dtype.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ExtractImagePatches(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dims() != 4) {
    return ctx.InvalidArgument(absl::StrCat("images must be 4-dimensional, got shape ", ShapeToString(in.shape())));
  }
  if (in.dtype() == DataType::kString) return ctx.InvalidArgument("images must be numbers, not strings");
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> k, GetAttrIntList(ctx.node(), "ksizes"));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> s, GetAttrIntList(ctx.node(), "strides"));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> r, GetAttrIntList(ctx.node(), "rates"));
  PX_ASSIGN_OR_RETURN(std::string padding, GetAttrString(ctx.node(), "padding"));
  for (const auto* v : {&k, &s, &r}) {
    if (v->size() != 4 || (*v)[0] != 1 || (*v)[3] != 1 || (*v)[1] <= 0 || (*v)[2] <= 0) {
      return ctx.InvalidArgument("ksizes, strides and rates must be [1, rows, cols, 1] with positive rows and cols");
    }
  }
  if (padding != "SAME" && padding != "VALID") {
    return ctx.InvalidArgument("padding must be SAME or VALID, got '" + padding + "'");
  }
  const int64_t batch = in.shape()[0], rows = in.shape()[1], cols = in.shape()[2], depth = in.shape()[3];
  int64_t out_size[3] = {0, 0, 0}, pad[3] = {0, 0, 0};
  const int64_t size[3] = {0, rows, cols};
  for (int d = 1; d <= 2; ++d) {
    const int64_t effective = k[d] + (k[d] - 1) * (r[d] - 1);
    if (padding == "SAME") {
      out_size[d] = (size[d] + s[d] - 1) / s[d];
      pad[d] = std::max<int64_t>(0, (out_size[d] - 1) * s[d] + effective - size[d]) / 2;
    } else {
      out_size[d] = size[d] < effective ? 0 : (size[d] - effective) / s[d] + 1;
    }
  }
  const int64_t out_rows = out_size[1], out_cols = out_size[2];
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), {batch, out_rows, out_cols, k[1] * k[2] * depth}));
  const size_t element = DataTypeSize(in.dtype());
  const size_t pixel = static_cast<size_t>(depth) * element;
  const auto* src = static_cast<const char*>(in.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t oy = 0; oy < out_rows; ++oy) {
      for (int64_t ox = 0; ox < out_cols; ++ox) {
        for (int64_t ky = 0; ky < k[1]; ++ky) {
          const int64_t y = oy * s[1] - pad[1] + ky * r[1];
          for (int64_t kx = 0; kx < k[2]; ++kx, dst += pixel) {
            const int64_t x = ox * s[2] - pad[2] + kx * r[2];
            if (y < 0 || y >= rows || x < 0 || x >= cols) {
              std::memset(dst, 0, pixel);
            } else {
              std::memcpy(dst, src + ((b * rows + y) * cols + x) * pixel, pixel);
            }
          }
        }
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ExtractImagePatches", ExtractImagePatches);

}  // namespace
}  // namespace plexus
