// Host kernels of the random ops (schemas in ops/random_ops.cc), giving
// TensorFlow's CPU bits (host_kernels/random_distributions.h):
//   - the stateless ops of a seed input (StatelessRandomUniform, ...,
//     StatelessRandomGammaV2), which scramble the seed into a Philox key and
//     counter;
//   - their V2 successors of key, counter and algorithm inputs, and
//     StatelessRandomGetKeyCounter/GetAlg/GetKeyCounterAlg, which make
//     those inputs from a seed (what tf.random.stateless_* and Keras's
//     random layers run);
//   - TensorFlow 1's stateful RandomUniform, RandomStandardNormal,
//     TruncatedNormal and RandomUniformInt of seed and seed2 attributes.
//
// Checks come in TensorFlow's order: an empty output is returned before
// the distribution's own checks (minval < maxval, alpha's shape, the
// algorithm), as TensorFlow does.
//
// Algorithms: Philox (1) and auto-select (3, which means Philox, as on
// TensorFlow's CPU). ThreeFry (2) is rejected as TensorFlow's CPU kernels
// reject it ("Unsupported algorithm id: 2"). A Philox counter must hold
// two words: TensorFlow accepts a counter of one and reads past it.
//
// The stateful ops keep a stream per node and session, as TensorFlow keeps
// one per kernel: each run reserves 256 blocks per output element and the
// next run starts after them, so run k of a node gives TensorFlow's run k.
// Nodes of one name in different functions share a stream (TensorFlow's
// kernels are per function instantiation), and seed = seed2 = 0 draws a
// fresh seed, nondeterministic as in TensorFlow.
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "exec/session_state.h"
#include "host_kernels/random_distributions.h"
#include "plexus/graph.h"
#include "plexus/sdk/float16.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using random::Philox;

enum class Dist { kUniform, kNormal, kTruncatedNormal, kUniformInt, kFullInt };

// TensorFlow's tensor::MakeShape: a vector of non-negative int32 or int64
// dimensions whose product fits in int64.
absl::StatusOr<Shape> OutputShape(const HostOpContext& ctx, int input) {
  const Tensor& t = ctx.input(input);
  if (t.dims() != 1 || (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64)) {
    return ctx.InvalidArgument(
        absl::StrCat("shape must be a vector of {int32,int64}, got shape ", ShapeToString(t.shape())));
  }
  Shape shape(static_cast<size_t>(t.num_elements()));
  int64_t product = 1;
  bool overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] = t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    if (shape[i] < 0) return ctx.InvalidArgument(absl::StrCat("Dimension ", shape[i], " must be >= 0"));
    if (!overflow && __builtin_mul_overflow(product, shape[i], &product)) overflow = true;
  }
  bool empty = false;
  for (int64_t d : shape) empty = empty || d == 0;
  if (overflow && !empty) {
    return ctx.InvalidArgument(
        absl::StrCat("Shape ", ShapeToString(shape), " would have more than 2**63 - 1 elements"));
  }
  return shape;
}

absl::StatusOr<Tensor> Allocate(const HostOpContext& ctx, DataType dtype, const Shape& shape) {
  auto t = Tensor::AllocateHost(dtype, shape);
  if (!t.ok()) return ctx.Error(t.status().code(), t.status().message());
  return t;
}

// A seed input: a vector of two int32 or int64 (sign-extended to 64 bits).
absl::Status CheckSeedShape(const HostOpContext& ctx, const Tensor& seed) {
  if (seed.dims() != 1 || seed.shape()[0] != 2) {
    return ctx.InvalidArgument(absl::StrCat("seed must have shape [2], not ", ShapeToString(seed.shape())));
  }
  return absl::OkStatus();
}

absl::StatusOr<Philox> GeneratorFromSeed(const HostOpContext& ctx, const Tensor& seed) {
  uint64_t s0, s1;
  if (seed.dtype() == DataType::kInt32) {
    s0 = static_cast<uint64_t>(int64_t{seed.data<int32_t>()[0]});
    s1 = static_cast<uint64_t>(int64_t{seed.data<int32_t>()[1]});
  } else if (seed.dtype() == DataType::kInt64) {
    s0 = static_cast<uint64_t>(seed.data<int64_t>()[0]);
    s1 = static_cast<uint64_t>(seed.data<int64_t>()[1]);
  } else {
    return ctx.InvalidArgument(absl::StrCat("Invalid seed type: ", DataTypeName(seed.dtype())));
  }
  return Philox::FromStatelessSeed(s0, s1);
}

