#include "store_option.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>

namespace gpuscope::cli {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : all) {
    if (c == '\0') c = ' ';
  }
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

Result<StoreOption> StoreOption::open(const std::string& path) {
  StoreOption option;
  if (path.empty()) return option;
  GPUSCOPE_ASSIGN_OR_RETURN(option.store_, store::Store::open(path));
  option.path_ = path;
  return option;
}

Status StoreOption::record(const nlohmann::json& document, double started_unix_s,
                           double ended_unix_s) {
  if (!store_) return Status{};
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<store::RunData> runs, store::runs_from_document(document));
  for (store::RunData& data : runs) {
    GPUSCOPE_RETURN_IF_ERROR(record(std::move(data), started_unix_s, ended_unix_s));
  }
  return Status{};
}

Status StoreOption::record(store::RunData data, double started_unix_s, double ended_unix_s) {
  if (!store_) return Status{};
  data.run.command_line = command_line();
  data.run.started_unix_s = started_unix_s;
  data.run.ended_unix_s = ended_unix_s;
  return record(data);
}

Status StoreOption::record(const store::RunData& run) {
  if (!store_) return Status{};
  GPUSCOPE_ASSIGN_OR_RETURN(store::RunId id, store_->write(run));
  std::cerr << fmt::format("gpuscope: {} run {} written to {}\n", run.run.kind, id, path_);
  return Status{};
}

}  // namespace gpuscope::cli
