// The live view in a gpuscope built without ncurses (GPUSCOPE_WITH_NCURSES=OFF).
#include "telemetry/live_view.h"

namespace gpuscope::telemetry::detail {

Result<bool> run_live_view(const LiveState&, const std::function<bool()>&) {
  return Status(Code::not_supported,
                "this gpuscope was built without ncurses: no live view (use --no-tui, or rebuild "
                "with libncurses-dev installed)");
}

}  // namespace gpuscope::telemetry::detail
