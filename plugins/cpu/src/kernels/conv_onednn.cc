// OneDnnConv (conv_onednn.h): oneDNN's forward-inference convolution on NHWC
// memory, the filter reordered from TF's HWIO to the primitive's own layout,
// bias / batch norm / activation as post-ops. Grouped and depthwise
// convolutions are the same primitive with grouped weights
// (conv_onednn_weights.h).
#include "kernels/conv_onednn.h"

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

// A path forced from the environment; kOwn is the plugin's own kernel
// (im2col, or the direct depthwise kernel).
enum class Force { kNone, kOwn, kOneDnn };

// PX_CPU_CONV=im2col or onednn forces a path for every float convolution
// (for measurements); unset or anything else: the rule in PreferOneDnn
// (which today is the same as onednn). PX_CPU_CONV=direct and matmul force
// the form of the oneDNN path (see PreferMatMulForm).
const char* ConvEnv() {
  static const char* v = std::getenv("PX_CPU_CONV");
  return v;
}

Force ForcedPath() {
  static const Force force = [] {
    const char* v = ConvEnv();
    if (v == nullptr) return Force::kNone;
    if (std::strcmp(v, "im2col") == 0) return Force::kOwn;
    if (std::strcmp(v, "onednn") == 0 || std::strcmp(v, "direct") == 0 ||
        std::strcmp(v, "matmul") == 0) {
      return Force::kOneDnn;
    }
    return Force::kNone;
  }();
  return force;
}

// Whether a plain convolution runs as oneDNN's matmul on its patch matrix
// [n*oh*ow, kh*kw*c] instead of as its convolution primitive. The
// convolution kernels (brgconv) sweep the whole filter once per image or
// output row; when the filter is larger than the core's L2 cache and there
// are few output pixels (ResNet50's last stages: a 9.4 MB filter, 32 output
// pixels at batch 8), each sweep streams it from memory again, and the
// layer runs at a third of the speed of one matmul, which reads the packed
// filter once for all rows (plugins/cpu/README.md has the measurements).
// A 1-D convolution (a spatial dimension of 1 with a kernel of 1 there, as
// TensorFlow's conv1d makes them) whose patch matrix fits in 16 MiB: the
// matmul form's packed filter beat both brgconv and im2col with dnnl_sgemm
// (which packs the filter on every call) on hey_snips' layers. Longer
// inputs keep im2col's blocks.
bool OneDimensional(const ConvGeometry& g) { return (g.w == 1 && g.kw == 1) || (g.h == 1 && g.kh == 1); }

bool OneDimensionalProduct(const ConvGeometry& g) {
  return OneDimensional(g) && g.groups == 1 && g.n * g.oh * g.ow * g.kh * g.kw * g.c <= (int64_t{1} << 22);
}

bool PreferMatMulForm(const ConvGeometry& g, bool depthwise) {
  if (depthwise || g.groups != 1) return false;
  // A product in disguise (RunProduct's, or a 1x1 convolution of a 1x1
  // image such as a squeeze-excite layer's): always the matmul.
  if (g.h == 1 && g.w == 1 && g.kh == 1 && g.kw == 1 && g.oh == 1 && g.ow == 1) return true;
  if (const char* v = ConvEnv()) {
    if (std::strcmp(v, "direct") == 0) return false;
    if (std::strcmp(v, "matmul") == 0) return true;
  }
  if (OneDimensionalProduct(g)) return true;
  constexpr int64_t kLargeFilterBytes = int64_t{1} << 20;
  constexpr int64_t kMaxRows = 512;
  const int64_t filter_bytes = g.kh * g.kw * g.c * g.f_out * static_cast<int64_t>(sizeof(float));
  return filter_bytes >= kLargeFilterBytes && g.n * g.oh * g.ow <= kMaxRows;
}

