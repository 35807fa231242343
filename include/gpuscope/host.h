// The machine gpuscope runs on.
#pragma once

#include <string>

namespace gpuscope {

// This machine's host name (gethostname); empty when it cannot be read. Callers that need a
// placeholder choose their own ("unknown" in info, "host" in a study's folder name).
std::string host_name();

}  // namespace gpuscope
