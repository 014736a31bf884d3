// The dataflow scheduler, for graphs with TensorFlow 1 control flow: dead
// tensors, loop frames and iterations.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/thread_pool.h"
#include "base/trace.h"
#include "devices/host_services.h"
#include "exec/executor.h"
#include "exec/executor_internal.h"
#include "exec/session_state.h"
#include "plexus/logging.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/session.h"
#include "plexus/status.h"

namespace plexus {

namespace {

// One instance of a loop frame: a frame name entered from one iteration of
// its parent frame.
struct Frame {
  std::string name;
  Frame* parent = nullptr;
  int64_t parent_iter = 0;
  int64_t max_iter = 0;
  // Values of loop-invariant Enter nodes, given to every iteration.
  std::vector<std::pair<int, Tensor>> invariants;
  std::map<std::pair<int64_t, std::string>, Frame*> children;
};

struct Token {
  Tensor value;
  bool dead = false;
};

struct NodeState {
  std::vector<Tensor> inputs;
  int pending = 0;
  int dead_data = 0;
  int arrived = 0;  // Merge: data inputs arrived, not counting back edges
  bool dead = false;
  bool fired = false;
};

struct Task {
  int item;
  Frame* frame;
  int64_t iter;
  std::vector<Tensor> inputs;
  bool dead;
  int merge_index = -1;  // the input a Merge forwards
};

absl::StatusOr<bool> PredicateValue(const Node& node, const Tensor& pred) {
  PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(pred, nullptr));
  if (host.dtype() != DataType::kBool || host.num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": the predicate must be a bool "
                                                   "scalar, got ", host.DebugString()));
  }
  return host.data<uint8_t>()[0] != 0;
}

}  // namespace

// TensorFlow 1 control flow: every value is tagged with a frame instance and
// an iteration; Switch makes one output dead, Merge forwards the first live
// input, a dead input makes a node's outputs dead without running it, Enter
// moves into a child frame, NextIteration into the next iteration and Exit
// back to the parent frame. One run's state, with a step per ready task.
struct Executor::Dataflow {
  Dataflow(const Executor& e, const std::vector<Tensor>& f, RunState& r)
      : exec(e), items(e.items_), feed_values(f), run(r) {
    frames.push_back(std::make_unique<Frame>());
    root = frames.back().get();
  }

  const Executor& exec;
  const std::vector<Item>& items;
  const std::vector<Tensor>& feed_values;
  RunState& run;
  std::vector<std::unique_ptr<Frame>> frames;
  Frame* root = nullptr;
  std::map<std::tuple<int, const Frame*, int64_t>, NodeState> states;
  std::deque<Task> ready;
  // Fetches produced by items in the root frame.
  std::map<std::pair<int, int>, std::vector<int>> fetch_of;
  std::vector<Tensor> fetched;
  std::vector<int> fetch_state;  // 0 missing, 1 live, 2 dead
  std::vector<Tensor> outputs;   // scratch for Execute

  void Start();
  NodeState& StateOf(int item, Frame* frame, int64_t iter);
  void Finish(int item, Frame* frame, int64_t iter, NodeState& st, int merge_index);
  void DeliverToMerge(int item, int input, const Token& token, Frame* frame, int64_t iter);
  void Deliver(int item, int input, const Token& token, Frame* frame, int64_t iter);
  void Propagate(int item, const std::vector<Token>& outs, bool node_dead, Frame* frame, int64_t iter);
  absl::Status Step(Task task);
  // Enter, Exit and NextIteration: values moving between frames and
  // iterations. True when the task was one of them (and is done).
  absl::StatusOr<bool> MoveAcrossFrames(Task& task, std::vector<Token>& outs);
  absl::Status CheckFetches() const;
};

void Executor::Dataflow::Start() {
  const auto& sources = exec.fetch_sources_;
  fetched.resize(sources.size());
  fetch_state.assign(sources.size(), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    if (s.item < 0) {
      fetched[i] = feed_values[s.feed];
      fetch_state[i] = 1;
    } else {
      fetch_of[{s.item, s.output}].push_back(static_cast<int>(i));
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].pending == 0 && items[i].kind != Kind::kMerge) {
      NodeState& st = StateOf(static_cast<int>(i), root, 0);
      Finish(static_cast<int>(i), root, 0, st, -1);
    }
  }
}

