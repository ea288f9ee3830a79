// The wasm backend's pthread pool: a generation counter wakes the workers, everyone takes
// chunks from the job's atomic counter, and the caller waits for the workers inside the job.
#include "backend/wasm/wasm_thread_pool.h"

#include <algorithm>
#include <chrono>

namespace kiln::wasm {

namespace {
// Spin iterations before a thread sleeps on a condition variable (about 0.1-0.3 ms): a
// futex wake-up took tens of microseconds under Node on the 2-core dev machine, longer
// than a split 128^3 matmul's chunks, so back-to-back dispatches (a jit program, a
// benchmark loop) find the workers awake. See docs/WASM.md, Threads.
constexpr int kSpin = 200000;
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; i++) workers_.emplace_back([this, i] { worker(i); });
  wait_for_workers_to_start();
}

void ThreadPool::wait_for_workers_to_start() {
  // A starting pthread allocates its TLS block from the shared heap (Emscripten's
  // emscripten_tls_init, before the thread's function runs). Left to happen whenever the
  // worker gets scheduled, that malloc lands between different allocations of the caller on
  // each run, so the heap's layout, and whether a later step finds a free block or must grow
  // the memory, depended on timing (a jitted training loop's heap grew once after warm-up in
  // some runs). Waiting here puts it at the same point every time. Bounded: parallel_for
  // never needs a worker to start (the caller takes every chunk itself), so a worker that
  // cannot start must not hang the dispatch either; it only makes the layout vary again.
  std::unique_lock<std::mutex> lock(mu_);
  started_cv_.wait_for(lock, std::chrono::seconds(2), [&] { return started_ == int(workers_.size()); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::take_chunks(Job& job, int id) {
  for (;;) {
    int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) return;
    int64_t b = c * job.chunk, e = std::min(job.n, b + job.chunk);
    try {
      (*job.fn)(b, e, id);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::worker(int id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_++;
  }
  started_cv_.notify_all();
  uint64_t seen = 0;
  for (;;) {
    Job* job;
    for (int i = 0; i < kSpin && generation_.load(std::memory_order_acquire) == seen; i++) {
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_.fetch_add(1, std::memory_order_relaxed);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      sleeping_.fetch_sub(1, std::memory_order_relaxed);
      if (stop_) return;
      seen = generation_;
      // A job the caller already finished (it cleared job_), or one for fewer threads.
      if (!job_ || id > job_->max_worker) continue;
      job = job_;
      active_++;
    }
    take_chunks(*job, id);
    std::lock_guard<std::mutex> lock(mu_);
    if (--active_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t chunk, int threads, const ChunkFn& fn) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(chunk, 1);
  threads = std::min(threads, size());
  if (threads <= 1 || chunk >= n) {
    fn(0, n, 0);
    return;
  }
  std::lock_guard<std::mutex> run(run_mu_);  // one job at a time
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunk = chunk;
  job.chunks = (n + chunk - 1) / chunk;
  job.max_worker = threads - 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    error_ = nullptr;
    generation_++;
  }
  start_cv_.notify_all();
  take_chunks(job, 0);
  std::exception_ptr err;
  {
    // Every chunk is taken; wait for the workers still running theirs. Workers that wake
    // from now on find job_ cleared and go back to sleep, so `job` can leave the stack.
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = nullptr;
    }
    for (int i = 0; i < kSpin && active_.load(std::memory_order_acquire) != 0; i++) {
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return active_ == 0; });
    err = error_;
    error_ = nullptr;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace kiln::wasm
