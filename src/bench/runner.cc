// run_bench: each row a gpuscope-torch child under the sampler, the guard runs for training
// modes, the progress line, Ctrl-C, and the answers at the end.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "bench/progress.h"
#include "bench/row_telemetry.h"
#include "bench/torch_protocol.h"
#include "gpuscope/bench.h"
#include "gpuscope/clock.h"
#include "gpuscope/nvml.h"
#include "gpuscope/observe.h"

namespace gpuscope::bench {
namespace {

using Clock = std::chrono::steady_clock;

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
}

// What one child printed and how it ended.
struct ChildRun {
  detail::TorchOutput output;
  observe::Outcome end;  // end.start_status: the child could not be started
};

ChildRun run_child(const std::string& bin, const std::vector<std::string>& args, unsigned gpu,
                   const std::optional<Target>& mig, double timeout_s,
                   detail::RowSampler* sampler) {
  detail::TorchLineReader reader;
  observe::Options o;
  o.argv = {bin};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  // The sampled GPU is an NVML index; CUDA numbers GPUs the same way only in PCI bus order.
  // NVLink multicast (NVLS) stays off on the machines gpuscope is lent (data-parallel rows).
  o.env = {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"NCCL_NVLS_ENABLE", "0"}};
  if (mig) {
    // A MIG instance is reached through CUDA_VISIBLE_DEVICES only (as burn's workers are); it
    // is then the child's CUDA device 0.
    o.visible_devices = mig->uuid();
  } else if (gpu != 0) {
    o.argv.insert(o.argv.end(), {"--device", "cuda:" + std::to_string(gpu)});
  }
  if (sampler) o.clock = [sampler] { return sampler->now_s(); };
  o.on_json_line = [&reader](const observe::JsonLine& line) { reader.add(line); };
  o.stderr_mode = StderrMode::lines;
  o.stderr_tail_lines = 5;                      // the last lines, for reasons
  o.interrupts = observe::Interrupts::forward;  // Ctrl-C reaches us only, and we forward it once
  o.timeout_seconds = timeout_s;
  ChildRun run;
  run.end = observe::run(std::move(o));
  run.output = reader.output();
  return run;
}

int interrupts() {
  return InterruptForwarding::signals_received();
}

class BenchRun {
 public:
  BenchRun(const RunOptions& o, detail::RowSampler* sampler) : o_(o), sampler_(sampler) {}

  Row run_row(const RowSpec& spec, bool* interrupted) {
    Row row;
    row.spec = spec;
    const double t0 = sampler_ ? sampler_->now_s() : 0;
    // A data-parallel row runs on GPUs 0..gpus-1 (rank r on cuda:r): no --device.
    ChildRun child = run_child(o_.torch_bin, spec.torch_args(), spec.gpus > 1 ? 0 : o_.gpu, o_.mig,
                               o_.row_timeout_s, sampler_);
    *interrupted = child.end.interrupted;
    if (!child.end.started()) {
      row.skipped = true;
      row.skip_code = "failed";
      row.skip_reason = child.end.start_status.message();
      return row;
    }
    const ProcessExit& exit = child.end.exit;
    row.wall_seconds = exit.wall_seconds;
    detail::fill_row(child.output, exit.exit_code, exit.term_signal, exit.timed_out, *interrupted,
                     row);
    if (row.skipped && row.skip_code == "failed" && !child.end.stderr_tail.empty()) {
      row.skip_reason += " (stderr: " + child.end.stderr_tail.back() + ")";
    }
    if (sampler_ && !row.skipped) {
      const double t1 = sampler_->now_s();
      sampler_->wait_past(t1);
      // The GPUs the row ran on: a data-parallel row's ranks on 0..gpus-1, else the one chosen
      // (a MIG instance: the sampler's view of it, every sample).
      std::vector<unsigned> gpus;
      if (spec.gpus > 1) {
        for (int g = 0; g < spec.gpus; ++g) gpus.push_back(static_cast<unsigned>(g));
      } else if (!o_.mig) {
        gpus.push_back(o_.gpu);
      }
      detail::fill_row_telemetry(sampler_->samples(), child.output.windows, t0, t1, row,
                                 sampler_->whole_gpu(), gpus);
      sampler_->log().drop_before(t1);
    }
    return row;
  }

