// The geometry of one 2-D pooling (MaxPool, AvgPool and their gradients):
// plain data, with no other SDK header, so device code can take it as a
// kernel argument. sdk::Window::Pool (window.h) fills it from the op's
// attributes and the input's shape.
//
// Input [n, h, w, c] (NHWC) or [n, c, h, w] (NCHW), output [n, oh, ow, c] or
// [n, c, oh, ow]. Output pixel (i, j) covers input rows i * sh - top ...
// + kh - 1 and columns j * sw - left ... + kw - 1; positions outside the
// input are padding.
#ifndef PLEXUS_SDK_POOL_GEOMETRY_H_
#define PLEXUS_SDK_POOL_GEOMETRY_H_

#include <cstdint>

namespace plexus::sdk {

struct PoolGeometry {
  bool nchw = false;
  int64_t n = 0, c = 0, h = 0, w = 0;      // input
  int64_t oh = 0, ow = 0;                  // pooled
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;  // window and strides
  int64_t top = 0, left = 0;               // padding before

  // The in-bounds window rows [*h0, *h1) and columns [*w0, *w1) of output
  // pixel (i, j).
  void Bounds(int64_t i, int64_t j, int64_t* h0, int64_t* h1, int64_t* w0, int64_t* w1) const {
    const int64_t hs = i * sh - top, ws = j * sw - left;
    *h0 = hs > 0 ? hs : 0;
    *h1 = hs + kh < h ? hs + kh : h;
    *w0 = ws > 0 ? ws : 0;
    *w1 = ws + kw < w ? ws + kw : w;
  }
};

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_POOL_GEOMETRY_H_
