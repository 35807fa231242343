// The headline answers of a study, from its step outputs: achieved vs datasheet compute per
// precision, the fastest / most efficient / smallest mode per model, and the problems found.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "gpuscope/bench.h"
#include "gpuscope/burn_report.h"
#include "gpuscope/info_report.h"
#include "gpuscope/precision.h"
#include "gpuscope/study.h"
#include "study/json_file.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using analysis::Finding;
using analysis::Severity;

// Pinned host<->device copies below this share of the link's rate are "low".
constexpr double kHostLinkShare = 0.6;

std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

// The info step's document, read by its one reader (info_from_json). One that does not read
// back counts as absent: the answers that need it are left out.
std::optional<SystemInfo> read_info(const json* info) {
  if (info == nullptr) return std::nullopt;
  auto read = info_from_json(*info);
  if (!read.ok()) return std::nullopt;
  return std::move(*read);
}

const GpuInfo* info_gpu(const std::optional<SystemInfo>& info, int index) {
  if (!info) return nullptr;
  for (const GpuInfo& g : info->gpus) {
    if (static_cast<int>(g.index) == index) return &g;
  }
  return nullptr;
}

using detail::read_json;

std::optional<ModeAnswer> mode_answer(const json& j) {
  if (!j.is_object()) return std::nullopt;
  ModeAnswer a;
  a.mode = text(j, "mode");
  a.samples_per_second = number(j, "samples_per_second");
  a.joules_per_sample = number(j, "joules_per_sample");
  a.peak_allocated_bytes = number(j, "peak_allocated_bytes");
  if (j.contains("tied_with") && j["tied_with"].is_array()) {
    for (const json& mode : j["tied_with"]) {
      if (mode.is_string()) a.tied_with.push_back(mode.get<std::string>());
    }
  }
  return a;
}

Finding problem(std::optional<int> gpu, Severity severity, std::string id, std::string title) {
  return {.id = std::move(id), .severity = severity, .title = std::move(title), .gpu = gpu};
}

std::string gib(std::optional<double> bytes) {
  return bytes ? fmt::format("{:.1f} GiB", *bytes / (1024.0 * 1024 * 1024)) : "memory n/a";
}

void add_host_link_problems(const burn::TargetResult& target, int gpu, const GpuInfo* g,
                            Headlines& out) {
  if (g == nullptr || target.host_link.empty()) return;
  // The link's own best: the lower of what the GPU and the slot can do.
  const std::optional<unsigned> gen = g->pcie_gen_max;
  const std::optional<unsigned> width = g->pcie_width_max;
  if (!gen || !width) return;
  auto expected = pcie_link_bytes_per_s(static_cast<int>(*gen), static_cast<int>(*width));
  if (!expected) return;
  // Copies are measured over a range of sizes; the link is judged by the best of them (small
  // copies are latency, not bandwidth).
  std::map<std::string, double> best;  // pinned rate by direction
  for (const burn::HostLinkRow& row : target.host_link) {
    if (row.memory != "pinned") continue;
    if (row.direction != "h2d" && row.direction != "d2h") continue;
    best[row.direction] = std::max(best[row.direction], row.bytes_per_second);
  }
  for (const auto& [direction, rate] : best) {
    if (rate >= kHostLinkShare * *expected) continue;
    out.problems.push_back(problem(
        gpu, Severity::warning, "host_link_low",
        fmt::format("GPU {}: pinned {} copies reach {:.1f} GB/s at best, {:.0f}% of what a PCIe "
                    "Gen{} x{} link carries (~{:.1f} GB/s): check the slot, the riser, and the "
                    "NUMA node the process runs on",
                    gpu, direction, rate / 1e9, 100 * rate / *expected, *gen, *width,
                    *expected / 1e9)));
  }
}

// A burn row as the rules read it.
analysis::GemmSpan gemm_span(const burn::PrecisionRow& row, const ComputeAnswer& answer) {
  analysis::GemmSpan span;
  span.precision = answer.precision;
  const bool timed = row.flop_per_second_median.has_value();  // burn counted its span, errors
  if (timed) span.span_s = row.span_seconds;
  for (const burn::ThrottleTime& t : row.throttle) span.throttle_s[t.reason] = t.seconds;
  span.temperature_max_c = row.temperature_max_c;
  span.fraction_of_peak = answer.fraction;
  span.peak_flop_per_s = answer.datasheet_flop_per_s;
  if (timed) span.errors = static_cast<double>(row.errors.total());
  if (row.status != burn::RowStatus::measured) span.skipped = answer.note;
  return span;
}

}  // namespace

