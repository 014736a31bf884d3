#include "model_manager.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "log.h"
#include "metrics.h"
#include "tensorflow_serving/config/model_server_config.pb.h"

namespace plexus::serve {
namespace fs = std::filesystem;

void LogLine(const std::string& message) {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                                   absl::UTCTimeZone()),
                                  " plexus-serve: ", message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

namespace {

// Collects a config file's parse errors for the message.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    absl::StrAppend(&errors, errors.empty() ? "" : "; ", "line ", line + 1, " column ",
                    column + 1, ": ", message);
  }
  void AddWarning(int line, int column, const std::string& message) override {
    LogLine(absl::StrCat("model config: line ", line + 1, ": ", message));
  }
  std::string errors;
};

// What identifies the contents of a version directory, so a version that
// failed to load is tried again only once its files change.
std::string Fingerprint(const fs::path& dir) {
  std::string out;
  for (const char* f : {"saved_model.pb", "saved_model.pbtxt", "variables/variables.index"}) {
    struct stat st;
    if (::stat((dir / f).c_str(), &st) == 0) {
      absl::StrAppend(&out, f, ":", st.st_size, ":", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ";");
    }
  }
  return out;
}

// The version directories under `base`: positive integer names holding a
// saved_model.pb or .pbtxt. Directories still being written under another
// name (a temporary one renamed into place when complete) are not versions.
std::map<int64_t, fs::path> ScanVersions(const std::string& base, std::string* error) {
  std::map<int64_t, fs::path> found;
  std::error_code ec;
  fs::directory_iterator it(base, ec);
  if (ec) {
    *error = absl::StrCat("cannot list the base path '", base, "': ", ec.message());
    return found;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    int64_t v = 0;
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit) ||
        !absl::SimpleAtoi(name, &v) || v <= 0) {
      continue;
    }
    if (fs::exists(it->path() / "saved_model.pb") || fs::exists(it->path() / "saved_model.pbtxt")) {
      found[v] = it->path();
    }
  }
  return found;
}

