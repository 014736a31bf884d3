// Host kernels of SparseCross, SparseCrossV2 and SparseCrossHashed (schemas
// in ops/sparse_cross_ops.cc). The columns are the sparse inputs, then the
// dense ones; in each row every combination of one feature per column is
// crossed, the last column varying fastest, as TensorFlow. Hashes are
// TensorFlow's (FarmHash fingerprints combined with FingerprintCat64, or
// SipHash for a strong hash), so the buckets match TensorFlow's exactly.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <farmhash.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "host_kernels/string_hash.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

uint64_t Fingerprint(absl::string_view s) { return util::Fingerprint64(s.data(), s.size()); }

// How a feature becomes an integer before crossing.
enum class FeatureHash {
  kRawOrFingerprint,  // SparseCross: integers as they are, strings fingerprinted
  kKeyed,             // SparseCrossHashed without strong_hash
  kStrong,            // SparseCrossHashed with strong_hash: SipHash keyed by the salt
};

// One column: a sparse tensor (feature runs per row) or a dense matrix.
struct Column {
  const Tensor* values = nullptr;
  bool dense = false;
  std::vector<int64_t> count, start;  // per row, sparse only

  int64_t Count(int64_t row) const { return dense ? values->shape()[1] : count[row]; }
  int64_t Index(int64_t row, int64_t n) const { return dense ? row * values->shape()[1] + n : start[row] + n; }
  bool is_string() const { return values->dtype() == DataType::kString; }

  std::string Text(int64_t row, int64_t n) const {
    const int64_t i = Index(row, n);
    return is_string() ? values->strings()[i] : std::to_string(values->data<int64_t>()[i]);
  }

  uint64_t Hash(int64_t row, int64_t n, FeatureHash how, const uint64_t key[2]) const {
    const int64_t i = Index(row, n);
    if (is_string()) {
      const std::string& s = values->strings()[i];
      return how == FeatureHash::kStrong ? SipHash24(key[0], key[1]).Hash(s) : Fingerprint(s);
    }
    const int64_t v = values->data<int64_t>()[i];
    // TensorFlow hashes an integer of a keyed column as the first 4 bytes
    // of its memory (the size of its dtype enum), except an unsalted dense
    // one, which it takes as it is; the same here, for the same buckets.
    const absl::string_view bytes(reinterpret_cast<const char*>(&v), 4);
    if (how == FeatureHash::kStrong) return SipHash24(key[0], key[1]).Hash(bytes);
    if (how == FeatureHash::kKeyed && !dense) return Fingerprint(bytes);
    return static_cast<uint64_t>(v);
  }
};

struct CrossInputs {
  std::vector<Column> columns;
  int64_t batch = 0;
  int num_inputs_used = 0;
};