std::string problem_text(const analysis::Finding& problem) {
  // A finding of the shared rules names what it holds for; the study's own say it in the title.
  if (problem.subjects.empty()) return analysis::text(problem);
  return fmt::format("{}{} ({})", problem.gpu ? fmt::format("GPU {} ", *problem.gpu) : "",
                     analysis::text(problem), analysis::subjects_text(problem));
}

std::optional<double> pcie_link_bytes_per_s(int generation, int width) {
  // Per lane and direction, after line encoding (8b/10b up to Gen2, 128b/130b from Gen3), less
  // the ~15% that TLP headers and flow control take in practice at large copy sizes.
  double per_lane = 0;
  switch (generation) {
    case 1:
      per_lane = 0.25e9;
      break;
    case 2:
      per_lane = 0.5e9;
      break;
    case 3:
      per_lane = 0.985e9;
      break;
    case 4:
      per_lane = 1.969e9;
      break;
    case 5:
      per_lane = 3.938e9;
      break;
    case 6:
      per_lane = 7.563e9;
      break;
    default:
      return std::nullopt;
  }
  if (width <= 0) return std::nullopt;
  return per_lane * width * 0.85;
}

void add_info_problems(const json& document, const std::vector<int>& gpus, Headlines& out) {
  const std::optional<SystemInfo> info = read_info(&document);
  if (!info) return;
  for (const GpuFailure& f : info->failures) {
    const int index = static_cast<int>(f.index);
    out.problems.push_back(problem(
        index, Severity::error, "gpu_failure",
        fmt::format("GPU {} did not answer: {}", index,
                    f.status.message().empty() ? f.status.to_string() : f.status.message())));
  }
  for (int gpu : gpus) {
    const GpuInfo* g = info_gpu(info, gpu);
    if (g == nullptr) continue;
    // As doubles: the shares below are printed with decimals.
    const auto as_double = [](std::optional<unsigned> v) -> std::optional<double> {
      if (!v) return std::nullopt;
      return static_cast<double>(*v);
    };
    const auto width = as_double(g->pcie_width_current), width_max = as_double(g->pcie_width_max);
    const auto gen = as_double(g->pcie_gen_current), gen_max = as_double(g->pcie_gen_max);
    if (width && width_max && *width < *width_max) {
      out.problems.push_back(
          problem(gpu, Severity::warning, "pcie_link_degraded",
                  fmt::format("GPU {}: the PCIe link runs x{} of x{} lanes: reseat the card or try "
                              "another slot; host<->device copies are limited to {:.0f}%",
                              gpu, *width, *width_max, 100 * *width / *width_max)));
    }
    if (gen && gen_max && *gen < *gen_max) {
      out.problems.push_back(
          problem(gpu, Severity::info, "pcie_link_slow_generation",
                  fmt::format("GPU {}: the PCIe link ran at Gen{} of Gen{} when read (GPUs lower "
                              "the link speed when idle; compare with the host-link bandwidth "
                              "measured)",
                              gpu, *gen, *gen_max)));
    }
    if (auto gpu_gen = as_double(g->pcie_gen_gpu_max); gpu_gen && gen_max && *gen_max < *gpu_gen) {
      out.problems.push_back(problem(gpu, Severity::warning, "pcie_slot_slower_than_gpu",
                                     fmt::format("GPU {} can do PCIe Gen{} but its slot only Gen{}",
                                                 gpu, *gpu_gen, *gen_max)));
    }
  }
}

