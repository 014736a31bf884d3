// The Philox generator and TensorFlow's distributions over it (see
// random_distributions.h). Every floating-point step follows TensorFlow's
// order of operations and precision (this file is compiled without
// floating-point contraction, see core/CMakeLists.txt), so the results are
// TensorFlow's bits: exact for the uniform and integer distributions, and
// for the normal and gamma ones as exact as the C library's log, sqrt,
// sincos and pow are the same.
#include "host_kernels/random_distributions.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "plexus/sdk/float16.h"

namespace plexus {
namespace random {
namespace {

using sdk::bfloat16;
using sdk::half;

constexpr uint32_t kMulA = 0xD2511F53u;
constexpr uint32_t kMulB = 0xCD9E8D57u;
constexpr uint32_t kKeyStepA = 0x9E3779B9u;
constexpr uint32_t kKeyStepB = 0xBB67AE85u;

// Samples reserved for each output of a rejection sampler (TensorFlow's
// kReservedSamplesPerOutput), in 32-bit words for the truncated normal and
// in 128-bit blocks for gamma.
constexpr int64_t kReservedSamplesPerOutput = 256;

Philox::Block Round(const Philox::Block& c, const Philox::Key& k) {
  const uint64_t p0 = static_cast<uint64_t>(kMulA) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMulB) * c[2];
  return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
          static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
}

// [0, 1) from the low 23 bits: 1.mantissa - 1.
float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// [0, 1) from 52 bits: the low 20 of x0 above the 32 of x1.
double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// Half and bfloat16 uniforms use the low 10 and 7 bits; 1.mantissa - 1 is
// exact in either type, so it is made in float and converted.
half Uint16ToHalf(uint32_t x) { return half(static_cast<float>(x & 0x3ffu) / 1024.0f); }
bfloat16 Uint16ToBfloat16(uint32_t x) { return bfloat16(static_cast<float>(x & 0x7fu) / 128.0f); }

// Two normals from two words. TensorFlow computes the angle in double
// (2 * M_PI is a double) and the rest in float.
void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = Uint32ToFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(Uint32ToFloat(x1)));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

// Two normals from four words.
void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  ::sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

// Output group g from block g of the stream; `make(block, group)` fills a
// whole group, of which a partial last group keeps the first elements.
template <typename T, int kGroup, typename Make>
void FillGroups(Philox gen, void* out, int64_t n, Make make) {
  T* dst = static_cast<T*>(out);
  for (int64_t offset = 0; offset < n; offset += kGroup) {
    std::array<T, kGroup> group;
    make(gen(), group);
    std::copy_n(group.begin(), std::min<int64_t>(kGroup, n - offset), dst + offset);
  }
}

// TensorFlow's SingleSampleAdapter: the words of the stream one at a time.
class WordStream {
 public:
  explicit WordStream(Philox* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = (*gen_)();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  Philox* gen_;
  Philox::Block block_{};
  int used_ = 4;
};

// Truncated normals: group g starts at its own reserved stretch of the
// stream and draws pairs (`draw(words, pair)`, of type Wide) until the
// group is full, keeping the values inside (-2, 2), converted to T.
template <typename T, int kGroup, typename Wide, typename Draw, typename Convert>
void FillTruncatedGroups(Philox base, void* out, int64_t n, Draw draw, Convert convert) {
  constexpr int64_t kSkipPerGroup = kGroup * kReservedSamplesPerOutput / 4;
  T* dst = static_cast<T*>(out);
  for (int64_t g = 0, offset = 0; offset < n; ++g, offset += kGroup) {
    Philox gen = base;
    gen.Skip(static_cast<uint64_t>(g * kSkipPerGroup));
    WordStream words(&gen);
    std::array<T, kGroup> group;
    int filled = 0;
    while (filled < kGroup) {
      Wide pair[2];
      draw(words, pair);
      for (int k = 0; k < 2 && filled < kGroup; ++k) {
        if (std::fabs(pair[k]) < Wide{2}) group[filled++] = convert(pair[k]);
      }
    }
    std::copy_n(group.begin(), std::min<int64_t>(kGroup, n - offset), dst + offset);
  }
}

// Half, bfloat16 and float truncated normals: float pairs, four a group.
template <typename T>
void TruncatedNormalFromFloats(Philox gen, void* out, int64_t n) {
  FillTruncatedGroups<T, 4, float>(
      gen, out, n,
      [](WordStream& words, float pair[2]) {
        const uint32_t x0 = words();
        const uint32_t x1 = words();
        BoxMullerFloat(x0, x1, &pair[0], &pair[1]);
      },
      [](float f) { return T(f); });
}

// SampleBuffer of TensorFlow's gamma kernel: the values of one
// distribution call handed out last first.
template <typename Make>
class ReverseBuffer {
 public:
  explicit ReverseBuffer(Make make) : make_(make) {}
  double operator()(Philox* gen) {
    if (remaining_ == 0) {
      values_ = make_(gen);
      remaining_ = 2;
    }
    return values_[--remaining_];
  }

