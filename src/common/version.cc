#include "gpuscope/version.h"

namespace gpuscope {
std::string_view version() {
  return GPUSCOPE_VERSION;
}
}  // namespace gpuscope
