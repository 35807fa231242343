// Layout of the live view, like nvtop: a panel per GPU leading with SM and tensor activity (GPM)
// and the NVML duty cycle labelled as such, memory, power, clocks, throttle reasons highlighted,
// a history plot; then the processes, the command's last output lines, and a key/help footer.
#include "telemetry/live_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::telemetry::detail {
namespace {

constexpr double kSecondsPerColumn = 0.5;
constexpr int kMaxPlotRows = 8;
constexpr int kMinPlotRows = 3;
constexpr double kGiB = 1024.0 * 1024 * 1024;

class Rows {
 public:
  Rows(int width, int height) : width_(width), height_(height) {}
  bool full() const { return static_cast<int>(rows_.size()) >= height_; }
  int left() const { return height_ - static_cast<int>(rows_.size()); }
  ScreenRow& add() {
    rows_.emplace_back();
    return rows_.back();
  }
  // Appends text to a row, clipped to the width.
  void put(ScreenRow& row, int column, std::string text, Style style) {
    if (column >= width_) return;
    if (column + static_cast<int>(text.size()) > width_) text.resize(width_ - column);
    if (!text.empty()) row.push_back({column, std::move(text), style});
  }
  std::vector<ScreenRow> take() {
    if (static_cast<int>(rows_.size()) > height_) rows_.resize(height_);
    return std::move(rows_);
  }
  int width() const { return width_; }

