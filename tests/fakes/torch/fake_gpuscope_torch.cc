// A scripted stand-in for gpuscope-torch (protocol version 1, workloads/torch/README.md), for
// testing `gpuscope bench` without LibTorch or a GPU.
//
// Arguments: those of gpuscope-torch; --model, --task, --mode, --batch, --windows, --steps and
// the knob and input switches shape the output, the rest is accepted and ignored.
// Behaviour, from the environment (a MATCH is a comma list of items like "fp8",
// "resnet50:train" or "vit_b16:infer:fp16": an item matches when each of its ':'-separated
// tokens equals the row's model, task or mode):
//   GPUSCOPE_FAKE_TORCH_LOG=FILE        append one line per run: the arguments
//   GPUSCOPE_FAKE_TORCH_DEVICE_LOG=FILE append one line per run: its CUDA_VISIBLE_DEVICES
//                                       ("unset" when it has none)
//   GPUSCOPE_FAKE_TORCH_OOM=MATCH       `skipped` out_of_memory, exit 3
//   GPUSCOPE_FAKE_TORCH_UNSUPPORTED=M   `skipped` not_supported, exit 3
//   GPUSCOPE_FAKE_TORCH_NO_DEVICE=MATCH `skipped` no_device (no CUDA device), exit 3
//   GPUSCOPE_FAKE_TORCH_KILL=MATCH      one window, then SIGKILL itself
//   GPUSCOPE_FAKE_TORCH_SEGV=MATCH      one window, then SIGSEGV
//   GPUSCOPE_FAKE_TORCH_MALFORMED=M     a line that is not JSON after `start`
//   GPUSCOPE_FAKE_TORCH_FAIL=MATCH      an `error` line, exit 6
//   GPUSCOPE_FAKE_TORCH_TIME_SCALE=X    window times x X (default 1; fp32 windows are 0.2 s)
//   GPUSCOPE_FAKE_TORCH_NO_GUARD=1      --task guard is an unknown task (exit 2)
//   GPUSCOPE_FAKE_TORCH_GUARD_DIVERGE / _GUARD_NAN / _GUARD_FLAT / _GUARD_COLLAPSE=MATCH
//                                       the guard's loss curve rises / turns NaN / stays flat /
//                                       (amp_fp16) loses its loss scale
// Sharing (`gpuscope bench --share`, which sets GPUSCOPE_SHARE_COPY and GPUSCOPE_SHARE_COPIES):
//   GPUSCOPE_SHARE_GO_FILE=PATH         after `start`, wait until PATH exists (the start barrier)
//   GPUSCOPE_FAKE_TORCH_STAGGER=S       copy i sleeps i x S seconds before `start`
//   GPUSCOPE_FAKE_TORCH_SHARED=1        windows slow down as N copies share a GPU: x N time-sliced,
//                                       x N / 1.85 (at least 1) under MPS (CUDA_MPS_PIPE_DIRECTORY
//                                       set), not at all on a MIG instance (CUDA_VISIBLE_DEVICES
//                                       starting with MIG-)
//   GPUSCOPE_FAKE_TORCH_FITS=K          with more than K copies, copies K.. are out of memory
//   GPUSCOPE_FAKE_TORCH_ENV_LOG=FILE    append one line per run: copy, CUDA_VISIBLE_DEVICES, the
//                                       MPS variables, and the steady clock (ns) at start and go
// SIGINT/SIGTERM: a partial `result` after the current window, exit 130.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int) {
  g_interrupted = 1;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Args {
  std::string model = "vit_b16", task = "train", mode = "amp_bf16", batch;
  int windows = 5, steps = 10;
  std::map<std::string, std::string> flags;  // every "--name value"
};

