// OneDnnConvGrad (conv_grad_onednn.h): oneDNN's backward-data and
// backward-weights convolutions on NHWC memory. The primitives choose their
// own filter layout ("any"): the filter is reordered into it for backward
// data, and the filter gradient reordered out of it into TF's HWIO (or the
// grouped [kh, kw, c / groups, f_out] or depthwise [kh, kw, c, multiplier],
// which are oneDNN's hwigo, conv_onednn_weights.h) for backward weights. The filter changes every training step, so nothing is cached
// but the primitives; each call has its own memory objects and scratchpad,
// so concurrent calls are safe.
#include "kernels/conv_grad_onednn.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <tuple>
#include <unordered_map>
#include <vector>

#if defined(PX_CPU_SGEMM_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/conv_onednn_weights.h"
#include "threading.h"
#endif

namespace plexus::cpu {

#if defined(PX_CPU_SGEMM_ONEDNN)
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

// PX_CPU_CONV_GRAD=own sends every float gradient to the plugin's own
// kernels (for measurements).
bool Disabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("PX_CPU_CONV_GRAD");
    return v != nullptr && std::strcmp(v, "own") == 0;
  }();
  return disabled;
}

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The geometry, the direction and the team size (primitives keep the
// thread count they were created with; threading.h).
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                       int>;

Key KeyOf(const ConvGeometry& g, bool depthwise, bool weights) {
  return Key(g.n, g.h, g.w, g.c, g.kh, g.kw, g.f_out, g.oh, g.ow, g.top, g.left, g.sh, g.sw, g.dh,
             g.dw, g.groups, (depthwise ? 1 : 0) + (weights ? 2 : 0), TeamSize());
}

// A 64-byte aligned buffer.
struct Aligned {
  void* data = nullptr;
  explicit Aligned(size_t bytes) {
    if (bytes > 0) {
      data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      if (data == nullptr) throw std::bad_alloc();
    }
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

// One geometry's primitive (backward data or backward weights).
struct GradEntry {
  bool ok = false;
  dnnl::primitive prim;
  memory::desc data_md, dst_md;  // the NHWC input-shaped and output-shaped tensors
  memory::desc user_wei_md, wei_md, scratch_md;
  bool reorder = false;
  dnnl::reorder weight_reorder;  // user -> primitive (data), primitive -> user (weights)
};

void Create(const ConvGeometry& g, bool depthwise, bool weights, GradEntry* e) {
  // Strided 1x1 gradients: oneDNN (Debian's build, its jit_1x1:avx2
  // backward-weights kernel with a stride of 2) gave wrong filter gradients
  // and corrupted the heap, in almost every run with OMP_NUM_THREADS=1 and in
  // about one run in eight with two threads (ops_conv_grad_test,
  // Conv2DBackprop.MatchesReference). The plugin's own path takes them.
  if (g.kh == 1 && g.kw == 1 && (g.sh > 1 || g.sw > 1)) return;
  // oneDNN wants the bottom/right padding explicitly (as in conv_onednn.cc):
  // TF's output size is the floor of the same formula.
  const int64_t ekh = (g.kh - 1) * g.dh + 1, ekw = (g.kw - 1) * g.dw + 1;
  const int64_t bottom = std::max<int64_t>(0, (g.oh - 1) * g.sh + ekh - g.h - g.top);
  const int64_t right = std::max<int64_t>(0, (g.ow - 1) * g.sw + ekw - g.w - g.left);
  if (g.top < 0 || g.left < 0 || (g.h + g.top + bottom - ekh) / g.sh + 1 != g.oh ||
      (g.w + g.left + right - ekw) / g.sw + 1 != g.ow) {
    return;
  }
  const int64_t out_c = OutputChannels(g, depthwise);
  try {
    e->data_md = memory::desc({g.n, g.c, g.h, g.w}, kF32, Tag::nhwc);
    e->dst_md = memory::desc({g.n, out_c, g.oh, g.ow}, kF32, Tag::nhwc);
    e->user_wei_md = OneDnnWeightsDesc(g, depthwise, /*any=*/false);
    const memory::desc any_wei = OneDnnWeightsDesc(g, depthwise, /*any=*/true);
    const memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
    const memory::dims pad_l{g.top, g.left}, pad_r{bottom, right};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // The forward primitive descriptor the backward ones take as a hint.
    const dnnl::convolution_forward::desc fwd_desc(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, e->data_md,
        any_wei, e->dst_md, strides, dilates, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, Engine());
    if (weights) {
      const dnnl::convolution_backward_weights::desc desc(
          dnnl::algorithm::convolution_direct, e->data_md, any_wei, e->dst_md, strides, dilates,
          pad_l, pad_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, Engine(), fwd_pd);
      e->wei_md = pd.diff_weights_desc();
      e->scratch_md = pd.scratchpad_desc();
      e->prim = dnnl::convolution_backward_weights(pd);
      e->reorder = e->wei_md != e->user_wei_md;
      if (e->reorder) {
        e->weight_reorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(Engine(), e->wei_md, Engine(), e->user_wei_md));
      }
    } else {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct,
                                                       e->data_md, any_wei, e->dst_md, strides,
                                                       dilates, pad_l, pad_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, attr, Engine(), fwd_pd);
      e->wei_md = pd.weights_desc();
      e->scratch_md = pd.scratchpad_desc();
      e->prim = dnnl::convolution_backward_data(pd);
      e->reorder = e->wei_md != e->user_wei_md;
      if (e->reorder) {
        e->weight_reorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(Engine(), e->user_wei_md, Engine(), e->wei_md));
      }
    }
    e->ok = true;
  } catch (const dnnl::error&) {
    e->ok = false;
  }
}

}  // namespace