// The key, counter and algorithm inputs (1, 2, 3) of a V2 op, checked; the
// algorithm is resolved (auto-select is Philox) but not yet required to be
// Philox (see CheckPhilox).
struct KeyCounterAlg {
  Philox gen;
  int alg = random::kAlgPhilox;
};

absl::StatusOr<KeyCounterAlg> ReadKeyCounterAlg(const HostOpContext& ctx) {
  const Tensor& key = ctx.input(1);
  const Tensor& counter = ctx.input(2);
  const Tensor& alg_t = ctx.input(3);
  if (alg_t.dims() != 0) {
    return ctx.InvalidArgument(
        absl::StrCat("input 3 (0-based) must have shape [], not ", ShapeToString(alg_t.shape())));
  }
  KeyCounterAlg out;
  out.alg = alg_t.data<int32_t>()[0];
  if (out.alg == random::kAlgAutoSelect) out.alg = random::kAlgPhilox;
  if (key.dims() != 1 || key.shape()[0] != 1) {
    return ctx.InvalidArgument(absl::StrCat("key must have shape [1], not ", ShapeToString(key.shape()),
                                            ". (Note that batched keys are not supported yet.)"));
  }
  // TensorFlow's minimum counter length is the algorithm id; Philox reads
  // two words.
  const int64_t min_counter = out.alg == random::kAlgPhilox ? 2 : out.alg;
  if (counter.dims() != 1 || counter.shape()[0] < min_counter) {
    return ctx.InvalidArgument(absl::StrCat("counter must be a vector with length at least ", min_counter,
                                            "; got shape: ", ShapeToString(counter.shape()),
                                            ". (Note that batched counters are not supported yet.)"));
  }
  if (out.alg == random::kAlgPhilox) {
    const uint64_t* c = counter.data<uint64_t>();
    out.gen = Philox::FromKeyCounter(key.data<uint64_t>()[0], c[0], c[1]);
  }
  return out;
}

absl::Status CheckPhilox(const HostOpContext& ctx, int alg) {
  if (alg == random::kAlgPhilox) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat(
      "Unsupported algorithm id: ", alg,
      alg == random::kAlgThreeFry ? " (ThreeFry; TensorFlow's CPU kernels and Plexus implement Philox, 1, "
                                    "and auto-select, 3)"
                                  : " (known ids: Philox 1, ThreeFry 2, auto-select 3)"));
}

// A scalar minval or maxval input of an integer distribution.
absl::StatusOr<int64_t> IntScalar(const HostOpContext& ctx, int input, const char* what) {
  const Tensor& t = ctx.input(input);
  if (t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(what, " must be 0-D, got shape ", ShapeToString(t.shape())));
  }
  switch (t.dtype()) {
    case DataType::kInt32: return int64_t{t.data<int32_t>()[0]};
    case DataType::kInt64: return t.data<int64_t>()[0];
    default:
      return ctx.InvalidArgument(absl::StrCat(what, " has type ", DataTypeName(t.dtype()),
                                              "; only int32 and int64 have a kernel, as in TensorFlow"));
  }
}

absl::Status CheckRange(const HostOpContext& ctx, int64_t lo, int64_t hi) {
  if (lo >= hi) return ctx.InvalidArgument(absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
  return absl::OkStatus();
}

// Fills a non-empty `out` (its dtype chosen by the op) from `gen`.
absl::Status Fill(const HostOpContext& ctx, Dist dist, Philox gen, int64_t lo, int64_t hi, Tensor& out) {
  bool ok = false;
  void* data = out.raw_data();
  const int64_t n = out.num_elements();
  switch (dist) {
    case Dist::kUniform: ok = random::FillUniform(gen, out.dtype(), data, n); break;
    case Dist::kNormal: ok = random::FillNormal(gen, out.dtype(), data, n); break;
    case Dist::kTruncatedNormal: ok = random::FillTruncatedNormal(gen, out.dtype(), data, n); break;
    case Dist::kUniformInt: ok = random::FillUniformInt(gen, out.dtype(), lo, hi, data, n); break;
    case Dist::kFullInt: ok = random::FillUniformFullInt(gen, out.dtype(), data, n); break;
  }
  if (!ok) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " has no kernel for dtype ", DataTypeName(out.dtype())));
  }
  return absl::OkStatus();
}

