// `gpuscope-torch --world-size N` started without launch variables: the program starts N copies
// of itself, one per rank, as torchrun would (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1,
// MASTER_PORT = a free port, NCCL_NVLS_ENABLE=0), relays their lines and watches them. No
// LibTorch here.
//
// What the parent's stdout carries: rank 0's lines as they come (its `result` is the summary of
// every rank, see data_parallel.h), the other ranks' `error` and `skipped` lines, and one `done`
// line of its own at the end. A rank that ends with a failure (non-zero exit other than
// "skipped", or a signal) is an `error` line with code `rank_failed`. Once a rank has ended
// without success (failed, or skipped: e.g. no GPU for it), the others, which cannot go on
// without it, are given `grace` to end by themselves, after which they get SIGTERM and, 5 s
// later, SIGKILL (as torchrun stops the other workers when one fails).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "distributed/launch_env.h"
#include "json_protocol.h"

namespace gpuscope::workloads {

struct LaunchPlan {
  std::string program;            // the executable to start (normally /proc/self/exe)
  std::vector<std::string> args;  // its arguments (argv[1..]), the same for every rank
  int world_size = 2;
  // After a rank fails, how long the others may take to end by themselves before SIGTERM: time
  // to print their own error where their collectives fail at once (Gloo), short against one that
  // waits for the dead rank until its timeout (NCCL).
  std::chrono::seconds grace{10};
};

// Starts the ranks, relays their lines to `emit` (rank 0's whole, the others' errors), waits for
// all. Returns the exit status: 0 when every rank ended 0, else the first failing rank's status
// (kTorchExitFailed for a signal). Does not emit `done`.
int launch_ranks(const LaunchPlan& plan, const LineSink& emit);

// `line` (a JSON object) with `"rank":rank` as its first field after "v". Lines that are not an
// object are returned as they are.
std::string with_rank(const std::string& line, int rank);

// A TCP port that was free a moment ago on the loopback interface, below the kernel's ephemeral
// range (`range_file`: ip_local_port_range) when there is room, else one the kernel picks.
int free_port(const std::string& range_file = "/proc/sys/net/ipv4/ip_local_port_range");

// The kernel's ephemeral port range read from `range_file` (Linux's default when unreadable).
std::pair<int, int> ephemeral_ports(const std::string& range_file);

}  // namespace gpuscope::workloads