// Which geometries go to oneDNN: every one it accepts (it beat im2col on
// every 2-D layer measured, plugins/cpu/README.md) except
// - 1-D convolutions, where brgconv was 1.5-1.8x slower than im2col and one
//   GEMM on hey_snips' layers: those whose patch matrix fits take the matmul
//   form (OneDimensionalProduct), the others im2col;
// - narrow output rows (at most 4 pixels) with a partial block of output
//   channels (f_out not a multiple of 16) and a large window (kh*kw*c at
//   least 256): brgconv runs its channel-tail kernel on every few pixels,
//   and im2col was 1.4x faster on kws_cnn_s's second layer (40x7x28 ->
//   16x4x30, 10x4, stride 2x1: 4.4-4.8 against 6.7 ms at batch 64, 74 against
//   88 us at batch 1); with 32 output channels, or 8 output pixels a row,
//   brgconv was ahead again.
// PX_CPU_CONV overrides the rule. Grouped convolutions always go to oneDNN,
// whose grouped kernels need none of the per-group copies of the im2col path
// (conv_groups.h).
bool PreferOneDnn(const ConvGeometry& g) {
  const Force force = ForcedPath();
  if (force != Force::kNone) return force == Force::kOneDnn;
  if (g.groups > 1) return true;
  if (OneDimensional(g)) return OneDimensionalProduct(g);
  const bool channel_tail = g.f_out % 16 != 0;
  const bool narrow_rows = g.ow <= 4 && g.kh * g.kw * g.c >= 256;
  return !(channel_tail && narrow_rows);
}

// PX_CPU_DWCONV=direct or onednn forces a path for every float depthwise
// convolution (for measurements); unset or anything else: the rule in
// PreferOneDnnDepthwise.
Force ForcedDepthwisePath() {
  static const Force force = [] {
    const char* v = std::getenv("PX_CPU_DWCONV");
    if (v == nullptr) return Force::kNone;
    if (std::strcmp(v, "direct") == 0) return Force::kOwn;
    if (std::strcmp(v, "onednn") == 0) return Force::kOneDnn;
    return Force::kNone;
  }();
  return force;
}

// Which depthwise geometries go to oneDNN (its brdgmm_dw / jit_dw kernels):
// every one it accepts. It beat the direct kernel (depthwise_conv.cc) on
// every shape measured, 1.2x to 4.5x on one thread, 1.05x to 1.4x on
// kws_ds_cnn_s's layers on two (plugins/cpu/README.md).
bool PreferOneDnnDepthwise(const ConvGeometry&) {
  const Force force = ForcedDepthwisePath();
  if (force != Force::kNone) return force == Force::kOneDnn;
  return true;
}

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Depthwise convolutions take oneDNN's jit_dw kernel where its first
// choice is brdgmm_dw: jit_dw was faster on every depthwise shape measured
// (MobileNet, EfficientNet and kws_ds_cnn_s layers, 3x3 and 5x5, strides 1
// and 2, batch 1 to 64), 1.1x to 2.8x on one thread and 1.4x to 1.9x on two
// (plugins/cpu/README.md). PX_CPU_DWCONV=brdgmm keeps oneDNN's order.
void PreferJitDepthwise(const dnnl::convolution_forward::desc& desc, const dnnl::primitive_attr& attr,
                        dnnl::convolution_forward::primitive_desc* pd) {
  static const bool keep = [] {
    const char* v = std::getenv("PX_CPU_DWCONV");
    return v != nullptr && std::strcmp(v, "brdgmm") == 0;
  }();
  auto is = [](const dnnl::convolution_forward::primitive_desc& p, const char* prefix) {
    return std::strncmp(p.impl_info_str(), prefix, std::strlen(prefix)) == 0;
  };
  if (keep || !is(*pd, "brdgmm")) return;
  while (pd->next_impl()) {
    if (is(*pd, "jit_dw")) return;
  }
  *pd = dnnl::convolution_forward::primitive_desc(desc, attr, Engine());  // none: the first again
}

// A 64-byte aligned buffer, grown on demand (one per thread for the
// primitives' scratchpads).
struct AlignedBuffer {
  void* data = nullptr;
  size_t size = 0;
  ~AlignedBuffer() { std::free(data); }
  void* Get(size_t bytes) {
    if (bytes > size) {
      std::free(data);
      size = (bytes + 63) / 64 * 64;
      data = std::aligned_alloc(64, size);
      if (data == nullptr) size = 0;
    }
    return data;
  }
};

