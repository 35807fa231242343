// The loader threads of the host-fed input path (input/host_loader.h) and their queue: every
// batch exactly once, bounded memory, in-order production without workers, errors passed on,
// and shutdown without a hang while workers wait.
#include "input/host_loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "input/bounded_queue.h"

namespace gpuscope::workloads {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<HostSlot> tiny_slot() {
  auto slot = std::make_unique<HostSlot>();
  slot->input = at::zeros({4}, at::kLong);
  slot->target = at::zeros({1}, at::kLong);
  return slot;
}

// Writes the index into the batch, so the consumer can check what it got.
void write_index(int64_t index, HostSlot& slot) {
  slot.input.fill_(index);
  slot.target.fill_(index);
}

TEST(BoundedQueue, PushWaitsForRoomAndCloseDrains) {
  BoundedQueue<int> queue(2);
  EXPECT_TRUE(queue.push(1));
  EXPECT_TRUE(queue.push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] { pushed = queue.push(3); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(pushed.load()) << "push must wait while the queue is full";
  EXPECT_EQ(queue.pop(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  queue.close();
  EXPECT_FALSE(queue.push(4));
  EXPECT_EQ(queue.pop(), 2);
  EXPECT_EQ(queue.pop(), 3);
  EXPECT_EQ(queue.pop(), std::nullopt);
}

TEST(HostLoader, SeveralWorkersProduceEveryBatchExactlyOnce) {
  LoaderOptions options;
  options.workers = 3;
  options.prefetch = 2;
  options.held = 1;
  options.limit = 40;
  HostLoader loader(options, tiny_slot, [](int64_t index, HostSlot& slot) {
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (index % 5)));
    write_index(index, slot);
  });
  EXPECT_EQ(loader.slot_count(), 3u + 2u + 1u);
  std::multiset<int64_t> seen;
  std::set<HostSlot*> slots;
  while (HostSlot* slot = loader.next()) {
    EXPECT_LE(loader.ready_count(), loader.slot_count());
    EXPECT_EQ(slot->input[0].item<int64_t>(), slot->index);
    seen.insert(slot->index);
    slots.insert(slot);
    loader.recycle(slot);
  }
  ASSERT_EQ(seen.size(), 40u);
  for (int64_t i = 0; i < 40; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  EXPECT_LE(slots.size(), loader.slot_count());
  EXPECT_EQ(loader.stats().produced, 40);
}

TEST(HostLoader, NeverProducesIntoSlotsNotRecycled) {
  LoaderOptions options;
  options.workers = 2;
  options.prefetch = 1;
  options.held = 1;
  std::atomic<int64_t> produced{0};
  HostLoader loader(options, tiny_slot, [&](int64_t index, HostSlot& slot) {
    write_index(index, slot);
    ++produced;
  });
  HostSlot* held = loader.next();  // taken and never recycled
  ASSERT_NE(held, nullptr);
  const auto slots = static_cast<int64_t>(loader.slot_count());
  for (int i = 0; i < 500 && produced.load() < slots; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);  // time to (wrongly) produce more
  // Without recycling, only the other slots can be filled: the memory stays bounded.
  EXPECT_EQ(produced.load(), slots);
  EXPECT_EQ(loader.ready_count(), loader.slot_count() - 1);
}

TEST(HostLoader, ZeroWorkersProduceInlineInOrder) {
  LoaderOptions options;
  options.workers = 0;
  options.limit = 5;
  const auto caller = std::this_thread::get_id();
  bool on_caller = true;
  HostLoader loader(options, tiny_slot, [&](int64_t index, HostSlot& slot) {
    on_caller = on_caller && std::this_thread::get_id() == caller;
    write_index(index, slot);
  });
  for (int64_t i = 0; i < 5; ++i) {
    HostSlot* slot = loader.next();
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(slot->index, i);
    loader.recycle(slot);
  }
  EXPECT_EQ(loader.next(), nullptr);
  EXPECT_TRUE(on_caller);
}

TEST(HostLoader, StopsWithoutHangWhileWorkersWaitForRoom) {
  const auto start = std::chrono::steady_clock::now();
  {
    LoaderOptions options;
    options.workers = 4;
    HostLoader loader(options, tiny_slot, write_index);  // endless
    ASSERT_NE(loader.next(), nullptr);
    std::this_thread::sleep_for(20ms);  // the workers fill every slot and wait for room
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

// However the workers interleave (the one with batch 3 may be descheduled while the other makes
// every other batch), the stream never ends cleanly: the error comes out of next() at the latest
// once the batches queued before it are consumed. (An endless stream that had to fail within
// 100 batches failed once on a loaded host.)
TEST(HostLoader, ProducerErrorReachesTheConsumer) {
  LoaderOptions options;
  options.workers = 2;
  options.limit = 50;
  HostLoader loader(options, tiny_slot, [](int64_t index, HostSlot& slot) {
    if (index == 3) throw std::runtime_error("batch 3 is broken");
    write_index(index, slot);
  });
  int consumed = 0;
  try {
    while (HostSlot* slot = loader.next()) {
      ASSERT_NE(slot->index, 3) << "the broken batch was delivered";
      ++consumed;
      loader.recycle(slot);
    }
    FAIL() << "the stream ended without the error after " << consumed << " batches";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "batch 3 is broken");
  }
  EXPECT_LT(consumed, 50);
}

}  // namespace
}  // namespace gpuscope::workloads
