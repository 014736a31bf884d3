// Host kernels of TensorFlow's collective ops (schemas in
// ops/collective_ops.cc): each finds its group's communicator
// (dist/world.h) and runs the collective on host tensors; inputs on a
// device arrive copied to the host, and the placement report lists these
// ops among the core's host ops -- except where the input's device offers
// the collectives extension (ABI 0.7): then all-reduce, all-gather,
// reduce-scatter and all-to-all run there (dist/device_comm.h) and their
// results stay on that device. Broadcasts always go through the host, since
// a receiver has no input to say which device the sender used.
//
// The instance key names one collective instance in TensorFlow; here the
// communicator's sequence number does that job (every rank issues a group's
// collectives in one order: the executor runs graphs with collectives
// serially, in an order fixed by the graph), so instance keys are checked
// for range only.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "dist/communicator.h"
#include "dist/device_comm.h"
#include "dist/world.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

struct Params {
  int group_size = 1;
  int64_t group_key = 0;
  absl::Duration timeout;
  std::shared_ptr<dist::Communicator> comm;               // host collectives (Gloo), or
  std::shared_ptr<dist::DeviceCommunicator> device_comm;  // the input's device's own
};

// The device whose collectives extension runs this op: its input's, when the
// executor left the input there (devices/host_ops.h,
// RunsOnDeviceCollectives); null for host collectives.
Device* DeviceOf(HostOpContext& ctx) {
  if (ctx.num_inputs() == 0 || !RunsOnDeviceCollectives(ctx.node().op, ctx.input(0).device())) return nullptr;
  return ctx.input(0).device();
}

absl::StatusOr<int64_t> ScalarInt(HostOpContext& ctx, int index, const char* name) {
  std::vector<int64_t> v;
  if (!host::ReadInts(ctx.input(index), &v) || v.size() != 1) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be an int32 scalar"));
  }
  return v[0];
}

// Keys from inputs (V2, starting at `first`) or attributes (V1).
absl::StatusOr<Params> GetParams(HostOpContext& ctx, int first) {
  Params p;
  int64_t size;
  if (first >= 0) {
    PX_ASSIGN_OR_RETURN(size, ScalarInt(ctx, first, "group_size"));
    PX_ASSIGN_OR_RETURN(p.group_key, ScalarInt(ctx, first + 1, "group_key"));
    PX_RETURN_IF_ERROR(ScalarInt(ctx, first + 2, "instance_key").status());
  } else {
    PX_ASSIGN_OR_RETURN(size, GetAttrInt(ctx.node(), "group_size"));
    PX_ASSIGN_OR_RETURN(p.group_key, GetAttrInt(ctx.node(), "group_key"));
  }
  if (size < 1) return ctx.InvalidArgument(absl::StrCat("group_size must be positive, got ", size));
  p.group_size = static_cast<int>(size);
  absl::StatusOr<float> timeout = GetAttrFloat(ctx.node(), "timeout_seconds");
  p.timeout = timeout.ok() && *timeout > 0 ? absl::Seconds(*timeout) : absl::ZeroDuration();
  if (DeviceOf(ctx) == nullptr) {
    absl::StatusOr<std::shared_ptr<dist::Communicator>> comm = dist::GroupCommunicator(p.group_key, p.group_size);
    if (!comm.ok()) return ctx.Error(comm.status().code(), comm.status().message());
    p.comm = *comm;
  } else {
    absl::StatusOr<std::shared_ptr<dist::DeviceCommunicator>> comm =
        dist::DeviceGroupCommunicator(p.group_key, p.group_size, DeviceOf(ctx));
    if (!comm.ok()) return ctx.Error(comm.status().code(), comm.status().message());
    p.device_comm = *comm;
  }
  return p;
}

// The node's errors carry its description first.
absl::Status Wrap(HostOpContext& ctx, const absl::Status& s) {
  return s.ok() ? s : ctx.Error(s.code(), s.message());
}

absl::StatusOr<std::pair<dist::ReduceOp, bool>> ReduceAttrs(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string merge, GetAttrString(ctx.node(), "merge_op"));
  PX_ASSIGN_OR_RETURN(std::string final_op, GetAttrString(ctx.node(), "final_op"));
  if (merge != "Add" && merge != "Mul" && merge != "Min" && merge != "Max") {
    return ctx.InvalidArgument(absl::StrCat("merge_op must be Add, Mul, Min or Max, not '", merge, "'"));
  }
  if (final_op != "Id" && final_op != "Div") {
    return ctx.InvalidArgument(absl::StrCat("final_op must be Id or Div, not '", final_op, "'"));
  }
  PX_ASSIGN_OR_RETURN(dist::ReduceOp op, dist::ParseReduceOp(merge));
  return std::make_pair(op, final_op == "Div");
}