absl::StatusOr<CrossInputs> ReadColumns(HostOpContext& ctx, int num_extra_inputs) {
  PX_ASSIGN_OR_RETURN(int64_t n, GetAttrInt(ctx.node(), "N"));
  const int num_dense = ctx.num_inputs() - 3 * static_cast<int>(n) - num_extra_inputs;
  if (n < 0 || num_dense < 0) return ctx.InvalidArgument("inputs do not match attribute N");
  CrossInputs in;
  auto check_values = [&](const Tensor& t, absl::string_view what, int i) -> absl::Status {
    if (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kString) {
      return ctx.InvalidArgument(absl::StrCat(what, " ", i, " is ", DataTypeName(t.dtype()), "; features are int64 or string"));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < n; ++i) {
    const Tensor& indices = ctx.input(i);
    const Tensor& values = ctx.input(static_cast<int>(n) + i);
    const Tensor& shape = ctx.input(2 * static_cast<int>(n) + i);
    if (indices.dtype() != DataType::kInt64 || indices.dims() != 2 || indices.shape()[1] != 2) {
      return ctx.InvalidArgument(absl::StrCat("Input indices should be an int64 matrix [n, 2] but received ",
                                              indices.DebugString(0), " at position ", i));
    }
    PX_RETURN_IF_ERROR(check_values(values, "sparse values", i));
    if (values.dims() != 1 || values.shape()[0] != indices.shape()[0]) {
      return ctx.InvalidArgument(absl::StrCat("Expected ", indices.shape()[0], " input values, got shape ",
                                              ShapeToString(values.shape()), " at position ", i));
    }
    if (shape.dtype() != DataType::kInt64 || shape.dims() != 1 || shape.num_elements() != 2) {
      return ctx.InvalidArgument(
          absl::StrCat("shape should imply a 2D tensor, but got ", shape.DebugString(0), " at position ", i));
    }
    Column c;
    c.values = &values;
    in.columns.push_back(std::move(c));
  }
  for (int i = 0; i < num_dense; ++i) {
    const Tensor& t = ctx.input(3 * static_cast<int>(n) + i);
    PX_RETURN_IF_ERROR(check_values(t, "dense input", i));
    if (t.dims() != 2) {
      return ctx.InvalidArgument(absl::StrCat("Dense inputs should be a matrix but received shape ",
                                              ShapeToString(t.shape()), " at position ", i));
    }
    Column c;
    c.values = &t;
    c.dense = true;
    in.columns.push_back(std::move(c));
  }
  in.batch = n > 0 ? ctx.input(2 * static_cast<int>(n)).data<int64_t>()[0] : num_dense > 0 ? ctx.input(3 * static_cast<int>(n)).shape()[0] : 0;
  for (int i = 0; i < n; ++i) {
    const int64_t b = ctx.input(2 * static_cast<int>(n) + i).data<int64_t>()[0];
    if (b != in.batch) {
      return ctx.InvalidArgument(absl::StrCat("Expected batch size ", in.batch, " got ", b, " at position ", i));
    }
  }
  for (int i = 0; i < num_dense; ++i) {
    const int64_t b = ctx.input(3 * static_cast<int>(n) + i).shape()[0];
    if (b != in.batch) {
      return ctx.InvalidArgument(absl::StrCat("Expected batch size ", in.batch, " got ", b, " at dense tensor ", i));
    }
  }
  if (in.batch < 0) return ctx.InvalidArgument(absl::StrCat("negative batch size ", in.batch));
  // The run of features of each row in each sparse column (indices sorted
  // by row, as a SparseTensor's are).
  for (int i = 0; i < n; ++i) {
    Column& c = in.columns[i];
    const Tensor& indices = ctx.input(i);
    const int64_t entries = indices.shape()[0];
    int64_t at = 0;
    for (int64_t row = 0; row < in.batch; ++row) {
      const int64_t begin = at;
      while (at < entries && indices.data<int64_t>()[2 * at] == row) ++at;
      c.start.push_back(begin);
      c.count.push_back(at - begin);
    }
  }
  in.num_inputs_used = 3 * static_cast<int>(n) + num_dense;
  return in;
}

// Calls emit(row, choice) for every cross of every row, in TensorFlow's
// order, after writing the sparse indices and shape outputs.
template <typename Emit>
absl::Status ForEachCross(HostOpContext& ctx, const CrossInputs& in, Emit emit, int64_t* total_out) {
  std::vector<int64_t> per_row(static_cast<size_t>(in.batch), 0);
  int64_t total = 0, longest = 0;
  for (int64_t row = 0; row < in.batch; ++row) {
    int64_t crosses = in.columns.empty() ? 0 : 1;
    for (const Column& c : in.columns) crosses *= c.Count(row);
    per_row[row] = crosses;
    total += crosses;
    longest = std::max(longest, crosses);
  }
  PX_ASSIGN_OR_RETURN(Tensor indices, Tensor::AllocateHost(DataType::kInt64, {total, 2}));
  PX_ASSIGN_OR_RETURN(Tensor shape, Tensor::AllocateHost(DataType::kInt64, {2}));
  shape.data<int64_t>()[0] = in.batch;
  shape.data<int64_t>()[1] = longest;
  int64_t* index = indices.data<int64_t>();
  std::vector<int64_t> choice(in.columns.size());
  for (int64_t row = 0; row < in.batch; ++row) {
    std::fill(choice.begin(), choice.end(), 0);
    for (int64_t k = 0; k < per_row[row]; ++k) {
      *index++ = row;
      *index++ = k;
      emit(row, choice);
      for (size_t col = choice.size(); col-- > 0;) {  // the last column varies fastest
        if (++choice[col] < in.columns[col].Count(row)) break;
        choice[col] = 0;
      }
    }
  }
  ctx.set_output(0, std::move(indices));
  ctx.set_output(2, std::move(shape));
  *total_out = total;
  return absl::OkStatus();
}

absl::Status CrossStrings(HostOpContext& ctx, const CrossInputs& in, const std::string& separator) {
  std::vector<std::string> values;
  int64_t total = 0;
  PX_RETURN_IF_ERROR(ForEachCross(
      ctx, in,
      [&](int64_t row, const std::vector<int64_t>& choice) {
        std::vector<std::string> parts;
        for (size_t col = 0; col < choice.size(); ++col) parts.push_back(in.columns[col].Text(row, choice[col]));
        values.push_back(absl::StrJoin(parts, separator));
      },
      &total));
  ctx.set_output(1, Tensor::FromStrings({total}, std::move(values)));
  return absl::OkStatus();
}

// `seeded`: SparseCross starts from hash_key and folds in every
// feature; SparseCrossHashed starts from the first feature's hash.
absl::Status CrossHashes(HostOpContext& ctx, const CrossInputs& in, FeatureHash how, const uint64_t key[2],
                         bool seeded, uint64_t seed, int64_t num_buckets) {
  std::vector<int64_t> values;
  int64_t total = 0;
  PX_RETURN_IF_ERROR(ForEachCross(
      ctx, in,
      [&](int64_t row, const std::vector<int64_t>& choice) {
        uint64_t h = seeded ? seed : in.columns[0].Hash(row, choice[0], how, key);
        for (size_t col = seeded ? 0 : 1; col < choice.size(); ++col) {
          h = FingerprintCat64(h, in.columns[col].Hash(row, choice[col], how, key));
        }
        const uint64_t modulus = num_buckets > 0 ? static_cast<uint64_t>(num_buckets)
                                                 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        values.push_back(static_cast<int64_t>(h % modulus));
      },
      &total));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt64, {total}));
  std::copy(values.begin(), values.end(), out.data<int64_t>());
  ctx.set_output(1, std::move(out));
  return absl::OkStatus();
}