bool matches(const std::string& list, const Args& a) {
  std::size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    auto comma = list.find(',', start);
    std::string item = list.substr(start, comma - start);
    bool all = !item.empty();
    std::size_t s = 0;
    while (all && s <= item.size()) {
      auto colon = item.find(':', s);
      std::string token = item.substr(s, colon - s);
      all = token == a.model || token == a.task || token == a.mode;
      if (colon == std::string::npos) break;
      s = colon + 1;
    }
    if (all) return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

void line(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
}

std::string q(const std::string& s) {
  return "\"" + s + "\"";
}

double mode_factor(const std::string& mode) {
  static const std::map<std::string, double> f = {
      {"fp32", 1.0}, {"tf32", 2.0}, {"amp_fp16", 4.0}, {"amp_bf16", 4.2},
      {"fp16", 5.0}, {"bf16", 5.1}, {"fp8", 6.0}};
  auto it = f.find(mode);
  return it == f.end() ? 1.0 : it->second;
}

void start_line(const Args& a, int batch) {
  line("{\"v\":1,\"type\":\"start\",\"model\":" + q(a.model) + ",\"task\":" + q(a.task) +
       ",\"mode\":" + q(a.mode) + ",\"batch\":" + std::to_string(batch) +
       ",\"torch_version\":\"2.11.0+fake\",\"device\":{\"type\":\"cuda\",\"name\":\"Fake GPU\","
       "\"index\":0}}");
}

int done(bool ok, int code) {
  line(std::string("{\"v\":1,\"type\":\"done\",\"ok\":") + (ok ? "true" : "false") +
       ",\"exit_code\":" + std::to_string(code) + "}");
  return code;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int guard(const Args& a) {
  if (env("GPUSCOPE_FAKE_TORCH_NO_GUARD") == "1") {
    line(
        "{\"v\":1,\"type\":\"error\",\"code\":\"invalid_argument\",\"message\":\"--task: "
        "unknown task 'guard'\"}");
    return done(false, 2);
  }
  start_line(a, 32);
  const int steps = 60;
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    const double noise = 0.02 * std::sin(i * 1.7 + mode_factor(a.mode));
    double loss = 2.3 * std::exp(-0.05 * i) + 0.2 + noise;
    if (matches(env("GPUSCOPE_FAKE_TORCH_GUARD_DIVERGE"), a) && i > 15) {
      loss = 2.3 * std::exp(-0.05 * 15) + 0.2 + 0.08 * (i - 15) + noise;
    }
    if (matches(env("GPUSCOPE_FAKE_TORCH_GUARD_FLAT"), a)) loss = 2.3 + noise;
    if (matches(env("GPUSCOPE_FAKE_TORCH_GUARD_NAN"), a) && i >= 30) loss = NAN;
    losses.push_back(loss);
  }
  std::string values;
  for (double v : losses) values += (values.empty() ? "" : ",") + number(v);
  std::string scale = "null", skipped = "null";
  if (a.mode == "amp_fp16") {
    const bool collapse = matches(env("GPUSCOPE_FAKE_TORCH_GUARD_COLLAPSE"), a);
    scale = collapse ? "1.52587890625e-05" : "65536";
    skipped = collapse ? "45" : "2";
  }
  line("{\"v\":1,\"type\":\"result\",\"model\":" + q(a.model) +
       ",\"task\":\"guard\",\"mode\":" + q(a.mode) +
       ",\"batch\":32,\"samples_per_second\":null,\"loss\":{\"first\":" + number(losses.front()) +
       ",\"last\":" + number(losses.back()) + ",\"values\":[" + values +
       "]},\"loss_scale\":" + scale + ",\"skipped_steps\":" + skipped + ",\"partial\":false}");
  return done(true, 0);
}

}  // namespace

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The start barrier; returns when this copy may go on.
void wait_for_go() {
  const std::string go = env("GPUSCOPE_SHARE_GO_FILE");
  if (go.empty()) return;
  for (int i = 0; i < 30000 && !g_interrupted; ++i) {
    if (access(go.c_str(), F_OK) == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// How much slower this copy runs for sharing the GPU (GPUSCOPE_FAKE_TORCH_SHARED).
double share_slowdown() {
  if (env("GPUSCOPE_FAKE_TORCH_SHARED") != "1") return 1.0;
  const double copies = std::max(1, std::atoi(env("GPUSCOPE_SHARE_COPIES").c_str()));
  if (env("CUDA_VISIBLE_DEVICES").rfind("MIG-", 0) == 0) return 1.0;
  if (!env("CUDA_MPS_PIPE_DIRECTORY").empty()) return std::max(1.0, copies / 1.85);
  return copies;
}

int main(int argc, char** argv) {
  Args a;
  std::string joined;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    joined += (joined.empty() ? "" : " ") + arg;
    if (arg.rfind("--", 0) == 0 && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      a.flags[arg] = argv[i + 1];
    }
  }
  if (auto log = env("GPUSCOPE_FAKE_TORCH_LOG"); !log.empty()) {
    std::ofstream(log, std::ios::app) << joined << '\n';
  }
  if (auto log = env("GPUSCOPE_FAKE_TORCH_DEVICE_LOG"); !log.empty()) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::ofstream(log, std::ios::app) << (visible ? visible : "unset") << '\n';
  }
  auto flag = [&](const char* name, std::string fallback) {
    auto it = a.flags.find(name);
    return it == a.flags.end() ? fallback : it->second;
  };
  a.model = flag("--model", a.model);
  a.task = flag("--task", a.task);
  a.mode = flag("--mode", a.mode);
  a.batch = flag("--batch", "");
  a.windows = std::atoi(flag("--windows", "5").c_str());
  a.steps = std::atoi(flag("--steps", "10").c_str());
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  if (a.task == "guard") return guard(a);
  int batch = a.task == "train" ? 128 : 512;
  if (a.batch == "auto") {
    line(
        "{\"v\":1,\"type\":\"batch_probe\",\"batch\":1024,\"fits\":false,\"outcome\":"
        "\"out_of_memory\",\"message\":\"fake\"}");
    batch = 768;
  } else if (!a.batch.empty()) {
    batch = std::atoi(a.batch.c_str());
  }
  const int copy = std::atoi(env("GPUSCOPE_SHARE_COPY").c_str());
  if (const std::string stagger = env("GPUSCOPE_FAKE_TORCH_STAGGER"); !stagger.empty()) {
    std::this_thread::sleep_for(std::chrono::duration<double>(copy * std::atof(stagger.c_str())));
  }
  start_line(a, batch);
  const long long started_ns = steady_ns();
  wait_for_go();
  if (auto log = env("GPUSCOPE_FAKE_TORCH_ENV_LOG"); !log.empty()) {
    std::ofstream(log, std::ios::app)
        << "copy=" << copy << " visible=" << env("CUDA_VISIBLE_DEVICES")
        << " mps_pipe=" << env("CUDA_MPS_PIPE_DIRECTORY")
        << " mps_log=" << env("CUDA_MPS_LOG_DIRECTORY")
        << " mps_threads=" << env("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
        << " started_ns=" << started_ns << " go_ns=" << steady_ns() << '\n';
  }
  const std::string fits = env("GPUSCOPE_FAKE_TORCH_FITS");
  const bool beyond_fit =
      !fits.empty() && std::atoi(env("GPUSCOPE_SHARE_COPIES").c_str()) > std::atoi(fits.c_str()) &&
      copy >= std::atoi(fits.c_str());
  if (beyond_fit || matches(env("GPUSCOPE_FAKE_TORCH_OOM"), a)) {
    line(
        "{\"v\":1,\"type\":\"skipped\",\"code\":\"out_of_memory\",\"reason\":\"CUDA out of "
        "memory at batch " +
        std::to_string(batch) + " (fake)\"}");
    return done(false, 3);
  }
  if (matches(env("GPUSCOPE_FAKE_TORCH_NO_DEVICE"), a)) {
    line(
        "{\"v\":1,\"type\":\"skipped\",\"code\":\"no_device\",\"reason\":\"no CUDA device "
        "is visible (fake)\"}");
    return done(false, 3);
  }
  if (matches(env("GPUSCOPE_FAKE_TORCH_UNSUPPORTED"), a)) {
    line("{\"v\":1,\"type\":\"skipped\",\"code\":\"not_supported\",\"reason\":\"" + a.mode +
         " needs compute capability 8.9 (fake)\"}");
    return done(false, 3);
  }
  if (matches(env("GPUSCOPE_FAKE_TORCH_FAIL"), a)) {
    line("{\"v\":1,\"type\":\"error\",\"code\":\"internal\",\"message\":\"fake failure\"}");
    return done(false, 6);
  }
  if (matches(env("GPUSCOPE_FAKE_TORCH_MALFORMED"), a)) line("this is not JSON");

  double factor = mode_factor(a.mode) * (a.task == "infer" ? 3.0 : 1.0);
  if (flag("--cudnn-benchmark", "on") == "off") factor *= 0.8;
  if (flag("--graphs", "on") == "off") factor *= 0.9;
  if (flag("--input", "synthetic") == "host") {
    if (flag("--loader-workers", "0") == "0") factor *= 0.5;
    if (flag("--pinned", "off") == "on") factor *= 1.2;
    if (flag("--non-blocking", "off") == "on") factor *= 1.1;
  }
  const std::string scale_text = env("GPUSCOPE_FAKE_TORCH_TIME_SCALE");
  const double scale = scale_text.empty() ? 1.0 : std::atof(scale_text.c_str());
  const double window_s = 0.2 / factor * scale * share_slowdown();
  const double samples = static_cast<double>(batch) * a.steps;
  // --world-size N (data parallel): the job's samples/s scale at 97 %. With --grad-sync off each
  // rank runs at its GPU's own pace, all busy at once: rank 0 at 99 % of one GPU alone, the others
  // at 98 % (a slower card); the job's figure is their sum.
  const int world = std::max(1, std::atoi(flag("--world-size", "1").c_str()));
  const bool synced = flag("--grad-sync", "on") == "on";
  // --all-reduce auto: the fake machine's GPUs have peer access, so the copy engines.
  const std::string all_reduce = flag("--all-reduce", "auto") == "nccl" ? "nccl" : "copy-engine";
  // --shard-optimizer auto: sharded with the copy engines and no loss scaling (not fp16).
  const bool sharded = all_reduce == "copy-engine" && flag("--shard-optimizer", "auto") != "off" &&
                       a.mode.find("fp16") == std::string::npos;
  const double memory = 8e9 / std::sqrt(mode_factor(a.mode)) * batch / 128.0;
  const double one_gpu = samples / window_s;
  const auto rank_rate = [&](int rank) {
    return one_gpu * (synced ? 0.97 : rank == 0 ? 0.99 : 0.98);
  };
  double sps = one_gpu;
  std::string ranks;
  if (world > 1) {
    sps = 0;
    for (int r = 0; r < world; ++r) {
      sps += rank_rate(r);
      ranks += std::string(r ? "," : "") + "{\"rank\":" + std::to_string(r) +
               ",\"samples_per_second\":" + number(rank_rate(r)) +
               ",\"peak_reserved_bytes\":" + number(memory * 1.2) + "}";
    }
  }
  std::string windows;
  int w = 0;
  for (; w < a.windows && !g_interrupted; ++w) {
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    line("{\"v\":1,\"type\":\"window\",\"window\":" + std::to_string(w) +
         ",\"steps\":" + std::to_string(a.steps) + ",\"samples\":" + number(samples) +
         ",\"seconds\":" + number(seconds) +
         ",\"samples_per_second\":" + number(samples / seconds) + "}");
    windows += (windows.empty() ? "" : ",") + number(sps);
    if (w == 0 && matches(env("GPUSCOPE_FAKE_TORCH_KILL"), a)) raise(SIGKILL);
    if (w == 0 && matches(env("GPUSCOPE_FAKE_TORCH_SEGV"), a)) {
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    }
  }
  const bool partial = g_interrupted != 0;
  const double step = window_s / a.steps;
  line("{\"v\":1,\"type\":\"result\",\"model\":" + q(a.model) + ",\"task\":" + q(a.task) +
       ",\"mode\":" + q(a.mode) + ",\"batch\":" + std::to_string(batch) +
       ",\"batch_searched\":" + (a.batch == "auto" ? "true" : "false") +
       ",\"samples_per_second\":" + number(sps) + ",\"window_samples_per_second\":[" + windows +
       "],\"step_seconds\":{\"count\":" + std::to_string(w * a.steps) + ",\"median\":" +
       number(step) + ",\"p10\":" + number(step * 0.99) + ",\"p90\":" + number(step * 1.02) +
       ",\"relative_spread\":0.03},\"peak_allocated_bytes\":" + number(memory) +
       ",\"peak_reserved_bytes\":" + number(memory * 1.1) +
       ",\"loss\":null,\"loss_scale\":null,"
       "\"skipped_steps\":null,\"partial\":" +
       (partial ? "true" : "false") +
       (world > 1 ? ",\"data_parallel\":{\"world_size\":" + std::to_string(world) +
                        ",\"backend\":\"nccl\",\"all_reduce\":" + q(all_reduce) +
                        ",\"optimizer_sharded\":" + (sharded ? "true" : "false") +
                        ",\"grad_sync\":" + (synced ? "true" : "false") +
                        (synced ? ",\"collective_seconds_per_step\":0.004,"
                                  "\"exposed_seconds_per_step\":0.001,\"overlap_fraction\":0.75"
                                : "") +
                        ",\"ranks\":[" + ranks + "]}"
                  : std::string()) +
       "}");
  return done(!partial, partial ? 130 : 0);
}