std::set<int64_t> Wanted(const VersionPolicy& policy, const std::set<int64_t>& available) {
  std::set<int64_t> out;
  switch (policy.kind) {
    case VersionPolicy::kAll:
      return available;
    case VersionPolicy::kSpecific:
      for (int64_t v : policy.versions) {
        if (available.count(v)) out.insert(v);
      }
      return out;
    case VersionPolicy::kLatest: {
      int64_t n = std::max<int64_t>(1, policy.num_versions);
      for (auto it = available.rbegin(); it != available.rend() && n > 0; ++it, --n) out.insert(*it);
      return out;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ModelConfig>> ReadModelConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read the model config file '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  tensorflow::serving::ModelServerConfig config;
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  parser.AllowUnknownField(true);  // TensorFlow Serving fields plexus-serve does not read
  parser.SetRecursionLimit(100);   // deep nesting would overflow the stack
  if (!parser.ParseFromString(text.str(), &config)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model config file '", path, "': ", errors.errors));
  }
  fs::path dir = fs::path(path).parent_path();
  std::vector<ModelConfig> out;
  std::set<std::string> names;
  for (const auto& c : config.model_config_list().config()) {
    ModelConfig m;
    m.name = c.name();
    if (m.name.empty() || c.base_path().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model config file '", path, "': every config needs a name and a base_path"));
    }
    if (!names.insert(m.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("model config file '", path, "': model '", m.name, "' is listed twice"));
    }
    if (!c.model_platform().empty() && c.model_platform() != "tensorflow") {
      return absl::InvalidArgumentError(absl::StrCat(
          "model config file '", path, "': model '", m.name, "' has model_platform '",
          c.model_platform(), "'; plexus-serve serves 'tensorflow' SavedModels"));
    }
    fs::path base(c.base_path());
    m.base_path = base.is_absolute() ? base.string() : (dir / base).lexically_normal().string();
    const auto& p = c.model_version_policy();
    if (p.has_all()) {
      m.policy.kind = VersionPolicy::kAll;
    } else if (p.has_specific()) {
      m.policy.kind = VersionPolicy::kSpecific;
      m.policy.versions.insert(p.specific().versions().begin(), p.specific().versions().end());
    } else if (p.has_latest() && p.latest().num_versions() > 0) {
      m.policy.num_versions = p.latest().num_versions();
    }
    for (const auto& [label, v] : c.version_labels()) m.labels[label] = v;
    out.push_back(std::move(m));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model config file '", path, "' names no model (model_config_list { config { ... } })"));
  }
  return out;
}

ModelManager::ModelManager(Runtime* runtime, ServableOptions options, Metrics* metrics,
                           absl::Duration poll_interval)
    : runtime_(runtime), options_(std::move(options)), metrics_(metrics), poll_interval_(poll_interval) {}

ModelManager::~ModelManager() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

absl::Status ModelManager::SetModels(std::vector<ModelConfig> models) {
  std::lock_guard<std::mutex> load(load_mu_);
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, Model> next;
    for (auto& c : models) {
      names.push_back(c.name);
      auto it = models_.find(c.name);
      Model m;
      if (it != models_.end() && it->second.config.base_path == c.base_path) m = std::move(it->second);
      m.config = std::move(c);
      next[m.config.name] = std::move(m);
    }
    models_.swap(next);  // models no longer listed are dropped with `next`
  }
  for (const auto& name : names) Reconcile(name);
  // A base path that is not there is a mistake worth stopping for; one with
  // no version yet is waited on, as TensorFlow Serving does (not ready, 503).
  std::vector<std::string> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, m] : models_) {
      std::error_code ec;
      if (!fs::is_directory(m.config.base_path, ec)) {
        missing.push_back(absl::StrCat("model '", name, "': base path '", m.config.base_path,
                                       "' is not a directory"));
      } else if (m.serving.empty()) {
        LogLine(absl::StrCat("model '", name, "' has no version serving yet (base path '",
                             m.config.base_path, "'); waiting for one"));
      }
    }
  }
  if (!missing.empty()) return absl::NotFoundError(absl::StrJoin(missing, "; "));
  return absl::OkStatus();
}

void ModelManager::Reconcile(const std::string& name) {
  ModelConfig config;
  std::set<int64_t> serving;
  std::set<std::string> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) return;
    config = it->second.config;
    for (const auto& [v, s] : it->second.serving) serving.insert(v);
    failed = it->second.failed_dirs;
  }
  std::string error;
  auto found = ScanVersions(config.base_path, &error);
  if (!error.empty()) {
    LogLine(absl::StrCat("model '", name, "': ", error));
  }
  // Versions that failed and have not changed since are not candidates.
  std::set<int64_t> candidates;
  std::map<int64_t, std::string> prints;
  for (const auto& [v, dir] : found) {
    prints[v] = dir.string() + "|" + Fingerprint(dir);
    if (serving.count(v) || !failed.count(prints[v])) candidates.insert(v);
  }
  std::set<int64_t> wanted = Wanted(config.policy, candidates);
  for (int64_t v : wanted) {
    if (serving.count(v)) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      models_[name].states[v] = VersionStatus{v, "LOADING", absl::OkStatus()};
    }
    absl::Time start = absl::Now();
    auto loaded = Servable::Load(runtime_, name, v, found[v].string(), options_, metrics_);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) return;  // the model was removed meanwhile
    if (!loaded.ok()) {
      LogLine(absl::StrCat("failed to load model '", name, "' version ", v, ": ",
                           loaded.status().message(), serving.empty() ? "" : " (the versions already loaded keep serving)"));
      it->second.states[v] = VersionStatus{v, "END", loaded.status()};
      it->second.failed_dirs.insert(prints[v]);
      if (metrics_) metrics_->LoadFailed(name);
      continue;
    }
    it->second.serving[v] = *std::move(loaded);
    it->second.states[v] = VersionStatus{v, "AVAILABLE", absl::OkStatus()};
    serving.insert(v);
    LogLine(absl::StrCat("model '", name, "' version ", v, " is serving (loaded and warmed up from '",
                         found[v].string(), "' in ", absl::FormatDuration(absl::Now() - start), ")"));
  }
  // Versions the policy no longer wants leave once something wanted serves
  // (or their directory is gone); requests in flight keep them alive.
  bool wanted_serving = false;
  for (int64_t v : wanted) wanted_serving |= serving.count(v) > 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return;
  for (auto s = it->second.serving.begin(); s != it->second.serving.end();) {
    int64_t v = s->first;
    bool gone = !found.count(v);
    if (!wanted.count(v) && (wanted_serving || gone)) {
      unloading_.push_back({name, v, s->second});
      it->second.states[v] = VersionStatus{v, "UNLOADING", absl::OkStatus()};
      LogLine(absl::StrCat("model '", name, "' version ", v, " is no longer served",
                           gone ? " (its directory is gone)" : "",
                           "; it unloads when its requests finish"));
      s = it->second.serving.erase(s);
    } else {
      ++s;
    }
  }
}

