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
#include "host_kernels/string_hash.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

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
