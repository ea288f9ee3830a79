// The native backend's thread pool: a generation counter starts a job, everyone takes chunks
// from the job's counter, and the caller waits for the workers inside the job. Idle threads
// poll before they sleep (thread_pool.h says why). Every wait pairs with its waker by the
// seq_cst order of two atomics: the sleeper counts itself in sleepers_ and then rereads the
// condition; the waker changes the condition and then reads sleepers_, so either the
// sleeper sees the change or the waker sees the sleeper (and notifies under mu_).
#include "backend/native/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kiln::native {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

int spin_us_from_env() {
  const char* v = std::getenv("KILN_NATIVE_SPIN_US");
  return v && *v ? std::max(0, std::atoi(v)) : ThreadPool::kDefaultSpinUs;
}

}  // namespace

int default_thread_count() {
  if (const char* v = std::getenv("KILN_NUM_THREADS"); v && *v) {
    int n = std::atoi(v);
    if (n >= 1) return n;
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

ThreadPool::ThreadPool(int threads, int spin_us) : spin_(spin_us >= 0 ? spin_us : spin_us_from_env()) {
  int n = threads > 0 ? threads : default_thread_count();
  for (int i = 1; i < n; i++) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  wake_sleepers();
  for (auto& t : workers_) t.join();
}

template <class Ready>
void ThreadPool::await(const Ready& ready) {
  if (ready()) return;
  if (spin_.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + spin_;
    // The clock is read once per 64 polls (~2-5 us of pauses), not per poll. After the first
    // 64 polls each one yields too: free when the core has nothing else to run, and on a
    // loaded machine the core goes to the processes waiting for it rather than to polling.
    for (int i = 1;; ++i) {
      cpu_relax();
      if (ready()) return;
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
      if (i > 64) std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  sleepers_.fetch_add(1);
  cv_.wait(lock, ready);
  sleepers_.fetch_sub(1);
}

void ThreadPool::wake_sleepers() {
  if (sleepers_.load() == 0) return;
  { std::lock_guard<std::mutex> lock(mu_); }  // a sleeper past its last check is in wait() now
  cv_.notify_all();
}

void ThreadPool::take_chunks(Job& job) {
  for (;;) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) return;
    try {
      (*job.fn)(job.n * c / job.chunks, job.n * (c + 1) / job.chunks);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::worker() {
  uint64_t seen = 0;
  for (;;) {
    await([&] { return generation_.load() != seen; });
    seen = generation_.load();
    if (stop_.load()) return;
    Job* job;
    {
      // Entering under mu_: the caller clears job_ under it, so a worker that comes late
      // (the caller took every chunk) never touches a job that has left the caller's stack.
      std::lock_guard<std::mutex> lock(mu_);
      if (!job_) continue;
      job = job_;
      active_.fetch_add(1);
    }
    take_chunks(*job);
    if (active_.fetch_sub(1) == 1) wake_sleepers();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run(run_mu_);  // one job at a time
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunks = std::min<int64_t>(n, int64_t(size()) * kChunksPerThread);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    error_ = nullptr;
  }
  generation_.fetch_add(1);
  wake_sleepers();
  take_chunks(job);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = nullptr;
  }
  await([&] { return active_.load() == 0; });
  std::exception_ptr err;
  {
    std::lock_guard<std::mutex> lock(mu_);
    err = error_;
    error_ = nullptr;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace kiln::native
