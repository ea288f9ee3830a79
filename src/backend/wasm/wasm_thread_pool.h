// The wasm backend's pthread pool (threaded builds): the caller and the workers take chunks
// of one dispatch's range from a shared counter, so a slow or late worker delays nothing.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::wasm {

class ThreadPool {
 public:
  // fn(begin, end, worker): worker 0 is the calling thread, 1..size()-1 the pool's.
  using ChunkFn = std::function<void(int64_t, int64_t, int)>;

  // threads: total including the caller (the pool starts threads - 1 pthreads).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn over [0, n) in chunks [c * chunk, min(n, (c + 1) * chunk)), on at most
  // `threads` threads (the caller included), and returns when every chunk is done. The
  // first exception of any chunk is rethrown here.
  void parallel_for(int64_t n, int64_t chunk, int threads, const ChunkFn& fn);
  // Whether some worker is still spinning after its last job (or running one): a dispatch
  // now starts without a futex wake-up. A hint, read without the lock.
  bool awake() const { return sleeping_.load(std::memory_order_relaxed) < int(workers_.size()); }

 private:
  struct Job {
    const ChunkFn* fn = nullptr;
    int64_t n = 0, chunk = 0, chunks = 0;
    int max_worker = 0;  // workers with a larger id sit this job out
    std::atomic<int64_t> next{0};
  };
  void worker(int id);
  // Returns once every worker has started (or after a bound): see the .cpp.
  void wait_for_workers_to_start();
  void take_chunks(Job& job, int id);
  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable start_cv_, done_cv_, started_cv_;
  int started_ = 0;  // workers that have entered worker(), under mu_
  Job* job_ = nullptr;  // the running job, null between jobs
  // Written under mu_; atomic so that spinning threads can read them without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};  // workers inside the current job
  std::atomic<int> sleeping_{0};  // workers waiting on start_cv_ (past their spin)
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace kiln::wasm