 private:
  int width_, height_;
  std::vector<ScreenRow> rows_;
};

std::string percent(std::optional<double> fraction) {
  if (!fraction) return "n/a";
  return fmt::format("{:.0f}%", *fraction * 100);
}

constexpr int kLabelWidth = 17;
constexpr int kSuffixWidth = 16;

// One labelled meter in `width` columns: "label [####....]  85% suffix".
void meter(Rows& rows, ScreenRow& row, int column, int width, const std::string& label,
           std::optional<double> fraction, Style style, const std::string& suffix = "") {
  rows.put(row, column, label, Style::label);
  const int bar_column = column + kLabelWidth;
  const int bar_width = std::max(6, width - kLabelWidth - 6 - kSuffixWidth);
  if (fraction) {
    rows.put(row, bar_column, bar(*fraction, bar_width), style);
    rows.put(row, bar_column + bar_width, fmt::format(" {:>4}", percent(fraction)), Style::normal);
  } else {
    rows.put(row, bar_column, "n/a", Style::dim);
  }
  if (!suffix.empty()) {
    rows.put(row, bar_column + bar_width + 6, suffix.substr(0, kSuffixWidth - 1), Style::dim);
  }
}

std::vector<std::string> throttle_names(std::optional<double> mask) {
  if (!mask) return {};
  // Idle (bit 0) is not a slowdown worth flagging: the GPU has nothing to do.
  std::uint64_t bits = static_cast<std::uint64_t>(*mask) & ~std::uint64_t{1};
  return nvml::clock_event_reason_names(bits);
}

std::string upper(std::string s) {
  for (char& c : s) c = c == '_' ? ' ' : static_cast<char>(std::toupper(c));
  return s;
}

void plot(Rows& rows, const std::deque<HistoryPoint>& history, double now_s, int plot_rows,
          bool gpm) {
  const int axis = 5;
  const int columns = rows.width() - axis - 1;
  if (columns < 10) return;
  std::vector<std::optional<double>> upper_series(columns), lower_series(columns);
  std::vector<int> counts(columns, 0);
  std::vector<double> sum_upper(columns, 0), sum_lower(columns, 0);
  std::vector<int> n_lower(columns, 0);
  for (const HistoryPoint& p : history) {
    const int back = static_cast<int>(std::floor((now_s - p.t_s) / kSecondsPerColumn));
    const int c = columns - 1 - back;
    if (c < 0 || c >= columns) continue;
    const std::optional<double> up = gpm ? p.sm_activity : p.gpu_utilization;
    if (up) {
      sum_upper[c] += *up;
      ++counts[c];
    }
    if (gpm && p.tensor_activity) {
      sum_lower[c] += *p.tensor_activity;
      ++n_lower[c];
    }
  }
  for (int c = 0; c < columns; ++c) {
    if (counts[c] > 0) upper_series[c] = sum_upper[c] / counts[c];
    if (n_lower[c] > 0) lower_series[c] = sum_lower[c] / n_lower[c];
  }
  for (int r = 0; r < plot_rows && !rows.full(); ++r) {
    ScreenRow& row = rows.add();
    const double level = static_cast<double>(plot_rows - r - 1) / plot_rows;  // cell's floor
    std::string axis_text = r == 0 ? "100%" : r == plot_rows - 1 ? "  0%" : "    ";
    rows.put(row, 0, axis_text + "|", Style::dim);
    std::string upper_cells(columns, ' '), lower_cells(columns, ' ');
    for (int c = 0; c < columns; ++c) {
      const double cut = level + 0.5 / plot_rows;
      if (lower_series[c] && *lower_series[c] >= cut) {
        lower_cells[c] = '#';
      } else if (upper_series[c] && *upper_series[c] >= cut) {
        upper_cells[c] = '|';
      } else if (r == plot_rows - 1 && upper_series[c]) {
        upper_cells[c] = '_';  // a sample was there, near zero
      }
    }
    // Runs of the same style, so the painter gets few spans.
    int c = 0;
    while (c < columns) {
      const bool tensor = lower_cells[c] != ' ';
      int end = c;
      std::string text;
      while (end < columns && (lower_cells[end] != ' ') == tensor) {
        text += tensor ? lower_cells[end] : upper_cells[end];
        ++end;
      }
      rows.put(row, axis + c, text, tensor ? Style::bar_tensor : Style::bar_sm);
      c = end;
    }
  }
}

void gpu_panel(Rows& rows, const LatestGpu& gpu, const std::deque<HistoryPoint>& history,
               const LiveSnapshot& snap, int plot_rows) {
  const SampledGpu& id = gpu.identity;
  const MetricValues& v = gpu.values;
  {
    ScreenRow& row = rows.add();
    rows.put(row, 0,
             fmt::format("GPU {}  {}  {}", id.target.gpu_index, id.target.name,
                         id.target.pci_bus_id.value_or("")),
             Style::title);
    if (gpu.lost) {
      rows.put(row, rows.width() - 26, " LOST: stopped answering ", Style::lost);
      return;
    }
    std::string temps;
    if (auto t = v.get(Metric::temperature_c)) temps += fmt::format("{:.0f} C", *t);
    if (auto t = v.get(Metric::memory_temperature_c)) temps += fmt::format("  mem {:.0f} C", *t);
    if (auto f = v.get(Metric::fan_speed)) temps += fmt::format("  fan {:.0f}%", *f * 100);
    rows.put(row, std::max(0, rows.width() - static_cast<int>(temps.size()) - 1), temps,
             Style::normal);
  }
  if (rows.full()) return;
  const bool wide = rows.width() >= 100;
  const int half = wide ? rows.width() / 2 : rows.width();
  const int label_width = kLabelWidth;
  const int column_width = half - 1;
  // Two meters side by side on a wide terminal, one under the other otherwise.
  auto pair_rows = [&](auto left, auto right) {
    if (rows.full()) return;
    ScreenRow& row = rows.add();
    left(row, 1);
    if (wide) {
      right(row, half);
    } else if (!rows.full()) {
      right(rows.add(), 1);
    }
  };
  const bool gpm = id.gpm;
  pair_rows(
      [&](ScreenRow& row, int col) {
        meter(rows, row, col, column_width, "SM activity", v.get(Metric::sm_activity),
              Style::bar_sm, gpm ? "" : "GPM: Hopper+");
      },
      [&](ScreenRow& row, int col) {
        meter(rows, row, col, column_width, "Tensor activity", v.get(Metric::tensor_activity),
              Style::bar_tensor);
      });
  pair_rows(
      [&](ScreenRow& row, int col) {
        meter(rows, row, col, column_width, "DRAM activity", v.get(Metric::dram_activity),
              Style::bar_sm);
      },
      [&](ScreenRow& row, int col) {
        meter(rows, row, col, column_width, "GPU duty cycle", v.get(Metric::gpu_utilization),
              Style::dim, "(NVML util)");
      });
  pair_rows(
      [&](ScreenRow& row, int col) {
        auto used = v.get(Metric::memory_used_bytes), total = v.get(Metric::memory_total_bytes);
        std::optional<double> share;
        if (used && total && *total > 0) share = *used / *total;
        meter(rows, row, col, column_width, "Memory", share, Style::bar_sm,
              used && total ? fmt::format("{:.1f}/{:.1f} GiB", *used / kGiB, *total / kGiB) : "");
      },
      [&](ScreenRow& row, int col) {
        auto power = v.get(Metric::power_w);
        auto limit = v.get(Metric::power_limit_w);
        if (!limit && id.power_limit_w) limit = id.power_limit_w;
        std::optional<double> share;
        if (power && limit && *limit > 0) share = *power / *limit;
        std::string text = power ? fmt::format("{:.0f} W", *power) : "";
        if (power && limit) text = fmt::format("{:.0f}/{:.0f} W", *power, *limit);
        meter(rows, row, col, column_width, "Power", share, Style::bar_sm, text);
      });
  if (rows.full()) return;
  {
    ScreenRow& row = rows.add();
    std::string text = " Clocks";
    if (auto c = v.get(Metric::sm_clock_hz)) text += fmt::format("  SM {:.0f} MHz", *c / 1e6);
    if (auto c = v.get(Metric::memory_clock_hz)) text += fmt::format("  mem {:.0f} MHz", *c / 1e6);
    auto tx = v.get(Metric::pcie_tx_bytes_per_s), rx = v.get(Metric::pcie_rx_bytes_per_s);
    if (tx && rx) text += fmt::format("   PCIe tx {} rx {}", format_rate(*tx), format_rate(*rx));
    auto ntx = v.get(Metric::nvlink_tx_bytes_per_s), nrx = v.get(Metric::nvlink_rx_bytes_per_s);
    if (ntx && nrx)
      text += fmt::format("   NVLink tx {} rx {}", format_rate(*ntx), format_rate(*nrx));
    rows.put(row, 0, text, Style::normal);
  }
  if (rows.full()) return;
  {
    ScreenRow& row = rows.add();
    rows.put(row, 1, "Throttle", Style::label);
    const auto names = throttle_names(v.get(Metric::clock_event_reasons));
    int col = 1 + label_width;
    if (!v.has(Metric::clock_event_reasons)) {
      rows.put(row, col, "n/a", Style::dim);
    } else if (names.empty()) {
      rows.put(row, col, "none", Style::dim);
    }
    for (const std::string& name : names) {
      const std::string text = " " + upper(name) + " ";
      rows.put(row, col, text, Style::alert);
      col += static_cast<int>(text.size()) + 1;
    }
  }
  if (plot_rows >= kMinPlotRows && rows.left() > plot_rows) {
    ScreenRow& legend = rows.add();
    rows.put(legend, 1, "History", Style::label);
    rows.put(legend, 1 + label_width, "|", Style::bar_sm);
    rows.put(legend, 3 + label_width, gpm ? "SM activity" : "GPU duty cycle (NVML util)",
             Style::normal);
    if (gpm) {
      rows.put(legend, 16 + label_width, "#", Style::bar_tensor);
      rows.put(legend, 18 + label_width, "tensor activity", Style::normal);
    }
    rows.put(legend, 36 + label_width,
             fmt::format("(last {:.0f} s)", (rows.width() - 6) * kSecondsPerColumn), Style::dim);
    plot(rows, history, snap.now_s, plot_rows, gpm);
  }
}

void process_list(Rows& rows, const LiveSnapshot& snap, const ViewState& view, int max_rows) {
  struct Entry {
    unsigned gpu;
    ProcessSample p;
  };
  std::vector<Entry> entries;
  for (const LatestGpu& g : snap.gpus) {
    if (view.selected && g.identity.target.gpu_index != *view.selected) continue;
    for (const ProcessSample& p : g.processes) entries.push_back({g.identity.target.gpu_index, p});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.p.used_memory_bytes.value_or(0) > b.p.used_memory_bytes.value_or(0);
  });
  if (rows.full()) return;
  ScreenRow& header = rows.add();
  rows.put(header, 0,
           fmt::format("{:>8}  {:>3}  {:>10}  {:>4}  {}", "PID", "GPU", "MEMORY", "SM%", "PROCESS"),
           Style::title);
  if (entries.empty() && !rows.full()) {
    rows.put(rows.add(), 2, "no compute processes", Style::dim);
  }
  int shown = 0;
  for (const Entry& e : entries) {
    if (rows.full() || shown >= max_rows) break;
    ScreenRow& row = rows.add();
    rows.put(row, 0,
             fmt::format("{:>8}  {:>3}  {:>10}  {:>4}  {}", e.p.pid, e.gpu,
                         e.p.used_memory_bytes
                             ? format_bytes(static_cast<double>(*e.p.used_memory_bytes))
                             : "n/a",
                         percent(e.p.sm_utilization), e.p.name.empty() ? "?" : e.p.name),
             Style::normal);
    ++shown;
  }
}

}  // namespace