// ---- Stateless, seed input ---------------------------------------------------

template <Dist kDist>
absl::Status StatelessSeed(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Shape shape, OutputShape(ctx, 0));
  const Tensor& seed = ctx.input(1);
  PX_RETURN_IF_ERROR(CheckSeedShape(ctx, seed));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  PX_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, shape));
  if (out.num_elements() > 0) {
    PX_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, seed));
    int64_t lo = 0, hi = 0;
    if (kDist == Dist::kUniformInt) {
      PX_ASSIGN_OR_RETURN(lo, IntScalar(ctx, 2, "minval"));
      PX_ASSIGN_OR_RETURN(hi, IntScalar(ctx, 3, "maxval"));
      PX_RETURN_IF_ERROR(CheckRange(ctx, lo, hi));
    }
    PX_RETURN_IF_ERROR(Fill(ctx, kDist, gen, lo, hi, out));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomUniform", StatelessSeed<Dist::kUniform>);
PX_REGISTER_HOST_OP("StatelessRandomNormal", StatelessSeed<Dist::kNormal>);
PX_REGISTER_HOST_OP("StatelessTruncatedNormal", StatelessSeed<Dist::kTruncatedNormal>);
PX_REGISTER_HOST_OP("StatelessRandomUniformInt", StatelessSeed<Dist::kUniformInt>);
PX_REGISTER_HOST_OP("StatelessRandomUniformFullInt", StatelessSeed<Dist::kFullInt>);

// ---- Stateless, key/counter/algorithm inputs ---------------------------------

