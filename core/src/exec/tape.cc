#include "plexus/tape.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "plexus/gradients.h"
#include "plexus/graph_builder.h"
#include "plexus/session.h"
#include "plexus/status.h"

namespace plexus {

bool GradientTape::ShouldRecord(absl::Span<const int64_t> input_ids) const {
  for (int64_t id : input_ids) {
    if (id != 0 && tracked_.count(id) > 0) return true;
  }
  return false;
}

void GradientTape::Record(const std::string& op, const AttrMap& attrs, std::vector<int64_t> input_ids,
                          std::vector<Tensor> inputs, std::vector<int64_t> output_ids,
                          std::vector<Tensor> outputs) {
  for (int64_t id : output_ids) tracked_.insert(id);
  records_.push_back({op, attrs, std::move(input_ids), std::move(inputs), std::move(output_ids),
                      std::move(outputs)});
}

absl::StatusOr<std::vector<std::optional<Tensor>>> GradientTape::Gradient(
    Runtime* runtime, EagerContext* eager, const std::vector<int64_t>& targets,
    const std::vector<Tensor>& target_values, const std::vector<int64_t>& sources,
    const std::vector<Tensor>& output_gradients) {
  if (used_ && !persistent_) {
    return absl::FailedPreconditionError(
        "a non-persistent GradientTape computes gradients once; make it with persistent=True to call "
        "gradient() again");
  }
  used_ = true;
  if (!output_gradients.empty() && output_gradients.size() != targets.size()) {
    return absl::InvalidArgumentError(absl::StrCat("gradient: ", targets.size(), " targets but ",
                                                   output_gradients.size(), " output gradients"));
  }
  // The records the targets depend on.
  std::set<int64_t> needed(targets.begin(), targets.end());
  std::vector<char> relevant(records_.size(), 0);
  for (size_t r = records_.size(); r-- > 0;) {
    bool any = false;
    for (int64_t id : records_[r].output_ids) any = any || needed.count(id) > 0;
    if (!any) continue;
    relevant[r] = 1;
    needed.insert(records_[r].input_ids.begin(), records_[r].input_ids.end());
  }

  GraphBuilder b("gradient tape");
  std::map<int64_t, Endpoint> at;
  std::vector<std::pair<std::string, Tensor>> feeds;
  int64_t anonymous = 0;
  auto value_of = [&](int64_t id, const Tensor& value) -> absl::StatusOr<Endpoint> {
    if (id == 0) id = --anonymous;  // a value the tape never numbered
    auto it = at.find(id);
    if (it != at.end()) return it->second;
    // Small integer values (axes, shapes) as constants, so shape inference
    // sees them; everything else fed.
    if ((value.dtype() == DataType::kInt32 || value.dtype() == DataType::kInt64) && value.num_elements() <= 64 &&
        value.host_readable()) {
      PX_ASSIGN_OR_RETURN(Node * node, b.AddConst(value, "value"));
      at[id] = {node, 0};
      return at[id];
    }
    PX_ASSIGN_OR_RETURN(Node * node, b.AddPlaceholder(value.dtype(), PartialShape(value.shape()),
                                                      id > 0 ? absl::StrCat("t", id) : "value"));
    feeds.push_back({absl::StrCat(node->name, ":0"), value});
    at[id] = {node, 0};
    return at[id];
  };
  for (size_t r = 0; r < records_.size(); ++r) {
    if (!relevant[r]) continue;
    const Record_& rec = records_[r];
    std::vector<Endpoint> inputs;
    for (size_t k = 0; k < rec.inputs.size(); ++k) {
      PX_ASSIGN_OR_RETURN(Endpoint e, value_of(rec.input_ids[k], rec.inputs[k]));
      inputs.push_back(e);
    }
    PX_ASSIGN_OR_RETURN(Node * node, b.AddNode(rec.op, inputs, rec.attrs, rec.op));
    for (size_t k = 0; k < rec.output_ids.size() && static_cast<int>(k) < node->num_outputs(); ++k) {
      at[rec.output_ids[k]] = {node, static_cast<int>(k)};
      // Fed, so the forward computation does not run again.
      feeds.push_back({absl::StrCat(node->name, ":", k), rec.outputs[k]});
    }
  }
  std::vector<Endpoint> ys, grad_ys;
  for (size_t i = 0; i < targets.size(); ++i) {
    PX_ASSIGN_OR_RETURN(Endpoint y, value_of(targets[i], target_values[i]));
    ys.push_back(y);
    if (!output_gradients.empty()) {
      PX_ASSIGN_OR_RETURN(Node * dy, b.AddPlaceholder(output_gradients[i].dtype(),
                                                      PartialShape(output_gradients[i].shape()), "output_gradient"));
      feeds.push_back({absl::StrCat(dy->name, ":0"), output_gradients[i]});
      grad_ys.push_back({dy, 0});
    }
  }
  std::vector<Endpoint> xs;
  std::vector<int> source_slot(sources.size(), -1);
  for (size_t i = 0; i < sources.size(); ++i) {
    auto it = at.find(sources[i]);
    if (it == at.end()) continue;
    source_slot[i] = static_cast<int>(xs.size());
    xs.push_back(it->second);
  }
  std::vector<std::optional<Tensor>> result(sources.size());
  if (xs.empty()) return result;
  PX_ASSIGN_OR_RETURN(GradientList grads, AddGradients(b, ys, xs, grad_ys));
  std::vector<std::string> fetches;
  std::vector<int> fetch_of(xs.size(), -1);
  for (size_t j = 0; j < grads.size(); ++j) {
    if (!grads[j].has_value()) continue;
    fetch_of[j] = static_cast<int>(fetches.size());
    fetches.push_back(absl::StrCat(grads[j]->node->name, ":", grads[j]->index));
  }
  if (fetches.empty()) return result;
  PX_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, b.Finish());
  SessionOptions options;
  options.optimizer.enabled = false;
  options.memory_plan = false;
  if (eager != nullptr) options.resources = eager->resources();
  PX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(runtime, graph, options));
  PX_ASSIGN_OR_RETURN(std::vector<Tensor> values, session->Run(feeds, fetches));
  for (size_t i = 0; i < sources.size(); ++i) {
    if (source_slot[i] < 0) continue;
    const int f = fetch_of[source_slot[i]];
    if (f >= 0) result[i] = values[f];
  }
  return result;
}

}  // namespace plexus