  // Runs the guard for a model and mode, once; its verdict comes with judged().
  // `extra` is the row's pass-through arguments (--device, ...).
  void guard(const std::string& model, const std::string& mode,
             const std::vector<std::string>& extra, std::optional<int> steps, bool* interrupted) {
    for (const GuardRun& g : guards_) {
      if (g.model == model && g.mode == mode) return;
    }
    GuardRun g;
    g.model = model;
    g.mode = mode;
    std::vector<std::string> args = {"--task", "guard", "--model", model,
                                     "--mode", mode,    "--seed",  std::to_string(o_.guard_seed)};
    if (steps) args.insert(args.end(), {"--guard-steps", std::to_string(*steps)});
    args.insert(args.end(), extra.begin(), extra.end());
    ChildRun child = run_child(o_.torch_bin, args, o_.gpu, o_.mig, o_.row_timeout_s, nullptr);
    *interrupted = child.end.interrupted;
    const bool partial = child.output.result && child.output.result->value("partial", false);
    if (!child.end.started()) {
      g.result = {Verdict::unknown, child.end.start_status.message()};
    } else if (child.end.exit.exit_code == 2 && !child.output.result) {
      g.result = {Verdict::unknown, "this gpuscope-torch has no --task guard (exit code 2)"};
    } else if (child.output.skipped_code) {
      g.result = {Verdict::unknown, "guard skipped: " + child.output.skipped_reason.value_or("")};
    } else if (!child.end.exit.success()) {
      g.result = {Verdict::unknown, "guard run failed: " + child.end.exit.describe()};
    } else if (partial) {
      // Not a curve to judge, nor to keep for a resumed run.
      g.result = {Verdict::unknown, "the guard run was stopped early (partial result)"};
    } else {
      g.curve = detail::guard_curve(child.output);
      if (!g.curve) g.result = {Verdict::unknown, "the guard run printed no loss values"};
    }
    guards_.push_back(std::move(g));
  }

  // An earlier attempt's guard runs (--resume): those with a loss curve are not run again.
  void reuse(const std::vector<GuardRun>& earlier) {
    for (const GuardRun& g : earlier) {
      if (g.curve) guards_.push_back(g);
    }
  }

  // The guard runs a training row needs: fp32 first (every other mode's curve is judged
  // against it), then its own mode.
  void guards_for(const RowSpec& spec, bool* interrupted) {
    if (spec.mode != "fp32") {
      guard(spec.model, "fp32", spec.extra_args, spec.guard_steps, interrupted);
    }
    if (!*interrupted) guard(spec.model, spec.mode, spec.extra_args, spec.guard_steps, interrupted);
  }

  // Verdicts once every curve is in: each mode against fp32 of the same model.
  std::vector<GuardRun> judged() {
    for (GuardRun& g : guards_) {
      if (!g.curve) continue;
      std::optional<LossCurve> fp32;
      for (const GuardRun& r : guards_) {
        if (r.model == g.model && r.mode == "fp32" && r.curve) fp32 = r.curve;
      }
      g.result = judge_guard(g.mode, *g.curve, fp32);
    }
    return guards_;
  }

 private:
  const RunOptions& o_;
  detail::RowSampler* sampler_;
  std::vector<GuardRun> guards_;
};

// The guard's verdicts onto the rows, and the answers: what a result needs once `rows` and
// `guards` are in (the final one, and every snapshot on the way).
void settle(BenchResult& result, bool guard_on) {
  for (Row& row : result.rows) {
    if (!guard_on || row.spec.task != "train") continue;
    for (const GuardRun& g : result.guards) {
      if (g.model == row.spec.model && g.mode == row.spec.mode) row.guard = g.result;
    }
    if (!row.guard && !row.skipped)
      row.guard = GuardResult{Verdict::unknown, "the guard did not run"};
  }
  result.answers = compute_answers(result.rows);
}

// Ok unless `earlier` was measured on another GPU than `now` (both known).
Status check_same_gpu(const BenchResult& earlier, const BenchResult& now) {
  if (!earlier.gpu_uuid || !now.gpu_uuid || *earlier.gpu_uuid == *now.gpu_uuid) return {};
  return Status(Code::invalid_argument,
                fmt::format("the file to resume was measured on {} ({}); GPU {} is {} ({})",
                            earlier.gpu_name.value_or("another GPU"), *earlier.gpu_uuid,
                            now.gpu_index, now.gpu_name.value_or("a GPU"), *now.gpu_uuid));
}

