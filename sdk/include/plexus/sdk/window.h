// The window attributes of convolutions and pooling (strides, dilations,
// ksize, SAME/VALID/EXPLICIT padding, data format), validated the way
// TensorFlow does, and the output size of one spatial dimension. Shared by
// the cpu and reference plugins so both accept and refuse the same nodes
// with the same messages; a vendor's plugin can use it too.
#ifndef PLEXUS_SDK_WINDOW_H_
#define PLEXUS_SDK_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/kernel.h"
#include "plexus/sdk/pool_geometry.h"

namespace plexus::sdk {

// data_format: true for NCHW, false for NHWC (the default).
inline bool ReadNchw(const Attrs& attrs) {
  const std::string format = attrs.String("data_format", "NHWC");
  PX_SDK_CHECK(format == "NHWC" || format == "NCHW", "data_format must be NHWC or NCHW, got '%s'",
               format.c_str());
  return format == "NCHW";
}

struct Window {
  bool nchw = false;
  std::string padding;
  int64_t kh = 1, kw = 1;  // pooling only (convolutions take the filter's)
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // EXPLICIT

  void Read(const Attrs& attrs, bool pooling) {
    nchw = ReadNchw(attrs);
    const int h = nchw ? 2 : 1, w = nchw ? 3 : 2, c = nchw ? 1 : 3;
    padding = attrs.String("padding");
    const std::vector<int64_t> strides = attrs.IntList("strides");
    PX_SDK_CHECK(strides.size() == 4, "strides must have 4 elements, got %zu", strides.size());
    PX_SDK_CHECK(strides[0] == 1 && strides[c] == 1,
                 "strides in the batch and depth dimensions must be 1");
    sh = strides[h];
    sw = strides[w];
    PX_SDK_CHECK(sh > 0 && sw > 0, "strides must be positive");
    const std::vector<int64_t> dilations = attrs.IntList("dilations", {1, 1, 1, 1});
    PX_SDK_CHECK(dilations.size() == 4, "dilations must have 4 elements, got %zu",
                 dilations.size());
    PX_SDK_CHECK(dilations[0] == 1 && dilations[c] == 1,
                 "dilations in the batch and depth dimensions must be 1");
    dh = dilations[h];
    dw = dilations[w];
    PX_SDK_CHECK(dh > 0 && dw > 0, "dilations must be positive");
    if (pooling) {
      const std::vector<int64_t> ksize = attrs.IntList("ksize");
      PX_SDK_CHECK(ksize.size() == 4, "ksize must have 4 elements, got %zu", ksize.size());
      PX_SDK_CHECK(ksize[0] == 1 && ksize[c] == 1,
                   "pooling over the batch and depth dimensions is not supported");
      kh = ksize[h];
      kw = ksize[w];
      PX_SDK_CHECK(kh > 0 && kw > 0, "ksize must be positive");
    }
    const bool has_explicit = attrs.Has("explicit_paddings");
    PX_SDK_CHECK(padding == "SAME" || padding == "VALID" ||
                     (has_explicit && padding == "EXPLICIT"),
                 "padding must be SAME, VALID%s, got '%s'", has_explicit ? " or EXPLICIT" : "",
                 padding.c_str());
    if (padding == "EXPLICIT") {
      const std::vector<int64_t> pads = attrs.IntList("explicit_paddings");
      PX_SDK_CHECK(pads.size() == 8, "explicit_paddings must have 8 elements, got %zu",
                   pads.size());
      for (int64_t p : pads) PX_SDK_CHECK(p >= 0, "explicit_paddings must be non-negative");
      PX_SDK_CHECK(pads[0] == 0 && pads[1] == 0 && pads[2 * c] == 0 && pads[2 * c + 1] == 0,
                   "explicit_paddings in the batch and depth dimensions must be 0");
      pad_top = pads[2 * h];
      pad_bottom = pads[2 * h + 1];
      pad_left = pads[2 * w];
      pad_right = pads[2 * w + 1];
    }
  }

