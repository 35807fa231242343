// gpuscope-torch: runs one LibTorch reference workload and reports it as JSON lines on stdout.
// No exception leaves main: LibTorch's errors become `error` lines and an exit status.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <variant>

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

int run(int argc, char** argv) {
  using namespace gpuscope::workloads;
  const auto parsed = parse_command_line(std::span<const char* const>(argv + 1, argc - 1));
  if (const auto* error = std::get_if<UsageError>(&parsed)) {
    std::fprintf(stderr, "gpuscope-torch: %s\n", error->message.c_str());
    print_line(error_line("invalid_argument", error->message));
    print_line(done_line(kTorchExitUsage));
    return kTorchExitUsage;
  }
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
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const int exit_code = run_workload(command.config, print_line, &g_stop);
  print_line(done_line(exit_code));
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
