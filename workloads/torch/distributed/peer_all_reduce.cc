#include "distributed/peer_all_reduce.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include "distributed/peer_layout.h"
#include "gpuscope/host.h"

namespace gpuscope::workloads {
namespace {

void check(cudaError_t status, const char* what) {
  TORCH_CHECK(status == cudaSuccess, "--all-reduce copy-engine: ", what, ": ",
              cudaGetErrorString(status));
}

// The two stream memory operations, from the driver through the runtime (no link to libcuda).
struct MemOps {
  PFN_cuStreamWaitValue32_v11070 wait = nullptr;
  PFN_cuStreamWriteValue32_v11070 write = nullptr;
};

const MemOps& mem_ops() {
  static const MemOps ops = [] {
    MemOps o;
    cudaDriverEntryPointQueryResult found{};
    check(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", reinterpret_cast<void**>(&o.wait),
                                           12000, cudaEnableDefault, &found),
          "cuStreamWaitValue32");
    TORCH_CHECK(found == cudaDriverEntryPointSuccess && o.wait != nullptr,
                "--all-reduce copy-engine: the driver has no cuStreamWaitValue32");
    check(
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", reinterpret_cast<void**>(&o.write),
                                         12000, cudaEnableDefault, &found),
        "cuStreamWriteValue32");
    TORCH_CHECK(found == cudaDriverEntryPointSuccess && o.write != nullptr,
                "--all-reduce copy-engine: the driver has no cuStreamWriteValue32");
    return o;
  }();
  return ops;
}

// This rank's allocation: freed when the last tensor over it (a gradient may outlive the
// PeerAllReduce) is gone.
struct Arena {
  void* ptr = nullptr;
  int device = 0;
  ~Arena() {
    if (ptr == nullptr) return;
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    if (const cudaError_t status = cudaFree(ptr); status != cudaSuccess) {
      std::fprintf(stderr, "gpuscope-torch: --all-reduce copy-engine: cudaFree: %s\n",
                   cudaGetErrorString(status));
    }
  }
};

std::string to_hex(const void* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    const auto b = static_cast<const unsigned char*>(bytes)[i];
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

bool from_hex(const std::string& hex, void* bytes, size_t size) {
  if (hex.size() != 2 * size) return false;
  for (size_t i = 0; i < size; ++i) {
    const std::string pair = hex.substr(2 * i, 2);
    char* end = nullptr;
    const long value = std::strtol(pair.c_str(), &end, 16);
    if (end != pair.c_str() + 2) return false;
    static_cast<unsigned char*>(bytes)[i] = static_cast<unsigned char>(value);
  }
  return true;
}

}  // namespace

struct PeerAllReduce::Impl {
  int rank = 0;
  int ranks = 1;
  c10::DeviceIndex device = 0;
  PeerLayout layout;
  std::shared_ptr<Arena> arena;
  std::vector<char*> bases;  // every rank's allocation as mapped here (this rank's own)
  std::vector<at::Tensor> buffers;
  std::vector<at::Tensor> scratch;  // the others' copies of this rank's chunk, slot by slot
  std::optional<c10::cuda::CUDAStream> stream;
  std::vector<at::cuda::CUDAEvent> ready, done;
  bool timed = false;
  bool recording = false;
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> timings;

  char* at(int r, int64_t offset) const { return bases[static_cast<size_t>(r)] + offset; }

