// gpuscope-torch: runs one LibTorch reference workload and reports it as JSON lines on stdout.
// No exception leaves main: LibTorch's errors become `error` lines and an exit status.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <variant>

#include "distributed/launch_env.h"
#include "distributed/launcher.h"
#include "input/image_set.h"
#include "input/jpeg_codec.h"
#include "json_protocol.h"
#include "json_writer.h"
#include "options.h"
#include "runner.h"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int signal_number) {
  if (g_stop.exchange(true)) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
}

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

int usage_error(const std::string& message) {
  using namespace gpuscope::workloads;
  std::fprintf(stderr, "gpuscope-torch: %s\n", message.c_str());
  print_line(error_line("invalid_argument", message));
  print_line(done_line(kTorchExitUsage));
  return kTorchExitUsage;
}

int run(int argc, char** argv) {
  using namespace gpuscope::workloads;
  const auto parsed = parse_command_line(std::span<const char* const>(argv + 1, argc - 1));
  if (const auto* error = std::get_if<UsageError>(&parsed)) return usage_error(error->message);
  const CommandLine& command = std::get<CommandLine>(parsed);
  if (command.help) {
    std::fputs(help_text().c_str(), stdout);
    return kTorchExitOk;
  }
  if (command.describe) {
    print_line(describe_json());
    return kTorchExitOk;
  }
  if (const MakeImagesOptions& images = command.config.make_images; !images.dir.empty()) {
    const ImageSetOptions options{images.dir, images.count, images.classes, command.config.seed};
    if (const auto error = write_image_set(options)) {
      const bool no_codec = !jpeg_available();
      print_line(no_codec ? skipped_line("not_supported", *error) : error_line("internal", *error));
      const int exit_code = no_codec ? kTorchExitSkipped : kTorchExitFailed;
      print_line(done_line(exit_code));
      return exit_code;
    }
    print_line(JsonObject()
                   .add("v", kProtocolVersion)
                   .add("type", "images")
                   .add("dir", images.dir)
                   .add("count", images.count)
                   .add("classes", images.classes)
                   .str());
    print_line(done_line(kTorchExitOk));
    return kTorchExitOk;
  }
  const auto env = read_launch_env(process_environment());
  if (const auto* problem = std::get_if<std::string>(&env)) {
    return usage_error(*problem);
  }
  RunConfig config = command.config;
  config.launch = std::get<LaunchEnv>(env);
  if (config.world_size && *config.world_size > 1 && config.launch.launcher == "none") {
    // No launcher set the variables: start the ranks here, as torchrun would.
    LaunchPlan plan;
    plan.program = "/proc/self/exe";
    plan.args.assign(argv + 1, argv + argc);
    plan.world_size = static_cast<int>(*config.world_size);
    std::signal(SIGPIPE, SIG_IGN);
    const int exit_code = launch_ranks(plan, print_line);
    print_line(done_line(exit_code));
    return exit_code;
  }
  if (config.world_size && *config.world_size != config.launch.world_size) {
    return usage_error("--world-size " + std::to_string(*config.world_size) +
                       " disagrees with the launcher's world size " +
                       std::to_string(config.launch.world_size));
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const int rank = config.launch.rank;
  const bool tagged = config.launch.distributed();
  const LineSink sink = [&](const std::string& line) {
    print_line(tagged ? with_rank(line, rank) : line);
  };
  const int exit_code = run_workload(config, sink, &g_stop);
  sink(done_line(exit_code));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope-torch: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "gpuscope-torch: unknown error\n");
  }
  return gpuscope::workloads::kTorchExitFailed;
}