void add_burn_answers(const json& burn_document, const json* info_document, Headlines& out) {
  // burn's document, read by its one reader (burn_from_json); one that does not read back
  // gives no answers, and says why.
  const Result<burn::Report> burn = burn_from_json(burn_document);
  if (!burn.ok()) {
    out.problems.push_back(
        problem(std::nullopt, Severity::warning, "burn_unreadable",
                fmt::format("burn's results do not read back: {}", burn.status().message())));
    return;
  }
  const std::optional<SystemInfo> info = read_info(info_document);
  for (const burn::TargetResult& target : burn->targets) {
    const int gpu = static_cast<int>(target.target.gpu_index);
    const GpuInfo* g = info_gpu(info, gpu);
    std::vector<analysis::GemmSpan> spans;
    for (const burn::PrecisionRow& row : target.gemm) {
      ComputeAnswer a;
      a.gpu = gpu;
      a.precision = precision_name(row.precision);
      a.achieved_flop_per_s = row.flop_per_second_median;
      a.fraction = row.fraction_of_peak;
      if (g != nullptr && g->peak) {
        if (auto it = g->peak->flops_per_s.find(row.precision); it != g->peak->flops_per_s.end()) {
          a.datasheet_flop_per_s = it->second;
        }
      }
      if (!a.datasheet_flop_per_s && a.achieved_flop_per_s && a.fraction && *a.fraction > 0) {
        a.datasheet_flop_per_s = *a.achieved_flop_per_s / *a.fraction;
      }
      if (!a.fraction && a.achieved_flop_per_s && a.datasheet_flop_per_s) {
        a.fraction = *a.achieved_flop_per_s / *a.datasheet_flop_per_s;
      }
      if (row.status != burn::RowStatus::measured) {
        a.note = burn::row_status_name(row.status) + (row.note.empty() ? "" : ": " + row.note);
      }
      out.compute.push_back(a);
      spans.push_back(gemm_span(row, a));
    }
    // The same rules, thresholds and words as the report's (gpuscope/analysis.h).
    const std::optional<double> slowdown =
        g != nullptr ? g->temperature_slowdown_c : std::optional<double>();
    for (Finding& f : analysis::burn_findings(spans, gpu, slowdown)) {
      if (f.id == "not_measured") continue;  // the compute answers say so (note)
      out.problems.push_back(std::move(f));
    }
    for (const burn::WorkerError& e : target.errors) {
      if (e.code == "verification_failed") continue;  // reported per precision above
      out.problems.push_back(problem(gpu, Severity::error, e.code.empty() ? "burn_error" : e.code,
                                     fmt::format("GPU {}: burn: {}", gpu, e.message)));
    }
    if (!target.failure.empty()) {
      out.problems.push_back(problem(gpu, Severity::error, "burn_failed",
                                     fmt::format("GPU {}: burn: {}", gpu, target.failure)));
    }
    add_host_link_problems(target, gpu, g, out);
  }
}

// The answers are computed again from the rows, so a study recorded by an older gpuscope (the
// shipped sample among them) is answered by today's rules; a document that does not read back
// keeps the answers it was written with.
json bench_answers(const json& bench) {
  auto result = bench::bench_from_json(bench);
  if (!result.ok()) return bench.value("answers", json::array());
  return bench::bench_to_json(*result)["answers"];  // read back, the answers are recomputed
}

// A mode whose loss the convergence guard found diverging is a problem to know before training
// in it, as the report's findings say.
void add_guard_problems(const json& bench_document, int gpu, Headlines& out) {
  auto result = bench::bench_from_json(bench_document);
  if (!result.ok()) return;
  for (const bench::GuardRun& g : result->guards) {
    if (!bench::verdict_is_bad(g.result.verdict)) continue;
    out.problems.push_back(
        problem(gpu, Severity::warning, "convergence_guard",
                fmt::format("{} {} training: {} ({}); do not train in this mode as it is", g.model,
                            g.mode, g.result.reason, bench::verdict_name(g.result.verdict))));
  }
}

void add_bench_answers(const json& bench_document, int gpu, Headlines& out) {
  if (bench_document.is_object() &&
      bench_document.value("kind", json()) == "gpuscope.bench.share") {
    if (!bench_document.contains("shares") || !bench_document["shares"].is_array()) return;
    for (const json& share : bench_document["shares"]) {
      if (!share.is_object()) continue;
      out.sharing.push_back(
          fmt::format("GPU {} {}: {}", gpu, text(share, "workload"), text(share, "answer")));
    }
    return;
  }
  add_guard_problems(bench_document, gpu, out);
  const json answers = bench_answers(bench_document);
  if (!answers.is_array()) return;
  for (const json& a : answers) {
    ModelAnswer m;
    m.gpu = gpu;
    m.model = text(a, "model");
    m.task = text(a, "task");
    if (a.contains("fastest")) m.fastest = mode_answer(a["fastest"]);
    if (a.contains("most_efficient")) m.most_efficient = mode_answer(a["most_efficient"]);
    if (a.contains("smallest_memory")) m.smallest_memory = mode_answer(a["smallest_memory"]);
    out.models.push_back(std::move(m));
  }
}

