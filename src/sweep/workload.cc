#include "sweep/workload.h"

#include <csignal>
#include <mutex>
#include <ostream>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuscope::sweep::detail {

std::optional<double> parse_samples_per_second(std::string_view line) {
  const auto start = line.find_first_not_of(" \t\r");
  if (start == std::string_view::npos || line[start] != '{') return std::nullopt;
  const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto it = json.find("samples_per_second");
  if (it == json.end() || !it->is_number()) return std::nullopt;
  const double rate = it->get<double>();
  if (!(rate >= 0)) return std::nullopt;
  return rate;
}

struct Workload::State {
  std::chrono::steady_clock::time_point origin;
  std::ostream* passthrough = nullptr;
  std::unique_ptr<ChildProcess> child;
  std::thread waiter;
  mutable std::mutex mutex;
  std::vector<std::pair<double, double>> rates;  // (seconds since origin, samples/s)
  std::optional<ProcessExit> exit;
  bool stopped = false;

  double now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
  }
};

Result<std::unique_ptr<Workload>> Workload::start(const std::vector<std::string>& command,
                                                  std::chrono::steady_clock::time_point origin,
                                                  std::ostream& passthrough) {
  auto state = std::make_unique<State>();
  state->origin = origin;
  state->passthrough = &passthrough;
  State* s = state.get();
  ProcessOptions options;
  options.argv = command;
  options.own_process_group = true;
  options.on_stdout_line = [s](std::string_view line) {
    const auto rate = parse_samples_per_second(line);
    std::lock_guard lock(s->mutex);
    if (rate) {
      s->rates.emplace_back(s->now_s(), *rate);
    } else {
      *s->passthrough << line << '\n';
    }
  };
  auto child = ChildProcess::start(std::move(options));
  if (!child.ok()) return child.status();
  state->child = std::move(child).value();
  state->waiter = std::thread([s] {
    auto exit = s->child->wait();
    std::lock_guard lock(s->mutex);
    s->exit = exit.ok() ? *exit : ProcessExit{};
  });
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

void Workload::stop() noexcept {
  if (state_ == nullptr || state_->stopped) return;
  state_->stopped = true;
  (void)state_->child->send_signal(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ended() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended()) (void)state_->child->send_signal(SIGKILL);
  if (state_->waiter.joinable()) state_->waiter.join();
}

}  // namespace gpuscope::sweep::detail
