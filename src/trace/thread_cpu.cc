#include "trace/thread_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace gpuscope::trace::detail {
namespace {

namespace fs = std::filesystem;

struct Stat {
  pid_t ppid = 0;
  double cpu_s = 0;
};

// "PID (COMM) STATE PPID ... UTIME(14) STIME(15) ...": COMM may hold spaces and parentheses, so
// fields are counted after the last ')'.
std::optional<Stat> read_stat(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  if (fields.size() < 13) return std::nullopt;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  Stat s;
  try {
    s.ppid = static_cast<pid_t>(std::stol(fields[1]));
    s.cpu_s = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
  } catch (...) {
    return std::nullopt;
  }
  return s;
}

std::string read_comm(const fs::path& file) {
  std::ifstream in(file);
  std::string name;
  std::getline(in, name);
  return name;
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// `root` and every process that descends from it.
std::vector<pid_t> family(pid_t root, const fs::path& proc) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (fs::directory_iterator it(proc, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!all_digits(name)) continue;
    auto stat = read_stat(it->path() / "stat");
    if (stat) children[stat->ppid].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> result{root};
  std::deque<pid_t> queue{root};
  while (!queue.empty() && result.size() < 100000) {
    const pid_t p = queue.front();
    queue.pop_front();
    for (pid_t c : children[p]) {
      if (c == root) continue;
      result.push_back(c);
      queue.push_back(c);
    }
  }
  return result;
}

}  // namespace

std::vector<ThreadReading> read_threads(pid_t root, const std::string& proc) {
  std::vector<ThreadReading> readings;
  for (pid_t pid : family(root, proc)) {
    const fs::path process = fs::path(proc) / std::to_string(pid);
    const std::string process_name = read_comm(process / "comm");
    std::error_code ec;
    for (fs::directory_iterator it(process / "task", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string tid = it->path().filename().string();
      if (!all_digits(tid)) continue;
      auto stat = read_stat(it->path() / "stat");
      if (!stat) continue;
      ThreadReading r;
      r.pid = pid;
      r.tid = static_cast<pid_t>(std::stol(tid));
      r.thread_name = read_comm(it->path() / "comm");
      r.process_name = process_name;
      r.cpu_s = stat->cpu_s;
      readings.push_back(std::move(r));
    }
  }
  return readings;
}

const char* role_name(ThreadRole role) {
  switch (role) {
    case ThreadRole::main:
      return "main";
    case ThreadRole::other:
      return "other";
    case ThreadRole::descendant:
      return "descendant";
  }
  return "other";
}

void ThreadCpuTracker::sample() {
  const bool first_sample = samples_ == 0;
  ++samples_;
  for (ThreadReading& r : read_threads(root_, proc_)) {
    const auto key = std::make_pair(r.pid, r.tid);
    auto it = threads_.find(key);
    if (it == threads_.end()) {
      Seen seen;
      seen.first = r;
      seen.appeared_later = !first_sample;
      seen.last = std::move(r);
      threads_.emplace(key, std::move(seen));
    } else {
      it->second.last = std::move(r);
    }
  }
}

std::vector<ThreadUse> ThreadCpuTracker::use() const {
  std::vector<ThreadUse> result;
  for (const auto& [key, seen] : threads_) {
    ThreadUse u;
    u.pid = key.first;
    u.tid = key.second;
    u.thread_name = seen.last.thread_name;
    u.process_name = seen.last.process_name;
    u.role = key.first != root_    ? ThreadRole::descendant
             : key.second == root_ ? ThreadRole::main
                                   : ThreadRole::other;
    u.cpu_s = seen.appeared_later ? seen.last.cpu_s : seen.last.cpu_s - seen.first.cpu_s;
    if (u.cpu_s <= 0) continue;
    result.push_back(std::move(u));
  }
  std::sort(result.begin(), result.end(),
            [](const ThreadUse& a, const ThreadUse& b) { return a.cpu_s > b.cpu_s; });
  return result;
}

std::map<ThreadRole, double> cpu_by_role(const std::vector<ThreadUse>& threads) {
  std::map<ThreadRole, double> sums{
      {ThreadRole::main, 0.0}, {ThreadRole::other, 0.0}, {ThreadRole::descendant, 0.0}};
  for (const ThreadUse& t : threads) sums[t.role] += t.cpu_s;
  return sums;
}

}  // namespace gpuscope::trace::detail
