#include "inject/config.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace gpuscope::inject {
namespace {

struct KindName {
  uint32_t bit;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {kKernelBit, "kernel"},     {kMemcpyBit, "memcpy"}, {kMemsetBit, "memset"},
    {kRuntimeBit, "runtime"},   {kDriverBit, "driver"}, {kSyncBit, "sync"},
    {kOverheadBit, "overhead"},
};

std::optional<uint64_t> parse_count(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_seconds(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

Config read_config(const char* (*getenv_fn)(const char*)) {
  Config config;
  const auto get = [&](const char* name) -> std::optional<std::string_view> {
    const char* value = getenv_fn(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string_view(value);
  };
  const auto count = [&](const char* name) -> std::optional<uint64_t> {
    const auto text = get(name);
    if (!text) return std::nullopt;
    const auto value = parse_count(*text);
    if (!value) config.errors.push_back(std::string(name) + ": not a whole number");
    return value;
  };
  const auto seconds = [&](const char* name) -> std::optional<double> {
    const auto text = get(name);
    if (!text) return std::nullopt;
    const auto value = parse_seconds(*text);
    if (!value) config.errors.push_back(std::string(name) + ": not a number of seconds");
    return value;
  };

  if (const auto dir = get("GPUSCOPE_TRACE_DIR")) config.dir = *dir;
  config.skip_steps = count("GPUSCOPE_TRACE_SKIP_STEPS");
  config.steps = count("GPUSCOPE_TRACE_STEPS");
  config.skip_s = seconds("GPUSCOPE_TRACE_SKIP_S");
  config.duration_s = seconds("GPUSCOPE_TRACE_DURATION_S");
  if (const auto mark = get("GPUSCOPE_TRACE_STEP_MARK")) config.step_mark = *mark;
  if (const auto cap = count("GPUSCOPE_TRACE_MAX_BYTES")) config.max_bytes = *cap;
  if (const auto flush = count("GPUSCOPE_TRACE_FLUSH_MS")) {
    config.flush_ms =
        static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(*flush, 10), 60'000));
  }
  const auto flag = [&](const char* name, bool& value) {
    const auto text = get(name);
    if (!text) return;
    if (*text == "1") {
      value = true;
    } else if (*text == "0") {
      value = false;
    } else {
      config.errors.push_back(std::string(name) + ": not 0 or 1");
    }
  };
  if (const auto api = get("GPUSCOPE_TRACE_API")) {
    if (*api == "all" || *api == "calls") {
      config.api_all = *api == "all";
    } else {
      config.errors.push_back("GPUSCOPE_TRACE_API: not 'calls' or 'all'");
    }
  }
  flag("GPUSCOPE_TRACE_DEFER", config.defer);
  flag("GPUSCOPE_TRACE_TEARDOWN", config.teardown);
  flag("GPUSCOPE_TRACE_CUPTI_CLOCK", config.cupti_clock);
  flag("GPUSCOPE_TRACE_CUPTI_ZEROED_BUFFERS", config.zeroed_buffers);
  if (const auto wait = seconds("GPUSCOPE_TRACE_GPU_WAIT_S")) config.gpu_wait_s = *wait;
  if (const auto period = count("GPUSCOPE_TRACE_CUPTI_FLUSH_MS")) {
    config.cupti_flush_period_ms = static_cast<uint32_t>(std::min<uint64_t>(*period, 60'000));
  }
  if (const auto mb = count("GPUSCOPE_TRACE_CUPTI_DEVICE_BUFFER_MB")) {
    config.cupti_device_buffer_bytes = std::min<uint64_t>(*mb, 1024) << 20;
  }

  if (const auto kinds = get("GPUSCOPE_TRACE_KINDS")) {
    config.kinds = 0;
    std::string_view rest = *kinds;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      bool known = false;
      for (const auto& kind : kKindNames) {
        if (kind.name == item) {
          config.kinds |= kind.bit;
          known = true;
        }
      }
      if (!known && !item.empty()) {
        config.errors.push_back("GPUSCOPE_TRACE_KINDS: unknown kind '" + std::string(item) + "'");
      }
    }
  }
  return config;
}

std::string kind_list(uint32_t kinds) {
  std::string out;
  for (const auto& kind : kKindNames) {
    if ((kinds & kind.bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += kind.name;
  }
  return out;
}

}  // namespace gpuscope::inject
