#include "batcher.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "metrics.h"

namespace plexus::serve {

struct Batcher::Task {
  std::string key;  // requests with equal keys can share a run
  std::string signature;
  std::map<std::string, Tensor> inputs;
  std::vector<std::string> output_filter;
  int64_t rows = 0;
  absl::Time enqueued;
  absl::Time deadline;
  // Filled by the batch thread.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool abandoned = false;  // the caller gave up (deadline)
  absl::StatusOr<Outputs> result = absl::UnknownError("not run");
};

namespace {

// The rows of a request (the shared first dimension of its inputs), or -1
// when the inputs do not share one, and the key of the requests it may
// join: signature, output filter, and each input's dtype and inner shape.
int64_t RowsAndKey(const std::string& signature, const std::map<std::string, Tensor>& inputs,
                   const std::vector<std::string>& output_filter, std::string* key) {
  int64_t rows = -1;
  *key = absl::StrCat(signature, "|", absl::StrJoin(output_filter, ","));
  for (const auto& [name, t] : inputs) {
    if (t.dims() == 0) return -1;
    if (rows >= 0 && t.shape()[0] != rows) return -1;
    rows = t.shape()[0];
    absl::StrAppend(key, "|", name, ":", static_cast<int>(t.dtype()));
    for (int64_t d = 1; d < t.dims(); ++d) absl::StrAppend(key, ",", t.shape()[d]);
  }
  return rows;
}

// Joins the batch's inputs along dimension 0.
absl::StatusOr<std::map<std::string, Tensor>> Concat(
    const std::vector<const std::map<std::string, Tensor>*>& parts, int64_t total) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, first] : *parts[0]) {
    Shape shape = first.shape();
    shape[0] = total;
    if (first.dtype() == DataType::kString) {
      std::vector<std::string> values;
      for (const auto* p : parts) {
        const auto& s = p->at(name).strings();
        values.insert(values.end(), s.begin(), s.end());
      }
      out[name] = Tensor::FromStrings(shape, std::move(values));
      continue;
    }
    auto joined = Tensor::AllocateHost(first.dtype(), shape);
    if (!joined.ok()) return joined.status();
    char* dst = static_cast<char*>(joined->raw_data());
    for (const auto* p : parts) {
      const Tensor& t = p->at(name);
      std::memcpy(dst, t.raw_data(), t.nbytes());
      dst += t.nbytes();
    }
    out[name] = *std::move(joined);
  }
  return out;
}

// Rows [begin, begin + rows) of `t`.
absl::StatusOr<Tensor> SliceRows(const Tensor& t, int64_t begin, int64_t rows) {
  Shape shape = t.shape();
  int64_t total = shape[0];
  shape[0] = rows;
  if (t.dtype() == DataType::kString) {
    const auto& s = t.strings();
    int64_t per_row = total == 0 ? 0 : static_cast<int64_t>(s.size()) / total;
    return Tensor::FromStrings(shape, std::vector<std::string>(s.begin() + begin * per_row,
                                                               s.begin() + (begin + rows) * per_row));
  }
  auto out = Tensor::AllocateHost(t.dtype(), shape);
  if (!out.ok()) return out.status();
  size_t row_bytes = total == 0 ? 0 : t.nbytes() / total;
  std::memcpy(out->raw_data(), static_cast<const char*>(t.raw_data()) + begin * row_bytes,
              rows * row_bytes);
  return out;
}

}  // namespace

absl::StatusOr<Batcher::Outputs> Batcher::SplitRows(const Outputs& outputs, int64_t begin,
                                                    int64_t rows, int64_t total) const {
  Outputs part;
  for (const auto& [name, value] : outputs) {
    if (value.dims() == 0 || value.shape()[0] != total) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model '", model_, "': output '", name, "' has shape [",
          absl::StrJoin(value.shape(), ","), "] for a batch of ", total,
          " rows; it does not follow the inputs' first dimension, so this model cannot be "
          "batched (serve it without --enable_batching)"));
    }
    auto slice = SliceRows(value, begin, rows);
    if (!slice.ok()) return slice.status();
    part[name] = *std::move(slice);
  }
  return part;
}

Batcher::Batcher(std::string model, BatchingOptions options, RunFn run, Metrics* metrics)
    : model_(std::move(model)), options_(options), run_(std::move(run)), metrics_(metrics) {
  int n = options_.num_batch_threads < 1 ? 1 : options_.num_batch_threads;
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
}

Batcher::~Batcher() {
  std::deque<std::shared_ptr<Task>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(queue_);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto& task : left) {
    std::lock_guard<std::mutex> lock(task->mu);
    task->result = absl::UnavailableError(
        absl::StrCat("model '", model_, "': the version was unloaded before the request ran"));
    task->done = true;
    task->cv.notify_all();
  }
}

