// The live view's screen as data: rows of styled text for a given terminal size, computed from a
// snapshot. Pure (no curses), so its content is unit-tested; live_view_curses.cc only paints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "telemetry/live_state.h"

namespace gpuscope::telemetry::detail {

enum class Style { normal, title, label, dim, bar_sm, bar_tensor, alert, lost, key };

struct Span {
  int column = 0;
  std::string text;  // ASCII only: any terminal, any locale
  Style style = Style::normal;
};
using ScreenRow = std::vector<Span>;

struct ViewState {
  std::optional<unsigned> selected;  // a GPU index; nullopt: every GPU
};

// Rows for a width x height terminal; never more than `height` rows, no text past `width`.
std::vector<ScreenRow> layout_live_view(const LiveSnapshot& snapshot, const ViewState& view,
                                        int width, int height);

// A row as plain text, `width` wide (tests, and the painter's fallback).
std::string row_text(const ScreenRow& row, int width);

// "NVIDIA H100" panel helpers, exposed for tests.
std::string bar(double fraction, int width);  // "[#####.....]"
std::string format_bytes(double bytes);       // "60.0 GiB"
std::string format_rate(double bytes_per_s);  // "2.4 GB/s"

}  // namespace gpuscope::telemetry::detail