NodeState& Executor::Dataflow::StateOf(int item, Frame* frame, int64_t iter) {
  auto key = std::make_tuple(item, static_cast<const Frame*>(frame), iter);
  auto it = states.find(key);
  if (it != states.end()) return it->second;
  NodeState& st = states[key];
  const Item& it_item = items[item];
  st.inputs.resize(it_item.node->num_inputs());
  st.pending = it_item.pending;
  for (size_t k = 0; k < it_item.inputs.size(); ++k) {
    if (it_item.inputs[k].item < 0) st.inputs[k] = feed_values[it_item.inputs[k].feed];
  }
  return st;
}

void Executor::Dataflow::Finish(int item, Frame* frame, int64_t iter, NodeState& st, int merge_index) {
  ready.push_back(Task{item, frame, iter, std::move(st.inputs), st.dead, merge_index});
  states.erase(std::make_tuple(item, static_cast<const Frame*>(frame), iter));
}

// Control inputs of a Merge are not waited for (TensorFlow waits; no real
// graph here has them). Once fired, the state stays as a marker until every
// input that is not a loop back edge has arrived, so a late token cannot
// fire the Merge again.
void Executor::Dataflow::DeliverToMerge(int item, int input, const Token& token, Frame* frame,
                                        int64_t iter) {
  if (input < 0) return;
  const Item& target = items[item];
  NodeState& st = StateOf(item, frame, iter);
  const bool back_edge = items[target.inputs[input].item].kind == Kind::kNextIteration;
  const int expected = target.num_data_inputs - target.num_back_edges;
  if (!back_edge) ++st.arrived;
  if (!st.fired) {
    if (!token.dead) {
      st.fired = true;
      ready.push_back(Task{item, frame, iter, {}, false, input});
      ready.back().inputs.resize(target.node->num_inputs());
      ready.back().inputs[input] = token.value;
    } else if (++st.dead_data == target.num_data_inputs) {
      st.fired = true;
      ready.push_back(Task{item, frame, iter, {}, true, -1});
    }
  }
  if (st.fired && (back_edge || st.arrived >= expected)) {
    states.erase(std::make_tuple(item, static_cast<const Frame*>(frame), iter));
  }
}

// Delivers one token to input `input` (-1: a control edge) of `item`.
void Executor::Dataflow::Deliver(int item, int input, const Token& token, Frame* frame, int64_t iter) {
  if (items[item].kind == Kind::kMerge) return DeliverToMerge(item, input, token, frame, iter);
  NodeState& st = StateOf(item, frame, iter);
  if (input >= 0) st.inputs[input] = token.value;
  if (token.dead) st.dead = true;
  if (--st.pending == 0) Finish(item, frame, iter, st, -1);
}

void Executor::Dataflow::Propagate(int item, const std::vector<Token>& outs, bool node_dead, Frame* frame,
                                   int64_t iter) {
  const Item& source = items[item];
  for (size_t k = 0; k < outs.size(); ++k) {
    for (const Edge& e : source.out_edges[k]) Deliver(e.item, e.input, outs[k], frame, iter);
    if (frame == root) {
      auto f = fetch_of.find({item, static_cast<int>(k)});
      if (f != fetch_of.end()) {
        for (int i : f->second) {
          fetched[i] = outs[k].value;
          fetch_state[i] = outs[k].dead ? 2 : 1;
        }
      }
    }
  }
  for (int c : source.control_out) Deliver(c, -1, Token{Tensor(), node_dead}, frame, iter);
}

absl::StatusOr<bool> Executor::Dataflow::MoveAcrossFrames(Task& task, std::vector<Token>& outs) {
  const Item& item = items[task.item];
  const Node& node = *item.node;
  if (item.kind == Kind::kEnter) {
    if (!task.dead) {
      PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
      outs[0].value = task.inputs[0];
    }
    Frame*& child = task.frame->children[{task.iter, item.frame_name}];
    if (child == nullptr) {
      frames.push_back(std::make_unique<Frame>());
      child = frames.back().get();
      child->name = item.frame_name;
      child->parent = task.frame;
      child->parent_iter = task.iter;
    }
    if (item.constant_enter && !task.dead) {
      child->invariants.emplace_back(task.item, outs[0].value);
      for (int64_t i = 0; i <= child->max_iter; ++i) Propagate(task.item, outs, false, child, i);
    } else {
      Propagate(task.item, outs, task.dead, child, 0);
    }
    run.Retire(task.inputs);
    return true;
  }
  if (item.kind != Kind::kExit && item.kind != Kind::kNextIteration) return false;
  if (task.frame->parent == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), " is not inside a loop frame"));
  }
  // Exit: only the final iteration's value leaves. NextIteration: a dead
  // token means the loop has ended.
  if (task.dead) return true;
  PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
  outs[0].value = task.inputs[0];
  if (item.kind == Kind::kExit) {
    Propagate(task.item, outs, false, task.frame->parent, task.frame->parent_iter);
    return true;
  }
  Frame* frame = task.frame;
  int64_t next = task.iter + 1;
  if (next > frame->max_iter) {
    frame->max_iter = next;
    for (const auto& [enter, value] : frame->invariants) {
      std::vector<Token> inv(1);
      inv[0].value = value;
      Propagate(enter, inv, false, frame, next);
    }
  }
  Propagate(task.item, outs, false, frame, next);
  return true;
}