// The geometry, the epilogue's kind and the team size: a oneDNN primitive
// keeps the thread count it was created with (its work split and its
// parallel region's size), so each thread budget (threading.h) gets its own.
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                       int>;

Key KeyOf(const ConvGeometry& g, bool depthwise, const Epilogue<float>* e) {
  int kind = 0;
  if (e != nullptr) kind = 1 + 2 * static_cast<int>(e->act) + (e->batch_norm ? 1 : 0);
  kind = 2 * kind + (e != nullptr && e->addend != nullptr ? 1 : 0);
  kind = 2 * kind + (depthwise ? 1 : 0);
  return Key(g.n, g.h, g.w, g.c, g.kh, g.kw, g.f_out, g.oh, g.ow, g.top, g.left, g.sh, g.sw, g.dh,
             g.dw, g.groups, kind, TeamSize());
}

}  // namespace

// The memory objects of one execution, made once and pointed at each
// call's buffers (creating them costs about as much as a small layer's
// product at batch 1). One thread uses a set at a time.
struct ArgSet {
  std::unordered_map<int, memory> args;
  memory src, weights, dst, bias, factor, shift, scratch;
  std::vector<float> negated_mean;  // batch norm's bias
  AlignedBuffer scratch_buffer;
  AlignedBuffer patches;  // the matmul form's patch matrix
};

// One shape's primitive and its filter in the primitive's layout.
struct ConvEntry {
  bool ok = false;
  // A convolution primitive, or a matmul one on the patch matrix
  // (PreferMatMulForm), whose source is the input itself when
  // InputIsPatchMatrix and otherwise the patches gathered per call.
  dnnl::primitive prim;
  bool gather_patches = false;
  memory::desc src_md, wei_md, dst_md, bias_md, channel_md, scratch_md;
  bool reorder_weights = false;
  dnnl::reorder weight_reorder;
  memory::desc user_wei_md;
  bool batch_norm = false;
  bool addend = false;  // dst starts as the addend (a sum post-op), see PostOps

  // Guarded by mu: the last filter seen (HWIO) and its reordered copy, and
  // the argument sets not in use.
  std::mutex mu;
  std::vector<float> filter_copy;
  std::shared_ptr<std::vector<float>> reordered;
  std::vector<std::unique_ptr<ArgSet>> free_sets;

  // A set for one execution (a new one when every set is in use).
  std::unique_ptr<ArgSet> TakeSet(bool has_epilogue) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!free_sets.empty()) {
        std::unique_ptr<ArgSet> set = std::move(free_sets.back());
        free_sets.pop_back();
        return set;
      }
    }
    auto set = std::make_unique<ArgSet>();
    dnnl::engine& eng = Engine();
    // Placeholder handles; every call sets the real ones.
    set->src = memory(src_md, eng, nullptr);
    set->weights = memory(wei_md, eng, nullptr);
    set->dst = memory(dst_md, eng, nullptr);
    set->args.emplace(DNNL_ARG_SRC, set->src);
    set->args.emplace(DNNL_ARG_WEIGHTS, set->weights);
    set->args.emplace(DNNL_ARG_DST, set->dst);
    if (has_epilogue) {
      set->bias = memory(bias_md, eng, nullptr);
      set->args.emplace(DNNL_ARG_BIAS, set->bias);
    }
    if (batch_norm) {
      set->factor = memory(channel_md, eng, nullptr);
      set->shift = memory(channel_md, eng, nullptr);
      set->args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, set->factor);
      set->args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, set->shift);
    }
    if (scratch_md.get_size() > 0) {
      void* p = set->scratch_buffer.Get(scratch_md.get_size());
      if (p == nullptr) throw std::bad_alloc();
      set->scratch = memory(scratch_md, eng, p);
      set->args.emplace(DNNL_ARG_SCRATCHPAD, set->scratch);
    }
    return set;
  }

  void ReturnSet(std::unique_ptr<ArgSet> set) {
    std::lock_guard<std::mutex> lock(mu);
    free_sets.push_back(std::move(set));
  }
};

