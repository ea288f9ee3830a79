// Reads that block the caller where a device allows them only at a cost: webgpu in browsers
// reads through a canvas copy that waits for the GPU (js/src/webgpu/sync_read.ts), and has no
// such path in Node.js. A backend offers them by also deriving from BlockingReader, so the
// Backend interface keeps meaning cheap host reads by can_read_sync (what copies, random's
// host argsort and cond's index read ask for). Array::bytes (dataSync) and while_loop's
// predicate read through read_blocking below.
#pragma once
#include <cstdint>

#include "backend/backend.h"

namespace kiln {

struct BlockingReader {
  virtual ~BlockingReader() = default;
  virtual bool can_read_blocking() const = 0;
  virtual void read_blocking(int64_t handle, int64_t offset, int64_t bytes, void* out) = 0;
};

// Whether `be` can read synchronously at all: cheaply (can_read_sync) or by blocking.
inline bool can_read_blocking(const Backend& be) {
  if (be.can_read_sync()) return true;
  auto* r = dynamic_cast<const BlockingReader*>(&be);
  return r && r->can_read_blocking();
}

// A synchronous read; only where can_read_blocking(be).
inline void read_blocking(Backend& be, int64_t handle, int64_t offset, int64_t bytes, void* out) {
  if (be.can_read_sync()) return be.read_sync(handle, offset, bytes, out);
  dynamic_cast<BlockingReader&>(be).read_blocking(handle, offset, bytes, out);
}

}  // namespace kiln
