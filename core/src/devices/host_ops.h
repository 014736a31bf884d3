// Host ops: ops the core runs itself, on host tensors, instead of a plugin
// kernel. They are the ops whose meaning is the runtime's own state or
// structure rather than arithmetic: variables and other resources, control
// flow and function calls, TensorArrays, checkpoint I/O, string and parsing
// ops. Internal to the core.
//
//   absl::Status StringJoin(HostOpContext& ctx) { ... ctx.set_output(0, t); }
//   PX_REGISTER_HOST_OP("StringJoin", StringJoin);
//
// A host op's inputs arrive in host memory (copied from a device when
// needed; reference-typed inputs already read unless the op declares a
// Ref input), except those TakesInputOnDevice names. Its outputs are host
// tensors, except a variable's value read where it lives (ReadVariableOp).
#ifndef PLEXUS_CORE_SRC_HOST_OPS_H_
#define PLEXUS_CORE_SRC_HOST_OPS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/graph.h"
#include "plexus/tensor.h"

namespace plexus {

class Device;
class SessionState;  // session-wide state: resources, functions (session_state.h)

class HostOpContext {
 public:
  HostOpContext(const Node& node, std::vector<Tensor> inputs, SessionState* state)
      : node_(node), inputs_(std::move(inputs)), outputs_(node.num_outputs()), state_(state) {}

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Tensor& input(int i) const { return inputs_[i]; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // Moves input i out of the context (it reads as invalid afterwards). An op
  // that takes the only reference to a variant may change it in place
  // (devices/variant.h); function calls hand their arguments on this way.
  Tensor TakeInput(int i) { return std::move(inputs_[i]); }
  void set_output(int i, Tensor t) { outputs_[i] = std::move(t); }
  std::vector<Tensor>& outputs() { return outputs_; }
  SessionState* state() const { return state_; }

  // Errors prefixed with the node's description.
  absl::Status InvalidArgument(absl::string_view message) const;
  absl::Status Error(absl::StatusCode code, absl::string_view message) const;

 private:
  const Node& node_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  SessionState* state_;
};

using HostOpFn = absl::Status (*)(HostOpContext&);

enum class HostOpUse {
  kAlways,    // the op is always run by the core (state, control, strings)
  kFallback,  // only when no plugin kernel matches (e.g. Const of strings)
};

void RegisterHostOp(const std::string& op, HostOpFn fn, HostOpUse use);

// Whether collective op `op` with its input on `device` runs on that device
// through its plugin's collectives extension (ABI 0.7): the executor and
// eager mode then leave the input there, and the output stays there too.
bool RunsOnDeviceCollectives(absl::string_view op, const Device* device);
// Whether host op `op` takes input `input` where it is, device memory
// included, instead of a host copy: the value AssignVariableOp stores, so a
// variable keeps its value on the device that made it (the executor and
// eager mode wait for the value to be complete first, and plan no copy).
bool TakesInputOnDevice(absl::string_view op, int input);
// The host implementation of `op`, or null.
HostOpFn FindHostOp(absl::string_view op, HostOpUse* use = nullptr);
std::vector<std::string> HostOpNames();

struct HostOpRegistration {
  HostOpRegistration(const char* op, HostOpFn fn, HostOpUse use) { RegisterHostOp(op, fn, use); }
};

#define PX_REGISTER_HOST_OP(op, fn) PX_REGISTER_HOST_OP_UNIQ_(__COUNTER__, op, fn, ::plexus::HostOpUse::kAlways)
#define PX_REGISTER_HOST_FALLBACK(op, fn) \
  PX_REGISTER_HOST_OP_UNIQ_(__COUNTER__, op, fn, ::plexus::HostOpUse::kFallback)
#define PX_REGISTER_HOST_OP_UNIQ_(ctr, op, fn, use) PX_REGISTER_HOST_OP_UNIQ2_(ctr, op, fn, use)
#define PX_REGISTER_HOST_OP_UNIQ2_(ctr, op, fn, use) \
  static ::plexus::HostOpRegistration px_host_op_##ctr(op, fn, use)

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_OPS_H_
