// The copy-engine all-reduce's layout (distributed/peer_layout.h): which elements each rank
// reduces, and where flags, buffers and scratch sit in each rank's allocation. A wrong offset
// here is a copy into another buffer of a peer's memory, so the properties are checked over
// many shapes, not one.
#include "distributed/peer_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace gpuscope::workloads {
namespace {

TEST(PeerLayout, TheRanksChunksCoverABufferOnceInRankOrder) {
  for (const int ranks : {1, 2, 3, 4, 8}) {
    for (const int64_t elements : {0, 1, 63, 64, 65, 1000, 4096, 6'553'600, 6'553'601}) {
      int64_t next = 0;
      for (int k = 0; k < ranks; ++k) {
        const ChunkRange c = peer_chunk(elements, ranks, k);
        EXPECT_EQ(c.begin, next) << elements << " over " << ranks << ", rank " << k;
        EXPECT_GE(c.count, 0);
        EXPECT_LE(c.count, peer_chunk_capacity(elements, ranks));
        if (c.count > 0) {
          EXPECT_EQ(c.begin % kPeerChunkAlignment, 0);
        }
        next = c.begin + c.count;
      }
      EXPECT_EQ(next, elements) << elements << " over " << ranks;
    }
  }
}

TEST(PeerLayout, ChunksAreEvenWhereTheAlignmentAllows) {
  EXPECT_EQ(peer_chunk(6'553'600, 2, 0).count, 3'276'800);
  EXPECT_EQ(peer_chunk(6'553'600, 2, 1).count, 3'276'800);
  // 100 elements over 2: a first chunk of 64 (aligned), the rest to the second.
  EXPECT_EQ(peer_chunk(100, 2, 0).count, 64);
  EXPECT_EQ(peer_chunk(100, 2, 1).count, 36);
  // Fewer elements than one aligned chunk: the last ranks get none.
  EXPECT_EQ(peer_chunk(10, 4, 0).count, 10);
  EXPECT_EQ(peer_chunk(10, 4, 3).count, 0);
}

TEST(PeerLayout, EachSenderHasItsOwnScratchSlotAtEveryReceiver) {
  for (const int ranks : {2, 3, 5}) {
    for (int receiver = 0; receiver < ranks; ++receiver) {
      std::set<int> slots;
      for (int sender = 0; sender < ranks; ++sender) {
        if (sender == receiver) continue;
        const int slot = peer_scratch_slot(receiver, sender);
        EXPECT_GE(slot, 0);
        EXPECT_LT(slot, ranks - 1);
        slots.insert(slot);
      }
      EXPECT_EQ(slots.size(), static_cast<size_t>(ranks - 1));
    }
  }
}

TEST(PeerLayout, FlagsBuffersAndScratchDoNotOverlapAndAreAligned) {
  // The last two only gathered (a sharded optimizer's parameters): no scratch.
  const std::vector<PeerBufferSpec> buffers = {{6'553'600, 4}, {100, 4}, {0, 4},
                                               {3'000'001, 2}, {1, 8},   {4'000'000, 4, false},
                                               {70, 2, false}};
  for (const int ranks : {1, 2, 3, 4}) {
    const PeerLayout layout = make_peer_layout(buffers, ranks);
    std::vector<std::pair<int64_t, int64_t>> spans;  // [begin, end) in bytes
    std::set<int64_t> flags;
    for (size_t i = 0; i < buffers.size(); ++i) {
      for (int from = 0; from < ranks; ++from) {
        for (const PeerPhase phase : {PeerPhase::reduce_scatter, PeerPhase::all_gather}) {
          const int64_t flag = layout.flag_offset(phase, i, from);
          EXPECT_EQ(flag % 4, 0);
          flags.insert(flag);
          spans.emplace_back(flag, flag + 4);
        }
      }
      const int64_t size = buffers[i].element_size;
      EXPECT_EQ(layout.buffer_offsets[i] % kPeerAlignmentBytes, 0);
      EXPECT_EQ(layout.scratch_offsets[i] % kPeerAlignmentBytes, 0);
      spans.emplace_back(layout.buffer_offsets[i],
                         layout.buffer_offsets[i] + buffers[i].elements * size);
      // Every other rank's chunk of buffer i fits in its slot.
      for (int k = 0; k < ranks; ++k) {
        EXPECT_LE(peer_chunk(buffers[i].elements, ranks, k).count, layout.chunk_capacity[i]);
      }
      if (buffers[i].reduced) {
        spans.emplace_back(
            layout.scratch_offsets[i],
            layout.scratch_offsets[i] + (ranks - 1) * layout.chunk_capacity[i] * size);
      }
    }
    EXPECT_EQ(flags.size(), 2 * buffers.size() * static_cast<size_t>(ranks)) << "distinct flags";
    spans.emplace_back(layout.one_offset, layout.one_offset + 4);
    std::sort(spans.begin(), spans.end());
    for (size_t s = 0; s + 1 < spans.size(); ++s) {
      EXPECT_LE(spans[s].second, spans[s + 1].first) << ranks << " ranks, span " << s;
    }
    EXPECT_LE(spans.back().second, layout.bytes);
  }
}

TEST(PeerLayout, AGatheredOnlyBufferTakesNoScratch) {
  const PeerLayout reduced = make_peer_layout({{1'000'000, 4}, {1'000'000, 4}}, 4);
  const PeerLayout gathered = make_peer_layout({{1'000'000, 4}, {1'000'000, 4, false}}, 4);
  // Three slots of a quarter of the buffer each, 256-byte rounded.
  EXPECT_EQ(reduced.bytes - gathered.bytes, 3 * reduced.chunk_capacity[1] * 4);
  EXPECT_EQ(gathered.scratch_offsets[1], gathered.bytes);
}

TEST(PeerLayout, TheCopyEnginesNeedOneHostAndPeerAccessToEveryOtherGpu) {
  const std::vector<PeerPlace> one_host = {
      {"node1", "0000:18:00.0"}, {"node1", "0000:2a:00.0"}, {"node1", "0000:3a:00.0"}};
  const auto all = [](const std::string&) { return true; };
  for (int me = 0; me < 3; ++me) EXPECT_EQ(peer_obstacle(one_host, me, all), "") << me;

  // Two hosts: no rank can map the other host's memory.
  const std::vector<PeerPlace> two_hosts = {{"node1", "0000:18:00.0"}, {"node2", "0000:18:00.0"}};
  EXPECT_EQ(peer_obstacle(two_hosts, 0, all), "rank 1 is on another host (node2)");
  EXPECT_EQ(peer_obstacle(two_hosts, 1, all), "rank 0 is on another host (node1)");

  // One GPU without peer access to rank 2's (a PCIe switch without P2P, or a GPU this process
  // does not see): that rank says why.
  const auto not_3a = [](const std::string& bus) { return bus != "0000:3a:00.0"; };
  EXPECT_EQ(peer_obstacle(one_host, 0, not_3a),
            "rank 0's GPU has no peer access to rank 2's (0000:3a:00.0)");
  EXPECT_EQ(peer_obstacle(one_host, 2, not_3a), "") << "its own GPU is not asked about";
}

}  // namespace
}  // namespace gpuscope::workloads