std::string bar(double fraction, int width) {
  const int inner = std::max(1, width - 2);
  const double f = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(std::lround(f * inner));
  return "[" + std::string(filled, '#') + std::string(inner - filled, '.') + "]";
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024));
  return fmt::format("{:.0f} KiB", bytes / 1024.0);
}

std::string format_rate(double bytes_per_s) {
  if (bytes_per_s >= 1e9) return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return fmt::format("{:.1f} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.0f} kB/s", bytes_per_s / 1e3);
}

std::string row_text(const ScreenRow& row, int width) {
  std::string text(width, ' ');
  for (const Span& s : row) {
    for (std::size_t i = 0; i < s.text.size() && s.column + static_cast<int>(i) < width; ++i) {
      text[s.column + i] = s.text[i];
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::vector<ScreenRow> layout_live_view(const LiveSnapshot& snap, const ViewState& view, int width,
                                        int height) {
  // Everything but the footer, which takes the last line.
  Rows rows(std::max(width, 1), std::max(height - 1, 0));
  if (height <= 0) return {};
  {
    ScreenRow& row = rows.add();
    std::string title =
        fmt::format("gpuscope monitor  {} GPU{}  every {:.0f} ms  {:.1f} s", snap.gpus.size(),
                    snap.gpus.size() == 1 ? "" : "s", snap.interval_s * 1000, snap.now_s);
    if (!snap.listening.empty()) title += "  /metrics on " + snap.listening;
    rows.put(row, 0, title, Style::title);
  }
  if (!snap.command.empty() && !rows.full()) {
    std::string cmd;
    for (const auto& a : snap.command) cmd += (cmd.empty() ? "" : " ") + a;
    rows.put(rows.add(), 0, "command: " + cmd, Style::dim);
  }
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    if (!view.selected || snap.gpus[i].identity.target.gpu_index == *view.selected)
      shown.push_back(i);
  }
  const bool wide = width >= 100;
  const int panel_rows = wide ? 6 : 9;  // title, 3 (or 6) meter rows, clocks, throttle
  const int footer_rows = 1 + 4 + (snap.command.empty() ? 0 : 4);
  const int per_gpu =
      shown.empty() ? 0 : (rows.left() - footer_rows) / static_cast<int>(shown.size());
  const int plot_rows = std::clamp(per_gpu - panel_rows - 2, 0, kMaxPlotRows);
  for (std::size_t i : shown) {
    if (rows.full()) break;
    const auto& history = i < snap.history.size() ? snap.history[i] : std::deque<HistoryPoint>{};
    gpu_panel(rows, snap.gpus[i], history, snap, plot_rows);
  }
  const int output_rows = snap.command.empty() ? 0 : std::min(3, std::max(0, rows.left() - 4));
  process_list(rows, snap, view, std::max(1, rows.left() - output_rows - 2));
  if (!snap.command.empty() && output_rows > 0 && !rows.full()) {
    rows.put(rows.add(), 0, "command output (last lines):", Style::label);
    const auto& out = snap.command_output;
    const std::size_t first = out.size() > static_cast<std::size_t>(output_rows - 1)
                                  ? out.size() - static_cast<std::size_t>(output_rows - 1)
                                  : 0;
    for (std::size_t i = first; i < out.size() && !rows.full(); ++i) {
      rows.put(rows.add(), 2, out[i], Style::dim);
    }
  }
  // The footer sits on the last line.
  std::vector<ScreenRow> result = rows.take();
  while (static_cast<int>(result.size()) < height - 1) result.emplace_back();
  Rows footer_rows_helper(std::max(width, 1), 1);
  ScreenRow& footer = footer_rows_helper.add();
  footer_rows_helper.put(footer, 0, "q quit  <- -> or 0-9 pick GPU  a all", Style::key);
  if (!snap.messages.empty())
    footer_rows_helper.put(footer, 38, snap.messages.back(), Style::alert);
  result.push_back(std::move(footer_rows_helper.take().front()));
  return result;
}

}  // namespace gpuscope::telemetry::detail
