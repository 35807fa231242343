// A CPU run of run_workload (runner.h) as the tests read it: its exit code and every JSON line
// it emitted (each must parse), with an optional stop flag raised after a line of a given type.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runner.h"

namespace gpuscope::workloads::testing {

struct Outcome {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;
  // The first line of this type, or nullptr.
  const nlohmann::json* find(std::string_view type) const {
    for (const auto& line : lines) {
      if (line["type"] == type) return &line;
    }
    return nullptr;
  }
};

// A CPU run at the smallest sizes: batch 1 (GPT-2: 2), 32 tokens, 64-pixel images, no warm-up,
// one window of one step, one input set, no summary line.
inline RunConfig tiny_cpu_config(ModelKind model, Task task, PrecisionMode mode) {
  RunConfig c;
  c.model = model;
  c.task = task;
  c.mode = mode;
  c.device = "cpu";
  c.batch = model == ModelKind::gpt2 ? 2 : 1;
  c.shape.seq_len = 32;
  c.shape.image_size = 64;
  c.warmup_steps = 0;
  c.windows = 1;
  c.steps_per_window = 1;
  c.input_sets = 1;
  c.quiet = true;
  return c;
}

// Runs `config`; with `stop`, sets it once a line of type `stop_after` has been emitted.
inline Outcome run(const RunConfig& config, std::atomic<bool>* stop = nullptr,
                   std::string_view stop_after = "") {
  Outcome out;
  out.exit_code = run_workload(
      config,
      [&](const std::string& line) {
        out.lines.push_back(nlohmann::json::parse(line));
        if (stop != nullptr && out.lines.back()["type"] == stop_after) *stop = true;
      },
      stop);
  return out;
}

}  // namespace gpuscope::workloads::testing
