#include "bench/share_mps.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/guardian.h"
#include "gpuscope/process.h"

namespace gpuscope::bench {
namespace detail {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kJournalKind = "gpuscope.bench.mps_journal";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// argv[0]'s file name of a process, "" when unreadable.
std::string program_of(const fs::path& proc_pid) {
  const std::string cmdline = slurp(proc_pid / "cmdline");
  const std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
  return fs::path(argv0).filename().string();
}

// A variable of a process's environment ("" when unset or unreadable: another user's).
std::string env_of(const fs::path& proc_pid, const std::string& name) {
  const std::string environ = slurp(proc_pid / "environ");
  const std::string prefix = name + "=";
  for (std::size_t start = 0; start < environ.size();) {
    const std::size_t end = std::min(environ.find('\0', start), environ.size());
    const std::string_view entry(environ.data() + start, end - start);
    if (entry.starts_with(prefix)) return std::string(entry.substr(prefix.size()));
    start = end + 1;
  }
  return "";
}

std::string pipe_dir_of(const fs::path& proc_pid) {
  return env_of(proc_pid, "CUDA_MPS_PIPE_DIRECTORY");
}

// The copies a gpuscope that is gone started in `run_dir` (their go file is there).
std::vector<pid_t> copies_of(const std::string& run_dir, const std::string& proc_dir) {
  std::vector<pid_t> pids;
  if (run_dir.empty()) return pids;
  const std::string prefix = (fs::path(run_dir) / "go-").string();
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (env_of(entry.path(), "GPUSCOPE_SHARE_GO_FILE").starts_with(prefix)) {
      pids.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return pids;
}

// Every nvidia-cuda-mps-* process: (pid, its pipe folder).
std::vector<std::pair<pid_t, std::string>> mps_processes(const std::string& proc_dir) {
  std::vector<std::pair<pid_t, std::string>> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!program_of(entry.path()).starts_with("nvidia-cuda-mps")) continue;
    found.emplace_back(static_cast<pid_t>(std::stol(name)), pipe_dir_of(entry.path()));
  }
  return found;
}

bool same_dir(const std::string& a, const std::string& b) {
  return !a.empty() && !b.empty() &&
         fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
}

// The last non-empty line of the daemon's control log, for a message.
std::string last_log_line(const std::string& log_dir) {
  std::istringstream log(slurp(fs::path(log_dir) / "control.log"));
  std::string line, last;
  while (std::getline(log, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

std::vector<std::pair<std::string, std::string>> daemon_env(const MpsJournal& j) {
  return {{"CUDA_MPS_PIPE_DIRECTORY", j.pipe_dir}, {"CUDA_MPS_LOG_DIRECTORY", j.log_dir}};
}

// Runs the control program with `input` on its stdin (through sh: a child's stdin is
// /dev/null otherwise). Its output goes to `output`.
Result<ProcessExit> run_control(const MpsJournal& j, const std::string& arg,
                                const std::string& input, std::string* output,
                                const std::string& visible_devices = "") {
  ProcessOptions po;
  if (input.empty()) {
    po.argv = {j.control_program, arg};
  } else {
    po.argv = {"/bin/sh", "-c", "printf '%s\\n' \"$1\" | \"$0\"", j.control_program, input};
  }
  po.set_env = daemon_env(j);
  if (!visible_devices.empty()) po.set_env.emplace_back("CUDA_VISIBLE_DEVICES", visible_devices);
  po.on_stdout_line = [output](std::string_view line) { *output += std::string(line) + "\n"; };
  po.stderr_mode = StderrMode::lines;
  po.on_stderr_line = [output](std::string_view line) { *output += std::string(line) + "\n"; };
  po.timeout_seconds = 30;
  po.linger_seconds = 0.2;  // the daemon it forks keeps nothing of ours open, but be sure
  return run_process(std::move(po));
}

bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool process_alive(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

}  // namespace

std::optional<std::string> find_running_mps(const std::string& pipe_dir,
                                            const std::string& proc_dir,
                                            const std::string& except_pipe_dir) {
  std::vector<std::string> dirs = {pipe_dir};
  if (const char* env = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  std::error_code error;
  for (const std::string& dir : dirs) {
    if (!same_dir(dir, except_pipe_dir) && fs::exists(fs::path(dir) / "control", error)) {
      return fmt::format("control socket {}/control", dir);
    }
  }
  for (const auto& [pid, dir] : mps_processes(proc_dir)) {
    if (same_dir(dir, except_pipe_dir)) continue;
    return fmt::format("process {} ({})", pid,
                       program_of(fs::path(proc_dir) / std::to_string(pid)));
  }
  return std::nullopt;
}

std::vector<pid_t> mps_processes_of(const std::string& pipe_dir, const std::string& proc_dir) {
  std::vector<pid_t> pids;
  for (const auto& [pid, dir] : mps_processes(proc_dir)) {
    if (same_dir(dir, pipe_dir)) pids.push_back(pid);
  }
  return pids;
}

std::string mps_journal_path(const std::string& state_dir, pid_t pid) {
  return fmt::format("{}/mps-{}.json", state_dir, pid);
}

Status write_mps_journal(const std::string& path, const MpsJournal& j) {
  const nlohmann::json doc = {{"kind", kJournalKind},   {"version", 1},
                              {"pid", j.pid},           {"control_program", j.control_program},
                              {"pipe_dir", j.pipe_dir}, {"log_dir", j.log_dir},
                              {"proc_dir", j.proc_dir}, {"run_dir", j.run_dir}};
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << doc.dump(2) << '\n';
    out.flush();
    if (!out) return Status(Code::io_error, "cannot write the MPS journal " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return Status(Code::io_error,
                  fmt::format("cannot write the MPS journal {}: {}", path, std::strerror(errno)));
  }
  return {};
}

Result<MpsJournal> read_mps_journal(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) return Status(Code::not_found, "no MPS journal " + path);
  const auto doc = nlohmann::json::parse(slurp(path), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("kind", "") != kJournalKind ||
      !doc.contains("pipe_dir") || !doc.contains("control_program")) {
    return Status(Code::data_error, path + " is not a gpuscope MPS journal");
  }
  MpsJournal j;
  j.pid = doc.value("pid", 0);
  j.control_program = doc.value("control_program", "");
  j.pipe_dir = doc.value("pipe_dir", "");
  j.log_dir = doc.value("log_dir", "");
  j.proc_dir = doc.value("proc_dir", "/proc");
  j.run_dir = doc.value("run_dir", "");
  return j;
}

// After gpuscope is gone: its run folder holds nothing but go files now.
void remove_run_dir(const MpsJournal& j) {
  std::error_code error;
  if (j.run_dir.empty()) return;
  for (const auto& entry : fs::directory_iterator(j.run_dir, error)) {
    if (!entry.path().filename().string().starts_with("go-")) return;
  }
  fs::remove_all(j.run_dir, error);
}

void end_copies(const MpsJournal& j) {
  for (pid_t pid : copies_of(j.run_dir, j.proc_dir)) ::kill(pid, SIGTERM);
  const bool ended = wait_until([&] { return copies_of(j.run_dir, j.proc_dir).empty(); }, 10);
  if (!ended) {
    for (pid_t pid : copies_of(j.run_dir, j.proc_dir)) ::kill(pid, SIGKILL);
    wait_until([&] { return copies_of(j.run_dir, j.proc_dir).empty(); }, 5);
  }
}

Status stop_private_mps(const MpsJournal& j) {
  std::error_code error;
  const fs::path control = fs::path(j.pipe_dir) / "control";
  // The daemon's processes (their environment names the pipe folder) are the surest sign; the
  // control socket is the other (a real daemon may leave the socket file behind when it ends).
  const bool had_processes = !mps_processes_of(j.pipe_dir, j.proc_dir).empty();
  const bool listening = had_processes || fs::exists(control, error);
  std::string output;
  if (listening) {
    auto quit = run_control(j, "", "quit", &output);
    if (!quit.ok()) return quit.status().with_context("stopping the MPS daemon");
  }
  const bool gone = wait_until(
      [&] {
        return mps_processes_of(j.pipe_dir, j.proc_dir).empty() &&
               (had_processes || !fs::exists(control, error));
      },
      10);
  if (!gone) {
    // Its server may be stuck on a client: the processes are ours, so end them.
    for (pid_t pid : mps_processes_of(j.pipe_dir, j.proc_dir)) ::kill(pid, SIGKILL);
    wait_until([&] { return mps_processes_of(j.pipe_dir, j.proc_dir).empty(); }, 5);
  }
  fs::remove_all(j.pipe_dir, error);
  fs::remove_all(j.log_dir, error);
  if (!mps_processes_of(j.pipe_dir, j.proc_dir).empty()) {
    return Status(Code::internal,
                  fmt::format("the private MPS daemon (pipe folder {}) did not stop", j.pipe_dir));
  }
  return {};
}

Result<std::unique_ptr<MpsDaemon>> MpsDaemon::start(const MpsOptions& o,
                                                    const std::string& run_dir) {
  auto daemon = std::unique_ptr<MpsDaemon>(new MpsDaemon());
  if (o.active_thread_percentage) {
    daemon->env_.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                              std::to_string(*o.active_thread_percentage));
  }
  if (auto running = find_running_mps(o.system_pipe_dir, o.proc_dir)) {
    if (!o.use_system) {
      return Status(
          Code::invalid_argument,
          fmt::format("an MPS daemon is already running ({}): gpuscope will not start a second "
                      "one beside it. Run the copies under it with --mps-daemon system, or stop "
                      "it first (echo quit | nvidia-cuda-mps-control, as its owner)",
                      *running));
    }
    daemon->description_ = "system (" + *running + ")";
    return daemon;
  }
  if (o.use_system) {
    return Status(Code::not_found,
                  "--mps-daemon system: no MPS daemon is running (no control socket in " +
                      o.system_pipe_dir + ", no nvidia-cuda-mps-server process)");
  }
  if (Status found = check_program(o.control_program); !found.ok()) {
    return Status(Code::not_found,
                  fmt::format("{}; MPS needs nvidia-cuda-mps-control (part of the NVIDIA driver)",
                              found.message()));
  }
  MpsJournal& j = daemon->journal_;
  j.pid = ::getpid();
  j.control_program = o.control_program;
  j.pipe_dir = (fs::path(run_dir) / "mps-pipe").string();
  j.log_dir = (fs::path(run_dir) / "mps-log").string();
  j.proc_dir = o.proc_dir;
  j.run_dir = run_dir;
  std::error_code error;
  fs::create_directories(j.pipe_dir, error);
  fs::create_directories(j.log_dir, error);
  if (error) {
    return Status(Code::io_error, fmt::format("cannot create the MPS folders under {}: {}", run_dir,
                                              error.message()));
  }
  daemon->journal_path_ = mps_journal_path(o.state_dir, j.pid);
  GPUSCOPE_RETURN_IF_ERROR(write_mps_journal(daemon->journal_path_, j));
  daemon->private_ = true;  // from here on the destructor cleans up
  if (!o.guardian_argv.empty()) {
    std::vector<std::string> argv = o.guardian_argv;
    argv.push_back(daemon->journal_path_);
    auto guardian = gpuscope::detail::Guardian::start(argv, "the MPS daemon's guardian");
    if (!guardian.ok()) return guardian.status();
    daemon->guardian_ = std::move(guardian).value();
  }
  std::string output;
  auto started = run_control(j, "-d", "", &output, o.visible_devices);
  if (!started.ok()) return started.status().with_context("starting the MPS daemon");
  const bool listening =
      started->success() && wait_until(
                                [&] {
                                  return fs::exists(fs::path(j.pipe_dir) / "control", error) ||
                                         !mps_processes_of(j.pipe_dir, j.proc_dir).empty();
                                },
                                10);
  if (!listening) {
    std::string why = last_log_line(j.log_dir);
    if (why.empty()) why = output.empty() ? started->describe() : output;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Status(Code::internal, fmt::format("the MPS control daemon did not start ({} -d): {}",
                                              o.control_program, why));
  }
  const auto env = daemon_env(j);
  daemon->env_.insert(daemon->env_.begin(), env.begin(), env.end());
  daemon->description_ = fmt::format("private (pipe folder {})", j.pipe_dir);
  return daemon;
}

Status MpsDaemon::stop() {
  if (!private_ || stopped_) return {};
  const Status stopped = stop_private_mps(journal_);
  if (!stopped.ok()) return stopped;
  stopped_ = true;
  std::error_code error;
  fs::remove(journal_path_, error);
  return {};
}

MpsDaemon::~MpsDaemon() {
  if (Status s = stop(); !s.ok()) {
    std::cerr << "gpuscope: warning: " << s.message() << " (journal " << journal_path_
              << " kept: the next bench --share stops it)\n";
  }
}

}  // namespace detail

int run_mps_guardian(const std::string& journal_path) {
  return gpuscope::detail::guardian_main([&] {
    auto journal = detail::read_mps_journal(journal_path);
    if (!journal.ok()) return journal.code() == Code::not_found ? 0 : 1;
    detail::end_copies(*journal);
    const Status stopped = detail::stop_private_mps(*journal);
    if (!stopped.ok()) {
      std::cerr << "gpuscope: warning: " << stopped.message() << '\n';
      return 1;
    }
    std::error_code error;
    std::filesystem::remove(journal_path, error);
    detail::remove_run_dir(*journal);
    std::cerr << fmt::format(
        "gpuscope: stopped the private MPS daemon of gpuscope process {} (pipe folder {})\n",
        journal->pid, journal->pipe_dir);
    return 0;
  });
}

Result<int> stop_leftover_mps(const std::string& state_dir, std::ostream& out) {
  int stopped = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(state_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("mps-") || !name.ends_with(".json")) continue;
    auto journal = detail::read_mps_journal(entry.path().string());
    if (!journal.ok()) continue;
    if (detail::process_alive(journal->pid)) continue;  // its gpuscope still runs
    detail::end_copies(*journal);
    const Status s = detail::stop_private_mps(*journal);
    if (!s.ok()) {
      out << "gpuscope: warning: " << s.message() << '\n';
      continue;
    }
    std::filesystem::remove(entry.path(), error);
    detail::remove_run_dir(*journal);
    out << fmt::format(
        "gpuscope: stopped the private MPS daemon left by gpuscope process {} (pipe folder {})\n",
        journal->pid, journal->pipe_dir);
    ++stopped;
  }
  return stopped;
}

}  // namespace gpuscope::bench
