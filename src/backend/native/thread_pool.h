// A fixed pool of std::threads that splits a range of work items into contiguous chunks;
// the calling thread takes a chunk too, and returns when every chunk is done.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::native {

class ThreadPool {
 public:
  // threads: total workers including the caller; 0 means $KILN_NUM_THREADS, else
  // std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  // Runs fn(begin, end) over [0, n) split into at most size() chunks. The first exception
  // thrown by any chunk is rethrown here.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker(int id);
  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  int64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

int default_thread_count();

}  // namespace kiln::native
