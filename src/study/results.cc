// A study's results: the step outputs gathered into one results store and one report page, and
// the sample study that ships with gpuscope.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpuscope/files.h"
#include "gpuscope/report.h"
#include "gpuscope/reporter.h"
#include "gpuscope/store.h"
#include "gpuscope/study.h"
#include "gpuscope/version.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;

report::Value optional_value(const std::optional<double>& v) {
  return v ? report::Value(*v) : report::Value();
}

report::Section study_section(const State& state, const Headlines& h) {
  report::Section section;
  section.key = "study";
  section.title = "Study";
  section.intro = fmt::format(
      "What `gpuscope study` ran on this machine ({} level), in order, and the answers it drew "
      "from the results. Each step ran as its own process; a step that failed or was skipped "
      "says why, and the study went on.",
      level_name(state.options.level));
  if (!state.note.empty()) section.blocks.push_back(report::Paragraph{state.note});

  report::Table steps;
  steps.key = "study_steps";
  steps.title = "Steps";
  steps.columns = {{"step", "step", report::Unit::none},
                   {"status", "status", report::Unit::none},
                   {"duration_s", "duration", report::Unit::seconds},
                   {"estimate_s", "estimate", report::Unit::seconds},
                   {"message", "note", report::Unit::none}};
  for (const Step& step : state.plan) {
    auto it = state.steps.find(step.id);
    std::vector<report::Value> row = {
        step.title, std::string("pending"), report::Value(),
        step.skip_reason ? report::Value() : report::Value(step.estimate_seconds), std::string()};
    if (it != state.steps.end()) {
      row[1] = std::string(step_status_name(it->second.status));
      if (it->second.status != StepStatus::skipped) row[2] = it->second.duration_seconds;
      row[4] = it->second.message;
    }
    steps.rows.push_back(std::move(row));
  }
  section.blocks.push_back(std::move(steps));

  if (!h.compute.empty()) {
    report::Table compute;
    compute.key = "study_compute";
    compute.title = "Compute achieved vs datasheet";
    compute.caption = "Median dense-GEMM rate per precision (burn) against the datasheet peak.";
    compute.columns = {{"gpu", "GPU", report::Unit::count},
                       {"precision", "precision", report::Unit::none},
                       {"achieved_flop_per_s", "achieved", report::Unit::flop_per_second},
                       {"datasheet_flop_per_s", "datasheet", report::Unit::flop_per_second},
                       {"fraction", "of datasheet", report::Unit::ratio},
                       {"note", "note", report::Unit::none}};
    for (const ComputeAnswer& c : h.compute) {
      compute.rows.push_back(
          {static_cast<double>(c.gpu), c.precision, optional_value(c.achieved_flop_per_s),
           optional_value(c.datasheet_flop_per_s), optional_value(c.fraction), c.note});
    }
    section.blocks.push_back(std::move(compute));
  }
  if (!h.models.empty()) {
    report::Table models;
    models.key = "study_models";
    models.title = "Best mode per model";
    models.caption =
        "From the bench matrix: the fastest mode, the one that uses the least energy per sample, "
        "and the one that needs the least memory.";
    models.columns = {{"gpu", "GPU", report::Unit::count},
                      {"model", "model", report::Unit::none},
                      {"task", "task", report::Unit::none},
                      {"fastest_mode", "fastest", report::Unit::none},
                      {"fastest_samples_per_s", "samples/s", report::Unit::samples_per_second},
                      {"fastest_peak_bytes", "its memory", report::Unit::bytes},
                      {"efficient_mode", "most efficient", report::Unit::none},
                      {"efficient_j_per_sample", "J/sample", report::Unit::joules},
                      {"smallest_mode", "least memory", report::Unit::none},
                      {"smallest_peak_bytes", "its memory", report::Unit::bytes}};
    for (const ModelAnswer& m : h.models) {
      auto mode = [](const std::optional<ModeAnswer>& a) {
        return a ? report::Value(a->mode) : report::Value();
      };
      models.rows.push_back(
          {static_cast<double>(m.gpu), m.model, m.task, mode(m.fastest),
           m.fastest ? optional_value(m.fastest->samples_per_second) : report::Value(),
           m.fastest ? optional_value(m.fastest->peak_allocated_bytes) : report::Value(),
           mode(m.most_efficient),
           m.most_efficient ? optional_value(m.most_efficient->joules_per_sample) : report::Value(),
           mode(m.smallest_memory),
           m.smallest_memory ? optional_value(m.smallest_memory->peak_allocated_bytes)
                             : report::Value()});
    }
    section.blocks.push_back(std::move(models));
  }
  return section;
}

