// Reading back the runs a test's command wrote into a results store.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gpuscope/store.h"

namespace gpuscope::testing {

// Every run of the store at `path`, opened read-only, each loaded whole, in list_runs() order;
// empty, with the test failed, where the store or one of its runs cannot be read.
inline std::vector<store::RunData> stored_runs(const std::string& path) {
  store::StoreOptions read_only;
  read_only.read_only = true;
  auto opened = store::Store::open(path, read_only);
  EXPECT_TRUE(opened.ok()) << opened.status().to_string();
  if (!opened.ok()) return {};
  auto runs = (*opened)->list_runs();
  EXPECT_TRUE(runs.ok()) << runs.status().to_string();
  if (!runs.ok()) return {};
  std::vector<store::RunData> loaded;
  for (const store::RunSummary& summary : *runs) {
    auto run = (*opened)->load_run(summary.id);
    EXPECT_TRUE(run.ok()) << run.status().to_string();
    if (!run.ok()) return {};
    loaded.push_back(std::move(run).value());
  }
  return loaded;
}

}  // namespace gpuscope::testing
