// A whole GPU as `gpuscope info` lists it, for the study tests' machines.
#pragma once

#include <string>
#include <utility>

#include "gpuscope/target.h"

namespace gpuscope::study::testing {

inline Target gpu(unsigned index, std::string uuid, std::string name) {
  Target t;
  t.gpu_index = index;
  t.gpu_uuid = std::move(uuid);
  t.gpu_name = std::move(name);
  t.name = t.gpu_name;
  return t;
}

}  // namespace gpuscope::study::testing
