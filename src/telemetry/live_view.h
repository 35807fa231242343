// The ncurses live view (live_view_curses.cc; live_view_unavailable.cc in builds without
// ncurses).
#pragma once

#include <functional>

#include "gpuscope/status.h"
#include "telemetry/live_state.h"

namespace gpuscope::telemetry::detail {

// Shows `state` on this terminal, redrawn several times a second and on every key, until the
// user quits ('q', Esc) or `should_stop()` turns true. Keys: left/right or Tab pick a GPU,
// 0-9 pick by index, 'a' shows all. Resizes re-lay the screen. Returns true when the user quit.
// Fails with not_supported when gpuscope was built without ncurses, and with invalid_argument
// when stdin/stdout is not a terminal.
Result<bool> run_live_view(const LiveState& state, const std::function<bool()>& should_stop);

}  // namespace gpuscope::telemetry::detail