struct OneDnnConvGrad::Impl {
  std::mutex mu;
  std::map<Key, std::shared_ptr<GradEntry>> entries;

  std::shared_ptr<GradEntry> Get(const ConvGeometry& g, bool depthwise, bool weights) {
    const Key key = KeyOf(g, depthwise, weights);
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = entries.find(key);
      if (it != entries.end()) return it->second;
    }
    auto entry = std::make_shared<GradEntry>();
    Create(g, depthwise, weights, entry.get());
    std::lock_guard<std::mutex> lock(mu);
    return entries.emplace(key, entry).first->second;
  }

  // weights false: data = dx (written), w = f; true: data = x, w = df
  // (written).
  bool Run(const ConvGeometry& g, bool depthwise, bool weights, float* data, float* w,
           const float* dy) {
    if (Disabled() || g.n == 0 || g.oh == 0 || g.ow == 0 || g.f_out == 0 || g.c == 0 ||
        g.h == 0 || g.w == 0) {
      return false;
    }
    const std::shared_ptr<GradEntry> e = Get(g, depthwise, weights);
    if (!e->ok) return false;
    try {
      dnnl::engine& eng = Engine();
      thread_local dnnl::stream stream(Engine());
      Aligned scratch(e->scratch_md.get_size());
      Aligned blocked(e->reorder ? e->wei_md.get_size() : 0);
      memory user_w(e->user_wei_md, eng, w);
      memory prim_w = e->reorder ? memory(e->wei_md, eng, blocked.data) : user_w;
      memory data_m(e->data_md, eng, data);
      memory dy_m(e->dst_md, eng, const_cast<float*>(dy));
      std::unordered_map<int, memory> args;
      if (e->scratch_md.get_size() > 0) {
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(e->scratch_md, eng, scratch.data));
      }
      args.emplace(DNNL_ARG_DIFF_DST, dy_m);
      if (weights) {
        args.emplace(DNNL_ARG_SRC, data_m);
        args.emplace(DNNL_ARG_DIFF_WEIGHTS, prim_w);
        e->prim.execute(stream, args);
        if (e->reorder) e->weight_reorder.execute(stream, prim_w, user_w);
      } else {
        args.emplace(DNNL_ARG_DIFF_SRC, data_m);
        args.emplace(DNNL_ARG_WEIGHTS, prim_w);
        if (e->reorder) e->weight_reorder.execute(stream, user_w, prim_w);
        e->prim.execute(stream, args);
      }
      stream.wait();
      return true;
    } catch (const dnnl::error&) {
      return false;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }
};

OneDnnConvGrad::OneDnnConvGrad() : impl_(new Impl) {}
OneDnnConvGrad::~OneDnnConvGrad() = default;

bool OneDnnConvGrad::BackwardData(const ConvGeometry& g, bool depthwise, const float* f,
                                  const float* dy, float* dx) {
  return impl_->Run(g, depthwise, /*weights=*/false, dx, const_cast<float*>(f), dy);
}

bool OneDnnConvGrad::BackwardWeights(const ConvGeometry& g, bool depthwise, const float* x,
                                     const float* dy, float* df) {
  return impl_->Run(g, depthwise, /*weights=*/true, const_cast<float*>(x), df, dy);
}

#else  // !PX_CPU_SGEMM_ONEDNN

struct OneDnnConvGrad::Impl {};
OneDnnConvGrad::OneDnnConvGrad() = default;
OneDnnConvGrad::~OneDnnConvGrad() = default;
bool OneDnnConvGrad::BackwardData(const ConvGeometry&, bool, const float*, const float*, float*) {
  return false;
}
bool OneDnnConvGrad::BackwardWeights(const ConvGeometry&, bool, const float*, const float*,
                                     float*) {
  return false;
}

#endif  // PX_CPU_SGEMM_ONEDNN

}  // namespace plexus::cpu
