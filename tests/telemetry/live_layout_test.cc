// The live view's screen, as data: what a person sees for a snapshot at several terminal sizes.
// (tests/cli/monitor_tui_test.sh checks the real thing under tmux.)
#include "telemetry/live_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscope::telemetry::detail {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

LiveSnapshot snapshot() {
  LiveSnapshot snap;
  snap.interval_s = 0.1;
  snap.now_s = 12.0;
  for (unsigned i = 0; i < 2; ++i) {
    LatestGpu gpu;
    gpu.identity.target.gpu_index = i;
    gpu.identity.target.name = i == 0 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-40GB";
    gpu.identity.target.pci_bus_id = i == 0 ? "00000000:18:00.0" : "00000000:3B:00.0";
    gpu.identity.gpm = i == 0;
    MetricValues& v = gpu.values;
    if (i == 0) {
      v.set(Metric::sm_activity, 0.85);
      v.set(Metric::tensor_activity, 0.6);
      v.set(Metric::dram_activity, 0.35);
      v.set(Metric::clock_event_reasons, 4);  // SW power cap
      gpu.processes = {{4242, "python3", 60ull << 30, 0.98, 0.4}};
    } else {
      v.set(Metric::clock_event_reasons, 1);  // idle only: nothing to flag
    }
    v.set(Metric::gpu_utilization, 1.0);
    v.set(Metric::memory_used_bytes, 60.0 * (1ull << 30));
    v.set(Metric::memory_total_bytes, 80.0 * (1ull << 30));
    v.set(Metric::power_w, 650);
    v.set(Metric::power_limit_w, 700);
    v.set(Metric::sm_clock_hz, 1755e6);
    v.set(Metric::temperature_c, 61);
    snap.gpus.push_back(gpu);
    std::deque<HistoryPoint> history;
    for (int k = 0; k < 100; ++k) {
      history.push_back({k * 0.1 + 2, 0.85, 0.6, 1.0});
    }
    snap.history.push_back(history);
  }
  return snap;
}

std::string screen(const LiveSnapshot& snap, const ViewState& view, int width, int height,
                   std::vector<ScreenRow>* rows_out = nullptr) {
  const auto rows = layout_live_view(snap, view, width, height);
  EXPECT_LE(static_cast<int>(rows.size()), height);
  std::string text;
  for (const ScreenRow& row : rows) {
    for (const Span& span : row) {
      EXPECT_LE(span.column + static_cast<int>(span.text.size()), width) << span.text;
      for (char c : span.text) EXPECT_TRUE(c >= 32 && c < 127) << "non-ASCII in " << span.text;
    }
    text += row_text(row, width) + "\n";
  }
  if (rows_out != nullptr) *rows_out = rows;
  return text;
}

TEST(LiveLayout, LeadsWithSmAndTensorActivityAndCallsNvmlUtilADutyCycle) {
  const std::string text = screen(snapshot(), {}, 120, 50);
  for (const char* shown :
       {"GPU 0  NVIDIA H100 80GB HBM3  00000000:18:00.0", "SM activity", "Tensor activity",
        "GPU duty cycle", "(NVML util)", "85%", "650/700 W", "SM 1755 MHz"}) {
    EXPECT_THAT(text, HasSubstr(shown));
  }
  // SM activity comes before the duty cycle on the screen.
  EXPECT_LT(text.find("SM activity"), text.find("GPU duty cycle"));
  // The A100 has no GPM: its SM activity says so rather than showing 0.
  EXPECT_THAT(text, HasSubstr("GPM: Hopper+"));
  EXPECT_THAT(text, HasSubstr("4242"));
  EXPECT_THAT(text, HasSubstr("python3"));
  EXPECT_THAT(text, HasSubstr("q quit"));
}

TEST(LiveLayout, ThrottleReasonsAreHighlighted) {
  std::vector<ScreenRow> rows;
  screen(snapshot(), {}, 120, 50, &rows);
  bool highlighted = false;
  for (const ScreenRow& row : rows) {
    for (const Span& span : row) {
      if (span.text.find("SW POWER CAP") != std::string::npos) {
        highlighted = span.style == Style::alert;
      }
    }
  }
  EXPECT_TRUE(highlighted);
}

TEST(LiveLayout, PickingAGpuShowsOnlyIt) {
  ViewState view;
  view.selected = 1;
  const std::string text = screen(snapshot(), view, 120, 40);
  EXPECT_THAT(text, HasSubstr("GPU 1  NVIDIA A100"));
  EXPECT_THAT(text, Not(HasSubstr("GPU 0  NVIDIA H100")));
  EXPECT_THAT(text, Not(HasSubstr("4242")));  // GPU 0's process
}

TEST(LiveLayout, ShrinksToSmallTerminalsWithoutOverflow) {
  for (auto [w, h] : {std::pair{80, 24}, std::pair{60, 15}, std::pair{40, 8}, std::pair{20, 3},
                      std::pair{200, 60}, std::pair{1, 1}}) {
    const std::string text = screen(snapshot(), {}, w, h);
    if (h >= 8) {
      EXPECT_THAT(text, HasSubstr("GPU 0")) << w << "x" << h;
    }
  }
  EXPECT_TRUE(layout_live_view(snapshot(), {}, 80, 0).empty());
}

TEST(LiveLayout, HistoryIsPlottedWithTensorBelowSm) {
  const std::string text = screen(snapshot(), {}, 120, 60);
  EXPECT_THAT(text, HasSubstr("100%|"));
  EXPECT_THAT(text, HasSubstr("#"));   // tensor activity
  EXPECT_THAT(text, HasSubstr("||"));  // SM activity above it
}

TEST(LiveLayout, ALostGpuSaysSo) {
  LiveSnapshot snap = snapshot();
  snap.gpus[1].lost = true;
  snap.messages.push_back("GPU 1 stopped answering at 3.0 s; the other GPUs go on");
  const std::string text = screen(snap, {}, 120, 50);
  EXPECT_THAT(text, HasSubstr("LOST"));
  EXPECT_THAT(text, HasSubstr("GPU 1 stopped answering"));
}

TEST(LiveLayout, Helpers) {
  EXPECT_EQ(bar(0.5, 12), "[#####.....]");
  EXPECT_EQ(bar(2.0, 4), "[##]");
  EXPECT_EQ(format_bytes(60.0 * (1ull << 30)), "60.0 GiB");
  EXPECT_EQ(format_rate(2.4e9), "2.4 GB/s");
}

}  // namespace
}  // namespace gpuscope::telemetry::detail
