#include "sweep/workload.h"

#include <mutex>
#include <ostream>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuscope::sweep::detail {

std::optional<double> rate_of(const nlohmann::json& json, const WorkloadSpec& spec) {
  const auto type = json.find("type");
  if (type != json.end() && *type != spec.rate_line_type) return std::nullopt;
  const auto it = json.find(type == json.end() ? std::string("samples_per_second") : spec.rate_key);
  if (it == json.end() || !it->is_number()) return std::nullopt;
  const double rate = it->get<double>();
  if (!(rate >= 0)) return std::nullopt;
  return rate;
}

std::optional<double> parse_samples_per_second(std::string_view line) {
  const auto start = line.find_first_not_of(" \t\r");
  if (start == std::string_view::npos || line[start] != '{') return std::nullopt;
  const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  return rate_of(json, WorkloadSpec{});
}

struct Workload::State : observe::Watcher {
  std::chrono::steady_clock::time_point origin;
  std::ostream* passthrough = nullptr;
  WorkloadSpec spec;
  std::unique_ptr<observe::Process> process;
  mutable std::mutex mutex;
  std::vector<std::pair<double, double>> rates;  // (seconds since origin, samples/s)
  std::optional<ProcessExit> exit;
  std::optional<std::string> skipped, error;
  bool stopped = false;

  double now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
  }
  void started(pid_t) override {}
  void ended(const ProcessExit& end) override {
    std::lock_guard lock(mutex);
    exit = end;
  }
};

Result<std::unique_ptr<Workload>> Workload::start(const WorkloadSpec& spec,
                                                  std::chrono::steady_clock::time_point origin,
                                                  std::ostream& passthrough) {
  auto state = std::make_unique<State>();
  state->origin = origin;
  state->passthrough = &passthrough;
  state->spec = spec;
  State* s = state.get();
  observe::Options options;
  options.argv = spec.command;
  options.env = spec.env;
  options.interrupts = observe::Interrupts::isolate;  // the sweep stops it (stop())
  options.clock = [s] { return s->now_s(); };
  options.on_json_line = [s](const observe::JsonLine& line) {
    const auto rate = line.object ? rate_of(*line.object, s->spec) : std::nullopt;
    std::lock_guard lock(s->mutex);
    if (rate) {
      s->rates.emplace_back(line.received_s, *rate);
      return;
    }
    // A protocol's own lines (they have a "type": gpuscope-torch's start, result and done, the
    // burn worker's) are not for people; its skipped and error lines are kept for the summary.
    if (!line.object || !line.object->contains("type")) {
      *s->passthrough << line.text << '\n';
      return;
    }
    const auto text_of = [&](const char* key) -> std::optional<std::string> {
      const auto it = line.object->find(key);
      if (it == line.object->end() || !it->is_string()) return std::nullopt;
      return it->get<std::string>();
    };
    const auto type = text_of("type");
    if (type == "skipped") s->skipped = text_of("reason");
    if (type == "error") s->error = text_of("message");
  };
  options.watchers = {s};
  GPUSCOPE_ASSIGN_OR_RETURN(state->process, observe::Process::start(std::move(options)));
  return std::unique_ptr<Workload>(new Workload(std::move(state)));
}

Workload::Workload(std::unique_ptr<State> state) : state_(std::move(state)) {}

Workload::~Workload() {
  stop();
}

std::vector<double> Workload::rates_between(double t0, double t1) const {
  std::lock_guard lock(state_->mutex);
  std::vector<double> rates;
  for (const auto& [t, rate] : state_->rates) {
    if (t > t0 && t <= t1) rates.push_back(rate);
  }
  return rates;
}

double Workload::now_s() const {
  return state_->now_s();
}

std::optional<ProcessExit> Workload::ended() const {
  std::lock_guard lock(state_->mutex);
  return state_->exit;
}

std::optional<std::string> Workload::skipped_reason() const {
  std::lock_guard lock(state_->mutex);
  return state_->skipped;
}

std::optional<std::string> Workload::error_message() const {
  std::lock_guard lock(state_->mutex);
  return state_->error;
}

void Workload::stop() noexcept {
  if (state_ == nullptr || state_->stopped) return;
  state_->stopped = true;
  (void)state_->process->stop(/*grace_seconds=*/10);
}

}  // namespace gpuscope::sweep::detail
