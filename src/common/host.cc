#include "gpuscope/host.h"

#include <unistd.h>

namespace gpuscope {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

}  // namespace gpuscope
