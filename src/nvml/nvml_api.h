// The table of NVML function pointers, filled by dlopen/dlsym (nvml_library.cc).
#pragma once

#include <nvml.h>

#include <map>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::nvml::detail {

struct Api {
#define GPUSCOPE_NVML_REQUIRED(name, ...) decltype(&::name) name = nullptr;
#define GPUSCOPE_NVML_OPTIONAL(name, ...) decltype(&::name) name = nullptr;
#include "nvml/nvml_symbols.inc"
#undef GPUSCOPE_NVML_REQUIRED
#undef GPUSCOPE_NVML_OPTIONAL
};

// A loaded NVML library and its bound function table. Unloads itself on destruction.
class Library {
 public:
  // Tries each candidate with dlopen in order. Fails with no_driver when none loads, and with
  // internal when the one that loads lacks a required symbol.
  static Result<std::unique_ptr<Library>> load(const std::vector<std::string>& candidates);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  // "nvmlInit_v2" -> the symbol actually bound ("nvmlInit" on an old driver), "" if absent.
  std::string bound_symbol(const std::string& name) const;

 private:
  Library() = default;
  void* handle_ = nullptr;
  std::string path_;
  Api api_;
  std::map<std::string, std::string> bound_;
};

// The default candidates: $GPUSCOPE_NVML_LIBRARY if set, else the driver's sonames.
std::vector<std::string> default_library_candidates();

}  // namespace gpuscope::nvml::detail