  void copy(void* to, const void* from, int64_t bytes) const {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDefault, *stream),
          "cudaMemcpyAsync to a peer");
  }

  // Rank j's flag for this rank's part of the phase, set once the part has landed there (the
  // copy before it on this stream has ended).
  void signal(int j, PeerPhase phase, size_t i) const {
    copy(at(j, layout.flag_offset(phase, i, rank)), at(rank, layout.one_offset), sizeof(uint32_t));
  }

  // Waits on this stream (no SM held) for every other rank's flag of the phase, clearing each
  // for the next step once it is seen.
  void wait_for_peers(PeerPhase phase, size_t i) const {
    const MemOps& ops = mem_ops();
    for (int j = 0; j < ranks; ++j) {
      if (j == rank) continue;
      const auto flag = reinterpret_cast<CUdeviceptr>(at(rank, layout.flag_offset(phase, i, j)));
      const CUresult waited = ops.wait(*stream, flag, 1, CU_STREAM_WAIT_VALUE_EQ);
      const CUresult cleared = waited == CUDA_SUCCESS
                                   ? ops.write(*stream, flag, 0, CU_STREAM_WRITE_VALUE_DEFAULT)
                                   : waited;
      TORCH_CHECK(cleared == CUDA_SUCCESS,
                  "--all-reduce copy-engine: a stream memory operation failed (CUresult ",
                  static_cast<int>(cleared), ")");
    }
  }

  // launch_average(i) is launch(i, i, nullptr); launch_sharded passes its update.
  void launch(size_t i, size_t gathered, const ChunkUpdate* update) {
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device);
    ready[i].record(current);
    ready[i].block(*stream);
    const c10::cuda::CUDAStreamGuard on_stream(*stream);
    std::optional<at::cuda::CUDAEvent> start;
    if (recording && timed) {
      start.emplace(cudaEventDefault);
      start->record(*stream);
    }
    const PeerBufferSpec& spec = layout.buffers[i];
    const int64_t capacity = layout.chunk_capacity[i];
    const int64_t buffer_at = layout.buffer_offsets[i];
    // 1. Every other rank's chunk to it.
    for (int j = 0; j < ranks; ++j) {
      if (j == rank) continue;
      const ChunkRange chunk = peer_chunk(spec.elements, ranks, j);
      const int64_t slot = peer_scratch_slot(j, rank);
      copy(at(j, layout.scratch_offsets[i] + slot * capacity * spec.element_size),
           at(rank, buffer_at + chunk.begin * spec.element_size), chunk.count * spec.element_size);
      signal(j, PeerPhase::reduce_scatter, i);
    }
    // 2. This rank's chunk: the average of every rank's (then, sharded, its update).
    wait_for_peers(PeerPhase::reduce_scatter, i);
    const ChunkRange mine = peer_chunk(spec.elements, ranks, rank);
    if (mine.count > 0) {
      at::Tensor chunk = buffers[i].narrow(0, mine.begin, mine.count);
      if (ranks == 2) {
        chunk.lerp_(scratch[i].narrow(0, 0, mine.count), 0.5);  // one pass: (a + b) / 2
      } else {
        for (int s = 0; s + 1 < ranks; ++s) {
          chunk.add_(scratch[i].narrow(0, s * capacity, mine.count));
        }
        chunk.div_(ranks);
      }
    }
    if (update != nullptr) (*update)(mine);
    // 3. This rank's chunk of the gathered buffer to every other rank, in place in its buffer.
    const int64_t gathered_at = layout.buffer_offsets[gathered];
    const int64_t gathered_size = layout.buffers[gathered].element_size;
    for (int j = 0; j < ranks; ++j) {
      if (j == rank) continue;
      copy(at(j, gathered_at + mine.begin * gathered_size),
           at(rank, gathered_at + mine.begin * gathered_size), mine.count * gathered_size);
      signal(j, PeerPhase::all_gather, i);
    }
    wait_for_peers(PeerPhase::all_gather, i);
    if (start) {
      at::cuda::CUDAEvent end(cudaEventDefault);
      end.record(*stream);
      timings.emplace_back(std::move(*start), std::move(end));
    }
    done[i].record(*stream);
  }

  void map_peers(ProcessGroup& group) {
    cudaIpcMemHandle_t handle{};
    check(cudaIpcGetMemHandle(&handle, arena->ptr), "cudaIpcGetMemHandle");
    const std::vector<std::string> all = group.all_gather_strings(
        "peer_all_reduce", std::to_string(layout.bytes) + " " + to_hex(&handle, sizeof handle));
    bases.assign(static_cast<size_t>(ranks), nullptr);
    bases[static_cast<size_t>(rank)] = static_cast<char*>(arena->ptr);
    for (int j = 0; j < ranks; ++j) {
      std::istringstream fields(all[static_cast<size_t>(j)]);
      std::string hex;
      int64_t bytes = 0;
      fields >> bytes >> hex;
      TORCH_CHECK(bytes == layout.bytes, "--all-reduce copy-engine: rank ", j, "'s buffers take ",
                  bytes, " bytes, rank ", rank, "'s ", layout.bytes,
                  " (the ranks' models or options differ)");
      if (j == rank) continue;
      cudaIpcMemHandle_t peer{};
      TORCH_CHECK(from_hex(hex, &peer, sizeof peer),
                  "--all-reduce copy-engine: a malformed handle from rank ", j);
      void* mapped = nullptr;
      const cudaError_t status =
          cudaIpcOpenMemHandle(&mapped, peer, cudaIpcMemLazyEnablePeerAccess);
      TORCH_CHECK(status == cudaSuccess, "--all-reduce copy-engine: cannot map rank ", j,
                  "'s memory on GPU ", static_cast<int>(device), " (", cudaGetErrorString(status),
                  "): the GPUs need peer access (NVLink or PCIe P2P); use --all-reduce nccl");
      bases[static_cast<size_t>(j)] = static_cast<char*>(mapped);
    }
  }
};

