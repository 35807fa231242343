#include <fmt/format.h>

#include "gpuscope/burn_report.h"

namespace gpuscope {

std::string format_progress(const burn::Progress& progress) {
  std::vector<std::string> parts;
  for (const burn::TargetProgress& t : progress.targets) {
    std::string part = t.label + " ";
    if (t.finished) {
      part += t.failed ? "ended (failed)" : "done";
    } else if (t.step == 0) {
      part += t.phase;
    } else {
      part += fmt::format("{} {}/{}", t.phase, t.step, t.steps);
      if (t.elapsed_seconds > 0) {
        part += fmt::format(" {:.0f} s {:.0f}%", t.elapsed_seconds, t.fraction * 100);
      }
    }
    parts.push_back(std::move(part));
  }
  return fmt::format("burn {:.0f} s{}  {}", progress.elapsed_seconds,
                     progress.interrupted ? " (stopping: Ctrl-C)" : "", fmt::join(parts, "  |  "));
}

BurnProgressPrinter::BurnProgressPrinter(std::ostream& out, bool terminal, int columns,
                                         double period_seconds)
    : out_(out), terminal_(terminal), columns_(columns), period_seconds_(period_seconds) {}

void BurnProgressPrinter::update(const burn::Progress& progress) {
  std::string line = format_progress(progress);
  if (terminal_) {
    if (columns_ > 1 && line.size() >= static_cast<std::size_t>(columns_)) {
      line.resize(static_cast<std::size_t>(columns_ - 1));
    }
    out_ << '\r' << line << "\x1b[K" << std::flush;
    last_width_ = line.size();
    return;
  }
  std::string phases;
  for (const burn::TargetProgress& t : progress.targets) {
    phases += fmt::format("{}:{}:{};", t.label, t.phase, t.finished);
  }
  if (progress.interrupted) phases += "interrupted";
  if (phases == last_phases_ && progress.elapsed_seconds - last_print_ < period_seconds_) return;
  last_phases_ = phases;
  last_print_ = progress.elapsed_seconds;
  out_ << "gpuscope: " << line << '\n' << std::flush;
}

void BurnProgressPrinter::finish() {
  if (terminal_ && last_width_ > 0) out_ << "\r\x1b[K" << std::flush;
  last_width_ = 0;
}

}  // namespace gpuscope