bool any_measured(const std::vector<Row>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.skipped; });
}

}  // namespace

Result<std::string> find_torch_bin(const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    if (executable(explicit_path)) return explicit_path;
    return Status(Code::not_found, "gpuscope-torch: '" + explicit_path + "' is not executable");
  }
  std::vector<std::string> tried;
  if (const char* env = std::getenv("GPUSCOPE_TORCH_BIN"); env && *env) {
    if (executable(env)) return std::string(env);
    tried.push_back(std::string(env) + " ($GPUSCOPE_TORCH_BIN)");
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto dir = self.parent_path();
    for (const auto& candidate :
         {dir / "gpuscope-torch", dir / ".." / ".." / "workloads" / "torch" / "gpuscope-torch"}) {
      const std::string path = candidate.lexically_normal().string();
      if (executable(path)) return path;
      tried.push_back(path);
    }
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  return Status(Code::not_found,
                "gpuscope-torch not found (looked at " + list +
                    "); build it (-DGPUSCOPE_BUILD_TORCH=ON) or pass --torch-bin PATH");
}

Result<BenchResult> run_bench(const nvml::Session* session, const std::vector<RowSpec>& rows,
                              const RunOptions& o, std::ostream& err) {
  if (rows.empty()) return Status(Code::invalid_argument, "the matrix has no rows");
  if (!executable(o.torch_bin)) {
    return Status(Code::not_found, "gpuscope-torch: '" + o.torch_bin + "' is not executable");
  }
  if (o.resume) GPUSCOPE_RETURN_IF_ERROR(check_resumable(*o.resume, rows, o));
  BenchResult result;
  result.planned = rows.size();
  result.torch_bin = o.torch_bin;
  result.gpu_index = o.gpu;
  result.started_unix_s = unix_now_s();
  result.guard_enabled = o.guard;
  result.guard_seed = o.guard_seed;

  std::unique_ptr<detail::RowSampler> sampler;
  if (session) {
    // Data-parallel rows run on GPUs 0..N-1: those are sampled too.
    unsigned most_gpus = 0;
    for (const RowSpec& r : rows) most_gpus = std::max(most_gpus, static_cast<unsigned>(r.gpus));
    auto started = detail::RowSampler::start(*session, o.gpu, o.mig, o.interval_ms,
                                             most_gpus > 1 ? most_gpus : 0);
    if (!started.ok()) {
      if (started.code() == Code::invalid_argument) return started.status();
      result.warnings.push_back("no telemetry (power, energy, activity): " +
                                started.status().message());
    } else {
      sampler = std::move(started).value();
      result.gpu_name = sampler->gpu().target.name;
      result.gpu_uuid = sampler->gpu().target.gpu_uuid;
    }
    if (o.mig) {
      // The rows' target is the instance: its name and UUID (a resume checks the UUID).
      result.gpu_name = o.mig->name;
      result.gpu_uuid = o.mig->uuid();
      result.warnings.push_back(fmt::format(
          "{} is a MIG instance: NVML measures power, energy, temperature, clocks and memory "
          "only for the whole GPU, shared with its other instances, so rows have no energy; SM "
          "and tensor activity are the instance's own (where the GPU has GPM)",
          o.mig->label()));
    }
    if (auto driver = session->driver_version(); driver.ok()) result.driver_version = *driver;
  } else {
    result.warnings.push_back("no telemetry (power, energy, activity): NVML is not available");
  }
  for (const auto& w : result.warnings) err << "gpuscope: warning: " << w << '\n';

  // The earlier attempt's finished rows, by position (rows run in matrix order).
  std::vector<std::optional<Row>> kept(rows.size());
  if (o.resume) {
    GPUSCOPE_RETURN_IF_ERROR(check_same_gpu(*o.resume, result));
    for (std::size_t i = 0; i < o.resume->rows.size(); ++i) {
      if (!row_is_final(o.resume->rows[i])) continue;
      kept[i] = o.resume->rows[i];
      kept[i]->spec = rows[i];
      ++result.resumed_rows;
    }
    result.started_unix_s = o.resume->started_unix_s;
    result.earlier_wall_seconds = o.resume->wall_seconds;
    if (!result.gpu_name) result.gpu_name = o.resume->gpu_name;
    if (!result.gpu_uuid) result.gpu_uuid = o.resume->gpu_uuid;
    if (!result.driver_version) result.driver_version = o.resume->driver_version;
    if (o.progress) {
      err << fmt::format("bench resuming: {} of {} rows kept from the earlier attempt\n",
                         result.resumed_rows, rows.size())
          << std::flush;
    }
  }

  // Interrupts are forwarded to the running child; another owner (a test) may hold them.
  auto forwarding = InterruptForwarding::install();
  const int interrupts_before = interrupts();

  std::vector<double> priors;
  for (const RowSpec& r : rows) priors.push_back(detail::prior_seconds(r));
  detail::Progress progress(std::move(priors));
  BenchRun run(o, sampler.get());
  if (o.resume) run.reuse(o.resume->guards);
  const Clock::time_point started = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };
  bool snapshot_failed = false;
  auto snapshot = [&]() -> Status {
    if (!o.on_snapshot) return {};
    BenchResult so_far = result;
    so_far.complete = false;
    // The earlier attempt's rows not reached yet stay in, so that being killed now loses none.
    for (std::size_t j = so_far.rows.size(); o.resume && j < o.resume->rows.size(); ++j) {
      so_far.rows.push_back(o.resume->rows[j]);
      so_far.rows.back().spec = rows[j];
    }
    so_far.guards = run.judged();
    so_far.wall_seconds = result.earlier_wall_seconds + elapsed();
    settle(so_far, o.guard);
    return o.on_snapshot(so_far);
  };
  GPUSCOPE_RETURN_IF_ERROR(snapshot());

  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (interrupts() > interrupts_before) {
      result.interrupted = true;
      break;
    }
    const RowSpec& spec = rows[i];
    bool interrupted = false;
    if (kept[i]) {
      // Its guard runs too, unless their curves came along (a guard stopped early did not).
      if (o.guard && spec.task == "train" && !kept[i]->skipped) run.guards_for(spec, &interrupted);
      progress.finished(i, kept[i]->wall_seconds);
      result.rows.push_back(std::move(*kept[i]));
    } else {
      if (o.progress) err << progress.line(i, spec.label(), elapsed()) << '\n' << std::flush;
      const double row_started = elapsed();
      Row row = run.run_row(spec, &interrupted);
      if (!interrupted && o.guard && spec.task == "train" && !row.skipped) {
        run.guards_for(spec, &interrupted);
      }
      if (row.skipped && o.progress) {
        err << "bench   skipped: " << row.skip_reason << '\n' << std::flush;
      }
      // No CUDA device is the machine's state, not the row's: every row after it would be
      // skipped the same way, so a bench that has measured nothing ends here.
      if (row.skipped && row.skip_code == "no_device" && !any_measured(result.rows)) {
        return Status(Code::no_device,
                      fmt::format("gpuscope-torch found no CUDA device: {}", row.skip_reason));
      }
      result.rows.push_back(std::move(row));
      progress.finished(i, elapsed() - row_started);
    }
    if (interrupted) {
      result.interrupted = true;
      break;
    }
    // A failure is a warning, said once: the rows go on.
    if (Status written = snapshot(); !written.ok() && !snapshot_failed) {
      err << "gpuscope: warning: " << written.message() << '\n';
      snapshot_failed = true;
    }
  }
  sampler.reset();
  result.guards = run.judged();
  settle(result, o.guard);
  result.wall_seconds = result.earlier_wall_seconds + elapsed();
  if (o.progress) {
    err << fmt::format("bench {} {} of {} rows in {}{}\n",
                       result.interrupted ? "interrupted after" : "done:", result.rows.size(),
                       result.planned, detail::format_duration(elapsed()),
                       result.resumed_rows > 0
                           ? fmt::format(" ({} kept from the earlier attempt)", result.resumed_rows)
                           : "")
        << std::flush;
  }
  return result;
}

}  // namespace gpuscope::bench