PeerAllReduce::PeerAllReduce(ProcessGroup& group, const std::vector<BufferSpec>& buffers,
                             const at::Device& device, bool timed)
    : impl_(std::make_unique<Impl>()) {
  TORCH_CHECK(device.is_cuda() && device.has_index(),
              "--all-reduce copy-engine needs CUDA devices (use --all-reduce nccl)");
  Impl& impl = *impl_;
  impl.rank = group.rank();
  impl.ranks = group.size();
  impl.device = device.index();
  impl.timed = timed;
  (void)mem_ops();  // fails here, not in the first backward, when the driver lacks them
  std::vector<PeerBufferSpec> specs;
  for (const BufferSpec& b : buffers) {
    specs.push_back(
        PeerBufferSpec{b.elements, static_cast<int64_t>(c10::elementSize(b.dtype)), b.reduced});
  }
  impl.layout = make_peer_layout(specs, impl.ranks);
  c10::cuda::CUDAGuard guard(impl.device);
  impl.arena = std::make_shared<Arena>();
  impl.arena->device = impl.device;
  check(cudaMalloc(&impl.arena->ptr, static_cast<size_t>(impl.layout.bytes)), "cudaMalloc");
  check(cudaMemset(impl.arena->ptr, 0, static_cast<size_t>(impl.layout.bytes)), "cudaMemset");
  const uint32_t one = 1;
  check(cudaMemcpy(static_cast<char*>(impl.arena->ptr) + impl.layout.one_offset, &one, sizeof one,
                   cudaMemcpyHostToDevice),
        "cudaMemcpy");
  // Every rank's allocation is initialized before any rank can see its handle.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  impl.map_peers(group);
  const auto keep = impl.arena;
  const auto options = at::TensorOptions().device(device);
  for (size_t i = 0; i < buffers.size(); ++i) {
    char* base = static_cast<char*>(impl.arena->ptr);
    impl.buffers.push_back(at::from_blob(
        base + impl.layout.buffer_offsets[i], {buffers[i].elements}, [keep](void*) {},
        options.dtype(buffers[i].dtype)));
    impl.scratch.push_back(
        buffers[i].reduced
            ? at::from_blob(
                  base + impl.layout.scratch_offsets[i],
                  {std::max<int64_t>(1, (impl.ranks - 1) * impl.layout.chunk_capacity[i])},
                  [keep](void*) {}, options.dtype(buffers[i].dtype))
            : at::Tensor());
    impl.ready.emplace_back(cudaEventDisableTiming);
    impl.done.emplace_back(cudaEventDisableTiming);
  }
  impl.stream.emplace(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, impl.device));
}

