// Paints the live view's layout with ncurses. All of the content is decided by live_layout.cc;
// this file maps styles to colors and keys to the view state.
#include <curses.h>
#include <unistd.h>

#include <chrono>

#include "telemetry/live_layout.h"
#include "telemetry/live_view.h"

namespace gpuscope::telemetry::detail {
namespace {

enum Pair : short { kTitle = 1, kBarSm, kBarTensor, kAlert, kLost, kKey, kDim };

attr_t attributes(Style style) {
  if (!has_colors()) {
    switch (style) {
      case Style::title:
        return A_BOLD;
      case Style::alert:
      case Style::lost:
      case Style::key:
        return A_REVERSE;
      case Style::dim:
        return A_DIM;
      default:
        return A_NORMAL;
    }
  }
  switch (style) {
    case Style::title:
      return COLOR_PAIR(kTitle) | A_BOLD;
    case Style::label:
      return A_BOLD;
    case Style::dim:
      return COLOR_PAIR(kDim);
    case Style::bar_sm:
      return COLOR_PAIR(kBarSm);
    case Style::bar_tensor:
      return COLOR_PAIR(kBarTensor) | A_BOLD;
    case Style::alert:
      return COLOR_PAIR(kAlert) | A_BOLD | A_REVERSE;
    case Style::lost:
      return COLOR_PAIR(kLost) | A_BOLD | A_REVERSE;
    case Style::key:
      return COLOR_PAIR(kKey) | A_REVERSE;
    case Style::normal:
      return A_NORMAL;
  }
  return A_NORMAL;
}

// initscr/endwin as a guard, so the terminal is restored on every way out.
class Screen {
 public:
  Screen() {
    initscr();
    cbreak();  // keeps ISIG: Ctrl-C still reaches the monitor, which forwards it
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    timeout(200);
    set_escdelay(25);  // Esc quits at once, not after ncurses' 1 s wait for a sequence
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(kTitle, COLOR_CYAN, -1);
      init_pair(kBarSm, COLOR_GREEN, -1);
      init_pair(kBarTensor, COLOR_MAGENTA, -1);
      init_pair(kAlert, COLOR_RED, -1);
      init_pair(kLost, COLOR_RED, -1);
      init_pair(kKey, COLOR_BLUE, -1);
      init_pair(kDim, COLOR_WHITE, -1);
    }
  }
  ~Screen() { endwin(); }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;
};

void paint(const std::vector<ScreenRow>& rows) {
  erase();
  for (int y = 0; y < static_cast<int>(rows.size()) && y < LINES; ++y) {
    for (const Span& span : rows[y]) {
      if (span.column >= COLS) continue;
      const attr_t a = attributes(span.style);
      attron(a);
      // Never the last cell of the screen: writing it scrolls some terminals.
      int n = std::min(static_cast<int>(span.text.size()), COLS - span.column);
      if (y == LINES - 1 && span.column + n >= COLS) n = COLS - span.column - 1;
      if (n > 0) mvaddnstr(y, span.column, span.text.c_str(), n);
      attroff(a);
    }
  }
  refresh();
}

void select_next(ViewState& view, const LiveSnapshot& snap, int step) {
  const int n = static_cast<int>(snap.gpus.size());
  if (n == 0) return;
  int position = -1;  // -1: all
  for (int i = 0; i < n; ++i) {
    if (view.selected && snap.gpus[i].identity.target.gpu_index == *view.selected) position = i;
  }
  position += step;
  if (position >= n) position = -1;
  if (position < -1) position = n - 1;
  if (position < 0) {
    view.selected.reset();
  } else {
    view.selected = snap.gpus[position].identity.target.gpu_index;
  }
}

}  // namespace

Result<bool> run_live_view(const LiveState& state, const std::function<bool()>& should_stop) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    return Status(Code::invalid_argument, "the live view needs a terminal (use --no-tui)");
  }
  Screen screen;
  ViewState view;
  for (;;) {
    const LiveSnapshot snap = state.snapshot();
    paint(layout_live_view(snap, view, COLS, LINES));
    if (should_stop()) return false;
    const int key = getch();
    switch (key) {
      case 'q':
      case 'Q':
      case 27:  // Esc
        return true;
      case KEY_RIGHT:
      case '\t':
        select_next(view, snap, 1);
        break;
      case KEY_LEFT:
      case KEY_BTAB:
        select_next(view, snap, -1);
        break;
      case 'a':
      case 'A':
        view.selected.reset();
        break;
      case KEY_RESIZE:
        clearok(stdscr, TRUE);  // repaint everything at the new size
        break;
      default:
        if (key >= '0' && key <= '9') {
          for (const LatestGpu& g : snap.gpus) {
            if (g.identity.target.gpu_index == static_cast<unsigned>(key - '0'))
              view.selected = g.identity.target.gpu_index;
          }
        }
        break;
    }
  }
}

}  // namespace gpuscope::telemetry::detail
