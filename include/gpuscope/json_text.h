// JSON written by hand, without a JSON library and without exceptions: for code that cannot
// link one (libgpuscope_inject.so, loaded into other programs).
#pragma once

#include <string>
#include <string_view>

namespace gpuscope {

// Appends `text` to `out` as a quoted JSON string. Valid UTF-8 passes through; control
// characters, DEL, '"' and '\\' are escaped; each byte that is not part of valid UTF-8 becomes
// U+FFFD, so the result always parses.
void append_json_string(std::string& out, std::string_view text);

}  // namespace gpuscope
