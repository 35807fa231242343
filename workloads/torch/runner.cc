#include "runner.h"

#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "batch_search.h"
#include "diagnostics.h"
#include "distributed/data_parallel.h"
#include "guard_data.h"
#include "input/step_inputs.h"
#include "nvtx_range.h"
#include "share_barrier.h"
#include "step_program.h"
#include "timing.h"

namespace gpuscope::workloads {
namespace {

using Clock = std::chrono::steady_clock;

// --batch auto runs this much below the largest batch whose probe fit (fragmentation, and the
// run's own warm-up). With CUDA graphs the probe captures too (see choose_batch).
constexpr int64_t kBatchMarginPercent = 5;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The SDPA backends LibTorch may choose from (process-wide flags, as torch.backends.cuda.*).
void apply_sdpa_backend(SdpaBackend backend) {
  auto& context = at::globalContext();
  const bool any = backend == SdpaBackend::automatic;
  context.setSDPUseFlash(any || backend == SdpaBackend::flash);
  context.setSDPUseMemEfficient(any || backend == SdpaBackend::efficient);
  context.setSDPUseMath(any || backend == SdpaBackend::math);
  // LibTorch's default leaves cuDNN attention enabled but last in priority; keep that for auto.
  context.setSDPUseCuDNN(any || backend == SdpaBackend::cudnn);
}

// `gpuscope bench --share` starts several copies together: each says it is ready (its `start`
// line, the device open) and waits here until gpuscope creates $GPUSCOPE_SHARE_GO_FILE, once
// every copy is ready. `stop` (Ctrl-C) and an hour's wait end it too.
// How long a copy waits for the others at the second and third meeting (a copy that died never
// comes; gpuscope's trial timeout ends the rest sooner than this).
constexpr std::chrono::seconds kShareMeetingLimit(120);

void wait_for_go_file(const std::atomic<bool>* stop) {
  const char* path = std::getenv("GPUSCOPE_SHARE_GO_FILE");
  if (path == nullptr || *path == '\0') return;
  const auto give_up = Clock::now() + std::chrono::hours(1);
  std::error_code ignored;
  while (!std::filesystem::exists(path, ignored) && Clock::now() < give_up) {
    if (stop != nullptr && stop->load()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Parameters and buffers to the device and the plan's dtype; 4-D weights to NHWC if asked.
void place_model(ReferenceModel& model, const DeviceInfo& device, const PrecisionPlan& plan,
                 bool channels_last) {
  model.to(device.device, plan.param_dtype);
  if (!channels_last) return;
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

at::ScalarType input_dtype(const PrecisionPlan& plan) {
  return plan.param_dtype;
}

class Run {
 public:
  Run(const RunConfig& config, const LineSink& emit, const std::atomic<bool>* stop)
      : config_(config), emit_(emit), stop_(stop) {}

  int execute();
  // After a failure (an out-of-memory error above all): the allocator history up to it, saved
  // if it was being recorded. Returns a note for the error message ("" when none).
  std::string history_after_failure() noexcept;

 private:
  bool stopping() const { return stop_ != nullptr && stop_->load(); }
  // --windows 0: timed windows until the stop flag, which is then the run's normal end.
  bool until_stopped() const { return config_.windows == 0 && config_.task != Task::guard; }
  BatchSpec batch_spec(int64_t batch) const {
    return BatchSpec{config_.model, config_.shape, batch, input_dtype(plan_),
                     switches_.channels_last};
  }
  int64_t default_batch() const;
  std::optional<int64_t> choose_batch(StepProgram& program);
  // One step on inputs[step % size]: eagerly, or replayed when `replay` (graphs captured).
  // Host-fed inputs (`feed`) refill that batch first. Records the step's loss (and loss scale).
  void one_step(StepProgram& program, int64_t step, const std::vector<Batch>& inputs, bool replay,
                StepInputs* feed = nullptr);
  // --task guard: guard_steps training steps on the guard's dataset, every loss kept.
  int run_guard(StepProgram& program, RunResult& result);
  // --trace and --memory-snapshot: checked before anything runs, written after the timed windows.
  std::optional<std::string> diagnostics_unusable() const;
  void write_diagnostics(StepProgram& program, int64_t& step, const std::vector<Batch>& inputs,
                         StepInputs* feed, RunResult& result);
  // Per-step records on the device, read once at the end.
  void allocate_step_records(int64_t steps, const StepProgram& program);
  void fill_step_records(RunResult& result, int64_t steps, const StepProgram& program) const;
  void print_summary(const RunResult& result) const;
  // Unless --quiet: one process prints the human summary, rank 0 of a data-parallel run (it
  // holds every rank's figures; the others' lines would interleave on the shared stderr).
  bool prints_summary() const {
    return !config_.quiet && (!data_parallel_ || data_parallel_->rank() == 0);
  }
  // Data parallel, after the last step (device synchronized): losses averaged over ranks, the
  // communication figures, and on rank 0 every rank's record.
  void finish_data_parallel(RunResult& result);

  const RunConfig& config_;
  const LineSink& emit_;
  const std::atomic<bool>* stop_;
  DeviceInfo device_;
  PrecisionPlan plan_;
  ResolvedSwitches switches_;
  bool batch_searched_ = false;
  int batch_failure_exit_ = kTorchExitFailed;
  bool pinned_ = false;
  at::Tensor losses_;  // training: every step's loss (fp32, on the device)
  at::Tensor scales_;  // guard with loss scaling: the scale after every step
  std::optional<MemoryHistory> memory_history_;
  std::unique_ptr<DataParallel> data_parallel_;  // world size > 1
};

int64_t Run::default_batch() const {
  if (config_.task == Task::guard) return guard_default_batch(config_.model);
  const ModelInfo& info = model_info(config_.model);
  return config_.task == Task::train ? info.default_train_batch : info.default_infer_batch;
}

void Run::allocate_step_records(int64_t steps, const StepProgram& program) {
  const auto floats = at::TensorOptions().dtype(at::kFloat).device(device_.device);
  if (is_training(config_.task)) losses_ = at::zeros({steps}, floats);
  if (config_.task == Task::guard && program.loss_scaler() != nullptr) {
    scales_ = at::zeros({steps}, floats);
  }
}

void Run::fill_step_records(RunResult& result, int64_t steps, const StepProgram& program) const {
  const auto read = [steps](const at::Tensor& values) {
    const at::Tensor host = values.narrow(0, 0, steps).to(at::kCPU, at::kDouble);
    return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + steps);
  };
  if (losses_.defined()) result.losses = read(losses_);
  if (scales_.defined()) result.loss_scales = read(scales_);
  if (const LossScaler* scaler = program.loss_scaler()) {
    result.loss_scale = scaler->scale().item<double>();
    result.skipped_steps = static_cast<int64_t>(scaler->skipped_steps().item<double>());
  }
}

std::optional<int64_t> Run::choose_batch(StepProgram& program) {
  if (!config_.batch_auto) return config_.batch.value_or(default_batch());
  batch_searched_ = true;
  const BatchProbe probe = [&](int64_t batch) -> ProbeResult {
    ProbeResult result;
    try {
      // The run's input sets are alive too.
      std::vector<Batch> held;
      for (int64_t i = 0; i < input_sets_for(config_); ++i) {
        held.push_back(make_synthetic_batch(batch_spec(batch), device_.device));
      }
      // Two training steps: the second forward runs while the first step's gradients are
      // still alive.
      const int steps = is_training(config_.task) ? 2 : 1;
      for (int i = 0; i < steps; ++i) program.run_eager(held.front());
      if (switches_.cuda_graphs) {
        // The run captures the step once per input set into one graph pool, which does not
        // reuse the eager steps' cached blocks: probe the captures too. Fitting eagerly was not
        // enough on the H100 (ResNet-50 bf16 training: 1856 fit, the capture at 12 % below ran
        // out of memory).
        for (const Batch& b : held) program.run_eager(b);
        program.capture(held);
        for (size_t i = 0; i < held.size(); ++i) program.replay(i);
      }
      synchronize(device_);
    } catch (const c10::Error& e) {
      result.outcome = is_out_of_memory(e) ? ProbeOutcome::out_of_memory : ProbeOutcome::failed;
      result.message = e.what_without_backtrace();
      if (result.message.size() > 300) result.message.resize(300);
    }
    program.release_step_memory();
    emit_(batch_probe_line({batch, result.outcome, result.message}));
    return result;
  };
  BatchSearchOptions options;
  options.max = config_.max_batch;
  options.start = std::min<int64_t>(default_batch(), config_.max_batch);
  const BatchSearchResult found = find_largest_batch(probe, options);
  if (!found.batch) {
    const bool oom = found.failure.find("does not fit") != std::string::npos;
    emit_(oom ? skipped_line("out_of_memory", found.failure)
              : error_line("internal", found.failure));
    batch_failure_exit_ = oom ? kTorchExitSkipped : kTorchExitFailed;
    return std::nullopt;
  }
  // A margin for what the probe does not see: fragmentation and the run's longer warm-up.
  const int64_t margin = *found.batch * kBatchMarginPercent / 100;
  int64_t chosen = *found.batch - margin;
  if (chosen >= options.multiple) chosen -= chosen % options.multiple;
  return std::max<int64_t>(chosen, 1);
}

void Run::one_step(StepProgram& program, int64_t step, const std::vector<Batch>& inputs,
                   bool replay, StepInputs* feed) {
  if (data_parallel_) maybe_inject_fault(config_, step);
  {
    NvtxRange range(kStepRangeName);
    if (feed != nullptr) feed->before_step(step);
    const auto index = static_cast<size_t>(step) % inputs.size();
    if (replay) {
      program.replay(index);
    } else {
      program.run_eager(inputs[index]);
    }
    if (feed != nullptr) feed->after_step(step);
    if (losses_.defined()) losses_.select(0, step).copy_(program.last_loss(), true);
    if (scales_.defined()) scales_.select(0, step).copy_(program.loss_scaler()->scale(), true);
  }
  mark_step_end(step);  // after the range: the step's range ends before the mark that counts it
}

int Run::run_guard(StepProgram& program, RunResult& result) {
  // Data parallel: the batches of the whole job (batch x world size), each rank its share, so
  // that N ranks see what one process with the N-fold batch sees.
  const int64_t world = data_parallel_ ? data_parallel_->world_size() : 1;
  std::vector<Batch> inputs =
      make_guard_batches(batch_spec(result.batch * world), config_.seed, device_.device);
  if (data_parallel_) inputs = data_parallel_->share_of(inputs);
  const bool graphs = switches_.cuda_graphs;
  const int64_t steps = config_.guard_steps;
  // With graphs: one eager step per batch (a capture needs it), then replays.
  const int64_t eager =
      graphs ? std::min<int64_t>(steps, static_cast<int64_t>(inputs.size())) : steps;
  allocate_step_records(steps, program);
  synchronize(device_);
  const auto start = Clock::now();
  int64_t step = 0;
  for (; step < eager && !stopping(); ++step) one_step(program, step, inputs, false);
  if (graphs && step < steps && !stopping()) {
    release_cached_memory(device_);
    reset_memory_peaks(device_);
    const auto capture_start = Clock::now();
    {
      NvtxRange range("gpuscope-torch capture");
      program.capture(inputs);
      synchronize(device_);
    }
    result.capture_seconds = seconds_since(capture_start);
  }
  for (; step < steps && !stopping(); ++step) one_step(program, step, inputs, graphs);
  synchronize(device_);
  result.seconds = seconds_since(start);
  result.partial = step < steps;
  result.samples_per_second =
      static_cast<double>(step * result.batch) / std::max(*result.seconds, 1e-9);
  if (const auto peaks = memory_peaks(device_)) {
    result.peak_allocated_bytes = peaks->allocated_bytes;
    result.peak_reserved_bytes = peaks->reserved_bytes;
  }
  finish_data_parallel(result);
  fill_step_records(result, step, program);
  emit_(result_line(result));
  if (prints_summary()) print_summary(result);
  return result.partial ? kTorchExitInterrupted : kTorchExitOk;
}

int Run::execute() {
  // Data parallel: one GPU per rank, cuda:LOCAL_RANK unless a device index was given.
  const bool distributed = config_.launch.distributed();
  const std::string device_spec = distributed && config_.device == "cuda"
                                      ? "cuda:" + std::to_string(config_.launch.local_rank)
                                      : config_.device;
  auto opened = open_device(device_spec);
  if (auto* reason = std::get_if<std::string>(&opened)) {
    const bool no_device = reason->find("no CUDA device") != std::string::npos;
    emit_(no_device ? skipped_line("no_device", *reason) : error_line("invalid_argument", *reason));
    return no_device ? kTorchExitSkipped : kTorchExitUsage;
  }
  device_ = std::get<DeviceInfo>(opened);
  const ModelInfo& info = model_info(config_.model);
  plan_ = plan_for(config_.mode);
  switches_ = resolve_switches(config_, device_.is_cuda());
  std::vector<std::string> notes;
  if (distributed && config_.grad_sync && switches_.cuda_graphs) {
    // The step is captured with its bucket all-reduces (NCCL collectives can be captured; the
    // hooks launch them in the same order in every capture, and the communicator exists from the
    // eager warm-up). On 2xH200: ViT-B/16 98.0 % scaling against 95.0 % eager, GPT-2 97.1 %
    // against 95.0 % (bench/RESULTS.md, session 9). --graphs off: the eager step, as DDP's.
    notes.push_back(
        "CUDA graphs in a data-parallel run: the gradient all-reduces are captured with the "
        "step; the communication figures are not measured (--graphs off measures them)");
  }
  if (distributed && !config_.grad_sync) {
    notes.push_back(
        "--grad-sync off: no gradient is averaged; each rank trains its own replica, every GPU "
        "at once. The samples/s are the ceiling of data parallel without communication, not a "
        "training run's");
  }
  if (distributed && config_.grad_sync && config_.bucket_step &&
      (plan_.loss_scaling || !config_.fused_adamw)) {
    notes.push_back(std::string("--bucket-step: AdamW updates every parameter after the last "
                                "bucket's all-reduce here: ") +
                    (plan_.loss_scaling
                         ? "fp16's loss scaling skips a step on an overflow in any "
                           "gradient"
                         : "LibTorch's AdamW (--fused-adamw off) steps all at once"));
  }
  if (!distributed && !config_.grad_sync) {
    notes.push_back("--grad-sync off has no effect at world size 1: no gradients are averaged");
  }
  if (!distributed && config_.grad_comm != GradComm::fp32) {
    notes.push_back("--grad-comm " + std::string(grad_comm_name(config_.grad_comm)) +
                    " has no effect at world size 1: no gradients are all-reduced");
  }
  if (!distributed && config_.all_reduce != AllReduce::automatic) {
    notes.push_back("--all-reduce " + std::string(all_reduce_name(config_.all_reduce)) +
                    " has no effect at world size 1: no gradients are all-reduced");
  }

  StartRecord start;
  start.config = &config_;
  start.device = &device_;
  start.switches = switches_;
  start.parameters = info.parameters;
  start.torch_version = TORCH_VERSION;
  std::string pinned_note;
  pinned_ = resolve_pinned(config_, device_, &pinned_note);
  start.pinned = pinned_;
  if (!pinned_note.empty()) start.notes.push_back(pinned_note);
  start.notes.insert(start.notes.end(), notes.begin(), notes.end());
  emit_(start_line(start));
  wait_for_go_file(stop_);

  if (auto reason = unsupported_reason(config_.mode, device_, info.supports_fp8)) {
    emit_(skipped_line("not_supported", *reason));
    return kTorchExitSkipped;
  }
  if (config_.task == Task::guard && config_.input.kind != InputKind::synthetic) {
    emit_(error_line("invalid_argument",
                     "--task guard trains on its own fixed dataset: leave --input synthetic"));
    return kTorchExitUsage;
  }
  auto checked_input = check_input(config_);
  if (const auto* problem = std::get_if<InputProblem>(&checked_input)) {
    emit_(problem->skipped ? skipped_line(problem->code, problem->message)
                           : error_line(problem->code, problem->message));
    return problem->skipped ? kTorchExitSkipped : kTorchExitUsage;
  }
  if (auto reason = diagnostics_unusable()) {
    emit_(error_line("invalid_argument", *reason));
    return kTorchExitUsage;
  }
  if (until_stopped() && (!config_.diagnostics.trace_path.empty() ||
                          !config_.diagnostics.memory_snapshot_path.empty())) {
    emit_(error_line("invalid_argument",
                     "--windows 0 runs until stopped: it has no end to trace or snapshot after "
                     "(no --trace, no --memory-snapshot)"));
    return kTorchExitUsage;
  }
  if (const std::string obstacle = data_parallel_obstacle(config_);
      distributed && !obstacle.empty()) {
    emit_(error_line("invalid_argument", obstacle));  // a launcher's WORLD_SIZE (torchrun, srun)
    return kTorchExitUsage;
  }
  if (switches_.cuda_graphs && is_training(config_.task) && !config_.fused_adamw) {
    emit_(skipped_line("not_supported",
                       "LibTorch's torch::optim::AdamW keeps its step count on the host and cannot "
                       "be captured in a CUDA graph: use --graphs off with --fused-adamw off"));
    return kTorchExitSkipped;
  }

  const auto layer_options = std::make_shared<LayerOptions>();
  layer_options->fp8 = plan_.fp8_linear;
  layer_options->gelu_epilogue = switches_.gelu_epilogue;
  layer_options->residual_epilogue = switches_.residual_epilogue;
  layer_options->own_layer_norm = switches_.own_layer_norm;
  layer_options->patch_gemm = switches_.patch_gemm;
  torch::manual_seed(config_.seed);
  auto model = make_model(config_.model, layer_options);

  apply_math_flags(plan_);
  at::globalContext().setBenchmarkCuDNN(config_.cudnn_benchmark);
  apply_sdpa_backend(config_.sdpa);
  // From before the parameters reach the device: the history then accounts for every byte.
  if (!config_.diagnostics.memory_snapshot_path.empty()) memory_history_.emplace();
  place_model(*model, device_, plan_, switches_.channels_last);
  if (is_training(config_.task)) {
    model->train();
  } else {
    model->eval();
  }

  RunStream stream(device_);
  if (distributed) {
    data_parallel_ =
        std::make_unique<DataParallel>(config_, *model, device_.device, switches_.cuda_graphs);
  }
  StepProgram program(model, config_, device_,
                      data_parallel_ ? data_parallel_->buckets() : nullptr);
  if (data_parallel_) data_parallel_->set_bucket_step(program.bucket_step());
  const std::optional<int64_t> batch = choose_batch(program);
  if (!batch) return batch_failure_exit_;

  RunResult result;
  result.model = config_.model;
  result.task = config_.task;
  result.mode = config_.mode;
  result.batch = *batch;
  result.batch_searched = batch_searched_;
  if (config_.task == Task::guard) return run_guard(program, result);

  // Each rank trains on data of its own (the host loader seeds its batches with the seed too).
  RunConfig input_config = config_;
  if (data_parallel_) {
    input_config.seed = config_.seed + 1000003ull * static_cast<uint64_t>(data_parallel_->rank());
    torch::manual_seed(input_config.seed);
  }
  StepInputs feed(input_config, device_, batch_spec(*batch), pinned_,
                  std::move(std::get<std::optional<ImageFolder>>(checked_input)));
  StepInputs* const host_feed = feed.host_fed() ? &feed : nullptr;
  const std::vector<Batch>& inputs = feed.batches();
  const auto sets = static_cast<int64_t>(inputs.size());
  const bool graphs = switches_.cuda_graphs;
  // A capture needs one eager step first (per input set, so that each batch's shapes and
  // algorithms are warm); replays after it are warm-up too.
  const int64_t eager_warmup = std::max<int64_t>(config_.warmup_steps, graphs ? sets : 0);
  const int64_t replay_warmup = graphs ? sets + 1 : 0;
  const int64_t trace_steps =
      config_.diagnostics.trace_path.empty() ? 0 : config_.diagnostics.trace_steps;
  const int64_t total_steps =
      eager_warmup + replay_warmup + config_.windows * config_.steps_per_window + trace_steps;
  // Until stopped, no step's loss is kept: the number of steps has no bound.
  if (!until_stopped()) allocate_step_records(total_steps, program);

  int64_t step = 0;
  const auto warmup_start = Clock::now();
  {
    NvtxRange range("gpuscope-torch warm-up");
    for (; step < eager_warmup; ++step) one_step(program, step, inputs, false, host_feed);
    synchronize(device_);
  }
  result.warmup_seconds = seconds_since(warmup_start);
  // Peaks from here on: the steady state (eager) or the captures and their replays (graphs). A
  // replay allocates nothing, so the capture is where a graph's peak is seen.
  if (graphs) release_cached_memory(device_);
  reset_memory_peaks(device_);
  if (memory_history_) MemoryHistory::mark(MemoryHistory::kTimingAnnotation);
  if (graphs) {
    const auto capture_start = Clock::now();
    {
      NvtxRange range("gpuscope-torch capture");
      program.capture(inputs);
      synchronize(device_);
    }
    result.capture_seconds = seconds_since(capture_start);
    for (int64_t i = 0; i < replay_warmup; ++i, ++step) {
      one_step(program, step, inputs, true, host_feed);
    }
    synchronize(device_);
  }

  // A copy of a shared trial starts its windows when every copy is warm (share_barrier.h).
  const std::optional<ShareBarrier> share =
      data_parallel_ ? std::nullopt : ShareBarrier::from_environment();
  if (share) {
    share->arrive("warm");
    share->wait_all("warm", stop_, kShareMeetingLimit);
  }
  // Ranks without gradient sync never wait for each other: their timed windows start together,
  // so that every GPU is busy while any is timed (one rank's longer warm-up would otherwise time
  // the others beside an idle GPU).
  if (data_parallel_ && !config_.grad_sync) data_parallel_->barrier(device_.device);
  StepClock clock(device_);
  std::vector<double> step_seconds;
  if (data_parallel_ && data_parallel_->buckets()) data_parallel_->buckets()->start_recording();
  feed.reset_wait();
  for (int64_t w = 0; until_stopped() || w < config_.windows; ++w) {
    // Data parallel: every rank stops at the same window, or one would wait in a collective for
    // a rank that stopped a window earlier (the signal reaches them apart). The agreement waits
    // for the device, between windows: no window times it.
    const bool stop =
        data_parallel_ ? data_parallel_->any_rank(stopping(), device_.device) : stopping();
    if (stop) {
      result.partial = !until_stopped();
      break;
    }
    clock.mark();
    for (int64_t s = 0; s < config_.steps_per_window; ++s, ++step) {
      one_step(program, step, inputs, graphs, host_feed);
      clock.mark();
    }
    const std::vector<double> intervals = clock.intervals_s();
    WindowRecord window{w, config_.steps_per_window, config_.steps_per_window * *batch, 0.0};
    for (const double t : intervals) window.seconds += t;
    emit_(window_line(window));
    result.window_samples_per_second.push_back(static_cast<double>(window.samples) /
                                               window.seconds);
    step_seconds.insert(step_seconds.end(), intervals.begin(), intervals.end());
  }
  if (share) {
    // Untimed steps (the last step's loss slot reused) until every copy has timed its windows.
    share->arrive("done");
    const auto give_up = Clock::now() + kShareMeetingLimit;
    while (!share->all_arrived("done") && !stopping() && Clock::now() < give_up) {
      one_step(program, step - 1, inputs, graphs, host_feed);
    }
  }
  synchronize(device_);

  result.samples_per_second = summarize(result.window_samples_per_second).median;
  result.step_seconds = summarize(step_seconds);
  if (const auto peaks = memory_peaks(device_)) {
    result.peak_allocated_bytes = peaks->allocated_bytes;
    result.peak_reserved_bytes = peaks->reserved_bytes;
  }
  finish_data_parallel(result);
  fill_step_records(result, step, program);
  if (const at::Tensor& output = program.current_output(); output.defined()) {
    // One reduction, no temporaries: abs() in double was a copy 4x the logits' size (131.9 GiB
    // for GPT-2's at batch 344, where the run itself had just fit).
    result.output_mean_abs =
        at::linalg_vector_norm(output, 1, std::nullopt, false, at::kFloat).item<double>() /
        static_cast<double>(output.numel());
  }
  if (host_feed != nullptr) {
    const InputStats stats = feed.stats();
    result.input =
        InputEvidence{stats.wait_seconds, stats.wait_seconds_total, stats.batches,
                      stats.h2d_bytes,    stats.produce_seconds,    stats.unreadable_files};
  }
  write_diagnostics(program, step, inputs, host_feed, result);
  emit_(result_line(result));
  if (prints_summary()) print_summary(result);
  return result.partial ? kTorchExitInterrupted : kTorchExitOk;
}

void Run::finish_data_parallel(RunResult& result) {
  if (!data_parallel_) return;
  if (losses_.defined()) data_parallel_->average(losses_);
  data_parallel_->summarise(device_, result);
}

std::optional<std::string> Run::diagnostics_unusable() const {
  const DiagnosticsOptions& d = config_.diagnostics;
  if (d.trace_path.empty() && d.memory_snapshot_path.empty()) return std::nullopt;
  if (config_.task == Task::guard) {
    return std::string("--trace and --memory-snapshot explain train and infer runs, not the guard");
  }
  for (const std::string* path : {&d.trace_path, &d.memory_snapshot_path}) {
    if (path->empty()) continue;
    if (auto reason = unwritable_reason(*path)) return reason;
  }
  if (!d.memory_snapshot_path.empty()) return MemoryHistory::unavailable_reason(device_);
  return std::nullopt;
}

void Run::write_diagnostics(StepProgram& program, int64_t& step, const std::vector<Batch>& inputs,
                            StepInputs* feed, RunResult& result) {
  const DiagnosticsOptions& d = config_.diagnostics;
  std::vector<std::string> problems;
  if (!d.trace_path.empty() && !result.partial && !stopping()) {
    // Extra steps after the timed ones: the profiler's own cost stays out of the timing.
    KernelTrace trace(device_);
    for (int64_t i = 0; i < d.trace_steps; ++i, ++step) {
      one_step(program, step, inputs, switches_.cuda_graphs, feed);
    }
    synchronize(device_);
    if (auto problem = trace.finish(d.trace_path)) {
      problems.push_back("--trace: " + *problem);
    } else {
      result.trace_file = d.trace_path;
    }
  }
  if (memory_history_) {
    if (auto problem = memory_history_->save(d.memory_snapshot_path)) {
      problems.push_back("--memory-snapshot: " + *problem);
    } else {
      result.memory_snapshot_file = d.memory_snapshot_path;
    }
    memory_history_.reset();
  }
  for (const std::string& problem : problems) {
    std::fprintf(stderr, "gpuscope-torch: %s\n", problem.c_str());
    result.diagnostics_problem =
        result.diagnostics_problem ? *result.diagnostics_problem + "; " + problem : problem;
  }
}

std::string Run::history_after_failure() noexcept {
  if (!memory_history_) return "";
  try {
    const std::string& path = config_.diagnostics.memory_snapshot_path;
    auto problem = memory_history_->save(path);
    memory_history_.reset();
    return problem ? " (--memory-snapshot: " + *problem + ")"
                   : " (allocator history up to the failure in " + path + ")";
  } catch (const std::exception& e) {
    return std::string(" (--memory-snapshot failed: ") + e.what() + ")";
  }
}

// The summary's data-parallel part: ranks, backend, the all-reduces' dtype.
void print_data_parallel_summary(const RunResult& r) {
  if (!r.data_parallel) return;
  if (!r.data_parallel->grad_sync) {
    std::fprintf(stderr, "; %d ranks at once (%s), no gradient averaged (--grad-sync off)",
                 r.data_parallel->world_size, r.data_parallel->backend.c_str());
    return;
  }
  const bool copy_engine = r.data_parallel->all_reduce == "copy-engine";
  std::fprintf(stderr, "; data parallel x%d (%s), gradients all-reduced in %s%s%s",
               r.data_parallel->world_size, r.data_parallel->backend.c_str(),
               r.data_parallel->grad_comm.c_str(), copy_engine ? " by the copy engines" : "",
               r.data_parallel->optimizer_sharded ? ", AdamW sharded over the ranks" : "");
}

void Run::print_summary(const RunResult& r) const {
  if (r.task == Task::guard) {
    std::fprintf(stderr, "gpuscope-torch: guard %s %s batch %lld: %zu steps in %.1f s",
                 std::string(model_info(r.model).name).c_str(),
                 std::string(precision_mode_name(r.mode)).c_str(), static_cast<long long>(r.batch),
                 r.losses.size(), r.seconds.value_or(0));
    if (!r.losses.empty()) {
      std::fprintf(stderr, ", loss %.4f -> %.4f", r.losses.front(), r.losses.back());
    }
    print_data_parallel_summary(r);
    std::fprintf(stderr, "\n");
    return;
  }
  std::fprintf(
      stderr,
      "gpuscope-torch: %s %s %s batch %lld: %.1f samples/s, step %.2f ms "
      "(p10-p90 spread %.1f%%)",
      std::string(model_info(r.model).name).c_str(), std::string(task_name(r.task)).c_str(),
      std::string(precision_mode_name(r.mode)).c_str(), static_cast<long long>(r.batch),
      r.samples_per_second, r.step_seconds.median * 1e3, r.step_seconds.relative_spread * 100);
  if (r.peak_allocated_bytes) {
    std::fprintf(stderr, ", peak %.2f GiB allocated / %.2f GiB reserved",
                 static_cast<double>(*r.peak_allocated_bytes) / (1 << 30),
                 static_cast<double>(*r.peak_reserved_bytes) / (1 << 30));
  }
  if (!r.losses.empty())
    std::fprintf(stderr, ", loss %.4f -> %.4f", r.losses.front(), r.losses.back());
  print_data_parallel_summary(r);
  std::fprintf(stderr, "\n");
}

}  // namespace

int run_workload(const RunConfig& config, const LineSink& emit, const std::atomic<bool>* stop) {
  Run run(config, emit, stop);
  try {
    return run.execute();
  } catch (const c10::OutOfMemoryError& e) {
    emit(skipped_line("out_of_memory", e.what_without_backtrace() + run.history_after_failure()));
    return kTorchExitSkipped;
  } catch (const c10::Error& e) {
    emit(error_line("internal", e.what_without_backtrace() + run.history_after_failure()));
  } catch (const std::exception& e) {
    emit(error_line("internal", e.what() + run.history_after_failure()));
  }
  return kTorchExitFailed;
}

}  // namespace gpuscope::workloads