absl::Status SparseCross(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(CrossInputs in, ReadColumns(ctx, 0));
  PX_ASSIGN_OR_RETURN(bool hashed, GetAttrBool(ctx.node(), "hashed_output"));
  PX_ASSIGN_OR_RETURN(DataType internal, GetAttrType(ctx.node(), "internal_type"));
  if (!hashed && internal == DataType::kString) {
    for (const Column& c : in.columns) {
      if (!c.is_string()) {
        return ctx.InvalidArgument("Input values should be of internal type string but received int64");
      }
    }
  }
  if (!hashed) return CrossStrings(ctx, in, "_X_");
  PX_ASSIGN_OR_RETURN(int64_t num_buckets, GetAttrInt(ctx.node(), "num_buckets"));
  PX_ASSIGN_OR_RETURN(int64_t hash_key, GetAttrInt(ctx.node(), "hash_key"));
  const uint64_t no_key[2] = {0, 0};
  return CrossHashes(ctx, in, FeatureHash::kRawOrFingerprint, no_key, true, static_cast<uint64_t>(hash_key),
                     num_buckets);
}
PX_REGISTER_HOST_OP("SparseCross", SparseCross);

absl::Status SparseCrossV2(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(CrossInputs in, ReadColumns(ctx, 1));
  const Tensor& sep = ctx.input(in.num_inputs_used);
  if (sep.dtype() != DataType::kString || sep.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("Input separator should be a string scalar, got ", sep.DebugString(0)));
  }
  return CrossStrings(ctx, in, sep.strings()[0]);
}
PX_REGISTER_HOST_OP("SparseCrossV2", SparseCrossV2);

absl::Status SparseCrossHashed(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(CrossInputs in, ReadColumns(ctx, 3));
  const Tensor& buckets = ctx.input(in.num_inputs_used);
  const Tensor& strong = ctx.input(in.num_inputs_used + 1);
  const Tensor& salt = ctx.input(in.num_inputs_used + 2);
  if (buckets.dtype() != DataType::kInt64 || buckets.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("num_buckets should be an int64 scalar, got ", buckets.DebugString(0)));
  }
  if (buckets.data<int64_t>()[0] < 0) {
    return ctx.InvalidArgument(absl::StrCat("num_buckets should be >= 0, got ", buckets.data<int64_t>()[0]));
  }
  if (strong.dtype() != DataType::kBool || strong.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("strong_hash should be a bool scalar, got ", strong.DebugString(0)));
  }
  if (salt.dtype() != DataType::kInt64 || salt.dims() != 1 || salt.num_elements() != 2) {
    return ctx.InvalidArgument(absl::StrCat("Input \"salt\" must have length 2 but has length ",
                                            salt.num_elements()));
  }
  if (in.columns.empty()) return ctx.InvalidArgument("there is no column to cross");
  const uint64_t key[2] = {static_cast<uint64_t>(salt.data<int64_t>()[0]),
                           static_cast<uint64_t>(salt.data<int64_t>()[1])};
  return CrossHashes(ctx, in, strong.data<bool>()[0] ? FeatureHash::kStrong : FeatureHash::kKeyed, key, false, 0,
                     buckets.data<int64_t>()[0]);
}
PX_REGISTER_HOST_OP("SparseCrossHashed", SparseCrossHashed);

}  // namespace
}  // namespace plexus
