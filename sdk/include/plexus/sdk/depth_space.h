// DepthToSpace and SpaceToDepth: the shapes TensorFlow accepts and the
// element each output takes, shared by the cpu and reference plugins.
//
// With block size b, DepthToSpace moves depth into b x b spatial blocks:
//   out[n, y * b + i, x * b + j, c] = in[n, y, x, (i * b + j) * out_depth + c]
// and SpaceToDepth is its inverse. NHWC and NCHW layouts (NCHW_VECT_C is
// TensorFlow's qint8-only layout: refused).
#ifndef PLEXUS_SDK_DEPTH_SPACE_H_
#define PLEXUS_SDK_DEPTH_SPACE_H_

#include <cstdint>
#include <string>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// block_size and data_format, checked.
struct DepthSpaceAttrs {
  int64_t block = 2;
  bool nchw = false;

  void Read(const Attrs& attrs) {
    block = attrs.Int("block_size");
    PX_SDK_CHECK(block >= 2, "block_size must be at least 2, got %lld",
                 static_cast<long long>(block));
    const std::string format = attrs.String("data_format", "NHWC");
    PX_SDK_CHECK(format == "NHWC" || format == "NCHW",
                 "data_format must be NHWC or NCHW, got '%s' (NCHW_VECT_C requires qint8)",
                 format.c_str());
    nchw = format == "NCHW";
  }
};

// The depth (space) side's dimensions: batch, height, width, depth of the
// tensor with the small spatial size and the large depth.
struct DepthSpaceShape {
  int64_t batch, height, width, depth;  // the "depth" side
  int64_t block;
  bool nchw;
  Shape depth_shape() const {
    return nchw ? Shape{batch, depth, height, width} : Shape{batch, height, width, depth};
  }
  Shape space_shape() const {
    const int64_t d = depth / (block * block);
    return nchw ? Shape{batch, d, height * block, width * block}
                : Shape{batch, height * block, width * block, d};
  }
  // The offsets of one element in the depth-side and space-side tensors, for
  // batch n, depth-side pixel (y, x), block offset (i, j) and space channel c.
  void Offsets(int64_t n, int64_t y, int64_t x, int64_t i, int64_t j, int64_t c,
               int64_t* depth_offset, int64_t* space_offset) const {
    const int64_t d = depth / (block * block);
    const int64_t dc = (i * block + j) * d + c;
    const int64_t sy = y * block + i, sx = x * block + j;
    if (nchw) {
      *depth_offset = ((n * depth + dc) * height + y) * width + x;
      *space_offset = ((n * d + c) * height * block + sy) * width * block + sx;
    } else {
      *depth_offset = ((n * height + y) * width + x) * depth + dc;
      *space_offset = ((n * height * block + sy) * width * block + sx) * d + c;
    }
  }
};

// DepthToSpace's input: rank 4, depth divisible by block^2.
inline DepthSpaceShape DepthToSpaceShapeOf(const Shape& in, const DepthSpaceAttrs& a) {
  PX_SDK_CHECK(in.size() == 4, "Input rank should be: 4 instead of: %zu", in.size());
  const int64_t depth = a.nchw ? in[1] : in[3];
  const int64_t block_sq = a.block * a.block;
  PX_SDK_CHECK(depth % block_sq == 0, "Input depth dimension %lld should be divisible by: %lld",
               static_cast<long long>(depth), static_cast<long long>(block_sq));
  return a.nchw ? DepthSpaceShape{in[0], in[2], in[3], depth, a.block, true}
                : DepthSpaceShape{in[0], in[1], in[2], depth, a.block, false};
}

// SpaceToDepth's input: rank 4, height and width divisible by block.
inline DepthSpaceShape SpaceToDepthShapeOf(const Shape& in, const DepthSpaceAttrs& a) {
  PX_SDK_CHECK(in.size() == 4, "Input rank should be: 4 instead of: %zu", in.size());
  const int64_t h = a.nchw ? in[2] : in[1], w = a.nchw ? in[3] : in[2];
  const int64_t c = a.nchw ? in[1] : in[3];
  PX_SDK_CHECK(h % a.block == 0 && w % a.block == 0,
               "Image width %lld and height %lld should be divisible by block_size: %lld",
               static_cast<long long>(w), static_cast<long long>(h),
               static_cast<long long>(a.block));
  return DepthSpaceShape{in[0], h / a.block, w / a.block, c * a.block * a.block, a.block, a.nchw};
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_DEPTH_SPACE_H_