struct OneDnnConv::Impl {
  std::mutex mu;
  std::map<Key, std::shared_ptr<ConvEntry>> entries;
  // A constant filter in each layout its primitives asked for, shared by
  // every entry that wants that layout: batch sizes and thread counts each
  // get a primitive of their own, but rarely a new filter layout, so a
  // product run at many batch sizes keeps one packed copy, not one each.
  std::vector<std::pair<memory::desc, std::shared_ptr<std::vector<float>>>> packed;

  std::shared_ptr<std::vector<float>> Packed(const memory::desc& md) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [layout, data] : packed) {
      if (layout == md) return data;
    }
    return nullptr;
  }
  void AddPacked(const memory::desc& md, std::shared_ptr<std::vector<float>> data) {
    std::lock_guard<std::mutex> lock(mu);
    packed.emplace_back(md, std::move(data));
  }

  std::shared_ptr<ConvEntry> Get(const ConvGeometry& g, bool depthwise, const Epilogue<float>* e) {
    const Key key = KeyOf(g, depthwise, e);
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = entries.find(key);
      if (it != entries.end()) return it->second;
    }
    auto entry = std::make_shared<ConvEntry>();
    Create(g, depthwise, e, entry.get());
    std::lock_guard<std::mutex> lock(mu);
    return entries.emplace(key, entry).first->second;
  }

  // The epilogue as post-ops on the primitive's destination: the bias is
  // the primitive's own argument, then batch norm and the activation.
  static dnnl::post_ops PostOps(const Epilogue<float>* e, ConvEntry* entry) {
    dnnl::post_ops ops;
    if (e != nullptr && e->batch_norm) {
      // (conv - mean) * factor + offset, in the reference's order: the
      // bias is -mean.
      entry->batch_norm = true;
      ops.append_binary(dnnl::algorithm::binary_mul, entry->channel_md);
      ops.append_binary(dnnl::algorithm::binary_add, entry->channel_md);
    }
    if (e != nullptr && e->addend != nullptr) {
      // _PlexusFusedConv2DAdd's addend: copied into the destination before
      // the primitive runs, and added there by a sum post-op, the residual
      // fusion oneDNN's convolution kernels are built for (with a binary add
      // of a whole tensor instead, it chose jit_1x1 over brgconv_1x1 for
      // ResNet50's 1x1 layers).
      entry->addend = true;
      ops.append_sum(1.f);
    }
    if (e != nullptr) {
      using sdk::FusedActivation;
      switch (e->act) {
        case FusedActivation::kNone: break;
        case FusedActivation::kRelu:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
          break;
        case FusedActivation::kRelu6:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 6.f);
          break;
        case FusedActivation::kLeakyRelu:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, e->alpha, 0.f);
          break;
        case FusedActivation::kElu:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_elu, 1.f, 0.f);
          break;
        case FusedActivation::kTanh:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_tanh, 0.f, 0.f);
          break;
        case FusedActivation::kSigmoid:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
          break;
      }
    }
    return ops;
  }

  static void Create(const ConvGeometry& g, bool depthwise, const Epilogue<float>* e,
                     ConvEntry* entry) {
    // oneDNN wants the bottom/right padding explicitly; TF's output size is
    // the floor of the same formula, so trailing rows the stride skips give
    // a negative value, which zero padding reproduces.
    const int64_t ekh = (g.kh - 1) * g.dh + 1, ekw = (g.kw - 1) * g.dw + 1;
    const int64_t bottom = std::max<int64_t>(0, (g.oh - 1) * g.sh + ekh - g.h - g.top);
    const int64_t right = std::max<int64_t>(0, (g.ow - 1) * g.sw + ekw - g.w - g.left);
    if (g.top < 0 || g.left < 0 || (g.h + g.top + bottom - ekh) / g.sh + 1 != g.oh ||
        (g.w + g.left + right - ekw) / g.sw + 1 != g.ow) {
      return;
    }
    const int64_t out_c = OutputChannels(g, depthwise);
    try {
      const bool matmul_form = PreferMatMulForm(g, depthwise);
      entry->gather_patches = matmul_form && !InputIsPatchMatrix(g);
      const int64_t rows = g.n * g.oh * g.ow, depth = g.kh * g.kw * g.c;
      if (matmul_form) {
        // The HWIO filter is the [kh*kw*c, f_out] matrix as it is.
        entry->src_md = memory::desc({rows, depth}, kF32, Tag::ab);
        entry->dst_md = memory::desc({rows, out_c}, kF32, Tag::ab);
        entry->user_wei_md = memory::desc({depth, out_c}, kF32, Tag::ab);
        entry->bias_md = memory::desc({1, out_c}, kF32, Tag::ab);
        entry->channel_md = memory::desc({1, out_c}, kF32, Tag::ab);
      } else {
        entry->src_md = memory::desc({g.n, g.c, g.h, g.w}, kF32, Tag::nhwc);
        entry->dst_md = memory::desc({g.n, out_c, g.oh, g.ow}, kF32, Tag::nhwc);
        entry->user_wei_md = OneDnnWeightsDesc(g, depthwise, /*any=*/false);
        entry->bias_md = memory::desc({out_c}, kF32, Tag::x);
        entry->channel_md = memory::desc({1, out_c, 1, 1}, kF32, Tag::nchw);
      }
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      attr.set_post_ops(PostOps(e, entry));
      const memory::desc bias = e != nullptr ? entry->bias_md : memory::desc();
      if (matmul_form) {
        const memory::desc any_wei({depth, out_c}, kF32, Tag::any);
        const dnnl::matmul::primitive_desc pd(
            dnnl::matmul::desc(entry->src_md, any_wei, bias, entry->dst_md), attr, Engine());
        entry->wei_md = pd.weights_desc();
        entry->scratch_md = pd.scratchpad_desc();
        entry->prim = dnnl::matmul(pd);
      } else {
        const memory::desc any_wei = OneDnnWeightsDesc(g, depthwise, /*any=*/true);
        const memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
        const memory::dims pad_l{g.top, g.left}, pad_r{bottom, right};
        const dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            entry->src_md, any_wei, bias, entry->dst_md, strides, dilates, pad_l, pad_r);
        dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
        if (depthwise) PreferJitDepthwise(desc, attr, &pd);
        entry->wei_md = pd.weights_desc();
        entry->scratch_md = pd.scratchpad_desc();
        entry->prim = dnnl::convolution_forward(pd);
      }
      entry->reorder_weights = entry->wei_md != entry->user_wei_md;
      if (entry->reorder_weights) {
        entry->weight_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(
            Engine(), entry->user_wei_md, Engine(), entry->wei_md));
      }
      entry->ok = true;
    } catch (const dnnl::error&) {
      entry->ok = false;
    }
  }
};

