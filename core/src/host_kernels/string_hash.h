// The hash functions TensorFlow's string and feature-crossing ops use, so
// that bucket numbers match TensorFlow's exactly: SipHash-2-4 (TensorFlow's
// StrongKeyedHash, highwayhash::SipHash) and FingerprintCat64, which
// combines two FarmHash fingerprints.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_STRING_HASH_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_STRING_HASH_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace plexus {

class SipHash24 {
 public:
  SipHash24(uint64_t k0, uint64_t k1)
      : v0_(k0 ^ 0x736f6d6570736575ULL),
        v1_(k1 ^ 0x646f72616e646f6dULL),
        v2_(k0 ^ 0x6c7967656e657261ULL),
        v3_(k1 ^ 0x7465646279746573ULL) {}

  // One use per object: the hash of `s` under the key.
  uint64_t Hash(absl::string_view s) {
    const size_t full = s.size() / 8 * 8;
    for (size_t i = 0; i < full; i += 8) Block(Load(s.data() + i, 8));
    // The last block: the remaining bytes, and the length's low byte on top.
    Block(Load(s.data() + full, s.size() - full) | (static_cast<uint64_t>(s.size() & 0xff) << 56));
    v2_ ^= 0xff;
    for (int r = 0; r < 4; ++r) Round();
    return v0_ ^ v1_ ^ v2_ ^ v3_;
  }

 private:
  static uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  static uint64_t Load(const char* p, size_t n) {  // little-endian
    uint64_t m = 0;
    for (size_t i = 0; i < n; ++i) m |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return m;
  }
  void Round() {
    v0_ += v1_; v1_ = Rotl(v1_, 13); v1_ ^= v0_; v0_ = Rotl(v0_, 32);
    v2_ += v3_; v3_ = Rotl(v3_, 16); v3_ ^= v2_;
    v0_ += v3_; v3_ = Rotl(v3_, 21); v3_ ^= v0_;
    v2_ += v1_; v1_ = Rotl(v1_, 17); v1_ ^= v2_; v2_ = Rotl(v2_, 32);
  }
  void Block(uint64_t m) {
    v3_ ^= m;
    Round();
    Round();
    v0_ ^= m;
  }
  uint64_t v0_, v1_, v2_, v3_;
};

// Combines two fingerprints into one (not commutative).
inline uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  auto shift_mix = [](uint64_t v) { return v ^ (v >> 47); };
  uint64_t result = fp1 ^ kMul;
  result ^= shift_mix(fp2 * kMul) * kMul;
  result *= kMul;
  result = shift_mix(result) * kMul;
  return shift_mix(result);
}

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_STRING_HASH_H_
