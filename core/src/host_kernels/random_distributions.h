// TensorFlow's counter-based random numbers, reproduced bit for bit: the
// Philox-4x32-10 generator, the derivation of its key and counter from a
// seed, and the distributions TensorFlow's random kernels draw from it
// (uniform floats and integers, Box-Muller normals, truncated normals by
// rejection, Marsaglia-Tsang gamma). Used by the random host kernels
// (random_ops.cc, random_stateful.cc); the streams do not depend on the
// device, as TensorFlow's do not.
//
// How TensorFlow lays a stream out over an output, which these functions
// follow:
//   - Fixed-cost distributions (uniform, normal, integers) fill the output
//     in groups: group g is made from the g-th 128-bit block of the stream
//     (4 elements of 32 bits, or 2 of 64 bits; a partial last group drops
//     the rest).
//   - Truncated normals reject samples, so group g starts at block
//     g * (group size * 256 / 4) and takes 32-bit words from there one at a
//     time.
//   - Gamma samples start at block 256 * i for output i (i counting the
//     samples of one alpha together) and are written alpha-minor.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_RANDOM_DISTRIBUTIONS_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_RANDOM_DISTRIBUTIONS_H_

#include <array>
#include <cstdint>

#include "plexus/dtype.h"

namespace plexus {
namespace random {

// Philox-4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3"): a 128-bit counter encrypted under a 64-bit key; each call returns one
// 128-bit block and advances the counter by one.
class Philox {
 public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  Philox() = default;
  Philox(Block counter, Key key) : counter_(counter), key_(key) {}

  // The generator of TensorFlow's stateful random kernels (seed and seed2
  // attributes): key = seed, counter = (0, seed2).
  static Philox FromSeeds(uint64_t seed, uint64_t seed2);
  // The generator of a V2 stateless op: its uint64 key and counter inputs
  // (each word is two 32-bit halves, low half first).
  static Philox FromKeyCounter(uint64_t key, uint64_t counter0, uint64_t counter1);
  // TensorFlow's scrambling of a stateless op's two seeds (GenerateKey):
  // one Philox block of the seeds under a fixed key becomes the key and the
  // upper half of the counter.
  static Philox FromStatelessSeed(uint64_t seed0, uint64_t seed1);

  Block operator()();
  // Advances the counter by `blocks` 128-bit blocks.
  void Skip(uint64_t blocks);

  // The key and counter as a V2 op's uint64 words.
  uint64_t KeyWord() const;
  std::array<uint64_t, 2> CounterWords() const;

 private:
  Block counter_{};
  Key key_{};
};

// Algorithm ids of the V2 ops' alg input (TensorFlow's rng_alg.h).
inline constexpr int kAlgPhilox = 1;
inline constexpr int kAlgThreeFry = 2;
inline constexpr int kAlgAutoSelect = 3;

// Each fills `n` elements of `dtype` at `out` from `gen`'s stream, as
// TensorFlow's CPU kernel of the same distribution does. They return false
// for a dtype the distribution does not have (the callers check first).
//
// Uniform in [0, 1): half, bfloat16, float, double.
bool FillUniform(Philox gen, DataType dtype, void* out, int64_t n);
// Standard normal (Box-Muller): half, bfloat16, float, double.
bool FillNormal(Philox gen, DataType dtype, void* out, int64_t n);
// Standard normal truncated to (-2, 2) by rejection: half, bfloat16, float,
// double.
bool FillTruncatedNormal(Philox gen, DataType dtype, void* out, int64_t n);
// Integers in [lo, hi) by modulo reduction of 32 or 64 random bits: int32
// and int64 (lo < hi, checked by the caller).
bool FillUniformInt(Philox gen, DataType dtype, int64_t lo, int64_t hi, void* out, int64_t n);
// Every bit random: int32, uint32, int64, uint64.
bool FillUniformFullInt(Philox gen, DataType dtype, void* out, int64_t n);
// Gamma(alpha) samples, shape [samples_per_alpha, num_alphas] (row-major),
// as doubles; `alpha` holds num_alphas values.
void FillGamma(Philox gen, const double* alpha, int64_t num_alphas, int64_t samples_per_alpha,
               double* out);

}  // namespace random
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_RANDOM_DISTRIBUTIONS_H_
