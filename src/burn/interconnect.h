// `gpuscope burn` on two or more whole GPUs: after the per-GPU tests, one worker that sees all
// of them (`gpuscope-burn-worker --interconnect`, CUDA_VISIBLE_DEVICES = their UUIDs) measures
// NCCL all-reduce bus bandwidth and peer copies among them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/burn.h"

namespace gpuscope::burn::detail {

// The plan's whole GPUs, in plan order: the interconnect's GPUs (none when fewer than two: MIG
// instances do not take part, their GPU's links are not theirs).
std::vector<const Target*> interconnect_gpus(const Plan& plan);

// One stdout line of `--interconnect` into `report`: all_reduce and peer_copy rows, error lines
// (as problems), done (ok); other lines (device) are ignored. A line that is not JSON, and a
// row with a field missing or of the wrong type, is no row but a problem naming the field
// ("the interconnect worker printed a malformed line (all_reduce.bytes: missing)"): the
// interconnect is not fatal to burn.
void add_interconnect_line(std::string_view line, InterconnectReport& report);

// Runs the worker on `gpus` (at least two) and reads what it measured. A worker that cannot
// start, fails or is killed is said in problems; what it printed before is kept.
InterconnectReport measure_interconnect(const std::vector<const Target*>& gpus,
                                        const std::string& worker, const Options& options);

// How each pair of `gpus` is joined, from NVML (pairs it says nothing of are left out).
std::vector<InterconnectReport::Link> links_between(const nvml::Session& session,
                                                    const std::vector<const Target*>& gpus);

}  // namespace gpuscope::burn::detail
