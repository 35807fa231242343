// RFC 4180 fields: quoted when they hold a comma, quote or line break.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::report::detail {

std::string csv_field(std::string_view text);
// One record, fields joined by commas, ending in "\n".
std::string csv_line(const std::vector<std::string>& fields);

}  // namespace gpuscope::report::detail
