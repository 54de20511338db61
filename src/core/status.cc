#include "core/status.h"

#include <cerrno>
#include <cstring>

namespace gpudoctor {

Status StatusFromErrno(int e, const std::string& what) {
  std::string m = what + ": " + std::strerror(e);
  return e == EACCES || e == EPERM || e == EROFS ? PermissionDenied(std::move(m))
                                                 : IoError(std::move(m));
}

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kParseError:
      return "parse_error";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kIoError:
      return "io_error";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace gpudoctor
