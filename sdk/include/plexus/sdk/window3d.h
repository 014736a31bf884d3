// The window of a 3-D convolution or pooling (Conv3D, MaxPool3D,
// AvgPool3D) on NDHWC tensors: strides, dilations, ksize and SAME/VALID
// padding validated the way TensorFlow does, and the output geometry.
// Shared by the cpu and reference plugins so both accept and refuse the same
// nodes with the same messages. NCDHW is refused as UNIMPLEMENTED, as
// TensorFlow's CPU kernels refuse it.
#ifndef PLEXUS_SDK_WINDOW3D_H_
#define PLEXUS_SDK_WINDOW3D_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

struct Window3D {
  bool same = false;
  int64_t k[3] = {1, 1, 1};  // pooling only (convolutions take the filter's)
  int64_t s[3] = {1, 1, 1};
  int64_t d[3] = {1, 1, 1};

  void Read(const Attrs& attrs, const char* op, bool pooling) {
    const std::string format = attrs.String("data_format", "NDHWC");
    if (format == "NCDHW") {
      throw KernelError(PX_CODE_UNIMPLEMENTED,
                        Format("%s supports data_format NDHWC only, got NCDHW", op));
    }
    PX_SDK_CHECK(format == "NDHWC", "data_format must be NDHWC or NCDHW, got '%s'",
                 format.c_str());
    const std::string padding = attrs.String("padding");
    PX_SDK_CHECK(padding == "SAME" || padding == "VALID", "padding must be SAME or VALID, got '%s'",
                 padding.c_str());
    same = padding == "SAME";
    ReadList(attrs.IntList("strides"), "strides", s);
    if (pooling) {
      ReadList(attrs.IntList("ksize"), "ksize", k);
    } else {
      ReadList(attrs.IntList("dilations", {1, 1, 1, 1, 1}), "dilations", d);
    }
  }

  // Output size and padding before, for spatial dimension i of size `in`
  // with a window of `window` taps (the filter's for a convolution).
  void Output(int i, int64_t in, int64_t window, int64_t* out, int64_t* before) const {
    const int64_t effective = (window - 1) * d[i] + 1;
    if (same) {
      *out = (in + s[i] - 1) / s[i];
      *before = std::max<int64_t>(0, (*out - 1) * s[i] + effective - in) / 2;
    } else {
      PX_SDK_CHECK(in >= effective,
                   "Computed output size would be negative: input size %lld, window size %lld",
                   static_cast<long long>(in), static_cast<long long>(effective));
      *out = (in - effective + s[i]) / s[i];
      *before = 0;
    }
  }

 private:
  static void ReadList(const std::vector<int64_t>& v, const char* name, int64_t* spatial) {
    PX_SDK_CHECK(v.size() == 5, "%s must have 5 elements, got %zu", name, v.size());
    PX_SDK_CHECK(v[0] == 1 && v[4] == 1, "%s in the batch and depth dimensions must be 1", name);
    for (int i = 0; i < 3; ++i) {
      PX_SDK_CHECK(v[i + 1] > 0, "%s must be positive", name);
      spatial[i] = v[i + 1];
    }
  }
};

// The geometry of one NDHWC 3-D window op: input [n, in[0..2], c], output
// [n, out[0..2], out_c], padding before each spatial dimension.
struct Geometry3D {
  int64_t n, c, out_c;
  int64_t in[3], out[3], before[3], k[3];
};

// x [n, d, h, w, c] with window taps `taps` (ksize, or the filter's first
// three dimensions) and out_c output channels.
inline Geometry3D Geometry3DOf(const char* op, const Window3D& win, const Shape& x,
                               const int64_t taps[3], int64_t out_c) {
  PX_SDK_CHECK(x.size() == 5, "%s input must be 5-D, got %s", op, ShapeString(x).c_str());
  Geometry3D g;
  g.n = x[0];
  g.c = x[4];
  g.out_c = out_c;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = x[i + 1];
    g.k[i] = taps[i];
    win.Output(i, g.in[i], taps[i], &g.out[i], &g.before[i]);
  }
  return g;
}

// The geometry of a Conv3D gradient (Conv3DBackpropInputV2,
// Conv3DBackpropFilterV2): the forward convolution of input shape `x` with
// filter shape `f`, whose output shape out_backprop `dy` must have.
inline Geometry3D Conv3DBackpropGeometryOf(const char* op, const Window3D& win, const Shape& x,
                                           const Shape& f, const Shape& dy) {
  PX_SDK_CHECK(x.size() == 5, "%s: the input must be 5-D, got %s", op, ShapeString(x).c_str());
  PX_SDK_CHECK(f.size() == 5, "%s: the filter must be 5-D, got %s", op, ShapeString(f).c_str());
  PX_SDK_CHECK(dy.size() == 5, "%s: out_backprop must be 5-D, got %s", op,
               ShapeString(dy).c_str());
  for (int64_t d : x) PX_SDK_CHECK(d >= 0, "%s: input_sizes must not be negative, got %s", op,
                                   ShapeString(x).c_str());
  for (int64_t d : f) PX_SDK_CHECK(d >= 0, "%s: filter_sizes must not be negative, got %s", op,
                                   ShapeString(f).c_str());
  PX_SDK_CHECK(x[4] == f[3], "%s: input and filter must have the same depth: %lld vs %lld", op,
               static_cast<long long>(x[4]), static_cast<long long>(f[3]));
  const int64_t taps[3] = {f[0], f[1], f[2]};
  const Geometry3D g = Geometry3DOf(op, win, x, taps, f[4]);
  const Shape want = {g.n, g.out[0], g.out[1], g.out[2], g.out_c};
  PX_SDK_CHECK(dy == want,
               "%s: out_backprop has shape %s, but the convolution of an input %s with a filter "
               "%s has the output shape %s",
               op, ShapeString(dy).c_str(), ShapeString(x).c_str(), ShapeString(f).c_str(),
               ShapeString(want).c_str());
  return g;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_WINDOW3D_H_