template <Dist kDist>
absl::Status StatelessKeyCounter(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(KeyCounterAlg kca, ReadKeyCounterAlg(ctx));
  PX_ASSIGN_OR_RETURN(Shape shape, OutputShape(ctx, 0));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  PX_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, shape));
  if (out.num_elements() > 0) {
    int64_t lo = 0, hi = 0;
    if (kDist == Dist::kUniformInt) {
      PX_ASSIGN_OR_RETURN(lo, IntScalar(ctx, 4, "minval"));
      PX_ASSIGN_OR_RETURN(hi, IntScalar(ctx, 5, "maxval"));
      PX_RETURN_IF_ERROR(CheckRange(ctx, lo, hi));
    }
    PX_RETURN_IF_ERROR(CheckPhilox(ctx, kca.alg));
    PX_RETURN_IF_ERROR(Fill(ctx, kDist, kca.gen, lo, hi, out));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomUniformV2", StatelessKeyCounter<Dist::kUniform>);
PX_REGISTER_HOST_OP("StatelessRandomNormalV2", StatelessKeyCounter<Dist::kNormal>);
PX_REGISTER_HOST_OP("StatelessTruncatedNormalV2", StatelessKeyCounter<Dist::kTruncatedNormal>);
PX_REGISTER_HOST_OP("StatelessRandomUniformIntV2", StatelessKeyCounter<Dist::kUniformInt>);
PX_REGISTER_HOST_OP("StatelessRandomUniformFullIntV2", StatelessKeyCounter<Dist::kFullInt>);

// StatelessRandomGetKeyCounter(seed) -> key, counter, and
// StatelessRandomGetKeyCounterAlg, which adds the algorithm (Philox).
absl::Status GetKeyCounter(HostOpContext& ctx) {
  const Tensor& seed = ctx.input(0);
  PX_RETURN_IF_ERROR(CheckSeedShape(ctx, seed));
  PX_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, seed));
  PX_ASSIGN_OR_RETURN(Tensor key, Allocate(ctx, DataType::kUInt64, Shape{1}));
  PX_ASSIGN_OR_RETURN(Tensor counter, Allocate(ctx, DataType::kUInt64, Shape{2}));
  key.data<uint64_t>()[0] = gen.KeyWord();
  const auto words = gen.CounterWords();
  counter.data<uint64_t>()[0] = words[0];
  counter.data<uint64_t>()[1] = words[1];
  ctx.set_output(0, std::move(key));
  ctx.set_output(1, std::move(counter));
  if (ctx.node().num_outputs() > 2) {
    PX_ASSIGN_OR_RETURN(Tensor alg, Allocate(ctx, DataType::kInt32, Shape{}));
    alg.data<int32_t>()[0] = random::kAlgPhilox;
    ctx.set_output(2, std::move(alg));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomGetKeyCounter", GetKeyCounter);
PX_REGISTER_HOST_OP("StatelessRandomGetKeyCounterAlg", GetKeyCounter);

absl::Status GetAlg(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Tensor alg, Allocate(ctx, DataType::kInt32, Shape{}));
  alg.data<int32_t>()[0] = random::kAlgPhilox;
  ctx.set_output(0, std::move(alg));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomGetAlg", GetAlg);

// ---- Gamma --------------------------------------------------------------------

// Alpha's values as doubles (half through float, as TensorFlow converts).
std::vector<double> AlphaValues(const Tensor& alpha) {
  std::vector<double> out(static_cast<size_t>(alpha.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (alpha.dtype()) {
      case DataType::kHalf: out[i] = static_cast<float>(alpha.data<sdk::half>()[i]); break;
      case DataType::kFloat: out[i] = alpha.data<float>()[i]; break;
      default: out[i] = alpha.data<double>()[i]; break;
    }
  }
  return out;
}

// TensorFlow's checks of alpha against a non-empty output's shape.
absl::Status CheckAlpha(const HostOpContext& ctx, const Tensor& alpha, const Tensor& out) {
  const Shape& s = out.shape();
  const Shape& a = alpha.shape();
  bool ends_with = a.size() <= s.size();
  for (size_t i = 0; ends_with && i < a.size(); ++i) ends_with = s[s.size() - a.size() + i] == a[i];
  if (!ends_with) return ctx.InvalidArgument("Shape passed in must end with broadcasted shape.");
  if (alpha.num_elements() <= 0) {
    return ctx.InvalidArgument(
        absl::StrCat("Input alpha should have non-zero element count, got: ", alpha.num_elements()));
  }
  return absl::OkStatus();
}

// Gamma samples into `out`, whose shape ends with alpha's (CheckAlpha).
void FillGammaOutput(Philox gen, const Tensor& alpha, Tensor& out) {
  const int64_t num_alphas = alpha.num_elements();
  const int64_t n = out.num_elements();
  std::vector<double> samples(static_cast<size_t>(n));
  random::FillGamma(gen, AlphaValues(alpha).data(), num_alphas, n / num_alphas, samples.data());
  for (int64_t i = 0; i < n; ++i) {
    switch (out.dtype()) {
      // TensorFlow's half(double) rounds to float first.
      case DataType::kHalf: out.data<sdk::half>()[i] = sdk::half(static_cast<float>(samples[i])); break;
      case DataType::kFloat: out.data<float>()[i] = static_cast<float>(samples[i]); break;
      default: out.data<double>()[i] = samples[i]; break;
    }
  }
}

absl::StatusOr<Tensor> GammaOutput(const HostOpContext& ctx, int shape_input) {
  PX_ASSIGN_OR_RETURN(Shape shape, OutputShape(ctx, shape_input));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  if (dtype != DataType::kHalf && dtype != DataType::kFloat && dtype != DataType::kDouble) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " has no kernel for dtype ", DataTypeName(dtype)));
  }
  return Allocate(ctx, dtype, shape);
}

