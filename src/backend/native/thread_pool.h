// A fixed pool of std::threads for the native backend. One parallel_for at a time: the caller
// and the workers take chunks of the range from a shared counter (a late or preempted worker
// delays nothing: the others take its chunks), and after a job every thread spins for a short
// while before it sleeps, so back-to-back dispatches (a jitted decode step's matvecs) start
// without a futex wake-up. docs/ARCHITECTURE.md, "Native thread pool".
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::native {

class ThreadPool {
 public:
  // threads: total workers including the caller; 0 means $KILN_NUM_THREADS, else
  // std::thread::hardware_concurrency(). spin_us: how long an idle thread polls before it
  // sleeps; negative means $KILN_NATIVE_SPIN_US, else kDefaultSpinUs.
  explicit ThreadPool(int threads = 0, int spin_us = -1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // A futex wake-up plus the woken thread's scheduling took 20-60 us per dispatch on the
  // 2-core dev VM, as long as a decode step's matvec chunk; a decode step dispatches a split
  // kernel every ~0.1 ms, so a few hundred microseconds of polling covers the gaps.
  static constexpr int kDefaultSpinUs = 300;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn(begin, end) over [0, n) in contiguous chunks (about kChunksPerThread per thread,
  // none empty) and returns when every chunk is done. The first exception thrown by any
  // chunk is rethrown here.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  static constexpr int kChunksPerThread = 4;
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunks = 0;
    std::atomic<int64_t> next{0};
  };
  void worker();
  void take_chunks(Job& job);
  // Polls ready() for spin_us_, then sleeps on cv_ until it holds (the wakers notify only
  // while sleepers_ says someone sleeps).
  template <class Ready>
  void await(const Ready& ready);
  void wake_sleepers();

  std::vector<std::thread> workers_;
  std::chrono::microseconds spin_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_;
  Job* job_ = nullptr;  // the running job; null once the caller has taken its last chunk
  std::atomic<uint64_t> generation_{0};  // bumped per job and at shutdown
  std::atomic<int> active_{0};    // workers inside the current job
  std::atomic<int> sleepers_{0};  // threads waiting on cv_
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;  // under mu_
};

int default_thread_count();

}  // namespace kiln::native