  // MaxPoolGradV2's attributes: data_format and padding (SAME or VALID);
  // its ksize and strides are inputs, read at each call by SetPoolSizes.
  void ReadPoolingV2(const Attrs& attrs) {
    nchw = ReadNchw(attrs);
    padding = attrs.String("padding");
    PX_SDK_CHECK(padding == "SAME" || padding == "VALID", "padding must be SAME or VALID, got '%s'",
                 padding.c_str());
  }

  // MaxPoolGradV2's ksize and strides (its host-memory inputs 3 and 4), in
  // the layout's order, checked as Read checks the attributes.
  void SetPoolSizes(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides) {
    const int h = nchw ? 2 : 1, w = nchw ? 3 : 2, c = nchw ? 1 : 3;
    PX_SDK_CHECK(ksize.size() == 4, "ksize must have 4 elements, got %zu", ksize.size());
    PX_SDK_CHECK(strides.size() == 4, "strides must have 4 elements, got %zu", strides.size());
    PX_SDK_CHECK(ksize[0] == 1 && ksize[c] == 1 && strides[0] == 1 && strides[c] == 1,
                 "ksize and strides in the batch and depth dimensions must be 1 (pooling over "
                 "them is not supported)");
    PX_SDK_CHECK(ksize[h] > 0 && ksize[w] > 0 && strides[h] > 0 && strides[w] > 0,
                 "ksize and strides must be positive");
    kh = ksize[h];
    kw = ksize[w];
    sh = strides[h];
    sw = strides[w];
  }

  // Output size and padding before, for one spatial dimension.
  void Output(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t explicit_before,
              int64_t explicit_after, int64_t* out, int64_t* before) const {
    const int64_t effective = (k - 1) * dilation + 1;
    if (padding == "SAME") {
      *out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (*out - 1) * stride + effective - in);
      *before = needed / 2;
    } else {
      const int64_t padded = padding == "EXPLICIT" ? in + explicit_before + explicit_after : in;
      PX_SDK_CHECK(padded >= effective,
                   "Computed output size would be negative: input size %lld, window size %lld",
                   static_cast<long long>(in), static_cast<long long>(effective));
      *out = (padded - effective + stride) / stride;
      *before = padding == "EXPLICIT" ? explicit_before : 0;
    }
  }

  // The pooling of a 4-D input of shape `in` (in this window's layout) with
  // this window (ksize and strides from ReadPooling or ReadPoolingV2).
  PoolGeometry Pool(const std::vector<int64_t>& in) const {
    PoolGeometry g;
    g.nchw = nchw;
    g.n = in[0];
    g.c = in[nchw ? 1 : 3];
    g.h = in[nchw ? 2 : 1];
    g.w = in[nchw ? 3 : 2];
    g.kh = kh;
    g.kw = kw;
    g.sh = sh;
    g.sw = sw;
    Output(g.h, kh, sh, 1, pad_top, pad_bottom, &g.oh, &g.top);
    Output(g.w, kw, sw, 1, pad_left, pad_right, &g.ow, &g.left);
    return g;
  }
};

// The pooled output's shape, in the pooling's layout.
inline std::vector<int64_t> PooledShape(const PoolGeometry& g) {
  return g.nchw ? std::vector<int64_t>{g.n, g.c, g.oh, g.ow} : std::vector<int64_t>{g.n, g.oh, g.ow, g.c};
}

// A pooling gradient's tensor `name` (orig_output, grad) has the pooled
// shape `want`, else INVALID_ARGUMENT with TensorFlow's message.
inline void CheckPooledShape(const char* name, const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  PX_SDK_CHECK(got == want, "%s shape %s must equal the pooled output shape %s", name, ShapeString(got).c_str(),
               ShapeString(want).c_str());
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_WINDOW_H_
