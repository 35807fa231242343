// `--input jpeg`: batches of real JPEG files from an ImageFolder-style directory, each sample
// read, decoded (jpeg_codec.h) and augmented (augment.h) by a loader thread.
//
// Sample g of the stream (batch g / B, position g % B) is file order[g % files], `order` being a
// permutation of the files fixed by the seed; its crop and flip come from a generator seeded by
// (seed, g). A file that cannot be read or decoded is skipped: it is counted once
// (unreadable_files()), remembered, and the sample takes the next file in the order. When no
// file decodes at all, produce() throws (the run fails with that message).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "input/host_loader.h"
#include "input/image_folder.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

class JpegBatches {
 public:
  // REQUIRES: folder.files is not empty; spec describes an image model.
  JpegBatches(ImageFolder folder, const BatchSpec& spec, uint64_t seed);

  // Fills `slot` with batch `index`. Thread-safe.
  void produce(int64_t index, HostSlot& slot);

  int64_t unreadable_files() const;
  // The first unreadable file and why, for the run's notes ("" when none).
  std::string first_unreadable() const;

 private:
  bool is_bad(size_t file) const;
  void mark_bad(size_t file, const std::string& why);

  ImageFolder folder_;
  BatchSpec spec_;
  uint64_t seed_;
  std::vector<size_t> order_;
  mutable std::mutex bad_mutex_;
  std::set<size_t> bad_;
  std::string first_bad_;
};

}  // namespace gpuscope::workloads