 private:
  Make make_;
  std::array<double, 2> values_{};
  int remaining_ = 0;
};

std::array<double, 2> UniformPair(Philox* gen) {
  const Philox::Block b = (*gen)();
  return {Uint64ToDouble(b[0], b[1]), Uint64ToDouble(b[2], b[3])};
}

std::array<double, 2> NormalPair(Philox* gen) {
  const Philox::Block b = (*gen)();
  std::array<double, 2> out;
  BoxMullerDouble(b[0], b[1], b[2], b[3], &out[0], &out[1]);
  return out;
}

}  // namespace

Philox Philox::FromSeeds(uint64_t seed, uint64_t seed2) {
  return Philox({0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
                {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

Philox Philox::FromKeyCounter(uint64_t key, uint64_t counter0, uint64_t counter1) {
  return Philox({static_cast<uint32_t>(counter0), static_cast<uint32_t>(counter0 >> 32),
                 static_cast<uint32_t>(counter1), static_cast<uint32_t>(counter1 >> 32)},
                {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)});
}

Philox Philox::FromStatelessSeed(uint64_t seed0, uint64_t seed1) {
  Philox mixer({static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)},
               {0x3ec8f720u, 0x02461e29u});
  const Block mix = mixer();
  return Philox({0, 0, mix[2], mix[3]}, {mix[0], mix[1]});
}

Philox::Block Philox::operator()() {
  Block c = counter_;
  Key k = key_;
  for (int round = 0; round < 10; ++round) {
    c = Round(c, k);
    k[0] += kKeyStepA;
    k[1] += kKeyStepB;
  }
  if (++counter_[0] == 0 && ++counter_[1] == 0 && ++counter_[2] == 0) ++counter_[3];
  return c;
}

void Philox::Skip(uint64_t blocks) {
  const uint32_t lo = static_cast<uint32_t>(blocks);
  uint32_t hi = static_cast<uint32_t>(blocks >> 32);
  counter_[0] += lo;
  if (counter_[0] < lo) ++hi;
  counter_[1] += hi;
  if (counter_[1] < hi && ++counter_[2] == 0) ++counter_[3];
}

uint64_t Philox::KeyWord() const { return key_[0] | (static_cast<uint64_t>(key_[1]) << 32); }

std::array<uint64_t, 2> Philox::CounterWords() const {
  return {counter_[0] | (static_cast<uint64_t>(counter_[1]) << 32),
          counter_[2] | (static_cast<uint64_t>(counter_[3]) << 32)};
}

bool FillUniform(Philox gen, DataType dtype, void* out, int64_t n) {
  switch (dtype) {
    case DataType::kFloat:
      FillGroups<float, 4>(gen, out, n, [](const Philox::Block& b, std::array<float, 4>& g) {
        for (int i = 0; i < 4; ++i) g[i] = Uint32ToFloat(b[i]);
      });
      return true;
    case DataType::kDouble:
      FillGroups<double, 2>(gen, out, n, [](const Philox::Block& b, std::array<double, 2>& g) {
        for (int i = 0; i < 2; ++i) g[i] = Uint64ToDouble(b[2 * i], b[2 * i + 1]);
      });
      return true;
    case DataType::kHalf:
      FillGroups<half, 4>(gen, out, n, [](const Philox::Block& b, std::array<half, 4>& g) {
        for (int i = 0; i < 4; ++i) g[i] = Uint16ToHalf(b[i]);
      });
      return true;
    case DataType::kBFloat16:
      FillGroups<bfloat16, 4>(gen, out, n, [](const Philox::Block& b, std::array<bfloat16, 4>& g) {
        for (int i = 0; i < 4; ++i) g[i] = Uint16ToBfloat16(b[i]);
      });
      return true;
    default:
      return false;
  }
}

bool FillNormal(Philox gen, DataType dtype, void* out, int64_t n) {
  auto floats = [](const Philox::Block& b, float f[4]) {
    BoxMullerFloat(b[0], b[1], &f[0], &f[1]);
    BoxMullerFloat(b[2], b[3], &f[2], &f[3]);
  };
  switch (dtype) {
    case DataType::kFloat:
      FillGroups<float, 4>(gen, out, n, [&](const Philox::Block& b, std::array<float, 4>& g) {
        floats(b, g.data());
      });
      return true;
    case DataType::kDouble:
      FillGroups<double, 2>(gen, out, n, [](const Philox::Block& b, std::array<double, 2>& g) {
        BoxMullerDouble(b[0], b[1], b[2], b[3], &g[0], &g[1]);
      });
      return true;
    case DataType::kHalf:
      FillGroups<half, 4>(gen, out, n, [&](const Philox::Block& b, std::array<half, 4>& g) {
        float f[4];
        floats(b, f);
        for (int i = 0; i < 4; ++i) g[i] = half(f[i]);
      });
      return true;
    case DataType::kBFloat16:
      FillGroups<bfloat16, 4>(gen, out, n, [&](const Philox::Block& b, std::array<bfloat16, 4>& g) {
        float f[4];
        floats(b, f);
        for (int i = 0; i < 4; ++i) g[i] = bfloat16(f[i]);
      });
      return true;
    default:
      return false;
  }
}

bool FillTruncatedNormal(Philox gen, DataType dtype, void* out, int64_t n) {
  switch (dtype) {
    case DataType::kFloat:
      TruncatedNormalFromFloats<float>(gen, out, n);
      return true;
    case DataType::kHalf:
      TruncatedNormalFromFloats<half>(gen, out, n);
      return true;
    case DataType::kBFloat16:
      TruncatedNormalFromFloats<bfloat16>(gen, out, n);
      return true;
    case DataType::kDouble:
      // Double pairs from four words each, two a group.
      FillTruncatedGroups<double, 2, double>(
          gen, out, n,
          [](WordStream& words, double pair[2]) {
            const uint32_t x0 = words();
            const uint32_t x1 = words();
            const uint32_t x2 = words();
            const uint32_t x3 = words();
            BoxMullerDouble(x0, x1, x2, x3, &pair[0], &pair[1]);
          },
          [](double d) { return d; });
      return true;
    default:
      return false;
  }
}

bool FillUniformInt(Philox gen, DataType dtype, int64_t lo, int64_t hi, void* out, int64_t n) {
  switch (dtype) {
    case DataType::kInt32: {
      const uint32_t base = static_cast<uint32_t>(lo);
      const uint32_t range = static_cast<uint32_t>(hi) - base;
      FillGroups<int32_t, 4>(gen, out, n, [&](const Philox::Block& b, std::array<int32_t, 4>& g) {
        for (int i = 0; i < 4; ++i) g[i] = static_cast<int32_t>(base + b[i] % range);
      });
      return true;
    }
    case DataType::kInt64: {
      const uint64_t base = static_cast<uint64_t>(lo);
      const uint64_t range = static_cast<uint64_t>(hi) - base;
      FillGroups<int64_t, 2>(gen, out, n, [&](const Philox::Block& b, std::array<int64_t, 2>& g) {
        for (int i = 0; i < 2; ++i) {
          const uint64_t bits = b[2 * i] | (static_cast<uint64_t>(b[2 * i + 1]) << 32);
          g[i] = static_cast<int64_t>(base + bits % range);
        }
      });
      return true;
    }
    default:
      return false;
  }
}

bool FillUniformFullInt(Philox gen, DataType dtype, void* out, int64_t n) {
  auto words = [](const Philox::Block& b, std::array<uint32_t, 4>& g) { g = b; };
  auto doubles = [](const Philox::Block& b, std::array<uint64_t, 2>& g) {
    for (int i = 0; i < 2; ++i) g[i] = b[2 * i] | (static_cast<uint64_t>(b[2 * i + 1]) << 32);
  };
  switch (dtype) {
    case DataType::kInt32:
    case DataType::kUInt32:
      FillGroups<uint32_t, 4>(gen, out, n, words);
      return true;
    case DataType::kInt64:
    case DataType::kUInt64:
      FillGroups<uint64_t, 2>(gen, out, n, doubles);
      return true;
    default:
      return false;
  }
}

void FillGamma(Philox gen, const double* alpha_values, int64_t num_alphas, int64_t samples_per_alpha,
               double* out) {
  for (int64_t a = 0; a < num_alphas; ++a) {
    const double alpha = alpha_values[a];
    for (int64_t s = 0; s < samples_per_alpha; ++s) {
      const int64_t output = a * samples_per_alpha + s;
      Philox local = gen;
      local.Skip(static_cast<uint64_t>(kReservedSamplesPerOutput * output));
      double& result = out[s * num_alphas + a];
      if (alpha == 1.0) {
        // Exponential: -log(1 - u) from the second uniform of a block.
        const double u = UniformPair(&local)[1];
        result = -std::log1p(-u);
        continue;
      }
      // Marsaglia and Tsang's transformation-rejection; alpha < 1 samples
      // alpha + 1 and scales by u^(1/alpha).
      const bool below_one = alpha < 1.0;
      const double d = alpha + (below_one ? 2.0 / 3 : -1.0 / 3);
      const double c = 1.0 / 3 / std::sqrt(d);
      ReverseBuffer<decltype(&NormalPair)> normal(&NormalPair);
      ReverseBuffer<decltype(&UniformPair)> uniform(&UniformPair);
      while (true) {
        const double x = normal(&local);
        double v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        const double u = uniform(&local);
        if ((u < 1 - 0.0331 * (x * x) * (x * x)) || (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))) {
          double value = d * v;
          if (below_one) {
            const double b = uniform(&local);
            value *= std::pow(b, 1 / alpha);
          }
          result = value;
          break;
        }
      }
    }
  }
}

}  // namespace random
}  // namespace plexus
