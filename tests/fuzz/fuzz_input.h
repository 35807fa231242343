// What the fuzz targets share. Each target is one LLVMFuzzerTestOneInput (libFuzzer's entry
// point) over one reader of outside input; the same source is linked either with libFuzzer (the
// fuzz preset) or with replay_main.cc, which feeds it every seed and regression file (every
// other build). See docs/testing.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input's lines, without their '\n' (a last line without one included).
std::vector<std::string_view> split_lines(std::string_view text);

// Writes `bytes` to a file private to this process (in the temporary directory, removed at
// exit) and returns its path, for readers that take a path. Each call replaces the file and
// removes the SQLite side files (-wal, -shm, -journal) a previous input may have left.
const std::string& write_input_file(std::string_view bytes);

}  // namespace gpuscope::fuzz

// libFuzzer's entry point: one input; returns 0 (any other value is reserved).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
