// The burn worker's protocol: one JSON object per line on stdout, each with "v" (the protocol
// version) and "type". tools/gpuscope-burn-worker/PROTOCOL.md describes every type; these
// functions are the only place that spells the field names.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

#include "gpuscope/capability.h"
#include "gpuscope/interconnect.h"
#include "gpuscope/status.h"

namespace gpuscope::capability {

// Keys stay in the order written ("v" and "type" first), for people reading the lines.
using BurnJson = nlohmann::ordered_json;

// Bump when a field changes meaning or disappears (adding a field keeps the version).
inline constexpr int kBurnProtocolVersion = 1;

BurnJson device_json(const DeviceInfo& device);
BurnJson precision_support_json(const PrecisionSupport& support);
BurnJson progress_json(Precision precision, double elapsed_seconds, double fraction);
BurnJson gemm_window_json(Precision precision, const GemmWindow& window);
BurnJson gemm_result_json(const GemmBurnResult& result);
// `what`: a precision name, or "memory" / "host_link" / "overlap".
BurnJson skipped_json(std::string_view what, const Status& reason);
BurnJson memory_bw_json(const MemoryBandwidthResult& result);
BurnJson host_link_json(const HostLinkResult& result);
BurnJson overlap_json(const OverlapResult& result);
// `--interconnect`: one line per all-reduce size and per ordered GPU pair.
BurnJson all_reduce_json(const AllReduceResult& result);
BurnJson peer_copy_json(const PeerCopyResult& result);
// `code`: a Code's name, or "verification_failed". `device` names the GPU when known.
BurnJson error_json(std::string_view code, std::string_view message, const DeviceInfo* device,
                    std::optional<Precision> precision);
BurnJson done_json(bool ok, bool interrupted, int exit_code);

// "NVIDIA H100 80GB HBM3 (GPU-1a2b..., 0000:41:00.0)": how errors name a device.
std::string device_label(const DeviceInfo& device);

}  // namespace gpuscope::capability