OneDnnConv::OneDnnConv() : impl_(new Impl) {}
OneDnnConv::~OneDnnConv() = default;

bool OneDnnConv::Run(const ConvGeometry& g, const float* x, const float* f,
                     const Epilogue<float>* epilogue, float* y) {
  return PreferOneDnn(g) && Execute(g, /*depthwise=*/false, x, f, epilogue, y);
}

bool OneDnnConv::RunDepthwise(const ConvGeometry& g, const float* x, const float* f,
                              const Epilogue<float>* epilogue, float* y) {
  return PreferOneDnnDepthwise(g) && Execute(g, /*depthwise=*/true, x, f, epilogue, y);
}

bool OneDnnConv::RunProduct(int64_t m, int64_t k, int64_t n, const float* a, const float* b,
                            const Epilogue<float>* epilogue, float* y) {
  // m images of 1x1 pixels with k channels, a 1x1 filter [1, 1, k, n]: the
  // same bytes as a and b.
  ConvGeometry g;
  g.n = m;
  g.h = g.w = g.oh = g.ow = 1;
  g.c = k;
  g.kh = g.kw = 1;
  g.f_out = n;
  g.top = g.left = 0;
  g.sh = g.sw = g.dh = g.dw = 1;
  return Execute(g, /*depthwise=*/false, a, b, epilogue, y);
}