void add_sweep_answers(const json& sweep_document, int gpu, Headlines& out) {
  if (!sweep_document.is_object() || !sweep_document.contains("workloads") ||
      !sweep_document["workloads"].is_array()) {
    return;
  }
  for (const json& w : sweep_document["workloads"]) {
    if (!w.is_object()) continue;
    std::string answer;
    if (w.contains("recommendation") && w["recommendation"].is_object()) {
      answer = text(w["recommendation"], "text");
    } else if (w.contains("skipped") && w["skipped"].is_string()) {
      answer = "skipped: " + w["skipped"].get<std::string>();
    } else {
      answer = "no answer (no 90 % knee measured)";
    }
    out.power.push_back(fmt::format("GPU {} {}: {}", gpu, text(w, "label"), answer));
  }
}

Headlines compute_headlines(const State& state, const fs::path& dir) {
  Headlines out;
  std::optional<json> info;
  if (auto it = state.steps.find("info");
      it != state.steps.end() && !it->second.json_path.empty()) {
    info = read_json(dir / it->second.json_path);
  }
  std::vector<int> gpus;
  for (const Step& step : state.plan) {
    if (step.gpu && (gpus.empty() || gpus.back() != *step.gpu)) gpus.push_back(*step.gpu);
  }
  if (info) add_info_problems(*info, gpus, out);
  for (const Step& step : state.plan) {
    auto it = state.steps.find(step.id);
    if (it == state.steps.end()) continue;
    const StepRecord& r = it->second;
    if (r.status == StepStatus::failed) {
      out.problems.push_back(
          problem(step.gpu, Severity::error, "step_failed",
                  fmt::format("step {} failed: {}{}", step.id, r.message,
                              r.log_path.empty() ? "" : " (log: " + r.log_path + ")")));
    } else if (r.status == StepStatus::skipped && !step.skip_reason) {
      out.problems.push_back(problem(step.gpu, Severity::info, "step_skipped",
                                     fmt::format("step {} skipped: {}", step.id, r.message)));
    }
    if (r.json_path.empty()) continue;
    auto doc = read_json(dir / r.json_path);
    if (!doc) continue;
    if (step.kind == StepKind::burn) add_burn_answers(*doc, info ? &*info : nullptr, out);
    if (step.kind == StepKind::bench) add_bench_answers(*doc, step.gpu.value_or(0), out);
    if (step.kind == StepKind::sweep) add_sweep_answers(*doc, step.gpu.value_or(0), out);
  }
  return out;
}

namespace {

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json();
}

json mode_json(const std::optional<ModeAnswer>& m) {
  if (!m) return json();
  return {{"mode", m->mode},
          {"samples_per_second", optional_number(m->samples_per_second)},
          {"joules_per_sample", optional_number(m->joules_per_sample)},
          {"peak_allocated_bytes", optional_number(m->peak_allocated_bytes)},
          {"tied_with", m->tied_with}};
}

std::string mode_text(const std::optional<ModeAnswer>& m, bool energy) {
  if (!m) return "n/a";
  std::string t = m->mode;
  if (m->samples_per_second) t += fmt::format(" {:.0f} samples/s", *m->samples_per_second);
  if (energy && m->joules_per_sample) t += fmt::format(", {:.3g} J/sample", *m->joules_per_sample);
  t += ", " + gib(m->peak_allocated_bytes);
  for (std::size_t i = 0; i < m->tied_with.size(); ++i) {
    t += (i == 0 ? "; a tie with " : ", ") + m->tied_with[i];
  }
  if (!m->tied_with.empty()) t += " (within the measured spread)";
  return t;
}

}  // namespace

