// Run deadlines: one watcher thread for the process sets the flag of every
// run whose deadline has passed; the executor checks the flag between nodes
// (RunState::CheckCancelled), as it checks a run's cancel flag.

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "plexus/session.h"

namespace plexus {

namespace {

thread_local const std::atomic<bool>* t_run_deadline = nullptr;
thread_local absl::Time t_run_deadline_time = absl::InfiniteFuture();

class DeadlineWatcher {
 public:
  static DeadlineWatcher& Get() {
    static auto* watcher = new DeadlineWatcher();  // never destroyed: runs may outlive main
    return *watcher;
  }
  // Sets `flag` once `deadline` passes, unless Remove comes first.
  int64_t Add(absl::Time deadline, std::atomic<bool>* flag) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) {
      std::thread([this] { Loop(); }).detach();
      started_ = true;
    }
    int64_t ticket = next_++;
    watched_.emplace(std::make_pair(deadline, ticket), flag);
    cv_.notify_one();
    return ticket;
  }
  void Remove(absl::Time deadline, int64_t ticket) {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.erase(std::make_pair(deadline, ticket));
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (watched_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto first = watched_.begin();
      if (absl::Now() >= first->first.first) {
        first->second->store(true);
        watched_.erase(first);
        continue;
      }
      cv_.wait_until(lock, absl::ToChronoTime(first->first.first));
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<absl::Time, int64_t>, std::atomic<bool>*> watched_;
  int64_t next_ = 0;
  bool started_ = false;
};

}  // namespace

const std::atomic<bool>* CurrentRunDeadlineFlag() { return t_run_deadline; }
absl::Time CurrentRunDeadline() { return t_run_deadline_time; }

ScopedRunDeadline::ScopedRunDeadline(absl::Time deadline)
    : deadline_(deadline), previous_(t_run_deadline), previous_time_(t_run_deadline_time) {
  // An enclosing deadline that comes first stays in force.
  if (deadline == absl::InfiniteFuture() || previous_time_ <= deadline) {
    deadline_ = absl::InfiniteFuture();
    return;
  }
  if (absl::Now() >= deadline) {
    passed_.store(true);
  } else {
    ticket_ = DeadlineWatcher::Get().Add(deadline, &passed_);
  }
  t_run_deadline = &passed_;
  t_run_deadline_time = deadline;
}

ScopedRunDeadline::ScopedRunDeadline(absl::Duration timeout)
    : ScopedRunDeadline(timeout == absl::InfiniteDuration() || timeout <= absl::ZeroDuration()
                            ? absl::InfiniteFuture()
                            : absl::Now() + timeout) {}

ScopedRunDeadline::~ScopedRunDeadline() {
  if (deadline_ == absl::InfiniteFuture()) return;
  if (ticket_ >= 0) DeadlineWatcher::Get().Remove(deadline_, ticket_);
  t_run_deadline = previous_;
  t_run_deadline_time = previous_time_;
}

bool ScopedRunDeadline::passed() const {
  const std::atomic<bool>* flag = deadline_ == absl::InfiniteFuture() ? previous_ : &passed_;
  return flag != nullptr && flag->load();
}

ScopedRunFlags::ScopedRunFlags(const std::atomic<bool>* cancel, const std::atomic<bool>* deadline,
                               absl::Time deadline_time)
    : cancel_(cancel), previous_deadline_(t_run_deadline), previous_time_(t_run_deadline_time) {
  t_run_deadline = deadline;
  t_run_deadline_time = deadline_time;
}
ScopedRunFlags::~ScopedRunFlags() {
  t_run_deadline = previous_deadline_;
  t_run_deadline_time = previous_time_;
}

}  // namespace plexus