void ModelManager::StartPolling() {
  poller_ = std::thread([this] { PollLoop(); });
}

void ModelManager::PollLoop() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(poll_interval_), [&] { return stopping_; })) {
    lock.unlock();
    PollOnce();
    lock.lock();
  }
}

void ModelManager::PollOnce() {
  std::lock_guard<std::mutex> load(load_mu_);
  for (const auto& name : ModelNames()) Reconcile(name);
  // Versions that were unloading and have drained.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto u = unloading_.begin(); u != unloading_.end();) {
    if (u->servable.expired()) {
      auto m = models_.find(u->model);
      if (m != models_.end()) m->second.states[u->version].state = "END";
      LogLine(absl::StrCat("model '", u->model, "' version ", u->version, " is unloaded"));
      u = unloading_.erase(u);
    } else {
      ++u;
    }
  }
}

absl::StatusOr<std::shared_ptr<Servable>> ModelManager::Find(const std::string& name,
                                                             std::optional<int64_t> version,
                                                             const std::string& label) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, m] : models_) names.push_back("'" + n + "'");
    return absl::NotFoundError(absl::StrCat("no model named '", name, "'; serving: ",
                                            names.empty() ? "none" : absl::StrJoin(names, ", ")));
  }
  const Model& m = it->second;
  std::vector<std::string> have;
  for (const auto& [v, s] : m.serving) have.push_back(absl::StrCat(v));
  std::string serving = have.empty() ? "none" : absl::StrJoin(have, ", ");
  if (!label.empty()) {
    auto l = m.config.labels.find(label);
    if (l == m.config.labels.end()) {
      return absl::NotFoundError(absl::StrCat("model '", name, "' has no version label '", label, "'"));
    }
    version = l->second;
  }
  if (version) {
    auto s = m.serving.find(*version);
    if (s == m.serving.end()) {
      return absl::NotFoundError(absl::StrCat("model '", name, "' has no version ", *version,
                                              " serving; versions serving: ", serving));
    }
    return s->second;
  }
  if (m.serving.empty()) {
    return absl::UnavailableError(absl::StrCat("model '", name, "' has no version serving yet"));
  }
  return m.serving.rbegin()->second;
}

std::vector<std::string> ModelManager::ModelNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [n, m] : models_) names.push_back(n);
  return names;
}

bool ModelManager::Has(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return models_.count(name) > 0;
}

absl::StatusOr<std::vector<VersionStatus>> ModelManager::Status(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    return absl::NotFoundError(absl::StrCat("no model named '", name, "'"));
  }
  std::vector<VersionStatus> out;
  for (const auto& [v, st] : it->second.states) out.push_back(st);
  std::reverse(out.begin(), out.end());  // newest first, as TensorFlow Serving lists them
  return out;
}

std::map<std::string, std::vector<int64_t>> ModelManager::Serving() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [n, m] : models_) {
    for (const auto& [v, s] : m.serving) out[n].push_back(v);
  }
  return out;
}

bool ModelManager::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (models_.empty()) return false;
  for (const auto& [n, m] : models_) {
    if (m.serving.empty()) return false;
  }
  return true;
}

}  // namespace plexus::serve