absl::Status Executor::Dataflow::Step(Task task) {
  const Item& item = items[task.item];
  const Node& node = *item.node;
  std::vector<Token> outs(node.num_outputs());
  if (task.dead) {
    for (Token& t : outs) t.dead = true;
  }
  PX_ASSIGN_OR_RETURN(bool moved, MoveAcrossFrames(task, outs));
  if (moved) return absl::OkStatus();
  if (item.kind == Kind::kSwitch && !task.dead) {
    PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
    if (Device* d = task.inputs[1].device(); d != nullptr && !d->host_accessible()) {
      // Made by a kernel on a run stream: wait for it before reading it.
      PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(d), node.Describe()));
    }
    PX_ASSIGN_OR_RETURN(bool pred, PredicateValue(node, task.inputs[1]));
    outs[pred ? 1 : 0].value = task.inputs[0];
    outs[pred ? 0 : 1].dead = true;
  } else if (item.kind == Kind::kMerge && !task.dead) {
    outs[0].value = task.inputs[task.merge_index];
    PX_ASSIGN_OR_RETURN(outs[1].value, Tensor::AllocateHost(DataType::kInt32, {}));
    outs[1].value.data<int32_t>()[0] = task.merge_index;
  } else if (item.kind != Kind::kSwitch && item.kind != Kind::kMerge && !task.dead) {
    PX_RETURN_IF_ERROR(exec.Execute(item, std::move(task.inputs), &outputs, run,
                                    run.streams.stream(item.device_index)));
    for (int k = 0; k < node.num_outputs(); ++k) outs[k].value = std::move(outputs[k]);
  }
  Propagate(task.item, outs, task.dead, task.frame, task.iter);
  run.Retire(task.inputs);
  // Outputs nobody reads may still be written by queued device work: they
  // are freed with the rest once the streams drain.
  for (Token& t : outs) {
    if (t.value.buffer() != nullptr && t.value.dtype() != DataType::kVariant) run.retired.push_back(std::move(t.value));
  }
  if (run.retired.size() > 4096) {
    PX_RETURN_IF_ERROR(run.streams.SynchronizeAll());
    run.retired.clear();
  }
  return absl::OkStatus();
}

absl::Status Executor::Dataflow::CheckFetches() const {
  for (size_t i = 0; i < fetched.size(); ++i) {
    if (fetch_state[i] == 1) continue;
    const Endpoint& e = exec.request_.fetches[i];
    return absl::InvalidArgumentError(absl::StrCat(
        "fetch '", EndpointName(e), "' ",
        fetch_state[i] == 2 ? "is dead: it is on the branch of a conditional that was not taken"
                            : "was never computed: its inputs were not all produced (a dead "
                              "branch or a loop that did not finish)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Executor::RunDataflow(const std::vector<Tensor>& feed_values,
                                                          RunState& run) const {
  Dataflow flow(*this, feed_values, run);
  flow.Start();
  // On an error return, wait for the streams before the tensors above are
  // freed: queued work may still read or write them.
  struct SyncOnExit {
    RunStreams& streams;
    ~SyncOnExit() { streams.SynchronizeAll().IgnoreError(); }
  } sync_on_exit{run.streams};
  while (!flow.ready.empty()) {
    Task task = std::move(flow.ready.front());
    flow.ready.pop_front();
    PX_RETURN_IF_ERROR(flow.Step(std::move(task)));
  }
  PX_RETURN_IF_ERROR(flow.CheckFetches());
  return std::move(flow.fetched);
}

}  // namespace plexus