json summary_to_json(const State& state, const Headlines& h, const fs::path& dir,
                     bool interrupted) {
  json steps = json::array();
  bool any_failed = false;
  for (const Step& step : state.plan) {
    json s = {{"id", step.id}, {"kind", step_kind_name(step.kind)}, {"title", step.title}};
    s["gpu"] = step.gpu ? json(*step.gpu) : json();
    auto it = state.steps.find(step.id);
    if (it == state.steps.end()) {
      s["status"] = "pending";
    } else {
      const StepRecord& r = it->second;
      s["status"] = step_status_name(r.status);
      s["duration_s"] = r.duration_seconds;
      s["message"] = r.message;
      s["exit_code"] = r.exit_code ? json(*r.exit_code) : json();
      s["json"] = r.json_path;
      s["log"] = r.log_path;
      any_failed = any_failed || r.status == StepStatus::failed;
    }
    steps.push_back(s);
  }
  json compute = json::array();
  for (const ComputeAnswer& c : h.compute) {
    compute.push_back({{"gpu", c.gpu},
                       {"precision", c.precision},
                       {"achieved_flop_per_s", optional_number(c.achieved_flop_per_s)},
                       {"datasheet_flop_per_s", optional_number(c.datasheet_flop_per_s)},
                       {"fraction", optional_number(c.fraction)},
                       {"note", c.note}});
  }
  json models = json::array();
  for (const ModelAnswer& m : h.models) {
    models.push_back({{"gpu", m.gpu},
                      {"model", m.model},
                      {"task", m.task},
                      {"fastest", mode_json(m.fastest)},
                      {"most_efficient", mode_json(m.most_efficient)},
                      {"smallest_memory", mode_json(m.smallest_memory)}});
  }
  json problems = json::array();
  for (const Finding& p : h.problems) {
    // "code" and "text" as summary schema 1 had them, beside the finding's own fields.
    json entry = analysis::to_json(p);
    entry["gpu"] = p.gpu ? json(*p.gpu) : json();
    entry["code"] = p.id;
    entry["text"] = problem_text(p);
    problems.push_back(std::move(entry));
  }
  return {{"schema_version", kSummarySchemaVersion},
          {"kind", "gpuscope.study"},
          {"dir", dir.string()},
          {"status",
           interrupted ? "interrupted" : (any_failed ? "finished_with_failures" : "finished")},
          {"level", level_name(state.options.level)},
          {"note", state.note},
          {"report", interrupted ? json() : json((dir / "report.html").string())},
          {"store", interrupted ? json() : json((dir / "gpuscope.db").string())},
          {"steps", steps},
          {"answers",
           {{"compute", compute},
            {"models", models},
            {"sharing", h.sharing},
            {"power", h.power},
            {"problems", problems}}}};
}

std::string headlines_text(const State& state, const Headlines& h) {
  std::ostringstream out;
  if (!state.note.empty()) out << state.note << "\n\n";
  out << "Compute achieved vs datasheet (burn, dense GEMM):\n";
  if (h.compute.empty()) out << "  (no burn results)\n";
  for (const ComputeAnswer& c : h.compute) {
    if (!c.achieved_flop_per_s) {
      out << fmt::format("  GPU {} {:<5} {}\n", c.gpu, c.precision,
                         c.note.empty() ? "n/a" : c.note);
      continue;
    }
    out << fmt::format("  GPU {} {:<5} {:>8.1f} T{}", c.gpu, c.precision,
                       *c.achieved_flop_per_s / 1e12, rate_unit(c.precision));
    if (c.datasheet_flop_per_s) {
      out << fmt::format(" of {:.1f} datasheet", *c.datasheet_flop_per_s / 1e12);
    }
    if (c.fraction) out << fmt::format(" ({:.0f}%)", 100 * *c.fraction);
    out << '\n';
  }
  out << "\nModels (bench):\n";
  if (h.models.empty()) out << "  (no bench results)\n";
  for (const ModelAnswer& m : h.models) {
    out << fmt::format("  GPU {} {} {}:\n", m.gpu, m.model, m.task);
    out << fmt::format("    fastest:        {}\n", mode_text(m.fastest, false));
    out << fmt::format("    most efficient: {}\n",
                       m.most_efficient && m.most_efficient->joules_per_sample
                           ? mode_text(m.most_efficient, true)
                           : "n/a (no energy measured)");
    out << fmt::format("    least memory:   {}\n", mode_text(m.smallest_memory, false));
  }
  if (!h.sharing.empty()) {
    out << "\nSharing one GPU (bench --share):\n";
    for (const std::string& answer : h.sharing) out << "  " << answer << '\n';
  }
  if (!h.power.empty()) {
    out << "\nPower limit (sweep: the limit that keeps 90 % of the speed):\n";
    for (const std::string& answer : h.power) out << "  " << answer << '\n';
  }
  out << "\nProblems found:\n";
  bool none = true;
  for (const Finding& p : h.problems) {
    if (p.severity == Severity::info) continue;
    none = false;
    out << fmt::format("  [{}] {}\n", analysis::severity_name(p.severity), problem_text(p));
  }
  if (none) out << "  none\n";
  for (const Finding& p : h.problems) {
    if (p.severity == Severity::info) out << fmt::format("  note: {}\n", problem_text(p));
  }
  return out.str();
}

}  // namespace gpuscope::study
