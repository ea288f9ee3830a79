// The native backend's thread pool: one generation counter wakes every worker, each takes
// its fixed chunk of the range, and the last one to finish wakes the caller.
#include "backend/native/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace kiln::native {

int default_thread_count() {
  if (const char* v = std::getenv("KILN_NUM_THREADS"); v && *v) {
    int n = std::atoi(v);
    if (n >= 1) return n;
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

ThreadPool::ThreadPool(int threads) {
  int n = threads > 0 ? threads : default_thread_count();
  for (int i = 1; i < n; i++) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
void chunk(int64_t n, int chunks, int id, int64_t* b, int64_t* e) {
  *b = n * id / chunks;
  *e = n * (id + 1) / chunks;
}
}  // namespace

void ThreadPool::worker(int id) {
  int64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n;
    int chunks;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = n_;
      chunks = chunks_;
    }
    if (id < chunks) {
      int64_t b, e;
      chunk(n, chunks, id, &b, &e);
      try {
        if (b < e) (*job)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int chunks = int(std::min<int64_t>(size(), n));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run(run_mu_);  // one parallel_for at a time
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    n_ = n;
    chunks_ = chunks;
    pending_ = int(workers_.size());
    error_ = nullptr;
    generation_++;
  }
  start_cv_.notify_all();
  int64_t b, e;
  chunk(n, chunks, 0, &b, &e);
  std::exception_ptr mine;
  try {
    fn(b, e);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace kiln::native
