// Where the copy-engine all-reduce (peer_all_reduce.h) keeps everything in each rank's one
// peer-mapped allocation, and which part of a buffer each rank reduces. Every rank computes the
// same layout from the same buffers, so an offset names the same thing in every rank's
// allocation: a rank writes into a peer's at the offsets of its own. Also the ranks' side of
// --all-reduce auto's choice (peer_obstacle). No CUDA here: all of it is tested on the CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpuscope::workloads {

// Offsets in the allocation are multiples of this many bytes (copies of whole 256-byte lines).
inline constexpr int64_t kPeerAlignmentBytes = 256;
// A chunk starts at a multiple of this many elements of its buffer.
inline constexpr int64_t kPeerChunkAlignment = 64;

struct PeerBufferSpec {
  int64_t elements = 0;
  int64_t element_size = 0;  // bytes
  // Summed over the ranks (a reduce-scatter lands the others' chunks in its scratch); false: only
  // gathered (each rank's chunk copied to the others), no scratch.
  bool reduced = true;
};

// The elements [begin, begin + count) of a buffer.
struct ChunkRange {
  int64_t begin = 0;
  int64_t count = 0;
};

// Flags are uint32 words: a peer copies 1 into its word when its part of a phase has landed,
// the owner waits for 1 and writes 0 back (what lets a captured step replay: the values are
// the same every step).
enum class PeerPhase { reduce_scatter = 0, all_gather = 1 };

struct PeerLayout {
  int ranks = 1;
  int64_t flags_offset = 0;  // uint32 flags [phase][buffer][from rank]
  int64_t one_offset = 0;    // a uint32 that holds 1: the source of every flag copy
  // Buffer i, and where the other ranks' copies of this rank's chunk of it land: ranks - 1
  // slots of chunk_capacity[i] elements (scratch_slot says whose is where; none, and the offset
  // of the next buffer, for a buffer that is not reduced).
  std::vector<int64_t> buffer_offsets;
  std::vector<int64_t> scratch_offsets;
  std::vector<int64_t> chunk_capacity;  // elements
  std::vector<PeerBufferSpec> buffers;
  int64_t bytes = 0;  // the whole allocation

  // Byte offset of the flag that rank `from` sets in this rank's allocation for buffer i.
  int64_t flag_offset(PeerPhase phase, size_t buffer, int from) const;
};

// REQUIRES: ranks >= 1; every buffer has elements >= 0 and element_size > 0.
PeerLayout make_peer_layout(const std::vector<PeerBufferSpec>& buffers, int ranks);

// The part of a buffer of `elements` that rank k reduces: contiguous chunks of `capacity`
// elements (a multiple of kPeerChunkAlignment) in rank order; the last ones may be short or
// empty. REQUIRES: 0 <= k < ranks.
int64_t peer_chunk_capacity(int64_t elements, int ranks);
ChunkRange peer_chunk(int64_t elements, int ranks, int k);

// Which of receiver's ranks - 1 scratch slots holds sender's copy. REQUIRES: sender != receiver.
int peer_scratch_slot(int receiver, int sender);

// What a rank tells the others before --all-reduce auto picks the copy engines: its host and
// its GPU's PCI bus id ("0000:1b:00.0").
struct PeerPlace {
  std::string host;
  std::string pci_bus_id;
};
// Whether rank `me` can take part in the copy-engine all-reduce: every rank on its host, and
// `can_map(bus id)` (this process sees that GPU and has peer access to it) for every other
// rank's GPU. Empty when it can; else why not, for the record.
using CanMapPeer = std::function<bool(const std::string& pci_bus_id)>;
std::string peer_obstacle(const std::vector<PeerPlace>& ranks, int me, const CanMapPeer& can_map);

}  // namespace gpuscope::workloads
