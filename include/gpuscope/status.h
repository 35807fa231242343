// Status and Result<T>: how every gpuscope library boundary reports failure.
//
// A Status is ok or carries a Code (what kind of failure, for callers to branch on), a message
// (the sentence a user reads) and, optionally, a detail (where it failed: a vendor call's text
// and file:line, for `--verbose` and logs). Result<T> holds either a T or a non-ok Status.
// Exceptions never cross these boundaries.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gpuscope {

enum class Code {
  ok = 0,
  invalid_argument,   // the caller's input is wrong (bad option, unknown GPU index/UUID)
  not_found,          // a thing asked for does not exist
  not_supported,      // this GPU/driver cannot do or report it (data absent, not an error)
  no_driver,          // no NVIDIA driver / NVML library on this machine
  no_device,          // a driver, but no GPU
  permission_denied,  // the driver refused: needs root or a capability
  gpu_lost,           // the GPU stopped answering or its context died (bus, ECC, fault)
  out_of_memory,
  io_error,    // file system: unreadable, unwritable, disk full
  data_error,  // a malformed or foreign file
  timeout,
  cancelled,  // the user interrupted
  internal,   // a bug or an unexpected library answer
};

// Stable lower-case name of a code ("gpu_lost"), used in JSON output.
std::string_view code_name(Code code);
std::optional<Code> code_named(std::string_view name);  // code_name's inverse

class Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message, std::string detail = {})
      : code_(code), message_(std::move(message)), detail_(std::move(detail)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "nvmlDeviceGetPowerUsage(handle_, &mw) [nvml_device.cc:124]"; empty when none was recorded.
  const std::string& detail() const { return detail_; }

  // "gpu_lost: GPU is lost [nvmlDeviceGetPowerUsage(handle_, &mw) [nvml_device.cc:124]]", the
  // detail left out when empty; "ok".
  std::string to_string() const;

  // The same failure with "context: " in front of the message; the detail is kept.
  Status with_context(std::string_view context) const;

 private:
  Code code_ = Code::ok;
  std::string message_;
  std::string detail_;
};

// Holds a value or a non-ok Status.
// REQUIRES: constructed from a Status only when that Status is not ok.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The failure, or an ok Status when a value is held.
  Status status() const { return ok() ? Status{} : std::get<Status>(data_); }
  Code code() const { return ok() ? Code::ok : std::get<Status>(data_).code(); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace gpuscope

// Returns the Status of `expr` from the enclosing function when it is not ok.
#define GPUSCOPE_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::gpuscope::Status gpuscope_status_ = (expr);        \
    if (!gpuscope_status_.ok()) return gpuscope_status_; \
  } while (false)

#define GPUSCOPE_CONCAT_INNER_(a, b) a##b
#define GPUSCOPE_CONCAT_(a, b) GPUSCOPE_CONCAT_INNER_(a, b)

// GPUSCOPE_ASSIGN_OR_RETURN(auto x, make_x()); binds x or returns the failure.
#define GPUSCOPE_ASSIGN_OR_RETURN(lhs, expr)                      \
  auto GPUSCOPE_CONCAT_(gpuscope_result_, __LINE__) = (expr);     \
  if (!GPUSCOPE_CONCAT_(gpuscope_result_, __LINE__).ok())         \
    return GPUSCOPE_CONCAT_(gpuscope_result_, __LINE__).status(); \
  lhs = std::move(GPUSCOPE_CONCAT_(gpuscope_result_, __LINE__)).value()
