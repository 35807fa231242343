#include "json_protocol.h"

#include "common/enum_names.h"
#include "json_writer.h"

namespace gpuscope::workloads {
namespace {

JsonObject header(std::string_view type) {
  JsonObject o;
  o.add("v", kProtocolVersion).add("type", type);
  return o;
}

// The first entry is the name of a value missing from the table.
constexpr gpuscope::detail::EnumName<ProbeOutcome> kProbeOutcomeNames[] = {
    {ProbeOutcome::failed, "failed"},
    {ProbeOutcome::fits, "fits"},
    {ProbeOutcome::out_of_memory, "out_of_memory"},
};

JsonObject device_object(const DeviceInfo& d) {
  JsonObject o;
  o.add("type", d.is_cuda() ? "cuda" : "cpu").add("name", d.name);
  if (d.is_cuda()) {
    o.add("index", static_cast<int64_t>(d.device.index()))
        .add("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor))
        .add("sm_count", d.sm_count)
        .add("total_memory_bytes", d.total_memory_bytes);
  }
  return o;
}

}  // namespace

std::string start_line(const StartRecord& r) {
  const RunConfig& c = *r.config;
  const ModelInfo& m = model_info(c.model);
  JsonObject options;
  options.add("cuda_graphs", r.switches.cuda_graphs)
      .add("fused_adamw", c.fused_adamw)
      .add("cudnn_benchmark", c.cudnn_benchmark)
      .add("channels_last", r.switches.channels_last)
      .add("sdpa", sdpa_backend_name(c.sdpa))
      .add("gelu_epilogue", r.switches.gelu_epilogue)
      .add("residual_epilogue", r.switches.residual_epilogue)
      .add("own_layer_norm", r.switches.own_layer_norm)
      .add("patch_gemm", r.switches.patch_gemm)
      .add("fused_loss", r.switches.fused_loss)
      .add("warmup_steps", c.warmup_steps)
      .add("windows", c.windows)
      .add("steps_per_window", c.steps_per_window)
      .add("input_sets", input_sets_for(c))
      .add("seq_len", c.shape.seq_len)
      .add("image_size", c.model == ModelKind::vit_b16 ? int64_t{224} : c.shape.image_size)
      .add("lr", c.adamw.lr)
      .add("weight_decay", c.adamw.weight_decay)
      .add("seed", static_cast<int64_t>(c.seed))
      .add("input", input_kind_name(c.input.kind))
      .add("loader_workers", c.input.loader_workers)
      .add("pinned", r.pinned)
      .add("non_blocking", c.input.non_blocking)
      .add("data", c.input.data.empty() ? std::optional<std::string_view>()
                                        : std::optional<std::string_view>(c.input.data));
  if (c.task == Task::guard) options.add("guard_steps", c.guard_steps);
  JsonObject o = header("start");
  o.add("model", m.name)
      .add("python_model", m.python_name)
      .add("task", task_name(c.task))
      .add("mode", precision_mode_name(c.mode))
      .add("batch", c.batch)
      .add("batch_auto", c.batch_auto)
      .add("parameters", r.parameters)
      .add("device", device_object(*r.device))
      .add("torch_version", r.torch_version)
      .add("options", options)
      .add_raw("notes", json_array(r.notes, json_quote));
  if (c.launch.distributed()) {
    o.add("world_size", c.launch.world_size)
        .add("local_rank", c.launch.local_rank)
        .add("launcher", c.launch.launcher);
  }
  return o.str();
}

std::string batch_probe_line(const BatchTry& attempt) {
  JsonObject o = header("batch_probe");
  o.add("batch", attempt.batch)
      .add("fits", attempt.outcome == ProbeOutcome::fits)
      .add("outcome",
           detail::name_in(kProbeOutcomeNames, attempt.outcome, kProbeOutcomeNames[0].name));
  if (!attempt.message.empty()) o.add("message", attempt.message);
  return o.str();
}

std::string window_line(const WindowRecord& r) {
  JsonObject o = header("window");
  o.add("window", r.index)
      .add("steps", r.steps)
      .add("samples", r.samples)
      .add("seconds", r.seconds)
      .add("samples_per_second", r.seconds > 0 ? static_cast<double>(r.samples) / r.seconds : 0.0);
  return o.str();
}

std::string result_line(const RunResult& r) {
  const Summary& s = r.step_seconds;
  JsonObject steps;
  steps.add("count", static_cast<int64_t>(s.count))
      .add("median", s.median)
      .add("mean", s.mean)
      .add("min", s.min)
      .add("max", s.max)
      .add("p10", s.p10)
      .add("p90", s.p90)
      .add("relative_spread", s.relative_spread);
  JsonObject o = header("result");
  o.add("model", model_info(r.model).name)
      .add("task", task_name(r.task))
      .add("mode", precision_mode_name(r.mode))
      .add("batch", r.batch)
      .add("batch_searched", r.batch_searched)
      .add("samples_per_second", r.samples_per_second)
      .add("window_samples_per_second", std::span<const double>(r.window_samples_per_second))
      .add("step_seconds", steps)
      .add("peak_allocated_bytes", r.peak_allocated_bytes)
      .add("peak_reserved_bytes", r.peak_reserved_bytes);
  if (is_training(r.task)) {
    JsonObject loss;
    loss.add("first", r.losses.empty() ? std::optional<double>() : r.losses.front())
        .add("last", r.losses.empty() ? std::optional<double>() : r.losses.back())
        .add("values", std::span<const double>(r.losses));
    o.add("loss", loss);
  } else {
    o.add_null("loss");
  }
  if (!r.loss_scales.empty()) {
    o.add("loss_scale_values", std::span<const double>(r.loss_scales));
  } else {
    o.add_null("loss_scale_values");
  }
  if (r.input) {
    o.add("input_wait_seconds", r.input->wait_seconds)
        .add("input_wait_seconds_total", r.input->wait_seconds_total)
        .add("loader_batches", r.input->batches)
        .add("loader_produce_seconds", r.input->produce_seconds)
        .add("h2d_bytes", r.input->h2d_bytes)
        .add("unreadable_files", r.input->unreadable_files);
  } else {
    o.add_null("input_wait_seconds").add_null("h2d_bytes");
  }
  o.add("seconds", r.seconds)
      .add("loss_scale", r.loss_scale)
      .add("skipped_steps", r.skipped_steps)
      .add("output_mean_abs", r.output_mean_abs)
      .add("warmup_seconds", r.warmup_seconds)
      .add("capture_seconds", r.capture_seconds)
      .add("partial", r.partial);
  // Only when asked, so that a plain run's line stays as it was.
  if (r.trace_file) o.add("trace_file", *r.trace_file);
  if (r.memory_snapshot_file) o.add("memory_snapshot_file", *r.memory_snapshot_file);
  if (r.diagnostics_problem) o.add("diagnostics_problem", *r.diagnostics_problem);
  if (const auto& dp = r.data_parallel) {
    JsonObject d;
    d.add("world_size", dp->world_size)
        .add("backend", dp->backend)
        .add("buckets", dp->buckets)
        .add("bucket_cap_bytes", dp->bucket_cap_bytes)
        .add("bucket_views", dp->bucket_views)
        .add("grad_comm", dp->grad_comm)
        .add("all_reduce", dp->all_reduce)
        .add("all_reduce_fallback", dp->all_reduce_fallback)
        .add("bucket_step", dp->bucket_step)
        .add("optimizer_sharded", dp->optimizer_sharded)
        .add("grad_sync", dp->grad_sync)
        .add("global_batch", dp->global_batch)
        .add("rank_samples_per_second", dp->rank_samples_per_second)
        .add("collective_seconds_per_step", dp->collective_seconds_per_step)
        .add("exposed_seconds_per_step", dp->exposed_seconds_per_step)
        .add("overlap_fraction", dp->overlap_fraction);
    if (dp->ranks_json.empty()) {
      d.add_null("ranks");
    } else {
      d.add_raw("ranks", dp->ranks_json);
    }
    o.add("data_parallel", d);
  }
  return o.str();
}

std::string rank_record_json(int rank, int local_rank, const DeviceInfo& device,
                             const RunResult& r) {
  JsonObject o;
  o.add("rank", rank)
      .add("local_rank", local_rank)
      .add("device_index", device.is_cuda() ? static_cast<int64_t>(device.device.index())
                                            : static_cast<int64_t>(-1))
      .add("samples_per_second",
           r.data_parallel ? r.data_parallel->rank_samples_per_second : r.samples_per_second)
      .add("peak_allocated_bytes", r.peak_allocated_bytes)
      .add("peak_reserved_bytes", r.peak_reserved_bytes);
  if (r.data_parallel) {
    o.add("collective_seconds_per_step", r.data_parallel->collective_seconds_per_step)
        .add("exposed_seconds_per_step", r.data_parallel->exposed_seconds_per_step);
  }
  return o.str();
}

std::string skipped_line(std::string_view code, std::string_view reason) {
  return header("skipped").add("code", code).add("reason", reason).str();
}

std::string error_line(std::string_view code, std::string_view message) {
  return header("error").add("code", code).add("message", message).str();
}

std::string done_line(int exit_code) {
  return header("done").add("ok", exit_code == kTorchExitOk).add("exit_code", exit_code).str();
}

}  // namespace gpuscope::workloads