PeerAllReduce::~PeerAllReduce() {
  Impl& impl = *impl_;
  c10::cuda::CUDAGuard guard(impl.device);
  if (impl.stream) (void)cudaStreamSynchronize(*impl.stream);
  for (int j = 0; j < impl.ranks; ++j) {
    if (j == impl.rank || impl.bases.empty() || impl.bases[static_cast<size_t>(j)] == nullptr) {
      continue;
    }
    if (const cudaError_t status = cudaIpcCloseMemHandle(impl.bases[static_cast<size_t>(j)]);
        status != cudaSuccess) {
      std::fprintf(stderr, "gpuscope-torch: --all-reduce copy-engine: cudaIpcCloseMemHandle: %s\n",
                   cudaGetErrorString(status));
    }
  }
}

const at::Tensor& PeerAllReduce::buffer(size_t i) const {
  return impl_->buffers.at(i);
}

int64_t PeerAllReduce::bytes() const {
  return impl_->layout.bytes;
}

std::string copy_engine_obstacle(ProcessGroup& group, const at::Device& device) {
  if (!device.is_cuda() || !device.has_index()) return "not on CUDA devices";
  std::string obstacle;
  try {
    (void)mem_ops();
  } catch (const c10::Error&) {
    obstacle = "the driver has no stream memory operations";
  }
  std::array<char, 32> bus{};
  if (obstacle.empty() && cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()),
                                                device.index()) != cudaSuccess) {
    (void)cudaGetLastError();
    obstacle = "no PCI bus id for GPU " + std::to_string(device.index());
  }
  // A host name is one word; "?" keeps the fields apart when it cannot be read.
  std::string host = gpuscope::host_name();
  if (host.empty()) host = "?";
  std::vector<PeerPlace> places;
  for (const std::string& text :
       group.all_gather_strings("peer_place", host + " " + std::string(bus.data()))) {
    std::istringstream fields(text);
    PeerPlace place;
    fields >> place.host >> place.pci_bus_id;
    places.push_back(place);
  }
  if (obstacle.empty()) {
    obstacle = peer_obstacle(places, group.rank(), [&](const std::string& pci_bus_id) {
      int peer = -1, can = 0;
      if (cudaDeviceGetByPCIBusId(&peer, pci_bus_id.c_str()) != cudaSuccess ||
          cudaDeviceCanAccessPeer(&can, device.index(), peer) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
      }
      return can == 1;
    });
  }
  for (const std::string& reason : group.all_gather_strings("peer_obstacle", obstacle)) {
    if (!reason.empty()) return reason;
  }
  return "";
}

void PeerAllReduce::launch_average(size_t i) {
  impl_->launch(i, i, nullptr);
}

void PeerAllReduce::launch_sharded(size_t reduced, size_t gathered, const ChunkUpdate& update) {
  TORCH_CHECK(
      impl_->layout.buffers.at(reduced).elements == impl_->layout.buffers.at(gathered).elements &&
          impl_->layout.buffers[reduced].reduced,
      "PeerAllReduce::launch_sharded: buffers ", reduced, " and ", gathered, " do not pair");
  impl_->launch(reduced, gathered, &update);
}

ChunkRange PeerAllReduce::chunk(size_t i) const {
  return peer_chunk(impl_->layout.buffers.at(i).elements, impl_->ranks, impl_->rank);
}

void PeerAllReduce::wait(size_t i) {
  impl_->done[i].block(c10::cuda::getCurrentCUDAStream(impl_->device));
}

void PeerAllReduce::start_recording() {
  impl_->recording = true;
  impl_->timings.clear();
}

std::optional<double> PeerAllReduce::recorded_seconds() const {
  if (!impl_->timed) return std::nullopt;
  double total = 0;
  for (const auto& [start, end] : impl_->timings) {
    total += static_cast<double>(start.elapsed_time(end)) * 1e-3;
  }
  return total;
}

}  // namespace gpuscope::workloads
