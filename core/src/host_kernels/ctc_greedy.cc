// Host kernel of CTCGreedyDecoder (schema in ops/ctc_ops.cc), as
// TensorFlow: at each step of each sequence the most likely class (the
// first of equal ones); blanks dropped, and with merge_repeated a class
// equal to the previous step's dropped too. The log probability is minus
// the sum of the chosen logits.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

template <typename T>
absl::Status Decode(HostOpContext& ctx) {
  const Tensor& inputs = ctx.input(0);
  const Tensor& lengths = ctx.input(1);
  const int64_t max_time = inputs.shape()[0], batch = inputs.shape()[1], classes = inputs.shape()[2];
  if (lengths.dtype() != DataType::kInt32 || lengths.dims() != 1 || lengths.shape()[0] != batch) {
    return ctx.InvalidArgument(absl::StrCat("sequence_length must be an int32 vector of ", batch,
                                            " (the batch), got ", lengths.DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(bool merge, GetAttrBool(ctx.node(), "merge_repeated"));
  PX_ASSIGN_OR_RETURN(int64_t blank, GetAttrInt(ctx.node(), "blank_index"));
  if (blank < 0) blank += classes;
  if (blank < 0 || blank >= classes) {
    return ctx.InvalidArgument(absl::StrCat("blank_index expected to be between ", -classes, " and ", classes - 1));
  }
  if (classes == 0) return ctx.InvalidArgument("num_classes cannot be 0");
  std::vector<std::vector<int64_t>> sequences(static_cast<size_t>(batch));
  PX_ASSIGN_OR_RETURN(Tensor log_prob, Tensor::AllocateHost(inputs.dtype(), {batch, 1}));
  const T* x = inputs.data<T>();
  for (int64_t b = 0; b < batch; ++b) {
    const int32_t length = lengths.data<int32_t>()[b];
    if (length < 0 || length > max_time) {
      return ctx.InvalidArgument(absl::StrCat("sequence_length(", b, ") = ", length, " is not in [0, max_time = ",
                                              max_time, "]"));
    }
    T sum = 0;
    int64_t previous = -1;
    for (int64_t t = 0; t < length; ++t) {
      const T* row = x + (t * batch + b) * classes;
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c) {
        if (row[c] > row[best]) best = c;
      }
      sum += row[best];
      if (best != blank && !(merge && best == previous)) sequences[b].push_back(best);
      previous = best;
    }
    log_prob.data<T>()[b] = -sum;
  }
  int64_t total = 0, longest = 0;
  for (const auto& s : sequences) {
    total += static_cast<int64_t>(s.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  }
  PX_ASSIGN_OR_RETURN(Tensor indices, Tensor::AllocateHost(DataType::kInt64, {total, 2}));
  PX_ASSIGN_OR_RETURN(Tensor values, Tensor::AllocateHost(DataType::kInt64, {total}));
  PX_ASSIGN_OR_RETURN(Tensor shape, Tensor::AllocateHost(DataType::kInt64, {2}));
  int64_t k = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t i = 0; i < sequences[b].size(); ++i, ++k) {
      indices.data<int64_t>()[2 * k] = b;
      indices.data<int64_t>()[2 * k + 1] = static_cast<int64_t>(i);
      values.data<int64_t>()[k] = sequences[b][i];
    }
  }
  shape.data<int64_t>()[0] = batch;
  shape.data<int64_t>()[1] = longest;
  ctx.set_output(0, std::move(indices));
  ctx.set_output(1, std::move(values));
  ctx.set_output(2, std::move(shape));
  ctx.set_output(3, std::move(log_prob));
  return absl::OkStatus();
}

absl::Status CtcGreedyDecoder(HostOpContext& ctx) {
  const Tensor& inputs = ctx.input(0);
  if (inputs.dims() != 3) {
    return ctx.InvalidArgument(absl::StrCat("inputs must be [max_time, batch, num_classes], got shape ",
                                            ShapeToString(inputs.shape())));
  }
  if (inputs.dtype() == DataType::kFloat) return Decode<float>(ctx);
  if (inputs.dtype() == DataType::kDouble) return Decode<double>(ctx);
  return ctx.InvalidArgument(absl::StrCat("inputs are ", DataTypeName(inputs.dtype()), ", not float or double"));
}
PX_REGISTER_HOST_OP("CTCGreedyDecoder", CtcGreedyDecoder);

}  // namespace
}  // namespace plexus
