// gpuscope's own version, as written in the top-level CMakeLists.txt.
#pragma once

#include <string_view>

namespace gpuscope {
std::string_view version();
}  // namespace gpuscope
