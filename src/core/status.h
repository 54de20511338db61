// Status and Result<T>: the error currency of gpudoctor. No exceptions cross module boundaries;
// code that calls the standard library or third-party code catches there and converts.
// Both types are plain values: copyable, movable, not thread-safe to mutate concurrently.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace gpudoctor {

enum class StatusCode {
  kOk = 0,
  kNotFound,          // file, key, device or symbol absent ("missing is not broken")
  kPermissionDenied,  // EACCES/EPERM or NVML NO_PERMISSION
  kInvalidArgument,   // bad flag, bad config value, malformed input
  kParseError,        // outside input did not parse
  kUnsupported,       // the platform / driver / device does not offer this
  kTimeout,           // deadline passed
  kIoError,           // other OS-level failure
  kInternal,          // a bug in gpudoctor
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not_found: /proc/pressure/cpu: No such file or directory"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status ParseError(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status TimeoutError(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
// "`what`: strerror(e)": kPermissionDenied for EACCES, EPERM and EROFS (the operator can act on
// those), kIoError otherwise. For a system call that failed with errno `e`.
Status StatusFromErrno(int e, const std::string& what);

// Either a T or a non-OK Status. Accessing value() of an error result is a bug and aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("Result constructed from OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T& value() & {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  T value_or(T fallback) const { return ok() ? *value_ : std::move(fallback); }

 private:
  void CheckOk() const {
    if (!value_) {
      std::fprintf(stderr, "gpudoctor: internal error: value() of failed Result: %s\n",
                   status_.ToString().c_str());
      std::abort();
    }
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace gpudoctor