bool OneDnnConv::Execute(const ConvGeometry& g, bool depthwise, const float* x, const float* f,
                         const Epilogue<float>* epilogue, float* y) {
  if (g.n == 0 || g.oh == 0 || g.ow == 0 || g.f_out == 0 || g.c == 0) return false;
  const std::shared_ptr<ConvEntry> entry = impl_->Get(g, depthwise, epilogue);
  if (!entry->ok) return false;
  try {
    dnnl::engine& eng = Engine();
    thread_local dnnl::stream stream(Engine());
    // The filter in the primitive's layout: reordered again only when its
    // contents change (a frozen graph's filter is a constant).
    const float* weights = f;
    std::shared_ptr<std::vector<float>> reordered;
    if (entry->reorder_weights) {
      // [kh, kw, c / groups, f_out] (depthwise: [kh, kw, c, multiplier]).
      const size_t count = static_cast<size_t>(g.kh * g.kw * (g.c / g.groups) * g.f_out);
      {
        std::lock_guard<std::mutex> lock(entry->mu);
        if (entry->reordered &&
            (constant_filter_ ||
             (entry->filter_copy.size() == count &&
              std::memcmp(entry->filter_copy.data(), f, count * sizeof(float)) == 0))) {
          reordered = entry->reordered;
        }
      }
      const bool entry_has_it = reordered != nullptr;
      if (!reordered && constant_filter_) reordered = impl_->Packed(entry->wei_md);
      if (!reordered) {
        reordered = std::make_shared<std::vector<float>>(entry->wei_md.get_size() / sizeof(float) + 16);
        memory src(entry->user_wei_md, eng, const_cast<float*>(f));
        memory dst(entry->wei_md, eng, reordered->data());
        entry->weight_reorder.execute(stream, src, dst);
        stream.wait();
        if (constant_filter_) impl_->AddPacked(entry->wei_md, reordered);
      }
      if (!entry_has_it) {
        std::lock_guard<std::mutex> lock(entry->mu);
        if (!constant_filter_) entry->filter_copy.assign(f, f + count);
        entry->reordered = reordered;
      }
      weights = reordered->data();
    }
    std::unique_ptr<ArgSet> set = entry->TakeSet(epilogue != nullptr);
    if (entry->gather_patches) {
      float* patches = static_cast<float*>(set->patches.Get(entry->src_md.get_size()));
      if (patches == nullptr) throw std::bad_alloc();
      GatherPatches(x, g, 0, g.n * g.oh * g.ow, patches);
      x = patches;
    }
    set->src.set_data_handle(const_cast<float*>(x));
    set->weights.set_data_handle(const_cast<float*>(weights));
    set->dst.set_data_handle(y);
    if (epilogue != nullptr) {
      const float* b = epilogue->shift.data();
      if (entry->batch_norm) {
        set->negated_mean.resize(epilogue->mean.size());
        for (size_t i = 0; i < epilogue->mean.size(); ++i) set->negated_mean[i] = -epilogue->mean[i];
        b = set->negated_mean.data();
        set->factor.set_data_handle(const_cast<float*>(epilogue->factor.data()));
        set->shift.set_data_handle(const_cast<float*>(epilogue->shift.data()));
      }
      set->bias.set_data_handle(const_cast<float*>(b));
      if (entry->addend) std::memcpy(y, epilogue->addend, entry->dst_md.get_size());
    }
    entry->prim.execute(stream, set->args);
    stream.wait();
    entry->ReturnSet(std::move(set));
    return true;
  } catch (const dnnl::error&) {
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

#else  // !PX_CPU_SGEMM_ONEDNN

struct OneDnnConv::Impl {};
OneDnnConv::OneDnnConv() = default;
OneDnnConv::~OneDnnConv() = default;
bool OneDnnConv::Run(const ConvGeometry&, const float*, const float*, const Epilogue<float>*,
                     float*) {
  return false;
}
bool OneDnnConv::RunDepthwise(const ConvGeometry&, const float*, const float*,
                              const Epilogue<float>*, float*) {
  return false;
}
bool OneDnnConv::RunProduct(int64_t, int64_t, int64_t, const float*, const float*,
                            const Epilogue<float>*, float*) {
  return false;
}
bool OneDnnConv::Execute(const ConvGeometry&, bool, const float*, const float*,
                         const Epilogue<float>*, float*) {
  return false;
}

#endif  // PX_CPU_SGEMM_ONEDNN

}  // namespace plexus::cpu
