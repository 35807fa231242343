#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>

#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"

namespace gpuscope::nvml::detail {
namespace {

// Binds `slot` to the first of `names` the library exports; returns the bound name or "".
template <typename Fn>
std::string bind(void* handle, Fn& slot, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(handle, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return name;
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> default_library_candidates() {
  if (const char* override_path = std::getenv("GPUSCOPE_NVML_LIBRARY");
      override_path != nullptr && *override_path != '\0') {
    return {override_path};
  }
  return {"libnvidia-ml.so.1", "libnvidia-ml.so"};
}

Result<std::unique_ptr<Library>> Library::load(const std::vector<std::string>& candidates) {
  std::unique_ptr<Library> lib(new Library());
  std::string tried;
  for (const std::string& candidate : candidates) {
    dlerror();
    // RTLD_NODELETE: the driver library stays mapped after dlclose, as it would in any NVML
    // client that exits; what its initializers allocated stays reachable (an ASan run reported
    // a 72 KiB allocation of the unloaded library's initializer as a leak in every CLI test).
    lib->handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (lib->handle_ != nullptr) {
      lib->path_ = candidate;
      break;
    }
    const char* why = dlerror();
    tried += fmt::format("\n  {}: {}", candidate, why ? why : "not found");
  }
  if (lib->handle_ == nullptr) {
    return Status(Code::no_driver,
                  fmt::format("no NVIDIA driver found: could not load the NVML library{}", tried));
  }

  std::vector<std::string> missing_required;
#define GPUSCOPE_NVML_BIND(name, required, ...)                                                 \
  {                                                                                             \
    std::string bound = bind(lib->handle_, lib->api_.name, {#name __VA_OPT__(, ) __VA_ARGS__}); \
    if (!bound.empty()) lib->bound_[#name] = bound;                                             \
    if (bound.empty() && (required)) missing_required.push_back(#name);                         \
  }
#define GPUSCOPE_NVML_REQUIRED(name, ...) GPUSCOPE_NVML_BIND(name, true, __VA_ARGS__)
#define GPUSCOPE_NVML_OPTIONAL(name, ...) GPUSCOPE_NVML_BIND(name, false, __VA_ARGS__)
#include "nvml/nvml_symbols.inc"
#undef GPUSCOPE_NVML_REQUIRED
#undef GPUSCOPE_NVML_OPTIONAL
#undef GPUSCOPE_NVML_BIND

  if (!missing_required.empty()) {
    return Status(Code::internal, fmt::format("{} is not a usable NVML library: it lacks {}",
                                              lib->path_, fmt::join(missing_required, ", ")));
  }
  set_error_string_function(lib->api_.nvmlErrorString);
  return lib;
}

Library::~Library() {
  if (handle_ == nullptr) return;
  set_error_string_function(nullptr);
  dlclose(handle_);
}

std::string Library::bound_symbol(const std::string& name) const {
  auto it = bound_.find(name);
  return it == bound_.end() ? std::string() : it->second;
}

}  // namespace gpuscope::nvml::detail
