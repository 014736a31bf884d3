// Server-side batching of one version of a model.
//
// Requests for the same signature whose inputs agree in dtype and in every
// dimension but the first are queued together; a batch thread takes the
// oldest request, waits up to batch_timeout for more rows (up to
// max_batch_size), joins the inputs along dimension 0, runs once and splits
// every output back by rows. A request larger than max_batch_size, or whose
// inputs do not share their first dimension, runs alone.
//
// The queue holds at most max_enqueued_batches * max_batch_size rows; a
// request beyond that is refused at once with RESOURCE_EXHAUSTED (HTTP 429)
// rather than left to time out. A request whose deadline passes while queued
// gets DEADLINE_EXCEEDED and is never run.
#ifndef PLEXUS_SERVE_BATCHER_H_
#define PLEXUS_SERVE_BATCHER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plexus/tensor.h"
#include "servable.h"

namespace plexus::serve {

class Batcher {
 public:
  using Outputs = std::map<std::string, Tensor>;
  using RunFn = std::function<absl::StatusOr<Outputs>(
      const std::string& signature, const std::map<std::string, Tensor>& inputs,
      const std::vector<std::string>& output_filter, absl::Time deadline)>;

  Batcher(std::string model, BatchingOptions options, RunFn run, Metrics* metrics);
  // Stops the batch threads; requests still queued get UNAVAILABLE.
  ~Batcher();

  absl::StatusOr<Outputs> Run(const std::string& signature,
                              const std::map<std::string, Tensor>& inputs,
                              const std::vector<std::string>& output_filter, absl::Time deadline);

 private:
  struct Task;
  void Loop();
  std::vector<std::shared_ptr<Task>> TakeBatch(std::unique_lock<std::mutex>& lock);
  void RunBatch(const std::vector<std::shared_ptr<Task>>& batch);
  // Rows [begin, begin + rows) of every output of a run of `total` rows.
  absl::StatusOr<Outputs> SplitRows(const Outputs& outputs, int64_t begin, int64_t rows,
                                    int64_t total) const;

  std::string model_;
  BatchingOptions options_;
  RunFn run_;
  Metrics* metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  int64_t queued_rows_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_BATCHER_H_