absl::StatusOr<Batcher::Outputs> Batcher::Run(const std::string& signature,
                                              const std::map<std::string, Tensor>& inputs,
                                              const std::vector<std::string>& output_filter,
                                              absl::Time deadline) {
  auto task = std::make_shared<Task>();
  task->rows = RowsAndKey(signature, inputs, output_filter, &task->key);
  if (task->rows < 0 || task->rows > options_.max_batch_size || task->rows == 0) {
    return run_(signature, inputs, output_filter, deadline);  // runs alone
  }
  task->signature = signature;
  task->inputs = inputs;
  task->output_filter = output_filter;
  task->enqueued = absl::Now();
  task->deadline = deadline;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t limit = options_.max_enqueued_batches * options_.max_batch_size;
    if (queued_rows_ + task->rows > limit) {
      if (metrics_) metrics_->QueueRejected(model_);
      return absl::ResourceExhaustedError(absl::StrCat(
          "model '", model_, "' is overloaded: its batch queue holds ", queued_rows_,
          " rows and takes at most ", limit, " (max_enqueued_batches ",
          options_.max_enqueued_batches, " x max_batch_size ", options_.max_batch_size,
          "); retry later"));
    }
    // A batch thread needs waking only to start a batch's timer (the queue
    // was empty) or to run a batch that may now be full; a wake-up per
    // request costs more than the model itself for small models.
    wake = queue_.empty() || queued_rows_ + task->rows >= options_.max_batch_size;
    queued_rows_ += task->rows;
    queue_.push_back(task);
  }
  if (wake) cv_.notify_one();
  std::unique_lock<std::mutex> lock(task->mu);
  if (!task->cv.wait_until(lock, absl::ToChronoTime(deadline), [&] { return task->done; })) {
    task->abandoned = true;
    return absl::DeadlineExceededError(absl::StrCat(
        "model '", model_, "': the request's deadline passed while it waited for a batch"));
  }
  return std::move(task->result);
}

std::vector<std::shared_ptr<Batcher::Task>> Batcher::TakeBatch(std::unique_lock<std::mutex>& lock) {
  // Wait for the oldest request's batch to fill or its timeout to pass.
  while (!stopping_ && !queue_.empty()) {
    const auto& first = queue_.front();
    int64_t rows = 0;
    for (const auto& t : queue_) {
      if (t->key == first->key) rows += t->rows;
    }
    absl::Time ready_at = first->enqueued + options_.batch_timeout;
    if (rows >= options_.max_batch_size || absl::Now() >= ready_at) break;
    cv_.wait_until(lock, absl::ToChronoTime(ready_at));
  }
  std::vector<std::shared_ptr<Task>> batch;
  if (stopping_ || queue_.empty()) return batch;
  std::string key = queue_.front()->key;
  int64_t rows = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if ((*it)->key == key && rows + (*it)->rows <= options_.max_batch_size) {
      rows += (*it)->rows;
      queued_rows_ -= (*it)->rows;
      batch.push_back(*it);
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

void Batcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    auto batch = TakeBatch(lock);
    if (batch.empty()) continue;
    if (!queue_.empty()) cv_.notify_one();  // another thread may start the next batch
    lock.unlock();
    RunBatch(batch);
    lock.lock();
  }
}

void Batcher::RunBatch(const std::vector<std::shared_ptr<Task>>& all) {
  // Drop requests whose callers already gave up or whose deadline passed.
  std::vector<std::shared_ptr<Task>> batch;
  absl::Time now = absl::Now();
  for (const auto& t : all) {
    std::lock_guard<std::mutex> lock(t->mu);
    if (t->abandoned) continue;
    if (t->deadline <= now) {
      t->result = absl::DeadlineExceededError(absl::StrCat(
          "model '", model_, "': the request's deadline passed while it waited for a batch"));
      t->done = true;
      t->cv.notify_all();
      continue;
    }
    batch.push_back(t);
  }
  if (batch.empty()) return;
  int64_t total = 0;
  absl::Time deadline = absl::InfinitePast();
  std::vector<const std::map<std::string, Tensor>*> parts;
  for (const auto& t : batch) {
    total += t->rows;
    deadline = std::max(deadline, t->deadline);
    parts.push_back(&t->inputs);
  }
  if (metrics_) metrics_->Batch(model_, total);
  absl::StatusOr<Outputs> outputs = absl::UnknownError("not run");
  if (batch.size() == 1) {
    outputs = run_(batch[0]->signature, batch[0]->inputs, batch[0]->output_filter, deadline);
  } else {
    auto joined = Concat(parts, total);
    outputs = joined.ok() ? run_(batch[0]->signature, *joined, batch[0]->output_filter, deadline)
                          : absl::StatusOr<Outputs>(joined.status());
  }
  int64_t begin = 0;
  for (const auto& t : batch) {
    absl::StatusOr<Outputs> mine = outputs;
    if (outputs.ok() && batch.size() > 1) mine = SplitRows(*outputs, begin, t->rows, total);
    begin += t->rows;
    std::lock_guard<std::mutex> lock(t->mu);
    t->result = std::move(mine);
    t->done = true;
    t->cv.notify_all();
  }
}

}  // namespace plexus::serve