// StatelessRandomGammaV2(shape, seed, alpha).
absl::Status StatelessGammaV2(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Tensor out, GammaOutput(ctx, 0));
  const Tensor& seed = ctx.input(1);
  PX_RETURN_IF_ERROR(CheckSeedShape(ctx, seed));
  if (out.num_elements() > 0) {
    PX_ASSIGN_OR_RETURN(Philox gen, GeneratorFromSeed(ctx, seed));
    PX_RETURN_IF_ERROR(CheckAlpha(ctx, ctx.input(2), out));
    FillGammaOutput(gen, ctx.input(2), out);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomGammaV2", StatelessGammaV2);

// StatelessRandomGammaV3(shape, key, counter, alg, alpha).
absl::Status StatelessGammaV3(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(KeyCounterAlg kca, ReadKeyCounterAlg(ctx));
  PX_ASSIGN_OR_RETURN(Tensor out, GammaOutput(ctx, 0));
  if (out.num_elements() > 0) {
    PX_RETURN_IF_ERROR(CheckAlpha(ctx, ctx.input(4), out));
    PX_RETURN_IF_ERROR(CheckPhilox(ctx, kca.alg));
    FillGammaOutput(kca.gen, ctx.input(4), out);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StatelessRandomGammaV3", StatelessGammaV3);

// ---- Stateful, seed and seed2 attributes --------------------------------------

// A node's stream: TensorFlow's GuardedPhiloxRandom.
class RandomStream : public ResourceBase {
 public:
  explicit RandomStream(Philox gen) : gen_(gen) {}
  std::string DebugString() const override { return "random stream of a stateful random op"; }

  // The stream of a run that makes `outputs` elements; the next run starts
  // 256 blocks per element later (TensorFlow's ReserveRandomOutputs).
  Philox Reserve(int64_t outputs) {
    std::lock_guard<std::mutex> lock(mu_);
    Philox local = gen_;
    gen_.Skip(static_cast<uint64_t>(outputs) * 256);
    return local;
  }

 private:
  std::mutex mu_;
  Philox gen_;
};

absl::StatusOr<std::shared_ptr<RandomStream>> NodeStream(HostOpContext& ctx) {
  if (ctx.state() == nullptr) return ctx.Error(absl::StatusCode::kInternal, "no session state for the stream");
  PX_ASSIGN_OR_RETURN(int64_t seed, GetAttrInt(ctx.node(), "seed"));
  PX_ASSIGN_OR_RETURN(int64_t seed2, GetAttrInt(ctx.node(), "seed2"));
  // Keyed by the node and its attributes: eager ops of one name but other
  // seeds or types get streams of their own, as TensorFlow's eager kernel
  // cache (keyed by the attributes) gives them kernels of their own.
  const bool is_int = ctx.node().op == "RandomUniformInt";
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), is_int ? "Tout" : "dtype"));
  PX_ASSIGN_OR_RETURN(DataType shape_type, GetAttrType(ctx.node(), "T"));
  const std::string key = absl::StrCat("random_stream/node:", ctx.node().name, "/", ctx.node().op, "/", seed, "/",
                                       seed2, "/", DataTypeName(dtype), "/", DataTypeName(shape_type));
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> resource,
                      ctx.state()->LookupOrCreate(key, [&]() -> absl::StatusOr<std::shared_ptr<ResourceBase>> {
                        uint64_t s = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
                        if (s == 0 && s2 == 0) {  // unseeded: random seeds, as TensorFlow
                          std::random_device device;
                          s = (uint64_t{device()} << 32) | device();
                          s2 = (uint64_t{device()} << 32) | device();
                        }
                        return std::make_shared<RandomStream>(Philox::FromSeeds(s, s2));
                      }));
  auto stream = std::dynamic_pointer_cast<RandomStream>(resource);
  if (stream == nullptr) {
    return ctx.InvalidArgument(absl::StrCat("resource '", key, "' already exists as ", resource->DebugString()));
  }
  return stream;
}

template <Dist kDist>
absl::Status Stateful(HostOpContext& ctx) {
  int64_t lo = 0, hi = 0;
  if (kDist == Dist::kUniformInt) {
    PX_ASSIGN_OR_RETURN(lo, IntScalar(ctx, 1, "minval"));
    PX_ASSIGN_OR_RETURN(hi, IntScalar(ctx, 2, "maxval"));
  }
  PX_ASSIGN_OR_RETURN(Shape shape, OutputShape(ctx, 0));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), kDist == Dist::kUniformInt ? "Tout" : "dtype"));
  PX_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, shape));
  if (out.num_elements() > 0) {
    if (kDist == Dist::kUniformInt) PX_RETURN_IF_ERROR(CheckRange(ctx, lo, hi));
    PX_ASSIGN_OR_RETURN(std::shared_ptr<RandomStream> stream, NodeStream(ctx));
    PX_RETURN_IF_ERROR(Fill(ctx, kDist, stream->Reserve(out.num_elements()), lo, hi, out));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("RandomUniform", Stateful<Dist::kUniform>);
PX_REGISTER_HOST_OP("RandomStandardNormal", Stateful<Dist::kNormal>);
PX_REGISTER_HOST_OP("TruncatedNormal", Stateful<Dist::kTruncatedNormal>);
PX_REGISTER_HOST_OP("RandomUniformInt", Stateful<Dist::kUniformInt>);

}  // namespace
}  // namespace plexus