absl::Status Finish(HostOpContext& ctx, absl::StatusOr<Tensor> out) {
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, *std::move(out));
  return absl::OkStatus();
}

absl::Status Reduce(HostOpContext& ctx, int first) {
  PX_ASSIGN_OR_RETURN(auto how, ReduceAttrs(ctx));
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, first));
  if (p.device_comm) return Finish(ctx, p.device_comm->AllReduce(ctx.input(0), how.first, how.second, p.timeout));
  return Finish(ctx, p.comm->AllReduce(ctx.TakeInput(0), how.first, how.second, p.timeout));
}

absl::Status CollectiveReduceV2(HostOpContext& ctx) { return Reduce(ctx, 1); }
absl::Status CollectiveReduce(HostOpContext& ctx) { return Reduce(ctx, -1); }

absl::Status CollectiveReduceScatterV2(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(auto how, ReduceAttrs(ctx));
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, 1));
  if (p.device_comm) return Finish(ctx, p.device_comm->ReduceScatter(ctx.input(0), how.first, how.second, p.timeout));
  return Finish(ctx, p.comm->ReduceScatter(ctx.input(0), how.first, how.second, p.timeout));
}

absl::Status Gather(HostOpContext& ctx, int first) {
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, first));
  if (p.device_comm) return Finish(ctx, p.device_comm->AllGather(ctx.input(0), p.timeout));
  return Finish(ctx, p.comm->AllGather(ctx.input(0), p.timeout));
}
absl::Status CollectiveGatherV2(HostOpContext& ctx) { return Gather(ctx, 1); }
absl::Status CollectiveGather(HostOpContext& ctx) { return Gather(ctx, -1); }

absl::Status CollectiveAllToAllV2(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, 1));
  if (p.device_comm) return Finish(ctx, p.device_comm->AllToAll(ctx.input(0), p.timeout));
  return Finish(ctx, p.comm->AllToAll(ctx.input(0), p.timeout));
}

// The sender is whichever rank runs the Send op; receivers learn it from
// the collective itself.
absl::Status BcastSend(HostOpContext& ctx, int first) {
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, first));
  return Finish(ctx, p.comm->BroadcastFromSender(ctx.input(0), /*is_sender=*/true, p.timeout));
}
absl::Status CollectiveBcastSendV2(HostOpContext& ctx) { return BcastSend(ctx, 1); }
absl::Status CollectiveBcastSend(HostOpContext& ctx) { return BcastSend(ctx, -1); }

absl::Status BcastRecv(HostOpContext& ctx, int first, const Shape& shape) {
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "T"));
  PX_ASSIGN_OR_RETURN(Params p, GetParams(ctx, first));
  absl::StatusOr<Tensor> like = Tensor::AllocateHost(dtype, shape);
  if (!like.ok()) return Wrap(ctx, like.status());
  return Finish(ctx, p.comm->BroadcastFromSender(*like, /*is_sender=*/false, p.timeout));
}

absl::Status CollectiveBcastRecvV2(HostOpContext& ctx) {
  std::vector<int64_t> dims;
  if (!host::ReadInts(ctx.input(3), &dims) || ctx.input(3).dims() > 1) {
    return ctx.InvalidArgument("shape must be a vector of int32 or int64");
  }
  for (int64_t d : dims) {
    if (d < 0) return ctx.InvalidArgument(absl::StrCat("shape has a negative dimension: ", d));
  }
  return BcastRecv(ctx, 0, Shape(dims.begin(), dims.end()));
}

absl::Status CollectiveBcastRecv(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
  if (!shape.fully_defined()) return ctx.InvalidArgument("the shape attribute must be fully defined");
  return BcastRecv(ctx, -1, shape.dims());
}

PX_REGISTER_HOST_OP("CollectiveReduceV2", CollectiveReduceV2);
PX_REGISTER_HOST_OP("CollectiveReduce", CollectiveReduce);
PX_REGISTER_HOST_OP("CollectiveReduceScatterV2", CollectiveReduceScatterV2);
PX_REGISTER_HOST_OP("CollectiveGatherV2", CollectiveGatherV2);
PX_REGISTER_HOST_OP("CollectiveGather", CollectiveGather);
PX_REGISTER_HOST_OP("CollectiveAllToAllV2", CollectiveAllToAllV2);
PX_REGISTER_HOST_OP("CollectiveBcastSendV2", CollectiveBcastSendV2);
PX_REGISTER_HOST_OP("CollectiveBcastSend", CollectiveBcastSend);
PX_REGISTER_HOST_OP("CollectiveBcastRecvV2", CollectiveBcastRecvV2);
PX_REGISTER_HOST_OP("CollectiveBcastRecv", CollectiveBcastRecv);

}  // namespace
}  // namespace plexus
