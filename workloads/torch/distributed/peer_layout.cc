#include "distributed/peer_layout.h"

#include <algorithm>

namespace gpuscope::workloads {
namespace {

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

int64_t PeerLayout::flag_offset(PeerPhase phase, size_t buffer, int from) const {
  const auto per_phase = static_cast<int64_t>(buffers.size()) * ranks;
  const int64_t index =
      static_cast<int64_t>(phase) * per_phase + static_cast<int64_t>(buffer) * ranks + from;
  return flags_offset + index * static_cast<int64_t>(sizeof(uint32_t));
}

PeerLayout make_peer_layout(const std::vector<PeerBufferSpec>& buffers, int ranks) {
  PeerLayout layout;
  layout.ranks = ranks;
  layout.buffers = buffers;
  const auto flags = 2 * static_cast<int64_t>(buffers.size()) * ranks;
  layout.flags_offset = 0;
  layout.one_offset = flags * static_cast<int64_t>(sizeof(uint32_t));
  int64_t at =
      round_up(layout.one_offset + static_cast<int64_t>(sizeof(uint32_t)), kPeerAlignmentBytes);
  for (const PeerBufferSpec& b : buffers) {
    layout.buffer_offsets.push_back(at);
    at = round_up(at + b.elements * b.element_size, kPeerAlignmentBytes);
    const int64_t capacity = peer_chunk_capacity(b.elements, ranks);
    layout.chunk_capacity.push_back(capacity);
    layout.scratch_offsets.push_back(at);
    if (b.reduced) at = round_up(at + (ranks - 1) * capacity * b.element_size, kPeerAlignmentBytes);
  }
  layout.bytes = at;
  return layout;
}

int64_t peer_chunk_capacity(int64_t elements, int ranks) {
  return round_up((elements + ranks - 1) / ranks, kPeerChunkAlignment);
}

ChunkRange peer_chunk(int64_t elements, int ranks, int k) {
  const int64_t capacity = peer_chunk_capacity(elements, ranks);
  const int64_t begin = std::min(elements, k * capacity);
  const int64_t end = std::min(elements, begin + capacity);
  return ChunkRange{begin, end - begin};
}

int peer_scratch_slot(int receiver, int sender) {
  return sender < receiver ? sender : sender - 1;
}

std::string peer_obstacle(const std::vector<PeerPlace>& ranks, int me, const CanMapPeer& can_map) {
  const PeerPlace& mine = ranks.at(static_cast<size_t>(me));
  for (size_t j = 0; j < ranks.size(); ++j) {
    if (static_cast<int>(j) == me) continue;
    if (ranks[j].host != mine.host) {
      return "rank " + std::to_string(j) + " is on another host (" + ranks[j].host + ")";
    }
    if (!can_map(ranks[j].pci_bus_id)) {
      return "rank " + std::to_string(me) + "'s GPU has no peer access to rank " +
             std::to_string(j) + "'s (" + ranks[j].pci_bus_id + ")";
    }
  }
  return "";
}

}  // namespace gpuscope::workloads
