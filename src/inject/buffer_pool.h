// The activity buffers lent to CUPTI: a fixed number of fixed-size buffers at most, so the
// records a process holds in memory stay bounded however fast they come (beyond the bound CUPTI
// gets no buffer and counts its records as dropped). Filled buffers wait in a queue until the
// session formats them (after the recording window, or sooner when half the pool is waiting),
// as kineto does: the window pays only for CUPTI's own record keeping.
//
// Every buffer handed out is zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: otherwise
// CUPTI zeroes it itself, on the program's thread): new ones by calloc, reused ones in release().
//
// Thread-safe: CUPTI asks for and hands back buffers on its own threads and the program's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuscope::inject {

class BufferPool {
 public:
  struct Filled {
    uint8_t* buffer;
    size_t valid_bytes;
  };

  // REQUIRES: buffer_bytes > 0, max_buffers > 0.
  BufferPool(size_t buffer_bytes, size_t max_buffers, size_t kept_free);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  size_t buffer_bytes() const { return buffer_bytes_; }

  // A buffer for CUPTI, or nullptr when max_buffers are lent or waiting (or memory ran out).
  uint8_t* acquire();
  // CUPTI handed `buffer` back holding `valid_bytes` of records: it waits for take_filled.
  void fill(uint8_t* buffer, size_t valid_bytes);
  // The filled buffers, oldest first; each goes back through release() once read.
  std::vector<Filled> take_filled();
  // A buffer read (or never filled) returns to the pool, zeroed if kept.
  void release(uint8_t* buffer);

  // Half the pool or more is filled and waiting: format now, or CUPTI soon runs dry.
  bool wants_draining() const;
  // Bytes allocated now, and the most ever allocated at once (the bound: max_buffers buffers).
  size_t held_bytes() const;
  size_t peak_held_bytes() const;
  // Requests refused because the pool was exhausted.
  uint64_t refused() const;

 private:
  const size_t buffer_bytes_;
  const size_t max_buffers_;
  const size_t kept_free_;
  mutable std::mutex mutex_;
  std::vector<uint8_t*> free_;
  std::vector<Filled> filled_;
  size_t allocated_ = 0;  // buffers allocated: lent + filled + free
  size_t peak_allocated_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace gpuscope::inject
