// Where this process sits in a data-parallel job, from the variables its launcher set: torchrun's
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), gpuscope-torch's own --world-size
// launcher (launcher.h, which sets the same), or Slurm's srun (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID) when WORLD_SIZE is absent. No LibTorch here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gpuscope::workloads {

inline constexpr int kDefaultMasterPort = 29500;  // torchrun's default

struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;                     // the GPU index on this host: cuda:local_rank
  std::string master_addr = "127.0.0.1";  // where rank 0's TCPStore listens
  int master_port = kDefaultMasterPort;
  std::string launcher = "none";  // "env" (RANK/WORLD_SIZE), "slurm", or "none"

  bool distributed() const { return world_size > 1; }
};

// Returns the value of an environment variable, nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup process_environment();

// Reads the launch variables. Without any: a single process (world size 1). WORLD_SIZE without
// RANK, a rank outside [0, WORLD_SIZE), a value that is not a number, or a port outside
// 1..65535 is an error (the message names the variable). LOCAL_RANK defaults to the rank (one
// host), MASTER_ADDR to 127.0.0.1, MASTER_PORT to 29500.
std::variant<LaunchEnv, std::string> read_launch_env(const EnvLookup& lookup);

}  // namespace gpuscope::workloads
