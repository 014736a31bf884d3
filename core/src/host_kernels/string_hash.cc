// Host kernels of the string hashing ops (schemas in ops/string_ops.cc):
// StringToHashBucketFast, FarmHash's Fingerprint64 (the library TensorFlow
// uses, so bucket numbers match TensorFlow's exactly), and
// StringToHashBucketStrong, SipHash-2-4 keyed by the op's two-int key (as
// TensorFlow's highwayhash::SipHash).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <farmhash.h>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

class SipHash24 {
 public:
  SipHash24(uint64_t k0, uint64_t k1)
      : v0_(k0 ^ 0x736f6d6570736575ULL),
        v1_(k1 ^ 0x646f72616e646f6dULL),
        v2_(k0 ^ 0x6c7967656e657261ULL),
        v3_(k1 ^ 0x7465646279746573ULL) {}

  uint64_t Hash(const std::string& s) {
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

absl::Status HashBuckets(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dtype() != DataType::kString) {
    return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(in.dtype()), ", not string"));
  }
  PX_ASSIGN_OR_RETURN(int64_t num_buckets, GetAttrInt(ctx.node(), "num_buckets"));
  if (num_buckets < 1) return ctx.InvalidArgument(absl::StrCat("num_buckets must be positive, got ", num_buckets));
  const bool strong = ctx.node().op == "StringToHashBucketStrong";
  std::vector<int64_t> key;
  if (strong) {
    PX_ASSIGN_OR_RETURN(key, GetAttrIntList(ctx.node(), "key"));
    if (key.size() != 2) return ctx.InvalidArgument(absl::StrCat("Key must have 2 elements, got ", key.size()));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt64, in.shape()));
  const auto& strings = in.strings();
  const uint64_t buckets = static_cast<uint64_t>(num_buckets);
  for (size_t i = 0; i < strings.size(); ++i) {
    const uint64_t hash = strong ? SipHash24(static_cast<uint64_t>(key[0]), static_cast<uint64_t>(key[1])).Hash(strings[i])
                                 : util::Fingerprint64(strings[i].data(), strings[i].size());
    out.data<int64_t>()[i] = static_cast<int64_t>(hash % buckets);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringToHashBucketFast", HashBuckets);
PX_REGISTER_HOST_OP("StringToHashBucketStrong", HashBuckets);

}  // namespace
}  // namespace plexus
