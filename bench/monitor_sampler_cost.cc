// The sampler's own CPU cost per round, on this machine, against the fake NVML (Google
// Benchmark). What it measures is gpuscope's side of a round: the adapter, unit conversions,
// GPM pairing, the process list, building the Tick; the fake's calls cost microseconds where a
// real driver's may cost more, so the number on a GPU comes from the monitor itself (every
// summary reports "CPU us per round", measured with the thread's CPU clock).
//
//   build/<dir>/tests/monitor_sampler_cost [--benchmark_min_time=2]
#include <benchmark/benchmark.h>

#include <string>

#include "../tests/fakes/nvml/fake_nvml_control.h"
#include "gpuscope/telemetry.h"

namespace {

using namespace gpuscope;

void sample_round(benchmark::State& state, const char* fixture, bool processes) {
  gpuscope_fake_nvml_reset();
  const std::string path = std::string(GPUSCOPE_TEST_FIXTURES) + fixture;
  if (gpuscope_fake_nvml_load_scenario_file(path.c_str()) != 0) {
    state.SkipWithError(gpuscope_fake_nvml_last_error());
    return;
  }
  auto session = nvml::Session::open({{GPUSCOPE_FAKE_NVML_PATH}});
  if (!session.ok()) {
    state.SkipWithError(session.status().to_string().c_str());
    return;
  }
  telemetry::SamplerOptions options;
  options.processes = processes;
  options.slow_interval = std::chrono::milliseconds(processes ? 0 : 3'600'000);
  auto sampler = telemetry::Sampler::open(**session, options);
  if (!sampler.ok()) {
    state.SkipWithError(sampler.status().to_string().c_str());
    return;
  }
  double t = 1.0;  // inside the timeline's busy part; GPM pairs 100 ms apart
  double cpu = 0;
  std::int64_t rounds = 0;
  for (auto _ : state) {
    t += 0.1;
    gpuscope_fake_nvml_set_time(t);
    const auto now = (*sampler)->origin() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::duration<double>(t));
    telemetry::Tick tick = (*sampler)->sample_at(now);
    cpu += tick.cpu_s;
    ++rounds;
    benchmark::DoNotOptimize(tick);
  }
  state.counters["gpus"] = static_cast<double>((*sampler)->gpus().size());
  state.counters["cpu_us_per_round"] = rounds > 0 ? 1e6 * cpu / static_cast<double>(rounds) : 0;
  gpuscope_fake_nvml_reset();
}

void BM_RoundFastReadings(benchmark::State& state) {
  sample_round(state, "/telemetry/two_gpus.json", false);
}
void BM_RoundWithProcessesAndSlowReadings(benchmark::State& state) {
  sample_round(state, "/telemetry/two_gpus.json", true);
}
BENCHMARK(BM_RoundFastReadings)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RoundWithProcessesAndSlowReadings)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
