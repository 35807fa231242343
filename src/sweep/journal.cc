#include "sweep/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace gpuscope::sweep::detail {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJournalPrefix = "power-limit-";
constexpr const char* kClockJournalPrefix = "locked-clocks-";

Status errno_status(Code code, const std::string& what) {
  return Status(code, fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string lock_path(const std::string& state_dir, const std::string& uuid) {
  return state_dir + "/" + kJournalPrefix + uuid + ".lock";
}

Status write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(Code::io_error, "writing " + path);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

std::string journal_path(const std::string& state_dir, const std::string& uuid, Knob knob) {
  return state_dir + "/" + (knob == Knob::locked_clocks ? kClockJournalPrefix : kJournalPrefix) +
         uuid + ".json";
}

std::string prior_setting(const JournalEntry& entry) {
  if (entry.knob == Knob::locked_clocks) return "unlocked SM clocks";
  return fmt::format("{:.0f} W", entry.prior_limit_w);
}

Status ensure_state_dir(const std::string& state_dir) {
  std::error_code error;
  fs::create_directories(state_dir, error);
  if (error) {
    return Status(Code::io_error, fmt::format("cannot create the state directory {}: {}", state_dir,
                                              error.message()));
  }
  return {};
}

Status write_journal(const std::string& state_dir, const JournalEntry& entry) {
  nlohmann::json json = {{"kind", kJournalKind},
                         {"version", kJournalVersion},
                         {"knob", knob_name(entry.knob)},
                         {"uuid", entry.uuid},
                         {"index", entry.index},
                         {"name", entry.name},
                         {"pid", entry.pid},
                         {"guardian_pid", entry.guardian_pid},
                         {"written_unix_s", entry.written_unix_s},
                         {"restore_with", "gpuscope sweep --restore"}};
  if (entry.knob == Knob::power_limit) {
    json["prior_power_limit_w"] = entry.prior_limit_w;
  } else {
    // NVML has no getter for a lock: "unlocked" is what a reset restores.
    json["prior_locked_clocks"] = "unlocked";
    json["restore"] = "nvmlDeviceResetGpuLockedClocks";
  }
  const std::string path = journal_path(state_dir, entry.uuid, entry.knob);
  const std::string temp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status(Code::io_error, "cannot write the journal " + temp);
  Status written = write_all(fd, json.dump(2) + "\n", temp);
  if (written.ok() && ::fsync(fd) != 0) written = errno_status(Code::io_error, "fsync " + temp);
  ::close(fd);
  if (written.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    written = errno_status(Code::io_error, "cannot rename the journal to " + path);
  }
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  if (const int dir = ::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

Result<JournalEntry> read_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::not_found, "no journal " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const auto json = nlohmann::json::parse(text.str());
    if (json.at("kind") != kJournalKind || json.at("version") != kJournalVersion) {
      return Status(Code::data_error, path + " is not a gpuscope sweep journal of version 1");
    }
    JournalEntry entry;
    const std::string knob = json.value("knob", knob_name(Knob::power_limit));
    if (knob == knob_name(Knob::locked_clocks)) {
      entry.knob = Knob::locked_clocks;
    } else if (knob != knob_name(Knob::power_limit)) {
      return Status(Code::data_error, fmt::format("{}: unknown knob '{}'", path, knob));
    }
    entry.uuid = json.at("uuid").get<std::string>();
    entry.index = json.at("index").get<unsigned>();
    entry.name = json.value("name", "");
    if (entry.knob == Knob::power_limit) {
      entry.prior_limit_w = json.at("prior_power_limit_w").get<double>();
    }
    entry.pid = json.value("pid", 0);
    entry.guardian_pid = json.value("guardian_pid", 0);
    entry.written_unix_s = json.value("written_unix_s", 0.0);
    return entry;
  } catch (const nlohmann::json::exception& e) {
    return Status(Code::data_error, fmt::format("{} is damaged: {}", path, e.what()));
  }
}

std::vector<std::string> list_journals(const std::string& state_dir) {
  std::vector<std::string> paths;
  std::error_code error;
  for (fs::directory_iterator it(state_dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if ((name.starts_with(kJournalPrefix) || name.starts_with(kClockJournalPrefix)) &&
        name.ends_with(".json")) {
      paths.push_back(it->path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

Result<std::unique_ptr<GpuLock>> GpuLock::acquire(const std::string& state_dir,
                                                  const std::string& uuid, bool wait) {
  const std::string path = lock_path(state_dir, uuid);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status(Code::io_error, "cannot open the lock " + path);
  int rc;
  while ((rc = ::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    char holder[32] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    return Status(
        Code::io_error,
        fmt::format("another sweep (pid {}) is changing GPU {}'s power limit or clocks; "
                    "one sweep per GPU at a time",
                    n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "?", uuid));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return std::unique_ptr<GpuLock>(new GpuLock(fd));
}

GpuLock::~GpuLock() {
  ::close(fd_);
}

Status restore_entry(const nvml::Session& session, const std::string& state_dir,
                     const JournalEntry& entry) {
  const std::string path = journal_path(state_dir, entry.uuid, entry.knob);
  auto device = session.device_by_uuid(entry.uuid);
  Status status = device.status();
  if (device.ok()) {
    status = entry.knob == Knob::locked_clocks ? device->reset_locked_sm_clocks()
                                               : device->set_power_limit_w(entry.prior_limit_w);
  }
  // A reset cannot be read back (NVML has no getter for a lock); a limit can.
  if (status.ok() && entry.knob == Knob::power_limit) {
    const auto now = device->power_limit_w();
    if (!now.ok()) {
      status = now.status();
    } else if (std::abs(*now - entry.prior_limit_w) > 0.5) {
      status = Status(Code::internal, fmt::format("the limit reads {:.0f} W after setting {:.0f} W",
                                                  *now, entry.prior_limit_w));
    }
  }
  const bool gone = status.code() == Code::gpu_lost || status.code() == Code::not_found;
  if (status.ok() || gone) ::unlink(path.c_str());
  return status;
}

}  // namespace gpuscope::sweep::detail
