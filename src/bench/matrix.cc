// The bench matrix: input paths, knobs, rows and their gpuscope-torch arguments, and the
// expansion of CLI lists into rows.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

struct Knob {
  const char* name;
  const char* flag;
  bool has_auto;
};
constexpr std::array<Knob, 4> kKnobs = {{
    {"graphs", "--graphs", true},
    {"fused_adamw", "--fused-adamw", false},
    {"cudnn_benchmark", "--cudnn-benchmark", false},
    {"channels_last", "--channels-last", true},
}};

const Knob* find_knob(const std::string& name) {
  for (const Knob& k : kKnobs) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

std::string on_off(bool v) {
  return v ? "on" : "off";
}

Result<bool> parse_on_off(const std::string& key, const std::string& v) {
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  return Status(Code::invalid_argument, fmt::format("--input {}={}: expected on or off", key, v));
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    auto end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

bool is_number(const std::string& s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v > 0;
}

Status check_in(const std::string& what, const std::string& value,
                const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return Status{};
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return Status(Code::invalid_argument,
                fmt::format("unknown {} '{}' (one of: {})", what, value, list));
}

}  // namespace

std::string InputPath::label() const {
  std::string s = kind;
  if (workers) s += fmt::format(" workers={}", *workers);
  if (pinned) s += " pinned=" + on_off(*pinned);
  if (non_blocking) s += " non_blocking=" + on_off(*non_blocking);
  if (!data_dir.empty()) s += " data=" + data_dir;
  return s;
}

Result<InputPath> parse_input_path(const std::string& text) {
  InputPath in;
  auto colon = text.find(':');
  in.kind = text.substr(0, colon);
  GPUSCOPE_RETURN_IF_ERROR(check_in("input", in.kind, {"synthetic", "host", "jpeg"}));
  if (colon == std::string::npos) return in;
  for (const std::string& item : split(text.substr(colon + 1), ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      return Status(Code::invalid_argument,
                    fmt::format("--input {}: '{}' is not KEY=VALUE", text, item));
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (in.kind == "synthetic") {
      return Status(Code::invalid_argument, "--input synthetic takes no settings");
    }
    if (key == "workers") {
      if (value != "0" && !is_number(value)) {
        return Status(Code::invalid_argument,
                      fmt::format("--input workers={}: expected a count", value));
      }
      in.workers = std::stoi(value);
    } else if (key == "pinned") {
      GPUSCOPE_ASSIGN_OR_RETURN(bool v, parse_on_off(key, value));
      in.pinned = v;
    } else if (key == "non_blocking") {
      GPUSCOPE_ASSIGN_OR_RETURN(bool v, parse_on_off(key, value));
      in.non_blocking = v;
    } else if (key == "data" && in.kind == "jpeg") {
      in.data_dir = value;
    } else {
      return Status(Code::invalid_argument,
                    fmt::format("--input {}: unknown setting '{}' (workers, pinned, "
                                "non_blocking{})",
                                text, key, in.kind == "jpeg" ? ", data" : ""));
    }
  }
  return in;
}

std::vector<std::string> knob_names() {
  std::vector<std::string> names;
  for (const Knob& k : kKnobs) names.push_back(k.name);
  return names;
}

std::string RowSpec::variant() const {
  std::vector<std::string> parts;
  if (!batch.empty()) parts.push_back("batch=" + batch);
  if (gpus > 1) parts.push_back("gpus=" + std::to_string(gpus));
  if (!grad_sync) parts.push_back("grad-sync=off");
  for (const auto& [name, value] : knobs) parts.push_back(name + "=" + value);
  if (input.kind != "synthetic" || input.workers || input.pinned || input.non_blocking) {
    parts.push_back("input=" + input.label());
  }
  for (const std::string& a : extra_args) parts.push_back(a);
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : " ") + p;
  return s;
}

std::string RowSpec::label() const {
  std::string s = model + " " + task + " " + mode;
  std::string v = variant();
  return v.empty() ? s : s + " " + v;
}

std::vector<std::string> RowSpec::torch_args() const {
  std::vector<std::string> a = {"--model", model, "--task", task, "--mode", mode};
  if (!batch.empty()) a.insert(a.end(), {"--batch", batch});
  if (gpus > 1) a.insert(a.end(), {"--world-size", std::to_string(gpus)});
  if (!grad_sync) a.insert(a.end(), {"--grad-sync", "off"});
  for (const auto& [name, value] : knobs) {
    const Knob* k = find_knob(name);
    a.insert(a.end(), {k ? k->flag : "--" + name, value});
  }
  if (input.kind != "synthetic") {
    a.insert(a.end(), {"--input", input.kind});
    if (input.workers) a.insert(a.end(), {"--loader-workers", std::to_string(*input.workers)});
    if (input.pinned) a.insert(a.end(), {"--pinned", on_off(*input.pinned)});
    if (input.non_blocking) a.insert(a.end(), {"--non-blocking", on_off(*input.non_blocking)});
    if (!input.data_dir.empty()) a.insert(a.end(), {"--data", input.data_dir});
  }
  if (warmup) a.insert(a.end(), {"--warmup", std::to_string(*warmup)});
  if (windows) a.insert(a.end(), {"--windows", std::to_string(*windows)});
  if (steps) a.insert(a.end(), {"--steps", std::to_string(*steps)});
  a.insert(a.end(), extra_args.begin(), extra_args.end());
  return a;
}

Result<std::vector<RowSpec>> expand_matrix(const MatrixOptions& o) {
  if (o.models.empty()) return Status(Code::invalid_argument, "no model given (--model)");
  if (o.tasks.empty()) return Status(Code::invalid_argument, "no task given (--task)");
  if (o.modes.empty()) return Status(Code::invalid_argument, "no mode given (--mode)");
  for (const auto& t : o.tasks) GPUSCOPE_RETURN_IF_ERROR(check_in("task", t, {"train", "infer"}));
  for (const auto& m : o.modes) GPUSCOPE_RETURN_IF_ERROR(check_in("mode", m, all_modes()));
  for (const auto& b : o.batches) {
    if (b != "auto" && !is_number(b)) {
      return Status(Code::invalid_argument,
                    fmt::format("--batch {}: expected a positive number or auto", b));
    }
  }
  for (const auto& [name, values] : o.knobs) {
    const Knob* k = find_knob(name);
    if (!k) GPUSCOPE_RETURN_IF_ERROR(check_in("knob", name, knob_names()));
    if (values.empty()) {
      return Status(Code::invalid_argument, fmt::format("--knob {}: no values", name));
    }
    for (const auto& v : values) {
      std::vector<std::string> allowed = {"on", "off"};
      if (k->has_auto) allowed.push_back("auto");
      GPUSCOPE_RETURN_IF_ERROR(check_in(name + " value", v, allowed));
    }
  }
  // Knob combinations: the cartesian product in the order given.
  std::vector<std::vector<std::pair<std::string, std::string>>> knob_sets = {{}};
  for (const auto& [name, values] : o.knobs) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& set : knob_sets) {
      for (const auto& v : values) {
        auto s = set;
        s.emplace_back(name, v);
        next.push_back(std::move(s));
      }
    }
    knob_sets = std::move(next);
  }
  std::vector<std::string> batches = o.batches.empty() ? std::vector<std::string>{""} : o.batches;
  std::vector<InputPath> inputs = o.inputs.empty() ? std::vector<InputPath>{{}} : o.inputs;
  const std::vector<int> gpu_counts = o.gpus.empty() ? std::vector<int>{1} : o.gpus;
  const bool data_parallel =
      std::any_of(gpu_counts.begin(), gpu_counts.end(), [](int g) { return g > 1; });
  if (data_parallel && std::find(o.tasks.begin(), o.tasks.end(), "infer") != o.tasks.end()) {
    return Status(Code::invalid_argument, "--gpus above 1: data parallel trains (--task train)");
  }
  if (o.no_sync_ceiling && !data_parallel) {
    return Status(
        Code::invalid_argument,
        "--no-sync-ceiling measures data-parallel rows: give --gpus with a count above 1");
  }
  std::vector<RowSpec> rows;
  for (const auto& model : o.models) {
    for (const auto& task : o.tasks) {
      for (const auto& mode : o.modes) {
        for (const auto& batch : batches) {
          for (const auto& knobs : knob_sets) {
            for (const auto& input : inputs) {
              for (const int gpus : gpu_counts) {
                RowSpec r;
                r.model = model;
                r.task = task;
                r.mode = mode;
                r.batch = batch;
                r.knobs = knobs;
                r.input = input;
                r.warmup = o.warmup;
                r.windows = o.windows;
                r.steps = o.steps;
                r.extra_args = o.extra_args;
                r.gpus = gpus;
                if (gpus > 1 && o.no_sync_ceiling) {
                  RowSpec alone = r;
                  alone.grad_sync = false;
                  rows.push_back(std::move(r));
                  rows.push_back(std::move(alone));
                } else {
                  rows.push_back(std::move(r));
                }
              }
            }
          }
        }
      }
    }
  }
  return rows;
}

}  // namespace gpuscope::bench
