// run_gemm_burn: one precision's GEMM stress with every result verified.
//
// Setup: allocate the input sets, result slots and workspace within the memory budget; fill
// the inputs with random data on the GPU; choose the algorithm (algo_select.cc); compute each
// set's first result, which every later result of that set must equal bit for bit; check a few
// tiles of the first results against an fp64 host reference.
// Timed phase: windows of about window_seconds. A window is a sequence of groups; a group is
// `work_slots` GEMMs (CUDA events around them) followed by the comparison of each of their
// results with its set's first result. At each window's end the error counters are read; every
// reference_check_interval_seconds a few tiles are checked again.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "capability/algo_select.h"
#include "capability/cuda_raii.h"
#include "capability/gemm_plan.h"
#include "capability/gemm_spec.h"
#include "capability/lt_matmul.h"
#include "capability/random_fill.h"
#include "capability/result_check.h"
#include "capability/verify.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr int kTile = 16;
// Verification adds about this share to a group's GPU time (used only for the first guess of
// how many groups fill a window; later windows adapt to what was measured).
constexpr double kVerifyOverhead = 1.15;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Status validate(const GemmBurnOptions& o) {
  if (o.n < 64 || o.n % 16 != 0) {
    return Status(Code::invalid_argument,
                  fmt::format("size {} must be a multiple of 16 and at least 64", o.n));
  }
  if (!(o.duration_seconds > 0) || !(o.window_seconds > 0)) {
    return Status(Code::invalid_argument, "duration and window must be positive");
  }
  if (!(o.memory_fraction > 0 && o.memory_fraction <= 1)) {
    return Status(Code::invalid_argument, "memory fraction must be in (0, 1]");
  }
  if (o.algorithm_candidates < 1 || o.reference_tiles < 0 ||
      !(o.reference_check_interval_seconds > 0)) {
    return Status(Code::invalid_argument, "candidates >= 1, tiles >= 0, interval > 0");
  }
  return Status{};
}

// 32 MiB on Hopper and newer, as NVIDIA recommends there; 4 MiB on older GPUs.
std::uint64_t workspace_limit(const DeviceInfo& device) {
  return device.cc_major >= 9 ? 32 * kMiB : 4 * kMiB;
}

struct InputSet {
  DeviceBuffer a;
  DeviceBuffer b;
  DeviceBuffer first;  // the first result of this set: every later one must equal it
};

class GemmBurn {
 public:
  GemmBurn(const GemmBurnOptions& options, DeviceInfo device)
      : options_(options),
        device_(std::move(device)),
        spec_(gemm_spec(options.precision)),
        n_(options.n),
        count_(static_cast<std::size_t>(options.n) * static_cast<std::size_t>(options.n)),
        rng_(options.seed) {}

  Result<GemmBurnResult> run() {
    const auto setup_start = Clock::now();
    result_.precision = options_.precision;
    result_.n = n_;
    GPUSCOPE_RETURN_IF_ERROR(create_resources());
    GPUSCOPE_RETURN_IF_ERROR(fill_inputs());
    GPUSCOPE_RETURN_IF_ERROR(choose_algorithm());
    GPUSCOPE_RETURN_IF_ERROR(compute_first_results());
    GPUSCOPE_RETURN_IF_ERROR(check_reference_tiles());
    result_.setup_seconds = seconds_since(setup_start);
    GPUSCOPE_RETURN_IF_ERROR(run_windows());
    GPUSCOPE_RETURN_IF_ERROR(check_reference_tiles());
    GPUSCOPE_RETURN_IF_ERROR(read_counters());
    finish();
    return std::move(result_);
  }

