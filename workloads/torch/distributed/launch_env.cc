#include "distributed/launch_env.h"

#include <charconv>
#include <cstdlib>

namespace gpuscope::workloads {
namespace {

std::optional<int> parse_int(const std::string& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::variant<LaunchEnv, std::string> read_launch_env(const EnvLookup& lookup) {
  LaunchEnv env;
  // The variables of one launcher, in order: rank, world size, local rank.
  struct Names {
    std::string_view rank, world, local, launcher;
  };
  const Names torchrun{"RANK", "WORLD_SIZE", "LOCAL_RANK", "env"};
  const Names slurm{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "slurm"};
  const Names* names = nullptr;
  if (lookup(torchrun.world) || lookup(torchrun.rank)) {
    names = &torchrun;
  } else if (lookup(slurm.world) && lookup(slurm.rank)) {
    names = &slurm;
  }
  if (names == nullptr) return env;

  const auto number = [&](std::string_view name, std::optional<int> fallback,
                          int& out) -> std::optional<std::string> {
    const auto text = lookup(name);
    if (!text) {
      if (fallback) {
        out = *fallback;
        return std::nullopt;
      }
      return std::string(name) + " is not set";
    }
    const auto value = parse_int(*text);
    if (!value) return std::string(name) + " is not an integer: '" + *text + "'";
    out = *value;
    return std::nullopt;
  };
  if (auto e = number(names->world, std::nullopt, env.world_size)) return *e;
  if (auto e = number(names->rank, std::nullopt, env.rank)) return *e;
  if (env.world_size < 1) {
    return std::string(names->world) + " must be at least 1, got " + std::to_string(env.world_size);
  }
  if (env.rank < 0 || env.rank >= env.world_size) {
    return std::string(names->rank) + "=" + std::to_string(env.rank) + " is outside 0.." +
           std::to_string(env.world_size - 1) + " (" + std::string(names->world) + "=" +
           std::to_string(env.world_size) + ")";
  }
  if (auto e = number(names->local, env.rank, env.local_rank)) return *e;
  if (env.local_rank < 0) return std::string(names->local) + " must not be negative";
  if (auto addr = lookup("MASTER_ADDR"); addr && !addr->empty()) env.master_addr = *addr;
  if (auto e = number("MASTER_PORT", kDefaultMasterPort, env.master_port)) return *e;
  if (env.master_port < 1 || env.master_port > 65535) {
    return "MASTER_PORT is outside 1..65535: " + std::to_string(env.master_port);
  }
  env.launcher = std::string(names->launcher);
  return env;
}

}  // namespace gpuscope::workloads
