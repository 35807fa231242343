// Where each step's batch comes from (`--input`): the fixed device batches the steps read (and a
// CUDA graph captures), and for host-fed inputs the loader threads and copies that refill them
// before every step.
//
//   synthetic  batches made once on the device (input_sets of them, used in turn); nothing moves
//   host       synthetic batches made on the CPU by the loader threads, then copied
//   jpeg       JPEG files from --data, decoded and augmented by the loader threads, then copied
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "device.h"
#include "input/image_folder.h"
#include "run_config.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

class HostLoader;
class HostToDevice;
class JpegBatches;

// Why a run's input cannot be used: a `skipped` line (not_supported) or an `error` line
// (invalid_argument).
struct InputProblem {
  bool skipped = false;
  std::string code;
  std::string message;
};

// What the input path has to go on, checked before the model is built: for jpeg, the scanned
// folder. Returns the problem when --input cannot work for this model or build (jpeg for GPT-2,
// no JPEG codec, no --data, a folder without JPEGs).
std::variant<std::optional<ImageFolder>, InputProblem> check_input(const RunConfig& config);

// Page-locked staging as asked and possible: false on the CPU (nothing is copied to a GPU),
// with the reason in `note`.
bool resolve_pinned(const RunConfig& config, const DeviceInfo& device, std::string* note);

struct InputStats {
  double wait_seconds = 0;  // training thread waiting for a ready batch, since reset_wait()
  double wait_seconds_total = 0;
  int64_t batches = 0;           // batches taken from the loader
  int64_t h2d_bytes = 0;         // bytes copied host to device
  double produce_seconds = 0;    // loader threads producing, summed over threads
  int64_t unreadable_files = 0;  // jpeg: files skipped as unreadable
};

class StepInputs {
 public:
  // REQUIRES: check_input(config) succeeded and returned `folder`.
  StepInputs(const RunConfig& config, const DeviceInfo& device, const BatchSpec& spec, bool pinned,
             std::optional<ImageFolder> folder);
  // Waits for pending copies, then stops and joins the loader threads.
  ~StepInputs();
  StepInputs(const StepInputs&) = delete;
  StepInputs& operator=(const StepInputs&) = delete;

  // The device batches, used in turn: step s reads batches()[s % size()]. Fixed: a captured
  // graph reads them.
  const std::vector<Batch>& batches() const { return device_batches_; }
  bool host_fed() const { return loader_ != nullptr; }

  // Host-fed: takes the next ready batch (waiting for it) and queues its copy into the device
  // batch step s reads. No-op for synthetic input.
  void before_step(int64_t step);
  // After step s was queued on the current stream.
  void after_step(int64_t step);

  // Counters so far; wait_seconds restarts at reset_wait().
  InputStats stats() const;
  void reset_wait() { wait_seconds_ = 0; }

 private:
  std::vector<Batch> device_batches_;
  std::unique_ptr<JpegBatches> jpeg_;
  std::unique_ptr<HostLoader> loader_;
  std::unique_ptr<HostToDevice> copier_;  // destroyed before the loader: drains into it
  double wait_seconds_ = 0;
  double wait_total_ = 0;
  int64_t taken_ = 0;
};

}  // namespace gpuscope::workloads