// The files whose runs go into the store: info and burn documents, bench's and sweep's own stores.
std::vector<std::string> run_sources(const State& state, const fs::path& dir) {
  std::vector<std::string> paths;
  for (const Step& step : state.plan) {
    auto it = state.steps.find(step.id);
    if (it == state.steps.end()) continue;
    const StepRecord& r = it->second;
    if (r.status != StepStatus::ok && r.status != StepStatus::failed) continue;
    const bool own_store = step.kind == StepKind::bench || step.kind == StepKind::sweep;
    std::string file = own_store ? r.store_path : r.json_path;
    std::error_code ec;
    if (!file.empty() && fs::exists(dir / file, ec)) paths.push_back((dir / file).string());
  }
  return paths;
}

}  // namespace

Status write_results(const State& state, const Headlines& headlines, const fs::path& dir) {
  std::vector<store::RunData> runs;
  std::vector<std::string> unreadable;
  for (const std::string& path : run_sources(state, dir)) {
    auto loaded = report::load_runs({path}, {});
    if (!loaded.ok()) {
      unreadable.push_back(fmt::format("{}: {}", path, loaded.status().message()));
      continue;
    }
    for (store::RunData& run : *loaded) runs.push_back(std::move(run));
  }

  // The store is rebuilt whole from the step outputs, so a resumed study never holds a run twice.
  const fs::path db = dir / "gpuscope.db";
  // An empty file made exclusively under a random name (never through a symlink): the store
  // takes an empty file for a new one.
  GPUSCOPE_ASSIGN_OR_RETURN(std::string tmp,
                            files::create_temporary_file(dir.string(), ".gpuscope.db.tmp-"));
  std::error_code ec;
  auto discard = [&tmp, &ec] {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(tmp + suffix, ec);
  };
  {
    auto opened = store::Store::open(tmp);
    if (!opened.ok()) {
      discard();
      return opened.status().with_context("results store");
    }
    for (store::RunData& run : runs) {
      if (!run.run.label) run.run.label = "study " + std::string(level_name(state.options.level));
      auto id = (*opened)->write(run);
      if (!id.ok()) {
        opened->reset();
        discard();
        return id.status().with_context("results store");
      }
    }
  }
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(tmp + suffix, ec);
  if (std::rename(tmp.c_str(), db.c_str()) != 0) {
    const int error = errno;
    discard();
    return Status(Code::io_error,
                  fmt::format("cannot replace {}: {}", db.string(), std::strerror(error)));
  }

  report::ReportOptions options;
  options.title = fmt::format("gpuscope study — {}", state.machine.hostname.empty()
                                                         ? std::string("this machine")
                                                         : state.machine.hostname);
  options.command_line = state.command_line;
  report::Document document = report::build_report(runs, options);
  document.sections.insert(document.sections.begin(), study_section(state, headlines));
  for (const analysis::Finding& p : headlines.problems) {
    // The report made burn's findings from the same runs with the same rules: once is enough.
    const bool reported =
        std::any_of(document.findings.begin(), document.findings.end(),
                    [&](const analysis::Finding& f) { return f.id == p.id && f.gpu == p.gpu; });
    if (reported) continue;
    analysis::Finding finding = p;
    finding.subjects.insert(finding.subjects.begin(),
                            p.gpu ? fmt::format("GPU {}", *p.gpu) : "study");
    document.findings.push_back(std::move(finding));
  }
  for (const std::string& u : unreadable) {
    document.findings.push_back({.id = "unreadable_output",
                                 .severity = report::Severity::warning,
                                 .title = "a step output could not be read: " + u,
                                 .subjects = {"study"}});
  }
  return report::write_document_file(document, "html", (dir / "report.html").string());
}

Result<fs::path> locate_sample() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GPUSCOPE_SAMPLE_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  } else {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back(self.parent_path().parent_path() / "share/gpuscope/sample-study");
#ifdef GPUSCOPE_SAMPLE_INSTALL_DIR
    candidates.emplace_back(GPUSCOPE_SAMPLE_INSTALL_DIR);
#endif
#ifdef GPUSCOPE_SAMPLE_SOURCE_DIR
    candidates.emplace_back(GPUSCOPE_SAMPLE_SOURCE_DIR);
#endif
  }
  std::string looked;
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "study.json", ec)) return c;
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return Status(Code::not_found,
                fmt::format("the sample study is not installed (looked in {}); set "
                            "GPUSCOPE_SAMPLE_DIR to its directory (data/sample-study in the "
                            "source tree)",
                            looked.empty() ? "nowhere" : looked));
}

Result<State> copy_sample(const fs::path& sample, const fs::path& dir) {
  GPUSCOPE_ASSIGN_OR_RETURN(State state, load_state(sample));
  std::error_code ec;
  fs::create_directories(dir / "steps", ec);
  if (ec)
    return Status(Code::io_error, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  for (const auto& [id, record] : state.steps) {
    for (const std::string& file : {record.json_path, record.log_path, record.store_path}) {
      if (file.empty()) continue;
      fs::copy_file(sample / file, dir / file, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        return Status(Code::io_error,
                      fmt::format("cannot copy {} into {}: {}", (sample / file).string(),
                                  dir.string(), ec.message()));
      }
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(save_state(dir, state));
  return state;
}

}  // namespace gpuscope::study
