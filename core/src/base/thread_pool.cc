// The pool is Eigen's non-blocking work-stealing pool (the one TensorFlow's
// executor uses), kept in this translation unit so no other core file sees
// Eigen's templates.
#include "base/thread_pool.h"

#include "base/cpu_budget.h"

#define EIGEN_USE_THREADS
#include <cstdlib>

#include <unsupported/Eigen/CXX11/ThreadPool>

namespace plexus {

struct InterOpPool::Impl {
  explicit Impl(int n) : pool(n) {}
  Eigen::ThreadPool pool;
};

InterOpPool::InterOpPool(int num_threads) : impl_(std::make_unique<Impl>(num_threads)) {}
InterOpPool::~InterOpPool() = default;

int InterOpPool::num_threads() const { return impl_->pool.NumThreads(); }
void InterOpPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }
int InterOpPool::CurrentThreadId() const { return impl_->pool.CurrentThreadId(); }

InterOpPool* InterOpPool::Get() {
  static InterOpPool* pool = []() -> InterOpPool* {
    // The CPUs this process may use (affinity and cgroup quota), not the
    // machine's: a container given 2 CPUs of 64 gets a pool of 2.
    int n = UsableCpus();
    if (const char* env = std::getenv("PLEXUS_INTER_OP_THREADS"); env != nullptr && *env != '\0') {
      n = std::atoi(env);
    }
    if (n <= 1) return nullptr;
    // Never destroyed: worker threads must not be joined during static
    // destruction, when plugins may already be unloaded.
    return new InterOpPool(n);
  }();
  return pool;
}

}  // namespace plexus
