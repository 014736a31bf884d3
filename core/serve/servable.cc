#include "servable.h"

#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "batcher.h"
#include "metrics.h"
#include "plexus/session.h"

namespace plexus::serve {
namespace {

// Sets a run's cancel flag when its deadline passes, so a run that takes too
// long stops between nodes (one thread for the whole process).
std::string Keys(const std::map<std::string, SignatureTensor>& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back("'" + k + "'");
  return absl::StrJoin(keys, ", ");
}

std::string ShapeString(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); }

// A zero tensor for warm-up: unknown dimensions (and an unknown rank's) 1.
absl::StatusOr<Tensor> WarmupTensor(const SignatureTensor& spec) {
  Shape shape;
  if (spec.shape.rank_known()) {
    for (int64_t d : spec.shape.dims()) shape.push_back(d < 0 ? 1 : d);
  }
  if (spec.dtype == DataType::kString) {
    int64_t n = NumElements(shape);
    return Tensor::FromStrings(shape, std::vector<std::string>(n));
  }
  return Tensor::AllocateHost(spec.dtype, shape);
}

}  // namespace

absl::StatusOr<std::shared_ptr<Servable>> Servable::Load(Runtime* runtime, const std::string& name,
                                                         int64_t version, const std::string& dir,
                                                         const ServableOptions& options,
                                                         Metrics* metrics) {
  std::shared_ptr<Servable> s(new Servable());
  s->name_ = name;
  s->version_ = version;
  s->dir_ = dir;
  s->metrics_ = metrics;
  SavedModelOptions model_options;
  model_options.device = options.device;
  auto session = SavedModelSession::Load(runtime, dir, model_options);
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat("model '", name, "' version ", version, " ('", dir,
                                     "'): ", session.status().message()));
  }
  s->session_ = *std::move(session);
  if (options.warmup) {
    absl::Status warm = s->Warmup();
    if (!warm.ok()) {
      return absl::Status(warm.code(), absl::StrCat("model '", name, "' version ", version,
                                                    ": warm-up failed: ", warm.message()));
    }
  }
  if (options.batching.enabled) {
    Servable* self = s.get();
    s->batcher_ = std::make_unique<Batcher>(
        name, options.batching,
        [self](const std::string& sig, const std::map<std::string, Tensor>& inputs,
               const std::vector<std::string>& filter, absl::Time deadline) {
          return self->RunDirect(sig, inputs, filter, deadline);
        },
        metrics);
  }
  return s;
}

Servable::~Servable() { batcher_.reset(); }

absl::Status Servable::Warmup() {
  for (const auto& [key, sig] : model().signatures()) {
    // Signatures over serialized tf.Examples (classify, regress) cannot run
    // on empty strings; they warm up on their first request.
    bool examples = false;
    std::map<std::string, Tensor> inputs;
    for (const auto& [in, spec] : sig.inputs) {
      if (spec.dtype == DataType::kString) examples = true;
      auto t = WarmupTensor(spec);
      if (!t.ok()) return t.status();
      inputs[in] = *std::move(t);
    }
    if (examples) continue;
    auto out = RunDirect(key, inputs, {}, absl::Now() + absl::Seconds(300));
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("signature '", key, "': ", out.status().message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const Signature*> Servable::FindSignature(const std::string& key) const {
  const std::string& k = key.empty() ? std::string("serving_default") : key;
  const auto& sigs = model().signatures();
  auto it = sigs.find(k);
  if (it != sigs.end()) return &it->second;
  // A model with a single signature serves it by default.
  if (key.empty() && sigs.size() == 1) return &sigs.begin()->second;
  std::vector<std::string> keys;
  for (const auto& [name, s] : sigs) keys.push_back("'" + name + "'");
  return absl::NotFoundError(absl::StrCat("model '", name_, "' version ", version_,
                                          " has no signature '", k,
                                          "'; its signatures: ", absl::StrJoin(keys, ", ")));
}

absl::Status Servable::Validate(const Signature& sig, const RunRequest& request) const {
  for (const auto& [name, t] : request.inputs) {
    auto it = sig.inputs.find(name);
    if (it == sig.inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown input '", name, "': signature '",
                                                     sig.key, "' of model '", name_,
                                                     "' takes ", Keys(sig.inputs)));
    }
    const SignatureTensor& spec = it->second;
    if (t.dtype() != spec.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' has dtype ", DataTypeName(t.dtype()), "; signature '", sig.key,
          "' of model '", name_, "' expects ", DataTypeName(spec.dtype)));
    }
    if (!spec.shape.rank_known()) continue;
    bool fits = t.dims() == spec.shape.rank();
    for (int64_t d = 0; fits && d < t.dims(); ++d) {
      fits = spec.shape.dim(d) < 0 || spec.shape.dim(d) == t.shape()[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' has shape ", ShapeString(t.shape()), "; signature '", sig.key,
          "' of model '", name_, "' expects ", spec.shape.ToString(), " (? = any size)"));
    }
  }
  for (const auto& [name, spec] : sig.inputs) {
    if (!request.inputs.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("missing input '", name, "': signature '",
                                                     sig.key, "' of model '", name_,
                                                     "' takes ", Keys(sig.inputs)));
    }
  }
  for (const auto& name : request.output_filter) {
    if (!sig.outputs.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown output '", name, "': signature '",
                                                     sig.key, "' of model '", name_,
                                                     "' gives ", Keys(sig.outputs)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, Tensor>> Servable::Run(const RunRequest& request) {
  auto sig = FindSignature(request.signature);
  if (!sig.ok()) return sig.status();
  absl::Status valid = Validate(**sig, request);
  if (!valid.ok()) return valid;
  in_flight_ += 1;
  struct Done {
    std::atomic<int64_t>& n;
    ~Done() { n -= 1; }
  } done{in_flight_};
  if (batcher_) {
    return batcher_->Run((*sig)->key, request.inputs, request.output_filter, request.deadline);
  }
  return RunDirect((*sig)->key, request.inputs, request.output_filter, request.deadline);
}

absl::StatusOr<std::map<std::string, Tensor>> Servable::RunDirect(
    const std::string& signature, const std::map<std::string, Tensor>& inputs,
    const std::vector<std::string>& output_filter, absl::Time deadline) {
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat("model '", name_, "': the request's deadline passed before it ran"));
  }
  ScopedRunDeadline scoped(deadline);
  absl::StatusOr<std::map<std::string, Tensor>> out = session_->Run(signature, inputs, output_filter);
  if (!out.ok() && scoped.passed()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "model '", name_, "' version ", version_, ": the run passed the request's deadline and was stopped"));
  }
  return out;
}

}  // namespace plexus::serve