 private:
  Status create_resources() {
    GPUSCOPE_ASSIGN_OR_RETURN(stream_, make_stream());
    GPUSCOPE_ASSIGN_OR_RETURN(side_stream_, make_stream());
    cublasLtHandle_t handle = nullptr;
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cublasLtCreate(&handle)));
    lt_ = LtHandle(handle);

    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes)));
    const auto budget =
        static_cast<std::uint64_t>(options_.memory_fraction * static_cast<double>(free_bytes));
    workspace_bytes_ = workspace_limit(device_);
    GPUSCOPE_ASSIGN_OR_RETURN(plan_, plan_gemm_memory(spec_, n_, device_.l2_cache_bytes, budget,
                                                      workspace_bytes_ + kMiB));
    result_.input_sets = plan_.input_sets;
    result_.work_slots = plan_.work_slots;
    result_.device_bytes = plan_.total_bytes;

    for (int s = 0; s < plan_.input_sets; ++s) {
      InputSet set;
      GPUSCOPE_ASSIGN_OR_RETURN(set.a, DeviceBuffer::allocate(plan_.operand_bytes));
      GPUSCOPE_ASSIGN_OR_RETURN(set.b, DeviceBuffer::allocate(plan_.operand_bytes));
      GPUSCOPE_ASSIGN_OR_RETURN(set.first, DeviceBuffer::allocate(plan_.result_bytes));
      sets_.push_back(std::move(set));
    }
    for (int j = 0; j < plan_.work_slots; ++j) {
      GPUSCOPE_ASSIGN_OR_RETURN(DeviceBuffer slot, DeviceBuffer::allocate(plan_.result_bytes));
      slots_.push_back(std::move(slot));
    }
    GPUSCOPE_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::allocate(workspace_bytes_));
    // The fp8 scales at offsets 0 and 64, the counters at 128: each well aligned.
    GPUSCOPE_ASSIGN_OR_RETURN(small_, DeviceBuffer::allocate(256));
    GPUSCOPE_ASSIGN_OR_RETURN(host_counters_, PinnedBuffer::allocate(sizeof(CheckCounters)));
    a_scale_ = small_.as<float>();
    b_scale_ = small_.as<float>() + 16;
    counters_ = reinterpret_cast<CheckCounters*>(small_.as<unsigned char>() + 128);
    // On stream_, so that the kernels that use them (all on stream_) come after.
    cudaStream_t stream = stream_.get();
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
        cudaMemcpyAsync(a_scale_, &spec_.a_scale, sizeof(float), cudaMemcpyHostToDevice, stream)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
        cudaMemcpyAsync(b_scale_, &spec_.b_scale, sizeof(float), cudaMemcpyHostToDevice, stream)));
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_API_CHECK(cudaMemsetAsync(counters_, 0, sizeof(CheckCounters), stream)));

    const std::size_t panel_bytes =
        static_cast<std::size_t>(kTile) * n_ * element_bytes(spec_.input);
    GPUSCOPE_ASSIGN_OR_RETURN(host_a_panel_, PinnedBuffer::allocate(panel_bytes));
    GPUSCOPE_ASSIGN_OR_RETURN(host_b_panel_, PinnedBuffer::allocate(panel_bytes));
    GPUSCOPE_ASSIGN_OR_RETURN(host_tile_,
                              PinnedBuffer::allocate(kTile * kTile * element_bytes(spec_.output)));
    GPUSCOPE_ASSIGN_OR_RETURN(matmul_, LtMatmul::create(lt_.get(), spec_, n_, a_scale_, b_scale_));
    return Status{};
  }

  Status fill_inputs() {
    const double range = input_range(spec_, n_);
    for (std::size_t s = 0; s < sets_.size(); ++s) {
      const std::uint64_t seed = options_.seed + 2 * s + 1;
      GPUSCOPE_RETURN_IF_ERROR(fill_random(spec_.input, sets_[s].a.get(), count_, range, seed,
                                           device_.sm_count, stream_.get()));
      GPUSCOPE_RETURN_IF_ERROR(fill_random(spec_.input, sets_[s].b.get(), count_, range, seed + 1,
                                           device_.sm_count, stream_.get()));
    }
    return GPUSCOPE_API_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  Status choose_algorithm() {
    AlgoSelection selection;
    selection.matmul = &matmul_;
    for (const InputSet& set : sets_) selection.sets.push_back({set.a.get(), set.b.get()});
    selection.out = slots_[0].get();
    selection.out_again = sets_[0].first.get();
    selection.result_count = count_;
    selection.workspace = workspace_.get();
    selection.workspace_bytes = workspace_bytes_;
    selection.counters = counters_;
    selection.host_counters = host_counters_.as<CheckCounters>();
    selection.sm_count = device_.sm_count;
    selection.candidates = options_.algorithm_candidates;
    selection.stream = stream_.get();
    GPUSCOPE_ASSIGN_OR_RETURN(ChosenAlgorithm chosen, select_algorithm(selection));
    algo_ = chosen.algo;
    result_.algorithm = std::move(chosen.info);
    return Status{};
  }

  Status compute_first_results() {
    for (InputSet& set : sets_) {
      GPUSCOPE_RETURN_IF_ERROR(run_gemm(set, set.first.get()));
      GPUSCOPE_RETURN_IF_ERROR(launch_compare(spec_.output, set.first.get(), set.first.get(),
                                              count_, counters_, device_.sm_count, stream_.get()));
    }
    return GPUSCOPE_API_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  Status run_gemm(const InputSet& set, void* out) {
    return matmul_.run(algo_, set.a.get(), set.b.get(), out, workspace_.get(), workspace_bytes_,
                       stream_.get());
  }

  // Check 3 of verify.h on `reference_tiles` random tiles of random sets' first results. The
  // copies run on the side stream: inputs and first results are never written again.
  Status check_reference_tiles() {
    const std::size_t in_bytes = element_bytes(spec_.input);
    const std::size_t out_bytes = element_bytes(spec_.output);
    const auto row = [&](std::size_t elements) { return elements * in_bytes; };
    std::uniform_int_distribution<int> pick_set(0, static_cast<int>(sets_.size()) - 1);
    std::uniform_int_distribution<int> pick_origin(0, n_ - kTile);
    const auto n = static_cast<std::size_t>(n_);
    for (int t = 0; t < options_.reference_tiles; ++t) {
      const InputSet& set = sets_[static_cast<std::size_t>(pick_set(rng_))];
      const auto r0 = static_cast<std::size_t>(pick_origin(rng_));
      const auto c0 = static_cast<std::size_t>(pick_origin(rng_));
      const auto* a = set.a.as<const unsigned char>();
      const auto* b = set.b.as<const unsigned char>();
      const auto* c = set.first.as<const unsigned char>();
      cudaStream_t side = side_stream_.get();
      OperandView a_view;
      if (spec_.transpose_a) {  // rows of op(A) are stored columns: contiguous
        GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
            host_a_panel_.get(), a + row(r0 * n), row(kTile * n), cudaMemcpyDeviceToHost, side)));
        a_view.stride_index = n;
        a_view.stride_k = 1;
      } else {  // kTile elements of each of n columns
        GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
            cudaMemcpy2DAsync(host_a_panel_.get(), row(kTile), a + row(r0), row(n), row(kTile), n,
                              cudaMemcpyDeviceToHost, side)));
        a_view.stride_index = 1;
        a_view.stride_k = kTile;
      }
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
          host_b_panel_.get(), b + row(c0 * n), row(kTile * n), cudaMemcpyDeviceToHost, side)));
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpy2DAsync(
          host_tile_.get(), kTile * out_bytes, c + (r0 + c0 * n) * out_bytes, n * out_bytes,
          kTile * out_bytes, kTile, cudaMemcpyDeviceToHost, side)));
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(side)));

      const std::vector<double> a_values =
          decode_elements(spec_.input, host_a_panel_.get(), kTile * n);
      const std::vector<double> b_values =
          decode_elements(spec_.input, host_b_panel_.get(), kTile * n);
      a_view.data = a_values.data();
      const OperandView b_view{b_values.data(), n, 1};
      const double scale = static_cast<double>(spec_.a_scale) * spec_.b_scale;
      const std::vector<double> reference = reference_tile(a_view, b_view, kTile, n_, scale);
      const std::vector<double> got =
          decode_elements(spec_.output, host_tile_.get(), kTile * kTile);
      const TileCheck check = check_tile(options_.precision, got, reference);
      Verification& v = result_.verification;
      ++v.reference_tiles_checked;
      if (!check.ok) ++v.reference_tiles_failed;
      v.reference_max_error = std::max(v.reference_max_error, check.max_error);
      v.reference_tolerance = check.tolerance;
    }
    last_reference_check_ = Clock::now();
    return Status{};
  }

  Status ensure_events(std::size_t count) {
    while (starts_.size() < count) {
      GPUSCOPE_ASSIGN_OR_RETURN(Event start, make_event());
      GPUSCOPE_ASSIGN_OR_RETURN(Event stop, make_event());
      starts_.push_back(std::move(start));
      stops_.push_back(std::move(stop));
    }
    return Status{};
  }

  // Copies the cumulative device counters into host_counters_.
  Status read_counters() {
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_API_CHECK(cudaMemcpyAsync(host_counters_.get(), counters_, sizeof(CheckCounters),
                                           cudaMemcpyDeviceToHost, stream_.get())));
    return GPUSCOPE_API_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  bool inject_now(Clock::time_point timed_start) {
    return options_.inject_fault_after_seconds && !result_.fault_injected &&
           seconds_since(timed_start) >= *options_.inject_fault_after_seconds;
  }

  Status run_windows() {
    const int planned = std::max(
        1, static_cast<int>(std::lround(options_.duration_seconds / options_.window_seconds)));
    const double group_guess =
        plan_.work_slots * result_.algorithm.median_seconds * kVerifyOverhead;
    int groups = std::max(1, static_cast<int>(std::lround(options_.window_seconds / group_guess)));
    GPUSCOPE_ASSIGN_OR_RETURN(Event window_begin, make_event());
    GPUSCOPE_ASSIGN_OR_RETURN(Event window_end, make_event());
    GPUSCOPE_RETURN_IF_ERROR(read_counters());
    CheckCounters before = *host_counters_.as<CheckCounters>();
    std::vector<std::size_t> slot_set(slots_.size());
    std::uniform_int_distribution<std::size_t> pick_element(0, count_ - 1);
    const double flop_per_gemm = gemm_flop(n_, n_, n_);
    std::uint64_t gemm_index = 0;
    const auto timed_start = Clock::now();
    cudaStream_t stream = stream_.get();

    for (int w = 0; w < planned; ++w) {
      if (options_.should_stop && options_.should_stop()) break;
      GPUSCOPE_RETURN_IF_ERROR(ensure_events(static_cast<std::size_t>(groups)));
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(window_begin.get(), stream)));
      for (int g = 0; g < groups; ++g) {
        const auto gi = static_cast<std::size_t>(g);
        GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(starts_[gi].get(), stream)));
        for (std::size_t j = 0; j < slots_.size(); ++j) {
          slot_set[j] = gemm_index++ % sets_.size();
          GPUSCOPE_RETURN_IF_ERROR(run_gemm(sets_[slot_set[j]], slots_[j].get()));
        }
        GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(stops_[gi].get(), stream)));
        if (inject_now(timed_start)) {
          GPUSCOPE_RETURN_IF_ERROR(
              launch_corrupt(spec_.output, slots_[0].get(), pick_element(rng_), stream));
          result_.fault_injected = true;
        }
        for (std::size_t j = 0; j < slots_.size(); ++j) {
          GPUSCOPE_RETURN_IF_ERROR(launch_compare(spec_.output, slots_[j].get(),
                                                  sets_[slot_set[j]].first.get(), count_, counters_,
                                                  device_.sm_count, stream));
        }
      }
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(window_end.get(), stream)));
      GPUSCOPE_RETURN_IF_ERROR(read_counters());

      GemmWindow window;
      window.index = w;
      window.gemms = static_cast<std::uint64_t>(groups) * slots_.size();
      window.flop = static_cast<double>(window.gemms) * flop_per_gemm;
      for (int g = 0; g < groups; ++g) {
        const auto gi = static_cast<std::size_t>(g);
        GPUSCOPE_ASSIGN_OR_RETURN(double t, elapsed_seconds(starts_[gi], stops_[gi]));
        window.gemm_seconds += t;
      }
      GPUSCOPE_ASSIGN_OR_RETURN(window.wall_seconds, elapsed_seconds(window_begin, window_end));
      window.elapsed_seconds = seconds_since(timed_start);
      const CheckCounters now = *host_counters_.as<CheckCounters>();
      window.mismatches = now.mismatches - before.mismatches;
      window.nan_count = now.nan_count - before.nan_count;
      window.inf_count = now.inf_count - before.inf_count;
      before = now;
      result_.verification.gemms_checked += window.gemms;
      result_.windows.push_back(window);
      if (options_.on_window) options_.on_window(window);

      if (window.wall_seconds > 0) {
        const double per_group = window.wall_seconds / groups;
        groups = std::max(1, static_cast<int>(std::lround(options_.window_seconds / per_group)));
      }
      if (seconds_since(last_reference_check_) >= options_.reference_check_interval_seconds &&
          w + 1 < planned) {
        GPUSCOPE_RETURN_IF_ERROR(check_reference_tiles());
      }
    }
    result_.partial = static_cast<int>(result_.windows.size()) < planned;
    return Status{};
  }

  void finish() {
    const CheckCounters& c = *host_counters_.as<CheckCounters>();
    result_.verification.mismatches = c.mismatches;
    result_.verification.nan_count = c.nan_count;
    result_.verification.inf_count = c.inf_count;
    std::vector<double> rates;
    for (const GemmWindow& w : result_.windows) rates.push_back(w.flop_per_second());
    result_.flop_per_second = summarize(rates);
  }

  const GemmBurnOptions& options_;
  const DeviceInfo device_;
  const GemmSpec& spec_;
  const int n_;
  const std::size_t count_;  // elements of one matrix
  std::mt19937_64 rng_;

  // Declared before the buffers so that it is destroyed after them (a handle outlives its work).
  LtHandle lt_;
  Stream stream_;
  Stream side_stream_;
  GemmMemoryPlan plan_;
  std::uint64_t workspace_bytes_ = 0;
  std::vector<InputSet> sets_;
  std::vector<DeviceBuffer> slots_;
  DeviceBuffer workspace_;
  DeviceBuffer small_;  // counters and the fp8 scales
  CheckCounters* counters_ = nullptr;
  float* a_scale_ = nullptr;
  float* b_scale_ = nullptr;
  PinnedBuffer host_counters_;
  PinnedBuffer host_a_panel_;
  PinnedBuffer host_b_panel_;
  PinnedBuffer host_tile_;
  LtMatmul matmul_;
  cublasLtMatmulAlgo_t algo_{};
  std::vector<Event> starts_;
  std::vector<Event> stops_;
  Clock::time_point last_reference_check_ = Clock::now();
  GemmBurnResult result_;
};

}  // namespace

Result<GemmBurnResult> run_gemm_burn(const GemmBurnOptions& options) {
  GPUSCOPE_RETURN_IF_ERROR(validate(options));
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceInfo device, query_device());
  const PrecisionSupport support =
      precision_support_for(options.precision, device.cc_major, device.cc_minor);
  if (!support.supported) return Status(Code::not_supported, support.reason);
  GemmBurn burn(options, std::move(device));
  return burn.run();
}

}  // namespace gpuscope::capability
