#include "store/file_probe.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpuscope::store::detail {
namespace {

constexpr std::size_t kHeaderBytes = 100;     // SQLite's database header
constexpr char kMagic[] = "SQLite format 3";  // + its terminating NUL: 16 bytes

std::uint32_t big_endian_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

Result<FileProbe> probe_file(const std::string& path) {
  namespace fs = std::filesystem;
  FileProbe probe;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec && status.type() != fs::file_type::not_found) {
    return Status(Code::io_error, fmt::format("cannot reach {}: {}", path, ec.message()));
  }
  if (status.type() == fs::file_type::not_found) return probe;
  if (status.type() != fs::file_type::regular) {
    return Status(Code::io_error, fmt::format("{} is not a regular file", path));
  }
  probe.exists = true;
  probe.size_bytes = fs::file_size(path, ec);
  if (ec) return Status(Code::io_error, fmt::format("cannot read {}: {}", path, ec.message()));
  if (probe.size_bytes < kHeaderBytes) return probe;

  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, kHeaderBytes> header{};
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size())) {
    return Status(Code::io_error, fmt::format("cannot read {}", path));
  }
  probe.sqlite = std::memcmp(header.data(), kMagic, sizeof kMagic) == 0;
  if (probe.sqlite) {
    probe.user_version = big_endian_u32(&header[60]);
    probe.application_id = big_endian_u32(&header[68]);
  }
  return probe;
}

}  // namespace gpuscope::store::detail
